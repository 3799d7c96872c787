"""A helper writing into a tensor its caller handed it (``def _mark(self, h, k): h[:, k] = 0`` called as
``self._mark(h, 1)``). torch and MindSpore's PyNative write the caller's tensor; a static graph (GRAPH_MODE) inlines
the helper and the caller read the tensor as it was, silently (5.2 off on MindSpore 2.10, 0.0 in PyNative).
ArgumentWriteTransform returns the written parameters and binds them again at each call. Expected values come from
torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def fill_head(buf, v):
        buf[:, 0] = v


    def stamp(out, k, value=1.0):
        if k < 0:
            return
        out[k] += value
        fill_head(out, value * 2)


    class Items(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def _mark(self, h, k):
            h[:, k] = 0.0
            h[0] += 1.0

        def forward(self, x):
            h = self.fc(x)
            self._mark(h, 1)
            fill_head(h, 2.0)
            return h * 2


    class Chained(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def _both(self, a, b, scale):
            a[:, 2] = b[:, 1] * scale
            b[1] = a[0]
            stamp(a, 0, value=scale)

        def forward(self, x):
            h = self.fc(x)
            g = x * 3
            self._both(h, g, 0.5)
            stamp(out=g, k=1)
            stamp(g, -1)
            return h + g


    class Methods(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def _shift(self, h, x):
            h.add_(x)
            h.mul_(2.0)
            h[:, 0].zero_()

        def forward(self, x):
            h = self.fc(x)
            self._shift(h, x)
            return h - x
""")


def _x():
    return np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Items", "Chained", "Methods"])
def test_a_helper_writing_its_callers_tensor_matches(tmp_path, mode, cls):
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    assert_port_matches_in_mode(SOURCE, result.code, cls, [_x()], tmp_path, f"argw_{cls}", mode, atol=1e-5)


def test_the_written_tensor_is_returned_and_bound_again():
    code = convert_source(SOURCE).code
    assert "h = self._mark(h, 1)" in code and "h = fill_head(h, 2.0)" in code
    assert "h, g = self._both(h, g, 0.5)" in code
    assert "g = stamp(out=g, k=1)" in code
    assert "    if k < 0:\n        return out\n" in code
    assert "        return a, b\n" in code


UNSAID = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def scatter_into(out, idx, v):
        out[idx] = v
        return out.sum()


    def reset(t):
        t[0] = 0.0


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.init_rows(self.fc.weight)

        def init_rows(self, w):
            w[0] = 0.0

        def forward(self, x):
            h = self.fc(x)
            s = scatter_into(h, 0, 1.0)
            reset(h[1:])
            return h + s
""")


def test_what_cannot_be_bound_again_is_said():
    result = convert_source(UNSAID)
    said = [d.message for d in result.diagnostics if d.code == "MP107"]
    assert any("scatter_into writes into its argument out and returns a value" in m for m in said), said
    assert any("reset writes into the argument it is handed here" in m for m in said), said
    assert not any("init_rows" in m for m in said), said  # called from __init__ only: Python, in place
    assert "def init_rows(self, w):\n        w[0] = 0.0\n\n" in result.code


def test_a_method_another_class_overrides_is_said_not_rewritten():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def _prepare(self, h):
                h[:, 0] = 0.0

            def forward(self, x):
                h = self.fc(x)
                self._prepare(h)
                return h


        class Plain(Base):
            def _prepare(self, h):
                pass
    """)
    result = convert_source(source)
    assert "h = self._prepare(h)" not in result.code and "return h\n\n\nclass Plain" in result.code
    said = [d.message for d in result.diagnostics if d.code == "MP107"]
    assert any("_prepare writes into its argument h and another class of the file defines it too" in m
               for m in said), said


GIVEN_BACK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def _update(self, context, v):
            context[:, 1] = v[:, 0] * 2
            return (context, v.sum())

        def forward(self, x):
            h = self.fc(x)
            h, s = self._update(h, x)
            return h + s
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_helper_giving_the_written_tensor_back_is_left_and_matches(tmp_path, mode):
    result = convert_source(GIVEN_BACK)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    assert_port_matches_in_mode(GIVEN_BACK, result.code, "Attn", [_x()], tmp_path, "argw_back", mode, atol=1e-5)


def test_a_call_dropping_what_the_helper_gives_back_is_said():
    result = convert_source(GIVEN_BACK.replace("h, s = self._update(h, x)", "_, s = self._update(h, x)"))
    said = [d.message for d in result.diagnostics if d.code == "MP107"]
    assert any("_update writes into the argument it is handed here and gives it back" in m for m in said), said
