"""More root causes the peer-snippet benchmark (benchmarks/peer_snippets.py) found silent or failing: each a small
torch program of our own, converted by the real converter and run in both frameworks (see test_snippet_fixes)."""
from __future__ import annotations

import itertools

import pytest

from tests.mappings.test_snippet_fixes import run_both

_FLAGS = (None, True, False)
_LOSSES = [
    ("torch.nn.MSELoss({})", "x = torch.linspace(-1, 2, 12).reshape(3, 4)\nt = torch.linspace(0, 1, 12).reshape(3, 4)",
     "x, t"),
    ("torch.nn.functional.nll_loss(x, t, {})", "x = torch.log_softmax(torch.linspace(-1, 2, 12).reshape(4, 3), 1)\n"
     "t = torch.tensor([0, 2, 1, 1])", None),
    ("torch.nn.MarginRankingLoss(0.2, {})", "x = torch.linspace(-1, 2, 5)\ny = torch.linspace(2, -1, 5)\n"
     "t = torch.tensor([1., -1., 1., 1., -1.])", "x, y, t"),
    ("torch.nn.TripletMarginLoss({})", "x = torch.linspace(-1, 2, 12).reshape(3, 4)\ny = x.flip(0)\nt = x * 0.5",
     "x, y, t"),
]


@pytest.mark.parametrize(("size_average", "reduce"), list(itertools.product(_FLAGS, _FLAGS)))
@pytest.mark.parametrize(("call", "setup", "operands"), _LOSSES)
def test_legacy_size_average_and_reduce_choose_the_reduction(call, setup, operands, size_average, reduce):
    """torch: either flag given overrides ``reduction``: mean when both hold (None holds), sum when only reduce does,
    none when reduce is false."""
    args = ", ".join(f"{name}={value}" for name, value in (("size_average", size_average), ("reduce", reduce))
                     if value is not None or size_average is reduce is None)
    expr = call.format(args + ", reduction='sum'")
    body = f"{setup}\nr = {expr}({operands})" if operands else f"{setup}\nr = {expr}"
    run_both("import torch\n" + body + "\n", ["r"])


@pytest.mark.parametrize("values", ["a, b = False, None", "a, b = True, False", "a, b = None, None"])
def test_legacy_flags_known_only_at_run_time(values):
    body = (f"{values}\nx = torch.linspace(-1, 2, 12).reshape(3, 4)\nt = torch.linspace(0, 1, 12).reshape(3, 4)\n"
            "r = torch.nn.functional.l1_loss(x, t, size_average=a, reduce=b, reduction='sum')\n"
            "r2 = torch.nn.L1Loss(reduce=b)(x, t)\n")
    run_both("import torch\n" + body, ["r", "r2"])
