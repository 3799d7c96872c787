"""``isinstance(x, torch.cuda.FloatTensor)`` and the other legacy typed tensor types (22 of the 595 mirrored
repositories: DCGAN-style ``isinstance(input.data, torch.cuda.FloatTensor) and self.ngpu > 1``, torchMoji's
``isinstance(X_in, torch.LongTensor)``). The types were converted to constructor functions ("isinstance() arg 2 must
be a type": WassersteinGAN's MLP_G in the discovery sweep), and ``torch.cuda.X`` was an alias of ``torch.X``'s entry,
so even as a class a CPU port would answer True where torch on the CPU says False (and take DCGAN's data_parallel
branch). Now each is a class answering isinstance as torch does on the same device (a CPU run: True for the CPU type
of the tensor's dtype, False for every cuda type), and ``torch.cuda.X`` has its own entry. Expected values come from
torch; the fixture is written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class G(nn.Module):
        def __init__(self, ngpu=2):
            super().__init__()
            self.ngpu = ngpu
            self.main = nn.Linear(4, 4)

        def forward(self, input):
            if isinstance(input.data, torch.cuda.FloatTensor) and self.ngpu > 1:
                output = self.main(input) * 100.0  # (DCGAN: nn.parallel.data_parallel on the GPUs)
            else:
                output = self.main(input)
            if isinstance(input, torch.FloatTensor):
                output = output * 2
            if not isinstance(input, (torch.LongTensor, torch.cuda.LongTensor)):
                output = output + 1
            if isinstance(input, torch.DoubleTensor):
                output = output - 5
            return output
""")

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def test_the_cuda_types_are_their_own_classes():
    code = convert_source(SOURCE).code
    # the test is is_typed (a static graph does not call a metaclass's __instancecheck__)
    assert "mp_tensor.is_typed(input.data, mp_tensor.cuda_FloatTensor)" in code, code
    assert "mp_tensor.is_typed(input, (mp_tensor.LongTensor, mp_tensor.cuda_LongTensor))" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_isinstance_of_a_typed_tensor_type_is_torchs_answer_on_the_cpu(mode, tmp_path):
    result = convert_source(SOURCE)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "G", [x], tmp_path, "cuda_types", mode, rtol=1e-5, atol=1e-5)


def test_every_typed_tensor_type_against_torch():
    """Each CPU and cuda type against tensors of every dtype: torch's isinstance (a CPU run) is the expected value;
    the converted names are what the converter writes for ``torch.X`` / ``torch.cuda.X``."""
    import mindspore as ms
    import torch

    from mindport.runtime import tensor as mp_tensor

    lines = ["import torch", "def f(t):"] + [f"    a{i} = (isinstance(t, torch.{n}), isinstance(t, torch.cuda.{n}))"
                                              for i, n in enumerate(TYPES)]
    lines.append("    return " + ", ".join(f"a{i}" for i in range(len(TYPES))))
    source = "\n".join(lines) + "\n"
    code = convert_source(source).code
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "t_types.py", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(code, "m_types.py", "exec"), m_ns)  # noqa: S102
    for dtype in DTYPES:
        t = torch.zeros(2, dtype=getattr(torch, dtype))
        m = ms.ops.zeros((2,), getattr(ms, dtype if dtype != "bool" else "bool_"))
        assert m_ns["f"](m) == t_ns["f"](t), (dtype, code)
        assert m_ns["f"](ms.Parameter(m, name="p")) == t_ns["f"](torch.nn.Parameter(t, requires_grad=False)), dtype
    assert not isinstance(3, mp_tensor.FloatTensor) and not isinstance(np.zeros(2, np.float32), mp_tensor.FloatTensor)
    # the constructors keep torch's meaning (data or sizes)
    np.testing.assert_array_equal(mp_tensor.cuda_LongTensor([1, 2]).asnumpy(), torch.LongTensor([1, 2]).numpy())
    assert mp_tensor.cuda_FloatTensor(2, 3).shape == tuple(torch.FloatTensor(2, 3).shape)
