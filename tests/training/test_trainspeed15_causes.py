"""Session trainspeed15 (issue 27): speed of converted training loops, by family (benchmarks/training/speed.py has
the timings; no test here is timed), and the learn check of the training corpus. Real torch, real MindSpore."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from test_fresh_causes import _convert

# a training loop the rule rewrites into MindSpore's own step (ms.value_and_grad built once, a native optimizer):
# its converted file imports runtime modules (the loss) but not mindport.runtime.training
_NATIVE_STEP = '''
import torch
import torch.nn as nn


def train(x, y, w1, w2, steps):
    model = nn.Sequential(nn.Linear(2, 6), nn.Sigmoid(), nn.Linear(6, 1), nn.Sigmoid())
    model.load_state_dict({"0.weight": torch.tensor(w1), "0.bias": torch.zeros(6),
                           "2.weight": torch.tensor(w2), "2.bias": torch.zeros(1)})
    criterion = nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1)
    X, Y = torch.tensor(x), torch.tensor(y)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        cost = criterion(model(X), Y)
        cost.backward()
        optimizer.step()
        losses.append(cost.item())
    return losses
'''

_FRESH = r'''
import json, sys, types
import numpy as np
module = types.ModuleType("ms_step")
from mindspore._c_expression import RuntimeConf
exec(compile(open(sys.argv[1]).read(), "ms_step", "exec"), module.__dict__)  # the imports; nothing run yet
blocking = RuntimeConf.get_instance().is_launch_blocking()
data = np.load(sys.argv[2])
losses = module.train(*(data[k] for k in ("x", "y", "w1", "w2")), steps=20)
print(json.dumps({"blocking": blocking, "losses": [float(v) for v in losses]}))
'''


def test_a_native_step_loop_launches_synchronously_on_the_cpu(tmp_path):
    # Only mindport.runtime.training turned on launch_blocking (at its import), and a loop the rule writes as
    # MindSpore's own step never imports it: eyebrow/xor_deep, wkd/xor_nn, north/sin_lstm ran with MindSpore's
    # asynchronous launch (speed.py: see the session note). Now any runtime module's import sets it. A fresh process:
    # on right after the converted file's imports, and the losses are torch's.
    code = _convert(_NATIVE_STEP)
    assert "ms.value_and_grad" in code and "runtime import training" not in code, code
    rng = np.random.default_rng(0)
    data = {"x": np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32),
            "y": np.array([[0], [1], [1], [0]], np.float32),
            "w1": rng.standard_normal((6, 2)).astype(np.float32), "w2": rng.standard_normal((1, 6)).astype(np.float32)}
    np.savez(tmp_path / "data.npz", **data)
    (tmp_path / "ms_step.py").write_text(code)
    (tmp_path / "fresh.py").write_text(_FRESH)
    p = subprocess.run([sys.executable, str(tmp_path / "fresh.py"), str(tmp_path / "ms_step.py"),
                        str(tmp_path / "data.npz")], capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["blocking"] is True
    scope: dict = {}
    exec(compile(_NATIVE_STEP, "torch_step", "exec"), scope)  # noqa: S102 - the test's own script
    t_losses = scope["train"](*(data[k] for k in ("x", "y", "w1", "w2")), steps=20)
    rel = np.abs(np.array(t_losses) - np.array(out["losses"])) / np.abs(np.array(t_losses))
    assert t_losses[-1] < t_losses[0] and rel.max() < 1e-5, (t_losses, out["losses"])


# --- the corpus harness (benchmarks/training/boot.py) ------------------------------------------------------------
SEEDED_LOADER = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
g = torch.Generator()
g.manual_seed(2025)
data = TensorDataset(torch.arange(12.0).view(12, 1), torch.arange(12.0))
loader = DataLoader(data, batch_size=4, shuffle=True, generator=g)
order = []
for _ in range(2):
    for x, y in loader:
        order += [int(v) for v in y.tolist()]
print(order)
'''


def test_the_tracker_gives_a_loader_with_its_own_generator_the_same_order_on_both_sides(tmp_path):
    """joyful/vanilla_kd (seeded torch.Generator for its shuffled DataLoaders): run as a deterministic entry, its
    first losses differed by 3e-3 from the same weights: torch's RandomSampler draws torch.randperm(n, generator=g),
    which the tracker shares, while mindport's sampler drew the converted generator's own stream. Both now draw the
    tracker's stream."""
    from test_fresh_causes import _run_boot

    t = _run_boot(tmp_path, "torch", "track", SEEDED_LOADER)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(SEEDED_LOADER))
    assert t == m and sorted(eval(t)[:12]) == list(range(12)) and eval(t)[:12] != list(range(12)), (t, m)
