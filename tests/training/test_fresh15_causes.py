"""Session train15 (issue 27): causes found at first contact with the fresh15 entries. One test each, on real
torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# the LBFGS closure of notebook PINN scripts (bzapf/pytorchdemo) and of torch's own docs: the backward is guarded by
# the loss's autograd flag, read on the loss the differentiated region computes; and the same guard in a plain loop
REQUIRES_GRAD_GUARD = '''
import torch
import torch.nn as nn

inputs = torch.linspace(0.0, 1.0, 16).reshape(16, 1)
targets = torch.sin(3.0 * inputs)
net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    net[0].weight.copy_(torch.linspace(-1.0, 1.2, 8).reshape(8, 1))
    net[0].bias.copy_(torch.linspace(-0.3, 0.4, 8))
    net[2].weight.copy_(torch.linspace(0.5, -0.6, 8).reshape(1, 8))
    net[2].bias.fill_(0.05)
lbfgs = torch.optim.LBFGS(list(net.parameters()), max_iter=6, line_search_fn="strong_wolfe")


def closure(loss_function=nn.MSELoss(reduction="mean")):
    lbfgs.zero_grad()
    loss = loss_function(net(inputs), targets)
    if loss.requires_grad:
        loss.backward()
    print("step", loss.item())
    return loss


lbfgs.step(closure)

sgd = torch.optim.SGD(net.parameters(), lr=0.1)
for it in range(3):
    sgd.zero_grad()
    loss = ((net(inputs) - targets) ** 2).mean()
    flag = loss.requires_grad
    if flag:
        loss.backward()
    sgd.step()
    print("step", float(flag), loss.item())
'''


def test_the_differentiated_loss_requires_grad():
    """bzapf/pinn_poisson and pinn_inverse_g (pytorch-demo.py): `if loss.requires_grad: loss.backward()` in an
    LBFGS closure. The loss the converted region returns was a plain MindSpore tensor, so the flag read False, the
    backward was skipped, LBFGS saw a zero gradient and stopped after one evaluation (first run fresh15: 1 loss
    against torch's 47 and 75). The loss value_and_grad returns carries the flag, as torch's graph node does."""
    code = _convert(REQUIRES_GRAD_GUARD)
    t, m = _losses(REQUIRES_GRAD_GUARD, "torch_requires_grad_guard"), _losses(code, "ms_requires_grad_guard")
    assert len(t) == len(m) and len(t) > 4, (t, m, code)
    assert [len(r) for r in m] == [len(r) for r in t]
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-4, atol=1e-6)


DEFAULT_DTYPE_BY_NAME = '''
import torch
import torch.nn as nn

d_type = torch.float32


def setup(dtype):
    torch.set_default_dtype(dtype)


setup(d_type)
torch.set_default_dtype(torch.float32)
x = torch.linspace(-1.0, 1.0, 10).reshape(5, 2)
y = torch.tensor([[0.5], [-0.25], [1.0], [0.0], [0.75]])
model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.3]]))
    model.bias.fill_(0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
for it in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", float(torch.get_default_dtype() == torch.float32), float(torch.zeros(2).dtype == d_type), loss.item())
'''


def test_set_default_dtype_float32_by_name():
    """deguchi/burgers (ShotaDeguchi/PINN_Torch): `torch.set_default_dtype(d_type)` with `d_type = torch.float32`
    set in another module. The call was flagged and kept torch's while `d_type` became `ms.float32`: torch refused a
    MindSpore dtype (TypeError: invalid dtype object, first run fresh15) and the port imported torch. float32, torch's
    own default and MindSpore's only one, now converts (mindport.runtime.math.set_default_dtype); another dtype raises
    at run time."""
    code = _convert(DEFAULT_DTYPE_BY_NAME)
    assert not any(l.strip().startswith(("import torch", "from torch")) for l in code.splitlines()), code
    t, m = _losses(DEFAULT_DTYPE_BY_NAME, "torch_default_dtype"), _losses(code, "ms_default_dtype")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-5, atol=1e-6)


def test_set_default_dtype_float64_raises():
    """Another default dtype changes what every torch factory makes; the converted call says so at run time instead
    of computing in float32."""
    import pytest
    from mindport.runtime import math as mp_math
    import mindspore as ms

    mp_math.set_default_dtype(ms.float32)
    with pytest.raises(NotImplementedError, match="set_default_dtype"):
        mp_math.set_default_dtype(ms.float64)


SATURATED_DISCRIMINATOR = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.tensor([[-3.0], [-2.0], [-1.5], [0.5], [1.0], [2.0]])
y = torch.tensor([[1.0], [1.0], [0.0], [1.0], [0.0], [1.0]])
D = nn.Sequential(nn.Linear(1, 1), nn.Sigmoid())
with torch.no_grad():
    D[0].weight.fill_(10.0)
    D[0].bias.fill_(0.0)
criterion = nn.BCELoss()
opt = torch.optim.SGD(D.parameters(), lr=0.5)
for it in range(5):
    out = D(x)
    loss = criterion(out, y) + 0.5 * F.binary_cross_entropy(out, 1 - y)
    D.zero_grad()
    loss.backward()
    opt.step()
    print("step", loss.item(), D[0].weight.item(), D[0].bias.item())
'''


def test_binary_cross_entropy_has_torchs_gradient_where_the_sigmoid_saturates():
    """Found while looking at vgan/gan's drift (togheppi/vanilla_GAN, a discriminator with N(0, 1) weights): torch's
    BCE backward divides by max(x (1 - x), 1e-12), so where the sigmoid saturates a sample at sigmoid(-30) with
    target 1 passes about -1e-2 where the derivative of the clamped-log formula passes -1, and x = 1.0 exactly gives
    torch 0 where the formula gives NaN (here the runtime's guard then raised 'no parameter reaches the loss'). Not
    vgan/gan's drift itself: its discriminator does not saturate (outputs in 0.04-0.73 where it starts, step 28)."""
    code = _convert(SATURATED_DISCRIMINATOR)
    t, m = _losses(SATURATED_DISCRIMINATOR, "torch_saturated_d"), _losses(code, "ms_saturated_d")
    assert len(t) == len(m) == 5, (t, m, code)
    assert np.isfinite(np.array(m)).all(), m
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-4, atol=1e-6)


ONE_HOT_INFERRED = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
labels = torch.tensor([0, 2, 1, 3, 2, 0])
model = nn.Linear(4, 4)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.5, 0.5, 16).reshape(4, 4))
    model.bias.fill_(0.0)
