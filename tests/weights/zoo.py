"""A zoo of small torch models for the weight transfer, each with the MindSpore side built by the real converter.

Where the converter lacks something (weight_norm, ParameterList, tensor factories in __init__, tied-weight
assignment), the MindSpore side is patched by hand below (``patch``) or written by hand (``ms_source``); the
weight mapping under test is the same either way.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HEADER = "import torch\nimport torch.nn as nn\n\n\n"


@dataclass(frozen=True)
class Case:
    name: str
    torch_source: str
    factory: str
    inputs: tuple  # (shape, kind) pairs: kind "float" or ("int", high)
    patch: tuple = ()  # (old, new) replacements on the converted source
    ms_source: str = ""  # a MindSpore model written by hand (converter lacks the construct)
    hand_written: str = ""  # why the MindSpore side is (partly) by hand


CASES = {c.name: c for c in [
    Case("conv_bn_linear", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.fc = nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))
""", "Net", (((2, 3, 6, 6), "float"),)),
    Case("conv1d", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 3, padding=1)
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        return self.bn(self.conv(x))
""", "Net", (((2, 4, 10), "float"),)),
    Case("top_level_batchnorm", """
def make():
    return nn.BatchNorm2d(4)
""", "make", (((2, 4, 3, 3), "float"),)),
    Case("conv3d_bn3d", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 3, 3, padding=1)
        self.bn = nn.BatchNorm3d(3)

    def forward(self, x):
        return self.bn(self.conv(x))
""", "Net", (((1, 2, 3, 4, 4), "float"),)),
    Case("norms_prelu", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 6)
        self.act = nn.PReLU(6)
        self.ln = nn.LayerNorm(4)

    def forward(self, x):
        return self.ln(self.act(self.gn(x)))
""", "Net", (((2, 6, 4, 4), "float"),)),
    Case("tied_embedding", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, x):
        return self.head(self.emb(x))
""", "Net", (((2, 5), ("int", 10)),)),
    Case("rnns", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(10, 4, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        out, _ = self.lstm(x)
        out, _ = self.gru(out)
        return out
""", "Net", (((2, 3, 6), "float"),)),
    Case("attention", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x)
        return out
""", "Net", (((2, 3, 8), "float"),)),
    Case("containers", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Sequential(nn.Linear(4, 6), nn.ReLU()), nn.Linear(6, 6))
        self.blocks = nn.ModuleList([nn.Linear(6, 6), nn.Sequential(nn.Linear(6, 6), nn.Tanh())])
        self.heads = nn.ModuleDict({"a": nn.Linear(6, 3), "b": nn.Linear(6, 3)})

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.heads["a"](x) + self.heads["b"](x)
""", "Net", (((2, 4), "float"),)),
    Case("buffers", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("offset", torch.zeros(4))
        self.register_buffer("scale", torch.ones(4), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale + self.offset
""", "Net", (((2, 4), "float"),)),
    Case("parameter_list", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(4)), nn.Parameter(torch.ones(4))])

    def forward(self, x):
        return self.fc(x) * self.scales[0] + self.scales[1]
""", "Net", (((2, 4), "float"),)),
    Case("weight_norm", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.old = nn.utils.weight_norm(nn.Linear(4, 6))
        self.new = nn.utils.parametrizations.weight_norm(nn.Linear(6, 3), dim=None)

    def forward(self, x):
        return self.new(self.old(x))
""", "Net", (((2, 4), "float"),),
        # both APIs convert (mindport.runtime.layers.weight_norm: weight_g/weight_v by name; parametrized_weight_norm:
        # parametrizations.weight.original0/1 by name); the second is patched into a plain MindSpore layer here, so
        # the transfer's fold of g and v into weight (a hand-written MindSpore model's case) stays tested
        patch=(("mp_nn.parametrized_weight_norm(nn.Dense(in_channels=6, out_channels=3), dim=None)",
                "nn.Dense(in_channels=6, out_channels=3)"),),
        hand_written="parametrizations.weight_norm wrapper removed (folded into weight by the transfer)"),
]}


def randomise(model, seed: int = 0):
    """Random weights and BatchNorm statistics (running_var positive), so no value is accidentally default."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in list(model.state_dict(keep_vars=True).items()):
            if not tensor.dtype.is_floating_point:
                continue
            values = torch.randn(tensor.shape, generator=gen) * 0.5
            if name.endswith("running_var") or name.endswith("weight_g"):
                values = values.abs() + 0.5
            tensor.copy_(values)
    return model.eval()


def make_inputs(case: Case, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape, kind in case.inputs:
        if kind == "float":
            out.append(rng.standard_normal(shape).astype(np.float32))
        else:
            out.append(rng.integers(0, kind[1], size=shape).astype(np.int32))
    return out


def ms_source(case: Case) -> str:
    if case.ms_source:
        return textwrap.dedent(case.ms_source)
    from mindport.migrator import convert_source

    code = convert_source(HEADER + textwrap.dedent(case.torch_source), f"{case.name}.py").code
    for old, new in case.patch:
        assert old in code, f"{case.name}: patch target {old!r} not in converted code:\n{code}"
        code = code.replace(old, new)
    return code


def build_pair(case: Case, folder: Path):
    """(torch model with random weights, a fresh MindSpore model factory)."""
    from mindport.validators.parity.loading import build_model

    folder.mkdir(parents=True, exist_ok=True)
    t_path = folder / f"torch_{case.name}.py"
    m_path = folder / f"ms_{case.name}.py"
    t_path.write_text(HEADER + textwrap.dedent(case.torch_source))
    m_path.write_text(ms_source(case))
    t_model = randomise(build_model(f"{t_path}:{case.factory}"))

    def new_ms():
        cell = build_model(f"{m_path}:{case.factory}")
        cell.set_train(False)
        return cell

    return t_model, new_ms, m_path


def run_torch(model, inputs):
    import torch

    with torch.no_grad():
        out = model(*[torch.from_numpy(a).long() if a.dtype.kind == "i" else torch.from_numpy(a) for a in inputs])
    return out.numpy()


def run_ms(cell, inputs):
    import mindspore as ms

    return cell(*[ms.Tensor(a) for a in inputs]).asnumpy()


def assert_close(actual, expected):
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * float(np.abs(expected).max() + 1e-12))
