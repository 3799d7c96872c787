"""``d() if isfunction(d) else d`` / ``callable(d)`` guarding a call of ``d`` compiles in GRAPH_MODE and gives torch's
numbers. MindSpore 2.10's graph runs ``inspect.isfunction`` and ``callable`` through its JIT Fallback (an answer that
is not a compile-time constant), compiles both branches, and ``d()`` on a tensor fails ("The object is not callable":
latent-diffusion's ``default(context, x)``, trials entry ldm/unet_crossattn). CallableTestTransform writes the test
as ``mp_graph_safe.callable_test(test, d)``. The slice: latent-diffusion's ``default`` (``from inspect import
isfunction``) given a tensor or a context, the ``callable`` form given a tensor, a module function and a number,
``import inspect`` with a negated ``ismethod``; an attribute's test in an ``if`` is left. (A lambda reading the
method's input, ``default(None, lambda: x + 1)``, still fails in a graph, before and after: "KeyError:
'__input_0__'"; not in the slice.) Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

DEFAULTS = textwrap.dedent("""\
    import inspect
    from inspect import isfunction

    import torch
    import torch.nn as nn


    def exists(val):
        return val is not None


    def default(val, d):
        if exists(val):
            return val
        return d() if isfunction(d) else d


    def default_callable(val, d):
        if exists(val):
            return val
        return d() if callable(d) else d


    def scaled(x, s):
        return x * s if not inspect.ismethod(s) else s(x)


    def three():
        return 3.0


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.k = nn.Linear(4, 4)
            self.act = None

        def forward(self, x, context=None):
            context = default(context, x)
            a = default_callable(None, x + 1.0)
            b = default_callable(None, three)
            c = default_callable(None, 0.5)
            if callable(self.act):
                x = self.act(x)
            return scaled(self.q(x) + self.k(context), c) * b + a
""")


def test_the_tests_are_rewritten():
    code = convert_source(DEFAULTS).code
    assert "mp_graph_safe.callable_test(isfunction, d)" in code, code
    assert "mp_graph_safe.callable_test(callable, d)" in code
    assert "not mp_graph_safe.callable_test(inspect.ismethod, s)" in code
    assert "if callable(self.act):" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("with_context", [False, True])
def test_callable_tests_match_torch(tmp_path, mode, with_context):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    inputs = [x, rng.standard_normal((2, 4)).astype(np.float32)] if with_context else [x]
    assert_port_matches_in_mode(DEFAULTS, convert_source(DEFAULTS).code, "Net", inputs, tmp_path,
                                f"defaults{int(with_context)}", mode, atol=1e-5)
