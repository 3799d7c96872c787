"""A port written with MindSpore's own layers only keeps torch's unbatched inputs (issue 26).

torch's convolutions, LPPool2d, AdaptiveAvg/MaxPool1d, recurrent layers and cells take an input without the batch
axis (and the cells a missing ``hx`` as zeros); MindSpore's take a batch only. ``mindport.runtime.unbatched`` gives
them both, but loaded only with a ``mindport.runtime`` import: a converted file whose every layer is MindSpore's own
crashed on the unbatched input torch ran (first run, main 3fafb6b: every native row below, e.g. "Conv2D: the x shape
size must be equal to 4, but got 3", "GRUCell.construct() missing 1 required positional argument: 'hx'").

Now the converter loads the handling in such a file unless it shows every input of those layers batched
(``native_facts.unbatched_handling``), and every runtime module converted code imports loads it too.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.context import IMPORT_STYLE
from mindport.migrator.imports import EINOPS_BACKEND, UNBATCHED

ROOT = Path(__file__).resolve().parents[2]
LINE = "import mindport.runtime.unbatched"


def _converted(source: str) -> str:
    result = convert_source(textwrap.dedent(source), "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


# --- the rows: every torch layer the handling changes (tests/runtime/test_unbatched_inputs.py enumerates them from
# torch's docstrings), each as the only layer of a model class, converted and run in a fresh process against torch

def _rows():
    from tests.runtime.test_unbatched_inputs import FIX, TABLE

    return [(ctor, spec) for ctor, spec, status, _ in TABLE if status == FIX]


def _model(index: int, ctor: str, count: int) -> str:
    names = ", ".join(f"x{i}" for i in range(count))
    return (f"class Row{index}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.layer = nn.{ctor}\n\n    def forward(self, {names}):\n        return self.layer({names})\n")


CHILD = r"""
import importlib.util, json, sys
import numpy as np
import torch
import mindspore as ms

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

t_mod, m_mod = load("torch_model", sys.argv[1]), load("ms_model", sys.argv[2])
loaded = "mindport.runtime.unbatched" in sys.modules
from mindport import transfer_weights
data = np.load(sys.argv[3], allow_pickle=False)
rows = json.loads(sys.argv[4])

def flat(v):
    if isinstance(v, (tuple, list)):
        return [leaf for item in v for leaf in flat(item)]
    return [v]

def nest(items, structure, to):
    return tuple(nest(items, s, to) if isinstance(s, list) else to(data[items.pop(0)]) for s in structure)

out = {"loaded": loaded}
for index, structure in rows:
    torch.manual_seed(0)
    t_layer, m_layer = getattr(t_mod, f"Row{index}")().eval(), getattr(m_mod, f"Row{index}")()
    m_layer.set_train(False)
    transfer_weights(t_layer.state_dict(), m_layer)
    names = [k for k in data.files if k.startswith(f"r{index}_")]
    with torch.no_grad():
        want = flat(t_layer(*nest(list(names), structure, torch.from_numpy)))
    try:
        got = flat(m_layer(*nest(list(names), structure, ms.Tensor)))
        errors = [float(np.abs(g.asnumpy() - w.numpy()).max()) if tuple(g.shape) == tuple(w.shape) else "shape"
                  for g, w in zip(got, want)]
        out[str(index)] = "ok" if all(e != "shape" and e < 1e-5 for e in errors) else repr(errors)
    except Exception as exc:  # noqa: BLE001 - reported per row
        out[str(index)] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
