"""First contact, batch 12 (session 42): classes of failure met on repositories no corpus of ours named, each as a
fixture of our own proven by ``prove_models`` with real torch and real MindSpore (PyNative and GRAPH_MODE)."""
from __future__ import annotations

from tests.discovery._prove import prove_files

FIELDS = '''
import numpy as np
import torch
from torch import nn


class FieldEmbedding(nn.Module):
    """One id column per field, shifted by the field's offset into one shared table."""

    def __init__(self, field_dims, embed_dim=4):
        super().__init__()
        self.table = nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

    def forward(self, x):
        x = x + x.new_tensor(self.offsets).unsqueeze(0)
        return self.table(x).sum(dim=1)


def build():
    return FieldEmbedding([3, 5, 7], embed_dim=4)
'''


def test_ids_one_column_per_field_shifted_into_one_table(tmp_path):
    # ChenYang-1996/pytorch_CTR (torchfm's FeaturesLinear, FeaturesEmbedding, FieldAwareFactorizationMachine): ids of
    # (batch, num_fields) against the offsets ("tensor a (16) must match the size of tensor b (3) at non-singleton
    # dimension 1"), then the last fields' ids drawn up to the table's size land past its end ("index out of range in
    # self"): the field count is taken from the message for an integer input too, the ids from a quarter of the range
    result = prove_files(tmp_path, {"fields.py": FIELDS}, None)["fields.py:FieldEmbedding"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].startswith("2x3:int64"), result["inputs"]
