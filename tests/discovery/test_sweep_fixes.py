"""Fixes found by the discovery sweep over public repositories (benchmarks/discovery_sweep.py), one test each."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def test_a_mindspore_parameter_returned_by_a_forward_is_compared():
    """CTGAN's TVAE Decoder returns its ``sigma`` Parameter: a MindSpore Parameter's class is made at run time in
    module "abc", and the comparison refused it ("cannot compare an output of type Parameter")."""
    import mindspore as ms
    import torch

    from mindport.validators.parity.metrics import to_numpy

    values = np.arange(3, dtype=np.float32)
    p = ms.Parameter(ms.Tensor(values), name="sigma")
    assert np.array_equal(to_numpy(p), values)
    assert np.array_equal(to_numpy(torch.nn.Parameter(torch.from_numpy(values))), values)


def test_a_mask_and_lengths_after_the_first_input_are_tried_as_constants():
    """glow-tts' ``Encoder.forward(x, x_mask)`` multiplies a B x C x T input by a B x 1 x T mask: the mask was given
    the first input's shape (every attempt raised). Masks are now ones of the mask shapes, lengths the whole length;
    a constant is the spec LO == HI."""
    import torch
    import torch.nn as nn

    from mindport.discovery.build import _run_forward, first_layer_inputs
    from mindport.validators.parity.loading import make_inputs, parse_input_spec

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 4, 3, padding=1)

        def forward(self, x, x_mask, x_lengths):
            return self.conv(x * x_mask) * x_mask + x_lengths.max()

    fwd = [{"name": n, "default": None, "kind": "positional"} for n in ("x", "x_mask", "x_lengths")]
    tries = first_layer_inputs(Encoder().eval(), fwd)
    assert tries[0] == ["2x4x32:float32", "2x1x32:float32:1:1", "2:int64:32:32"]
    assert _run_forward(Encoder().eval(), tries[0], 30) is None
    mask, lengths = make_inputs([parse_input_spec(s) for s in tries[0][1:]])
    assert mask.dtype == np.float32 and (mask == 1).all() and (lengths == 32).all()


def test_a_model_too_large_at_its_defaults_is_built_at_small_sizes(tmp_path):
    """BERT-pytorch's ``BERT(vocab_size, hidden=768, n_layers=12, attn_heads=12)`` has 85 M parameters at its
    defaults, over the sweep's limit: the size-like defaults are made small (hidden 16, 1 layer, 2 heads)."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "bert.py").write_text('''
import torch.nn as nn


