"""Causes met by fresh48's first contact (benchmarks/training/fresh48.json), each a class with a fixture of our own,
run converted under MindSpore against torch."""
from __future__ import annotations

from test_fresh46_causes import _convert_and_run

# Tony-Y/pytorch_warmup's warmup schedulers dampen each group's lr in a loop over
# ``zip(self.optimizer.param_groups, self.warmup_params)`` (``group['lr'] *= omega``). A MindSpore optimizer's group
# holds its lr as a Parameter that the optimizer and its scheduler read; ``*=`` rebound the dict's entry to a new
# tensor, so the optimizer kept stepping with the undampened rate and the scheduler wrote to a Parameter nobody printed
# (first run fresh48: tonyy/emnist_warmup_linear_cosine printed LR 0.001000 where torch printed 0.000998, and its
# CNN, stepped at lr 0.01 from the first batch, stopped learning at ln 47). Class: a group bound by a loop over
# ``zip(opt.param_groups, ...)`` or ``enumerate(opt.param_groups)`` and stored into (``=``, ``*=``): written in
# place (mp_optim.set_group), as a group bound by ``for g in opt.param_groups`` already was.
WARMUP = '''
import torch


class Warmup:
    def __init__(self, optimizer, periods):
        self.optimizer = optimizer
        self.periods = periods
        self.last_step = -1
        self.lrs = [group['lr'] for group in optimizer.param_groups]
        self.dampen()

    def dampen(self):
        self.last_step += 1
        for group, period in zip(self.optimizer.param_groups, self.periods):
            group['lr'] *= min(1.0, (self.last_step + 1) / period)

    def restore(self):
        for i, group in enumerate(self.optimizer.param_groups):
            group['lr'] = self.lrs[i]

    def keep(self):
        self.lrs = [group['lr'] for group in self.optimizer.param_groups]


torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -0.25, 0.125]]))
    model.bias.fill_(0.1)
x = torch.linspace(-1, 1, 24).reshape(8, 3)
y = x.sum(dim=1, keepdim=True) * 0.7 - 0.2
opt = torch.optim.SGD([{'params': [model.weight]}, {'params': [model.bias], 'lr': 0.2}], lr=0.1)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12)
warm = Warmup(opt, [4, 6])
for step in range(10):
    lr0, lr1 = float(opt.param_groups[0]['lr']), float(opt.param_groups[1]['lr'])
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    warm.restore()
    sched.step()
    warm.keep()
    warm.dampen()
    print("step", loss.item(), lr0, lr1)
'''


def test_a_group_bound_by_a_loop_over_zip_of_param_groups_is_written_in_place(tmp_path):
    t, m, code = _convert_and_run(tmp_path, WARMUP)
    assert code.count("set_group(") == 2, code
    assert len(t) == len(m) == 10
    for a, b in zip(t, m):
        assert abs(a[0] - b[0]) <= 1e-5 * max(1.0, abs(a[0])), (t, m)  # the loss
        assert abs(a[1] - b[1]) <= 1e-6 and abs(a[2] - b[2]) <= 1e-6, (t, m)  # the dampened, annealed rates
    assert t[1][1] != t[0][1] and t[-1][0] < t[0][0] * 0.5  # the rates move; the model learns


# TingsongYu/PyTorch_Tutorial's main_training/main.py logs each parameter's gradient after an epoch's batches
# (``for name, layer in net.named_parameters(): writer.add_histogram(name + '_grad', layer.grad...)``, in the epoch
# loop after the batch loop). The batch loop had no ``.grad`` read of its own, so it took the opt(grads) rewrite,
# which never fills ``.grad``; the read after it failed (first run fresh48: AttributeError: 'Parameter' object has no
# attribute 'grad'). Class: ``.grad`` read in the outer loop of a nest, outside the batch loop that steps: the batch
# loop goes to the general backward region, which fills ``.grad`` as torch does (the last batch's gradients).
GRAD_AFTER_BATCHES = '''
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.linspace(-1, 1, 32).reshape(8, 4)
y = (x ** 2).sum(dim=1, keepdim=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    for i in range(4):
        xb, yb = x[2 * i:2 * i + 2], y[2 * i:2 * i + 2]
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
    norms = [float(layer.grad.abs().sum()) for name, layer in model.named_parameters()]
    print("step", loss.item(), *norms)
'''


def test_grads_read_after_the_batch_loop_hold_the_last_batchs_gradients(tmp_path):
    t, m, code = _convert_and_run(tmp_path, GRAD_AFTER_BATCHES)
    assert len(t) == len(m) == 3, (t, m, code)
    for a, b in zip(t, m):
        assert len(a) == len(b) == 5
        for u, v in zip(a, b):
            assert abs(u - v) <= 1e-5 * max(1.0, abs(u)), (t, m)
    assert all(v > 0 for row in t for v in row[1:])  # real gradients, not zeros
