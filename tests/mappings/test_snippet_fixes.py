"""Small torch programs of our own, one per root cause the peer-snippet benchmark (benchmarks/peer_snippets.py) found
silent: each is converted by the real converter, run in both frameworks, and its named results compared (values,
shapes, dtypes), or it must be flagged."""
from __future__ import annotations

import numpy as np
import pytest


def _plain(value):
    if hasattr(value, "asnumpy"):
        return value.asnumpy(), str(value.dtype).lower()
    if hasattr(value, "detach"):
        value = value.detach().resolve_conj()
        return value.numpy(), str(value.dtype).replace("torch.", "")
    return np.asarray(value), type(value).__name__


def run_both(program: str, names: list[str], rtol: float = 1e-5, atol: float = 1e-6):
    """(torch namespace, MindSpore namespace, conversion result) after checking that each name agrees."""
    from mindport import convert_source

    result = convert_source(program)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_space, m_space = {}, {}
    exec(compile(program, "<torch>", "exec"), t_space)  # noqa: S102 - the test's own programs
    exec(compile(result.code, "<mindspore>", "exec"), m_space)  # noqa: S102
    for name in names:
        t_val, m_val = t_space[name], m_space[name]
        if isinstance(t_val, (list, tuple)):
            assert isinstance(m_val, (list, tuple)) and len(t_val) == len(m_val), (name, m_val)
            pairs = list(zip(t_val, m_val))
        else:
            pairs = [(t_val, m_val)]
        for t_one, m_one in pairs:
            (t_arr, t_dtype), (m_arr, m_dtype) = _plain(t_one), _plain(m_one)
            assert t_dtype == m_dtype.replace("bool_", "bool"), (name, t_dtype, m_dtype, result.code)
            assert t_arr.shape == m_arr.shape, (name, t_arr.shape, m_arr.shape)
            np.testing.assert_allclose(m_arr, t_arr, rtol=rtol, atol=atol, err_msg=f"{name}\n{result.code}")
    return t_space, m_space, result


COMPLEX_LITERALS = [
    "x = torch.tensor([[3.+3.j, 2.+2.j, 3.+3.j], [2.+2.j, 2.+2.j, 3.+3.j]])\nr = torch.fft.irfft(x, n=4)",
    "x = torch.tensor([1 + 2j, -3j, 4])\nr = torch.angle(x)",
    "x = torch.tensor(2 - 1j)\nr = x.conj() * 2",
    "x = torch.as_tensor([[1j, 2.0], [0.5, -1 + 1j]])\nr = torch.fft.fft2(x)",
    "x = torch.tensor([1.5, -2.0])\nr = x * 3",  # no complex: unchanged (float32)
    "x = torch.tensor([1j, 2j], dtype=torch.complex128)\nr = x + 1",  # an explicit dtype wins
]


@pytest.mark.parametrize("body", COMPLEX_LITERALS)
def test_complex_literals_are_complex64_as_in_torch(body):
    run_both("import torch\n" + body + "\n", ["x", "r"])


TRAINING_MODE = [
    # torch builds modules in training mode: batch statistics, and the running ones updated for eval()
    "x = torch.arange(48, dtype=torch.float32).reshape(4, 3, 2, 2)\nm = nn.BatchNorm2d(3)\nr = m(x)\n"
    "m.eval()\nr2 = m(x)",
    "x = torch.arange(960, dtype=torch.float32).reshape(2, 5, 6, 4, 4)\nm = nn.BatchNorm3d(5, affine=False)\nr = m(x)",
    "x = torch.linspace(-2, 3, 24).reshape(6, 4)\nm = nn.BatchNorm1d(4, momentum=0.3)\nr = m(x)\nr2 = m(x * 2)",
    "x = torch.linspace(-2, 3, 18).reshape(2, 3, 3)\n"
    "m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)\nr = m(x)",
    "x = torch.linspace(-1, 1, 30).reshape(5, 6)\nm = nn.Dropout(0.0)\nr = m(x)",
]


@pytest.mark.parametrize("body", TRAINING_MODE)
def test_layers_built_outside_a_class_start_in_training_mode(body):
    names = ["r", "r2"] if "r2 =" in body else ["r"]
    _, _, result = run_both("import torch\nimport torch.nn as nn\n" + body + "\n", names, rtol=1e-4, atol=1e-5)
    assert ".set_train()" in result.code


def test_layers_inside_a_class_follow_their_module():
    from mindport import convert_source

    code = convert_source("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
                          "        super().__init__()\n        self.bn = nn.BatchNorm2d(3)\n").code
    assert "set_train" not in code