class BERT(nn.Module):
    def __init__(self, vocab_size, hidden=768, n_layers=12, attn_heads=12, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        layer = nn.TransformerEncoderLayer(hidden, attn_heads, 4 * hidden, dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers)

    def forward(self, x):
        return self.encoder(self.embed(x))
''')
    (cand,) = discover(tmp_path)
    res = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 60,
                    max_params=1_000_000)
    assert res["status"] == "built", res
    assert res["ctor_source"] == "small sizes"
    assert res["ctor"] == "vocab_size=100, hidden=16, n_layers=1, attn_heads=2"
    assert res["params"] < 1_000_000
    # an integer default whose name reads as a list (consistency_models' channel_mult=2) crashed the builder
    from mindport.discovery.build import _shrunk

    # (migrate18: a multiplier's name is 2, not the size 16)
    assert _shrunk([{"name": "channel_mult", "default": "32", "kind": "positional"}]) == "channel_mult=2"


def test_an_optimizer_the_model_holds_is_no_model_weight():
    """minimalRL's ``Policy`` keeps ``self.optimizer = optim.Adam(self.parameters(), ...)``: in MindSpore the
    optimizer is a Cell whose moments are Parameters, and the weight transfer reported them unfilled
    ("optimizer.exp_avg.fc1.weight"); torch's state_dict has no optimizer state."""
    import mindspore.nn as msnn
    import torch

    from mindport.migrator.weights.transfer import transfer_weights

    from mindport.runtime.optim import Adam

    class Policy(msnn.Cell):
        def __init__(self, optimizer):
            super().__init__()
            self.fc1 = msnn.Dense(4, 3)
            self.optimizer = optimizer(self.trainable_params())

    torch.manual_seed(0)
    state = {f"fc1.{k}": v for k, v in torch.nn.Linear(4, 3).state_dict().items()}
    # MindSpore's own optimizer, and the converted code's (mindspore.experimental.optim's, through mindport.runtime)
    for optimizer in (lambda p: msnn.Adam(p, learning_rate=1e-3), lambda p: Adam(p, lr=1e-3)):
        cell = Policy(optimizer)
        report = transfer_weights(state, cell, strict=True)
        assert report.ok and report.missing == []
        assert np.array_equal(cell.fc1.weight.asnumpy(), state["fc1.weight"].numpy())


HAND_ON = {"models.py": '''
    import torch.nn as nn


    class Feed(nn.Module):
        def __init__(self, d_model, d_k, kernel_size):
            super().__init__()
            self.conv = nn.Conv1d(d_model, d_k, kernel_size[0], padding=(kernel_size[0] - 1) // 2)

        def forward(self, x):
            return self.conv(x)


    class Decoder(nn.Module):
        def __init__(self, config):
            super().__init__()
            d = config["transformer"]["decoder_hidden"]
            self.feed = Feed(d, d, [config["transformer"]["kernel"]])

        def forward(self, x):
            return self.feed(x)


    class Classifier(nn.Module):
        def __init__(self, cfg, kernel_size):
            super().__init__()
            self.decoder = Decoder(cfg)
            self.feed = Feed(4, 4, kernel_size=kernel_size)

        def forward(self, x):
            return self.decoder(x)
'''}


def test_nested_config_keys_and_parameters_handed_on_to_another_class(tmp_path):
    """FastSpeech2's ``Decoder(config)`` reads ``config["transformer"]["decoder_hidden"]`` (a dict in a dict), its
    ``FFTBlock(kernel_size)`` hands ``kernel_size`` to a class that indexes it, pytorchic-bert's ``Classifier(cfg)``
    hands ``cfg`` to ``Transformer(cfg)``: each got a number. And ``d_k`` is a size, not a kernel (it got 3)."""
    from mindport.discovery.build import ctor_attempts
    from mindport.discovery.scan import discover
    from mindport.validators.parity.loading import build_model

    (tmp_path / "models.py").write_text(__import__("textwrap").dedent(HAND_ON["models.py"]))
    found = {c.name: c for c in discover(tmp_path)}
    decoder = ctor_attempts(found["Decoder"].to_json(), None)[0][1]
    assert decoder == "config={'transformer': {'decoder_hidden': 16, 'kernel': 3}}"
    # (a window per axis: the kernel's own small value, a tuple, since migrate20; was [8, 16])
    # (Classifier's own call ``Feed(4, 4, kernel_size=kernel_size)`` keeps its literal sizes first, since disc28)
    assert ctor_attempts(found["Feed"].to_json(), None)[:2] == [
        ("repository call, other arguments small", "d_model=4, d_k=4, kernel_size=(3, 3)"),
        ("small values", "d_model=16, d_k=16, kernel_size=(3, 3)")]
    classifier = ctor_attempts(found["Classifier"].to_json(), None)[0][1]
    assert classifier.startswith("cfg={'transformer': {'decoder_hidden': 16") and "kernel_size=(3, 3)" in classifier
    for name, ctor in (("Decoder", decoder), ("Classifier", classifier)):
        build_model(f"{tmp_path}/models.py:{name}", ctor, root=str(tmp_path), isolated=True)


def test_a_stubbed_typing_name_can_be_subscripted_in_annotations(tmp_path):
    """imagen-pytorch imports ``List`` from ``beartype.typing`` (absent here, stubbed) and writes ``List[int]`` in
    signatures: the stub class refused to be subscripted, so no model of the file imported."""
    import subprocess
    import sys

    from mindport.discovery.prove import stub_env

    (tmp_path / "model.py").write_text("from missing_typing_lib import List, Optional\n\n\n"
                                       "def f(x: List[int], y: Optional[List[str]] = None, z: List | None = None):\n"
                                       "    return x\n\n\nprint(f([1]))\n")
    import os

    import mindport

    env = dict(os.environ, **stub_env(tmp_path / "stubbed.txt", [tmp_path]))
    env["PYTHONPATH"] += os.pathsep + str(Path(mindport.__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, str(tmp_path / "model.py")], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[1]"
    assert (tmp_path / "stubbed.txt").read_text().split() == ["missing_typing_lib"]


def test_torch_tensorboard_is_stubbed_for_the_project_when_tensorboard_is_missing(tmp_path):
    """cleanrl's and pytorch-GAT's model files import ``SummaryWriter`` from ``torch.utils.tensorboard``; torch has
    that module but it imports ``tensorboard``, absent here: every model of those files failed to import."""
    import importlib.util
    import os
    import subprocess
    import sys

    import mindport
    from mindport.discovery.prove import stub_env

    assert importlib.util.find_spec("tensorboard") is None  # this machine's fact the test is about
    (tmp_path / "train.py").write_text("from torch.utils.tensorboard import SummaryWriter\n\n"
                                       "writer = SummaryWriter('runs')\nprint('ok')\n")
    env = dict(os.environ, **stub_env(tmp_path / "stubbed.txt", [tmp_path]))
    env["PYTHONPATH"] += os.pathsep + str(Path(mindport.__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, str(tmp_path / "train.py")], capture_output=True, text=True, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    assert (tmp_path / "stubbed.txt").read_text().split() == ["torch.utils.tensorboard"]
    # a library's own import of it is untouched
    lib = subprocess.run([sys.executable, "-c", "import torch.utils.tensorboard"], capture_output=True, text=True,
                         env=env)
    assert lib.returncode != 0 and "tensorboard" in lib.stderr


def test_inputs_for_a_start_layer_registered_late_a_channels_last_conv_and_a_hand_written_norm():
    """Graph-WaveNet registers its dilated 32-channel convolutions before ``start_conv`` (2 -> 32); Informer's
    ``TokenEmbedding`` transposes a B x T x C input before its Conv1d; pytorchic-bert's ``LayerNorm`` has only a
    1-D gain: no input of theirs was tried."""
    import torch
    import torch.nn as nn

    from mindport.discovery.build import _run_forward, first_layer_inputs

    class WaveNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.filters = nn.ModuleList(nn.Conv2d(32, 32, (1, 2), dilation=1) for _ in range(2))
            self.start_conv = nn.Conv2d(2, 32, 1)

        def forward(self, x):
            x = self.start_conv(x)
            for f in self.filters:
                x = f(x)
            return x

    class TokenEmbedding(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(7, 16, 3, padding=1)

        def forward(self, x):
            return self.conv(x.permute(0, 2, 1)).transpose(1, 2)

    class LayerNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.gamma = nn.Parameter(torch.ones(24))

        def forward(self, x):
            return self.gamma * (x - x.mean(-1, keepdim=True))

    def runs(model, specs) -> bool:
        try:
            return _run_forward(model, specs, 30) is None
        except RuntimeError:
            return False

    fwd = [{"name": "x", "default": None, "kind": "positional"}]
    for model in (WaveNet(), TokenEmbedding(), LayerNorm()):
        tries = first_layer_inputs(model.eval(), fwd)
        assert any(runs(model, t) for t in tries), (type(model).__name__, tries)


def test_two_project_files_with_the_same_dotted_name_build_in_one_process(tmp_path):
    """saint keeps ``models/model.py`` and ``old_version/models/model.py``: the builder (one process per repository)
    refused the second ("the module name models.model is already taken in this process"). A name taken by an
    installed library is still refused."""
    import subprocess
    import sys

    import mindport

    for folder, width in (("", 3), ("old_version/", 5)):
        pkg = tmp_path / f"{folder}models"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "model.py").write_text(f"import torch.nn as nn\n\n\ndef make():\n    return nn.Linear({width}, 1)\n")
    (tmp_path / "lib" / "json").mkdir(parents=True)
    (tmp_path / "lib" / "json" / "__init__.py").write_text("def make():\n    return 1\n")
    script = f"""
import json, sys
from mindport.errors import InputError
from mindport.validators.parity.loading import build_model
root = {str(tmp_path)!r}
a = build_model(root + "/models/model.py:make", "", root=root, isolated=True)
b = build_model(root + "/old_version/models/model.py:make", "", root=root, isolated=True)
c = build_model(root + "/models/model.py:make", "", root=root, isolated=True)
try:
    build_model(root + "/lib/json/__init__.py:make", "", root=root, isolated=True)
    refused = False
except InputError as exc:
    refused = "already taken" in str(exc)
print(a.in_features, b.in_features, c.in_features, refused)
"""
    env = dict(__import__("os").environ, PYTHONPATH=str(Path(mindport.__file__).resolve().parents[1]))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["3", "5", "3", "True"]


def test_torch_objects_in_a_constructor_call_are_converted_for_the_mindspore_side():
    """torchdyn's ``LNN(nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 1)))`` (its own call) was evaluated
    as is in the converted module, where ``nn`` is MindSpore's: "module 'mindspore.nn' has no attribute
    'Sequential'". The builder's module stand-in becomes MindSpore's Identity; plain values stay as they are."""
    import mindspore.nn as nn

    from mindport.discovery.build import _IDENTITY, _MS_IDENTITY
    from mindport.discovery.prove import ms_ctor

    text = ms_ctor("nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 1))")
    assert "SequentialCell" in text and "Dense" in text
    built = eval(text, {"nn": nn})
    assert isinstance(built, nn.SequentialCell) and built[0].weight.shape == (64, 2)
    assert ms_ctor(f"fn={_IDENTITY}, dim=4") == f"fn={_MS_IDENTITY}, dim=4"
    assert isinstance(eval(ms_ctor(_IDENTITY)), nn.Cell)
    plain = "args=__import__('types').SimpleNamespace(hidden=16), cfg={'nn.x': 1}, dims=[16, 16]"
    assert ms_ctor(plain) == plain


def test_functional_batch_norm_without_weight_converts_and_matches_torch():
    """openai/consistency_models' Inception ``Conv2dLayer`` calls ``F.batch_norm(x, running_mean=..., running_var=...,
    bias=..., eps=1e-3)`` with no weight: ops.batch_norm requires one ("batch_norm() missing 1 required positional
    argument: 'weight'")."""
    import mindspore as ms
    import torch

    from mindport.migrator import convert_source

    code = ("import torch\n\n\ndef f(x, m, v, b):\n"
            "    return torch.nn.functional.batch_norm(x, running_mean=m, running_var=v, bias=b, eps=1e-3)\n")
    converted = convert_source(code).code
    assert "torch" not in converted, converted
    rng = np.random.default_rng(0)
    x, m, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4, 4), (3,), (3,)))
    v = rng.uniform(0.5, 2, 3).astype(np.float32)
    namespace: dict = {}
    exec(compile(converted, "<converted>", "exec"), namespace)
    got = namespace["f"](*(ms.Tensor(a) for a in (x, m, v, b))).asnumpy()
    want = torch.nn.functional.batch_norm(*(torch.from_numpy(a) for a in (x, m, v)), bias=torch.from_numpy(b),
                                          eps=1e-3).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_degenerate_build_with_an_empty_output_is_not_kept(tmp_path):
    """tab-ddpm's ``Classifier(input_dim, dis_dims, st_ed)`` reads ``st_ed[1] - st_ed[0]`` as a width: with
    ``st_ed=[16, 16]`` it built a Linear of 0 outputs, which torch runs (an empty output, nothing to compare) and
    MindSpore refuses. An empty output is no input that ran; a sequence argument is two different sizes."""
    import torch

    from mindport.discovery.build import _run_forward, build_one
    from mindport.discovery.scan import discover

    (tmp_path / "cls.py").write_text('''
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, input_dim, st_ed):
        super().__init__()
        self.fc = nn.Linear(input_dim, st_ed[1] - st_ed[0])

    def forward(self, x):
        return self.fc(x)
''')
    (cand,) = discover(tmp_path)
    res = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30)
    assert res["status"] == "built" and res["ctor"] == "input_dim=16, st_ed=[8, 16]", res
    assert "empty tensor" in _run_forward(torch.nn.Linear(4, 0).eval(), ["2x4:float32"], 30)


def test_a_method_on_a_view_of_an_unknown_callable_result_converts():
    """BERT-pytorch's ``[l(x).view(b, -1, h, d).transpose(1, 2) for l, x in zip(...)]``: ``l(x)`` is of unknown kind,
    so ``.transpose`` (a name numpy shares) stayed, and MindSpore's Tensor.transpose(1, 2) is torch's swap in
    PyNative but a permutation in GRAPH_MODE ("the number of axes must be equal to the dimension"). A ``.view`` with
    several sizes (numpy's takes one dtype) or a tensor-only method gives a tensor."""
    from mindport.migrator import convert_source

    code = ("import torch.nn as nn\n\n\nclass M(nn.Module):\n"
            "    def forward(self, q, k):\n"
            "        q, k = [l(x).view(2, -1, 4, 8).transpose(1, 2) for l, x in zip(self.ls, (q, k))]\n"
            "        a = f(q).permute(0, 2, 1).transpose(1, 2)\n"
            "        n = g(k).view(dtype).transpose(1, 0)\n"
            "        return q, a, n\n")
    out = convert_source(code).code
    assert ".view(2, -1, 4, 8).swapaxes(axis0=1, axis1=2)" in out, out
    assert ".permute(0, 2, 1).swapaxes(axis0=1, axis1=2)" in out, out
    # two integer literals in a file without numpy: torch's swap (TableCallTransform._torch_swap); (1, 0) on a 2-D
    # value reads the same either way
    assert ".view(dtype).swapaxes(axis0=1, axis1=0)" in out, out


def test_graph_mode_is_compared_at_the_weights_of_the_pynative_run(tmp_path):
    """CTGAN's TVAE ``Decoder`` returns its ``sigma`` Parameter, a constant (ones * 0.1): the vacuity check perturbs
    constant parameters and left them perturbed in the Cell, then GRAPH_MODE ran and was compared with the PyNative
    run at the first weights ("GRAPH_MODE outputs differ from PyNative", max abs 0.46) though the port is right."""
    from mindport.validators.parity.compare import validate

    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "src" / "dec.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self, dim=4):\n"
        "        super().__init__()\n        self.seq = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())\n"
        "        self.sigma = nn.Parameter(torch.ones(dim) * 0.1)\n\n    def forward(self, x):\n"
        "        return self.seq(x), self.sigma\n")
    (tmp_path / "out" / "dec.py").write_text(
        "import mindspore as ms\nfrom mindspore import nn, ops\n\n\nclass Decoder(nn.Cell):\n"
        "    def __init__(self, dim=4):\n        super().__init__()\n"
        "        self.seq = nn.SequentialCell(nn.Dense(in_channels=dim, out_channels=dim), nn.ReLU())\n"
        "        self.sigma = ms.Parameter(ops.ones(dim) * 0.1)\n\n    def construct(self, x):\n"
        "        return self.seq(x), self.sigma\n")
    report = validate(f"{tmp_path}/src/dec.py:Decoder", f"{tmp_path}/out/dec.py:Decoder", inputs=["2x4:float32"],
                      graph_mode=True)
    assert report.graph.status == "ok" and report.graph.equal_to_pynative, (report.graph.status, report.graph.max_abs)
    assert report.ok


def test_a_transpose_of_two_high_axes_converts_on_any_receiver():
    """pytorchic-bert's ``split_last(x, (h, -1)).transpose(1, 2)``: the receiver is a helper function's result, of
    unknown kind, and ``transpose`` a name numpy shares: it stayed, a permutation in GRAPH_MODE. Two literal axes
    with one of 2 or more can only be torch's swap (numpy's two-axis transpose fits a 2-D array only)."""
    from mindport.migrator import convert_source

    code = ("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        a = split_last(x, (4, -1)).transpose(1, 2)\n"
            "        b = helper(x).transpose(1, 0)\n"
            "        return a, b\n")
    out = convert_source(code).code
    assert "split_last(x, (4, -1)).swapaxes(axis0=1, axis1=2)" in out, out
    assert "helper(x).swapaxes(axis0=1, axis1=0)" in out, out  # a file without numpy: torch's swap (the same on 2-D)
