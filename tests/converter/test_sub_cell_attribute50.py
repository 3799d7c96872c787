"""An attribute a model's method writes on a layer it then calls (fix50, then session 51; microsoft/FocalNet's
BasicLayer: ``blk.H, blk.W = H, W`` before ``x = blk(x)``, FocalNetBlock reading ``self.H`` in forward; Swin-style
detection backbones the same). The class: a static graph takes a sub-Cell's attributes as constants of its
compilation, so the block read what __init__ set (None) in GRAPH_MODE. The write is kept and its values are handed to
the block's construct as keyword arguments (SubCellArgumentTransform): PyNative and GRAPH_MODE both give torch's
numbers, through the direct call and through torch.utils.checkpoint. A layer whose classes the converter cannot know
keeps the write alone, said MP107."""
from __future__ import annotations

import sys

import numpy as np
import torch

from mindport import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


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
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

    def forward(self, x, H, W):
        for blk in self.blocks:
            blk.H, blk.W = H, W
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return x


class Unknown(nn.Module):
    def __init__(self, block_cls, dim):
        super().__init__()
        self.block = block_cls(dim)

    def forward(self, x, H, W):
        self.block.H, self.block.W = H, W
        return self.block(x)
'''


def test_a_sub_cells_attribute_written_before_the_call_reaches_its_graph(tmp_path, monkeypatch):
    import mindspore as ms

    result = convert_source(SOURCE, "stage50.py")
    said = [d for d in result.diagnostics if d.code == "MP107"]
    # the layer of a class the converter cannot know (a class passed in) keeps the write alone, said
    assert [d.line for d in said] == [44], [d.format() for d in result.diagnostics]
    assert "self.block.H, self.block.W written here" in said[0].message
    assert "x = blk(x, _mp_H=H, _mp_W=W)" in result.code
    assert "x = ms.recompute(blk, x, use_reentrant=False, _mp_H=H, _mp_W=W)" in result.code
    assert "mp_framework.keep_cache(blk, \"H\", H)" in result.code
    assert "def construct(self, x, _mp_H=None, _mp_W=None):" in result.code
    t = load_module(SOURCE, tmp_path / "t_stage50.py", "t_stage50")
    (tmp_path / "m_stage50.py").write_text(result.code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # a graph compiles from an importable module
    import m_stage50 as m

    x = np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32)
    try:
        for use_checkpoint in (False, True):
            torch.manual_seed(0)
            ts = t.Stage(4, 2, use_checkpoint)
            state = {k: v.detach().numpy() for k, v in ts.state_dict().items()}
            expected = ts(torch.from_numpy(x), 2, 3).detach().numpy()
            for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE):  # a fresh model each: no attribute a run left behind
                ms_stage = m.Stage(4, 2, use_checkpoint)
                for p in ms_stage.get_parameters():
                    p.set_data(ms.Tensor(state[p.name]))
                ms.set_context(mode=mode)
                try:
                    got = ms_stage(ms.Tensor(x), 2, 3).asnumpy()
                finally:
                    ms.set_context(mode=ms.PYNATIVE_MODE)
                np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
                assert all(blk.H == (2 if mode == ms.PYNATIVE_MODE else None) for blk in ms_stage.blocks)
        # the block called alone, without the arguments, reads its attributes as before
        torch.manual_seed(0)
        tb, mb = t.Block(4), m.Block(4)
        for p in mb.get_parameters():
            p.set_data(ms.Tensor(tb.state_dict()[p.name].numpy()))
        tb.H, tb.W, mb.H, mb.W = 3, 2, 3, 2
        np.testing.assert_allclose(mb(ms.Tensor(x)).asnumpy(), tb(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    finally:
        sys.modules.pop("m_stage50", None)
