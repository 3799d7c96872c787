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


EDGECONV = '''
import torch
import torch.nn as nn


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    return (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]


def get_graph_feature(x, k=4):
    batch_size, num_points = x.size(0), x.size(2)
    x = x.view(batch_size, -1, num_points)
    idx = knn(x, k) + torch.arange(0, batch_size).view(-1, 1, 1) * num_points
    _, num_dims, _ = x.size()
    x = x.transpose(2, 1).contiguous()
    feature = x.view(batch_size * num_points, -1)[idx.view(-1), :].view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    return torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()


class EdgeNet(nn.Module):
    def __init__(self, k=4, classes=5):
        super().__init__()
        self.k = k
        self.conv1 = nn.Sequential(nn.Conv2d(6, 16, kernel_size=1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2))
        self.conv2 = nn.Sequential(nn.Conv2d(32, 16, kernel_size=1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x1 = self.conv1(get_graph_feature(x, self.k)).max(dim=-1, keepdim=False)[0]
        x2 = self.conv2(get_graph_feature(x1, self.k)).max(dim=-1, keepdim=False)[0]
        return self.head(torch.cat((x1, x2), dim=1).max(dim=-1)[0])
'''


def test_a_point_cloud_for_an_edge_convolution(tmp_path):
    # Brent-Murray/point-dl's DGCNN (after WangYueFt/dgcnn): the first layer is Conv2d(6, 64, 1) over the k-nearest
    # neighbour features the model builds from B x 3 x N points; the 4-D input the first layer asked for was folded
    # into the points' channels ("expected input[2, 384, 32, 20] to have 6 channels, but got 384"): not built.
    # Retried as B x 3 x N (N the points the convolution met)
    result = prove_files(tmp_path, {"edge.py": EDGECONV}, "edge.py:EdgeNet")["edge.py:EdgeNet"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].startswith("2x3x"), result["inputs"]


def test_torchs_layer_of_the_same_name_is_no_call_of_the_repositorys_class(tmp_path):
    # Brent-Murray/point-dl's dual_model.py: class Bilinear(model_1, model_2) builds torch.nn.Bilinear(1024, 1024,
    # 1024); that call was read as the repository's Bilinear's and tried first ("takes 3 positional arguments but 4
    # were given"). A call through a name the file binds to torch (torch., nn., F.) is torch's own
    from mindport.discovery.scan import discover

    (tmp_path / "dual.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Bilinear(nn.Module):\n"
        "    def __init__(self, width, scale=1.0):\n        super().__init__()\n"
        "        self.bilinear = torch.nn.Bilinear(width, width, width)\n        self.other = nn.Bilinear(4, 4, 4)\n"
        "        self.scale = scale\n\n    def forward(self, a, b):\n        return self.bilinear(a, b) * self.scale\n\n\n"
        "def build():\n    return Bilinear(8, scale=0.5)\n")
    found = {c.name: c for c in discover(tmp_path)}
    assert found["Bilinear"].ctors == ["8, scale=0.5"], found["Bilinear"].ctors


def test_a_time_limit_inside_a_kept_librarys_subpackage_forgets_its_orphans():
    # seorim0/DNN-based-Speech-Enhancement-in-the-frequency-domain on a busy machine: the builder's limit fired inside
    # scipy.signal's first import; its finished submodules stayed in sys.modules (scipy is a library the limit keeps)
    # and every later import of scipy.signal failed ("name '_signal_api' is not defined"): 14 of 15 classes not built.
    # The new modules whose package is gone are forgotten; the others of a kept library stay
    import sys
    import types

    import scipy  # noqa: F401 - kept, imported before the limit as the builder does

    from mindport.discovery.build import _Limited, _Timeout

    orphan, kept = "scipy._mp_half_imported.child", "scipy._mp_whole"
    try:
        try:
            with _Limited(60):
                sys.modules[orphan] = types.ModuleType(orphan)  # its package "scipy._mp_half_imported" failed
                sys.modules[kept] = types.ModuleType(kept)
                raise _Timeout("took over 60 s")
        except _Timeout:
            pass
        assert orphan not in sys.modules and kept in sys.modules
    finally:
        sys.modules.pop(orphan, None)
        sys.modules.pop(kept, None)
