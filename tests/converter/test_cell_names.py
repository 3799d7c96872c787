"""Attributes a torch module sets under a name mindspore.nn.Cell uses itself (``self.cells = nn.ModuleList(...)``):
the converter and the weight mapping rename them the same way (``cells_``), and the list of such names matches the
installed MindSpore and torch."""
from __future__ import annotations

import importlib.util
import inspect
import textwrap

import numpy as np

from mindport import convert_source, transfer_weights
from mindport.names import CELL_NAMES, CELL_PRIVATE_NAMES


def test_the_reserved_names_are_those_of_the_installed_frameworks():
    import torch
    from mindspore import nn

    cell = {n for n in dir(nn.Cell) if not n.startswith("_")}
    module = {n for n in dir(torch.nn.Module) if not n.startswith("_")}
    assert CELL_NAMES == cell - module


def test_the_reserved_private_names_are_those_of_the_installed_frameworks():
    """Underscored names a Cell sets on itself or defines (``_params``, ``_cells``) and torch's Module has not: torch
    code may use them for its own attributes (``self._params = nn.ParameterList(...)``)."""
    import torch
    from mindspore import nn

    def ours(name) -> bool:  # mindport.runtime's own additions to Cell (``_mp_parameters``), once it is imported
        found = inspect.getattr_static(nn.Cell, name, None)
        return getattr(getattr(found, "fget", found), "__module__", "").startswith("mindport")

    def private(names):
        return {n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))
                and not ours(n)}

    cell = private(set(vars(nn.Cell())) | set(dir(nn.Cell)))
    module = private(set(vars(torch.nn.Module())) | set(dir(torch.nn.Module)))
    assert CELL_PRIVATE_NAMES == cell - module


def test_a_sub_module_list_named_cells_converts_and_takes_its_weights(tmp_path):
    import mindspore as ms
    import torch

    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.cells = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
                self.phase = nn.Linear(4, 2)

            def forward(self, x):
                for cell in self.cells:
                    x = torch.tanh(cell(x))
                return self.phase(self.cells[0](x))
    """)
    result = convert_source(source)
    assert result.diagnostics == [] and "self.cells_" in result.code and "self.phase_" in result.code
    path = tmp_path / "cells_ms.py"
    path.write_text(result.code)
    spec = importlib.util.spec_from_file_location("cells_ms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch_ns: dict = {}
    exec(compile(source, "cells_torch", "exec"), torch_ns)
    torch_net, ms_net = torch_ns["Stack"]().eval(), module.Stack()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_a_parameter_list_named_params_converts_and_takes_its_weights(tmp_path):
    """``self._params = nn.ParameterList(...)``: renamed ``_params_`` by the converter and by the weight mapping
    (``_params.0`` -> ``_params_.0``), so torch's state_dict lands on it."""
    import mindspore as ms
    import torch

    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self._params = nn.ParameterList([nn.Parameter(torch.randn(4, 3)), nn.Parameter(torch.randn(3, 2))])

            def forward(self, x):
                for p in self._params:
                    x = torch.tanh(x @ p)
                return x
    """)
    result = convert_source(source)
    assert result.diagnostics == [] and "self._params_" in result.code
    path = tmp_path / "params_ms.py"
    path.write_text(result.code)
    spec = importlib.util.spec_from_file_location("params_ms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch_ns: dict = {}
    exec(compile(source, "params_torch", "exec"), torch_ns)
    torch_net, ms_net = torch_ns["Net"]().eval(), module.Net()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
