"""A required constructor argument the class only hands on to another class of the project, whose parameter has a
string default it tests (meliketoy/graph-cnn.pytorch's GCN(nfeat, nhid, nclass, dropout, init) builds
GraphConvolution(..., init=init), whose ``init='xavier'`` picks 'uniform' / 'xavier' / 'kaiming', else raises
NotImplementedError): a trials entry `migrate` did not build in the session-52 hand-entry comparison (init=16). The
class: such an argument takes the string default of the parameter it is handed to. Fixture of our own; the expected
status comes from torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

HANDED = '''
import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, n_in, n_out, scheme="normal"):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)
        if scheme == "normal":
            nn.init.normal_(self.lin.weight, std=0.2)
        elif scheme == "flat":
            nn.init.constant_(self.lin.weight, 0.01)
        else:
            raise NotImplementedError(scheme)

    def forward(self, x):
        return torch.tanh(self.lin(x))


class Pair(nn.Module):
    def __init__(self, n_in, n_hidden, scheme):
        super().__init__()
        self.first = Mixer(n_in, n_hidden, scheme=scheme)
        self.second = Mixer(n_hidden, n_in, scheme=scheme)

    def forward(self, x):
        return self.second(self.first(x))
'''


def test_a_string_handed_on_takes_the_default_it_meets(tmp_path):
    found = prove_files(tmp_path, {"pair.py": HANDED}, "pair.py:Pair")
    entry = found["pair.py:Pair"]
    assert "scheme='normal'" in (entry["ctor"] or "") or "scheme=\"normal\"" in (entry["ctor"] or ""), entry
    assert entry["status"] == "proven", entry
