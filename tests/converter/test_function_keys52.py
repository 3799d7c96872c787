"""A module-level dict keyed by functions read by key in forward (tonyduan's normalizing flows, nflows_duan/
maf_planar: ``functional_derivatives = {F.tanh: lambda x: ..., F.elu: ...}`` then
``functional_derivatives[self.h](lin)``). A static graph builds a dict only with string, number, type, None,
constant-tensor or tuple keys ("make_dict evaluator key only supports ...", MindSpore 2.10): the port reads the
dict's keys and values as tuples by position, and matches torch in PyNative and compiled. A dict of that kind the
file changes keeps its torch meaning in the graph and is said (MP107). nflows also tests ``self.h in (F.elu,
F.leaky_relu)``: a tuple of functions a graph fails to build ("Unsupported element type[unknown] ... KernelTensor"),
written ``(self.h == F.elu or self.h == F.leaky_relu)``."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def softsign(x):
        return x / (1 + x.abs())


    DERIVATIVES = {
        F.tanh: lambda x: 1 - torch.tanh(x) ** 2,
        F.elu: lambda x: (x > 0).float() + \\
                         (x < 0).float() * torch.exp(x),
        softsign: lambda x: 1 / (1 + x.abs()) ** 2,
    }


    class Planar(nn.Module):
        def __init__(self, dim=3, h=F.elu):
            super().__init__()
            self.h = h
            self.w = nn.Parameter(torch.linspace(-1, 1, dim))
            self.u = nn.Parameter(torch.linspace(0.5, -0.5, dim))

        def forward(self, x):
            if self.h in (F.elu, softsign):
                u = self.u
            elif self.h not in [F.tanh]:
                raise NotImplementedError("Non-linearity is not supported.")
            else:
                u = self.u * 2
            lin = (x @ self.w)[:, None]
            z = x + u * self.h(lin)
            phi = DERIVATIVES[self.h](lin) * self.w
            return z, phi


    class PlanarSoftsign(Planar):
        def __init__(self):
            super().__init__(h=softsign)


    class PlanarTanh(Planar):
        def __init__(self):
            super().__init__(h=F.tanh)
""")

CHANGED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    DERIVATIVES = {F.tanh: lambda x: 1 - torch.tanh(x) ** 2}
    DERIVATIVES[F.elu] = lambda x: (x > 0).float()


    class Planar(nn.Module):
        def __init__(self, h=F.tanh):
            super().__init__()
            self.h = h

        def forward(self, x):
            return DERIVATIVES[self.h](x)
""")


class_names = ["Planar", "PlanarSoftsign", "PlanarTanh"]


@pytest.mark.parametrize("cls", class_names)
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_dict_keyed_by_functions_is_read_by_position(tmp_path, mode, cls):
    code = convert_source(SOURCE).code
    assert "_mp_DERIVATIVES_keys = tuple(DERIVATIVES)" in code, code
    assert "_mp_DERIVATIVES_values[2] if self.h == _mp_DERIVATIVES_keys[2]" in code, code
    assert "if (self.h == torch_elu or self.h == softsign):" in code, code
    x = np.random.default_rng(5).standard_normal((6, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"fkeys_{cls}", mode, atol=1e-6)


def test_a_dict_keyed_by_functions_the_file_changes_is_said():
    result = convert_source(CHANGED)
    assert "_mp_DERIVATIVES" not in result.code, result.code
    assert "MP107 'DERIVATIVES' is a dict keyed by functions" in result.code, result.code
