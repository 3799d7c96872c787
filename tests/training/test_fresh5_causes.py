"""Causes found by the training corpus's first contact with eight more repositories (benchmarks/training/, session
note trainfresh5.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

ATTRIBUTE_SET_ON_A_GLOBAL_MODEL = '''
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = 1.0

    def forward(self, x):
        return self.fc(x) * self.scale


def update(mode):
    total = 0.0
    for xb, yb in batches:
        if mode == 'train':
            model.zero_grad()
        model.scale = 0.5 + 0.5 * len(yb) / 4
        output = model(xb)
        loss = loss_function(output, yb)
        if mode == 'train':
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(batches)


x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])
batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 8, 4)]
model = Net()
with torch.no_grad():
    model.fc.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 6, dtype=np.float32).reshape(2, 3)))
    model.fc.bias.fill_(0.1)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(4):
    print("step", update('train'), update('val'))
'''


def test_attribute_set_on_a_global_model_inside_the_step():
    """mazzamani/lstm_collate: ``model.hidden = model.init_hidden()`` before the forward, in a function ``update(mode)``
    whose ``model`` is the script's global. An attribute store counted as a write of ``model``, so the general backward
    region took ``model`` as state carried across steps and rebound it (``(loss, model, output), grads =
    grad_fn(model)``): ``model`` became a local of ``update`` read before assignment (UnboundLocalError). An object
    mutated through an attribute is the same object: it is neither passed in nor handed back."""
    code = _convert(ATTRIBUTE_SET_ON_A_GLOBAL_MODEL)
    assert "import torch" not in code, code
    t, m = _losses(ATTRIBUTE_SET_ON_A_GLOBAL_MODEL, "torch_attr_global"), _losses(code, "ms_attr_global")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


ONE_CYCLE_WITH_ADAM = '''
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import OneCycleLR

x = torch.tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4))
y = torch.tensor(np.sin(np.arange(8, dtype=np.float32)).reshape(8, 1))
model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.tensor(np.cos(np.arange(p.numel(), dtype=np.float32) + i).reshape(p.shape) * 0.4))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = OneCycleLR(optimizer, max_lr=0.05, epochs=4, steps_per_epoch=2, anneal_strategy='linear')
loss_fn = nn.MSELoss()
for epoch in range(4):
    for i in range(2):
        xb, yb = x[i * 4:(i + 1) * 4], y[i * 4:(i + 1) * 4]
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        scheduler.step()
    print("step", loss.item(), scheduler.get_last_lr()[0], optimizer.param_groups[0]["betas"][0])
'''


def test_one_cycle_schedule_cycles_the_rate_and_adams_beta1():
    """dvgodoy/sbs_onecycle_resume: ``OneCycleLR`` was MP101 (MindSpore 2.10 has none) and stayed torch's class, which
    refused the converted optimizer ('SGD is not an Optimizer'). The runtime scheduler steps torch's rate and moves
    the momentum (here Adam's beta1) the other way, in the param groups, as torch does."""
    code = _convert(ONE_CYCLE_WITH_ADAM)
    assert "import torch" not in code and "OneCycleLR" in code, code
    t, m = _losses(ONE_CYCLE_WITH_ADAM, "torch_one_cycle"), _losses(code, "ms_one_cycle")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


DEVICE_HELPER_BEFORE_THE_OTHER_IMPORTS = '''
import torch

def get_best_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    elif torch.backends.mps.is_available():
        return torch.device("mps")
    else:
        return torch.device("cpu")

import numpy as np
import torch.nn as nn

device = get_best_device()
x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)).to(device)
y = torch.tensor(np.cos(np.arange(8, dtype=np.float32)).reshape(8, 1)).to(device)
model = nn.Linear(3, 1).to(device)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(4):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_device_helper_annotated_before_the_other_imports():
    """artintellica/dataset_device: ``import torch`` first, then a device helper annotated ``-> torch.device`` that asks
    ``torch.backends.mps.is_available()``, then ``import torch.nn as nn``. The mps check had no entry (MP103), so the
    first ``import torch`` stayed and the MindSpore imports went where the first *removed* torch import was, after
    the helper: its annotation ``mp_framework.device`` raised NameError at definition. MindSpore has no MPS backend
    (the check is False), and the MindSpore imports go right after the first torch import in any case."""
    code = _convert(DEVICE_HELPER_BEFORE_THE_OTHER_IMPORTS)
    assert "import torch" not in code, code
    t, m = _losses(DEVICE_HELPER_BEFORE_THE_OTHER_IMPORTS, "torch_device_helper"), _losses(code, "ms_device_helper")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


def test_first_torch_import_kept_gets_the_mindspore_imports_after_it():
    """The placement alone: a torch name the converter keeps (here ``torch.backends.mkldnn``, no entry; it was
    ``torch.xpu`` until batch26 mapped torch.xpu.is_available() to False) keeps the first ``import torch``; the
    MindSpore imports follow it, before the function whose annotation needs them."""
    source = DEVICE_HELPER_BEFORE_THE_OTHER_IMPORTS.replace("torch.backends.mps.is_available()",
                                                            "torch.backends.mkldnn.is_available()")
    from mindport import convert_source

    code = convert_source(source, "script.py").code
    lines = code.splitlines()
    first_def = next(i for i, l in enumerate(lines) if l.startswith("def get_best_device"))
    framework = next(i for i, l in enumerate(lines) if "import framework as mp_framework" in l)
    assert framework < first_def, code


DUMMY_OPTIMIZER_FOR_EVALUATION = '''
import numpy as np
import torch
import torch.nn as nn


class DummyOptimizer(torch.optim.Optimizer):
    def __init__(self):
        self.param_groups = [{"lr": 0}]
        None

    def step(self):
        None

    def zero_grad(self, set_to_none=False):
        None


def run_epoch(batches, model, optimizer, mode="train"):
    total = 0.0
    for xb, yb in batches:
        loss = nn.functional.mse_loss(model(xb), yb)
        if mode == "train":
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        total += loss.item()
    return total / len(batches)


x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor(np.cos(np.arange(8, dtype=np.float32)).reshape(8, 1))
batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 8, 4)]
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(4):
    model.train()
    train_loss = run_epoch(batches, model, optimizer, mode="train")
    model.eval()
    print("step", train_loss, run_epoch(batches, model, DummyOptimizer(), mode="eval"))
