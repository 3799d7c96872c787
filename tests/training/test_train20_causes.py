"""Session train20 (issue 27): classes found in the training corpus. One test each, on real torch and real
MindSpore, each failing without its fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np
import pytest

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# Rosenbrock in float64 (exact enough that both sides take the same discrete decisions), LBFGS with a strong Wolfe
# line search and an explicit evaluation budget, stepped three times; the closure prints every loss it computes, so
# the printed lines are the closure calls, in order, then the loss and the point where the three steps end.
LBFGS_BUDGET = '''
import torch


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


x = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([x], lr=LR, max_iter=MAX_ITER, max_eval=MAX_EVAL, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = rosenbrock(x)
    loss.backward()
    print("step", loss.item())
    return loss


for _ in range(3):
    opt.step(closure)
with torch.no_grad():
    print("step", rosenbrock(x).item(), *x.numpy().tolist())
'''


@pytest.mark.parametrize("lr, max_iter, max_eval", [(5, 20, 10), (20, 10, 6), (30, 10, 7), (50, 20, 9), (1, 20, 25)])
def test_lbfgs_line_search_is_bounded_by_the_evaluations_left(lr, max_iter, max_eval):
    """bzapf/pinn_inverse_g: torch's LBFGS calls the closure a data-dependent number of times; its strong Wolfe line
    search may make at most ``max_eval - evaluations so far`` trial steps (``max_ls=max_eval - current_evals``), not
    25, so a search that would run long near the end of the budget is cut short and returns the best end of its
    bracket (and a step may total max_eval + 1 calls). The runtime LBFGS searched up to 25 trial steps and only then
    looked at max_eval: a different number of closure calls (36 against torch's 33 for lr=5, max_eval=10) and a
    different trajectory after the first capped search. Now the same calls, the same values (float64)."""
    source = (LBFGS_BUDGET.replace("LR", str(lr)).replace("MAX_ITER", str(max_iter))
              .replace("MAX_EVAL", str(max_eval)))
    code = _convert(source)
    assert "mp_train.LBFGS(" in code, code
    tag = f"{lr}_{max_iter}_{max_eval}"
    t, m = _losses(source, f"torch_lbfgs_budget_{tag}"), _losses(code, f"ms_lbfgs_budget_{tag}")
    assert len(m) == len(t), (len(t), len(m))
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-8, atol=1e-14)
    assert t[0][0] == 12.5 > min(v[0] for v in t)  # torch's own run starts at (-1.5, 2) and finds lower points
