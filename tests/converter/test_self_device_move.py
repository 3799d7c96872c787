"""A tensor attribute moved to a device and written back to itself in ``forward`` (LlamaGen's
``self.freqs_cis = self.freqs_cis.to(h.device)``, also ``.cuda()``/``.cpu()``/``.to(device=...)``), and one
written to itself (LlamaGen's other branch, ``self.freqs_cis = self.freqs_cis``): placement is global in MindSpore,
so the move is nothing and the write is a self-assignment. The converter drops the statement,
which on two branches made the attribute a value written in ``construct`` (MP107, and GRAPH_MODE's "Invalid input args for unpack
call" on the first op reading it back). Checked against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import numpy as np
import pytest

from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = '''
import torch
import torch.nn as nn


def rotate(x, table):
    xs = x.float().reshape(*x.shape[:-1], -1, 2)
    t = table.view(1, xs.shape[1], xs.shape[2], 2)
    out = torch.stack([xs[..., 0] * t[..., 0] - xs[..., 1] * t[..., 1],
                       xs[..., 1] * t[..., 0] + xs[..., 0] * t[..., 1]], dim=-1)
    return out.flatten(2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.table = torch.linspace(-1.0, 1.0, 6 * 4 * 2).reshape(6, 4, 2)
        self.scale = torch.arange(8.0) / 8
        self.bias = torch.ones(8)

    def forward(self, x, pos):
        h = self.proj(x)
        if pos is not None:
            self.table = self.table.to(h.device)
        else:
            self.table = self.table
        self.scale = self.scale.cpu()
        self.bias = self.bias.to(device=x.device)
        table = self.table[pos]
        return rotate(h, table) * self.scale + self.bias
'''


def _convert():
    from mindport import convert_source

    return convert_source(SOURCE, "net.py")


def test_self_device_moves_are_dropped_without_mp107():
    result = _convert()
    assert "MP107" not in result.code, result.code
    assert "self.table = " not in result.code.split("def construct")[1], result.code
    assert "self.scale = " not in result.code.split("def construct")[1], result.code
    assert "self.bias = " not in result.code.split("def construct")[1], result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_self_device_move_matches_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 6, 8)).astype(np.float32), np.arange(6, dtype=np.int64)]
    assert_port_matches_in_mode(SOURCE, _convert().code, "Net", inputs, tmp_path, "selfdev", mode)
