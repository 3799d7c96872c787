"""Fixes from the discovery sweep's fourth slice (manifest rows 83-116), each with the repository that showed it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mindport


def _sweep():
    """benchmarks/discovery_sweep.py as a module (its failure classes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "sweep", Path(mindport.__file__).resolve().parents[1] / "benchmarks" / "discovery_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    return sweep


def _stubbed_run(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    from mindport.discovery.prove import stub_env

    env = dict(os.environ, **stub_env(tmp_path / "stubbed.txt", [tmp_path]))
    env["PYTHONPATH"] += os.pathsep + str(Path(mindport.__file__).resolve().parents[1])
    return subprocess.run([sys.executable, str(tmp_path / script)], capture_output=True, text=True, env=env)


def test_an_import_the_repository_guards_with_except_importerror_is_not_stubbed(tmp_path):
    """deepxde chooses its backend by trying ``import tensorflow`` in a ``try/except ImportError``: with a stub the
    probe succeeded, deepxde chose TensorFlow and its PyTorch models failed (``AttributeError: __version__`` of the
    stub). A guarded import fails as the repository expects; an unguarded one is still stubbed."""
    (tmp_path / "backend.py").write_text(textwrap.dedent("""
        def available():
            try:
                import missing_framework_abc
                return "missing_framework_abc"
            except ImportError:
                pass
            try:
                from missing_framework_def import thing
            except (ValueError, ModuleNotFoundError):
                return "torch"
            return "missing_framework_def"

        try:
            import missing_plain_xyz
        except RuntimeError:  # not an import error: stubbed
            pass
        import missing_logger_uvw

        print(available())
    """))
    run = _stubbed_run(tmp_path, "backend.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "torch"
    assert sorted((tmp_path / "stubbed.txt").read_text().split()) == ["missing_logger_uvw", "missing_plain_xyz"]


DEEPXDE_LIKE = {  # one model per backend, each deriving from its backend's NN; only torch's NN is an nn.Module
    "lib/__init__.py": "",
    "lib/nn/__init__.py": "",
    "lib/backend/__init__.py": "tf = None\n",
    "lib/nn/pytorch/__init__.py": "from .fnn import FNN\n",
    "lib/nn/pytorch/nn.py": "import torch\n\n\nclass NN(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
    "lib/nn/pytorch/fnn.py": """
        import torch
        from .nn import NN


        class FNN(NN):
            def __init__(self, n: int = 4):
                super().__init__()
                self.linear = torch.nn.Linear(n, n)

            def forward(self, x):
                return self.linear(x)
    """,
    "lib/nn/jax/nn.py": "from flax import linen as nn\n\n\nclass NN(nn.Module):\n    def __call__(self, x):\n"
                        "        return x\n\n    def forward(self, x):\n        return x\n",
    "lib/nn/jax/fnn.py": "from .nn import NN\n\n\nclass FNN(NN):\n    def forward(self, x):\n        return x\n",
    "lib/nn/paddle/nn.py": "import paddle\n\n\nclass NN(paddle.nn.Layer):\n    def forward(self, x):\n"
                           "        return x\n",
    "lib/nn/paddle/fnn.py": "from .nn import NN\n\n\nclass FNN(NN):\n    def forward(self, x):\n        return x\n",
    "lib/nn/tensorflow/nn.py": "from ...backend import tf\n\n\nclass NN(tf.keras.Model):\n    def call(self, x):\n"
                               "        return x\n",
    "lib/nn/tensorflow/deeponet.py": "from .nn import NN\n\n\nclass DeepONet(NN):\n    def call(self, x):\n"
                                     "        return x\n",
    "lib/nn/compat/nn.py": "class NN:\n    pass\n",  # a plain class (TensorFlow 1 graph builders)
    "lib/nn/compat/fnn.py": "from .nn import NN\n\n\nclass FNN(NN):\n    pass\n\n\nclass PFNN(FNN):\n"
                            "    def forward(self, x):\n        return x\n",
    "gluon/resnet.py": "from mxnet.gluon.block import HybridBlock\n\n\nclass ResNet(HybridBlock):\n"
                       "    def forward(self, x):\n        return x\n",
    "gluon/factories.py": "from .resnet import ResNet\n\n\ndef resnet_a():\n    return ResNet()\n\n\n"
                          "def resnet_b():\n    model = ResNet()\n    return model\n",
    "torch_resnet.py": "import torch.nn as nn\n\n\nclass ResNet(nn.Module):\n    def forward(self, x):\n"
                       "        return x\n\n\ndef resnet_c():\n    return ResNet()\n",
    "rwkv.py": """
        import os
        import torch
        import pytorch_lightning as pl

        MyModule = torch.jit.ScriptModule if os.environ.get("JIT") else torch.nn.Module


        class Mix(MyModule):
            def forward(self, x):
                return x


        class TimeMix(torch.jit.ScriptModule):
            def forward(self, x):
                return x


        class RWKV(pl.LightningModule):
            def forward(self, x):
                return x
    """,
    "other_rwkv.py": "import torch.nn as nn\n\n\nclass RWKV(nn.Module):\n    def forward(self, x):\n"
                     "        return x\n\n\nclass TimeMix(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
                     "class MyModule(nn.Module):\n    pass\n",
    "haiku_model.py": "import haiku as hk\n\n\nclass Mlp(hk.Module):\n    def __call__(self, x):\n        return x\n",
    "mixed.py": """
        import torch.nn as nn
        from lib.nn.paddle.nn import NN as PaddleNN
        from lib.nn.pytorch.nn import NN


        class Plain:
            pass


        class Both(Plain, NN):  # a torch base among others
            def forward(self, x):
                return x


        class Local(nn.Module):
            def forward(self, x):
                return x


        class FromPaddle(PaddleNN):
            def forward(self, x):
                return x
    """,
}


def test_classes_of_other_frameworks_with_module_like_bases_are_not_discovered(tmp_path):
    """deepxde has one ``NN`` base per backend (torch, flax, paddle, TensorFlow): discovery went by base names, so the
    JAX, Paddle and TensorFlow models counted as nn.Module classes (and could only fail); ResNeSt's gluon factories
    return gluon's ResNet, a name its torch models share. The bases are followed through each file's imports now;
    the torch ones stay."""
    from mindport.discovery.scan import discover

    for rel, text in DEEPXDE_LIKE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    found = sorted(c.key for c in discover(tmp_path))
    assert found == ["lib/nn/pytorch/fnn.py:FNN", "lib/nn/pytorch/nn.py:NN", "mixed.py:Both", "mixed.py:Local",
                     "other_rwkv.py:RWKV", "other_rwkv.py:TimeMix", "rwkv.py:Mix", "rwkv.py:RWKV", "rwkv.py:TimeMix",
                     "torch_resnet.py:ResNet", "torch_resnet.py:resnet_c"]


def test_a_name_an_installed_package_lacks_is_a_stand_in_class_not_a_module(tmp_path):
    """DeepRL writes ``from collections import Sequence`` (removed in Python 3.10): the import system then asks for
    a submodule ``collections.Sequence``, which the finder stubbed as a module; ``class HyperParameters(Sequence)``
    raised "module() takes at most 2 arguments" in every model's import. The finder leaves it; the name gets a
    stand-in class (stubs._missing_names_import, session 37: ``from scipy.misc import imresize``), reported by its
    full name; a missing package's submodules, and a missing module of the repository's own packages, are still
    stubbed as modules."""
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "__init__.py").write_text("from .left_out import *\n")  # a file the conversion left out
    (tmp_path / "misc.py").write_text(textwrap.dedent("""
        import own
        import missing_pkg_qrs.sub
        from missing_pkg_qrs.sub import Thing
        try:
            from collections import Sequence
        except ValueError:
            pass


        class HyperParameters(Sequence):
            pass


        print(isinstance(Sequence, type))
    """))
    run = _stubbed_run(tmp_path, "misc.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True"]
    assert (tmp_path / "stubbed.txt").read_text().split() == ["own", "missing_pkg_qrs", "collections.Sequence"]


COUNTS = """
import torch.nn as nn


class CharLM(nn.Module):  # a-PyTorch-Tutorial-to-Sequence-Labeling's LM_LSTM_CRF
    def __init__(self, charset_size, char_rnn_dim, char_rnn_layers):
        super().__init__()
        self.emb = nn.Embedding(charset_size, char_rnn_dim)
        self.rnn = nn.LSTM(char_rnn_dim, char_rnn_dim, num_layers=char_rnn_layers, batch_first=True)
        self.drop = nn.Dropout(0.5 if char_rnn_layers > 1 else 0.0)

    def forward(self, x):
        return self.rnn(self.emb(x))[0]


class Block(nn.Module):  # N-BEATS' NBeatsBlock
    def __init__(self, input_size, layers, layer_size):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(input_size, layer_size)]
                                    + [nn.Linear(layer_size, layer_size) for _ in range(layers - 1)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Stack(nn.Module):  # a real list of sizes stays a list
    def __init__(self, hidden_layers):
        super().__init__()
        self.body = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(hidden_layers, hidden_layers[1:])])

    def forward(self, x):
        return self.body(x)
"""


def test_a_plural_named_count_is_built_as_a_number(tmp_path):
    """``char_rnn_layers`` and ``layers`` end like a list of sizes and got ``[2, 2]``: "'<=' not supported between
    list and int", "unsupported operand type(s) for -: 'list' and 'int'". A parameter used only as a number
    (``num_layers=``, ``range(layers - 1)``, ``> 1``) gets a number; one that is iterated stays a list."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "models.py").write_text(COUNTS)
    found = {c.name: c for c in discover(tmp_path)}
    results = {name: build_one(c.to_json() | {"rel": c.rel, "name": c.name}, None, str(tmp_path), 30)
               for name, c in found.items()}
    assert results["CharLM"]["status"] == "built", results["CharLM"]
    assert "char_rnn_layers=2" in results["CharLM"]["ctor"]
    assert results["Block"]["status"] == "built" and "layers=2" in results["Block"]["ctor"], results["Block"]
    assert results["Stack"]["status"] == "built" and "hidden_layers=[" in results["Stack"]["ctor"]


def test_a_stub_result_met_in_the_forward_is_classed_as_a_stub():
    """decision-transformer's MLP and ResNeSt's detectron2 BasicBlock call a stubbed function in their forward (its
    result is an instance of the stub class ``result``): "dropout(): argument 'input' (position 1) must be Tensor,
    not result" was classed as "the forward raised (other)"."""
    sweep = _sweep()
    entry = {"status": "not-built", "reason": "small values (n_state=16): built; no input ran: 2x16:float32: "
                                              "TypeError: dropout(): argument 'input' (position 1) must be Tensor, "
                                              "not result; 2x8x16:float32: TypeError: dropout(): argument 'input'"}
    assert sweep.failure_class(entry) == "stubbed module used in the forward"
    entry["reason"] = ("defaults (): built; no input ran: 2x1x32x32:float32: TypeError: unsupported operand type(s) "
                       "for +: 'result' and 'float'")  # voxceleb_trainer's ResNetSE34L (torchaudio stubbed)
    assert sweep.failure_class(entry) == "stubbed module used in the forward"


GPT_BLOCK = """
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)

    def forward(self, x):
        return x + self.attn(self.ln(x))
"""


def test_a_namespace_read_and_handed_on_gets_the_attributes_of_both_classes(tmp_path):
    """decision-transformer's ``Block(config)`` reads ``config.n_embd`` and hands ``config`` on to
    ``CausalSelfAttention``, which reads ``config.n_head``: the namespace had ``n_embd`` only ("'SimpleNamespace'
    object has no attribute 'n_head'")."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "model.py").write_text(GPT_BLOCK)
    block = next(c for c in discover(tmp_path) if c.name == "Block")
    result = build_one(block.to_json() | {"rel": block.rel, "name": block.name}, None, str(tmp_path), 30)
    assert result["status"] == "built", result
    assert "n_head=" in result["ctor"] and "n_embd=" in result["ctor"]


BOTTLENECK = """
import torch.nn as nn


class Bottleneck(nn.Module):  # HRNet's (torchvision's) bottleneck: out += residual needs inplanes == planes * 4
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, bias=False)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, kernel_size=1, bias=False)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = self.conv3(self.relu(self.conv2(self.relu(self.conv1(x)))))
        return self.relu(out + residual)
