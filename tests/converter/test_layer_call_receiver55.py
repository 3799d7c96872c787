"""A torch layer built and called at once (``nn.Flatten(1)(x)``, ``nn.MaxPool1d(n)(x)``) gives a tensor: in a file that
imports numpy, a method numpy shares (``.repeat``, ``.transpose``) on its output was left as written, numpy's
spelling for an unknown receiver (nikitakaraevv/pointnet's segmentation Transform, ``nn.Flatten(1)(xb).repeat(n_pts,
1, 1)``: "'repeat' is not supported on this device" in MindSpore, 2 models failed). Converted and run on both sides."""
from __future__ import annotations

from tests.discovery._prove import prove_files

SOURCE = '''
import numpy as np
import torch
import torch.nn as nn


class Spread(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 8, 1)

    def forward(self, x):
        n_pts = x.size()[2]
        xb = self.conv(x)
        xb = nn.MaxPool1d(xb.size(-1))(xb)
        return nn.Flatten(1)(xb).repeat(n_pts, 1, 1).transpose(0, 2).transpose(0, 1)
'''


def test_the_method_of_a_layer_built_and_called_is_the_tensors(tmp_path):
    from mindport.migrator import convert_source

    code = convert_source(SOURCE, "m.py").code
    assert ".tile((n_pts, 1, 1))" in code and ".repeat(" not in code, code


def test_it_runs_and_matches_torch(tmp_path):
    model = prove_files(tmp_path, {"m.py": SOURCE}, None)["m.py:Spread"]
    assert model["status"] == "proven", model
