"""Classes left open by the training corpus (session notes trainfresh5.md, train7.md), fixed in session 8 (branch
train8): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

OPTIMIZER_STATE_RESTORED = '''
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer

    def train_steps(self, n):
        for _ in range(n):
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            print("step", loss.item(), self.optimizer.state_dict()['param_groups'][0]['lr'])

    def snapshot(self):
        return {'model': [p.detach().clone() for p in self.model.parameters()],
                'optimizer': deepcopy(self.optimizer.state_dict())}

    def restore(self, states):
        self.optimizer.load_state_dict(states['optimizer'])
        with torch.no_grad():
            for p, saved in zip(self.model.parameters(), states['model']):
                p.copy_(saved)


x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor(np.cos(np.arange(8, dtype=np.float32)).reshape(8, 1))
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
trainer = Trainer(model, nn.MSELoss(), optimizer)
trainer.train_steps(3)
saved = trainer.snapshot()
groups = saved['optimizer']['param_groups']
print("step", len(saved['optimizer']['state']) + 10 * len(groups[0]['params']), groups[0]['momentum'])
trainer.train_steps(3)
trainer.restore(saved)
trainer.train_steps(3)
'''


def test_optimizer_state_dict_in_torchs_shape_round_trips():
    """dvgodoy/sbs_*: the StepByStep trainer reads ``self.optimizer.state_dict()['param_groups'][0]['lr']`` and
    restores ``deepcopy(optimizer.state_dict())`` after a learning-rate range test. A MindSpore optimizer's own
    state_dict() is its Cell's parameter table (KeyError 'param_groups'). Through mindport.runtime.optim it has
    torch's shape, and loading it back restores the momentum buffers: the steps after the restore repeat torch's."""
    code = _convert(OPTIMIZER_STATE_RESTORED)
    assert "mp_optim.state_dict(self.optimizer)" in code and "mp_optim.load_state_dict(self.optimizer" in code, code
    t, m = _losses(OPTIMIZER_STATE_RESTORED, "torch_opt_state"), _losses(code, "ms_opt_state")
    assert len(t) == len(m) == 10, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-7)
    assert t[7] == t[4] and m[7] == m[4]  # the restored momentum repeats the step after the snapshot


WEIGHT_CLIPPING_AFTER_THE_STEP = '''
import numpy as np
import torch
import torch.nn as nn

m = nn.Linear(3, 1)
with torch.no_grad():
    m.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    m.bias.fill_(0.05)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor(np.cos(np.arange(8, dtype=np.float32)).reshape(8, 1))
for i in range(5):
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    for p in m.parameters():
        p.data.clamp_(-0.5, 0.5)
    print("step", loss.item())
'''


def test_in_place_write_on_a_parameter_after_the_optimizer_stepped():
    """Found while restoring sbs's trainer (train8): an in-place write on a Parameter after the optimizer has stepped
    (WGAN's weight clipping ``p.data.clamp_(-c, c)``, a restore by ``p.copy_``) went through ``assign_value``, which
    gives the Parameter new storage; MindSpore's optimizer keeps updating the old one, so the model silently stopped
    training (the loss repeated itself from the second step). Written with ``ops.assign``, it trains like torch."""
    code = _convert(WEIGHT_CLIPPING_AFTER_THE_STEP)
    t, m = _losses(WEIGHT_CLIPPING_AFTER_THE_STEP, "torch_clip_w"), _losses(code, "ms_clip_w")
    assert len(t) == len(m) == 5, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-7)
    assert len({row[0] for row in m}) == 5


EVAL_PASS_THROUGH_THE_TRAINING_FUNCTION = '''
import numpy as np
import torch
import torch.nn as nn


class DummyOptimizer(torch.optim.Optimizer):
    def __init__(self):
        self.param_groups = [{"lr": 0}]

    def step(self):
        None

    def zero_grad(self, set_to_none=False):
        None


def run_epoch(batches, model, criterion, optimizer, mode="train"):
    total = 0.0
    for xb, yb in batches:
        out = model.forward(xb)
        loss = criterion(out, yb)
        if mode == "train":
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / len(batches)


x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor(np.sin(np.arange(8, dtype=np.float32)).reshape(8, 1))
batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 8, 4)]
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
print("step", 0.0, run_epoch(batches, model, nn.MSELoss(), DummyOptimizer(), mode="eval"))
for epoch in range(3):
    model.train()
    train_loss = run_epoch(batches, model, nn.MSELoss(), optimizer, mode="train")
    model.eval()
    with torch.no_grad():
        eval_loss = run_epoch(batches, model, nn.MSELoss(), DummyOptimizer(), mode="eval")
    print("step", train_loss, eval_loss)
'''


def test_eval_pass_of_the_training_function_is_not_differentiated():
    """harvardnlp/copy_task: ``run_epoch(..., mode="eval")`` with a DummyOptimizer runs the same function as
    training, whose ``loss.backward()`` stands under ``if mode == "train"``. The general backward region
    differentiated the forward whether or not that branch ran, and the model, called as ``model.forward(...)``, was
    not taken for part of the forward: its output was computed before the region, so no parameter reached the loss
    (RuntimeError "no parameter reaches the loss"). The model's forward method is a forward call now, and the
    differentiation waits on the branch's test: the eval pass runs the forward only."""
    code = _convert(EVAL_PASS_THROUGH_THE_TRAINING_FUNCTION)
    assert 'if mode == "train":' in code and "= forward_fn(" in code, code
    t = _losses(EVAL_PASS_THROUGH_THE_TRAINING_FUNCTION, "torch_eval_pass")
    m = _losses(code, "ms_eval_pass")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-7)
    assert t[-1][1] < t[0][1]


