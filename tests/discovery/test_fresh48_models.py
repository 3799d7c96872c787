"""Causes of discovery batch 18's first contact (disc48, /work/notes/disc48-findings.md), each a fixture of our own:
the expected statuses come from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# alipay/Pyraformer's Layers.py: a name torch removed, imported at the top and never used; every class of the file
# and of the files importing it stopped at import in the torch reference ("cannot import name 'align_tensors' from
# 'torch.functional'", 13 of 15 tried)
REMOVED_TORCH_NAME = '''
import torch
import torch.nn as nn
from torch.functional import align_tensors


class Block(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.fc(x))
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh48"), {"layers.py": REMOVED_TORCH_NAME}, "*")


def test_a_name_torch_removed_imported_unused_gets_a_stand_in(proven):
    model = proven["layers.py:Block"]
    assert model["status"] == "proven", model
