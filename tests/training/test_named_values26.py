"""Issue 30 (native26): torch APIs bound by name that used to reach the runtime adapter (``mp_adapt.api("torch.X")``,
a mapping looked up by name when called) now get a definition the converter writes from the entry, decided
statically:

* an optimizer class kept as a value (timm's ``opt_class=optim.SGD`` registry, ``from torch.optim import AdamW``
  re-exported): ``def torch_SGD(params, lr=0.001, ...)`` calling the very construction a written call converts to
  (a runtime optimizer such as ``mp_optim.SGD`` is allowed in its body; only the adapter is refused);
* an entry's ``unsupported`` parameters with a default (RAdam's ``decoupled_weight_decay``, ``maximize``): taken at
  their defaults, and a guard that raises the adapter's TypeError when a run-time value differs (loud, never silent);
* a call with ``**kwargs`` of an entry whose calls need nothing mapped (``torch.compile(model, **kw)``): the target
  itself;
* a local alias of a layer class (``act_layer = nn.LeakyReLU`` in tresnet): the file's value class
  (``TorchLeakyReLU``), as a keyword value already was.

Each is compared with torch: the optimizers train a small float32 net for five steps (losses and every parameter, the
slice is SGD with momentum, AdamW, RMSprop and RAdam: the four timm's factory binds by name most, one per body shape
above); the alias model runs in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from test_fresh2_causes import _losses

TRAIN = '''
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import AdamW

OPTIMIZERS = dict(
    sgd=dict(opt_class=optim.SGD, momentum=0.9, nesterov=True),
    adamw=dict(opt_class=AdamW, weight_decay=0.05),
    rmsprop=dict(opt_class=optim.RMSprop, alpha=0.9, momentum=0.5),
    radam=dict(opt_class=optim.RAdam, weight_decay=0.01),
)


def create_optimizer(params, name, lr, **kwargs):
    spec = dict(OPTIMIZERS[name])
    opt_class = spec.pop("opt_class")
    return opt_class(params, lr=lr, **spec, **kwargs)


torch.manual_seed(0)
x = torch.tensor([[0.5, -1.0, 0.2], [1.5, 0.25, -0.7], [-0.3, 0.8, 0.4], [0.9, -0.6, 1.1]])
y = torch.tensor([[1.0, 0.0], [-0.5, 0.3], [0.25, -0.2], [0.75, 0.6]])
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
optimizer = create_optimizer(net.parameters(), "NAME", 0.05)
loss_func = nn.MSELoss()
for step in range(5):
    optimizer.zero_grad()
    loss = loss_func(net(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item(), *[v.item() for p in net.parameters() for v in p.reshape(-1)])
'''


def test_optimizers_bound_by_name_are_definitions_of_the_file():
    code = convert_source(TRAIN, "train.py").code
    assert "mp_adapt" not in code, code
    for name in ("torch_SGD", "torch_AdamW", "torch_RMSprop", "torch_RAdam"):
        assert f"def {name}(params, lr=" in code, code
    # RAdam's unsupported settings: guards raising at the call, the construction without them
    assert "if maximize:\n        raise TypeError(" in code and "if decoupled_weight_decay:" in code, code


@pytest.mark.parametrize("name", ["sgd", "adamw", "rmsprop", "radam"])
def test_optimizers_bound_by_name_train_as_torch(name):
    source = TRAIN.replace("NAME", name)
    code = convert_source(source, "train.py").code
    t = _losses(source, f"torch_named_{name}")
    m = _losses(code, f"ms_named_{name}")
    assert len(t) == len(m) == 5, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=2e-5, atol=2e-6)


def test_unsupported_setting_given_at_run_time_is_refused_loudly():
    source = TRAIN.replace('"NAME", 0.05)', '"radam", 0.05, maximize=True)')
    code = convert_source(source, "train.py").code
    _losses(source, "torch_named_radam_max")  # torch takes it
    with pytest.raises(TypeError, match="maximize=True is not supported"):
        _losses(code, "ms_named_radam_max")


def test_call_with_kwargs_of_an_unmapped_entry_is_its_target():
    source = textwrap.dedent('''
        import torch

        def compiled(model, **kwargs):
            return torch.compile(model, **kwargs)
    ''')
    code = convert_source(source).code
    assert "mp_framework.compile(model, **kwargs)" in code and "mp_adapt" not in code, code


ALIAS = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, act_layer=None, norm_layer=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act_layer(negative_slope=0.2, inplace=True)
        self.norm = norm_layer(dim)

    def forward(self, x):
        return self.norm(self.act(self.fc(x)))


class Net(nn.Module):
    def __init__(self, dim=8, pre_norm=True):
        super().__init__()
        act_layer = nn.LeakyReLU
        norm_layer = None
        if pre_norm:
            norm_layer = nn.LayerNorm
        self.a = Block(dim, act_layer=act_layer, norm_layer=norm_layer)
        self.b = Block(dim, act_layer=nn.LeakyReLU, norm_layer=norm_layer)

    def forward(self, x):
        return self.b(self.a(x))
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_local_alias_of_a_layer_class_is_a_value_class(mode, tmp_path):
    from tests.converter.port_check import assert_port_matches_in_mode

    code = convert_source(ALIAS).code
    assert "mp_adapt" not in code, code
    assert "act_layer = TorchLeakyReLU" in code and "norm_layer = TorchLayerNorm" in code, code
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32) * 3
    assert_port_matches_in_mode(ALIAS, code, "Net", [x], tmp_path, "alias26", mode, atol=1e-5)


ELU = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTS = dict(elu=nn.ELU, f_elu=F.elu)


class Net(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.a = ACTS["elu"](alpha=0.5)
        self.b = ACTS["elu"]()
        self.c = ACTS["elu"](1)
        self.f = ACTS["f_elu"]

    def forward(self, x):
        h = self.fc(x)
        return self.a(h) + self.b(h * 2) + self.c(h) + self.f(h, alpha=0.3) + self.f(h)
'''


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_elu_bound_by_name_decides_alpha_when_called(mode, tmp_path):
    """ELU's two switches (inplace True; alpha other than 1.0, which MindSpore's kernel refuses) in the table's
    order: one branch each, MindSpore's own nn.ELU / ops.elu for the default."""
    from tests.converter.port_check import assert_port_matches_in_mode

    code = convert_source(ELU).code
    assert "mp_adapt" not in code, code
    assert "if alpha != 1.0:\n        return mp_nn.ELU(alpha=alpha)\n    return nn.ELU()" in code, code
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32) * 2
    assert_port_matches_in_mode(ELU, code, "Net", [x], tmp_path, "elu26", mode, atol=1e-5)