VALUE_FIXES = [
    # -0.0 has its sign bit set: signbit and copysign see it as negative, as torch does
    "x = torch.tensor([-0.0, 0.0, 1.5, -2.0, -0.0])\nr = torch.signbit(x)\nr2 = x.signbit()",
    "x = torch.tensor([3.0, -2.0, 1.0])\ny = torch.tensor([-0.0, 0.0, -1.0])\nr = torch.copysign(x, y)\n"
    "r2 = x.copysign(y)",
    "x = torch.tensor([1.0, 2.0])\nr = torch.copysign(x, -0.0)\nr2 = x.clone().copysign_(torch.tensor([-0.0, 5.0]))",
    # median without dim: one value, the lower of the two middle ones
    "x = torch.tensor([[4.0, 1.0], [3.0, 2.0]])\nr = torch.median(x)\nr2 = x.median()",
    "x = torch.tensor([[4.0, 1.0, 7.0], [3.0, 2.0, 0.5]])\nr = torch.median(x, 1)[0]\nr2 = x.median(dim=0)[1]",
    # a Hermitian matrix's eigenvalues are real
    "a = torch.tensor([[2.0, 1.0 - 1.0j], [1.0 + 1.0j, 3.0]], dtype=torch.complex128)\nr = torch.linalg.eigh(a)[0]",
    # the typed constructors without data: an empty 1-D tensor
    "r = torch.FloatTensor()\nr2 = torch.LongTensor()",
    # instance_norm: the running stats are updated after the output (they may be the weight and bias tensors)
    "x = torch.linspace(-2, 3, 18).reshape(2, 3, 3)\nd = torch.tensor([1.0, 0.5, 2.0])\n"
    "r = torch.nn.functional.instance_norm(x, d, d.clone(), d, d)\nr2 = d",
]


@pytest.mark.parametrize("body", VALUE_FIXES)
def test_value_fixes(body):
    names = ["r", "r2"] if "r2 =" in body else ["r"]
    run_both("import torch\n" + body + "\n", names)


@pytest.mark.parametrize("call", ["torch.nn.LPPool1d(float('inf'), 3, stride=2)",
                                  "torch.nn.functional.lp_pool2d(x, math.inf, 2)"])
def test_lp_pool_of_infinite_norm_is_flagged(call):
    from mindport import convert_source

    result = convert_source(f"import math\nimport torch\nx = torch.ones(1, 2, 4, 4)\nr = {call}\n")
    assert [d.code for d in result.diagnostics] == ["MP102"]
    assert "norm_type=inf" in result.diagnostics[0].message


MORE_VALUE_FIXES = [
    # bernoulli's input is the probabilities (ops.bernoulli took it for the shape and drew with p=0.5)
    "p = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])\nr = torch.bernoulli(p)",
    # log|det| of a complex matrix is real
    "a = torch.tensor([[1.0 + 2.0j, 0.5], [-1.0j, 3.0 - 1.0j]])\nr = torch.linalg.slogdet(a)\n"
    "r2 = torch.slogdet(a).logabsdet",
    "a = torch.tensor([[2.0, 1.0], [1.0, 3.0]])\nr = a.slogdet()",
    # cartesian_prod of one tensor is that tensor
    "a = torch.tensor([1, 2, 3])\nr = torch.cartesian_prod(a)\nr2 = torch.cartesian_prod(a, torch.tensor([4, 5]))",
]


@pytest.mark.parametrize("body", MORE_VALUE_FIXES)
def test_more_value_fixes(body):
    names = ["r", "r2"] if "r2 =" in body else ["r"]
    run_both("import torch\n" + body + "\n", names)


def test_cyclic_lr_cycling_momentum_is_flagged():
    from mindport import convert_source

    head = "import torch\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
    flagged = convert_source(head + "s = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)\n")
    assert [d.code for d in flagged.diagnostics] == ["MP102"]
    assert "cycle_momentum" in flagged.diagnostics[0].message
    kept = convert_source(head + "s = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)\n")
    assert not kept.diagnostics and "cycle_momentum" not in kept.code and "CyclicLR(" in kept.code


BUFFERS = '''
import torch
import torch.nn as nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))
        self.proj = nn.Linear(2, 2)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.register_buffer("offset", torch.tensor([0.5, -1.0]))
        self.weight = nn.Parameter(torch.ones(2))


model = Outer()
names = [name for name, _ in model.named_buffers()]
values = torch.cat([b for b in model.buffers()])
own = [name for name, _ in model.named_buffers(recurse=False)]
'''


def test_named_buffers_lists_what_register_buffer_made():
    t_space, m_space, result = run_both(BUFFERS, ["values"])
    assert "mp_containers.named_buffers(model)" in result.code
    assert m_space["names"] == t_space["names"] == ["offset", "inner.scale"]
    assert m_space["own"] == t_space["own"] == ["offset"]



