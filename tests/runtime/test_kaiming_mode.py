"""mindport.runtime.init's Kaiming initialisers pick the fan as torch does: the mode in any case
('FAN_OUT' is torch's 'fan_out'), anything else refused with torch's message."""
import math

import numpy as np
import pytest
import torch

import mindspore as ms

from mindport.runtime import init as mp_init


@pytest.mark.parametrize("fill", ["kaiming_uniform_", "kaiming_normal_"])
@pytest.mark.parametrize("mode", ["fan_in", "FAN_OUT", "Fan_In"])
def test_kaiming_takes_the_mode_in_any_case_as_torch(fill, mode):
    shape = (256, 8)  # fan_in 8, fan_out 256: the two modes give stds 5.7x apart
    reference = torch.empty(shape)
    getattr(torch.nn.init, fill)(reference, mode=mode, nonlinearity="relu")
    parameter = ms.Parameter(ms.Tensor(np.zeros(shape, np.float32)), name="w")
    getattr(mp_init, fill)(parameter, mode=mode, nonlinearity="relu")
    fan = 8 if mode.lower() == "fan_in" else 256
    expected_std = math.sqrt(2.0) / math.sqrt(fan)
    ours, theirs = parameter.asnumpy().std(), reference.numpy().std()
    assert abs(theirs - expected_std) / expected_std < 0.05  # torch agrees with the formula
    assert abs(ours - expected_std) / expected_std < 0.05, (ours, theirs)


def test_an_unknown_mode_is_refused_by_both():
    with pytest.raises(ValueError):
        torch.nn.init.kaiming_uniform_(torch.empty(4, 4), mode="fan_avg")
    with pytest.raises(ValueError, match="fan_avg"):
        mp_init.kaiming_uniform_(ms.Parameter(ms.Tensor(np.zeros((4, 4), np.float32)), name="w"), mode="fan_avg")