print(json.dumps(out))
"""


def _structure(value):
    return [_structure(v) for v in value] if isinstance(value, tuple) else 0


def test_a_native_port_takes_unbatched_inputs_like_torch(tmp_path):
    """Every row the handling fixes whose conversion is MindSpore's own layer (no other runtime import), in one
    converted file, run in a fresh process (nothing else loads the handling) against torch."""
    from tests.runtime.test_unbatched_inputs import _inputs

    torch_source, rows, arrays = ["import torch\nfrom torch import nn\n\n"], [], {}
    for index, (ctor, spec) in enumerate(_rows()):
        inputs = _inputs(spec)
        model = _model(index, ctor, len(inputs))
        alone = _converted("import torch\nfrom torch import nn\n\n\n" + model)
        if "mindport.runtime import" in alone:
            continue  # a runtime layer (padding modes, ConvTranspose1d): the handling loads with it
        assert LINE in alone, (ctor, alone)
        torch_source.append("\n" + model)
        rows.append((index, _structure(inputs)))
        leaves = [leaf for leaf in _flat_inputs(inputs)]
        arrays.update({f"r{index}_{i:02d}": leaf for i, leaf in enumerate(leaves)})
    # convs, LPPool2d, a global adaptive 1-D pool, LSTM, cells; an adaptive 1-D pool of another size and RNN/GRU on
    # CPU are mindport.runtime layers now (non-divisible lengths; the recurrences' tanh precision), which take
    # unbatched inputs themselves (tests/mappings/test_adaptive_pool1d.py, test_recurrent_precision.py); so are
    # RNNCell/GRUCell/LSTMCell on CPU since legacy12 (tests/runtime/test_recurrent_cell_precision.py, CELLS below)
    assert len(rows) >= 8, rows
    t_path, m_path, npz = tmp_path / "torch_model.py", tmp_path / "ms_model.py", tmp_path / "inputs.npz"
    t_path.write_text("\n".join(torch_source))
    m_path.write_text(_converted(t_path.read_text()))
    np.savez(npz, **arrays)
    run = subprocess.run([sys.executable, "-c", CHILD, str(t_path), str(m_path), str(npz), json.dumps(rows)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    loaded = result.pop("loaded")
    assert ({k: v for k, v in result.items() if v != "ok"}, len(result), loaded) == ({}, len(rows), True)


def _flat_inputs(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flat_inputs(item)]
    return [value]


# --- where the converter sees the input batched, the port stays native (no mindport import; a residual block whose
# results flow through names, activations and a sum into BatchNorm2d: tests/converter/test_native_ports.py's NATIVE_RELU)

NATIVE = {
    "through a BatchNorm2d": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.bn = nn.BatchNorm2d(4)

            def forward(self, x):
                return torch.relu(self.bn(self.conv(x)))
        """,
    "out of a BatchNorm3d": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm3d(3)
                self.conv = nn.Conv3d(3, 4, 3)

            def forward(self, x):
                return self.conv(self.bn(x))
        """,
    "its shape unpacked": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(4, 5, batch_first=True)
                self.conv = nn.Conv2d(4, 4, 3)
                self.fc = nn.Linear(4, 5)

            def forward(self, x, z, v):
                b, t, c = x.shape
                y, _ = self.rnn(x)
                n, ch, h, w = z.size()
                batch, features = v.shape
                return self.conv(z), y, self.fc(v), b * t * c * n * ch * h * w * batch * features
        """,
    "followed by a BatchNorm2d through a ReLU in a Sequential": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.BatchNorm2d(4))

            def forward(self, x):
                return self.body(x)
        """,
    "followed by a BatchNorm2d in a Sequential": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())

            def forward(self, x):
                return self.body(x)
        """,
}

