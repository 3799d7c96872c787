"""``classname = m.__class__.__name__`` (or ``type(m).__name__``) bound to a local the function never reads (nor a
nested scope, a ``global``/``nonlocal`` or a ``del``) goes, as the device bindings ObjectSurface's neighbour drops
(native_facts.unread_bindings): reading a class's name has no effect, and mindport.runtime.adapt.class_name exists only
to give torch's name to a reader. akamaster's ResNet-20 ``_weights_init`` (its ``print(classname)`` commented out) was
the port's one mp_adapt call. A name that is read keeps the runtime's. The converted init function runs on MindSpore's
layers in PyNative and GRAPH_MODE as torch's does on its own (the same layers initialised, the names read)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""
    import torch.nn as nn


    def _weights_init(m):
        classname = m.__class__.__name__
        #print(classname)
        if isinstance(m, nn.Linear) or isinstance(m, nn.Conv2d):
            nn.init.zeros_(m.weight)
            nn.init.constant_(m.bias, 0.5)


    def named(m):
        name = type(m).__name__
        return name


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 1)
            self.fc = nn.Linear(2, 3)
            self.apply(_weights_init)

        def forward(self, x):
            return self.fc(self.conv(x).mean((2, 3)))
""")


def test_an_unread_class_name_goes():
    code = convert_source(SOURCE).code
    assert "classname = " not in code.split("def _weights_init")[1].split("def named")[0], code
    assert "name = mp_adapt.class_name(m)" in code, code  # read: torch's name given to the reader


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_unread_class_names_match_torch(mode, tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    ms_mod = load_module(code, tmp_path / f"m_names_{mode}.py", f"m_names_{mode}")
    torch_mod = load_module(SOURCE, tmp_path / f"t_names_{mode}.py", f"t_names_{mode}")
    x = np.random.default_rng(0).standard_normal((2, 1, 3, 3)).astype(np.float32)
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        net = ms_mod.Net()
        got = net(ms.Tensor(x)).asnumpy()
        names = [ms_mod.named(c) for c in (net.conv, net.fc)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    torch_net = torch_mod.Net()
    want = torch_net(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)  # zeroed weights: each output is the fc's 0.5
    assert names == [torch_mod.named(c) for c in (torch_net.conv, torch_net.fc)] == ["Conv2d", "Linear"]
    assert not net.conv.weight.asnumpy().any() and not net.fc.weight.asnumpy().any()
