"""Gradient checkpointing written as a ``torch.autograd.Function`` (the openai diffusion code bases' ``checkpoint``:
``forward(ctx, run_function, length, *args)`` keeps the function and its inputs on ``ctx``; ``backward`` recomputes
under ``torch.enable_grad()`` and takes ``torch.autograd.grad``). The Function becomes a Cell with ``bprop``; the
gradient rules turn the recomputation into a nested ``forward_fn`` that reads ``ctx.run_function`` and
``ctx.input_tensors`` from the enclosing ``backward``. ``ctx`` became ``self`` everywhere but in that nested
function, so GRAPH_MODE refused the whole model ("The name 'ctx' is not defined"). A nested function that only reads
``ctx`` now reads ``self``; one that binds its own ``ctx`` keeps it. Then GRAPH_MODE refused ``construct`` storing a
function and a list of tensors on the Cell (``self.run_function = run_function``: "'int' object is not callable", a
PyExecute node "has a invalid input format"): what forward keeps on ctx from its inputs alone is kept at the head of
``bprop`` (same inputs) and read from a local name in ``construct``; a value computed from a rebound input stays in
``construct``, and the gradients still match torch's. GRAPH_MODE compiles ``bprop`` with the Cell and refuses
``del`` ("Unsupported statement 'Delete'"): backward's ``del ctx.input_tensors`` (freeing memory) is dropped."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def checkpoint(func, inputs, params, flag):
        if flag:
            args = tuple(inputs) + tuple(params)
            return Recompute.apply(func, len(inputs), *args)
        return func(*inputs)


    class Recompute(torch.autograd.Function):
        @staticmethod
        def forward(ctx, run_function, length, *args):
            ctx.run_function = run_function
            ctx.input_tensors = list(args[:length])
            ctx.input_params = list(args[length:])
            with torch.no_grad():
                output_tensors = ctx.run_function(*ctx.input_tensors)
            return output_tensors

        @staticmethod
        def backward(ctx, *output_grads):
            ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
            with torch.enable_grad():
                copies = [x.view_as(x) for x in ctx.input_tensors]
                output_tensors = ctx.run_function(*copies)
            input_grads = torch.autograd.grad(output_tensors, ctx.input_tensors + ctx.input_params, output_grads,
                                              allow_unused=True)
            del ctx.input_tensors
            del ctx.input_params
            del output_tensors
            return (None, None) + input_grads


    class Block(nn.Module):
        def __init__(self, flag=True):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.flag = flag

        def forward(self, x):
            return checkpoint(self._forward, (x,), (), self.flag)

        def _forward(self, x):
            return torch.tanh(self.lin(x)) + x
""")


def test_ctx_read_in_a_nested_function_becomes_self():
    code = convert_source(SOURCE).code
    bprop = code[code.index("def bprop"):]
    assert "ctx" not in bprop, bprop


def test_a_nested_function_binding_ctx_keeps_it():
    source = textwrap.dedent("""\
        import torch


        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.k = 2.0
                return x * ctx.k

            @staticmethod
            def backward(ctx, grad):
                def scale(ctx, g):
                    return g * ctx
                return scale(ctx.k, grad)
    """)
    code = convert_source(source).code
    assert "def scale(ctx, g):" in code and "return g * ctx" in code and "scale(self.k, grad)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_checkpointed_block_matches_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(3).standard_normal((2, 5, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Block", [x], tmp_path, "checkpoint_ctx", mode, atol=1e-5)


GRAD_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Doubled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            y = x * 2
            ctx.y = y
            x = x + 1
            ctx.shifted = x
            return y * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.k * x + ctx.y * ctx.shifted, None


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return Doubled.apply(self.lin(x), 3.0)
""")


def test_values_from_rebound_inputs_stay_and_gradients_match_torch(tmp_path):
    import mindspore as ms
    import torch
    from mindport import transfer_weights
    from port_check import load_module

    code = convert_source(GRAD_SOURCE).code
    construct = code[code.index("def construct"):code.index("def bprop")]
    assert "self.y = y" in construct and "self.shifted = x" in construct, code
    assert "self.saved_tensors" not in construct and "self.k" not in construct, code
    torch_net = load_module(GRAD_SOURCE, tmp_path / "t_grad.py", "t_grad").Net()
    ms_net = load_module(code, tmp_path / "m_grad.py", "m_grad").Net()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    out = torch_net(xt)
    out.sum().backward()
    ms_out = ms_net(ms.Tensor(x))
    np.testing.assert_allclose(ms_out.asnumpy(), out.detach().numpy(), rtol=1e-5, atol=1e-5)
    grad = ms.grad(lambda t: ms_net(t).sum())(ms.Tensor(x))
    np.testing.assert_allclose(grad.asnumpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