HANDLED = {
    "a conv alone": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)

            def forward(self, x):
                return self.conv(x)
        """,
    "a BatchNorm1d (takes (N, C) too)": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(4, 5)  # LSTM: MindSpore's own layer (a GRU is a runtime layer, whose import loads the handling)
                self.bn = nn.BatchNorm1d(5)

            def forward(self, x):
                return self.bn(self.rnn(x)[0])
        """,
    "a Sequential whose conv no batch-only layer follows": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2))

            def forward(self, x):
                return self.body(x)
        """,
    "a BatchNorm2d in one branch only": """
        class Net(nn.Module):
            def __init__(self, norm):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.bn = nn.BatchNorm2d(4)
                self.norm = norm

            def forward(self, x):
                out = self.conv(x)
                if self.norm:
                    out = self.bn(out)
                return self.bn(out) if self.norm else out
        """,
    "a name the function returns before the BatchNorm2d reads it": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.bn = nn.BatchNorm2d(4)

            def forward(self, x):
                out = self.conv(x)
                return out
                out = self.bn(out)
        """,
    "a layer handed on": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.bn = nn.BatchNorm2d(4)
                self.layers = [self.conv]

            def forward(self, x):
                return self.bn(self.conv(x))
        """,
    "a layer built in a function": """
        def block():
            return nn.LSTM(4, 5)
        """,
    "a shape unpacked from another name": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)

            def forward(self, x, y):
                b, c, h, w = y.shape
                return self.conv(x)
        """,
}


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in NATIVE.items()])
def test_an_input_shown_batched_stays_native(source):
    code = _converted("import torch\nfrom torch import nn\n" + textwrap.dedent(source))
    assert "mindport" not in code, code


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in HANDLED.items()])
def test_an_input_not_shown_batched_loads_the_handling(source):
    code = _converted("import torch\nfrom torch import nn\n" + textwrap.dedent(source))
    assert LINE in code, code


# MindSpore's own cells (a port for a GPU or Ascend): the handling gives them torch's hx default and unbatched step.
# A CPU port builds mindport.runtime.layers' cells (torch's tanh precision), whose import loads the handling.
CELLS = {
    "a cell without hx, shape unpacked": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.GRUCell(4, 5)

            def forward(self, x):
                b, c = x.shape
                return self.cell(x)
        """,
    "a cell given hx, its input's rank not shown": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.RNNCell(4, 5)

            def forward(self, x, h):
                return self.cell(x, h)
        """,
}


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in CELLS.items()])
def test_a_cell_loads_the_handling(source):
    source = "import torch\nfrom torch import nn\n" + textwrap.dedent(source)
    gpu = convert_source(source, "model.py", device="gpu")
    assert not gpu.diagnostics and LINE in gpu.code and "mp_nn" not in gpu.code, gpu.code
    code = _converted(source)
    assert "from mindport.runtime import layers as mp_nn" in code and "mp_nn." in code, code


def test_a_file_with_a_runtime_import_gets_no_second_line():
    code = _converted("""
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.scales = nn.ParameterList([nn.Parameter(torch.ones(1))])

            def forward(self, x):
                return self.conv(x) * self.scales[0]
        """)
    assert "mindport.runtime" in code and LINE not in code, code
    assert _converted(code) == code  # idempotent


def test_a_mindspore_file_is_left_alone():
    source = "from mindspore import nn\n\n\ndef block():\n    return nn.Conv2d(3, 4, 3)\n"
    assert _converted(source) == source


def _runtime_imports(module: str) -> set[str]:
    path = ROOT / (module.replace(".", "/") + ".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "mindport.runtime":
                found |= {f"mindport.runtime.{a.name}" for a in node.names}
            elif node.module.startswith("mindport.runtime."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("mindport.runtime.")}
    return found


def _loads(module: str, seen: frozenset = frozenset()) -> bool:
    if module == UNBATCHED:
        return True
    return any(_loads(m, seen | {module}) for m in _runtime_imports(module) - seen
               if (ROOT / (m.replace(".", "/") + ".py")).exists())


@pytest.mark.parametrize("module", sorted({m for m in IMPORT_STYLE if m.startswith("mindport.runtime.")}
                                          | {EINOPS_BACKEND, "mindport.runtime.einops_layers",
                                             "mindport.runtime.graph_safe"}))
def test_every_runtime_module_converted_code_imports_loads_the_handling(module):
    """The converter adds the line only to files that import no runtime module: each of them must load it."""
    assert _loads(module)
