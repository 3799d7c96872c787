"""A pytest fixture that returns a model is a model factory (golbin/WaveNet's test file, first contact session 48:
``@pytest.fixture def wavenet(): return WaveNet(LAYER_SIZE, STACK_SIZE, IN_CHANNELS, RES_CHANNELS)``). pytest refuses
a direct call of the decorated object ("Fixture ... called directly"), so discovery builds it through the function
the decorator wrapped, on both sides; that call also gives the class its repository's own constructor values, which
the small values of a receptive-field model (a 2 ** 16 window at layer_size=16) never reach."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

MODEL = '''
import numpy as np
import torch
import torch.nn as nn


class Dilated(nn.Module):
    def __init__(self, layer_size, channels):
        super().__init__()
        self.window = int(np.sum([2 ** i for i in range(layer_size)]))
        self.convs = nn.ModuleList(nn.Conv1d(channels, channels, 2, dilation=2 ** i) for i in range(layer_size))

    def forward(self, x):
        if x.size(2) <= self.window:
            raise ValueError(f"input length {x.size(2)} must exceed the receptive field {self.window}")
        for conv in self.convs:
            x = torch.tanh(conv(x))
        return x
'''

TESTS = '''
import pytest
import torch

from model import Dilated

LAYER_SIZE = 3
CHANNELS = 4


@pytest.fixture
def dilated():
    net = Dilated(LAYER_SIZE, CHANNELS)
    return net


def test_shape(dilated):
    assert dilated(torch.randn(1, CHANNELS, 32)).shape == (1, CHANNELS, 25)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fixture48"), {"model.py": MODEL, "test_model.py": TESTS}, "*")


def test_a_pytest_fixture_returning_a_model_is_built_and_proven(proven):
    model = proven["test_model.py:dilated"]
    assert model["status"] == "proven", model


def test_the_fixtures_call_gives_the_class_its_constructor_values(proven):
    model = proven["model.py:Dilated"]
    assert model["status"] == "proven", model
    assert "layer_size=3" in model["ctor"] and "channels=4" in model["ctor"], model["ctor"]
