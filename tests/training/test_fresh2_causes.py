"""Causes found by the training corpus's first contact with seven more repositories (benchmarks/training/, session
note trainfresh2.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert, _run_boot


def _losses(code: str, name: str) -> list[list[float]]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return [[float(v) for v in line.split()[1:]] for line in out.getvalue().splitlines() if line.startswith("step")]


SIDE_BY_SIDE = '''
import torch
import torch.nn as nn

x = torch.tensor([[0.5, -1.0], [1.5, 0.25], [-0.3, 0.8], [0.9, -0.6]])
y = torch.tensor([[1.0], [-0.5], [0.25], [0.75]])
net_plain, net_decay = nn.Linear(2, 1), nn.Linear(2, 1)
with torch.no_grad():
    for net in (net_plain, net_decay):
        net.weight.copy_(torch.tensor([[0.3, -0.2]]))
        net.bias.fill_(0.1)
opt_plain = torch.optim.SGD(net_plain.parameters(), lr=0.1, momentum=0.9)
opt_decay = torch.optim.SGD(net_decay.parameters(), lr=0.1, momentum=0.9, weight_decay=0.5)
loss_func = nn.MSELoss()
for epoch in range(6):
    pred_plain, pred_decay = net_plain(x), net_decay(x)
    loss_plain, loss_decay = loss_func(pred_plain, y), loss_func(pred_decay, y)
    opt_plain.zero_grad()
    opt_decay.zero_grad()
    loss_plain.backward()
    loss_decay.backward()
    opt_plain.step()
    opt_decay.step()
    print("step", loss_plain.item(), loss_decay.item())
'''


def test_two_models_side_by_side_with_tuple_assigned_losses():
    """zhangxiann/l2_regularization, dropout_regularization: two models compared side by side compute both predictions,
    then both losses, in one tuple assignment each, then call backward on each loss. The second backward found every
    forward statement already used by the first ('loss_decay is differentiated again after its graph was used':
    MP105, the port crashed on Tensor.backward). Split into one statement per target, each loss has its own forward."""
    code = _convert(SIDE_BY_SIDE)
    assert "import torch" not in code and ".backward()" not in code, code
    t, m = _losses(SIDE_BY_SIDE, "torch_side_by_side"), _losses(code, "ms_side_by_side")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4)
    assert t[-1][0] < t[0][0] and t[-1][1] != t[-1][0]  # both learn; weight decay makes the second curve differ


SWAP = '''
import torch
import torch.nn as nn

net = nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
a, b = torch.ones(3, 2), torch.zeros(3, 2)
for epoch in range(2):
    a, b = b, a
    loss = net(a).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
'''


def test_a_swap_is_never_split():
    """The split applies only where no value reads a target (``a, b = b, a`` swaps: split, it would not)."""
    from mindport.migrator.rules.training_region import split_parallel
    import libcst as cst

    body = list(cst.parse_module("a, b = b, a\nx, y = f(u), g(u)\n").body)
    out = split_parallel(body)
    assert [cst.Module(body=[s]).code.strip() for s in out] == ["a, b = b, a", "x = f(u)", "y = g(u)"]
    assert split_parallel(body[:1]) is None
    assert "a, b = b, a" in _convert(SWAP)


NORMAL_SIZE = '''
import torch

torch.manual_seed(1)
train_x = torch.linspace(-1, 1, 20).unsqueeze_(1)
noise = torch.normal(0, 0.5, size=train_x.size())
more = torch.normal(2.0, 0.1, (4, 3))
print("shapes", tuple(noise.shape), tuple(more.shape))
print("stats", float(noise.std()) > 0.2, float(noise.std()) < 0.9, abs(float(more.mean()) - 2.0) < 0.2)
'''


def test_normal_with_float_mean_std_and_size():
    """zhangxiann/l2_regularization: ``torch.normal(0, 0.5, size=x.size())`` (the float form with a size) was MP102
    'unexpected keyword argument size' and stayed torch: the port still needed torch."""
    code = _convert(NORMAL_SIZE)
    assert "torch" not in code.replace("mindport", ""), code
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, "ms_normal_size")
    assert out.getvalue().splitlines() == ["shapes (20, 1) (4, 3)", "stats True True True"], out.getvalue()


OPTIMIZER_PER_SETTING = '''
import torch
import torch.nn as nn
import torch.optim as optim

x_data = torch.tensor([[0.5], [1.0], [-1.5], [2.0]])
y_data = 3 * x_data - 1


def func(x):
    return torch.pow(2 * x, 2)


for i, lr in enumerate([0.01, 0.03]):
    x = torch.tensor([2.], requires_grad=True)
    optimizer = optim.SGD([x], lr=lr, momentum=0.63 if i == 0 else 0.0)
    for it in range(4):
        y = func(x)
        y.backward()
        optimizer.step()
        optimizer.zero_grad()
        print("step", y.item())
for lr in (0.05, 0.1):
    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.5)
        model.bias.fill_(0.0)
    opt = optim.Adam(model.parameters(), lr=lr)
    for epoch in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x_data), y_data)
        loss.backward()
        opt.step()
        print("step", loss.item())
'''


def test_an_optimizer_built_per_setting_in_an_outer_loop():
    """zhangxiann/momentum, learning_rate: one optimizer (and leaf, or model) per setting, built in an outer loop, the
    steps in the inner one. forward_fn/grad_fn went before the outermost loop, where grad_fn read the optimizer before
    it existed (NameError: name 'optimizer' is not defined); they go inside the loop that builds it."""
    code = _convert(OPTIMIZER_PER_SETTING)
    assert "import torch" not in code, code
    t, m = _losses(OPTIMIZER_PER_SETTING, "torch_per_setting"), _losses(code, "ms_per_setting")
    assert len(t) == len(m) == 14, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4)


TYPE_TENSOR = '''
import numpy as np
import torch

a = np.arange(6).reshape(2, 3)
x = torch.from_numpy(a).type(torch.Tensor)
y = torch.from_numpy(a.astype(np.float64) / 4).type(torch.Tensor).view(-1)
print("step", str(x.dtype).split(".")[-1].lower(), str(y.dtype).split(".")[-1].lower(), float(x.sum()), float(y[-1]))
'''


def test_type_of_the_tensor_class_is_the_default_float():
    """jessicayung/lstm_ar: ``torch.from_numpy(data).type(torch.Tensor)`` (torch.Tensor is the default tensor type,
    float32) became a cast to ``ms.Tensor``: NotImplementedError 'The python type Tensor cannot be converted to
    MindSpore type'."""
    code = _convert(TYPE_TENSOR)
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, "ms_type_tensor")
    assert out.getvalue().split() == ["step", "float32", "float32", "15.0", "1.25"], out.getvalue()


