"""``torch.autograd.Function`` whose forward takes ``*args`` (gradient checkpointing in diffusion UNets:
``forward(ctx, run_function, length, *args)``): the class becomes a Cell whose ``bprop`` takes ``*args`` too (MindSpore
passes the inputs, then out and dout), forward and gradients match torch; ``F.apply`` becomes ``F()`` only where the
class converts (never a MindSpore call of a torch Function)."""
from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class WeightedSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, scale, *xs):
            ctx.scale = scale
            ctx.count = len(xs)
            return sum(x * scale for x in xs)

        @staticmethod
        def backward(ctx, *grads):
            (grad,) = grads
            return (None,) + tuple(grad * ctx.scale * 2 for _ in range(ctx.count))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            return WeightedSum.apply(3.0, h, torch.tanh(h))
""")


def test_a_star_args_function_converts_and_its_gradients_match(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "def bprop(self, scale, *xs):" in result.code and "WeightedSum()(3.0, h" in result.code
    torch_net = load_module(SOURCE, tmp_path / "t_star.py", "t_star").Net()
    ms_net = load_module(result.code, tmp_path / "m_star.py", "m_star").Net()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    want = torch_net(tx)
    want.sum().backward()
    mx = ms.Tensor(x)
    np.testing.assert_allclose(ms_net(mx).asnumpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    grad = ms.grad(lambda v: ms_net(v).sum())(mx)  # the custom backward (doubled), not autodiff of forward
    np.testing.assert_allclose(grad.asnumpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_a_function_kept_torch_keeps_its_apply():
    """A Function that cannot become a Cell (no backward) is flagged and its ``.apply`` call stays torch's."""
    source = textwrap.dedent("""\
        import torch


        class Half(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x / 2


        def half(x):
            return Half.apply(x)
    """)
    result = convert_source(source)
    assert [d.code for d in result.diagnostics] == ["MP105"]
    assert "Half.apply(x)" in result.code


GUARDED = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    MEMORY_EFFICIENT = True

    if MEMORY_EFFICIENT:
        class SiLUImplementation(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * torch.sigmoid(x)

            @staticmethod
            def backward(ctx, grad_output):
                x = ctx.saved_tensors[0]
                s = torch.sigmoid(x)
                return grad_output * (s * (1. + x * (1. - s))) * 2

        def silu(x):
            return SiLUImplementation.apply(x)
    else:
        def silu(x):
            return x * torch.sigmoid(x)


    class Net(nn.Module):
        def forward(self, x):
            return silu(x)
""")


def test_a_function_defined_under_a_module_level_if_converts(tmp_path):
    """ReXNet defines its memory-efficient SiLU Function inside ``if USE_MEMORY_EFFICIENT_SiLU:``: the class became a
    Cell but ``SiLUJitImplementation.apply(x)`` was left (``Cell.apply() missing 1 required positional argument``).
    Classes in a module's if/try/with blocks are module-level too; forward and the custom gradient match torch."""
    import mindspore as ms
    import torch

    result = convert_source(GUARDED)
    assert "SiLUImplementation()(x)" in result.code, result.code
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    want = load_module(GUARDED, tmp_path / "t_g.py", "t_g").Net()(tx)
    want.sum().backward()
    ms_net = load_module(result.code, tmp_path / "m_g.py", "m_g").Net()
    mx = ms.Tensor(x)
    np.testing.assert_allclose(ms_net(mx).asnumpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    grad = ms.grad(lambda v: ms_net(v).sum())(mx)  # the custom backward (doubled)
    np.testing.assert_allclose(grad.asnumpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


INSTANCE_APPLY = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Straight(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return torch.round(x * 4) / 4 * w

        @staticmethod
        def backward(ctx, grad):
            (w,) = ctx.saved_tensors
            return grad * w * 3, grad.sum() * 0 + 1


    def straight(x, w):
        return Straight().apply(x, w)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.tensor(0.5))
            self.fn = Straight.apply

        def forward(self, x):
            return straight(self.fc(x), self.w) + self.fn(x, self.w)
""")


def test_apply_reached_through_an_instance_or_bound_is_the_cell():
    """torch's Function.apply is a classmethod: ``F().apply(x, w)`` (VQ-VAE's ``NearestEmbedFunc().apply``) and
    ``self.fn = F.apply`` are the same function; each becomes the Cell ``F()`` (it was ``F().apply(...)``, Cell.apply,
    a TypeError). Values and the custom gradient match torch's."""
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    result = convert_source(INSTANCE_APPLY)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "Straight()(x, w)" in result.code and ".apply" not in result.code, result.code
    torch_net = load_module(INSTANCE_APPLY, Path(tempfile.mkdtemp()) / "t_inst.py", "t_inst").Net()
    ms_net = load_module(result.code, Path(tempfile.mkdtemp()) / "m_inst.py", "m_inst").Net()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    want = torch_net(tx)
    want.sum().backward()
    mx = ms.Tensor(x)
    np.testing.assert_allclose(ms_net(mx).asnumpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    grad = ms.grad(lambda v: ms_net(v).sum())(mx)
    np.testing.assert_allclose(grad.asnumpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
