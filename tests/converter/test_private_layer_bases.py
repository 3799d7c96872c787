"""Classes derived from torch's private layer bases (``nn.modules.batchnorm._BatchNorm``, ``loss._Loss`` ...) with a
``forward`` of their own. MrGiovanni/ModelsGenesis's ``ContBatchNorm3d(_BatchNorm)`` (batch15, first contact)
normalises with ``F.batch_norm(..., True, ...)`` in its forward (batch statistics even in eval): the converter did not
count a private base as a module base, so ``forward`` stayed ``forward``, the base's construct ran instead (running
statistics in eval: 0.43 off torch), and ops.batch_norm refuses 5-D inputs. Now such a class is a module class (the
twenty private nn.Module bases of torch.nn.modules, names._PRIVATE_MODULE_BASES) and the functional batch norm
takes any rank from 2 as torch does."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

CONT_BN = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ContBatchNorm3d(nn.modules.batchnorm._BatchNorm):
        def _check_input_dim(self, input):
            if input.dim() != 5:
                raise ValueError('expected 5D input (got {}D input)'.format(input.dim()))

        def forward(self, input):
            self._check_input_dim(input)
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias, True,
                                self.momentum, self.eps)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3d(2, 3, kernel_size=3, padding=1)
            self.bn = ContBatchNorm3d(3)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_private_base_subclass_with_its_own_forward(mode, tmp_path):
    code = convert_source(CONT_BN).code
    assert "def construct(self, input)" in code, code
    x = (np.random.default_rng(0).standard_normal((2, 2, 4, 5, 6)) * 2 + 1).astype(np.float32)
    assert_port_matches_in_mode(CONT_BN, code, "Net", [x], tmp_path, "cont_bn", mode, atol=1e-5)


LOSS = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.modules.loss import _Loss


    class SoftDice(_Loss):
        def __init__(self, smooth=1.0, **kwargs):
            super().__init__(**kwargs)
            self.smooth = smooth

        def forward(self, logits, target):
            p = torch.sigmoid(logits)
            inter = (p * target).sum(dim=(2, 3))
            dice = (2 * inter + self.smooth) / (p.sum(dim=(2, 3)) + target.sum(dim=(2, 3)) + self.smooth)
            loss = 1 - dice
            return loss.sum() if self.reduction == "sum" else loss.mean()


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 2, kernel_size=1)
            self.loss = SoftDice(reduction="sum")

        def forward(self, x, target):
            return self.loss(self.conv(x), target)
""")


def test_a_loss_derived_from_torchs_private_loss_base(tmp_path):
    result = convert_source(LOSS)
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    assert "torch" not in result.code.replace("mindport", ""), result.code
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    target = (rng.random((2, 2, 4, 4)) > 0.5).astype(np.float32)
    assert_port_matches_in_mode(LOSS, result.code, "Net", [x, target], tmp_path, "dice", "pynative", atol=1e-5)