"""


def test_a_bottleneck_block_gets_planes_of_its_input_over_its_expansion(tmp_path):
    """HRNet's ``Bottleneck(inplanes=16, planes=16)`` adds its 16-channel input to 64 channels ("The size of tensor a
    (64) must match the size of tensor b (16)"): with ``expansion = 4`` planes is tried at inplanes // 4."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "blocks.py").write_text(BOTTLENECK)
    block = next(c for c in discover(tmp_path) if c.name == "Bottleneck")
    assert block.expansion == 4
    result = build_one(block.to_json() | {"rel": block.rel, "name": block.name}, None, str(tmp_path), 30)
    assert result["status"] == "built", result
    assert result["ctor"] == "inplanes=16, planes=4" and result["inputs"] == ["2x16x32x32:float32"]


RANKS = """
import math

import torch
import torch.nn as nn


class PositionalEmbedding(nn.Module):  # abarankab/DDPM: timesteps (B,) -> (B, dim)
    def __init__(self, dim, scale=1.0):
        super().__init__()
        self.dim = dim
        self.scale = scale

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / half_dim
        emb = torch.exp(torch.arange(half_dim) * -emb)
        emb = torch.outer(x * self.scale, emb)
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class LastStep(nn.Module):  # reads a time axis it never names
    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x):
        return self.proj(x[:, -1, :])
"""


