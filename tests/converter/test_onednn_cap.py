"""OneDnnCapTransform: a converted program that may run a convolution starts with MindSpore's convolutions on the
fast oneDNN path (mindport/cpu_kernels.py), and runs: the line comes before its first convolution, in a fresh
process (oneDNN reads the variable when it first dispatches), and a value set outside is kept."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from mindport.migrator import convert_source

SCRIPT = textwrap.dedent("""\
    import os

    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.ones(2, 3, 12, 12)
    for step in range(2):
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("ISA", os.environ.get("ONEDNN_" + "MAX_CPU_ISA"))  # (named in full, the rule would leave it alone)
    """)

LINEAR_ONLY = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    if __name__ == "__main__":
        print(nn.Linear(2, 3)(torch.ones(1, 2)).shape)
    """)

LIBRARY = textwrap.dedent("""\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)

        def forward(self, x):
            loss = self.conv(x).sum()
            return loss
    """)


def _run(code: str, tmp_path, isa: str | None) -> subprocess.CompletedProcess:
    path = tmp_path / "train.py"
    path.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"}
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    env["ONEDNN_VERBOSE"] = "1"
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_training_script_with_convolutions_gets_the_cap_before_its_first_convolution(tmp_path):
    code = convert_source(SCRIPT).code
    assert code.count('os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")') == 1, code
    assert code.index("ONEDNN_MAX_CPU_ISA") < code.index("nn.Conv2d"), code
    proc = _run(code, tmp_path, None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ISA AVX2" in proc.stdout
    convs = [ln for ln in proc.stdout.splitlines() if ",convolution," in ln and ",exec," in ln]
    assert convs and not [ln for ln in convs if "ref:any" in ln], convs[:3]  # forward and backward, fast path


def test_a_value_set_outside_is_kept(tmp_path):
    proc = _run(convert_source(SCRIPT).code, tmp_path, "AVX512_CORE")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ISA AVX512_CORE" in proc.stdout


@pytest.mark.parametrize("source", [LINEAR_ONLY, LIBRARY], ids=["no convolution", "imported module"])
def test_programs_that_run_no_convolution_and_modules_only_imported_are_left_without_it(source):
    assert "ONEDNN_MAX_CPU_ISA" not in convert_source(source).code


@pytest.mark.parametrize("device", ["gpu", "ascend"])
def test_not_written_for_a_port_that_targets_a_device(device):
    assert "ONEDNN_MAX_CPU_ISA" not in convert_source(SCRIPT, device=device).code


def test_converting_the_port_again_adds_nothing():
    once = convert_source(SCRIPT).code
    assert convert_source(once).code == once
