"""Discovery and proof of every model of a repository (``mindport.discovery``), and proofs that cannot be vacuous:
a GELU approximation trap under GPT-style 0.02 weights and a zero-initialised layer-scale block must fail."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from mindport.discovery.build import _IDENTITY, ctor_attempts, small_value
from mindport.discovery.prove import prove_models, select
from mindport.discovery.scan import discover
from mindport.validators.parity.compare import validate

REPO = {
    "models/net.py": '''
        import torch
        import torch.nn as nn
        from functools import partial


        class Block(nn.Module):
            def __init__(self, dim, hidden):
                super().__init__()
                self.fc1 = nn.Linear(dim, hidden)
                self.fc2 = nn.Linear(hidden, dim)

            def forward(self, x):
                return x + self.fc2(torch.relu(self.fc1(x)))


        class Net(nn.Module):
            def __init__(self, block, depth, num_classes=10):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
                self.fc = nn.Linear(8, num_classes)

            def forward(self, x):
                return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


        class Tagger(nn.Module):
            def __init__(self, vocab_size: int, hidden_dim: int):
                super().__init__()
                self.emb = nn.Embedding(vocab_size, hidden_dim)
                self.rnn = nn.GRU(hidden_dim, hidden_dim, batch_first=True)

            def forward(self, tokens):
                return self.rnn(self.emb(tokens))[0]


        def net_small():
            return Net(Block, 2, num_classes=5)


        model_dict = {"net": partial(Net, Block, 3), "small": net_small}
    ''',
    "train.py": '''
        import argparse
        import torch
        from models.net import Block, Net

        parser = argparse.ArgumentParser()
        parser.add_argument("--num-classes", type=int, default=7)
        args = parser.parse_args()
        model = Net(Block, 2, num_classes=args.num_classes)
        blk = Block(16, 32)
        out = blk(torch.randn(2, 5, 16))
    ''',
}


def _write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_discovery_finds_classes_factories_and_the_repository_calls(tmp_path):
    found = {c.key: c for c in discover(_write(tmp_path, REPO))}
    assert set(found) == {"models/net.py:Block", "models/net.py:Net", "models/net.py:Tagger",
                          "models/net.py:net_small"}
    assert found["models/net.py:net_small"].kind == "factory"
    # literal calls: the script's (argparse default read), the factory's and the registry's partial
    assert sorted(found["models/net.py:Net"].ctors) == ["Block, 2, num_classes=5", "Block, 2, num_classes=7",
                                                        "Block, 3"]
    assert found["models/net.py:Block"].ctors == ["16, 32"]
    assert found["models/net.py:Block"].inputs == [["2x5x16:float32"]]
    assert [p.name for p in found["models/net.py:Tagger"].required()] == ["vocab_size", "hidden_dim"]
    assert [c.key for c in select(list(found.values()), "*:Net*", 1)] == ["models/net.py:Net"]


def test_small_values_follow_names_and_hints():
    assert small_value("vocab_size", "int") == "100"
    assert small_value("hidden_dim", "int") == "16"
    assert small_value("num_classes", "") == "10"
    assert small_value("dropout", "") == "0.0"
    assert small_value("name", "str") is None
    assert small_value("dilation_rate", "") == "1"  # glow-tts' WN: a dilation, not a drop rate
    assert small_value("sample_rate", "") == "16000"
    assert small_value("growth_rate", "") == "16"  # a DenseNet's channels per layer (legacy16: 0.0 broke 3 builds)
    cand = {"ctors": ["3"], "params": [{"name": "in_ch", "annotation": "", "default": None, "kind": "positional"}]}
    assert ctor_attempts(cand, "in_ch=4") == [("mindport.toml", "in_ch=4"), ("repository", "3"),
                                              ("small values", "in_ch=16"), ("small values", "in_ch=8"),
                                              ("small values", "in_ch=32"), ("small values", "in_ch=64")]


def test_migrate_proves_every_model_and_caches(tmp_path):
    src = _write(tmp_path / "src", REPO)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "mindport.cli", "migrate", str(src), "-o", str(out), "--no-export"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "models: 4 discovered, 4 tried, 4 built, 4 proven" in run.stdout
    report = json.loads((out / "mindport-report.json").read_text())
    by_class = {m["class"]: m for m in report["models"]}
    assert by_class["models/net.py:Tagger"]["inputs"] == ["2x16:int64:0:100"]
    assert by_class["models/net.py:Tagger"]["ctor"] == "vocab_size=100, hidden_dim=16"
    assert by_class["models/net.py:Net"]["ctor_source"] == "repository"
    assert all(m["status"] == "proven" and len(m["draws"]) == 2 for m in report["models"])
    assert report["models_summary"]["proven"] == 4
    assert "proving models" in (out / "mindport-report.html").read_text() or "Models" in (
        out / "mindport-report.html").read_text()
    again = subprocess.run(cmd + ["--models", "Tagger"], capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    report = json.loads((out / "mindport-report.json").read_text())
    assert [m["class"] for m in report["models"]] == ["models/net.py:Tagger"]
    assert report["models"][0].get("cached") is True


GELU_TORCH = '''
    import torch.nn as nn


    class GPTMLP(nn.Module):
        """GPT-style init: every weight N(0, 0.02), so GELU's input stays where tanh and exact GELU agree."""

        def __init__(self, dim=64):
            super().__init__()
            self.fc = nn.Linear(dim, 4 * dim)
            self.act = nn.GELU()
            self.proj = nn.Linear(4 * dim, dim)
            for p in self.parameters():
                nn.init.normal_(p, std=0.02)

        def forward(self, x):
            return self.proj(self.act(self.fc(x)))
