"""Causes met by fresh51's first contact (benchmarks/training/fresh51.json), each a class with a fixture of our own,
run converted under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh46_causes import _convert_and_run

# HobbitLong/RepDistiller's loops keep AverageMeters of tensors (``top1.update(acc1[0], n)``, acc1 a row of
# ``correct_k.mul_(100.0 / batch_size)``) and print them through fields that read into the meter,
# ``'Acc@1 {top1.val:.3f} ({top1.avg:.3f})'.format(top1=top1)``. torch formats a 0-d tensor with a spec as its number
# (Tensor.__format__ calls item()); MindSpore's Tensor refuses every spec, and the converter cannot wrap a value read
# at format time (first run fresh51: TypeError: unsupported format string passed to Tensor.__format__, both
# RepDistiller entries at their first progress line). Class: a 0-d tensor reaching a format spec by any path (an
# attribute or item field, a stored meter, format() in a helper); mindport.runtime.tensor_format gives MindSpore's
# Tensor torch's __format__ for 0-d tensors.
METER_FIELDS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Meter:
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target):
    correct = (output.argmax(1) == target).float().sum(0, keepdim=True)
    return [correct.mul_(100.0 / target.shape[0])]


def show(value, spec):
    return format(value, spec)


def main():
    model = nn.Linear(4, 3)
    with torch.no_grad():
        model.weight.copy_(torch.linspace(-0.4, 0.4, 12).reshape(3, 4))
        model.bias.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.linspace(-1, 1, 32).reshape(8, 4)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    losses, top1 = Meter(), Meter()
    for step in range(5):
        out = model(x)
        loss = F.cross_entropy(out, y)
        acc1, = accuracy(out, y)
        losses.update(loss.detach(), x.shape[0])
        top1.update(acc1[0], x.shape[0])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        row = [loss.detach(), acc1[0]]
        print("step {m.val:.6f} {m.avg:.6f} {t.val:.3f} {t.avg:.3f} {0[0]:.6f} {1}".format(
            row, show(losses.val, ".6f"), m=losses, t=top1))


if __name__ == "__main__":
    main()
'''


def test_a_0d_tensor_read_into_by_a_format_field_formats_as_its_number(tmp_path):
    t, m, code = _convert_and_run(tmp_path, METER_FIELDS)
    assert "{m.val:.6f}" in code  # the field is as written: the runtime's Tensor formats it
    assert len(t) == len(m) == 5
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]


def test_tensor_format_keeps_mindspore_for_tensors_of_more_dimensions():
    import mindspore as ms
    import pytest

    from mindport.runtime import tensor_format  # noqa: F401

    assert format(ms.Tensor(3.25), ".3f") == "3.250" and format(ms.Tensor(7), "03d") == "007"
    assert f"{ms.Tensor(2.5)}" == "2.5"  # torch: item().__format__("")
    with pytest.raises(TypeError):
        format(ms.Tensor([1.0, 2.0]), ".2f")  # torch refuses a spec for these too


# leftthomas/SimCLR's NT-Xent masks the similarity matrix with ``(torch.ones_like(sim) - torch.eye(2 * b)).bool()``
# inside the loss, in a train function, zero_grad() after the loss. ``.bool()`` converts to ``mp_tensor.bool_(...)``,
# and the backward region read a call ending in ``_`` on a name as mutating that name (``h.detach_()``): the runtime
# module became forward_fn's carried argument, ``(loss, sim, mp_tensor), grads = grad_fn(mp_tensor)``, a local read
# before its binding (first run fresh51: UnboundLocalError: cannot access local variable 'mp_tensor'). Class: a
# call on any module the converter imports (ms, ops, the mp_* runtime modules) is a module function, never a write
# of its receiver (mindport.migrator.imports.converter_module_aliases).
MASK_IN_LOSS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(net, batches, optimizer, temperature=0.5):
    total = 0.0
    for step, (a, b) in enumerate(batches):
        out_1, out_2 = F.normalize(net(a), dim=-1), F.normalize(net(b), dim=-1)
        out = torch.cat([out_1, out_2], dim=0)
        sim = torch.exp(torch.mm(out, out.t()) / temperature)
        mask = (torch.ones_like(sim) - torch.eye(2 * a.shape[0])).bool()
        sim = sim.masked_select(mask).view(2 * a.shape[0], -1)
        pos = torch.exp(torch.sum(out_1 * out_2, dim=-1) / temperature)
        pos = torch.cat([pos, pos], dim=0)
        loss = (-torch.log(pos / sim.sum(dim=-1))).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        print("step {:.6f} {:.6f}".format(loss, total / (step + 1)))


def main():
    net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-0.6, 0.6, p.numel()).reshape(p.shape) * (1 + 0.2 * i))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    x = torch.linspace(-1, 1, 24).reshape(6, 4)
    batches = [(x, x * 0.9 + 0.05), (x.flip(0), x.flip(0) * 1.1)] * 3
    train(net, batches, optimizer)


if __name__ == "__main__":
    main()
'''


def test_a_call_on_a_runtime_module_in_the_loss_is_not_carried_state(tmp_path):
    t, m, code = _convert_and_run(tmp_path, MASK_IN_LOSS)
    assert "mp_tensor), grads" not in code and "def forward_fn(mp_tensor" not in code, code
    assert len(t) == len(m) == 6
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[1][0] or t[-2][0] < t[0][0]


# HobbitLong/RepDistiller's train_distill sums per-layer losses of a ModuleList, ``[c(f_s, f_t) for f_s, f_t, c in
# zip(g_s, g_t, criterion_kd)]`` (its VID branch; the kd run never takes it, the code is converted all the same). The
# step's weight sources named every called name, the comprehension's own ``c`` among them:
# ``mp_train.parameters(optimizer, model_s, ..., criterion_kd, c)``, a NameError at the first step (after fresh51's
# format fix: NameError: name 'c' is not defined). Class: a name only a comprehension binds exists only inside it and
# is no weight source; the modules it takes come through the iterable it reads.
COMPREHENSION_CALLEE = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, n))

    def forward(self, a, b):
        return ((a * self.scale - b) ** 2).mean()


def train(model, heads, optimizer, x, y):
    for step in range(5):
        feats = [model(x), torch.tanh(model(x))]
        targets = [y, y * 0.5]
        loss = sum([c(f, t) for f, t, c in zip(feats, targets, heads)])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", loss.item())


def main():
    model = nn.Linear(4, 3)
    with torch.no_grad():
        model.weight.copy_(torch.linspace(-0.5, 0.5, 12).reshape(3, 4))
        model.bias.fill_(0.1)
    heads = nn.ModuleList([Scaled(3), Scaled(3)])
    optimizer = torch.optim.SGD(list(model.parameters()) + list(heads.parameters()), lr=0.1)
    x = torch.linspace(-1, 1, 20).reshape(5, 4)
    y = torch.linspace(0, 1, 15).reshape(5, 3)
    train(model, heads, optimizer, x, y)


if __name__ == "__main__":
    main()
'''


def test_a_name_a_comprehension_binds_is_no_weight_source_of_the_step(tmp_path):
    t, m, code = _convert_and_run(tmp_path, COMPREHENSION_CALLEE)
    assert ", c)" not in code, code
    assert len(t) == len(m) == 5
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]
