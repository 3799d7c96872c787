"""Causes met on first contact with the training scripts of benchmarks/training/fresh34.json, each a class with a
fixture of our own, run in real torch and real MindSpore; expected values come from torch.

``torch.autograd.gradcheck`` (aman-17/pytorch-tutorial's backprop exercise checks its custom ReLU Function with it
before training with it): no mapping entry, so the call stayed torch's (MP103) with the converted Function's
``MyReLU.apply`` still in it, and torch refused the MindSpore input ("gradcheck expects at least one input tensor to
require gradient"). Now ``mindport.runtime.training.gradcheck``: central differences against ``mindspore.vjp``'s
Jacobian, and ``F.apply`` handed over as a function is the Cell ``F()`` (its bprop is what is checked)."""
from __future__ import annotations

import io
import sys
import types
from contextlib import redirect_stdout

from test_fresh_causes import _convert


def _run(code: str, name: str) -> dict:
    module = types.ModuleType(name)
    sys.modules[name] = module
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            exec(compile(code, name, "exec"), module.__dict__)  # noqa: S102 - the test's own script
    finally:
        del sys.modules[name]
    lines = {}
    for line in out.getvalue().splitlines():
        key, value = line.split(" ", 1)
        lines.setdefault(key, []).append(value)
    return lines


GRADCHECK = '''
import torch


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


class HalfSquare(torch.autograd.Function):
    """A wrong backward: x * x's gradient is 2x, this gives x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x


x = torch.linspace(-1.3, 1.1, 15, dtype=torch.double).reshape(5, 3).requires_grad_(True)
w = torch.linspace(0.5, -0.4, 6, dtype=torch.double).reshape(3, 2).requires_grad_(True)
print("relu", torch.autograd.gradcheck(MyReLU.apply, (x,), eps=1e-6, atol=1e-4))
print("wrong", torch.autograd.gradcheck(HalfSquare.apply, (x,), raise_exception=False))
print("two", torch.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, w)))
print("single", torch.autograd.gradcheck(torch.sigmoid, x))
try:
    torch.autograd.gradcheck(HalfSquare.apply, (x,))
    print("raised", False)
except RuntimeError as e:
    print("raised", "Jacobian mismatch for output 0 with respect to input 0" in str(e))
'''


def test_gradcheck_of_a_custom_function_and_of_plain_functions_answers_as_torchs():
    code = _convert(GRADCHECK)
    assert "import torch" not in code, code
    assert "gradcheck(MyReLU()," in code, code
    torch_lines = _run(GRADCHECK, "gradcheck_torch")
    ms_lines = _run(code, "gradcheck_ms")
    assert torch_lines == ms_lines == {"relu": ["True"], "wrong": ["False"], "two": ["True"], "single": ["True"],
                                       "raised": ["True"]}, (torch_lines, ms_lines)
