"""Causes met on first contact with the training scripts of benchmarks/training/fresh33.json, each a class with a
fixture of our own, run in real torch and real MindSpore; expected values come from torch.

A whole model saved through an open file (jin-li/pytorch-tutorial's language models, after pytorch/examples:
``with open(save, 'wb') as f: torch.save(model, f)`` whenever the validation loss improves): torch pickles the module
and ``torch.load`` gives it back, working. The port pickled the Cell as it is, and MindSpore's primitives inside it
(``Dropout``, ``Reshape``: C++ objects) refused: "cannot pickle 'Dropout' object" at the first epoch's end."""
from __future__ import annotations

import io

from test_fresh_causes import _convert, _printed

WHOLE_MODEL = '''
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, dropout=0.3):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(16, 3)
        nn.init.eye_(self.fc1.weight)
        nn.init.constant_(self.fc1.bias, 0.1)
        nn.init.eye_(self.fc2.weight)
        nn.init.constant_(self.fc2.bias, -0.2)

    def forward(self, x):
        h = self.drop(torch.tanh(self.fc1(x)))
        return self.fc2(h).view(-1, 3)


x = torch.linspace(-1.0, 1.0, 40).reshape(10, 4)
y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()
model.eval()
for step in range(5):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("loss", round(loss.item(), 5))

with open(PATH, "wb") as f:
    torch.save(model, f)
with open(PATH, "rb") as f:
    loaded = torch.load(f, weights_only=False)
loaded.eval()
print("same", float((loaded(x) - model(x)).abs().max()))
print("loaded", round(criterion(loaded(x), y).item(), 5))
again = torch.optim.SGD(loaded.parameters(), lr=0.5)
for step in range(2):
    again.zero_grad()
    loss = criterion(loaded(x), y)
    loss.backward()
    again.step()
    print("resumed", round(loss.item(), 5))
'''


def _run(code: str, name: str, path) -> dict:
    """The script's printed numbers by their line's first word; ``PATH`` set on its module (where it saves)."""
    return {key: [float(v) for v in values] for key, values in _printed(code, name, PATH=str(path)).items()}


def test_a_whole_model_saved_through_an_open_file_loads_back_working(tmp_path):
    torch_lines = _run(WHOLE_MODEL, "whole_model_torch", tmp_path / "torch.pt")
    ms_lines = _run(_convert(WHOLE_MODEL), "whole_model_ms", tmp_path / "ms.pt")
    assert torch_lines["same"] == ms_lines["same"] == [0.0]
    # the loaded Cell computes and trains on: the same losses as torch's loaded module
    for key in ("loss", "loaded", "resumed"):
        assert len(ms_lines[key]) == len(torch_lines[key])
        for a, b in zip(ms_lines[key], torch_lines[key]):
            assert abs(a - b) <= 2e-5 + 1e-4 * abs(b), (key, ms_lines[key], torch_lines[key])


# A model switched to inference mode before a training loop, in a file that never calls train() (the fixture above;
# a frozen-Dropout fine-tune): torch trains it in that mode, Dropout off. The training rule's one-loss loop form set
# ``model.set_train(True)`` before the loop regardless, so every step drew Dropout masks torch never drew.
EVAL_BEFORE_LOOP = '''
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
nn.init.eye_(model[0].weight)
nn.init.constant_(model[0].bias, 0.05)
nn.init.constant_(model[2].weight, 0.3)
nn.init.zeros_(model[2].bias)
x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
y = x.sum(dim=1, keepdim=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.eval()
for step in range(4):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("loss", round(loss.item(), 6))
'''


def test_a_model_in_eval_mode_before_the_loop_trains_in_eval_mode(tmp_path):
    code = _convert(EVAL_BEFORE_LOOP)
    assert "set_train(True)" not in code, code
    torch_lines = _run(EVAL_BEFORE_LOOP, "eval_loop_torch", tmp_path / "unused")
    ms_lines = _run(code, "eval_loop_ms", tmp_path / "unused")
    assert len(ms_lines["loss"]) == len(torch_lines["loss"]) == 4
    for a, b in zip(ms_lines["loss"], torch_lines["loss"]):
        assert abs(a - b) <= 1e-5 + 1e-4 * abs(b), (ms_lines["loss"], torch_lines["loss"])


def test_a_whole_model_with_dropout_keeping_its_masks_pickles():
    """mindport.runtime.training keeps Dropout masks by binding a construct on the instance (a converted training
    script imports it); pickle's own form of that bound method looks its name up on the Dropout when loading
    ("'Dropout' object has no attribute '_dropout_construct'", in a test process that had imported it): the
    checkpoint pickles it as the function bound to the Cell."""
    import io

    import mindspore as ms
    import numpy as np

    from mindport.runtime import checkpoint, training

    training.keep_dropout_masks()
    net = ms.nn.SequentialCell(ms.nn.Dense(3, 2), ms.nn.Dropout(p=0.5))
    buffer = io.BytesIO()
    checkpoint.save(net, buffer)
    buffer.seek(0)
    back = checkpoint.load(buffer)
    net.set_train(False)
    back.set_train(False)
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(back(x).asnumpy(), net(x).asnumpy())
