"""Two GRAPH_MODE failures of trials ports that PyNative hid (sooftware's Conformer, vit-pytorch's T2T-ViT): a
method called with ``*args`` (``x.transpose(*self.shape)``) went through the runtime adapter, whose Python a static
graph cannot compile ("Unsupported statement 'Try'"); ``k.transpose(-1, -2)`` on a name unpacked from a list was left
as written, and MindSpore's ``Tensor.transpose`` swaps two axes in PyNative but takes a permutation in GRAPH_MODE."""
from __future__ import annotations

import inspect
import textwrap

import numpy as np
import pytest

from mindport.mappings import load_registry
from mindport.migrator import convert_source
from mindport.migrator.rules.table_calls import _positional_only
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Transpose(nn.Module):
        def __init__(self, shape=(1, 2)):
            super().__init__()
            self.shape = shape

        def forward(self, x):
            return x.transpose(*self.shape)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(4, 12)
            self.swap = Transpose((1, 2))

        def forward(self, x):
            qkv = self.qkv(x).chunk(3, dim=-1)
            q, k, v = [t.reshape(2, 3, 2, 2).transpose(1, 2) for t in qkv]
            attn = torch.matmul(q, k.transpose(-1, -2))
            return self.swap(torch.matmul(attn, v))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_transposes_compile_in_graph_mode_and_match(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    assert "x.swapaxes(*self.shape)" in result.code and "mp_adapt" not in result.code
    assert "k.swapaxes(axis0=-1, axis1=-2)" in result.code
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "transposes", mode, rtol=1e-5, atol=1e-5)


def test_rename_only_method_entries_take_torchs_positional_order():
    """The star-args shortcut writes torch's positional arguments to the MindSpore method as they are: each entry
    it applies to must take them in torch's order (read from the installed MindSpore)."""
    import mindspore as ms

    from mindport.migrator.rules.table_calls import cst

    star = cst.parse_expression("x.m(*a)")
    checked = 0
    for entry in load_registry().entries.values():
        target = entry.resolve("nn")[0]
        if entry.kind != "method" or not target or not target.startswith(".") or not _positional_only(entry, star):
            continue
        try:
            params = list(inspect.signature(getattr(ms.Tensor, target[1:])).parameters)[1:]
        except (TypeError, ValueError):
            continue  # a method without a Python signature: checked by its table example instead
        want = [entry.rename.get(p.name, p.name) for p in entry.signature]
        assert params[:len(want)] == want, (entry.torch, params, want)
        checked += 1
    assert checked >= 8  # Tensor.renorm and Tensor.lerp carry a value transform (an int -> float): not rename-only