def test_reexported_optimizer_is_defined_under_its_name():
    """timm's ``optim/__init__.py`` imports torch's optimizers only for other modules to import from it: each gets the
    definition a value of it gets (the one test_optimizers_bound_by_name_train_as_torch trains), under its own name,
    at the end of the module; no ``AdamW = mp_adapt.api("torch.optim.AdamW")``."""
    source = "from .lion import Lion\nfrom torch.optim import AdamW, SGD\ntry:\n    from torch.optim import RAdam\n" \
             "except ImportError:\n    pass\n"
    code = convert_source(source, "pkg/optim/__init__.py", local_packages=frozenset({"pkg"})).code
    assert "mp_adapt" not in code and "torch" not in code.replace("torch.optim.", ""), code
    valued = convert_source(TRAIN.replace("NAME", "adamw"), "train.py").code
    body = lambda text, name: text.split(f"def {name}(", 1)[1].split("\n\n", 1)[0]  # noqa: E731
    assert body(code, "AdamW") == body(valued, "torch_AdamW"), (code, valued)
    assert code.index("from .lion import Lion") < code.index("def AdamW(") < code.index("def SGD(") \
        < code.index("def RAdam("), code


def test_class_derived_from_a_function_entry_keeps_a_class(tmp_path):
    """timm's ``class MultiEpochsDataLoader(DataLoader)``: DataLoader's table calls a function (GeneratorDataset), so a
    value of it is the file's ``def torch_DataLoader(...)``; a class cannot derive from a def (TypeError when the
    module runs), so the base stays the adapter's class while the other reads get the definition."""
    from tests.converter.port_check import load_module

    source = textwrap.dedent('''
        import torch
        import torch.utils.data
        from torch.utils.data import DataLoader


        class MultiEpochsDataLoader(DataLoader):
            pass


        class Repeating(torch.utils.data.DataLoader):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)


        def loader_class(repeat):
            return MultiEpochsDataLoader if repeat else DataLoader
    ''')
    code = convert_source(source).code
    assert "class MultiEpochsDataLoader(mp_adapt.api(" in code and "def torch_DataLoader(" in code, code
    assert "class Repeating(mp_adapt.api(" in code, code  # a class with an __init__ of its own too (timm's)
    module = load_module(code, tmp_path / "loader26.py", "loader26")
    assert isinstance(module.MultiEpochsDataLoader, type) and isinstance(module.Repeating, type)
    assert callable(module.loader_class(False))
