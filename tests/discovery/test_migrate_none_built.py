"""`mindport migrate REPO` whose every discovered model fails to build does not say "migration OK" (fresh28's first
contact: DeepFM's only model was not built - its config dict came from data - and migrate printed "migration OK:
everything converted" and exited 0, so a CI job trusting the exit code took an unproven port as proven). Nothing
proven is no proof: the run is partial (exit 1) and says which model was not built, why, and where to give its
arguments. A repository with a model proven beside one not built stays as before (test_discovery's proofs).
Fixture written for this test; the real builder process (torch)."""
from __future__ import annotations

import subprocess
import sys

NET = '''import torch.nn as nn


class Net(nn.Module):
    def __init__(self, table):
        super().__init__()
        if not isinstance(table, dict):
            raise TypeError("Net needs the column table the data loader builds")
        self.fc = nn.Linear(len(table), 2)

    def forward(self, x):
        return self.fc(x)
'''


def test_migrate_with_no_model_built_is_partial(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "net.py").write_text(NET)
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(src), "-o", str(out), "--no-export"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "migration OK" not in run.stdout
    assert "none of the 1 model(s) tried was built (first: net.py:Net" in run.stdout.replace("\n", " ")
    assert "column table" in run.stdout
