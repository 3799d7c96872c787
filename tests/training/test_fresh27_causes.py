"""Session trainfresh27 (issue 27): causes found at first contact with the fresh27 entries and the brief's listed
shapes (/work/notes/trainfresh27.md). Real torch and real MindSpore, each test failing without its fix; the expected
values are torch's, run here. Slice kept (cost, ~90 s budget): one small model per cause, a few steps."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# An EMA / SWA copy of the weights through ``torch.optim.swa_utils`` (the brief's "EMA of weights"): main left
# ``AveragedModel`` and the averaging functions unconverted (MP103, the port then called torch's AveragedModel on a
# MindSpore Cell: AttributeError 'parameters'). The whole public surface of swa_utils' weight averaging is used here:
# AveragedModel with the default (SWA running mean), multi_avg_fn=get_ema_multi_avg_fn / get_swa_multi_avg_fn,
# avg_fn=get_ema_avg_fn / get_swa_avg_fn / a lambda, use_buffers=True (BatchNorm statistics averaged) and False
# (copied), n_averaged; a training step with BatchNorm, evaluated through the averaged copies in eval mode.
AVERAGED = '''
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn
from torch.optim.swa_utils import get_swa_multi_avg_fn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(torch.relu(self.bn(self.fc(x))))


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    copies = [AveragedModel(model),
              AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9)),
              AveragedModel(model, multi_avg_fn=get_swa_multi_avg_fn()),
              AveragedModel(model, avg_fn=get_ema_avg_fn(0.8), use_buffers=True),
              torch.optim.swa_utils.AveragedModel(model, avg_fn=get_swa_avg_fn()),
              AveragedModel(model, avg_fn=lambda avg, cur, n: 0.5 * avg + 0.5 * cur, use_buffers=True)]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        for c in copies:
            c.update_parameters(model)
        losses.append(float(loss))
    outs = []
    for c in copies:
        c.eval()
        with torch.no_grad():
            outs.append(c(batches[0][0]))
    return losses, outs, [int(c.n_averaged) for c in copies]
'''


def test_averaged_models_follow_torch():
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(AVERAGED)
    assert "mp_swa.AveragedModel" in code and "torch" not in code.replace("torch_", ""), code
    t_mod, m_mod = load_module(AVERAGED, "torch_averaged"), load_module(code, "ms_averaged")
    torch.manual_seed(0)
    t_model, m_model = t_mod.Net(), m_mod.Net()
    transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
    rng = np.random.RandomState(0)
    data = [(rng.normal(0, 1, (8, 4)).astype(np.float32), rng.normal(0, 1, (8, 3)).astype(np.float32))
            for _ in range(4)]
    t_losses, t_outs, t_counts = t_mod.train(t_model, [(torch.tensor(x), torch.tensor(y)) for x, y in data])
    m_losses, m_outs, m_counts = m_mod.train(m_model, [(ms.Tensor(x), ms.Tensor(y)) for x, y in data])
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5)
    assert m_counts == t_counts == [4] * 6
    for i, (t, m) in enumerate(zip(t_outs, m_outs)):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-4, atol=1e-5, err_msg=f"copy {i}")
    # the copies differ from each other and from the model (the test would not see a copy that never averaged)
    assert np.abs(t_outs[0].numpy() - t_outs[1].numpy()).max() > 1e-3


# A list changed in place between the statements that build it and the tensor the loss makes of it, in a training
# step the general backward region converts (minimalRL's PPO: advantages appended over the reversed TD errors, then
# ``advantage_lst.reverse()``, then ``torch.tensor(advantage_lst)``). main read only some mutating methods as writes
# (append, extend, insert, update, add, clear, pop, remove, setdefault): the ``reverse()`` ran after forward_fn,
# so the advantages were differentiated in the wrong order, silently (PPO's first loss equal, its second off by
# 8e-3 relative). Two members of the class on the PPO shape: list.reverse() and list.sort(); and the enumeration:
# every mutating method of list, dict, set and collections.deque (from Python's own types) is in the set.
REVERSED = '''
import collections
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


def train(model, x, y, how):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for i in range(3):
        d = (model(x) - y).detach().numpy()
        adv = []
        a = 0.0
        for t in d[::-1]:
            a = 0.9 * a + float(t[0])
            adv.append([a])
        if how == "reverse":
            adv.reverse()
        else:
            adv.sort(key=lambda v: -v[0])
        w = torch.tensor(adv, dtype=torch.float)
        loss = (((model(x) - y) ** 2) * w).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses
'''


def test_a_list_changed_in_place_before_the_loss_reads_it_stays_in_the_differentiated_function():
    import collections

    import mindspore as ms
    import torch

    from mindport import transfer_weights
    from mindport.migrator.rules.training_region import _MUTATORS

    reading = {"copy", "count", "index", "get", "items", "keys", "values", "fromkeys", "union", "intersection",
               "difference", "symmetric_difference", "isdisjoint", "issubset", "issuperset", "maxlen"}
    for kind in (list, dict, set, collections.deque):
        mutating = {m for m in dir(kind) if not m.startswith("_")} - reading
        assert mutating <= _MUTATORS, (kind, mutating - _MUTATORS)

    code = _convert(REVERSED)
    assert code.index("def forward_fn") < code.index("adv.reverse()") < code.index("adv.sort(") \
        < code.index("return loss"), code
    t_mod, m_mod = load_module(REVERSED, "torch_reversed"), load_module(code, "ms_reversed")
    rng = np.random.RandomState(3)
    x, y = rng.normal(0, 1, (6, 3)).astype(np.float32), rng.normal(0, 1, (6, 1)).astype(np.float32)
    for how in ("reverse", "sort"):
        torch.manual_seed(0)
        t_model, m_model = t_mod.Net(), m_mod.Net()
        transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
        t_losses = t_mod.train(t_model, torch.tensor(x), torch.tensor(y), how)
        m_losses = m_mod.train(m_model, ms.Tensor(x), ms.Tensor(y), how)
        np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5, err_msg=how)
        np.testing.assert_allclose(m_model.fc.weight.asnumpy(), t_model.fc.weight.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=how)
