"""Fixes from migrate18's first contact with fresh repositories (issue 29): constructor guesses."""
from __future__ import annotations

from _prove import prove_files


WIDE = '''
import torch.nn as nn
import torch.nn.functional as F


class Wide(nn.Module):
    def __init__(self, depth, num_classes, widen_factor=1):
        super().__init__()
        assert (depth - 4) % 6 == 0, "depth should be 6n+4"
        n = (depth - 4) // 6
        width = 8 * widen_factor
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.body = nn.Sequential(*[nn.Conv2d(width, width, 3, padding=1) for _ in range(3 * n)])
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc(F.relu(self.body(self.stem(x))).mean((2, 3)))


class Deep(nn.Module):
    def __init__(self, depth):
        super().__init__()
        if (depth - 2) % 9 != 0:
            raise ValueError("depth should be 9n+2")
        self.body = nn.Sequential(*[nn.Linear(6, 6) for _ in range((depth - 2) // 9)])

    def forward(self, x):
        return self.body(x)
'''

WIDENED = '''
import torch.nn as nn
import torch.nn.functional as F


class Widened(nn.Module):
    def __init__(self, wfactor, num_classes=10):
        super().__init__()
        width = 64 * wfactor
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.body = nn.Sequential(*[nn.Conv2d(width, width, 3, padding=1) for _ in range(5)])
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc(F.relu(self.body(self.stem(x))).mean((2, 3)))
'''


_prove = prove_files  # tests/discovery/_prove.py


def test_a_depth_required_in_a_residue_class_takes_the_smallest_one(tmp_path):
    """(migrate18) bearpaw/pytorch-classification's WideResNet(depth, num_classes) asserts ``(depth - 4) % 6 == 0``:
    the guessed depth 2 failed every attempt ("depth should be 6n+4"). The smallest depth past the offset: 10."""
    models = _prove(tmp_path, {"wide.py": WIDE}, "wide.py:*")
    wide, deep = models["wide.py:Wide"], models["wide.py:Deep"]
    assert wide["status"] == "proven" and wide["ctor"].startswith("depth=10,"), wide
    assert deep["status"] == "proven" and deep["ctor"] == "depth=11", deep


def test_a_width_multiplier_is_a_few_times_not_a_size(tmp_path):
    """(migrate18) junyuseu/pytorch-cifar-models' Wide_ResNet_Cifar(block, layers, wfactor): wfactor took the size 16
    (no rule named it) and the model had 43.8 M parameters, over the builder's cap: not built. A multiplier's name
    (factor, mult, multiplier, widen..., expansion) gets 2."""
    models = _prove(tmp_path, {"widened.py": WIDENED}, "widened.py:*")
    widened = models["widened.py:Widened"]
    assert widened["status"] == "proven" and widened["ctor"] == "wfactor=2", widened
