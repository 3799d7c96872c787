"""Causes found by the training corpus's first contact with four more repositories (benchmarks/training/fresh46.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder


def _convert_and_run(tmp_path, source):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(source)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    return _run_in_folder(src), _run_in_folder(out), code


# TingsongYu/PyTorch-Tutorial-2nd's chapter-5/03_lr_scheduler_plot.py shows LambdaLR on an SGD over two param groups
# of plain tensors (``torch.randn((6, 3, 5, 5))``, ``torch.ones((5, 5))``: no requires_grad). torch takes any leaf
# tensor (one without a grad is never updated); a MindSpore optimizer holds only Parameters, and the port stopped
# there (TypeError from MindSpore's own message: can only concatenate str (not "_TensorMeta") to str). The plain
# tensors an optimizer is given (a list or param groups built in the call) now become Parameters that need no grad
# (mindport.runtime.optim.distinct_names): the schedulers and param groups work on them as in torch, no step moves them.
PLAIN_TENSORS = '''
import torch
import torch.optim as optim

weights_1 = torch.randn((6, 3, 5, 5))
weights_2 = torch.ones((5, 5))
optimizer = optim.SGD([{'params': [weights_1]}, {'params': [weights_2]}], lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda e: 0.1 ** (e // 3), lambda e: 0.95 ** e])
single = optim.Adam([torch.zeros(3), torch.ones(2)], lr=0.5)
step_lr = optim.lr_scheduler.StepLR(single, step_size=2, gamma=0.5)
for epoch in range(8):
    for i in range(3):
        optimizer.step()
        optimizer.zero_grad()
        single.step()
    scheduler.step()
    step_lr.step()
    print("step", float(optimizer.param_groups[0]["lr"]), float(optimizer.param_groups[1]["lr"]),
          float(single.param_groups[0]["lr"]), float(weights_2.sum()))
'''


def test_an_optimizer_over_plain_tensors_steps_its_schedulers_like_torch(tmp_path):
    t, m, code = _convert_and_run(tmp_path, PLAIN_TENSORS)
    assert "import torch" not in code, code
    assert len(t) == len(m) == 8, (t, m, code)
    assert t[0][0] == 0.1 and t[3][0] < 0.011 and t[7][1] < t[0][1]
    assert all(row[3] == 25.0 for row in t)  # no grad, no step: torch never moves them
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-6)

