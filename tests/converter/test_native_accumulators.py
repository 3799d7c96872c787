"""Issue 30 (native ports): torch's cumsum on an input that is no integer or bool tensor by the facts is MindSpore's
own ``ops.cumsum``. The runtime's ``mp_math.cumsum`` exists for torch's int64 accumulation of an int32/bool input
(MindSpore's kernel keeps int32); on a floating input it calls ``ops.cumsum`` as it is. The decision is the
int-to-float guards' (TableCallTransform._non_integer_input: native_facts.FloatFacts, FlowFloats, the parameters
every caller gives floats, a recorded run's floating sites). An integer input, an input of unknown dtype and a
``dtype=`` keep the runtime's. Positives and negatives run against torch, PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

CUMSUMS = HEAD + textwrap.dedent("""
    class Sampler(nn.Module):
        def __init__(self, dim=5):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x, ids):
            cum_probs = torch.cumsum(F.softmax(self.fc(x), dim=-1), dim=-1)
            is_eos = (ids == 2).float().cumsum(dim=-1) >= 1
            h = self.fc(x)
            running = h.cumsum(1)
            gates = torch.sigmoid(x)
            pos = gates.flip(-1).cumsum(dim=-1).flip(-1)
            return cum_probs, is_eos, running, pos


    class Counts(nn.Module):
        def forward(self, x, ids):
            count = torch.cumsum(ids, dim=1)
            flags = (ids > 1).cumsum(-1)
            free = x.cumsum(-1)
            wide = torch.cumsum(x, 0, dtype=torch.float64)
            return count, flags, free, wide
""")


def _lines(code):
    return {line.strip().split(" = ")[0]: line.strip() for line in code.splitlines() if " = " in line}


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3, 5)).astype(np.float32), rng.integers(0, 4, (2, 3, 5)).astype(np.int32)]


def test_float_cumsums_are_native():
    lines = _lines(convert_source(CUMSUMS).code)
    assert lines["cum_probs"] == "cum_probs = ops.cumsum(ops.softmax(self.fc(x), axis=-1), -1)", lines
    assert lines["is_eos"] == "is_eos = ops.cumsum((ids == 2).astype(ms.float32), axis=-1) >= 1", lines
    assert lines["running"] == "running = ops.cumsum(h, axis=1)", lines
    assert lines["pos"].startswith("pos = ops.cumsum("), lines


def test_other_cumsums_keep_the_runtime():
    lines = _lines(convert_source(CUMSUMS).code)
    for name in ("count", "flags", "free", "wide"):  # an integer, a bool, a parameter, a dtype
        assert "mp_math.cumsum(" in lines[name], lines[name]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Sampler", "Counts"])
def test_cumsums_match_torch(cls, mode, tmp_path):
    code = convert_source(CUMSUMS).code
    assert_port_matches_in_mode(CUMSUMS, code, cls, _inputs(), tmp_path, f"cumsum_{cls}", mode, rtol=1e-5, atol=1e-5)


def test_integer_cumsum_keeps_torch_dtype(tmp_path, monkeypatch):
    """The runtime's cumsum of an int32 input is int64, as torch's (``ops.cumsum`` would keep int32)."""
    import mindspore as ms

    from tests.converter.port_check import torch_and_converted

    _, ms_ns = torch_and_converted(CUMSUMS, "native_accumulators_counts", tmp_path, monkeypatch)
    x, ids = _inputs()
    count, flags, _, _ = ms_ns["Counts"]()(ms.Tensor(x), ms.Tensor(ids))
    assert count.dtype == ms.int64 and flags.dtype == ms.int64


# ------------------------------------------------------------------ a Python float() operand makes the arithmetic float
SWISH = HEAD + textwrap.dedent("""
    class Swish(nn.Module):
        def __init__(self, swish=1.5):
            super().__init__()
            self.swish = swish

        def forward(self, y):
            return y * torch.sigmoid(y * float(self.swish))


    class Shadowed(nn.Module):
        def forward(self, y):
            float = lambda v: v
            return torch.sigmoid(y * float(2))
""")


def test_float_call_operand_is_float():
    code = convert_source(SWISH).code
    assert "return y * ops.sigmoid(y * float(self.swish))" in code, code
    assert "mp_math.sigmoid(y * float(2))" in code, code  # float bound in the function: not the builtin


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_float_call_operand_matches_torch(dtype, mode, tmp_path):
    code = convert_source(SWISH).code
    y = (np.random.default_rng(3).standard_normal((2, 5)) * 3).astype(dtype)
    assert_port_matches_in_mode(SWISH, code, "Swish", [y], tmp_path, f"swish_{np.dtype(dtype).name}", mode,
                                rtol=1e-5, atol=1e-6)