NON_PERSISTENT = '''
import torch
import torch.nn as nn


class Alibi(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("slopes", torch.tensor([0.5, 0.25]), persistent=False)
        self.register_buffer("bias", None, persistent=False)

    def first(self):
        return next(self.buffers())


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.alibi = Alibi()
        self.register_buffer("offset", torch.tensor([0.5, -1.0]))


model = Outer()
names = sorted(name for name, _ in model.named_buffers())
first = model.alibi.first()
'''


def test_buffers_list_non_persistent_buffers():
    """A Cell holding only non-persistent buffers (x-transformers' ALiBi: ``next(self.buffers()).device``): they stay
    MindSpore buffers, and ``buffers()`` lists them after the Parameters persistent buffers became."""
    t_space, m_space, _ = run_both(NON_PERSISTENT, ["first"])
    assert m_space["names"] == t_space["names"] == ["alibi.slopes", "offset"]

LOG_SOFTMAX = [
    # ops.log_softmax is 2-3e-6 off in float32 and has float32's precision in float64
    ("x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)\nr = F.log_softmax(x, dim=0)\n"
     "r2 = torch.special.log_softmax(x, 1)", 1e-12, 1e-14),
    ("x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])\nr = torch.log_softmax(x, 0)\nr2 = nn.LogSoftmax(dim=1)(x)",
     1e-6, 2e-7),
    ("x = torch.tensor([[0.5, -1.0], [3.0, 2.5]])\nr = x.log_softmax(1, dtype=torch.float64)\n"
     "r2 = F.log_softmax(x, 1, dtype=torch.float64)", 1e-7, 1e-8),
]


@pytest.mark.parametrize(("body", "rtol", "atol"), LOG_SOFTMAX)
def test_log_softmax_keeps_the_precision_of_its_dtype(body, rtol, atol):
    run_both("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + body + "\n", ["r", "r2"],
             rtol=rtol, atol=atol)


@pytest.mark.parametrize("body", ["r = torch.Tensor([[3, 4], [5, 8]])\nr2 = torch.Tensor([True, False]) * 2",
                                  "r = torch.Tensor(2, 3).zero_()\nr2 = torch.Tensor([])",
                                  "x = torch.ones(2)\nr = torch.Tensor([1, 2]) / 4\nr2 = isinstance(x, torch.Tensor)",
                                  "a = torch.tensor([[3, 4]])\nr = torch.Tensor(a)\nr2 = torch.Tensor(a.double())"])
def test_torch_tensor_called_is_float32(body):
    # torch.Tensor(...) is the default float type whatever the data (ms.Tensor([1, 2]) is int64); of a tensor, itself
    t_space, m_space, _ = run_both("import torch\n" + body + "\n", ["r"] + (["r2"] if "isinstance" not in body else []))
    if "isinstance" in body:
        assert m_space["r2"] is t_space["r2"] is True


@pytest.mark.parametrize("call", ['torch.device("cpu", 1)', 'torch.device(index=0, type="cpu")',
                                  'torch.device(type="cuda", index=1)', 'torch.device("cuda" if flag else "cpu", 2)',
                                  'torch.device("cuda:3")', 'torch.device("cpu")', 'torch.device(type="cpu")'])
def test_device_becomes_its_designation(call):
    # mindport writes a device as the string str(torch.device(...)) gives; the statement after it sets the device
    import torch

    from mindport import convert_source

    code = convert_source(f"import torch\nflag = False\nresult = {call}\n").code
    line = next(text for text in code.splitlines() if text.startswith("result = "))
    space = {"flag": False}
    exec(line, space)  # noqa: S102 - the converted line alone (not the global device setting after it)
    assert space["result"] == str(eval(call, {"torch": torch, "flag": False}))  # noqa: S307


@pytest.mark.parametrize("body", [
    "x = torch.tensor([[[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 2.0]],\n"
    "                  [[3.0, 0.5, 0.0], [0.5, 2.0, 0.5], [0.0, 0.5, 1.0]]], dtype=torch.float64)\n"
    "r = torch.linalg.pinv(x, hermitian=True)\nr2 = torch.linalg.pinv(x)",
    # hermitian=True reads the lower triangle only
    "x = torch.tensor([[2.0, 9.0], [1.0, 3.0]], dtype=torch.float64)\nr = torch.linalg.pinv(x, hermitian=True)",
    "x = torch.tensor([[[1.0, 5.0, 0.0], [2.0, 4.0, 7.0], [0.0, 2.0, 4.0]]] * 2, dtype=torch.float64)\n"
    "r = torch.linalg.matrix_rank(x, hermitian=True)\nr2 = torch.linalg.matrix_rank(x, atol=torch.tensor(3.0), hermitian=True)",
])
def test_pinv_keeps_batches_and_reads_the_lower_triangle(body):
    run_both("import torch\n" + body + "\n", ["r", "r2"] if "r2 =" in body else ["r"], rtol=1e-9, atol=1e-12)
