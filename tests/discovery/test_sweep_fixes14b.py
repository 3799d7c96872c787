"""Fixes from the discovery sweep's rows 188-230 (issue 29, legacy14b): a package the repository vendors in a
sub-folder (a ``setup.py`` package, not on the root's path) that a model file imported first as a stub."""
from __future__ import annotations

VENDORED = {
    # the root's model imports the vendored package as if it were installed: a stand-in with --stub-missing
    "model.py": '''
import torch
import torch.nn as nn
from pointops.modules import SharedMLP  # only the vendored package's setup.py would make this importable


class Head(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    def forward(self, x):
        return torch.log_softmax(self.fc(x), dim=-1)
''',
    "pointops_lib/setup.py": "# builds pointops (a C++/CUDA extension and these modules)\n",
    "pointops_lib/pointops/__init__.py": "",
    "pointops_lib/pointops/modules.py": '''
import torch
import torch.nn as nn


class SharedMLP(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, hidden, 1)
        self.conv2 = nn.Conv1d(hidden, channels, 1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(x)))
''',
}


def test_a_vendored_package_stubbed_by_an_earlier_model_is_imported_from_its_own_files(tmp_path):
    """Strawberry-Eat-Mango/PCT_Pytorch and ma-xu/pointMLP-pytorch vendor ``pointnet2_ops_lib/pointnet2_ops/``; their
    root ``model.py`` imports ``pointnet2_ops`` (installed by the lib's setup.py), so with --stub-missing the builder
    held a stand-in under that name, and the vendored package's own models were "not built: the module name
    pointnet2_ops.pointnet2_modules is already taken in this process by a built-in module" (3 models in two
    repositories). A stand-in is not the module: it is forgotten and the package imported from its files. Both
    models are built, converted and proven against torch."""
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in VENDORED.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="*", cache=False, settings=ProveSettings(stub_missing=True))
    status = {m["class"]: (m["status"], m.get("error") or m.get("reason")) for m in models}
    assert status["model.py:Head"][0] == "proven", status
    assert status["pointops_lib/pointops/modules.py:SharedMLP"][0] == "proven", status