criteria = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for it in range(4):
    predict = model(x)
    optimizer.zero_grad()
    target = F.one_hot(labels)
    loss = criteria(predict, target.float())
    loss.backward()
    optimizer.step()
    print("step", float(target.shape[1]), float(target.sum()), loss.item())
'''


def test_one_hot_infers_its_depth_from_the_data():
    """jimmy/mlp_onehot (Jimmy-2016/DLModels_Pytorch mlp/train.py): `F.one_hot(tmptar)` with torch's default
    num_classes=-1 (max + 1). It was flagged and kept torch's, which refused the MindSpore tensor (TypeError: one_hot():
    argument 'input' must be Tensor, not Tensor; first run fresh15). The depth is read from the data when the call
    happens, as torch reads it."""
    code = _convert(ONE_HOT_INFERRED)
    assert not any(l.strip().startswith(("import torch", "from torch")) for l in code.splitlines()), code
    t, m = _losses(ONE_HOT_INFERRED, "torch_one_hot"), _losses(code, "ms_one_hot")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-5, atol=1e-6)


NUMPY_HELPER_AND_POLAR = '''
import math
import numpy as np
import torch
import torch.nn as nn


def standardise(X):
    return (X - X.mean(0)) / X.std(0)


def ring(size):
    points = torch.polar(torch.tensor(1.0), torch.linspace(0.0, 2 * math.pi, size))
    return torch.stack((points.real, points.imag)).T


data = torch.from_numpy(standardise(np.arange(24.0).reshape(12, 2) ** 1.5)).float()
model = nn.Linear(2, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2], [0.1, 0.4]]))
    model.bias.fill_(0.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(4):
    optimizer.zero_grad()
    loss = ((model(data) - ring(12)) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", float(data.std()), loss.item())
'''


def test_numpy_reductions_in_a_helper_and_a_broadcast_polar():
    """jimmy/realnvp_moons: `(X - X.mean(0)) / X.std(0)` on a NumPy array in a helper (the converter cannot type a
    parameter) became MindSpore reductions (TypeError: Failed calling ReduceMean with numpy.ndarray); the array's own
    methods answer now, numpy's ddof=0 included, as `sum` already did. jimmy/flow_matching:
    `torch.polar(torch.tensor(1.0), angles)` broadcasts in torch, ops.polar refuses unequal shapes (ValueError)."""
    code = _convert(NUMPY_HELPER_AND_POLAR)
    t, m = _losses(NUMPY_HELPER_AND_POLAR, "torch_numpy_polar"), _losses(code, "ms_numpy_polar")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-5, atol=1e-6)


MODEL_METHOD_NAMED_LIKE_A_TENSOR_METHOD = '''
import torch
import torch.nn as nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor([[1.0, 0.5], [-0.25, 1.5]]))
            self.lin.bias.copy_(torch.tensor([0.1, -0.2]))

    def forward(self, x):
        return self.lin(x)

    def inverse(self, z):
        return torch.linalg.solve(self.lin.weight, (z - self.lin.bias).T).T


def view(model, Z):
    X_hat = model.inverse(Z).detach().numpy()
    return X_hat


flow = Flow()
opt = torch.optim.SGD(flow.parameters(), lr=0.1)
x = torch.linspace(-1.0, 1.0, 8).reshape(4, 2)
for it in range(3):
    opt.zero_grad()
    loss = (flow(x) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", loss.item(), float(view(flow, x).sum()))
'''


def test_a_parameters_method_with_arguments_no_tensor_method_takes_is_the_programs():
    """jimmy/realnvp_moons (NormFlow/utils.py `view(model, losses)`): `model.inverse(Z).detach().numpy()` with
    `model` a function's parameter, which method calls type as a tensor. Tensor.inverse takes no argument, so the
    call was flagged (MP102) and the line kept torch's `.detach()` (AttributeError: 'Tensor' object has no attribute
    'detach', after the training, at the re-run). A torch script that runs cannot call a tensor method with more
    positional arguments than it takes: the receiver is the program's object and the rest of the line converts."""
    code = _convert(MODEL_METHOD_NAMED_LIKE_A_TENSOR_METHOD)
    t = _losses(MODEL_METHOD_NAMED_LIKE_A_TENSOR_METHOD, "torch_model_inverse")
    m = _losses(code, "ms_model_inverse")
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-5, atol=1e-5)
