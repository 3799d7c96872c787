"""A sub-Cell whose ``forward`` writes into the tensor its parent hands it (``t[:, 0] = 0``, ``t.add_(1)``,
``t.relu_()``), with the parent reading that tensor after the call. torch and MindSpore's PyNative change the
parent's tensor; a static graph (GRAPH_MODE) gives the write a new value the parent never sees, with no error.
ArgumentWriteTransform returns the written input from the sub-Cell and binds it again at the parent's calls; where a
call is not known (a container of layers) it says MP107. A write nobody reads again is left as written, unsaid.
Expected values come from torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Clear(nn.Module):
        def forward(self, t):
            t[:, 0] = 0.0
            t.add_(1.0)


    class SetLast(nn.Module):
        def forward(self, t):
            t[:, 3] = 1.5
            return t


    class RowNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(4))

        def forward(self, h):
            h[:, 1] = 0.0
            h.mul_(self.scale * 2.0)
            if h.shape[0] > 100:
                return h.mean(-1, keepdim=True)
            return h.sum(-1, keepdim=True)


    class Middle(nn.Module):
        def __init__(self):
            super().__init__()
            self.clear = Clear()

        def forward(self, h, k: int = 1):
            self.clear(h)
            h[:, k].relu_()
            return h[:, 2:3] * 3.0


    class Parent(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.clear = Clear()
            self.last = SetLast()
            self.norm = RowNorm()

        def forward(self, x):
            y = self.fc(x)
            self.clear(y)
            self.last(y)
            s = self.norm(y)
            return y * 2 + s


    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.mid = Middle()

        def forward(self, x):
            y = self.fc(x) - 0.5
            z = self.mid(y, k=3)
            out = y + z
            for _ in range(2):
                w = self.mid(out)
                out = out + w
            return out
""")


def _x():
    return np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Parent", "Nested"])
def test_a_sub_cell_writing_its_input_matches(tmp_path, mode, cls):
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    assert_port_matches_in_mode(SOURCE, result.code, cls, [_x()], tmp_path, f"cellw_{cls}", mode, atol=1e-5)


def test_the_written_input_is_returned_and_bound_again():
    code = convert_source(SOURCE).code
    assert "y = self.clear(y)" in code
    assert "y = self.last(y)" in code and "return t, t" not in code  # SetLast returns t already
    assert "s, y = self.norm(y)" in code
    assert "z, y = self.mid(y, k=3)" in code
    assert "w, out = self.mid(out)" in code
    assert "return mp_math.sum(h, dim=-1, keepdim=True), h\n" in code
    assert "return h[:, 2:3] * 3.0, h\n" in code


UNREAD = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def scatter_into(out, idx, v):
        out[idx] = v
        return out.sum()


    class Clip(nn.Module):
        def forward(self, t):
            t.clamp_(min=0.0)
            return t * 2


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.clip = Clip()
            self.full = False

        def _update(self, ctx, scores):
            scores.masked_fill_(scores > 0.5, 0.0)
            ctx[:, 0] = scores.sum(-1)
            if self.full:
                return (ctx, scores)
            else:
                return (ctx, None)

        def forward(self, x):
            h = self.fc(x)
            g = self.clip(h)
            s = scatter_into(g, 0, 1.0)
            top = x * 2
            ctx = x - 1
            ctx, _ = self._update(ctx, top)
            return s * 3 + ctx
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_write_nobody_reads_again_is_left_unsaid(tmp_path, mode):
    result = convert_source(UNREAD)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    assert "g = self.clip(h)" in result.code
    assert_port_matches_in_mode(UNREAD, result.code, "Net", [_x()], tmp_path, "cellw_unread", mode, atol=1e-5)


UNKNOWN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Clear(nn.Module):
        def forward(self, t):
            t[:, 0] = 0.0
            return t.sum()


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.layers = nn.ModuleList([Clear(), Clear()])

        def forward(self, x):
            h = self.fc(x)
            for layer in self.layers:
                s = layer(h)
            return h + s
""")


def test_a_sub_cell_with_calls_that_are_not_known_is_said():
    result = convert_source(UNKNOWN)
    said = [d.message for d in result.diagnostics if d.code == "MP107"]
    assert any("Clear writes into its input t" in m for m in said), said
