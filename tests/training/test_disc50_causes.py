"""Causes of discovery batch 19's first contact (disc50, session 48) in training code, each a fixture of our own."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# funcwj/conv-tasnet's trainer: ``ReduceLROnPlateau(optimizer, mode="min", factor=factor, patience=patience,
# min_lr=min_lr, verbose=True)``. torch's schedulers took ``verbose`` (a print at each change of the rate) until it
# was deprecated (2.2) and left their signatures; MindSpore's have none. The call was flagged MP102 "unexpected keyword
# argument 'verbose'" and kept torch's, the migration "partial". The class: the legacy flag of every LR scheduler is
# dropped. The torch reference is the same script without it (the installed torch refuses it; it only printed).
VERBOSE_SCHEDULERS = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = x.sum(1, keepdim=True) * 0.5 + 0.1
for kind in ("plateau", "step", "cosine"):
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
        model.bias.fill_(0.05)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    if kind == "plateau":
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0,
                                                               verbose=True)
    elif kind == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 2, 0.5, -1, False)
    else:
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, verbose=False)
    for epoch in range(5):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        if kind == "plateau":
            scheduler.step(loss.item() + (0.5 if epoch % 2 else 0.0))
        else:
            scheduler.step()
        print("step", loss.item(), float(optimizer.param_groups[0]["lr"]))
'''


def test_the_legacy_verbose_flag_of_a_scheduler_is_dropped():
    code = _convert(VERBOSE_SCHEDULERS)
    assert "verbose" not in code and "MP102" not in code, code
    reference = VERBOSE_SCHEDULERS.replace(",\n                                                               verbose=True", "")
    reference = reference.replace("2, 0.5, -1, False)", "2, 0.5, -1)").replace(", verbose=False)", ")")
    assert "verbose" not in reference
    t, m = _losses(reference, "torch_verbose_sched"), _losses(code, "ms_verbose_sched")
    assert len(t) == 15 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[1][1] < 0.2 and t[6][1] == 0.1  # plateau halved the rate; StepLR(2, 0.5) halved it after 2 steps
