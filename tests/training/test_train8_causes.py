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
