"""Sizes handed to a torch 1.x type constructor inside ``nn.Parameter`` (``Parameter(torch.FloatTensor(in_features,
out_features))``, ``Parameter(torch.FloatTensor(out_features))``: meliketoy/graph-cnn.pytorch's GraphConvolution, a
trials entry whose GCN `migrate` did not build in the session-52 hand-entry comparison: every size was guessed a
table, ``table(16, 16)``). The class: session 51 read the argument of ``FloatTensor``/``Tensor`` inside
``nn.Parameter`` as the data a weight is made of; those legacy constructors take sizes there, and are read as data
only inside ``from_pretrained`` with one argument. ``torch.tensor``/``as_tensor``/``from_numpy`` stay data (the
ABSA case, test_pretrained_table51). Fixture of our own; the expected status comes from torch and MindSpore run by
the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

LEGACY = '''
import torch
from torch import nn
from torch.nn.parameter import Parameter


class Mix(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = Parameter(torch.FloatTensor(n_in, n_out))
        self.bias = Parameter(torch.FloatTensor(n_out))
        nn.init.xavier_uniform_(self.weight)
        nn.init.constant_(self.bias, 0.1)

    def forward(self, x):
        return torch.tanh(torch.mm(x, self.weight) + self.bias)


class Stack(nn.Module):
    def __init__(self, n_feat, n_hidden, n_class):
        super().__init__()
        self.first = Mix(n_feat, n_hidden)
        self.second = Mix(n_hidden, n_class)

    def forward(self, x):
        return self.second(self.first(x))
'''


def test_sizes_of_a_legacy_constructor_inside_parameter_are_numbers(tmp_path):
    found = prove_files(tmp_path, {"stack.py": LEGACY}, "stack.py:*")
    for key in ("stack.py:Mix", "stack.py:Stack"):
        entry = found[key]
        assert "table(" not in (entry["ctor"] or ""), entry
        assert entry["status"] == "proven", entry
