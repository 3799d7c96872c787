"""A ``functools.partial`` bound in a method and called twice with different keywords (performer's
``create_kernel(q, is_query=True)`` / ``create_kernel(k, is_query=False)``): a static graph gave both calls the second
one's result, silently. The converter writes each call out; the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    from functools import partial

    import torch
    import torch.nn as nn


    def feature_map(data, *, projection, is_query, eps=1e-4):
        dash = data @ projection.t()
        if is_query:
            return torch.exp(dash - dash.amax(dim=-1, keepdim=True)) + eps
        return torch.exp(dash - dash.amax()) + eps


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer('projection', torch.randn(6, 4))
            self.to_qk = nn.Linear(4, 8)

        def forward(self, x):
            q, k = self.to_qk(x).chunk(2, dim=-1)
            scale = x.shape[-1] ** -0.5
            create = partial(feature_map, projection=self.projection)
            q = create(q * scale, is_query=True)
            k = create(k * scale, is_query=False, eps=1e-3)
            return q @ k.permute(0, 2, 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_partial_called_with_other_keywords_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "create = partial(" not in code
    assert "q = feature_map(q * scale, projection=self.projection, is_query=True)" in code
    assert "k = feature_map(k * scale, projection=self.projection, is_query=False, eps=1e-3)" in code
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "partial", mode, rtol=1e-4, atol=1e-5)


def test_a_partial_handed_over_or_rebound_is_left():
    source = textwrap.dedent("""\
        from functools import partial


        def f(x, k=1):
            return x * k


        def run(x, fns):
            g = partial(f, k=2)
            fns.append(g)
            h = partial(f, k=x)
            x = x + 1
            return g(x) + h(x)
    """)
    code = convert_source(source).code
    assert "g = partial(f, k=2)" in code and "h = partial(f, k=x)" in code


def test_each_branch_binding_reaches_its_own_calls():
    """performer's FastAttention binds ``create_kernel`` on two branches: one partial is only called (written out),
    the other is passed to ``map`` (a value: kept)."""
    source = textwrap.dedent("""\
        from functools import partial


        def k1(d, *, scale, is_query):
            return d * scale + is_query


        def k2(d, *, scale):
            return d - scale


        def attend(q, k, scale, generalized):
            if generalized:
                create = partial(k2, scale=scale)
                q, k = map(create, (q, k))
            else:
                create = partial(k1, scale=scale)
                q = create(q, is_query=True)
                k = create(k, is_query=False)
            return q, k
    """)
    code = convert_source(source).code
    assert "create = partial(k2, scale=scale)" in code
    assert "create = partial(k1" not in code
    assert "q = k1(q, scale=scale, is_query=True)" in code and "k = k1(k, scale=scale, is_query=False)" in code
    namespace: dict = {}
    exec(compile(code, "<converted>", "exec"), namespace)
    assert namespace["attend"](1.0, 2.0, 3.0, False) == (4.0, 6.0)
    assert namespace["attend"](1.0, 2.0, 3.0, True) == (-2.0, -1.0)


def test_a_partial_of_a_torch_api_is_left_to_the_runtime_adapter():
    """``zero = functools.partial(nn.init.zeros_)`` then ``zero(p)``: written out, the call would copy the torch name
    into MindSpore code (a half-converted line); the partial of a torch API keeps its adapter."""
    source = textwrap.dedent("""\
        import functools
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                zero = functools.partial(nn.init.zeros_)
                zero(self.fc.bias)
    """)
    code = convert_source(source).code
    assert "nn.init" not in code.replace("mp_adapt", "")
