"""Subclasses of torch's layers (``class ConvSame(nn.Conv2d)``, ``class Stack(nn.Sequential)``): module classes like
any nn.Module subclass (forward -> construct), and ``super().__init__`` with torch's positional arguments is mapped
through the layer's entry (the runtime adapter class's __init__), so the port matches torch."""
from __future__ import annotations

import importlib.util
import textwrap

import numpy as np

from mindport import convert_source, transfer_weights

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ConvSame(nn.Conv2d):
        def __init__(self, cin, cout, k, stride=1, groups=1, bias=True):
            super(ConvSame, self).__init__(cin, cout, k, stride, 0, 1, groups, bias)

        def forward(self, x):
            return super().forward(F.pad(x, (1, 1, 1, 1)))


    class Wide(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2


    class Stack(nn.Sequential):
        def __init__(self):
            super().__init__(ConvSame(3, 4, 3), nn.ReLU(), ConvSame(4, 4, 3, 2, groups=2, bias=False))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stack = Stack()
            self.head = Wide(4 * 4 * 4, 5)

        def forward(self, x):
            return self.head(torch.flatten(self.stack(x), 1))
""")


def _load(code, path, name):
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_subclasses_of_torch_layers_convert_and_match(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "def forward" not in result.code and "super().construct(" in result.code
    torch_net = _load(SOURCE, tmp_path / "t_layers.py", "t_layers").Net().eval()
    ms_net = _load(result.code, tmp_path / "m_layers.py", "m_layers").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
