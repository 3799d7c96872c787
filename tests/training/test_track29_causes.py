"""Session track29 (issue 27): the causes met re-running the training corpus' failing entries (/work/notes/track29.md).
One test each, on real torch and real MindSpore; the expected values are torch's, run here."""
from __future__ import annotations

import subprocess
import sys

from _harness import ROOT, child_env
from test_fresh_causes import _convert

BOOT = ROOT / "benchmarks" / "training" / "boot.py"


def _track(tmp_path, source: str, prefix: str) -> dict:
    """Run ``source`` (torch) and its conversion through boot.py's track mode (same data and initial weights) and
    return each side's printed lines starting with ``prefix``."""
    printed = {}
    for side, text in (("torch", source), ("mindspore", _convert(source))):
        script = tmp_path / f"{side}_side.py"  # not torch.py: the script's folder is on sys.path
        script.write_text(text)
        p = subprocess.run([sys.executable, str(BOOT), side, "track", str(tmp_path), str(script)],
                           capture_output=True, text=True, cwd=tmp_path, env=child_env(), timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        printed[side] = [line for line in p.stdout.splitlines() if line.startswith(prefix)]
    return printed


# The harness did not share dropout masks: in track mode each side drew its own generator for nn.Dropout /
# Dropout2d / F.dropout, so a deterministic entry training with dropout parted at its first loss
# (ethan/angular_softmax_resnet: a ResNet whose blocks hold nn.Dropout2d(p=.2, inplace=True), first loss 58.72 torch
# vs 53.20 port). Now both draw each mask from the shared stream (boot._dropout_mask). The slice kept: the three
# forms the corpus trains with (an element Dropout layer, an in-place Dropout2d layer, the functional dropout under
# self.training), 4 SGD steps, an eval pass, and the next shared draw (the stream's history is the same on both
# sides). Without the fix the losses are 1.8e-2 apart.
DROPOUT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.drop2d = nn.Dropout2d(p=0.2, inplace=True)
        self.fc1 = nn.Linear(6 * 8 * 8, 16)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        x = F.relu(self.drop2d(self.conv(x)))
        x = self.drop(F.relu(self.fc1(x.flatten(1))))
        x = F.dropout(x, 0.25, self.training)
        return self.fc2(x)


x = torch.randn(8, 3, 8, 8)
y = torch.randint(0, 4, (8,))
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("loss %.7f" % loss.item())
model.eval()
with torch.no_grad():
    print("loss %.7f" % F.cross_entropy(model(x), y).item())
print("draws", torch.rand(3).tolist())
'''


def test_the_harness_gives_both_sides_the_same_dropout_masks(tmp_path):
    printed = _track(tmp_path, DROPOUT, ("loss", "draws"))
    t = [float(line.split()[1]) for line in printed["torch"] if line.startswith("loss")]
    m = [float(line.split()[1]) for line in printed["mindspore"] if line.startswith("loss")]
    assert len(t) == len(m) == 5
    assert all(abs(a - b) <= 1e-5 * abs(a) for a, b in zip(t, m)), (t, m)
    assert printed["torch"][-1] == printed["mindspore"][-1]
