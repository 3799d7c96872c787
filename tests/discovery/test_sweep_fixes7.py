"""Fixes from the discovery sweep's seventh pass (issue 29): import-path shadowing (a folder's module named like one
of the root's), configuration objects whose fields default to None or hold lists, and forwards that take a dict."""
from __future__ import annotations

import ast
from pathlib import Path


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


SHADOWED = {  # FEDformer's layout: layers/utils.py beside the root's utils/ package (no __init__.py anywhere)
    "utils/masking.py": "import torch\n\n\ndef causal(n):\n    return torch.triu(torch.ones(n, n), diagonal=1)\n",
    "layers/utils.py": "def helper():\n    return 1\n",
    "layers/attention.py": '''import torch
import torch.nn as nn
from utils.masking import causal


class MaskedMix(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        n = x.shape[1]
        weights = torch.softmax(x @ x.transpose(1, 2) - 1e4 * causal(n), dim=-1)
        return self.proj(weights @ x)
''',
    "run.py": "from layers.attention import MaskedMix\n\nmodel = MaskedMix(8)\n",
}


def test_a_folder_module_named_like_a_root_package_does_not_shadow_it(tmp_path):
    """``layers/attention.py`` imports ``utils.masking`` (the root's ``utils/``); its own folder holds ``utils.py``.
    Imported as a plain file (its folder first on sys.path), it failed to build: "No module named 'utils.masking';
    'utils' is not a package" (FEDformer's AttentionLayer, DecoderLayer). It is now imported by its dotted name from
    the root, as the repository's ``run.py`` does, and proven on both sides."""
    from mindport.discovery.prove import prove_models
    from mindport.discovery.scan import discover
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src, SHADOWED)
    cand = next(c for c in discover(src) if c.name == "MaskedMix")
    assert cand.dotted == "layers.attention", cand
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="layers/attention.py:*", cache=False)
    assert [m["status"] for m in models] == ["proven"], models
    assert models[0]["ctor"] == "8", models[0]  # the repository's own call


CONFIG_OBJECT = '''
from typing import NamedTuple

import torch
import torch.nn as nn


class Config(NamedTuple):  # pytorchic-bert's: the vocabulary is left to the caller, the sizes are BERT-base's
    vocab_size: int = None
    dim: int = 1024
    n_layers: int = 12
    max_len: int = 512


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos = nn.Embedding(cfg.max_len, cfg.dim)
        self.blocks = nn.ModuleList([nn.Linear(cfg.dim, cfg.dim) for _ in range(cfg.n_layers)])
        self.norm = nn.LayerNorm(cfg.dim)

    def forward(self, x):
        h = self.embed(x) + self.pos(torch.arange(x.shape[1]))
        for block in self.blocks:
            h = torch.tanh(block(h))
        return self.norm(h)
'''


def test_a_configuration_object_gets_its_unset_sizes_and_small_sizes(tmp_path):
    """``Encoder(cfg)`` with the module's ``Config``: ``Config()`` left ``vocab_size=None`` ("empty(): argument
    'size' ... NoneType": pytorchic-bert's Embeddings, Transformer) and at its own sizes the model is over the
    parameter cap. The unset size gets a small value by its name, then the configuration's sizes are shrunk."""
    from mindport.discovery.build import build_one
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.discovery.scan import discover
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src, {"models.py": CONFIG_OBJECT})
    cand = next(c for c in discover(src) if c.name == "Encoder")
    result = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(src), 30, 10_000_000)
    assert result["status"] == "built", result
    assert result["ctor"] == "cfg=Config(vocab_size=100, dim=16, n_layers=1)", result
    assert result["inputs"] == ["2x16:int64:0:100"], result
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:Encoder", cache=False,
                             settings=ProveSettings(max_params=10_000_000))
    assert models[0]["status"] == "proven", models[0]


