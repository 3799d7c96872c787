"""``nn.init.kaiming_uniform_(self.weight[i])``: one member of an ensemble's stacked weights (CORL's EDAC/SAC-N
critics) initialised through an indexed view, which torch fills in place. It became ``self.weight[i].set_data(...)``
and failed (a MindSpore index is a copy, a Tensor without ``set_data``); now the runtime init fills the copy and the
statement assigns it back: ``self.weight[i] = mp_init.kaiming_uniform_(self.weight[i], ...)``."""
from __future__ import annotations

import math
import textwrap

import numpy as np

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import math
    import torch
    import torch.nn as nn


    class VectorizedLinear(nn.Module):
        def __init__(self, in_features, out_features, ensemble_size):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(ensemble_size, in_features, out_features))
            self.bias = nn.Parameter(torch.empty(ensemble_size, 1, out_features))
            for layer in range(ensemble_size):
                nn.init.kaiming_uniform_(self.weight[layer], a=math.sqrt(5))
            nn.init.zeros_(self.bias[0])
            nn.init.constant_(self.bias.data[1:], 0.5)

        def forward(self, x):
            return x @ self.weight + self.bias
""")


def test_each_view_is_filled_and_assigned_back(tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "self.weight[layer] = mp_init.kaiming_uniform_(" in result.code, result.code
    module = load_module(result.code, tmp_path / "ens.py", "ens_indexed_init")
    layer = module.VectorizedLinear(64, 48, 3)
    weight, bias = layer.weight.asnumpy(), layer.bias.asnumpy()
    bound = 1 / math.sqrt(48)  # torch: a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = size(1) = 48
    for member in weight:  # every member filled (none left at zeros), within torch's bound, spread as U(-b, b)
        assert np.abs(member).max() <= bound + 1e-6
        assert abs(member.std() - bound / math.sqrt(3)) < 0.1 * bound
    np.testing.assert_array_equal(bias[0], 0.0)
    np.testing.assert_array_equal(bias[1:], 0.5)
