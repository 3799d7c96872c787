"""Speed classes of converted training loops (branch trainspeed; benchmarks/training/speed.py has the timings): each
test checks the setting or cache that makes the loop fast AND that the losses stay torch's (real torch, real
MindSpore). No test here is timed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from _harness import HERE, convert

_FRESH = r'''
import json, sys, types
import numpy as np
code = open(sys.argv[1]).read()
module = types.ModuleType("ms_step")
from mindspore._c_expression import RuntimeConf
exec(compile(code, "ms_step", "exec"), module.__dict__)   # the converted file's imports, nothing run yet
blocking_after_import = RuntimeConf.get_instance().is_launch_blocking()
arrays = [np.load(sys.argv[2])[k] for k in ("X", "Y", "W1", "W2")]
losses = module.train(*arrays, steps=12)
print(json.dumps({"blocking_after_import": blocking_after_import, "losses": [float(x) for x in losses]}))
'''


def test_synchronous_launch_is_on_before_the_script_runs_a_kernel(tmp_path):
    # MindSpore takes launch_blocking only before its first kernel; the region turned it on at the first
    # value_and_grad, after the script had built its model and data (kernels ran): ignored, and a RealNVP step cost
    # 520 ms of CPU instead of 60-100 ms. Now the converted file's import of the runtime turns it on. A fresh process:
    # the setting is on right after the imports, and the losses are torch's.
    source, code = convert("step_manual_net.py")
    assert "mindport.runtime import training" in code
    rng = np.random.default_rng(0)
    arrays = dict(zip(("X", "Y", "W1", "W2"),
                      (0.3 * rng.standard_normal(s).astype(np.float32) for s in ((16, 8), (16, 2), (8, 12), (12, 2)))))
    np.savez(tmp_path / "data.npz", **arrays)
    (tmp_path / "ms_step.py").write_text(code)
    (tmp_path / "fresh.py").write_text(_FRESH)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, str(tmp_path / "fresh.py"), str(tmp_path / "ms_step.py"),
                        str(tmp_path / "data.npz")], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["blocking_after_import"] is True
    scope: dict = {}
    exec(compile(source, "torch_step", "exec"), scope)  # noqa: S102 - the test's own script
    t_losses = scope["train"](*(arrays[k] for k in ("X", "Y", "W1", "W2")), steps=12)
    rel = np.abs(np.array(t_losses) - np.array(out["losses"])) / np.abs(np.array(t_losses))
    assert t_losses[-1] < 0.9 * t_losses[0] and rel.max() < 1e-5, (t_losses, out["losses"])
