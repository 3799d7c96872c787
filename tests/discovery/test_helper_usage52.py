"""A constructor argument handed to a function of the model's module (PointNet++'s ``self.mlp =
build_shared_mlp(mlp, bn=bn)``, which reads ``len(mlp_spec)`` and ``mlp_spec[i]``: PCT_Pytorch's PointnetFPModule,
batch 21, guessed ``mlp=16``, "object of type 'int' has no len()"). The class: what a module-level helper the
constructor calls does with the argument (iterates, measures, indexes it; tests it as a switch) is the use the class
makes of it, as for a method of the class it hands it to. Fixtures of our own; the expected status comes from torch
and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

HELPER = '''
import torch
from torch import nn


def build_mlp(spec, act=True):
    layers = []
    for i in range(1, len(spec)):
        layers.append(nn.Linear(spec[i - 1], spec[i]))
        if act:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class Head(nn.Module):
    def __init__(self, mlp, gain):
        super().__init__()
        self.mlp = build_mlp(mlp)
        self.gain = gain

    def forward(self, x):
        return self.mlp(x) * self.gain
'''


def test_an_argument_a_module_helper_measures_is_a_list(tmp_path):
    from mindport.discovery.scan import discover

    found = prove_files(tmp_path, {"head.py": HELPER}, "head.py:*")
    entry = found["head.py:Head"]
    assert entry["status"] == "proven", entry
    cand = {c.key: c for c in discover(tmp_path / "src")}["head.py:Head"]
    uses = {p.name: p.use for p in cand.params}
    assert uses["mlp"] == "sequence", uses
