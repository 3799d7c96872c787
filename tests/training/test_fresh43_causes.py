"""Causes found by the training corpus's first contact with three more repositories (benchmarks/training/fresh43.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder

# PitaPitaPiPiPi/pytorch_prac: utils/data_loader.py's ``get_mnist_loaders(batch_size)`` builds both DataLoaders and
# returns them; main.py unpacks ``train_loader, test_loader = get_mnist_loaders(...)`` and reads
# ``len(test_loader.dataset)`` for the accuracy. The rule told a loader whose ``.dataset`` is read (torch's
# DataLoader semantics, mindport.runtime.data) only within one file: the unshuffled test loader became a
# mindspore.dataset pipeline and the port failed after its first epoch (AttributeError: 'BatchDataset' object has no
# attribute 'dataset'). The project's files now say which of its functions' results they read loader fields of
# (project.loader_field_reads), and a loader such a function returns is the runtime DataLoader.
LOADERS = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def get_loaders(batch_size):
    x = torch.tensor(np.random.RandomState(0).randn(40, 3).astype(np.float32))
    y = (x.sum(1) > 0).long()
    train_loader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=batch_size, shuffle=False)
    test_loader = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=batch_size, shuffle=False)
    return train_loader, test_loader
'''

LOADERS_MAIN = '''
import torch
import torch.nn as nn
from data import get_loaders

torch.manual_seed(0)
model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.2, 0.1, 0.05]]))
    model.bias.fill_(0.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
train_loader, test_loader = get_loaders(8)
for epoch in range(3):
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    correct = 0
    with torch.no_grad():
        for x, y in test_loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print("step", total / len(train_loader), correct / len(test_loader.dataset))
'''


def test_a_loader_returned_to_another_module_that_reads_its_dataset(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "data.py").write_text(LOADERS)
    (src / "main.py").write_text(LOADERS_MAIN)
    convert_path(src, out, jobs=1)
    code = (out / "data.py").read_text()
    assert "GeneratorDataset" not in code, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


# zspalotai-spec/cs336g-a1-basics's adamw.py: a hand-written AdamW whose defaults name its rate "alpha"
# (``defaults = {"alpha": lr, "beta1": ..., "lambda": weight_decay}``) and keep per-parameter state in
# ``self.state[p]``. torch's Optimizer takes any defaults; MindSpore's experimental Optimizer, the converted class's
# base, builds a learning-rate Parameter from every group's "lr" and refused None before training (TypeError: For
# 'Optimizer', the argument 'learning_rate' must be int, float or Tensor). A converted optimizer's base is now
# mindport.runtime.optim.Optimizer, whose groups keep torch's keys (no "lr" or "weight_decay" added).
ALPHA_OPTIMIZER = '''
import math
import numpy as np
import torch


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, weight_decay=1e-3, betas=(0.9, 0.95), eps=1e-8):
        defaults = {"alpha": lr, "beta1": betas[0], "beta2": betas[1], "eps": eps, "lambda": weight_decay}
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            alpha, beta1, beta2, eps, lmbda = (group["alpha"], group["beta1"], group["beta2"], group["eps"],
                                               group["lambda"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                t = state.get("t", 1)
                m = state.get("m", torch.zeros_like(p.data))
                v = state.get("v", torch.zeros_like(p.data))
                grad = p.grad.data
                m = beta1 * m + (1 - beta1) * grad
                v = beta2 * v + (1 - beta2) * grad * grad
                alpha_t = alpha * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
                p.data -= alpha_t * m / (v.sqrt() + eps)
                p.data -= alpha * lmbda * p.data
                state["t"] = t + 1
                state["m"] = m
                state["v"] = v
        return loss


model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
x = torch.tensor(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3))
y = x.sum(1, keepdim=True) * 0.5 + 0.2
optimizer = AdamW(model.parameters(), lr=0.05)
for step in range(6):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item(), sorted(k for k in optimizer.param_groups[0] if k != "params") == ["alpha", "beta1", "beta2", "eps", "lambda"])
'''


def test_a_hand_written_optimizer_whose_defaults_have_no_lr():
    from mindport import convert_source

    code = convert_source(ALPHA_OPTIMIZER, "script.py").code
    t = [[float(v) if v not in ("True", "False") else float(v == "True") for v in line]
         for line in _raw_steps(ALPHA_OPTIMIZER, "torch_alpha")]
    m = [[float(v) if v not in ("True", "False") else float(v == "True") for v in line]
         for line in _raw_steps(code, "ms_alpha")]
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0] and t[0][1] == 1.0


def _raw_steps(code: str, name: str) -> list[list[str]]:
    import io
    from contextlib import redirect_stdout

    from test_fresh2_causes import load_module

    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return [line.split()[1:] for line in out.getvalue().splitlines() if line.startswith("step")]


# zspalotai-spec/cs336g-a1-basics's ro_pe.py: rotary embeddings through complex numbers, as LLaMA writes them: a
# complex buffer ``torch.exp(1j * theta_ik)``, ``torch.view_as_complex(rearrange(x, "... (d d1) -> ... d d1", d1=2))``,
# ``.mul(rotation)`` and ``torch.view_as_real``. MindSpore 2.10 has no gradient for a complex Mul (TypeError: For
# 'Mul', gradient not support for complex type currently) and the port failed at its first step. A product with an
# evidently complex value (the operator, and now ``.mul``/``.multiply``/``torch.mul`` of one) is
# mindport.runtime.math.complex_operation, which multiplies complex tensors out from their real and imaginary parts
# (ops.real, ops.imag and Complex have gradients).
COMPLEX_ROPE = '''
import numpy as np
import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        theta = torch.outer(torch.arange(n, dtype=torch.float32), 10000.0 ** (-2 * torch.arange(d // 2) / d))
        self.register_buffer("rot", torch.exp(1j * theta), persistent=False)
        self.lin = nn.Linear(d, d)
        self.out = nn.Linear(d, 1)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, d * d, dtype=np.float32).reshape(d, d)))
            self.lin.bias.fill_(0.1)
            self.out.weight.copy_(torch.tensor(np.linspace(0.3, -0.3, d, dtype=np.float32).reshape(1, d)))
            self.out.bias.fill_(0.0)

    def forward(self, x):
        h = self.lin(x)
        z = torch.view_as_complex(h.reshape(*h.shape[:-1], -1, 2))
        a = torch.view_as_real(z.mul(self.rot)).flatten(-2)
        b = torch.view_as_real(z * self.rot).flatten(-2)
        return self.out(torch.tanh(a + 0.5 * b)).mean(1)


model = Rotary(4, 5)
x = torch.tensor(np.linspace(-1.0, 1.0, 60, dtype=np.float32).reshape(3, 5, 4))
y = torch.tensor([[0.5], [-0.2], [0.1]])
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
for step in range(6):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_rotary_embeddings_through_complex_products_train():
    from mindport import convert_source
    from test_fresh2_causes import _losses

    code = convert_source(COMPLEX_ROPE, "script.py").code
    t, m = _losses(COMPLEX_ROPE, "torch_rope"), _losses(code, "ms_rope")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


# zspalotai-spec/cs336g-a1-basics's adamw.py goes on: ``class AdamWextra(AdamW)`` overrides ``step`` to clip the
# gradients with a helper of the project (``gradient_clipping.clip(group["params"], max_norm)``: reads ``p.grad``,
# ``p.grad *= scale``) and to set each parameter's warmup-cosine rate in ``self.state[p]["alpha"]``, then calls
# ``super().step(closure)``; its base is built with rate 0.0. Only AdamW's step became ``construct(gradients)``, the
# training step's ``optimizer(grads)`` ran it alone, and the port trained at rate 0: its loss stayed at 3.7 while
# torch's fell to 4e-4, silently. A hand-written optimizer's subclass's ``step`` is ``construct(self, gradients,
# closure)`` too: the gradients are put on the parameters' ``.grad`` first (mindport.runtime.optim.set_grads), its
# body reads and writes them there as torch's does, and ``super().step(closure)`` hands the base what ``.grad`` then
# holds (``super().construct(mp_optim.live_gradients(self), closure)``).
SUBCLASS_STEP = '''
import math
import numpy as np
import torch


def clip(params, max_norm, eps=1e-6):
    params = list(params)
    norm = 0.0
    for p in params:
        if p.grad is None:
            continue
        norm += torch.sum(p.grad * p.grad)
    norm = norm.sqrt()
    if norm < max_norm:
        return
    scale = max_norm / (norm + eps)
    for p in params:
        if p.grad is None:
            continue
        p.grad *= scale


class Plain(torch.optim.Optimizer):
    def __init__(self, params, lr=0.0, extra=None):
        defaults = {"alpha": lr}
        if extra is not None:
            defaults.update(extra)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            alpha = group["alpha"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "alpha" in state:
                    alpha = state.get("alpha")
                p.data -= alpha * p.grad.data
        return loss


class Scheduled(Plain):
    def __init__(self, params, lr_max, max_norm):
        super().__init__(params, 0.0, {"alpha_max": lr_max, "max_norm": max_norm})

    def step(self, closure=None):
        for group in self.param_groups:
            clip(group["params"], group["max_norm"])
            for p in group["params"]:
                state = self.state[p]
                t = state.get("t", 0)
                state["alpha"] = group["alpha_max"] * min(1.0, (t + 1) / 3)
                state["t"] = t + 1
        return super().step(closure)


model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
x = torch.tensor(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3))
y = x.sum(1, keepdim=True) * 2.0 + 1.0
optimizer = Scheduled(model.parameters(), lr_max=0.3, max_norm=1.0)
for step in range(8):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_a_hand_written_optimizer_s_subclass_overriding_step():
    from mindport import convert_source
    from test_fresh2_causes import _losses

    code = convert_source(SUBCLASS_STEP, "script.py").code
    t, m = _losses(SUBCLASS_STEP, "torch_sub"), _losses(code, "ms_sub")
    assert len(t) == len(m) == 8, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < 0.5 * t[0][0]


# Session 42's open item (kimy-de/pinns's shape): the statement computing a create_graph gradient's outputs was moved
# into the branches of the ``if`` that takes the gradient only when it stood right before the ``if``; one statement
# between them (the boundary loss, a print) left torch's call (MP105 "u does not depend on pts in this block") and
# the port failed at run time. It is now moved past statements between that neither read nor bind its name or any
# name it reads (simple statements only: calls of other objects, other losses), which then run before it.
BRANCH_GRAD_LATER = '''
import numpy as np
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    net[0].weight.copy_(torch.tensor(np.linspace(-1.0, 1.2, 16, dtype=np.float32).reshape(8, 2)))
    net[0].bias.copy_(torch.tensor(np.linspace(0.3, -0.4, 8, dtype=np.float32)))
    net[2].weight.copy_(torch.tensor(np.linspace(0.5, -0.6, 8, dtype=np.float32).reshape(1, 8)))
    net[2].bias.fill_(0.1)
pts = torch.FloatTensor(np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(10, 2))
pts.requires_grad = True
mode = "bg"
optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
for ep in range(5):
    u = net(pts)
    optimizer.zero_grad()
    weight = 0.5 + 0.1 * ep
    if mode == "bg":
        u_tx = torch.autograd.grad(u, pts, torch.ones_like(u), create_graph=True)[0]
        loss_f = torch.mean((u_tx[:, 0:1] + u * u_tx[:, 1:2]) ** 2)
    elif mode == "ac":
        loss_f = torch.mean(u ** 3)
    loss = weight * loss_f + torch.mean((u - 0.5) ** 2)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_a_gradient_taken_in_a_branch_of_outputs_computed_statements_before_the_if():
    from test_fresh28_causes import _convert
    from test_fresh2_causes import _losses

    code = _convert(BRANCH_GRAD_LATER)
    assert "grad_graph" in code and "else:" in code, code
    t, m = _losses(BRANCH_GRAD_LATER, "torch_branch43"), _losses(code, "ms_branch43")
    assert len(t) == len(m) == 5, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
