"""Session trainspeed15 (issue 27): speed of converted training loops, by family (benchmarks/training/speed.py has
the timings; no test here is timed), and the learn check of the training corpus. Real torch, real MindSpore."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from test_fresh_causes import _convert

# a training loop the rule rewrites into MindSpore's own step (ms.value_and_grad built once, a native optimizer):
# its converted file imports runtime modules (the loss) but not mindport.runtime.training
_NATIVE_STEP = '''
import torch
import torch.nn as nn


def train(x, y, w1, w2, steps):
    model = nn.Sequential(nn.Linear(2, 6), nn.Sigmoid(), nn.Linear(6, 1), nn.Sigmoid())
    model.load_state_dict({"0.weight": torch.tensor(w1), "0.bias": torch.zeros(6),
                           "2.weight": torch.tensor(w2), "2.bias": torch.zeros(1)})
    criterion = nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1)
    X, Y = torch.tensor(x), torch.tensor(y)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        cost = criterion(model(X), Y)
        cost.backward()
        optimizer.step()
        losses.append(cost.item())
    return losses
'''

_FRESH = r'''
import json, sys, types
import numpy as np
module = types.ModuleType("ms_step")
from mindspore._c_expression import RuntimeConf
exec(compile(open(sys.argv[1]).read(), "ms_step", "exec"), module.__dict__)  # the imports; nothing run yet
blocking = RuntimeConf.get_instance().is_launch_blocking()
data = np.load(sys.argv[2])
losses = module.train(*(data[k] for k in ("x", "y", "w1", "w2")), steps=20)
print(json.dumps({"blocking": blocking, "losses": [float(v) for v in losses]}))
'''


# (trainspeed15's synchronous launch for every runtime module was reverted: MindSpore 2.10's launch_blocking
# breaks floor division on the CPU, 'KernelMod Init Failed: FloorDiv', tests/mappings/test_tensor_method_forms)


SEEDED_LOADER = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
g = torch.Generator()
g.manual_seed(2025)
data = TensorDataset(torch.arange(12.0).view(12, 1), torch.arange(12.0))
loader = DataLoader(data, batch_size=4, shuffle=True, generator=g)
order = []
for _ in range(2):
    for x, y in loader:
        order += [int(v) for v in y.tolist()]
print(order)
'''


def test_the_tracker_gives_a_loader_with_its_own_generator_the_same_order_on_both_sides(tmp_path):
    """joyful/vanilla_kd (seeded torch.Generator for its shuffled DataLoaders): run as a deterministic entry, its
    first losses differed by 3e-3 from the same weights: torch's RandomSampler draws torch.randperm(n, generator=g),
    which the tracker shares, while mindport's sampler drew the converted generator's own stream. Both now draw the
    tracker's stream."""
    from test_fresh_causes import _run_boot

    t = _run_boot(tmp_path, "torch", "track", SEEDED_LOADER)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(SEEDED_LOADER))
    assert t == m and sorted(eval(t)[:12]) == list(range(12)) and eval(t)[:12] != list(range(12)), (t, m)
