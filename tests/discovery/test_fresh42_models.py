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


NAMESPACE = {
    # a folder without __init__.py (a namespace package) holding a package whose file is named like it
    "model/SAKT/__init__.py": "",
    "model/SAKT/embedding.py": '''
        import torch
        from torch import nn


        class Embedding(nn.Module):
            def __init__(self, n, d):
                super().__init__()
                self.x_emb = nn.Linear(n, d, bias=False)
                self.pos_emb = nn.Embedding(8, d)

            def forward(self, y):
                p = torch.arange(y.shape[1]).unsqueeze(0).expand(y.shape[0], -1)
                return self.x_emb(y) + self.pos_emb(p)
    ''',
    "model/SAKT/model.py": '''
        from torch import nn

        from model.SAKT.embedding import Embedding


        class SAKTModel(nn.Module):
            def __init__(self, n=6, d=16):
                super().__init__()
                self.embedding = Embedding(n, d)
                self.w = nn.Linear(d, n)

            def forward(self, y):
                return self.w(self.embedding(y)).sigmoid()
    ''',
}


def test_a_file_named_like_the_namespace_package_it_imports_from(tmp_path):
    # jarviszhb/KnowledgeTracing's model/SAKT/model.py does ``from model.SAKT.attention import Encoder``, ``model``
    # a folder without __init__.py: with model/SAKT on sys.path (sibling imports), ``model`` was model.py itself
    # (a regular module anywhere on sys.path wins over a namespace package), the import a stand-in, nothing built
    result = prove_files(tmp_path, NAMESPACE, "model/SAKT/model.py:SAKTModel")["model/SAKT/model.py:SAKTModel"]
    assert result["status"] == "proven", result
    assert not result.get("stubbed"), result


def test_migrate_run_from_inside_the_repository(tmp_path, monkeypatch):
    # ``cd repo && mindport migrate . -o ../out``: the side processes started with the repository as their working
    # folder, which ``python -m`` puts first on sys.path; the MindSpore side's namespace package ``model`` then began
    # with the torch tree's folder, the port's Embedding was torch's ("torch tensors unmatched: embedding.x_emb...")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    result = prove_files(tmp_path, NAMESPACE, "model/SAKT/model.py:SAKTModel")["model/SAKT/model.py:SAKTModel"]
    assert result["status"] == "proven", result


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c} for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


CONFIGURED = _notebook(
    "import torch\nimport torch.nn as nn",
    "# configuration\nwidths = [16, 32]\nkinds = {'act': 'tanh'}\nwidth = widths[0]\nact = kinds['act']",
    "class Head(nn.Module):\n    def __init__(self, d=width, act=act):\n        super().__init__()\n"
    "        self.fc = nn.Linear(d, 4)\n        self.act = act\n\n    def forward(self, x):\n"
    "        return torch.tanh(self.fc(x)) if self.act == 'tanh' else self.fc(x)",
    "train_data = torch.load('missing.pt')\nfirst = train_data[0]",
)


def test_a_notebook_constant_read_from_an_item_of_another(tmp_path):
    # seorim0/DNN-based-Speech-Enhancement-in-the-frequency-domain's SE_tutorials.ipynb: ``window = window_type[0]``
    # in its configuration cell, ``win_type=window`` a default of its classes; the subscript was left out of the
    # definitions-only module ("name 'window' is not defined"), 6 classes not built. Items of kept constants are
    # kept; a subscript of anything else (data: ``train_data[0]``) still is not
    from mindport.discovery.notebooks import definitions_source

    source = definitions_source(CONFIGURED.encode(), "nb.ipynb")
    assert "width = widths[0]" in source and "act = kinds['act']" in source and "first =" not in source, source
    result = prove_files(tmp_path, {"nb.ipynb": CONFIGURED}, None)["nb.ipynb:Head"]
    assert result["status"] == "proven", result
