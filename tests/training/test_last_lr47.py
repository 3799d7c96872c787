"""``scheduler.get_last_lr()``: torch's list of Python floats. MindSpore's schedulers keep 0-d Tensors, so a port
printed ``[Tensor(shape=[], dtype=Float32, value= 0.1)]`` where torch prints ``[0.1]`` and ``json.dump`` of a log
holding it raised (TypeError: Object of type Tensor is not JSON serializable). On a scheduler of the file (or a
receiver named like one) the call is ``mp_optim.get_last_lr(sched)``: Python floats, each the shortest decimal of its
float32 value (torch's 0.1, 0.05 ...)."""
from __future__ import annotations

import json

from test_fresh46_causes import _convert_and_run

SCRIPT = '''
import json

import torch

model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
log = []
for epoch in range(4):
    opt.step()
    sched.step()
    log.append({"epoch": epoch, "lr": sched.get_last_lr()})
    print("step", sched.get_last_lr()[0])
print("json", json.dumps(log))
print("list", sched.get_last_lr())
'''


def test_get_last_lr_gives_torchs_python_floats(tmp_path):

    t, m, code = _convert_and_run(tmp_path, SCRIPT)
    assert "mp_optim.get_last_lr(sched)" in code, code
    assert m == t == [[0.1], [0.05], [0.05], [0.025]], (t, m)
    out = {}
    for side in ("src", "out"):
        import os
        import subprocess
        import sys

        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
        done = subprocess.run([sys.executable, "main.py"], cwd=tmp_path / side, env=env, capture_output=True,
                              text=True, timeout=600, check=True)
        out[side] = [line for line in done.stdout.splitlines() if line.startswith(("json", "list"))]
    assert out["out"] == out["src"], out
    assert json.loads(out["src"][0][5:])[-1]["lr"] == [0.025]
