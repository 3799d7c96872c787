"""north-redwing/hello-rnn-pytorch (north/sin_lstm in the training corpus) draws its batches with a numpy
permutation: ``X_train[perm[i * b:(i + 1) * b]]`` indexes a tensor with a numpy integer array, as torch takes it;
MindSpore refused it (``IndexError: Only support integers, slices(`:`), ...``)."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from _harness import load_module

SCRIPT = '''
import numpy as np
import torch

X = torch.arange(24, dtype=torch.float32).reshape(8, 3)
w = torch.tensor([[0.1], [-0.2], [0.05]], requires_grad=True)
y = torch.ones(8, 1)
rng = np.random.RandomState(0)
for epoch in range(3):
    perm = rng.permutation(8)
    for i in range(2):
        batch = X[perm[i * 4:(i + 1) * 4]]
        target = y[perm[i * 4:(i + 1) * 4]]
        loss = ((batch.mm(w) - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.001 * w.grad
            w.grad.zero_()
        print(round(loss.item(), 5), X[np.array([1, 2])].sum().item(), X[perm[0]].sum().item())
'''


def _printed(code: str, name: str) -> list[str]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return out.getvalue().splitlines()


def test_a_tensor_indexed_with_a_numpy_integer_array():
    from mindport import convert_source

    result = convert_source(SCRIPT, "numpy_batches.py")
    assert not [d for d in result.diagnostics if d.severity == "error"], result.code
    torch_lines, ms_lines = _printed(SCRIPT, "torch_numpy_batches"), _printed(result.code, "ms_numpy_batches")
    assert len(torch_lines) == len(ms_lines) == 6
    np.testing.assert_allclose(np.array([l.split() for l in ms_lines], float),
                               np.array([l.split() for l in torch_lines], float), rtol=1e-5)
