"""A loss computed inside the backward's own expression, where nothing before it in the block reads what it reads
(train47's finding: ``((model(x) - y) ** 2).mean().backward()`` in a loop whose body holds only ``opt.zero_grad()``
and a print before it, the data and model bound outside the loop). The region planner found no forward statement
and flagged MP105 ("nothing before .backward() computes ..."), leaving the step to torch; the expression is now named
as a statement of its own (``loss_ = ...``, as a bare loss after other statements already was) and the block is
planned again. The script runs under MindSpore and gives torch's losses."""
from __future__ import annotations

import numpy as np

from test_fresh46_causes import _convert_and_run

INLINE = '''
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
x = torch.from_numpy(rng.standard_normal((16, 3)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((16, 1)).astype(np.float32))
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.5]]))
    model.bias.fill_(0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
for step in range(6):
    opt.zero_grad()
    print("note", step)
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
    print("step", float(((model(x) - y) ** 2).mean()))
'''


def test_a_loss_computed_in_the_backward_expression_alone_trains(tmp_path):
    t, m, code = _convert_and_run(tmp_path, INLINE)
    assert "MP105" not in code and "import torch" not in code, code
    assert len(t) == len(m) == 6, (t, m, code)
    assert t[-1][0] < t[0][0]  # it learns: the comparison is not of constants
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-5)
