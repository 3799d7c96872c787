"""Causes met on first contact with the training scripts of benchmarks/training/fresh34.json, each a class with a
fixture of our own, run in real torch and real MindSpore; expected values come from torch.

``torch.autograd.gradcheck`` (aman-17/pytorch-tutorial's backprop exercise checks its custom ReLU Function with it
before training with it): no mapping entry, so the call stayed torch's (MP103) with the converted Function's
``MyReLU.apply`` still in it, and torch refused the MindSpore input ("gradcheck expects at least one input tensor to
require gradient"). Now ``mindport.runtime.training.gradcheck``: central differences against ``mindspore.vjp``'s
Jacobian, and ``F.apply`` handed over as a function is the Cell ``F()`` (its bprop is what is checked)."""
from __future__ import annotations

from test_fresh_causes import _convert, _printed as _run


GRADCHECK = '''
import torch


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


class HalfSquare(torch.autograd.Function):
    """A wrong backward: x * x's gradient is 2x, this gives x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x


x = torch.linspace(-1.3, 1.1, 15, dtype=torch.double).reshape(5, 3).requires_grad_(True)
w = torch.linspace(0.5, -0.4, 6, dtype=torch.double).reshape(3, 2).requires_grad_(True)
print("relu", torch.autograd.gradcheck(MyReLU.apply, (x,), eps=1e-6, atol=1e-4))
print("wrong", torch.autograd.gradcheck(HalfSquare.apply, (x,), raise_exception=False))
print("two", torch.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, w)))
print("single", torch.autograd.gradcheck(torch.sigmoid, x))
try:
    torch.autograd.gradcheck(HalfSquare.apply, (x,))
    print("raised", False)
except RuntimeError as e:
    print("raised", "Jacobian mismatch for output 0 with respect to input 0" in str(e))
'''


def test_gradcheck_of_a_custom_function_and_of_plain_functions_answers_as_torchs():
    code = _convert(GRADCHECK)
    assert "import torch" not in code, code
    assert "gradcheck(MyReLU()," in code, code
    torch_lines = _run(GRADCHECK, "gradcheck_torch")
    ms_lines = _run(code, "gradcheck_ms")
    assert torch_lines == ms_lines == {"relu": ["True"], "wrong": ["False"], "two": ["True"], "single": ["True"],
                                       "raised": ["True"]}, (torch_lines, ms_lines)


# MAML (wwangxinhao/pytorch-tutorials' meta-learning tutorial): the inner step takes
# ``torch.autograd.grad(loss, fast_weights.values(), create_graph=True)`` over a dict of the model's parameters by
# name, in a method the meta-step's backward region calls. The inputs were not names, so MP105 left the call to
# torch ("iteration over a 0-d tensor"). Now the statements computing the loss from the dict become a function of
# the dict, differentiated over its values (mindport.runtime.training.grad_graph_values); and cross_entropy's pick
# of the targets (GatherD, whose gradient MindSpore 2.10 cannot differentiate again: "The pointer[value] is null")
# runs there as a one-hot product.
MAML = '''
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(self.features(x))


class MAML:
    def __init__(self, model, inner_lr=0.1, inner_steps=2):
        self.model = model
        self.inner_lr = inner_lr
        self.inner_steps = inner_steps
        self.meta_optimizer = torch.optim.Adam(self.model.parameters(), lr=0.01)

    def inner_loop(self, x, y):
        fast_weights = OrderedDict(self.model.named_parameters())
        for step in range(self.inner_steps):
            logits = self.functional_forward(x, fast_weights)
            loss = F.cross_entropy(logits, y)
            grads = torch.autograd.grad(loss, fast_weights.values(), create_graph=True)
            fast_weights = OrderedDict(
                (name, param - self.inner_lr * grad)
                for (name, param), grad in zip(fast_weights.items(), grads)
            )
        return fast_weights

    def functional_forward(self, x, params):
        x = F.relu(F.linear(x, params['features.0.weight'], params['features.0.bias']))
        return F.linear(x, params['classifier.weight'], params['classifier.bias'])

    def meta_train_step(self, tasks):
        meta_loss = 0
        for sx, sy, qx, qy in tasks:
            fast_weights = self.inner_loop(sx, sy)
            meta_loss += F.cross_entropy(self.functional_forward(qx, fast_weights), qy)
        meta_loss = meta_loss / len(tasks)
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()
        return meta_loss.item()


model = Net()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.7 + k).reshape(p.shape) * 0.4)
maml = MAML(model)


def task(shift):
    x = torch.sin(torch.arange(60, dtype=torch.float32) * 0.37 + shift).reshape(10, 6)
    y = torch.arange(10) % 3
    return x[:5], y[:5], x[5:], y[5:]


for episode in range(6):
    tasks = [task(episode + 0.5 * t) for t in range(2)]
    print("meta", maml.meta_train_step(tasks))
sx, sy, qx, qy = task(9.0)
fw = maml.inner_loop(sx, sy)
print("adapted", F.cross_entropy(maml.functional_forward(qx, fw), qy).item())
'''


def _close(ms_lines: dict, torch_lines: dict, rtol: float = 1e-4, atol: float = 1e-6) -> None:
    assert set(ms_lines) == set(torch_lines), (ms_lines, torch_lines)
    for key, values in torch_lines.items():
        got = [float(v) for v in ms_lines[key]]
        assert len(got) == len(values), (key, got, values)
        for a, b in zip(got, map(float, values)):
            assert abs(a - b) <= atol + rtol * abs(b), (key, got, values)