'''
GELU_WRONG_PORT = '''
    import mindspore.nn as nn


    class GPTMLP(nn.Cell):
        def __init__(self, dim=64):
            super().__init__()
            self.fc = nn.Dense(dim, 4 * dim)
            self.act = nn.GELU()  # MindSpore's default: the tanh approximation, torch's is exact
            self.proj = nn.Dense(4 * dim, dim)

        def construct(self, x):
            return self.proj(self.act(self.fc(x)))
'''

SCALE_TORCH = '''
    import torch
    import torch.nn as nn


    class ScaledBlock(nn.Module):
        """A residual block whose layer scale starts at zero: at its own init the block is the identity."""

        def __init__(self, dim=16):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.fc = nn.Linear(dim, dim)
            self.gamma = nn.Parameter(torch.zeros(dim))

        def forward(self, x):
            return x + self.gamma * torch.sigmoid(self.fc(self.norm(x)))
'''
SCALE_WRONG_PORT = '''
    import mindspore as ms
    import mindspore.nn as nn
    from mindspore import ops


    class ScaledBlock(nn.Cell):
        def __init__(self, dim=16):
            super().__init__()
            self.norm = nn.LayerNorm((dim,), epsilon=1e-5)
            self.fc = nn.Dense(dim, dim)
            self.gamma = ms.Parameter(ops.zeros(dim))

        def construct(self, x):
            return x + self.gamma * ops.tanh(self.fc(self.norm(x)))  # wrong: torch uses sigmoid
