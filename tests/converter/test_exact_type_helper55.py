"""An exact type test in a module function a model's forward calls (onpolicy's MAT: ``check(input)`` is
``torch.from_numpy(input) if type(input) == np.ndarray else input``, called on forward's tensor inputs, then
``.to(**self.tpdv)``): MindSpore 2.10's graph compiles the function with the method and did not fold ``type(x) ==
np.ndarray``, so the conditional ran at run time and what forward did with its interpreted value failed ("'int'
object is not subscriptable"). ExactTypeTestTransform now rewrites such tests in a torch file's module functions too
(``mp_graph_safe.is_exactly``: ``type`` outside a graph). The converted model runs against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import numpy as np
    import torch
    from torch import nn


    def check(value):
        return torch.from_numpy(value) if type(value) == np.ndarray else value


    class Checked(nn.Module):
        def __init__(self, width=5, out=4):
            super().__init__()
            self.proj = nn.Linear(width, out)
            self.tpdv = dict(dtype=torch.float32, device=torch.device("cpu"))

        def forward(self, state, obs):
            state = check(state).to(**self.tpdv)
            obs = check(obs).to(**self.tpdv)
            return self.proj(state + obs) * state.shape[0]
""")


def test_the_helpers_type_test_is_rewritten():
    code = convert_source(SOURCE).code
    assert "is_exactly(value, np.ndarray)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_exact_type_test_in_a_helper_matches_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    state = rng.standard_normal((2, 3, 5)).astype(np.float32)
    obs = rng.standard_normal((2, 3, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Checked", [state, obs], tmp_path,
                                "exact_helper55", mode)
