"""Inputs of golbin/WaveNet's classes (first contact session 48), each a class of its own:
- a forward argument used as a slice bound is a Python number (``ResidualBlock.forward(x, skip_size)`` keeps
  ``skip[:, :, -skip_size:]``): discovery's inputs give it a number, where an array raised "only integer tensors of
  a single element can be converted to an index" for every form tried;
- a forward that checks its input against its receptive field ("Input size has to be larger than receptive_fields
  ... Receptive fields size: 62") gets an input whose time axis covers it (WaveNet takes [batch, time, channels] and
  transposes it)."""
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


class Causal(nn.Module):
    def __init__(self, layers=7, channels=2):
        super().__init__()
        self.receptive_fields = sum(2 ** i for i in range(layers))
        self.convs = nn.ModuleList(nn.Conv1d(channels, channels, 2, dilation=2 ** i) for i in range(layers))

    def forward(self, x):
        x = x.transpose(1, 2)
        if x.size(2) <= self.receptive_fields:
            raise ValueError(f"Input size has to be larger than receptive_fields\\nInput size: {x.size(2)}, "
                             f"Receptive fields size: {self.receptive_fields}")
        for conv in self.convs:
            x = torch.tanh(conv(x))
        return x.transpose(1, 2)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("slice48"), {"model.py": MODEL}, "*")


def test_a_slice_bound_argument_is_given_a_number(proven):
    model = proven["model.py:Gated"]
    assert model["status"] == "proven", model
    assert any(i.startswith("value:") for i in model["inputs"]), model["inputs"]


def test_an_input_covering_the_receptive_field_its_forward_checks(proven):
    model = proven["model.py:Causal"]
    assert model["status"] == "proven", model
    time_steps = int(model["inputs"][0].split(":")[0].split("x")[1])
    assert time_steps > 127, model["inputs"]