DICT_INPUTS = '''
import torch
import torch.nn as nn


class Tagger(nn.Module):  # reads its batch by key; no call in the repository
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, 3)

    def forward(self, inputs):
        h = torch.tanh(self.embed(inputs["tokens"]))
        mask = inputs.get("mask")
        return self.out(h) * mask.unsqueeze(-1)


class ImageHead(nn.Module):  # the repository calls it with a dict literal
    def __init__(self, in_ch=3, dim=8):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, dim, 3, padding=1)
        self.head = nn.Linear(dim, 4)

    def forward(self, batch):
        h = torch.relu(self.conv(batch["image"])).mean(dim=(2, 3))
        return self.head(h) + batch["bias"]


if __name__ == "__main__":
    model = ImageHead()
    print(model({"image": torch.randn(2, 3, 16, 16), "bias": torch.zeros(2, 4)}).shape)
'''


def test_forwards_that_read_their_input_by_key_get_dicts(tmp_path):
    """A forward that reads its argument by string keys (``inputs["tokens"]``, ``inputs.get("mask")``) was tried
    with tensors only ("too many indices" / "only integers ... are valid indices") and never built. The keys it
    reads now make a dict input: the first layer's form for one key, the others by name (a mask of ones), or the
    dict the repository's own call writes; both sides get the same dict, PyNative and GRAPH_MODE, and a wrong port
    diverges."""
    from mindport.discovery.prove import prove_models
    from mindport.discovery.scan import discover
    from mindport.migrator.repo import convert_path
    from mindport.validators.parity.loading import make_inputs, parse_input_spec

    spec = parse_input_spec("{image: 2x3x8x8:float32, bias: 2x4:float32}")
    assert str(spec) == "{image: 2x3x8x8:float32, bias: 2x4:float32}"
    (value,) = make_inputs([spec], seed=0)
    assert list(value) == ["image", "bias"] and value["image"].shape == (2, 3, 8, 8)

    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src, {"models.py": DICT_INPUTS})
    found = {c.name: c for c in discover(src)}
    assert found["ImageHead"].inputs == [["{image: 2x3x16x16:float32, bias: 2x4:float32}"]], found["ImageHead"]
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:*", cache=False)
    status = {m["class"].split(":")[1]: m for m in models}
    assert status["Tagger"]["inputs"] == ["{tokens: 2x16:int64:0:50, mask: 2x16:float32:1:1}"], status["Tagger"]
    assert status["ImageHead"]["inputs"] == ["{image: 2x3x16x16:float32, bias: 2x4:float32}"], status["ImageHead"]
    for name, m in status.items():
        assert m["status"] == "proven", (name, m)
        assert [d["draw"] for d in m["draws"]] == ["own init", "random draw"] and m["draws"][0]["graph"] == "ok", m
    ported = (out / "models.py").read_text()
    assert '+ batch["bias"]' in ported, ported
    (out / "models.py").write_text(ported.replace('+ batch["bias"]', '+ batch["bias"] * 1.01 + 0.01', 1))
    models, _ = prove_models(src, out, pattern="models.py:ImageHead", cache=False)
    assert models[0]["status"] == "diverged", models[0]


OPTIONS_WITH_LISTS = '''
import torch
import torch.nn as nn


def act_fun(kind):
    if kind == "relu":
        return nn.ReLU()
    if kind == "tanh":
        return nn.Tanh()
    raise ValueError(kind)


class MLP(nn.Module):  # SincNet's: one options dict, its per-layer entries are lists
    def __init__(self, options):
        super().__init__()
        self.input_dim = int(options["input_dim"])
        self.fc_lay = options["fc_lay"]
        self.fc_drop = options["fc_drop"]
        self.fc_use_batchnorm = options["fc_use_batchnorm"]
        self.fc_act = options["fc_act"]
        if options["fc_use_laynorm_inp"]:  # tested for truth only: a switch (a guessed 16 is true)
            raise ValueError("not with a switch on")
        self.wx, self.bn, self.act, self.drop = nn.ModuleList(), nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        current = self.input_dim
        for i in range(len(self.fc_lay)):
            self.drop.append(nn.Dropout(p=self.fc_drop[i]))
            self.act.append(act_fun(self.fc_act[i]))
            self.bn.append(nn.BatchNorm1d(self.fc_lay[i]))
            self.wx.append(nn.Linear(current, self.fc_lay[i], bias=not self.fc_use_batchnorm[i]))
            current = self.fc_lay[i]

    def forward(self, x):
        for i in range(len(self.fc_lay)):
            h = self.wx[i](x)
            x = self.drop[i](self.act[i](self.bn[i](h) if self.fc_use_batchnorm[i] else h))
        return x
'''