'''


def test_dummy_optimizer_that_skips_the_base_init():
    """harvardnlp/copy_task: the evaluation pass runs the training function with ``DummyOptimizer()``, a
    ``torch.optim.Optimizer`` subclass whose ``__init__`` never calls the base one (it only sets ``param_groups``).
    Converted, it is a MindSpore optimizer Cell without Cell's attributes, and collecting the parameters a backward
    reaches asked it for ``trainable_params()``: AttributeError '_params'. Such an object holds no parameters."""
    code = _convert(DUMMY_OPTIMIZER_FOR_EVALUATION)
    assert "import torch" not in code, code
    t, m = _losses(DUMMY_OPTIMIZER_FOR_EVALUATION, "torch_dummy_opt"), _losses(code, "ms_dummy_opt")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


ROW_SUMS_OF_AN_UNTYPED_MATRIX = '''
import numpy as np
import scipy.sparse as sp
import torch


def normalize(mx):
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1.0).flatten()
    return sp.diags(r_inv).dot(mx)


def dense_rows(a):
    return a.sum(1)


features = sp.lil_matrix(np.arange(1, 13, dtype=np.float32).reshape(3, 4))
features = normalize(features)
x = torch.tensor(np.array(features.todense()), dtype=torch.float32)
print("step", float(x.sum()), float(dense_rows(np.ones((2, 3))).sum()), float(torch.sum(x, 1).mean()))
'''


def test_row_sums_of_a_matrix_the_converter_cannot_type():
    """chennnM/gcnii_cora: ``rowsum = np.array(mx.sum(1))`` in ``normalize(mx)``, called with a SciPy sparse matrix.
    ``mx`` is a parameter the converter cannot type, so ``mx.sum(1)`` became ``mp_math.sum(mx, dim=1)``, which handed
    the SciPy matrix to ``ops.sum`` (TypeError: SumExt). The runtime ``sum`` lets a NumPy array or SciPy matrix answer
    with its own ``sum``; a MindSpore tensor is summed as before."""
    code = _convert(ROW_SUMS_OF_AN_UNTYPED_MATRIX)
    t, m = _losses(ROW_SUMS_OF_AN_UNTYPED_MATRIX, "torch_row_sums"), _losses(code, "ms_row_sums")
    assert len(t) == len(m) == 1, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5)


RANDINT_FROM_A_SEEDED_GENERATOR = '''
import torch

g = torch.Generator()
g.manual_seed(42)
a = torch.randint(0, 10, (50,), generator=g)
b = torch.randint(0, 10, (50,), generator=g)
c = torch.randint(0, 10, (50,), generator=torch.Generator().manual_seed(42))
d = torch.randint(0, 10, (50,), generator=torch.Generator().manual_seed(7))
print("step", int((a == c).all()), int((a == b).all()), int((a == d).all()), int(a.min() >= 0), int(a.max() <= 9),
      int(len(set(a.tolist())) > 3), int(a.dtype == torch.int64))
'''


def test_randint_from_a_seeded_generator():
    """hunglongtran/copy_task_trainer: the dataset draws each sequence with ``torch.randint(0, V, (n,),
    generator=generator)`` from a ``torch.Generator`` seeded per split (train, val and test differ; each is the same
    run after run). ``generator=`` was MP102 and the call stayed torch's, which refused the converted
    ``mindspore.Generator``. The runtime randint draws from that generator's own stream: the same seed gives the same
    numbers, successive calls and other seeds differ, torch's range and int64."""
    code = _convert(RANDINT_FROM_A_SEEDED_GENERATOR)
    assert "import torch" not in code, code
    t, m = _losses(RANDINT_FROM_A_SEEDED_GENERATOR, "torch_gen_randint"), _losses(code, "ms_gen_randint")
    assert t == m == [[1, 0, 0, 1, 1, 1, 1]], (t, m, code)
