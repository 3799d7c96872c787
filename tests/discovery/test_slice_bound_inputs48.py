"""A forward argument used as a slice bound is a Python number (golbin/WaveNet's ``ResidualBlock.forward(x,
skip_size)`` keeps ``skip[:, :, -skip_size:]``; first contact session 48): discovery's inputs give it a number, where
an array raised "only integer tensors of a single element can be converted to an index" for every form tried."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

MODEL = '''
import torch
import torch.nn as nn


class Gated(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, 2)

    def forward(self, x, keep):
        a, b = self.conv(x).chunk(2, dim=1)
        gated = torch.tanh(a) * torch.sigmoid(b)
        return gated[:, :, -keep:] + x[:, :, -(keep + 1):-1]
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("slice48"), {"model.py": MODEL}, "*")


def test_a_slice_bound_argument_is_given_a_number(proven):
    model = proven["model.py:Gated"]
    assert model["status"] == "proven", model
    assert any(i.startswith("value:") for i in model["inputs"]), model["inputs"]
