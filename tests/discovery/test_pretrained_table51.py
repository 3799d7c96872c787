"""A constructor argument a layer's weight is made of through a tensor maker (``nn.Embedding.from_pretrained(
torch.tensor(embedding_matrix, dtype=torch.float))``: songyouwei/ABSA-PyTorch's models, a trials entry whose class
`migrate` did not build in the session-51 hand-entry comparison: the matrix was guessed as the number 16,
"Embeddings parameter is expected to be 2-dimensional"). The class: the argument of ``torch.tensor``/``as_tensor``/
``from_numpy``/``FloatTensor`` handed to ``from_pretrained`` or ``nn.Parameter`` is a table. Fixture of our own; the
expected status comes from torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

PRETRAINED = '''
import torch
from torch import nn


class Pooled(nn.Module):
    def __init__(self, embedding_matrix, classes=3):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(torch.tensor(embedding_matrix, dtype=torch.float))
        self.classes = classes

    def forward(self, tokens):
        return torch.tanh(self.embed(tokens).mean(dim=1))[:, :self.classes]
'''


def test_a_matrix_made_a_tensor_for_a_pretrained_table_is_a_table(tmp_path):
    found = prove_files(tmp_path, {"pooled.py": PRETRAINED}, "pooled.py:*")
    entry = found["pooled.py:Pooled"]
    assert "table(" in entry["ctor"], entry
    assert entry["status"] == "proven", entry
