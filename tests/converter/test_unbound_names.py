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
