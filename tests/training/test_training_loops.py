"""Each script is a torch training loop of one shape. Converted by mindport, it must train on MindSpore: same data,
same initial weights, SGD, and the first 20 losses equal torch's within 1e-4 relative."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from _harness import assert_losses_match, convert, load_module, regression_data, twin_models

REGRESSION = [
    ("loop_plain.py", "MLP", {}),                       # zero_grad / forward / loss / backward / step
    ("loop_scheduler.py", "MLP", {}),                   # + StepLR, momentum, torch.save
    ("loop_clip.py", "MLP", {}),                        # + clip_grad_norm_
    ("loop_amp.py", "MLP", {}),                         # autocast + GradScaler (scale, unscale_, step, update)
    ("loop_accum.py", "MLP", {}),                       # gradient accumulation every 2 micro-batches
    ("loop_after.py", "MLP", {}),                       # step values read after the loop; total = clip_grad_norm_
    ("loop_custom_optimizer.py", "MLP", {}),            # a hand-written Optimizer subclass (state, momentum, decay)
    ("loop_no_zero_grad.py", "MLP", {}),                # no zero_grad: every step applies the running sum
]


@pytest.mark.parametrize(("script", "cls", "kwargs"), REGRESSION, ids=[s for s, _, _ in REGRESSION])
def test_loop_trains_like_torch(script, cls, kwargs):
    import torch

    source, converted = convert(script)
    t_mod, m_mod = load_module(source, "torch_" + script), load_module(converted, "ms_" + script)
    t_model, m_model = twin_models(t_mod, m_mod, cls)
    X, Y = regression_data()
    t_losses = t_mod.train(t_model, torch.from_numpy(X), torch.from_numpy(Y), **kwargs)
    m_losses = m_mod.train(m_model, X, Y, **kwargs)
    assert_losses_match(t_losses, m_losses)


def test_train_validate_pair():
    import mindspore as ms
    import torch

    source, converted = convert("loop_train_eval.py")
    t_mod, m_mod = load_module(source, "torch_pair"), load_module(converted, "ms_pair")
    t_model, m_model = twin_models(t_mod, m_mod, "ConvNet")
    rng = np.random.default_rng(1)
    X = rng.standard_normal((64, 1, 8, 8)).astype(np.float32)
    Y = (X[:, 0, :4].mean(axis=(1, 2)) > 0).astype(np.int64) + (X[:, 0, 4:].mean(axis=(1, 2)) > 0.2)
    t_losses, t_acc = t_mod.train(t_model, torch.from_numpy(X), torch.from_numpy(Y), torch.nn.CrossEntropyLoss())
    # MindSpore's CrossEntropyLoss takes int32 class labels
    m_losses, m_acc = m_mod.train(m_model, X, Y.astype(np.int32), ms.nn.CrossEntropyLoss())
    assert_losses_match(t_losses, m_losses)
    assert t_acc == m_acc


UNFIT = '''
import torch

def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward(create_graph=True)
        optimizer.step()
'''


NESTED_NO_ZERO_GRAD = '''
import torch

def train(model, X, Y, epochs=4):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        for i in range(0, len(X), 16):
            loss = ((model(X[i:i + 16]) - Y[i:i + 16]) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
'''


def test_nested_loop_without_zero_grad_sums_like_torch():
    # the outer loop resets .grad, the inner one adds every backward to it and steps on the running sum
    import mindspore as ms
    import torch

    from mindport import convert_source

    result = convert_source(NESTED_NO_ZERO_GRAD + MLP_CLASS)
    assert not result.diagnostics, result.code
    t_mod = load_module(NESTED_NO_ZERO_GRAD + MLP_CLASS_TORCH, "torch_nested")
    m_mod = load_module(result.code, "ms_nested")
    t_model, m_model = twin_models(t_mod, m_mod, "MLP")
    X, Y = regression_data()
    t_losses = t_mod.train(t_model, torch.from_numpy(X), torch.from_numpy(Y))
    assert_losses_match(t_losses, m_mod.train(m_model, ms.Tensor(X), ms.Tensor(Y)), n=16)


MLP_CLASS_TORCH = '''

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x)
'''
MLP_CLASS = MLP_CLASS_TORCH


def test_unfit_loop_gets_mp105_and_parses():
    from mindport import convert_source

    result = convert_source(UNFIT)
    codes = [d.code for d in result.diagnostics]
    assert "MP105" in codes
    diag = next(d for d in result.diagnostics if d.code == "MP105")
    assert "create_graph" in diag.message and "value_and_grad" in diag.suggestion
    ast.parse(result.code)
    assert "# mindport: MP105" in result.code


def test_backward_outside_a_loop_becomes_the_step_of_its_function():
    # a train_step function: its forward becomes forward_fn, backward adds into .grad, step reads it
    from mindport import convert_source

    source = ("import torch\n\n\ndef train_step(model, opt, x, y):\n    opt.zero_grad()\n"
              "    loss = torch.nn.functional.mse_loss(model(x), y)\n    loss.backward()\n    opt.step()\n"
              "    return loss\n")
    result = convert_source(source)
    assert not result.diagnostics, result.code
    assert "mp_train.backward(grads)" in result.code and "opt(mp_train.grads_of(opt))" in result.code
    assert ".backward()" not in result.code


def test_dataset_subclass_over_tensors_iterates_like_torch():
    # GeneratorDataset passes numpy integers to __getitem__, which MindSpore tensors refuse as indices
    import mindspore as ms
    import torch

    from mindport import convert_source

    source = ('import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Pairs(Dataset):\n'
              '    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n    def __len__(self):\n'
              '        return len(self.x)\n\n    def __getitem__(self, i):\n        """One pair."""\n'
              '        return self.x[i] * 2, self.y[i]\n\n\ndef sums(x, y):\n'
              '    loader = DataLoader(Pairs(x, y), batch_size=4)\n'
              '    return [float(xb.sum()) + float(yb.sum()) for xb, yb in loader]\n')
    result = convert_source(source)
    assert not result.diagnostics, result.code
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "torch_data", "exec"), t_ns)
    exec(compile(result.code, "ms_data", "exec"), m_ns)
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10, dtype=np.int64)
    expected = t_ns["sums"](torch.from_numpy(x), torch.from_numpy(y))
    assert m_ns["sums"](ms.Tensor(x), ms.Tensor(y)) == expected
