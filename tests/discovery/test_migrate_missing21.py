"""`mindport migrate REPO` without model settings on a repository whose model files import a module this machine
lacks (issue 29, migrate21; first contact on four fresh repositories: 18 of 20 models not built, every one for a
top-level ``import tqdm`` / ``sklearn`` / ``h5py`` / ``torch_sparse`` their models never run). The discovery sweep
stubs such modules (--stub-missing); migrate did not, so the command the user runs built nothing of those files.
Fixture package written for this test; real torch and MindSpore (migrate's own proof)."""
from __future__ import annotations

import json

FILES = {
    "nets/blocks.py": '''import torch
import torch.nn as nn
from mp21_absent_progress import tqdm          # a progress bar: used by the helper below, never by a model
import mp21_absent_graphs as graphs            # a sparse library the repository's data loader uses


def fit(model, batches):
    for x in tqdm(batches):
        model(x).sum().backward()


def load_graph(path):
    return graphs.read(path)


class Mixer(nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.out = nn.Linear(hidden, features)

    def forward(self, x):
        return self.out(torch.tanh(self.inp(x))) + x
''',
    "nets/heads.py": '''import torch.nn as nn
import torch.nn.functional as F
import mp21_absent_graphs as graphs
from nets.blocks import Mixer


class Head(nn.Module):
    """Two mixers and a classifier: imports a file with the missing modules."""

    def __init__(self, features: int, classes: int):
        super().__init__()
        self.mix = nn.Sequential(Mixer(features, 2 * features), Mixer(features, 2 * features))
        self.cls = nn.Linear(features, classes)

    def forward(self, x):
        return F.log_softmax(self.cls(self.mix(x)), dim=-1)


class SparseHead(nn.Module):
    """Really uses the missing module in its forward: must never be proven."""

    def __init__(self, features: int):
        super().__init__()
        self.lin = nn.Linear(features, features)

    def forward(self, x):
        return self.lin(graphs.spmm(x, x)) * 2
''',
    "nets/__init__.py": "",
}


def test_a_missing_module_a_model_never_runs_leaves_it_provable(tmp_path):
    from mindport.migrate import migrate

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    report = migrate(src, out, export=False)
    models = {m["class"].split(":")[1]: m for m in report.models}
    assert set(models) >= {"Mixer", "Head", "SparseHead"}, models
    for name in ("Mixer", "Head"):
        m = models[name]
        assert m["status"] == "proven", (name, m)
        # the entry names what was a stand-in: a proof never hides that the model file imported something absent
        assert any("mp21_absent" in s for s in m.get("stubbed", ())), (name, m)
    # the model that uses the absent module is not proven (the stand-in is no implementation)
    assert models["SparseHead"]["status"] != "proven", models["SparseHead"]
    saved = json.loads((out / "mindport-report.json").read_text())
    saved_models = saved["models"] if isinstance(saved["models"], list) else saved["models"]["models"]
    assert {m["class"].split(":")[1]: m["status"] for m in saved_models}["Head"] == "proven"


def test_no_stub_missing_keeps_the_import_error(tmp_path):
    from mindport.migrate import migrate

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    report = migrate(src, out, export=False, models="*blocks.py:Mixer", stub_missing=False)
    (m,) = report.models
    assert m["status"] == "not-built" and "mp21_absent" in m["reason"], m