DEVICE_CHOSEN_AFTER_THE_DATA = '''
import numpy as np
import torch
import torch.nn as nn

x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(np.sin(np.arange(8, dtype=np.float32)).reshape(8, 1))
device = torch.device('cpu')
model = nn.Linear(3, 1).to(device)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    optimizer.zero_grad()
    loss = ((model(x.to(device)) - y.to(device)) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_device_chosen_after_kernels_ran():
    """chennnM/gcnii_cora: ``device = torch.device('cpu')`` stands after the data loading, which ran kernels;
    ``ms.set_device("CPU")`` there raised (MindSpore picks its device once, before its first kernel). The device
    MindSpore already computes on is kept (mp_framework.select_device); another is still set."""
    code = _convert(DEVICE_CHOSEN_AFTER_THE_DATA)
    t, m = _losses(DEVICE_CHOSEN_AFTER_THE_DATA, "torch_device_late"), _losses(code, "ms_device_late")
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-7)


FLOAT64_LEAF_WITH_SGD = '''
import numpy as np
import torch

x = torch.linspace(-1, 1, 16, dtype=torch.float64)
y = 0.7 * x ** 2 - 0.3 * x + 0.2
w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.2, momentum=0.9, nesterov=True, weight_decay=0.01)
for i in range(6):
    optimizer.zero_grad()
    pred = w[0] * x ** 2 + w[1] * x + w[2]
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_float64_leaf_trained_with_sgd():
    """artintellica/lbfgs_closure: a float64 leaf tensor trained directly with SGD. MindSpore's ops.SGD refuses
    float64 parameters ("must be one of Tensor[Float16], Tensor[Float32]"). mindport.runtime.optim.SGD runs torch's
    update in the parameter's precision there (hyper-parameters as float64 tensors: a Python float times a float64
    tensor is computed from the float's float32 value). The losses track torch's to 1e-7, not 1e-12: the script's own
    forward multiplies float64 tensors by Python floats (0.7 * x ** 2), which MindSpore computes from their float32
    values (the first loss, before any update, is 1.9e-8 apart: a gap of its own, not the optimizer's)."""
    code = _convert(FLOAT64_LEAF_WITH_SGD)
    t, m = _losses(FLOAT64_LEAF_WITH_SGD, "torch_f64_sgd"), _losses(code, "ms_f64_sgd")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-7)
    assert t[-1][0] < t[0][0]
