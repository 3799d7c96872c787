"""Session trainfresh23 (issue 27): causes found at first contact with the fresh23 entries
(/work/notes/trainfresh23.md). One test each, on real torch and real MindSpore, each failing without its fix; the
expected values are torch's, run here."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert

# ``nn.Dropout2d`` / ``F.dropout2d`` / ``nn.Dropout3d`` at the ranks torch takes besides the documented one: a
# classifier head's Dropout2d after a Linear (2-D (N, C): torch drops element by element, with a warning), a 3-D
# (N, C, L) input (whole channels), a 5-D one through F.dropout2d, and an unbatched 4-D (C, D, H, W) input to
# Dropout3d. MindSpore's Dropout2D kernel takes rank 4 only and Dropout3D rank 5 only ("the rank of input must be
# equal to 4, but got 2"). Each layer is run in training and in eval mode on an input of ones.
DROPOUT_RANKS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 64)
        self.drop = nn.Dropout2d(p=0.5)
        self.drop3 = nn.Dropout3d(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def outputs(head, training):
    head.train(training)
    ones2 = torch.ones(64, 32)
    ones3 = torch.ones(16, 8, 6)
    ones4 = torch.ones(12, 3, 2, 2)
    ones5 = torch.ones(4, 6, 2, 3, 2)
    return {
        "layer2": head.drop(ones2),
        "layer3": head.drop(ones3),
        "layer4": head.drop(ones4),
        "f5": F.dropout2d(ones5, 0.5, training),
        "f2": F.dropout2d(ones2, p=0.5, training=training),
        "layer3d4": head.drop3(ones4),
        "f3d3": F.dropout3d(ones3, 0.5, training),
        "head": head(torch.ones(3, 4)),
    }
'''


def _numpy(out):
    return {k: (v.detach().numpy() if hasattr(v, "detach") else v.asnumpy()) for k, v in out.items()}


def _granularity(name, a):
    """The axes over which one draw holds (the mask is constant along them), as torch decides it for the rank."""
    return {"layer2": (), "f2": (), "layer3": (2,), "layer4": (2, 3), "f5": (2, 3, 4),
            "layer3d4": (1, 2, 3), "f3d3": (1, 2)}[name]


def test_dropout2d_and_dropout3d_take_the_ranks_torch_takes():
    import mindspore as ms
    import torch

    source = DROPOUT_RANKS
    code = _convert(source)
    assert "mindport: MP" not in code, code
    t_mod = load_module(source, "torch_dropout_ranks")
    m_mod = load_module(code, "ms_dropout_ranks")
    torch.manual_seed(0)
    ms.set_seed(0)
    t_head, m_head = t_mod.Head(), m_mod.Head()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_train, t_eval = _numpy(t_mod.outputs(t_head, True)), _numpy(t_mod.outputs(t_head, False))
    m_train, m_eval = _numpy(m_mod.outputs(m_head, True)), _numpy(m_mod.outputs(m_head, False))
    for name in t_eval:
        if name == "head":
            continue
        # eval mode: the identity, exactly as torch
        np.testing.assert_array_equal(m_eval[name], t_eval[name], err_msg=name)
        t, m = t_train[name], m_train[name]
        assert m.shape == t.shape, name
        # training: the values torch gives (0 or 1/(1-p)), about as many dropped, one draw per torch's feature
        assert set(np.unique(m)) <= set(np.unique(t)) == {0.0, 2.0}, (name, np.unique(m))
        assert 0.3 < (m == 0).mean() < 0.7, (name, (m == 0).mean())
        axes = _granularity(name, t)
        for a in (t, m):
            first = a[(slice(None),) * (a.ndim - len(axes)) + (slice(0, 1),) * len(axes)] if axes else a
            np.testing.assert_array_equal(np.broadcast_to(first, a.shape), a, err_msg=name)
        if not axes:  # element by element: both vary inside a row
            assert len(np.unique(m, axis=1)) > 1 and len(np.unique(t, axis=1)) > 1
    assert m_train["head"].shape == t_train["head"].shape == (3, 64)


# torch's deprecated spellings of mapped APIs: safakkbilici/Simple-Language-Model-With-LSTM's train.py clips with
# ``from torch.nn.utils import clip_grad_norm`` (torch's deprecated alias of clip_grad_norm_, warning and calling it):
# it had no mapping entry (MP103), so the line kept torch's call on ``model.parameters()`` and the port failed
# ("'Author' object has no attribute 'parameters'"). The script below clips with both spellings of the alias and
# initialises with nn.init.eye / nn.init.dirac (the other deprecated aliases the tables lacked).
DEPRECATED_ALIASES = '''
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm

x = torch.linspace(-1, 1, 24).reshape(8, 3)
y = x.sum(dim=1, keepdim=True) * 3.0
model = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Tanh(), nn.Linear(3, 1))
nn.init.eye(model[0].weight)
with torch.no_grad():
    model[2].weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model[2].bias.fill_(0.05)
conv = nn.Conv2d(2, 2, 3, bias=False)
nn.init.dirac(conv.weight)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for t in range(6):
    loss = ((model(x) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    clip_grad_norm(model.parameters(), 0.5)
    torch.nn.utils.clip_grad_norm(model.parameters(), 0.4)
    opt.step()
    print("step", loss.item())
print("eye", model[0].weight.sum().item())
print("dirac", conv(torch.arange(18.0).reshape(1, 2, 3, 3)).sum().item())
'''


def test_torchs_deprecated_aliases_convert_as_their_entries():
    import io
    from contextlib import redirect_stdout

    code = _convert(DEPRECATED_ALIASES)
    assert "torch" not in code.replace("mindport", ""), code
    lines = {}
    for name, text in (("torch", DEPRECATED_ALIASES), ("ms", code)):
        out = io.StringIO()
        with warnings.catch_warnings(), redirect_stdout(out):
            warnings.simplefilter("ignore")
            load_module(text, f"{name}_aliases")
        lines[name] = [ln.split() for ln in out.getvalue().splitlines()]
    t, m = lines["torch"], lines["ms"]
    assert [ln[0] for ln in m] == [ln[0] for ln in t] == ["step"] * 6 + ["eye", "dirac"]
    np.testing.assert_allclose([float(ln[-1]) for ln in m], [float(ln[-1]) for ln in t], rtol=1e-5)
    assert float(t[5][-1]) < float(t[0][-1])


def test_every_deprecated_alias_torch_keeps_for_a_mapped_api_is_mapped():
    """The surface: torch.nn.init's ``_make_deprecate`` wrappers (uniform, normal, ..., eye, dirac) and
    torch.nn.utils' clip_grad_norm, each named by torch's own deprecation text, resolve to their entry."""
    import re

    import torch.nn.init as init
    import torch.nn.utils as utils

    from mindport.mappings import bundled_registry

    registry = bundled_registry()
    found = {}
    for module, prefix in ((init, "torch.nn.init"), (utils, "torch.nn.utils")):
        for name in dir(module):
            fn = getattr(module, name)
            doc = getattr(fn, "__doc__", None) or ""
            new = re.search(r"deprecated in favor of :func:`torch\.nn\.(?:init|utils)\.(\w+)`", doc)
            if callable(fn) and not name.startswith("_") and (new or name == "clip_grad_norm"):
                found[f"{prefix}.{name}"] = f"{prefix}.{new.group(1) if new else name + '_'}"
    assert {"torch.nn.init.uniform", "torch.nn.init.eye", "torch.nn.init.dirac",
            "torch.nn.utils.clip_grad_norm"} <= set(found), found
    for old, new in found.items():
        assert registry.lookup(new) is not None, new
        assert registry.lookup(old) is registry.lookup(new), (old, new)


# ``from torch.autograd.variable import Variable`` (safwankdb/Vanilla-GAN, a Colab export): Variable under the
# module that defines it had no entry (MP103), so noise(), make_ones() and make_zeros() kept torch and handed torch
# tensors to MindSpore's layers ("For primitive[Shape], the input argument must be Tensor, but got torch.Tensor").
VARIABLE_MODULE = '''
import torch
import torch.nn as nn
from torch.autograd.variable import Variable


def make_ones(size):
    return Variable(torch.ones(size, 1))


x = Variable(torch.linspace(-1, 1, 12).reshape(4, 3))
model = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.4, -0.3, 0.2]]))
    model[0].bias.fill_(0.1)
criterion = nn.BCELoss()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
for t in range(5):
    opt.zero_grad()
    loss = criterion(model(x), make_ones(4))
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def test_a_name_imported_from_the_autograd_module_that_defines_it_is_the_public_names_entry():
    from test_fresh_causes import _same_losses

    code = _convert(VARIABLE_MODULE)
    assert "torch" not in code.replace("mindport", ""), code
    _same_losses(VARIABLE_MODULE, code, 5)


def test_every_public_autograd_name_resolves_under_its_defining_module():
    """The surface: each public name of torch.autograd defined in a submodule (Variable in torch.autograd.variable,
    Function in torch.autograd.function, no_grad in torch.autograd.grad_mode, ...) has the entry its public name has."""
    import torch.autograd as autograd

    from mindport.mappings import bundled_registry

    registry = bundled_registry()
    checked = 0
    for name in dir(autograd):
        obj = getattr(autograd, name)
        module = getattr(obj, "__module__", "") or ""
        if name.startswith("_") or not module.startswith("torch.autograd.") or module.count(".") != 2:
            continue
        public = registry.lookup(f"torch.autograd.{name}")
        if public is not None:
            assert registry.lookup(f"{module}.{name}") is public, (module, name)
            checked += 1
    assert checked >= 1 and registry.lookup("torch.autograd.variable.Variable") is not None
