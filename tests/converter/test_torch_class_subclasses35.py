"""Classes derived from torch's own classes other than nn.Module (first contact, session 35):

- a subclass of a torch module other than nn.Module (``class ConvBN(nn.Sequential)``, ``class Lin(nn.Linear)``) is a
  module class in every file of the project: ``class Block(ConvBN)`` in another file kept torch's ``forward`` (never
  called by a Cell) because the project's module classes were found by the base name ``Module`` alone
  (project.class_bases now writes such a base ``Module``); discovery (scan.discover) did not see these classes at
  all (gau-nernst/pytorch-models: EnCodec's ``Conv1d(nn.Sequential)``, ``LSTM(nn.LSTM)``, ``EnCodecEncoder``);
- a subclass of nn.Parameter (kaniblu/pytorch-models' ``class Parameter(nn.Parameter)`` with methods of its own, built
  as ``Parameter(data=x, requires_grad=False)``): MindSpore's ``Parameter.__new__`` returns its own class whatever
  class it is called for and takes no ``data=``: "Parameter.__new__() missing 1 required positional argument:
  'default_input'" (runtime.adapt._parameter_new).

Real runs: torch and the converted program on the same weights and input, PyNative and GRAPH_MODE."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from mindport.discovery.scan import discover
from mindport.migrator.project import class_bases, module_classes_from_bases
from port_check import assert_port_matches, assert_port_matches_in_mode, load_module

LAYERS = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn import Linear


    class ConvBN(nn.Sequential):
        def __init__(self, cin, cout):
            super().__init__(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout))


    class Lin(Linear):
        pass
    """)

MODEL = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from layers import ConvBN, Lin


    class Block(ConvBN):
        def forward(self, x):
            return torch.relu(super().forward(x)) + x


    class Head(Lin):
        def forward(self, x):
            return super().forward(x) * 2


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block(3, 3)
            self.head = Head(3, 2)

        def forward(self, x):
            return self.head(self.block(x).mean((2, 3)))
    """)


def test_bases_from_torch_modules_are_module_bases():
    bases = class_bases(LAYERS)
    assert bases == {"ConvBN": ["Module"], "Lin": ["Module"]}
    # a base of that name from elsewhere is what its last name says
    assert class_bases("from keras import Sequential\nclass K(Sequential):\n    pass\n") == {"K": ["Sequential"]}
    assert class_bases("import torch.nn as nn\nclass P(nn.Parameter):\n    pass\n") == {"P": ["Parameter"]}
    modules = module_classes_from_bases([bases, class_bases(MODEL)])
    assert {"ConvBN", "Lin", "Block", "Head", "Net"} <= modules


def test_discovery_finds_subclasses_of_torch_layers(tmp_path):
    (tmp_path / "layers.py").write_text(LAYERS)
    (tmp_path / "model.py").write_text(MODEL)
    found = {c.key for c in discover(tmp_path)}
    assert {"layers.py:ConvBN", "layers.py:Lin", "model.py:Block", "model.py:Head", "model.py:Net"} <= found


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_subclass_of_a_layer_subclass_in_another_file(tmp_path, mode, monkeypatch):
    import mindspore as ms
    import torch

    from mindport import transfer_weights
    from mindport.migrator.repo import convert_path

    src, conv = tmp_path / "src", tmp_path / "conv"
    src.mkdir()
    (src / "layers.py").write_text(LAYERS)
    (src / "model.py").write_text(MODEL)
    convert_path(src, conv)
    code = (conv / "model.py").read_text()
    assert "def forward" not in code and code.count("def construct") == 3, code
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype(np.float32)
    torch_net = _imported(src, "Net")
    torch.manual_seed(0)
    torch_net = torch_net().eval()
    with torch.no_grad():  # statistics no layer starts with: the BatchNorm is not the identity
        bn = torch_net.block[1]
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
        want = torch_net(torch.from_numpy(x)).numpy()
    # the converted model stays importable while it runs (GRAPH_MODE's parser reads its module by name)
    monkeypatch.syspath_prepend(str(conv))
    import importlib

    ms_net = importlib.import_module("model").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = ms_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        for mod in ("layers", "model"):
            sys.modules.pop(mod, None)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _imported(folder, name):
    """``name`` of ``folder``'s model.py, imported with its own layers.py (the torch tree or the converted one)."""
    import importlib

    for mod in ("layers", "model"):
        sys.modules.pop(mod, None)
    sys.path.insert(0, str(folder))
    try:
        return getattr(importlib.import_module("model"), name)
    finally:
        sys.path.remove(str(folder))
        for mod in ("layers", "model"):
            sys.modules.pop(mod, None)


PARAMETER = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Parameter(nn.Parameter):
        def reset_parameters(self):
            self.data.zero_()

        def gain(self):
            return 2.0


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.map = Parameter(data=torch.arange(3.0) - 1, requires_grad=False)
            self.w = Parameter(torch.linspace(-1.0, 2.0, 3))
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x * self.map + self.w) * self.w.gain()
    """)


def test_parameter_subclass(tmp_path):
    import mindspore as ms

    from mindport import convert_source
    from mindport.runtime import containers

    result = convert_source(PARAMETER, "param35.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert_port_matches(PARAMETER, result.code, "Net", (2, 3), tmp_path, "param35", atol=1e-6)
    net = load_module(result.code, tmp_path / "param35_ms.py", "param35_ms").Net()
    assert type(net.w).__name__ == "Parameter" and isinstance(net.w, ms.Parameter) and net.w.gain() == 2.0
    assert not net.map.requires_grad and net.w.requires_grad
    # the frozen one is still one of torch's parameters (named_parameters lists it), not a buffer
    assert sorted(k for k, _ in containers.named_parameters(net)) == ["lin.bias", "lin.weight", "map", "w"]
    assert [p.name for p in net.trainable_params()] == ["w", "lin.weight", "lin.bias"]
    grads = ms.grad(lambda x: net(x).sum(), grad_position=None, weights=net.trainable_params())(
        ms.Tensor(np.ones((2, 3), np.float32)))
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * 2 * net.lin.weight.asnumpy().sum(0), rtol=1e-5)
    net.w.reset_parameters()
    assert float(net.w.sum()) == 0.0


def test_parameter_subclass_graph_mode(tmp_path):
    """GRAPH_MODE reads a Parameter of the Cell as a graph parameter: the values agree; a method of the subclass called
    in construct is not there (AttributeError, loud)."""
    from mindport import convert_source

    source = PARAMETER.replace(" * self.w.gain()", "")
    code = convert_source(source, "param35g.py").code
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "param35g", "graph")
