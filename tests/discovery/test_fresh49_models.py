"""Causes of discovery batch 18's models not built (disc49), each a fixture of our own: the expected statuses come
from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# A1 (mx-mark/VideoTransformer-pytorch, 14 classes): a submodule an INSTALLED package moved away
# (pytorch_lightning.utilities.distributed, whose rank_zero_only went to .rank_zero in Lightning 1.8), imported by
# a helper file every model file imports; the reference stopped at import ("No module named
# 'pytorch_lightning.utilities.distributed'") although no model calls it
MOVED_SUBMODULE_HELPER = '''
from pytorch_lightning.utilities.distributed import rank_zero_only


@rank_zero_only
def say(text):
    print(text)
'''

MOVED_SUBMODULE_MODEL = '''
import torch
import torch.nn as nn

import helpers49


class Head(nn.Module):
    def __init__(self, dim=16, classes=4):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    def forward(self, x):
        return torch.tanh(self.fc(x))
'''

# A3 (Yochengliu/Relation-Shape-CNN, 9 classes): a torch submodule torch removed (torch.utils.ffi, torch 0.4's
# CUDA-extension glue) imported by ``import torch.utils.ffi`` / ``from torch.utils.ffi import ...`` at the top of a
# file whose models never use it on CPU
REMOVED_TORCH_SUBMODULE = '''
import torch
import torch.nn as nn
import torch.utils.ffi
from torch.utils.ffi import _wrap_function

from _ext49 import ops


class Shared(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        return torch.relu(self.conv(x))
'''

# the repository's own package of the compiled extension (its build script's output is not in the repository): a
# private module of the repository's own that is missing
COMPILED_EXTENSION_PACKAGE = '''
from torch.utils.ffi import _wrap_function
from ._ops49 import lib as _lib, ffi as _ffi

__all__ = []
def _import_symbols(locals):
    for symbol in dir(_lib):
        fn = getattr(_lib, symbol)
        if callable(fn):
            locals[symbol] = _wrap_function(fn, _ffi)
        else:
            locals[symbol] = fn
        __all__.append(symbol)

_import_symbols(locals())
'''

# a name an installed module lacks, asked for by the import machinery as a submodule (``from collections import
# Sequence``): still the legacy name (collections.abc.Sequence), never a stub module
LEGACY_NAME_NOT_A_MODULE = '''
import torch
import torch.nn as nn
from collections import Sequence


class Stack(nn.Module):
    def __init__(self, sizes=(8, 8)):
        super().__init__()
        assert isinstance(sizes, Sequence)
        self.fc = nn.Linear(sizes[0], sizes[1])

    def forward(self, x):
        return self.fc(x)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh49"), {
        "helpers49.py": MOVED_SUBMODULE_HELPER, "head49.py": MOVED_SUBMODULE_MODEL,
        "shared49.py": REMOVED_TORCH_SUBMODULE,
        "_ext49/ops/__init__.py": COMPILED_EXTENSION_PACKAGE, "stack49.py": LEGACY_NAME_NOT_A_MODULE}, "*")


def test_a_submodule_an_installed_package_moved_gets_a_stand_in(proven):
    model = proven["head49.py:Head"]
    assert model["status"] == "proven", model
    assert "pytorch_lightning.utilities.distributed" in model.get("stubbed", []), model


def test_a_submodule_torch_removed_gets_a_stand_in(proven):
    model = proven["shared49.py:Shared"]
    assert model["status"] == "proven", model
    assert "torch.utils.ffi" in model.get("stubbed", []), model


def test_a_removed_name_is_no_stand_in_module(proven):
    model = proven["stack49.py:Stack"]
    assert model["status"] == "proven", model
    # (the list names what the builder process stubbed, for the other files' models too)
    assert not any(s.startswith("collections") for s in model.get("stubbed", [])), model


def test_the_stand_in_module_fails_loudly_when_used(tmp_path):
    import subprocess
    import sys

    (tmp_path / "user.py").write_text("from pytorch_lightning.utilities.distributed import gather_all_tensors\n"
                                      "import torch\n"
                                      "torch.ones(2) + gather_all_tensors(torch.ones(2))\n", encoding="utf-8")
    code = (f"from mindport.discovery import stubs; stubs.install([{str(tmp_path)!r}]); "
            f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import user")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "gather_all_tensors" in run.stderr or "result" in run.stderr, run.stderr
    assert "No module named" not in run.stderr, run.stderr


# B (alipay/Pyraformer): an option whose argparse default is a STRING the script eval()s after parsing, in its
# ``if __name__ == '__main__':`` block (``-window_size``, type str, default '[4, 4, 4]', then ``opt.window_size =
# eval(opt.window_size)``); the builder handed the models the string: ``len(opt.window_size)`` was 9 and
# ``opt.window_size[i]`` a character ("unsupported operand type(s) for /: 'int' and 'str'")
EVALED_OPTION_MODEL = '''
import math

import torch
import torch.nn as nn


class Pyramid(nn.Module):
    def __init__(self, opt):
        super().__init__()
        sizes = [opt.input_size]
        for w in opt.window_size:
            sizes.append(math.floor(sizes[-1] / w))
        self.convs = nn.ModuleList([nn.Conv1d(opt.d_model, opt.d_model, w, stride=w) for w in opt.window_size])
        self.sizes = sizes

    def forward(self, x):
        outs = [x]
        for conv in self.convs:
            outs.append(conv(outs[-1]))
        return torch.cat(outs, dim=2)
'''

EVALED_OPTION_SCRIPT = '''
import argparse

from pyramid49 import Pyramid


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('-d_model', type=int, default=8)
    parser.add_argument('-input_size', type=int, default=16)
    parser.add_argument('-window_size', type=str, default='[2, 2]')
    return parser.parse_args()


if __name__ == '__main__':
    opt = parse_args()
    opt.window_size = eval(opt.window_size)
    model = Pyramid(opt)
'''


def test_an_option_string_the_script_evals_is_read_as_its_value():
    import ast

    from mindport.discovery.scan import _argparse_defaults

    defaults = _argparse_defaults(ast.parse(EVALED_OPTION_SCRIPT))
    assert defaults["window_size"] == "[2, 2]", defaults
    # a string no literal stays the string argparse gives
    other = EVALED_OPTION_SCRIPT.replace("'[2, 2]'", "'mean'")
    assert _argparse_defaults(ast.parse(other))["window_size"] == "'mean'"


def test_a_model_reading_an_evaled_option_is_built_and_proven(tmp_path):
    proven = prove_files(tmp_path, {"pyramid49.py": EVALED_OPTION_MODEL, "main49.py": EVALED_OPTION_SCRIPT},
                         "pyramid49.py:*")
    model = proven["pyramid49.py:Pyramid"]
    assert model["status"] == "proven", model
    assert "[2, 2]" in (model.get("ctor") or ""), model


# B (fmu2/realNVP, 7 classes): a namespace key named like a plural (``hps.res_blocks``) whose literal argparse default
# (train.py's ``--res_blocks`` 8) was dropped because the only complete attempt was the last-resort one (another
# parameter, ``mask_config``, has a value only there): the key was guessed [2, 2] and ``if res_blocks > 0`` failed
NAMESPACE_MODEL = '''
import torch
import torch.nn as nn


class Residual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.tanh(self.fc(x))


class Base(nn.Module):
    def __init__(self, mask_config, hps):
        super().__init__()
        self.mask_config = mask_config
        self.res_blocks = hps.res_blocks
        self.skip = hps.skip

    def build_mask(self, size, config=1.):
        mask = (torch.arange(size) % 2).float()
        return mask if config else 1. - mask


class Coupling(Base):
    def __init__(self, in_out_dim, mid_dim, mask_config, hps):
        super().__init__(mask_config, hps)
        self.inp = nn.Linear(in_out_dim, mid_dim)
        if self.res_blocks > 0:
            self.blocks = nn.ModuleList([Residual(mid_dim) for _ in range(self.res_blocks)])
        self.out = nn.Linear(mid_dim, in_out_dim)
        self.register_buffer("mask", self.build_mask(in_out_dim, config=mask_config))

    def forward(self, x):
        h = self.inp(x * self.mask)
        for block in self.blocks:
            h = block(h)
        return x * self.mask + (1. - self.mask) * self.out(h)
'''

NAMESPACE_SCRIPT = '''
import argparse

from flows49 import Coupling


class Hyperparameters():
    def __init__(self, res_blocks, skip):
        self.res_blocks = res_blocks
        self.skip = skip


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--res_blocks', type=int, default=2)
    parser.add_argument('--skip', type=int, default=1)
    args = parser.parse_args()
    hps = Hyperparameters(res_blocks=args.res_blocks, skip=args.skip)
'''


def test_a_namespace_key_keeps_its_argparse_default_at_the_last_resort(tmp_path):
    proven = prove_files(tmp_path, {"flows49.py": NAMESPACE_MODEL, "train49.py": NAMESPACE_SCRIPT},
                         "flows49.py:Coupling")
    model = proven["flows49.py:Coupling"]
    assert model["status"] == "proven", model
    assert "res_blocks=2" in (model.get("ctor") or ""), model


# C (pritishyuvraj/Voice-Conversion-GAN's tutorial notebook): a classifier whose flattened features are viewed at
# the width its Linear was built for, ``x.view(-1, 300)``, which only one input side gives; tried at 32 x 32 and
# 64 x 64 ("shape '[-1, 300]' is invalid for input of size 864"), no input ran
FIXED_VIEW_MODEL = '''
import torch.nn as nn
import torch.nn.functional as F


class Digits(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3)
        self.conv2 = nn.Conv2d(6, 12, kernel_size=3)
        self.fc = nn.Linear(300, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 300)
        return F.log_softmax(self.fc(x), dim=1)
'''


def test_a_view_at_a_fixed_width_finds_the_input_side(tmp_path):
    proven = prove_files(tmp_path, {"digits49.py": FIXED_VIEW_MODEL}, "digits49.py:Digits")
    model = proven["digits49.py:Digits"]
    assert model["status"] == "proven", model
    side = int(model["inputs"][0].split(":")[0].split("x")[-1])
    assert ((side - 2) // 2 - 2) // 2 == 5, model["inputs"]


# A1, a module a library renamed whole (``pytorch_lightning.core.lightning`` -> ``pytorch_lightning.core.module``,
# legacy_names.toml's moved_module entries): the reference imports the library's own module under the old name, so
# the class derives from the real LightningModule (a stand-in base is no nn.Module), and nothing is stubbed for it
RENAMED_MODULE_MODEL = '''
import torch
import torch.nn as nn
from pytorch_lightning.core.lightning import LightningModule


class LitHead(LightningModule):
    def __init__(self, dim=16, classes=4):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))
'''


def test_a_module_a_library_renamed_is_the_new_module_in_the_reference(tmp_path):
    proven = prove_files(tmp_path, {"lit49.py": RENAMED_MODULE_MODEL}, "lit49.py:LitHead")
    model = proven["lit49.py:LitHead"]
    assert model["status"] == "proven", model
    assert not model.get("stubbed"), model


def test_the_renamed_module_is_the_library_module_itself(tmp_path):
    import subprocess
    import sys

    code = ("from mindport.discovery import legacy_names; legacy_names.install()\n"
            "import pytorch_lightning.core.lightning as old, pytorch_lightning.core.module as new\n"
            "assert old is new and old.LightningModule is new.LightningModule\n"
            "assert new.__spec__.name == 'pytorch_lightning.core.module', new.__spec__\n"
            "legacy_names.uninstall()\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
