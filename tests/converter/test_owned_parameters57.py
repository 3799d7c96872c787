"""In-place updates of a module-level function's PARAMETER whose every caller in the file gives its tensor up
(native_facts.owned_parameters, unaliased_local_update's ``owned``; TableCallTransform._unaliased_update):
kuangliu/pytorch-cifar's EfficientNet ``drop_connect(x, drop_ratio)`` does ``x.div_(keep_ratio); x.mul_(mask);
return x`` and is only called ``out = drop_connect(out, self.drop_rate)``, ``out`` bound just before to a BatchNorm's
new output. Both updates went through mp_inplace (a caller might hold another reference); they are now
``x = ops.div(x, other=keep_ratio).astype(x.dtype)`` and ``x = x.mul(mask).astype(x.dtype)``: MindSpore's own ops, the
in-place call's dtype kept (torch's ``x.div_`` keeps x's dtype where ``x / r`` may promote). A caller that reads the
passed tensor after the call (it sees torch's write), passes a parameter of its own, or passes a name it does not
rebind, keeps the runtime's write-back, and matches torch too.

The models run in eval mode against torch in PyNative and GRAPH_MODE; the drop-connect mask is certain there
(drop_rate 0.0: keep 1.0 draws ones), the scaled gate is a deterministic sigmoid of a layer."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def drop_connect(x, drop_ratio):
        keep_ratio = 1.0 - drop_ratio
        mask = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device)
        mask.bernoulli_(keep_ratio)
        x.div_(keep_ratio)
        x.mul_(mask)
        return x


    def scale_connect(x, gate, keep_ratio):
        x.div_(keep_ratio)
        x.mul_(gate)
        return x


    class Block(nn.Module):
        def __init__(self, drop_rate=0.0):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(3)
            self.fc = nn.Linear(3, 3)
            self.drop_rate = drop_rate

        def forward(self, x):
            out = x
            out = self.bn(self.conv(out))
            if self.drop_rate >= 0:
                out = drop_connect(out, self.drop_rate)
            gate = torch.sigmoid(self.fc(x.mean(dim=(2, 3))))[:, :, None, None]
            out = out * 2.0
            out = scale_connect(out, gate, 0.8)
            return out + x


    def shared_scale(x, keep_ratio):
        x.div_(keep_ratio)
        x.mul_(3.0)
        return x


    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)

        def forward(self, x):
            y = self.conv(x)
            z = shared_scale(y, 0.5)
            return z + y
""")


def test_owned_parameter_updates_are_mindspores():
    code = convert_source(SOURCE).code
    assert "x = ops.div(x, other=keep_ratio).astype(x.dtype)" in code, code
    assert "x = x.mul(mask).astype(x.dtype)" in code, code
    assert "x = x.mul(gate).astype(x.dtype)" in code, code
    assert "mask = (ops.rand_like(mask, dtype=ms.float32) < keep_ratio).astype(mask.dtype)" in code, code
    # shared_scale's caller reads y after the call, which torch's write changed: the runtime's write-back
    assert "mp_inplace.div_(x, other=keep_ratio)" in code and "mp_inplace.mul_(x, other=3.0)" in code, code
    assert code.count("mp_inplace.") == 2, code
    assert "MP107 shared_scale writes into the argument" in code, code


@pytest.mark.parametrize(("cls", "mode"), [("Block", "pynative"), ("Block", "graph"), ("Reader", "pynative")])
def test_owned_parameter_updates_match_torch(cls, mode, tmp_path):
    """Reader in GRAPH_MODE is not run: its caller does not bind the written argument again, which a static graph
    cannot carry back, and the conversion says so (MP107, asserted in the first test)."""
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"owned_{cls}", mode, atol=1e-5)


@pytest.mark.parametrize("caller", [
    "out = x\n        out = scale(out, 0.5)\n        return out",           # the caller's parameter's own tensor
    "out = x * 1.0\n        kept = out\n        out = scale(out, 0.5)\n        return out + kept",  # another alias
    "out = x * 1.0\n        new = scale(out, 0.5)\n        return new + out",  # not rebound: out read after
    "out = x * 1.0\n        for _ in range(2):\n            out = scale(out, 0.5)\n        return out",  # a loop
])
def test_callers_that_keep_the_tensor_keep_the_runtime(caller):
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        def scale(x, keep_ratio):
            x.div_(keep_ratio)
            return x


        class Net(nn.Module):
            def forward(self, x):
                CALLER
    """).replace("CALLER", caller)
    code = convert_source(source).code
    assert "mp_inplace.div_(x, other=keep_ratio)" in code, code


def test_a_decorated_function_keeps_the_runtime():
    """A decorator may keep what the function is given (a cache of its arguments): not every holder is seen."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        def remember(f):
            return f


        @remember
        def scale(x, keep_ratio):
            x.div_(keep_ratio)
            return x


        class Net(nn.Module):
            def forward(self, x):
                out = x * 1.0
                out = scale(out, 0.5)
                return out
    """)
    code = convert_source(source).code
    assert "mp_inplace.div_(x, other=keep_ratio)" in code, code
    assert "ops.div(" not in code, code


def test_a_function_other_files_import_keeps_the_runtime():
    """Another file of the project imports drop_connect by name (project.imported_names): its calls there are not
    seen, and a caller there may keep the tensor it passes, so the parameter is not given up."""
    code = convert_source(SOURCE, imported_names=frozenset({"drop_connect"})).code
    drop = code.split("def drop_connect")[1].split("\ndef ")[0]
    assert "mp_inplace.div_(x, other=keep_ratio)" in drop and "mp_inplace.mul_(x, other=mask)" in drop, drop
    assert "x = x.mul(gate).astype(x.dtype)" in code, code  # scale_connect is imported nowhere: still native
