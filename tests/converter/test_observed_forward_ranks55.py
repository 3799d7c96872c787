"""A functional pool on a forward's own argument in a branch a recorded torch run never takes (ddim's Downsample:
``F.avg_pool2d(x, ...)`` under ``with_conv=False``, the run built ``with_conv=True``): the pool's op-level fact
(``batched:avg_pool2d``) is never noted, but the recorder notes the rank of every call's first input of each class
of the project (mindport.observed.Facts.forwards -> the decision ``input:<class>:<rank>``), and the converter's batch
flow takes the class's input as a batch of that rank (native_facts._OwnCells.input_batched): the pool on that input,
unchanged, is MindSpore's own ``ops.avg_pool2d``. The class: a branch the run did not take, reading the forward's
parameter as it came in. Observed unbatched (rank 3), the runtime's form stays. Recorded from a real torch run,
converted with the facts, the other branch run against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.observed import load, record
from port_check import assert_port_matches_in_mode
from tests.source_module import load_file

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Down(nn.Module):
        def __init__(self, ch, with_conv):
            super().__init__()
            self.with_conv = with_conv
            if self.with_conv:
                self.conv = nn.Conv2d(ch, ch, 3, stride=2)

        def forward(self, x):
            if self.with_conv:
                x = F.pad(x, (0, 1, 0, 1))
                x = self.conv(x)
            else:
                x = F.avg_pool2d(x, kernel_size=2, stride=2)
            return x


    class Net(nn.Module):
        def __init__(self, with_conv=False):
            super().__init__()
            self.inp = nn.Conv2d(3, 4, 3, padding=1)
            self.down = Down(4, with_conv)

        def forward(self, x):
            return self.down(self.inp(x))
""")

X = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)


def _facts(tmp_path, inputs):
    import torch

    folder = tmp_path / f"rank{inputs.ndim}"
    folder.mkdir()
    (folder / "net.py").write_text(SOURCE)
    net = load_file(folder / "net.py", f"forward_ranks_{inputs.ndim}")
    with record(folder) as facts, torch.no_grad():
        net.Net(with_conv=True)(torch.from_numpy(inputs))  # the conv branch: the pool never runs
    facts.save(folder / "facts.json")
    return load(folder / "facts.json").decided_sites("net.py")


def test_a_forward_observed_batched_makes_its_unrun_pool_native(tmp_path):
    plain = convert_source(SOURCE, "net.py").code
    assert "x = mp_unbatched.avg_pool2d(x, " in plain, plain
    decided = _facts(tmp_path, X)
    facts = {fact for *_, fact in decided}
    assert {"input:Down:4", "input:Net:4"} <= facts and not any(f.startswith("batched:") for f in facts), facts
    code = convert_source(SOURCE, "net.py", decided_sites=decided).code
    assert "x = ops.avg_pool2d(x, " in code and "mp_unbatched" not in code and "mindport" not in code, code
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "Net", [X], tmp_path, f"down_{mode}", mode, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative"])
def test_a_forward_observed_unbatched_keeps_the_runtime_form(tmp_path, mode):
    decided = _facts(tmp_path, X[0])  # one (C, H, W) image: torch's Conv2d and pools take it unbatched
    assert "input:Down:3" in {fact for *_, fact in decided}
    code = convert_source(SOURCE, "net.py", decided_sites=decided).code
    assert "x = mp_unbatched.avg_pool2d(x, " in code, code
    assert_port_matches_in_mode(SOURCE, code, "Net", [X[0]], tmp_path, "down_unbatched", mode, rtol=1e-5, atol=1e-5)
