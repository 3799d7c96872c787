"""Guards against MindSpore's CPU kernel defects decided by the device the port is for (``convert --device``).

MindSpore 2.10's CPU float32 tanh is off by up to 1e-4 and its CPU softmax gives other rows wrong values when a row
is all -inf: a port for ``any`` device (the default) or the CPU computes those through mindport.runtime; a port for
a GPU or Ascend writes MindSpore's own ``ops.tanh``/``nn.Tanh``/``ops.softmax`` there and imports no runtime for
them. An int->float guard (an input that may be an integer tensor) stays on every device."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from mindport import convert_source
from mindport.cli import main
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.Tanh()

        def forward(self, x, mask):
            h = torch.tanh(self.fc(x))
            s = F.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
            return self.act(h) + s + x.tanh()
""")


def test_a_port_for_any_device_keeps_the_cpu_guards():
    code = convert_source(SOURCE).code
    assert "_precise_tanh(self.fc(x))" in code and "mp_nn.Tanh()" in code and "mp_F.softmax(" in code


@pytest.mark.parametrize("device", ["ascend", "gpu"])
def test_a_port_for_a_gpu_or_ascend_writes_mindspores_own_ops(device):
    code = convert_source(SOURCE, device=device).code
    assert "ops.tanh(self.fc(x))" in code and "self.act = nn.Tanh()" in code
    assert "ops.softmax(x.masked_fill(mask=mask, value=float(\"-inf\")), axis=-1)" in code
    assert "mp_nn" not in code and "mp_F" not in code
    # x reaches self.fc (a float-weight layer) first, so it is floating in torch (an integer x raises there): the
    # int-to-float guard is not needed, on any device (native_facts' layer input fact)
    assert "ops.tanh(x)" in code and "mp_math" not in code


def test_the_cli_takes_the_device(tmp_path):
    src = tmp_path / "gate.py"
    src.write_text(SOURCE)
    out = tmp_path / "gate_ms.py"
    result = CliRunner().invoke(main, ["convert", str(src), "-o", str(out), "--device", "ascend"])
    assert result.exit_code == 0, result.output
    assert "self.act = nn.Tanh()" in out.read_text()


@pytest.mark.parametrize("device, atol", [("any", 1e-6), ("ascend", 3e-4)])
def test_both_ports_match_torch(tmp_path, device, atol):
    # on this CPU the Ascend port carries the CPU kernel's tanh error (up to 1e-4); no row is fully masked here
    rng = np.random.default_rng(0)
    x = (4 * rng.standard_normal((3, 4))).astype(np.float32)
    mask = np.zeros((3, 4), bool)
    mask[:, 0] = True
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE, device=device).code, "Gate", [x, mask], tmp_path,
                                f"gate_{device}", "pynative", rtol=1e-5, atol=atol)
