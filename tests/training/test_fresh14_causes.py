"""Session trainfresh14 (issue 27): causes found at first contact with the fresh14 entries. One test each, on real
torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

OPTIMIZERS_IN_TURN = '''
import torch

x = torch.tensor([3.0], requires_grad=True)
for step in range(4):
    loss = (x - 1.0) ** 2
    loss.backward()
    with torch.no_grad():
        x -= 0.1 * x.grad
    x.grad.zero_()
    print("step", loss.item(), x.item())

x = torch.tensor([3.0], requires_grad=True)
opt_sgd = torch.optim.SGD([x], lr=0.1, momentum=0.9)
for step in range(4):
    opt_sgd.zero_grad()
    loss = (x - 1.0) ** 2
    loss.backward()
    opt_sgd.step()
    print("step", loss.item(), x.item())

x = torch.tensor([3.0], requires_grad=True)
opt_adam = torch.optim.Adam([x], lr=0.3)
for step in range(4):
    opt_adam.zero_grad()
    loss = (x - 1.0) ** 2
    loss.backward()
    opt_adam.step()
    print("step", loss.item(), x.item())
'''


def test_a_loop_does_not_name_optimizers_made_after_it():
    """ashworks/optimizers (pytorch/07_optimizer.py): one scalar minimised in turn by hand, then by SGD, momentum,
    Adam, AdamW, each optimizer made right before its loop. The loop rule took every optimizer the module steps as
    the weight sources of each loop's value_and_grad, so the first loop named optimizers not yet made (NameError, first
    run fresh14). An optimizer the scope binds only after the loop is left out."""
    code = _convert(OPTIMIZERS_IN_TURN)
    t, m = _losses(OPTIMIZERS_IN_TURN, "torch_opts_in_turn"), _losses(code, "ms_opts_in_turn")
    assert len(t) == len(m) == 12, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)


TARGET_SWAPPED_IN_ONE_BRANCH = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
labels = torch.tensor([0, 1, 2, 1, 0, 2])
model = nn.Linear(4, 3)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.4, 0.5, 12).reshape(3, 4))
    model.bias.copy_(torch.tensor([0.1, -0.1, 0.05]))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
perm = torch.tensor([3, 0, 5, 1, 4, 2])
for step in range(6):
    data, target = x, labels
    mix = step % 2 == 1
    if mix:
        target_a, target_b = target, target[perm]
    output = model(data)
    if mix:
        loss = 0.7 * criterion(output, target_a) + 0.3 * criterion(output, target_b)
        target = target_b
    else:
        loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    acc = (output.argmax(1) == target).float().mean()
    print("step", loss.item(), acc.item())
'''


def test_a_name_one_branch_assigns_and_the_other_reads_comes_into_the_forward():
    """bag/default (siahuat0727/bag-of-tricks main.py): ``if mixup: loss = ...; target = target_a if lam >= 0.5 else
    target_b`` / ``else: loss = criterion(output, target)`` inside the differentiated region. Its reads-before-writes
    walk went through the branches in order, took ``target`` as assigned by the first and read nothing from outside:
    forward_fn raised UnboundLocalError on the else path (first run, fresh14). The two branches are now apart."""
    code = _convert(TARGET_SWAPPED_IN_ONE_BRANCH)
    t, m = _losses(TARGET_SWAPPED_IN_ONE_BRANCH, "torch_branch_swap"), _losses(code, "ms_branch_swap")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]


LOSS_WITH_OWN_TRAIN_AND_EVAL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmoothCE(nn.CrossEntropyLoss):
    def __init__(self, eps=0.0):
        super(SmoothCE, self).__init__()
        self.eps = eps
        self.train()

    def train(self):
        self.forward = self.forward_smooth

    def eval(self):
        self.forward = super(SmoothCE, self).forward

    def forward_smooth(self, output, target):
        one_hot = torch.zeros_like(output).scatter(1, target.view(-1, 1), 1)
        smooth = one_hot * (1 - self.eps) + (1 - one_hot) * self.eps / (output.size(1) - 1)
        return -(smooth * F.log_softmax(output, dim=1)).sum(dim=1).mean()


x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
y = torch.tensor([0, 1, 2, 1, 0, 2])
model = nn.Linear(4, 3)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.4, 0.5, 12).reshape(3, 4))
    model.bias.copy_(torch.tensor([0.1, -0.1, 0.05]))
criterion = SmoothCE(0.2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(4):
    model.train()
    criterion.train()
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    criterion.eval()
    with torch.no_grad():
        plain = criterion(model(x), y)
    print("step", loss.item(), plain.item())
'''


def test_a_losss_own_train_and_eval_without_mode_run_as_in_torch():
    """bag/smooth_warmup_cosine (utils/tricks/label_smoothing.py): a CrossEntropyLoss subclass whose ``train(self)``
    and ``eval(self)`` rebind ``self.forward`` (smoothed in training, plain in evaluation). The override became
    ``set_train`` marked train_override and was called with a mode it does not take (TypeError, first run fresh14),
    and ``criterion.eval()`` (``set_train(False)``) never reached the class's own ``eval``. A train override without
    ``mode`` is called without it; the class's own ``eval(self)`` is marked eval_override, which set_train(False)
    calls."""
    code = _convert(LOSS_WITH_OWN_TRAIN_AND_EVAL)
    assert "eval_override" in code, code
    t, m = _losses(LOSS_WITH_OWN_TRAIN_AND_EVAL, "torch_own_eval"), _losses(code, "ms_own_eval")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert all(a != b for a, b in t)  # the smoothed training loss and the plain evaluation loss differ


MODEL_METHODS_BEFORE_THE_LOSS = '''
import torch
import torch.nn as nn


class Pairs(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_embed = nn.Embedding(6, 3)
        self.out_embed = nn.Embedding(6, 3)
        with torch.no_grad():
            self.in_embed.weight.copy_(torch.linspace(-0.5, 0.5, 18).reshape(6, 3))
            self.out_embed.weight.copy_(torch.linspace(0.4, -0.3, 18).reshape(6, 3))

    def forward_input(self, words):
        return self.in_embed(words)

    def forward_target(self, words):
        return self.out_embed(words)


def pair_loss(inp, out):
    return -torch.log(torch.sigmoid((inp * out).sum(1))).mean()


model = Pairs()
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
centers, contexts = torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 3, 4])
for step in range(5):
    inp = model.forward_input(centers)
    out = model.forward_target(contexts)
    loss = pair_loss(inp, out)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_a_models_own_methods_feeding_the_loss_are_differentiated():
    """skipgram/negsampling (lukysummer's SkipGram_NegativeSampling.py): the embeddings come from the model's own
    methods (``model.forward_input(inputs)``, ``model.forward_target(targets)``) before ``loss = criterion(...)``. The
    model was never called as ``model(...)``, so those statements did not count as forward ones and stayed outside
    forward_fn: the loss was differentiated against constants, every gradient zero, the embeddings never moved
    (silent: the port ran). A model whose parameters the file hands out now makes its readers forward statements."""
    code = _convert(MODEL_METHODS_BEFORE_THE_LOSS)
    t, m = _losses(MODEL_METHODS_BEFORE_THE_LOSS, "torch_model_methods"), _losses(code, "ms_model_methods")
    assert len(t) == len(m) == 5, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1] < t[0]