def test_maml_fast_weights_dict_gradient_with_create_graph_tracks_torch():
    code = _convert(MAML)
    assert "MP105" not in code and "import torch" not in code, code
    assert ".grad_graph_values(" in code, code
    torch_lines = _run(MAML, "maml_torch")
    _close(_run(code, "maml_ms"), torch_lines)
    meta = [float(v) for v in torch_lines["meta"]]
    assert len(meta) == 6 and len(set(meta)) == 6  # the meta-step moves the weights


# A gradient penalty over ``tanh(x @ w)`` (torch.autograd.grad(create_graph=True) with respect to the input, then
# backward into w): MindSpore 2.10 differentiates MatMulExt's gradient (``x @ w``, ops.matmul) again wrongly with
# respect to w, silently (the first loss equal, the next ones off by 10x and growing). In the twice-differentiable
# context of grad_graph the product runs as ops.MatMul / ops.BatchMatMul, whose second derivatives are right.
MATMUL_PENALTY = '''
import torch

x = torch.linspace(-1.0, 1.0, 12).reshape(3, 4).requires_grad_(True)
xb = torch.linspace(-1.0, 1.0, 24).reshape(2, 3, 4).requires_grad_(True)
w = torch.nn.Parameter(torch.linspace(0.2, 1.4, 16).reshape(4, 4))
opt = torch.optim.SGD([w], lr=0.05)
for step in range(4):
    h = torch.tanh(x @ w)
    g = torch.autograd.grad(h[:, :2].pow(2).sum(), x, create_graph=True)[0]
    hb = torch.sin(xb @ w)
    gb = torch.autograd.grad(hb.pow(2).sum(), xb, create_graph=True)[0]
    loss = g.pow(2).sum() + 0.1 * gb.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("penalty", loss.item())
'''


def test_a_gradient_penalty_through_a_matmul_tracks_torch():
    code = _convert(MATMUL_PENALTY)
    assert "MP105" not in code and "import torch" not in code, code
    torch_lines = _run(MATMUL_PENALTY, "matmul_torch")
    _close(_run(code, "matmul_ms"), torch_lines)
    penalty = [float(v) for v in torch_lines["penalty"]]
    assert penalty[-1] < penalty[0]


# Leaf tensors (requires_grad=True) handed to an optimizer through a list named first, in a function
# (aman-17's spiral classifier: params = [W1, b1, W2, b2]; torch.optim.SGD(params, lr=1.0)): the Parameter rewrite
# looked for the tensors' names in the optimizer call only, so they stayed plain tensors and MindSpore's optimizer
# refused them ("Optimizer can only optimize Parameters").
LIST_OF_LEAVES = '''
import torch
import torch.nn.functional as F


def train(steps):
    x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    W = (torch.linspace(-0.3, 0.4, 12).reshape(4, 3)).requires_grad_(True)
    b = torch.zeros(3, requires_grad=True)
    params = [W, b]
    opt = torch.optim.SGD(params, lr=0.5)
    for step in range(steps):
        loss = F.cross_entropy(x @ W + b, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("loss", loss.item())


train(5)
'''


def test_leaves_handed_to_an_optimizer_through_a_named_list_train_as_torchs():
    code = _convert(LIST_OF_LEAVES)
    assert "W = ms.Parameter(" in code and "b = ms.Parameter(" in code, code
    torch_lines = _run(LIST_OF_LEAVES, "leaves_torch")
    _close(_run(code, "leaves_ms"), torch_lines)
    losses = [float(v) for v in torch_lines["loss"]]
    assert len(losses) == 5 and losses[-1] < losses[0]


def test_a_gan_step_draws_its_inline_noise_once_as_torch(tmp_path):
    """Known open item of fresh33 (isaac-dunn/gan-tutorial): ``gen_batch = g(torch.randn(...))`` read by the
    discriminator's and the generator's backward regions was computed in both forward_fns, so the generator's step
    drew new noise. The draw is now a statement of its own before the step (as ``noise = torch.randn(...)`` is);
    run through the corpus tracker (the same random stream and weights on both sides), every loss is torch's."""
    from test_train23_causes import _tracks

    from _harness import convert

    _, code = convert("step_gan_inline_draw.py")
    assert code.count("ops.randn(8, g[0].in_channels)") == 1, code
    worst = _tracks(tmp_path, "step_gan_inline_draw.py")
    assert set(worst) == {"d", "g"} and max(worst.values()) <= 1e-4, worst


# Known open item: a backward called alone on an expression that computes the loss (``criterion(model(x), y)
# .backward()`` after the loop, at module level). No statement before it computes the loss, so the region took every
# statement binding what the expression reads: the model's and the data's construction went into forward_fn, hoisted
# above the optimizer built on the model ("name 'opt' is not defined" / a model the file had not made). The loss is
# now a statement of its own before the backward.
BARE_LOSS_BACKWARD = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.5, 0.4, 8).reshape(2, 4))
    model.bias.fill_(0.1)
criterion = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
y = torch.linspace(0.0, 1.0, 8).reshape(4, 2)
for step in range(3):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    print("loss", loss.item())
opt.zero_grad()
criterion(model(x), y).backward()
print("grad", model.weight.grad.abs().sum().item())
opt.step()
print("after", criterion(model(x), y).item())
'''


def test_a_bare_backward_of_a_loss_expression_after_the_loop_runs_as_torchs():
    code = _convert(BARE_LOSS_BACKWARD)
    assert code.index("model = ") < code.index("def forward_fn"), code
    torch_lines = _run(BARE_LOSS_BACKWARD, "bare_torch")
    _close(_run(code, "bare_ms"), torch_lines)
    assert len(torch_lines["loss"]) == 3 and len(torch_lines["grad"]) == 1
