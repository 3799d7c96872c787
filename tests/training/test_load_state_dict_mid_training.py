"""A checkpoint loaded into a model mid-training (keep the best weights, reload them, train on) must keep training.
MindSpore 2.10's Cell.load_state_dict (and load_param_into_net) give each Parameter new storage: after an optimizer
has stepped, its updates no longer reach the Cell and the loss repeats to every digit. The converter sends a module's
load_state_dict to mindport.runtime.layers.load_state_dict, which writes the Parameters in place."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn

from mindport.migrator import convert_source
from mindport.runtime import layers as mp_nn

SCRIPT = textwrap.dedent("""
    import copy
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(8, 3)
    for step in range(6):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        print("LOSS", loss.item())
        if step == 1:
            best = copy.deepcopy(model.state_dict())
            opt_state = copy.deepcopy(optimizer.state_dict())
        if step == 3:
            model.load_state_dict(best)
            optimizer.load_state_dict(opt_state)
""")


def _losses(path: Path) -> list[float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return [float(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("LOSS")]


def test_training_goes_on_after_a_checkpoint_is_loaded(tmp_path):
    src = tmp_path / "train_torch.py"
    src.write_text(SCRIPT)
    result = convert_source(SCRIPT, "train_torch.py")
    assert "mp_nn.load_state_dict(model, best)" in result.code
    port = tmp_path / "train_ms.py"
    port.write_text(result.code)
    for losses in (_losses(src), _losses(port)):
        assert len(losses) == 6
        # steps 4 and 5 repeat steps 2 and 3 (weights and optimizer state of step 1 reloaded, same batch) ...
        np.testing.assert_allclose(losses[4:], losses[2:4], rtol=1e-5)
        # ... and the model trains on after the load (the Cell's own load_state_dict froze it: losses[5] == losses[4])
        assert losses[5] != losses[4]


def test_the_cells_key_checks_and_result_are_kept():
    net = nn.SequentialCell(nn.Dense(3, 2), nn.BatchNorm1d(2))
    other = nn.SequentialCell(nn.Dense(3, 2), nn.BatchNorm1d(2))
    state = other.state_dict()
    before = net[0].weight
    result = mp_nn.load_state_dict(net, state)
    assert net[0].weight is before
    np.testing.assert_array_equal(net[0].weight.asnumpy(), other[0].weight.asnumpy())
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    partial = {k: v for k, v in state.items() if not k.startswith("1.")}
    with pytest.raises(RuntimeError, match="Missing key"):
        mp_nn.load_state_dict(net, partial)
    result = mp_nn.load_state_dict(net, {**partial, "extra": ms.Tensor(np.ones(1, np.float32))}, strict=False)
    assert "1.gamma" in result.missing_keys and list(result.unexpected_keys) == ["extra"]
