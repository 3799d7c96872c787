"""AliasUpdateTransform: after an in-place update of a tensor another local name refers to, that name is bound to
the updated tensor again. In torch both names see the update; MindSpore 2.10's ``+=`` (PyNative) and item writes
(GRAPH_MODE) rebind the updated name only, which gave different numbers without any error. Expected values come
from torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

ALIASES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class AugAndMethod(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            r = h
            h += 1
            h.add_(x)
            return h + r


    class ItemWrite(nn.Module):
        def forward(self, x):
            h = x * 2
            r = h
            h[:, 0] = 5.0
            h[1] += 3.0
            return h * r


    class Chained(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            out = shortcut = self.fc(x)
            out *= 2
            out = torch.tanh(out)
            return out + shortcut


    class Unpacked(nn.Module):
        def forward(self, x):
            a, keep = x * 1, x * 3
            b, other = keep, a
            b.mul_(0.5)
            other.sub_(1)
            return keep * 10 + a


    class InBranchAndLoop(nn.Module):
        def forward(self, x):
            h = x + 1
            r = h
            if x.shape[0] > 1:
                h -= 0.5
            h = h * 1
            for _ in range(3):
                s = h
                h /= 2
                h = h + s
            return h, r


    class Numbers(nn.Module):
        def forward(self, x):
            n = 2
            m = n
            n += 1
            return x * m + n
""")


def test_the_aliases_are_bound_again_after_the_update():
    code = convert_source(ALIASES).code
    assert "h += 1\n        r = h if isinstance(h, ms.Tensor) else r\n" in code
    assert "h = mp_inplace.add_(h, other=x)\n        r = h\n" in code
    assert "h[:, 0] = 5.0\n        r = h\n" in code
    assert "out *= 2\n        shortcut = out if isinstance(out, ms.Tensor) else shortcut\n" in code
    assert "isinstance(n," not in code  # nothing in the text says n is a tensor: a counter is left (the guard would keep it)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls,shape", [("AugAndMethod", (2, 4)), ("ItemWrite", (2, 3)), ("Chained", (2, 4)),
                                       ("Unpacked", (2, 3)), ("InBranchAndLoop", (2, 3)), ("Numbers", (2, 3))])
def test_aliases_match_torch(tmp_path, mode, cls, shape):
    code = convert_source(ALIASES).code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(ALIASES, code, cls, [x], tmp_path, f"alias_{cls}", mode, atol=1e-5)


def test_a_loop_body_rebinding_its_names_keeps_the_alias_unsettled():
    """In a loop whose body rebinds h, an alias made before the loop may not hold on the next pass: no rebinding."""
    source = textwrap.dedent("""\
        import torch


        def f(x):
            h = x * 1
            r = h
            for _ in range(2):
                h += 1
                h = h * 2
            return h + r
    """)
    code = convert_source(source).code
    assert "isinstance" not in code


def test_mindspore_rebinds_only_the_updated_name():
    """The facts the rule rests on (MindSpore 2.10): PyNative's ``+=`` and GRAPH_MODE's item write leave another
    name bound to the old tensor."""
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.PYNATIVE_MODE)
    a = ms.Tensor(np.zeros(3, np.float32))
    b = a
    a += 1
    np.testing.assert_array_equal(b.asnumpy(), np.zeros(3, np.float32))

    class ItemWrite(nn.Cell):
        def construct(self, x):
            h = x * 1
            r = h
            h[0] = 5.0
            return r

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        out = ItemWrite()(ms.Tensor(np.zeros(3, np.float32))).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(out, np.zeros(3, np.float32))


PARAMETERS = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class Shift(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = nn.Parameter(torch.full((3,), 0.5))

        def forward(self, z, eps=1e-3):
            z -= self.shift
            eps *= 2
            return z * 3 + eps


    class Scale(nn.Module):
        def forward(self, x):
            x *= 2
            x /= 4
            x += 1
            return x


    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = Shift()
            self.scale = Scale()

        def forward(self, x):
            h = x * 2
            y = self.shift(h)
            g = h * 1
            k = self.scale(g)
            return y + h + k * g


    def normalise(obs):
        obs -= 0.5
        return obs.shape


    class Builder(nn.Module):
        def __init__(self, c=2):
            super().__init__()
            layers = []
            for _ in range(2):
                layers.append(nn.Linear(c, c * 2))
                c *= 2
            self.body = nn.Sequential(*layers)

        def forward(self, x):
            return self.body(x)
""")


def test_a_parameter_updated_in_place_is_written_in_place():
    code = convert_source(PARAMETERS).code
    assert "z = mp_inplace.isub(z, self.shift)" in code and "eps *= 2" in code
    assert "x = mp_inplace.imul(x, 2)" in code and "x = mp_inplace.itruediv(x, 4)" in code
    assert "obs = mp_inplace.isub(obs, 0.5)" in code  # .shape: a tensor or an array
    assert "c *= 2" in code  # a builder's number: no tensor in the text


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_caller_sees_the_update_as_in_torch(tmp_path, mode):
    code = convert_source(PARAMETERS).code
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(PARAMETERS, code, "Flow", [x], tmp_path, "alias_param_flow", mode, atol=1e-5)


def test_a_numpy_parameter_keeps_python_meaning(tmp_path):
    import importlib.util
    path = tmp_path / "np_port.py"
    path.write_text(convert_source(PARAMETERS).code)
    spec = importlib.util.spec_from_file_location("np_port", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    obs = np.ones(3, np.float32)
    module.normalise(obs)
    np.testing.assert_array_equal(obs, np.full(3, 0.5, np.float32))  # numpy's -= is in place, as in the original
