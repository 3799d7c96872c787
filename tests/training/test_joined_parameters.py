"""One optimizer over the parameters of several models (an autoencoder's encoder and decoder, a GAN's generator and
discriminator trained together, param groups from two models): torch takes any tensors; a MindSpore optimizer is a
Cell and refuses two Parameters of one name ("its name 'fc.weight' already exists"), and two models name theirs from
the same attribute paths. Real torch and real MindSpore, the converted script trained against torch's."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert

SCRIPT = '''
import itertools
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, z):
        return self.fc(z)


encoder, decoder = Encoder(), Decoder()
with torch.no_grad():
    for net in (encoder, decoder):
        net.fc.weight.copy_(torch.linspace(-0.5, 0.6, net.fc.weight.numel()).reshape(net.fc.weight.shape))
        net.fc.bias.fill_(0.05)
x = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)
PARAMS_LINE
optimizer = torch.optim.OPTIMIZER
for step in range(20):
    optimizer.zero_grad()
    loss = ((decoder(encoder(x)) - x) ** 2).mean()
    print("step", loss.item())
    loss.backward()
    optimizer.step()
'''

JOINED = {
    "list_sum": ("", "list(encoder.parameters()) + list(decoder.parameters())"),
    "chain": ("", "itertools.chain(encoder.parameters(), decoder.parameters())"),
    "groups": ("", "[{'params': encoder.parameters()}, {'params': decoder.parameters(), 'lr': 0.02}]"),
    "variable": ("params = [*encoder.parameters(), *decoder.parameters()]", "params"),
    "comprehension": ("", "[p for m in (encoder, decoder) for p in m.parameters()]"),
}


def _losses(code: str, name: str) -> list[float]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return [float(line.split()[1]) for line in out.getvalue().splitlines() if line.startswith("step")]


def _script(how: str, optimizer: str) -> str:
    before, params = JOINED[how]
    return SCRIPT.replace("PARAMS_LINE", before).replace("OPTIMIZER", optimizer.replace("PARAMS", params))


@pytest.mark.parametrize("how", sorted(JOINED))
def test_one_adam_over_two_models_trains_like_torch(how):
    """Each way of joining two models' parameters: the converted script runs (the names are made distinct before the
    optimizer holds them) and its 20 losses are torch's."""
    source = _script(how, "Adam(PARAMS, lr=0.05)")
    code = _convert(source)
    assert "distinct_names(" in code and "import torch" not in code, code
    t, m = _losses(source, f"torch_joined_{how}"), _losses(code, f"ms_joined_{how}")
    assert len(t) == len(m) == 20, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4)
    assert t[-1] < 0.5 * t[0]  # it learns


def test_sgd_with_momentum_and_weight_decay_over_two_models():
    """The same for another optimizer class (each optimizer entry names its ``params`` apart)."""
    source = _script("list_sum", "SGD(PARAMS, lr=0.1, momentum=0.9, weight_decay=0.01)")
    code = _convert(source)
    t, m = _losses(source, "torch_joined_sgd"), _losses(code, "ms_joined_sgd")
    np.testing.assert_allclose(m, t, rtol=1e-4)


def test_names_apart_keep_the_first_and_state_dict_keys():
    """The first Parameter of a name keeps it, a later one is ``1.name``; each model's ``state_dict()`` keys (paths in
    the model) are unchanged, so its checkpoint still loads into a fresh model."""
    import mindspore as ms

    from mindport.runtime.optim import distinct_names

    a, b, c = ms.nn.Dense(2, 2), ms.nn.Dense(2, 2), ms.nn.Dense(2, 2)
    keys = list(b.state_dict())
    params = distinct_names(p for cell in (a, b, c) for p in cell.trainable_params())
    assert [p.name for p in params] == ["weight", "bias", "1.weight", "1.bias", "2.weight", "2.bias"]
    assert list(b.state_dict()) == keys == ["weight", "bias"]
    groups = distinct_names([{"params": iter(a.trainable_params()), "lr": 0.1}, {"params": a.weight}])
    assert groups[0]["lr"] == 0.1 and [p.name for p in groups[0]["params"]] == ["weight", "bias"]


def test_one_model_and_named_leaves_are_left_as_written():
    """One model's parameters, filtered or not, and a list of leaf tensors are never renamed: no runtime call."""
    for params in ("model.parameters()", "filter(lambda p: p.requires_grad, model.parameters())",
                   "[p for p in model.parameters() if p.dim() > 1]", "[w, b]"):
        source = f"import torch\nopt = torch.optim.SGD({params}, lr=0.1)\n"
        assert "distinct_names" not in _convert(source), params


def test_optimizer_class_passed_as_a_value_names_apart_too():
    """An optimizer class handed to a factory (a definition of the file with torch's parameters since native26, the
    runtime adapter before) applies the same transform."""
    source = '''
import torch
from torch import nn
a, b = nn.Linear(3, 2), nn.Linear(2, 1)
def make(cls, params, **kw):
    return cls(params, **kw)
opt = make(torch.optim.SGD, list(a.parameters()) + list(b.parameters()), lr=0.1, momentum=0.9)
print("step", len(opt.param_groups[0]["params"]))
'''
    code = _convert(source)
    assert "def torch_SGD(" in code and "mp_optim.distinct_names(params)" in code, code
    assert _losses(code, "ms_adapted_optimizer") == _losses(source, "torch_adapted_optimizer") == [4.0]