MORE_WORKERS_THAN_CORES = '''
import os
import torch
from torch.utils.data import Dataset, DataLoader


def main(workers):
    data = torch.arange(20, dtype=torch.float32)

    class Windows(Dataset):  # defined in a function: not picklable into worker processes
        def __len__(self):
            return len(data) - 4

        def __getitem__(self, idx):
            return data[idx:idx + 4], data[idx + 1:idx + 5]

    loader = DataLoader(dataset=Windows(), batch_size=5, num_workers=workers, shuffle=False, drop_last=False)
    for x, y in loader:
        print("step", float(x.sum()), float(y.sum()), int(x.shape[0]))


main((os.cpu_count() or 1) + 2)
'''


def test_a_loader_with_more_workers_than_cores():
    """world4ai/char_lstm: ``DataLoader(..., num_workers=4, shuffle=False)`` became ``GeneratorDataset(...,
    num_parallel_workers=max(1, 4))``: MindSpore refuses more workers than cores ('num_parallel_workers exceeds the
    boundary between 1 and 2') and would pickle a Dataset class defined in a function. The workers only change speed:
    not passed on."""
    code = _convert(MORE_WORKERS_THAN_CORES)
    assert "num_parallel_workers" not in code, code
    t, m = _losses(MORE_WORKERS_THAN_CORES, "torch_workers"), _losses(code, "ms_workers")
    assert len(t) == 4 and m == t, (t, m, code)


# --- the corpus harness (benchmarks/training/boot.py) ------------------------------------------------------------

def test_tracked_normal_draws_the_same_numbers_on_both_sides(tmp_path):
    """zhangxiann/logistic_regression, l2_regularization: the data come from ``torch.normal`` (tensor mean, and float
    mean/std with a size); the tracker did not share it, so the two sides trained on other data (first loss 0.8746
    vs 0.8564)."""
    torch_side = ("import torch\nm = torch.ones(3, 2)\na = torch.normal(1.7 * m, 1)\nb = torch.normal(0, 0.5, size=(4, 1))\n"
                  "print([round(float(v), 6) for v in torch.cat([a.flatten(), b.flatten()])])\n")
    ms_side = ("import mindspore as ms\nfrom mindspore import ops\nm = ops.ones((3, 2))\n"
               "a = ops.normal(mean=1.7 * m, stddev=1, shape=ops.shape((1.7 * m) + (1)))\n"
               "b = ops.normal(mean=0, stddev=0.5, shape=(4, 1))\n"
               "print([round(float(v), 6) for v in ops.cat([a.flatten(), b.flatten()])])\n")
    t = _run_boot(tmp_path, "torch", "track", torch_side)
    assert t == _run_boot(tmp_path, "mindspore", "track", ms_side)
    assert len(set(eval(t))) == 10