def test_configuration_dict_entries_read_as_lists_get_lists(tmp_path):
    """``options['fc_lay']`` kept as ``self.fc_lay`` and read as ``len(self.fc_lay)`` / ``self.fc_lay[i]`` was given a
    number ("object of type 'int' has no len()": SincNet's MLP, config dicts holding lists). Such an entry is now a
    list whose items are of the kind the entry's name says (sizes, a dropout, a switch, an activation's name); an
    entry only tested for truth is False."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import FLAG_KEY, SEQUENCE_KEY, discover

    _tree(tmp_path, {"models.py": OPTIONS_WITH_LISTS})
    cand = next(c for c in discover(tmp_path) if c.name == "MLP")
    options = cand.params[0]
    assert options.use == "mapping", options
    assert options.attrs == {"input_dim": None, "fc_lay": SEQUENCE_KEY, "fc_drop": SEQUENCE_KEY,
                             "fc_use_batchnorm": SEQUENCE_KEY, "fc_act": SEQUENCE_KEY,
                             "fc_use_laynorm_inp": FLAG_KEY}, options.attrs
    result = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30)
    assert result["status"] == "built", result
    assert result["ctor"].startswith("options="), result
    assert ast.literal_eval(result["ctor"][len("options="):]) == {
        "input_dim": 16, "fc_lay": [16, 16], "fc_drop": [0.0, 0.0], "fc_use_batchnorm": [False, False],
        "fc_act": ["relu", "relu"], "fc_use_laynorm_inp": False}, result


def test_a_dataclass_configuration_holding_lists_is_shrunk(tmp_path):
    """A dataclass configuration whose stage lists are ``field(default_factory=lambda: [...])`` (a list default a
    dataclass cannot hold directly): the small configuration shrinks them too (``depths`` to 1 block per stage,
    ``dims`` to 16), and the model builds under the parameter cap."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    _tree(tmp_path, {"models.py": '''
from dataclasses import dataclass, field

import torch.nn as nn


@dataclass
class NetConfig:
    depths: list = field(default_factory=lambda: [3, 3, 27, 3])
    dims: list = field(default_factory=lambda: [256, 512, 1024, 2048])
    in_chans: int = 3


