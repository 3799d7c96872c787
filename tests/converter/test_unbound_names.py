"""A model method's line reading a name nothing binds (a typo on a branch its runs never take) is ``raise
NameError``: torch runs such a method, MindSpore's GRAPH_MODE refused it whole ("NameError: The name 'output' is not
defined, or not supported in graph mode": nn116003/self-attention-classification's EncoderRNN, twice). Each port
matches torch in PyNative and in GRAPH_MODE, and the branch, when taken, raises as torch does."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

TYPO = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self, dim=4, packed=False):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.packed = packed

        def forward(self, x, lengths=None):
            out = torch.tanh(self.proj(x))
            if lengths is not None:
                out = nn.utils.rnn.pad_packed_sequence(output)[0]
            if self.packed:
                out = out + hidden_state
            return out[:, :, :2] + out[:, :, 2:]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_name_bound_nowhere_on_a_branch_not_taken(tmp_path, mode):
    result = convert_source(TYPO)
    assert result.code.count("raise NameError") == 2, result.code
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(TYPO, result.code, "Encoder", [x], tmp_path, "typo", mode, atol=1e-6)


def test_the_branch_taken_raises_as_torch_does(tmp_path):
    import mindspore as ms

    result = convert_source(TYPO)
    namespace: dict = {}
    path = tmp_path / "typo_port.py"
    path.write_text(result.code, encoding="utf-8")
    exec(compile(result.code, str(path), "exec"), namespace)
    model = namespace["Encoder"](packed=True)
    with pytest.raises(NameError, match="hidden_state"):
        model(ms.Tensor(np.ones((2, 3, 4), np.float32)))


# A module's function a model's method calls, reading a name never imported after an early return torch always
# takes (lucidrains/hourglass-transformer-pytorch's pad_to_multiple: ``math.ceil`` in a file without ``import
# math``). GRAPH_MODE compiles the function with the method and refused it ("The name 'math' is not defined").
HELPER = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def pad_to_multiple(tensor, multiple, dim=-1, value=0):
        seq_len = tensor.shape[dim]
        m = seq_len / multiple
        if m.is_integer():
            return tensor
        remainder = math.ceil(m) * multiple - seq_len
        return F.pad(tensor, (0, 0, 0, remainder), value=value)


    def first_positive(values):
        for v in values:
            if v > 0:
                break
        else:
            return 0
        return scale_of(v)


    class Shorten(nn.Module):
        def __init__(self, dim=4, factor=2):
            super().__init__()
            self.factor = factor
            self.proj = nn.Linear(dim * factor, dim)

        def forward(self, x):
            x = pad_to_multiple(x, self.factor, dim=-2)
            b, n, d = x.shape
            return self.proj(x.reshape(b, n // self.factor, d * self.factor))
""")


def test_a_module_function_after_an_early_return_is_converted():
    result = convert_source(HELPER)
    assert "raise NameError(\"name 'math' is not defined\")" in result.code, result.code
    # a line after a for/else is not after an if: left as written (a line every call runs fails in torch too)
    assert "return scale_of(v)" in result.code, result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_module_function_reading_an_unimported_module_compiles(tmp_path, mode):
    result = convert_source(HELPER)
    x = np.random.default_rng(5).standard_normal((2, 6, 4)).astype(np.float32)
    assert_port_matches_in_mode(HELPER, result.code, "Shorten", [x], tmp_path, "helper", mode, atol=1e-6)
