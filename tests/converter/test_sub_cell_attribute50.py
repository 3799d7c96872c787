"""An attribute a model's method writes on a layer it then calls (fix50; microsoft/FocalNet's BasicLayer:
``blk.H, blk.W = H, W`` before ``x = blk(x)``, FocalNetBlock reading ``self.H`` in forward). The class: a static
graph takes a sub-Cell's attributes as constants of its compilation; measured on MindSpore 2.10 the write fails to
compile ("Cast ... does not support this kernel data type"), where PyNative runs the Python. The write keeps its
torch meaning and is said MP107 at the write; PyNative gives torch's numbers."""
from __future__ import annotations

import sys

import numpy as np
import torch

from mindport import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.H = None
        self.W = None

    def forward(self, x):
        B, L, C = x.shape
        H, W = self.H, self.W
        y = self.fc(x).view(B, H, W, C)
        y = y.mean(dim=1, keepdim=True).expand(B, H, W, C)
        return x + y.reshape(B, L, C)


class Stage(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

    def forward(self, x, H, W):
        for blk in self.blocks:
            blk.H, blk.W = H, W
            x = blk(x)
        return x
'''


def test_a_sub_cells_attribute_written_before_the_call_is_said(tmp_path, monkeypatch):
    import mindspore as ms

    result = convert_source(SOURCE, "stage50.py")
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert [d.line for d in said] == [28], [d.format() for d in result.diagnostics]
    assert "blk.H, blk.W written here" in said[0].message
    t = load_module(SOURCE, tmp_path / "t_stage50.py", "t_stage50")
    (tmp_path / "m_stage50.py").write_text(result.code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # a graph compiles from an importable module
    import m_stage50 as m

    torch.manual_seed(0)
    ts = t.Stage(4, 2)
    ms_stage = m.Stage(4, 2)
    state = {k: v.detach().numpy() for k, v in ts.state_dict().items()}
    for p in ms_stage.get_parameters():
        p.set_data(ms.Tensor(state[p.name]))
    x = np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32)
    expected = ts(torch.from_numpy(x), 2, 3).detach().numpy()
    np.testing.assert_allclose(ms_stage(ms.Tensor(x), 2, 3).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    # what the MP107 says: a graph does not run the write (were it ever to give torch's numbers, the flag should go)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        try:
            got = ms_stage(ms.Tensor(x), 2, 3).asnumpy()
        except (RuntimeError, TypeError, ValueError):
            got = None
        assert got is None or not np.allclose(got, expected, rtol=1e-5, atol=1e-6)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        sys.modules.pop("m_stage50", None)