def test_an_input_is_tried_again_at_the_rank_the_forward_error_names(tmp_path):
    """DDPM's ``PositionalEmbedding`` takes timesteps of shape (B,): ``torch.outer`` refused every 2-D and 4-D form
    ("outer: Expected 1-D argument self, but got 2-D"); a forward that indexes ``x[:, -1, :]`` refused 2-D ("too
    many indices for tensor of dimension 2"). The rank the error names is tried next."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "layers.py").write_text(RANKS)
    found = {c.name: c for c in discover(tmp_path)}
    results = {n: build_one(c.to_json() | {"rel": c.rel, "name": c.name}, None, str(tmp_path), 30)
               for n, c in found.items()}
    assert results["PositionalEmbedding"]["status"] == "built", results["PositionalEmbedding"]
    assert results["PositionalEmbedding"]["inputs"] == ["16:float32"]
    assert results["LastStep"]["status"] == "built", results["LastStep"]
    assert len(results["LastStep"]["inputs"][0].split(":")[0].split("x")) == 3


ARGPARSE_AT_IMPORT = """
import argparse

import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--hidden", type=int, default=8)
args = parser.parse_args()


class RecurrentBaseline(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc = nn.Linear(n_in, args.hidden)

    def forward(self, x):
        return self.fc(x)
"""


def test_a_module_that_parses_its_command_line_at_import_gets_its_defaults(tmp_path):
    """NRI's ``lstm_baseline.py`` calls ``parser.parse_args()`` at import: in the builder it read the builder's own
    arguments (two paths) and exited ("SystemExit: 2") for every constructor tried."""
    from mindport.discovery.prove import ProveSettings, run_builder
    from mindport.discovery.scan import discover

    (tmp_path / "lstm_baseline.py").write_text(ARGPARSE_AT_IMPORT)
    found = discover(tmp_path)
    results = run_builder(tmp_path, found, {}, tmp_path / "work", ProveSettings(build_seconds=30))
    result = results["lstm_baseline.py:RecurrentBaseline"]
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:float32"]


BASE_READS = """
from typing import Optional

import torch.nn as nn


class BaseModel(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.seed = args.model_init_seed
        self.hidden = args.hidden


class BERTModel(BaseModel):  # BERT4Rec-VAE-Pytorch: the base class reads args too
    def __init__(self, args):
        super().__init__(args)
        self.out = nn.Linear(self.hidden, args.num_items + 1)

    def forward(self, x):
        return self.out(x)


class FeedForward(nn.Module):  # meta-llama's: an Optional[float] without a default
    def __init__(self, dim: int, hidden_dim: int, multiple_of: int, ffn_dim_multiplier: Optional[float]):
        super().__init__()
        if ffn_dim_multiplier is not None:
            hidden_dim = int(ffn_dim_multiplier * hidden_dim)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim)
        self.w2 = nn.Linear(hidden_dim, dim)

    def forward(self, x):
        return self.w2(self.w1(x).relu())
"""


def test_a_namespace_handed_to_the_base_class_and_an_optional_float(tmp_path):
    """BERT4Rec's ``BERTModel(args)`` hands ``args`` to ``super().__init__``, whose reads were not gathered
    ("'SimpleNamespace' object has no attribute 'model_init_seed'"); llama's ``FeedForward`` takes
    ``ffn_dim_multiplier: Optional[float]`` without a default ("required parameters of unknown kind")."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "bert.py").write_text(BASE_READS)
    found = {c.name: c for c in discover(tmp_path)}
    results = {n: build_one(found[n].to_json() | {"rel": found[n].rel, "name": n}, None, str(tmp_path), 30)
               for n in ("BERTModel", "FeedForward")}
    assert results["BERTModel"]["status"] == "built", results["BERTModel"]
    assert "model_init_seed=" in results["BERTModel"]["ctor"]
    assert results["FeedForward"]["status"] == "built", results["FeedForward"]
    assert "ffn_dim_multiplier=1.0" in results["FeedForward"]["ctor"]


SPLIT_JOIN = """
import torch
import torch.nn as nn


class ShuffleBlock(nn.Module):  # ShuffleNet-Series' stride-1 blocks: half the channels pass, half go through
    def __init__(self, inp, oup, mid_channels):
        super().__init__()
        self.branch = nn.Sequential(nn.Conv2d(inp, mid_channels, 1), nn.ReLU(),
                                    nn.Conv2d(mid_channels, oup, 3, padding=1))

    def forward(self, old_x):
        x_proj, x = old_x.chunk(2, dim=1)
        return torch.cat((x_proj, self.branch(x)), 1)


class Actor(nn.Module):  # sfujim/BCQ: state and action joined before the first layer
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.l1 = nn.Linear(state_dim + action_dim, 32)
        self.l2 = nn.Linear(32, action_dim)

    def forward(self, state, action):
        return self.l2(torch.relu(self.l1(torch.cat([state, action], -1))))


class Degenerate(nn.Module):  # ShuffleNet's real block at oup == inp: a branch of width 0
    def __init__(self, inp, oup):
        super().__init__()
        self.branch = nn.Conv2d(inp, oup - inp, 1)

    def forward(self, x):
        return torch.cat((x, self.branch(x)), 1)
"""


def test_an_input_is_tried_again_at_the_size_the_forward_error_names(tmp_path):
    """A block that splits its input's channels before its first convolution (ShuffleNet-Series'
    ``Shuffle_Xception``: "expected input[2, 8, 32, 32] to have 16 channels, but got 8") and an actor that joins two
    inputs before its first Linear (BCQ: "mat1 and mat2 shapes cannot be multiplied (2x64 and 32x400)") get the
    channels or features the error names."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "blocks.py").write_text(SPLIT_JOIN)
    found = {c.name: c for c in discover(tmp_path)}
    results = {n: build_one(c.to_json() | {"rel": c.rel, "name": n}, None, str(tmp_path), 30)
               for n, c in found.items()}
    assert results["ShuffleBlock"]["status"] == "built", results["ShuffleBlock"]
    assert results["ShuffleBlock"]["inputs"] == ["2x32x32x32:float32"]
    assert results["Actor"]["status"] == "built", results["Actor"]
    assert results["Actor"]["inputs"] == ["2x16:float32", "2x16:float32"]
    # a build with a layer of width 0 is no model to prove (its output would not be empty: it was proven)
    assert results["Degenerate"]["status"] == "not-built" and "width 0" in results["Degenerate"]["reason"]
    sweep = _sweep()
    assert sweep.failure_class(results["Degenerate"]) == "ctor: the small sizes give a layer of width 0"