'''


def test_gelu_trap_under_gpt_init_fails_validate_and_the_proof(tmp_path):
    src = _write(tmp_path / "src", {"mlp.py": GELU_TORCH})
    out = _write(tmp_path / "out", {"mlp.py": GELU_WRONG_PORT})
    # small activations (GPT's 0.02 weights, inputs in [-0.1, 0.1]): both approximations agree to about 1e-7 here,
    # so the outputs match; the static difference alone must fail the check
    report = validate(f"{src}/mlp.py:GPTMLP", f"{out}/mlp.py:GPTMLP", inputs=["2x8x64:float32:-0.1:0.1"],
                      graph_mode=False)
    assert all(o.allclose for o in report.outputs), [(o.key, o.max_rel) for o in report.outputs]
    assert [c["trap"] for c in report.config_findings] == ["gelu_approximate"]
    assert not report.ok and report.first_divergent.path == "act"
    models, summary = prove_models(src, out, cache=False)
    assert summary["proven"] == 0 and models[0]["status"] == "diverged", models
    assert "GELU approximation differs" in models[0]["error"]
    assert models[0]["first_divergent"]["layer"] == "act"
    assert models[0]["first_divergent"]["file"].endswith("mlp.py")


def test_zero_initialised_layer_scale_block_fails_at_the_random_draw(tmp_path):
    src = _write(tmp_path / "src", {"block.py": SCALE_TORCH})
    out = _write(tmp_path / "out", {"block.py": SCALE_WRONG_PORT})
    models, summary = prove_models(src, out, cache=False)
    m = models[0]
    assert m["status"] == "diverged", m
    assert [d["ok"] for d in m["draws"]] == [True, False]  # its own init proves nothing: gamma = 0
    assert m["inputs"] == ["2x16x16:float32"]
    assert "random draw" in m["error"]


def test_a_file_with_relative_imports_outside_a_package_is_imported_by_its_dotted_name(tmp_path):
    files = {"models/a.py": "import torch.nn as nn\n\n\nclass A(nn.Module):\n    def forward(self, x):\n        return x\n",
             "models/b.py": "from .a import A\n\n\nclass B(A):\n    pass\n\n\ndef make_b():\n    return B()\n"}
    found = {c.key: c for c in discover(_write(tmp_path, files))}
    assert {k: c.dotted for k, c in found.items()} == {"models/a.py:A": "", "models/b.py:B": "models.b",
                                                       "models/b.py:make_b": "models.b"}


def test_a_string_parameter_takes_a_value_the_constructor_compares_it_with(tmp_path):
    files = {"rnn.py": '''
        import torch.nn as nn


        class RNNModel(nn.Module):
            def __init__(self, rnn_type, ntoken):
                super().__init__()
                assert rnn_type in ["LSTM", "GRU"]
                self.emb = nn.Embedding(ntoken, 8)
                self.rnn = getattr(nn, rnn_type)(8, 8)

            def forward(self, x):
                return self.rnn(self.emb(x))[0]
    '''}
    (cand,) = discover(_write(tmp_path, files))
    assert cand.required()[0].choices == ["LSTM", "GRU"]
    assert ctor_attempts(cand.to_json(), None)[0] == ("small values", "rnn_type='LSTM', ntoken=100")


USES = {"nets.py": '''
    import torch.nn as nn


    class FromArgs(nn.Module):
        def __init__(self, args, cfg, dims, act, rnn_cell):
            super().__init__()
            self.args = args
            self.fc = nn.Linear(args.in_dim, cfg["hidden"])
            self.blocks = nn.ModuleList(nn.Linear(cfg["hidden"], d) for d in dims)
            self.act = act
            self.cell = nn.LSTM if rnn_cell.lower() == "lstm" else nn.GRU

        def forward(self, x):
            return self.act(self.fc(x)) * self.args.model.scale
    ''',
    "train.py": '''
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--in_dim", type=int, default=12)
    ''',
}


def test_a_required_parameter_gets_a_value_of_the_kind_the_class_uses(tmp_path):
    """An ``args`` read by attribute (through ``self.args`` in the forward too, nested ``args.model.scale``) is a
    namespace with those attributes (the repository's argparse default first), a ``cfg["k"]`` a dict with those keys,
    an iterated parameter a list, a called one a module, ``x.lower() == "lstm"`` a string choice; and it builds."""
    root = _write(tmp_path, USES)
    cand = next(c for c in discover(root) if c.name == "FromArgs")
    uses = {p.name: (p.use, p.attrs) for p in cand.required()}
    assert uses == {"args": ("namespace", {"in_dim": "12", "model": {"scale": None}}),
                    "cfg": ("mapping", {"hidden": None}), "dims": ("sequence", {}), "act": ("callable", {}),
                    "rnn_cell": ("str", {})}
    attempts = ctor_attempts(cand.to_json(), None)
    assert attempts[0] == ("small values", "args=__import__('types').SimpleNamespace(in_dim=12, model=__import__("
                                           "'types').SimpleNamespace(scale=1.0)), cfg={'hidden': 16}, dims=[8, 16], "
                                           f"act={_IDENTITY}, rnn_cell='lstm'")
    assert "in_dim=8" in attempts[1][1]  # the next attempt: small values only
    from mindport.validators.parity.loading import build_model

    model = build_model(f"{root}/nets.py:FromArgs", attempts[0][1], root=str(root), isolated=True)
    assert model.fc.in_features == 12 and len(model.blocks) == 2


ABSTRACT = {"layers.py": '''
    import abc
    import torch.nn as nn


    class Base(nn.Module):  # no forward at all: nn.Module's raises
        def __init__(self, dim):
            super().__init__()
            self.dim = dim


    class Abstract(nn.Module, abc.ABC):
        def forward(self, x):
            """Subclasses compute."""
            raise NotImplementedError("subclasses compute")


    class Mixin(nn.Module):
        def reset(self):
            pass


    class Concrete(Abstract):
        def forward(self, x):
            return x * 2


    class Inherits(Concrete, Mixin):
        pass
'''}


def test_abstract_bases_are_not_models_by_one_stated_rule(tmp_path):
    """No forward that computes anything along the project hierarchy (none, or one that only raises
    NotImplementedError): left out of the models and counted; a subclass that inherits a real forward stays."""
    excluded = []
    found = [c.name for c in discover(_write(tmp_path, ABSTRACT), excluded=excluded)]
    assert found == ["Concrete", "Inherits"]
    assert sorted(excluded) == ["layers.py:Abstract", "layers.py:Base", "layers.py:Mixin"]