class Net(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        layers, prev = [], config.in_chans
        for depth, dim in zip(config.depths, config.dims):
            for _ in range(depth):
                layers += [nn.Conv2d(prev, dim, 3, padding=1), nn.ReLU()]
                prev = dim
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)
'''})
    cand = next(c for c in discover(tmp_path) if c.name == "Net")
    result = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30, 10_000_000)
    assert result["status"] == "built", result
    assert result["ctor"] == "config=NetConfig(depths=[1, 1, 1, 1], dims=[16, 16, 16, 16])", result


def test_a_package_name_held_by_another_folder_of_the_repository_is_imported_afresh(tmp_path):
    """Two baselines in one repository, each with its own ``models`` package (RevIN's baselines/Informer2020/models
    and baselines/SCINet/models): the builder process imported the first, then the second failed ("No module named
    'models.SCINet'"). The package held by the other folder is forgotten and this one imported; both build."""
    import json
    import subprocess
    import sys

    from mindport.discovery.scan import discover

    layer = """import torch.nn as nn


class {0}(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)
"""
    _tree(tmp_path, {"baselines/Informer/models/__init__.py": "", "baselines/SCINet/models/__init__.py": "",
                     "baselines/Informer/models/informer.py": layer.format("Informer"),
                     "baselines/SCINet/models/scinet.py": layer.format("SCINet")})
    cands = sorted(discover(tmp_path), key=lambda c: c.rel)
    assert [c.name for c in cands] == ["Informer", "SCINet"]
    request, result = tmp_path / "request.json", tmp_path / "result.jsonl"
    request.write_text(json.dumps({"root": str(tmp_path), "seconds": 30,
                                   "candidates": [c.to_json() | {"rel": c.rel, "name": c.name} for c in cands]}))
    subprocess.run([sys.executable, "-m", "mindport.discovery.build", str(request), str(result)], check=True,
                   timeout=300)
    built = {json.loads(line)["class"]: json.loads(line) for line in result.read_text().splitlines()}
    assert [m["status"] for m in built.values()] == ["built", "built"], built


def test_a_package_named_like_an_installed_module_is_imported_under_its_folder(tmp_path):
    """BigVGAN's ``alias_free_activation/torch/`` is a package named ``torch`` inside a folder that is no package:
    as its own top package, ``torch.filter`` was looked up in the installed torch ("No module named 'torch.filter'").
    The repository imports it as ``alias_free_activation.torch.filter``; so does the builder, and both sides prove."""
    from mindport.discovery.prove import prove_models
    from mindport.discovery.scan import discover
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src, {
        "ext/torch/__init__.py": "from .filt import *\n",
        "ext/torch/filt.py": '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Blur(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.register_buffer("kernel", torch.ones(channels, 1, 3) / 3)
        self.proj = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        return self.proj(F.conv1d(x, self.kernel, padding=1, groups=x.shape[1]))
''',
        "train.py": "from ext.torch.filt import Blur\n\nmodel = Blur(4)\n"})
    cand = next(c for c in discover(src) if c.name == "Blur")
    assert cand.dotted == "ext.torch.filt", cand
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="ext/torch/filt.py:Blur", cache=False)
    assert models[0]["status"] == "proven", models[0]


def test_a_namespace_shape_attribute_is_a_tuple(tmp_path):
    """cleanrl's ``QNetwork(envs)`` reads ``envs.single_observation_space.shape`` (a gym space's shape): a guessed 16
    made ``np.array(16).prod()`` a 0-d product and ``obs_shape[0]`` fail; a namespace attribute named ``shape`` is
    now a one-axis shape."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    _tree(tmp_path, {"dqn.py": '''
import numpy as np
import torch.nn as nn


class QNetwork(nn.Module):
    def __init__(self, envs):
        super().__init__()
        obs = envs.single_observation_space.shape
        self.network = nn.Sequential(nn.Linear(obs[0], 32), nn.ReLU(), nn.Linear(32, envs.single_action_space.n))

    def forward(self, x):
        return self.network(x)
'''})
    cand = next(c for c in discover(tmp_path) if c.name == "QNetwork")
    result = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30)
    assert result["status"] == "built", result
    assert "shape=(16,)" in result["ctor"] and result["inputs"] == ["2x16:float32"], result


def test_later_token_arguments_stay_below_the_smallest_embedding_table(tmp_path):
    """pytorchic-bert's ``Embeddings.forward(x, seg)``: the segment ids were drawn like the tokens, below the
    vocabulary (100), and its ``Embedding(n_segments=2, dim)`` raised "index out of range in self". A later integer
    argument is now first drawn below the smallest embedding table, which every table of the model can index."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    _tree(tmp_path, {"bert.py": '''
import torch
import torch.nn as nn


class Embeddings(nn.Module):
    def __init__(self, vocab_size=100, dim=16, n_segments=2):
        super().__init__()
        self.tok_embed = nn.Embedding(vocab_size, dim)
        self.seg_embed = nn.Embedding(n_segments, dim)

    def forward(self, x, seg):
        return self.tok_embed(x) + self.seg_embed(seg)
'''})
    cand = next(c for c in discover(tmp_path) if c.name == "Embeddings")
    result = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30)
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:int64:0:100", "2x16:int64:0:2"], result
