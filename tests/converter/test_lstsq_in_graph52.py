"""Koopa's one-step Koopman layer (trials koopa/one_step): ``K = torch.linalg.lstsq(x, y).solution`` per batch, then
``torch.cat((z[:, :1], torch.bmm(x, K)), 1)``. The runtime's lstsq computes torch's rank too (``matrix_rank``),
whose tolerance read a dict keyed by dtypes: a static graph reads that through its JIT Fallback, so the rank, the
tuple holding it and the solution had no known shape or dtype there, and the join's promotion got no dtypes
("IndexError: list index out of range" while compiling). The epsilon is a constexpr now; the port matches torch in
PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class OneStep(nn.Module):
        def forward(self, z):
            x, y = z[:, :-1], z[:, 1:]
            K = torch.linalg.lstsq(x, y).solution
            z_rec = torch.cat((z[:, :1], torch.bmm(x, K)), dim=1)
            rank = torch.linalg.matrix_rank(x)
            return z_rec, torch.bmm(z[:, -1:], K), rank
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lstsq_solution_joined_in_graph(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "mp_linalg.lstsq(x, y)[0]" in code, code
    assert "mp_tensor.promoted((z[:, :1], ops.bmm(x, K)))" in code, code
    z = np.random.default_rng(7).standard_normal((2, 9, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "OneStep", [z], tmp_path, "lstsq52", mode, rtol=1e-4, atol=1e-5)
