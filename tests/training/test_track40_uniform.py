"""The deterministic run's tracker (benchmarks/training/boot.py track) and ``uniform_`` (native40): the converter
writes a draw into a tensor nothing else holds as MindSpore's own ``ops.rand_like`` (``torch.empty(5).uniform_(-1, 1)``,
TableCallTransform._fresh_draw), which the tracker serves from the shared stream, while torch's side drew torch's own
generator for every ``Tensor.uniform_``: the shared draws after it parted. The program's ``uniform_`` (the script's,
its model files') now draws the shared stream on torch's side too, and mindport's runtime ``uniform_`` (a draw into a
name) likewise; torch's own calls (``nn.init``, a layer's ``reset_parameters``) keep torch's generator, as mindport's
initializers keep a stream of their own. Both kinds of draw into the program's tensors give the same values on both
sides, and the draws after them stay the same."""
from __future__ import annotations

from test_fresh_causes import _convert, _run_boot

SCRIPT = """import torch
import torch.nn as nn
fresh = torch.empty(2, 3).uniform_(-1, 1)
held = torch.zeros(4)
held.uniform_(2.0, 3.0)
layer = nn.Linear(3, 2)
nn.init.uniform_(layer.weight, -0.5, 0.5)
z = torch.randn(3)
p = torch.randperm(5)
print([round(v, 5) for v in fresh.flatten().tolist() + held.tolist() + z.tolist()], p.tolist())
"""


def test_the_programs_uniform_draws_match_and_keep_the_shared_stream_aligned(tmp_path):
    code = _convert(SCRIPT)
    assert "ops.rand_like(" in code and "mp_inplace.uniform_(held" in code, code
    t = _run_boot(tmp_path, "torch", "track", SCRIPT)
    m = _run_boot(tmp_path, "mindspore", "track", code)
    assert t == m, (t, m)
