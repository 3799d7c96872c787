"""A NumPy array reaching a reduction the converter wrote for a tensor (first contact fresh35: mingen-pan's DQN
gridworld). A project helper of NumPy only tests ``(state[i, j] == obj).all()``; the project's facts let a tensor reach
its functions (torch's ``np.argmax(qval.data)`` is a 0-d tensor, handed to ``makeMove``), so the receiver, an untyped
parameter, was converted as a tensor: ``mp_math.all(...)``, whose ReduceAll refused the array at the first move.
``mindport.runtime.math``'s ``any``/``all``/``prod`` now answer a NumPy receiver with its own method, as ``sum``,
``mean``, ``std`` and ``var`` already did. Real runs: the project converted by the real converter (CLI), run on
MindSpore and compared with torch's printed results."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mindport.cli import main

ROOT = Path(__file__).resolve().parents[2]

GRID = """\
import numpy as np


def find(state, obj):
    for i in range(0, 3):
        for j in range(0, 3):
            if (state[i, j] == obj).all():
                return i, j


def crowded(state):
    return bool((state.sum(2) > 1).any()), float(state.prod(2).sum())


def move(state, action):
    i, j = find(state, np.array([0, 1]))
    new = np.zeros((3, 3, 2))
    new[(i + (1 if action == 1 else 0)) % 3, (j + (1 if action == 0 else 0)) % 3] = np.array([0, 1])
    return new
"""

MAIN = """\
import numpy as np
import torch
from grid import *

state = np.zeros((3, 3, 2))
state[0, 0] = np.array([0, 1])
for step in range(6):
    qval = torch.tensor([[0.5, -0.5]]) * (1 if step % 3 else -1)
    action = np.argmax(qval.data)
    state = move(state, action)
    print(find(state, np.array([0, 1])), crowded(state))
"""


def _run(folder: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "main.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_a_numpy_helper_s_all_reached_by_a_tensor_runs_as_in_torch(tmp_path):
    src, out = tmp_path / "repo", tmp_path / "out"
    src.mkdir()
    (src / "grid.py").write_text(GRID)
    (src / "main.py").write_text(MAIN)
    run = CliRunner().invoke(main, ["convert", str(src), "-o", str(out), "-j", "1"])
    assert run.exit_code == 0, run.output
    assert "mp_math.all(" in (out / "grid.py").read_text()  # the receiver is read as a possible tensor
    torch_out = _run(src)
    assert len(torch_out.splitlines()) == 6 and torch_out == _run(out), (torch_out, _run(out))


@pytest.mark.parametrize("name,kwargs", [("all", {}), ("any", {}), ("all", {"dim": 1}), ("any", {"dim": 0}),
                                         ("all", {"dim": 1, "keepdim": True}), ("prod", {}),
                                         ("prod", {"dim": 0}), ("prod", {"dim": 1, "keepdim": True})])
def test_runtime_reductions_answer_numpy_with_its_own_method_and_tensors_as_torch(name, kwargs):
    import mindspore as ms
    import torch

    from mindport.runtime import math as mp_math

    a = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 0.5]])
    got = getattr(mp_math, name)(a, **kwargs)
    axis = {"axis": kwargs["dim"]} if "dim" in kwargs else {}
    keep = {"keepdims": True} if kwargs.get("keepdim") else {}
    want = getattr(a, name)(**axis, **keep)
    assert isinstance(got, (np.ndarray, np.generic)) and np.array_equal(got, want)
    t = getattr(torch, name)(torch.tensor(a, dtype=torch.float32), **kwargs) if kwargs else getattr(torch, name)(
        torch.tensor(a, dtype=torch.float32))
    m = getattr(mp_math, name)(ms.Tensor(a, ms.float32), **kwargs)
    assert isinstance(m, ms.Tensor) and np.allclose(m.asnumpy(), t.numpy()) and m.shape == tuple(t.shape)
