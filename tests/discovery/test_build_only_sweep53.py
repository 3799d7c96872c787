"""The discovery sweep's ``--build-only`` (agg53, issue 29's built figure): discovery and the torch builder of
``prove_models`` (``build_only=True``: no conversion, no MindSpore), per repository discovered / tried / built and
the not-built failure classes, on a small repository of our own exported from a git snapshot as the sweep reads
the manifest's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.discovery.test_sweep_fixes4 import _sweep

MODELS = '''
import torch
import torch.nn as nn


class Base(nn.Module):  # abstract: no forward computes anything (left out, never tried)
    def forward(self, x):
        raise NotImplementedError


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class Conv(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class NeedsFile(nn.Module):  # its constructor reads a file the repository does not hold
    def __init__(self):
        super().__init__()
        with open("weights/table.txt") as f:
            self.n = int(f.read())
        self.fc = nn.Linear(self.n, 2)

    def forward(self, x):
        return self.fc(x)


class CudaOnly(nn.Module):  # builds; no input runs its forward on this machine: not built
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        if not x.is_cuda:
            raise RuntimeError("this layer runs on a GPU only")
        return self.fc(x)
'''


def test_build_only_counts_discovered_tried_built_and_classes(tmp_path, monkeypatch):
    repo = tmp_path / "mirror" / "fixture+tiny" / "repo"
    src = tmp_path / "tree"
    src.mkdir()
    (src / "models.py").write_text(MODELS)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(src)]
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "fixture"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(repo)], check=True)
    manifest = tmp_path / "manifest.txt"
    manifest.write_text("fixture/tiny vision\nfixture/absent vision\n")

    sweep = _sweep()
    out = tmp_path / "run.json"
    code = (f"import sys; sys.argv = {['sweep', '--manifest', str(manifest), '--build-only', '--max-models', '15', '--work', str(tmp_path / 'work'), '--json', str(out)]!r}\n"
            f"import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('sweep', {sweep.__file__!r})\n"
            f"m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"m.MIRROR = __import__('pathlib').Path({str(tmp_path / 'mirror')!r})\n"
            f"sys.exit(m.main())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["not_fetched"] == ["fixture/absent"]
    (row,) = data["repositories"]
    assert row["build_only"] and "convert_seconds" not in row
    s = row["summary"]
    # five classes, the abstract Base left out: four discovered and tried, Mlp and Conv built
    assert (s["discovered"], s["excluded"], s["selected"], s["built"], s["not_built"], s["proven"]) == (4, 1, 4, 2, 2, 0)
    status = {m["class"]: m["status"] for m in row["models"]}
    assert status == {"models.py:Mlp": "built", "models.py:Conv": "built", "models.py:NeedsFile": "not-built",
                      "models.py:CudaOnly": "not-built"}, status
    t = data["totals"]
    assert t["build_only"] and (t["discovered"], t["selected"], t["built"]) == (4, 4, 2)
    assert t["failure_classes"] == {"needs a file (config, weights, data)": 1,
                                    "inputs: the forward raised (other)": 1}, t["failure_classes"]
    assert "build only" in proc.stdout and "2 built (50.0 % of discovered, 50.0 % of tried)" in proc.stdout, proc.stdout
