"""Causes met on first contact with new repositories (session 38: `mindport migrate REPO` with no settings), each a
class with a fixture of our own. The repository of the fixtures is converted and proven once (real torch, real
MindSpore, GRAPH_MODE included). Expected values come from torch."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# a tree ensemble layer initialised from its first batch (NODE's data-aware initialisation: thresholds at
# percentiles numpy's global generator draws, a flag parameter set once, through a base class overriding __call__)
TABULAR = '''
import numpy as np
import torch
import torch.nn as nn


class ModuleWithInit(nn.Module):
    def __init__(self):
        super().__init__()
        self._done_tensor = nn.Parameter(torch.tensor(0, dtype=torch.uint8), requires_grad=False)
        self._done = None

    def initialize(self, x):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        if self._done is None:
            self._done = bool(self._done_tensor.item())
        if not self._done:
            self.initialize(*args, **kwargs)
            self._done_tensor.data[...] = 1
            self._done = True
        return super().__call__(*args, **kwargs)


class ThresholdLayer(ModuleWithInit):
    def __init__(self, in_features, num_trees):
        super().__init__()
        self.selection = nn.Linear(in_features, num_trees)
        self.thresholds = nn.Parameter(torch.zeros(num_trees))
        self.log_temperatures = nn.Parameter(torch.zeros(num_trees))

    def initialize(self, x):
        with torch.no_grad():
            h = self.selection(x)
            q = 100 * np.random.beta(1.0, 1.0, size=[h.shape[1]])
            self.thresholds.data[...] = torch.as_tensor(
                [np.percentile(c, p) for c, p in zip(h.t().numpy(), q)], dtype=h.dtype)
            spread = np.percentile(np.abs(h.numpy() - self.thresholds.numpy()), 90, axis=0)
            self.log_temperatures.data[...] = torch.as_tensor(np.log(spread + 1e-6), dtype=h.dtype)

    def forward(self, x):
        return torch.sigmoid((self.selection(x) - self.thresholds) * torch.exp(-self.log_temperatures))
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh38"), {"tabular.py": TABULAR}, "*")


def test_a_model_initialised_by_its_first_forward_is_proven_from_the_state_it_left(proven):
    """Before: each side initialised on its first forward with its own numpy draws (the MindSpore side had torch's
    weights from before that forward): "outputs differ, max rel 371" for a correct port."""
    m = proven["tabular.py:ThresholdLayer"]
    assert m["status"] == "proven", m
    assert m["max_rel"] < 1e-4
