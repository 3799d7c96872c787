"""torch.nn.init's deprecated names without the trailing underscore (``init.kaiming_normal(w)``, still common in
older CIFAR code) convert like the current ones and initialise in place."""
from __future__ import annotations

import numpy as np

from mindport.migrator import convert_source

SOURCE = """import torch
from torch import nn
from torch.nn import init


def build():
    layer = nn.Linear(64, 32)
    init.kaiming_normal(layer.weight)
    init.constant(layer.bias, 0.5)
    other = nn.Linear(64, 32)
    nn.init.xavier_uniform(other.weight, gain=2.0)
    nn.init.uniform(other.bias, -0.25, 0.25)
    return layer, other
"""


def test_deprecated_init_names_convert_and_initialise():
    result = convert_source(SOURCE, "<init>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    namespace: dict = {}
    exec(compile(result.code, "<init>", "exec"), namespace)  # noqa: S102 - our own snippet
    layer, other = namespace["build"]()
    weight, bias = layer.weight.asnumpy(), layer.bias.asnumpy()
    np.testing.assert_array_equal(bias, np.full(32, 0.5, np.float32))
    assert 0.7 * np.sqrt(2 / 64) < weight.std() < 1.3 * np.sqrt(2 / 64)  # He normal, fan_in 64
    bound = 2.0 * np.sqrt(6 / (64 + 32))
    assert np.abs(other.weight.asnumpy()).max() <= bound and np.abs(other.weight.asnumpy()).max() > 0.9 * bound
    assert np.abs(other.bias.asnumpy()).max() <= 0.25
