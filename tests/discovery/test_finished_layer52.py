"""A dtype error in the model's own code after its last layer returned (hidasib/GRU4Rec_PyTorch_Official's
GRUEmbedding: ``self.Wx0(X)`` embeds the ids, then ``torch.mm(H, self.Wrz0)`` refuses H, guessed ids like X: "expected
m1 and m2 to have the same dtype, but got: long int != float"), met in the session-52 hand-entry comparison. Two
classes: torch.mm's own words for ids given to float weights were not read as such; and the argument a failure is
laid at was that of the last layer ENTERED, though it had returned (the ids of the embedding, made floats next, which
the embedding refused). A failure is now laid at the innermost module still running, none for the model itself.
Fixture of our own; the expected status comes from torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

STATE = '''
import torch
from torch import nn


class Update(nn.Module):
    def __init__(self, n_items, dim):
        super().__init__()
        self.emb = nn.Embedding(n_items, dim)
        self.w = nn.Parameter(torch.randn(dim, dim) * 0.1)

    def forward(self, items, state):
        seen = self.emb(items).mean(dim=1)
        return torch.tanh(seen + torch.mm(state, self.w))
'''


def test_a_state_beside_ids_is_made_floats(tmp_path):
    found = prove_files(tmp_path, {"update.py": STATE}, "update.py:Update")
    entry = found["update.py:Update"]
    assert entry["status"] == "proven", entry
    assert ":int64" in entry["inputs"][0] and entry["inputs"][1].endswith(":float32"), entry
