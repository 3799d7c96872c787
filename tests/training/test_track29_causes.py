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


# A ModuleList filled in __init__ is built in a local and assigned after its last add (native_facts.hoisted_list:
# MindSpore names the members as torch does then), which moved its place among the Cell's children: charles214chen/
# DDPM's UNet assigns ``self.downs`` and ``self.ups`` empty, fills them around ``self.mid``, and MindSpore listed
# downs, mid, ups where torch lists downs, ups, mid (the harness refused: "parameter model.mid.0.norm_1.gamma is
# (8,) in MindSpore, (16,) in torch"; anything reading parameters() in order, parameters_to_vector, an optimizer
# built from a slice of them, saw other tensors, silently). Now the list is also assigned where torch assigns it.
# The slice kept: two filled lists around a third attribute, 2 SGD steps from torch's weights (loaded by the harness
# in parameters() order), then parameters_to_vector's values.
ORDER = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n=2):
        super().__init__()
        self.first = nn.Linear(2, 3)
        self.downs = nn.ModuleList()
        self.ups = nn.ModuleList()
        for i in range(n):
            self.downs.append(nn.Linear(3, 3))
        self.mid = nn.ModuleList([nn.Linear(3, 5)])
        for i in range(n):
            self.ups.append(nn.Linear(5, 5))
        self.out = nn.Linear(5, 1)

    def forward(self, x):
        x = self.first(x)
        for layer in self.downs:
            x = torch.tanh(layer(x))
        for layer in self.mid:
            x = torch.tanh(layer(x))
        for layer in self.ups:
            x = torch.tanh(layer(x))
        return self.out(x)


x = torch.randn(16, 2)
y = torch.randn(16, 1)
model = Net()
print("names", [n for n, _ in model.named_parameters()])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("loss %.7f" % loss.item())
print("vector", " ".join("%.6f" % v for v in torch.nn.utils.parameters_to_vector(model.parameters()).tolist()))
'''


def test_a_list_filled_in_init_keeps_torchs_place_among_the_parameters(tmp_path):
    printed = _track(tmp_path, ORDER, ("names", "loss", "vector"))
    t, m = printed["torch"], printed["mindspore"]
    assert len(t) == len(m) == 4, printed
    assert t[0] == m[0], printed  # the same names in the same order
    for a, b in zip(t[1:3], m[1:3]):
        assert abs(float(a.split()[1]) - float(b.split()[1])) <= 1e-5 * abs(float(a.split()[1])), printed
    tv = [float(v) for v in t[3].split()[1:]]
    mv = [float(v) for v in m[3].split()[1:]]
    assert len(tv) == len(mv) and all(abs(a - b) <= 1e-5 for a, b in zip(tv, mv)), printed


def test_an_entry_declared_chaotic_is_judged_on_runs_and_learns_and_reported_apart():
    """zhihanyang/wgan_gp_1d and jimmy/realnvp_moons: torch's own float32 run, one ulp from its initial weights,
    ends >= 1e-2 away (the harness's nudge control, measured on each): no implementation tracks them step for step.
    Their recipes say so (``chaotic``: the measurement); they still run with the shared data and weights, their
    max_rel is reported, and they are not counted among the tracking entries (the totals line names them)."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "training"))
    import run

    entry = {"deterministic": True, "chaotic": "torch one ulp away ends 7.0e-2 away"}
    res = run.judge_losses(entry, ["3.0000", "2.0000", "1.0000"], ["3.0000", "2.1000", "1.2000"], 0)
    assert res["runs"] and res["learns"] and "tracks" not in res and res["tracks_declared_chaotic"] is False
    assert abs(res["max_rel"] - 0.2) < 1e-9
    res.update(id="x", repo="r", status="ok")
    assert "0/0 deterministic track" in run.summary([res]) and "1 declared chaotic" in run.summary([res])
    plain = run.judge_losses({"deterministic": True}, ["3.0000", "2.0000"], ["3.0000", "2.1000"], 0)
    assert plain["tracks"] is False
