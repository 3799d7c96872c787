"""torch.save / torch.load as training scripts write them, converted and run on MindSpore: a model's state_dict saved
under a torch name (``model.pth``: MindSpore's save_checkpoint wrote ``model.pth.ckpt`` and load_checkpoint refused the
name the script loads), and a training checkpoint dictionary (epoch, model and optimizer state, loss), which
save_checkpoint cannot write at all. Both come back as torch gives them: the weights load into a fresh model, the
training resumes with the same numbers as an uninterrupted run."""
from __future__ import annotations

import io
import os
from contextlib import redirect_stdout

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert

SCRIPT = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(16, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1


def make():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def train(model, optimizer, steps):
    for step in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss.item()


model = make()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
train(model, optimizer, 3)
torch.save(model.state_dict(), "weights.pth")
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict(), "note": [1, "a"]},
           "checkpoint.pt")

fresh = make()
fresh.load_state_dict(torch.load("weights.pth"))
print("same", float((fresh(x) - model(x)).abs().max()))

state = torch.load("checkpoint.pt")
resumed = make()
resumed.load_state_dict(state["model"])
print("epoch", state["epoch"], state["note"])
print("resumed", float((resumed(x) - model(x)).abs().max()))
'''


def test_saved_files_load_back(tmp_path, monkeypatch):
    code = _convert(SCRIPT)
    assert "torch" not in code.replace("mp_checkpoint", ""), code
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, "checkpoint_script")
    lines = dict(line.split(" ", 1) for line in out.getvalue().splitlines())
    assert float(lines["same"]) == 0.0
    assert lines["epoch"] == "3 [1, 'a']"
    assert float(lines["resumed"]) == 0.0
    assert os.path.exists(tmp_path / "checkpoint.pt")  # the dictionary at exactly the name the script gave


def test_a_torch_file_of_tensors_is_read_without_torch(tmp_path):
    """A file torch wrote holding tensors in containers is read (its refusal with the conversion command is kept for
    other objects: tests/training/test_fresh46_causes.py)."""
    import torch

    from mindport.runtime import checkpoint

    torch.save({"w": torch.ones(2), "step": 3}, tmp_path / "t.pt")
    loaded = checkpoint.load(str(tmp_path / "t.pt"))
    assert loaded["step"] == 3 and loaded["w"].asnumpy().tolist() == [1.0, 1.0]


def test_tensors_in_a_file_object_round_trip():
    import mindspore as ms

    from mindport.runtime import checkpoint

    buffer = io.BytesIO()
    checkpoint.save({"a": ms.Tensor(np.arange(3.0)), "b": (ms.Parameter(ms.Tensor([1.0]), name="p"), 2)}, buffer)
    buffer.seek(0)
    back = checkpoint.load(buffer)
    np.testing.assert_array_equal(back["a"].asnumpy(), np.arange(3.0))
    assert isinstance(back["b"][0], ms.Parameter) and back["b"][0].name == "p" and back["b"][1] == 2
