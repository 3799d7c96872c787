"""A model method under a private name of MindSpore's Cell (DRL-Pytorch's C51, trials drlpt/c51: ``def
_predict(self, state)`` called from forward). GRAPH_MODE's ``Cell.__call__`` runs ``predict_compiled, res =
self._predict(*args)`` first: the model's method replaced Cell's, its two tensors were unpacked and the first
tested ("ValueError: The tensor should have only one element, but got 165"); PyNative never calls it. The method
takes a trailing underscore with its ``self.`` references, as the public names Cell calls itself do, and the port
matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class QNet(nn.Module):
        def __init__(self, state_dim=4, action_dim=3, n_atoms=5):
            super().__init__()
            self.action_dim, self.n_atoms = action_dim, n_atoms
            self.net = nn.Linear(state_dim, action_dim * n_atoms)
            self.atoms = torch.linspace(-1, 1, n_atoms)

        def _predict(self, state):
            logits = self.net(state)
            dist = torch.softmax(logits.view(len(state), self.action_dim, self.n_atoms), dim=2)
            return dist, (dist * self.atoms).sum(2)

        def forward(self, state):
            dist, q = self._predict(state)
            action = q.argmax(dim=1)
            return action, dist[torch.arange(len(state)), action]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_method_under_a_private_cell_name_is_renamed(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "def _predict_(self, state):" in code, code
    assert "self._predict_(state)" in code, code
    x = np.random.default_rng(8).standard_normal((5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "QNet", [x], tmp_path, "private52", mode, atol=1e-6)
