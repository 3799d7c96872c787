"""Fixes from the discovery sweep's tenth pass (issue 29, rows 91 onwards of the manifest): the layer a forward
hands each argument to says that argument's form."""
from __future__ import annotations

from pathlib import Path

HANDED = '''
import torch
import torch.nn as nn


class ConditionalConvBlock(nn.Module):  # the label embedding is registered before the convolutions
    def __init__(self, dim, n_classes=10):
        super().__init__()
        self.label_embedding = nn.Embedding(n_classes, 2 * dim)
        self.vertical = nn.Conv2d(dim, 2 * dim, 3, padding=1)
        self.horizontal = nn.Conv2d(dim, 2 * dim, (1, 3), padding=(0, 1))

    def forward(self, x_v, x_h, y):
        cond = self.label_embedding(y)[:, :, None, None]
        v = self.vertical(x_v) + cond
        h = self.horizontal(x_h) + v
        a, b = h.chunk(2, dim=1)
        return torch.tanh(a) * torch.sigmoid(b)


class LabelledRegressor(nn.Module):  # features through a Sequential, labels through a table
    def __init__(self, n_features, n_labels):
        super().__init__()
        self.table = nn.Embedding(n_labels, 8)
        self.body = nn.Sequential(nn.Linear(n_features, 8), nn.ReLU())

    def forward(self, feats, labels):
        return self.body(feats) * self.table(labels)
'''


def _candidate(root: Path, name: str) -> dict:
    from mindport.discovery.scan import discover

    cand = next(c for c in discover(root) if c.name == name)
    return cand.to_json() | {"rel": cand.rel, "name": cand.name}


def test_each_argument_takes_the_form_of_the_layer_it_is_handed_to(tmp_path):
    """ritheshkumar95/pytorch-vqvae's ``GatedMaskedConv2d.forward(x_v, x_h, h)`` registers the class embedding that
    takes ``h`` before the convolutions that take ``x_v`` and ``x_h``: every input was integer tokens for the
    embedding ("Input type (long int) and bias type (float) should be the same"). scan records the attribute of the
    first ``self.X(arg)`` call of each argument; the builder forms each argument for that layer (the convolutions'
    channels, one label per sample for the table); proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "blocks.py").write_text(HANDED)
    cand = _candidate(src, "ConditionalConvBlock")
    assert [p["layer"] for p in cand["forward"]] == ["vertical", "horizontal", "label_embedding"], cand["forward"]
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="blocks.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    block = by_name["blocks.py:ConditionalConvBlock"]
    assert block["status"] == "proven", block
    assert block["inputs"][0].split(":")[1] == "float32" and block["inputs"][2].startswith("2:int64"), block["inputs"]
    regressor = by_name["blocks.py:LabelledRegressor"]
    assert regressor["status"] == "proven", regressor
    assert regressor["inputs"][0].endswith(":float32") and ":int64:" in regressor["inputs"][1], regressor["inputs"]
