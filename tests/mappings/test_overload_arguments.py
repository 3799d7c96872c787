"""Arguments only torch's other overloads take (an audit of the tables' signatures against
``torch._C._jit_get_schemas_for_operator``): ``torch.linalg.pinv(A, rcond)`` (rtol=rcond, atol=0),
``torch.linalg.matrix_rank(A, tol)`` (atol=tol, rtol=0) (the schema's ``Tensor.copy_(src)`` is ``other`` in
torch's Python binding, as the table has it: ``a.copy_(src=b)`` raises in torch). Each was refused as an unknown
argument; now each agrees with torch."""
from __future__ import annotations

import pytest

from test_snippet_fixes import run_both

MATRIX = ("import numpy as np\nimport torch\n"
          "a = torch.from_numpy(np.diag([3.0, 1e-2, 1e-4]).astype(np.float32)"
          " @ np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32))\n")


@pytest.mark.parametrize("call", ["torch.linalg.pinv(a, 1e-3)", "torch.linalg.pinv(a, rcond=1e-1, hermitian=False)",
                                  "torch.linalg.pinv(a, 1e-1, True)", "torch.linalg.pinv(a, rtol=1e-3)"])
def test_pinv_rcond(call):
    run_both(MATRIX + f"y = {call}\n", ["y"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("call", ["torch.linalg.matrix_rank(a, 1e-3)", "torch.linalg.matrix_rank(a, tol=0.5)",
                                  "torch.linalg.matrix_rank(a, 0.5, True)", "torch.linalg.matrix_rank(a, atol=0.05)"])
def test_matrix_rank_tol(call):
    run_both(MATRIX + f"y = {call}\n", ["y"])
