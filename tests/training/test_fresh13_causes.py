"""Session trainfresh13 (issue 27): causes found at first contact with the fresh13 entries. One test each, on real
torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

CUDA_AUTOCAST_ON_CPU = '''
import torch
import torch.nn as nn
from torch.cuda.amp import autocast, GradScaler

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = (x[:, :1] * 0.7 - x[:, 1:2] * 1.3 + 0.2) * 3.0
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.linspace(-0.5, 0.6, 24).reshape(8, 3))
    model[0].bias.copy_(torch.linspace(-0.1, 0.1, 8))
    model[2].weight.copy_(torch.linspace(0.3, -0.4, 8).reshape(1, 8))
    model[2].bias.fill_(0.05)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = GradScaler()
for step in range(6):
    optimizer.zero_grad()
    with autocast():
        out = model(x)
        loss = criterion(out, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print("step", loss.item(), float(out.dtype == torch.float32))
'''


def test_cuda_autocast_on_a_cpu_run_is_full_precision():
    """codeypas/amp_gradscaler (``from torch.cuda.amp import autocast, GradScaler``): without CUDA torch's CUDA autocast
    touches no CPU op and the scaler disables itself, so the run is float32; the loop rule converted the network with
    ``amp.auto_mixed_precision(float16)`` unconditionally, and the port's losses left torch's by 1.4e-1 (first run,
    fresh13). CUDA's autocast now converts the network only where MindSpore computes on a GPU."""
    code = _convert(CUDA_AUTOCAST_ON_CPU)
    assert "auto_mixed_precision" in code, code  # still converted where a GPU computes
    t, m = _losses(CUDA_AUTOCAST_ON_CPU, "torch_cuda_autocast"), _losses(code, "ms_cuda_autocast")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]


EPISODES_INTO_A_LIST = '''
import numpy as np
import torch
import torch.nn as nn

net = nn.Linear(3, 2)
with torch.no_grad():
    net.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.25, 0.15, 0.05]]))
    net.bias.copy_(torch.tensor([0.1, -0.05]))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for update in range(4):
    optimizer.zero_grad()
    total = 0
    returns = []
    for episode in range(3):
        obs = np.array([0.1 * episode, -0.2, 0.3], dtype=np.float32)
        episode_log_probs = 0
        ret = 0
        for t in range(4):
            probs = torch.softmax(net(torch.tensor(obs, dtype=torch.float32)), dim=0)
            action = int(torch.argmax(probs).item())
            episode_log_probs += torch.log(probs[action])
            obs = (obs * 0.9 + (0.1 if action == 1 else -0.1)).astype(np.float32)
            ret += 1.0 + 0.5 * action
        returns.append(ret)
        total += episode_log_probs * ret
    loss = -total / 3
    loss.backward()
    optimizer.step()
    print("step", loss.item(), sum(returns) / len(returns), *net.weight.flatten().tolist())
'''


def test_a_list_the_forward_appends_to_is_no_input_of_the_gradient():
    """davenpi/rlrn (three scripts): an update's episodes run inside the differentiated function, which appends each
    episode's return to a list made before it (``returns.append(ret)``) and adds into a sum that starts as ``0``;
    both came back out as its arguments, and MindSpore, which finds the gradient's top cell by its inputs, lost it
    once the list had changed ("Can not find top cell for backward"). Python values now go around MindSpore's
    inputs."""
    code = _convert(EPISODES_INTO_A_LIST)
    assert "value_and_grad" in code, code
    t, m = _losses(EPISODES_INTO_A_LIST, "torch_episodes_list"), _losses(code, "ms_episodes_list")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)


FROZEN_DEEPCOPY = '''
import copy
import torch
import torch.nn as nn


class Shadow(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.copy = copy.deepcopy(model)
        self.copy.requires_grad_(False)


x = torch.tensor([[0.5, -1.0], [1.5, 0.25], [-0.3, 0.8], [0.9, -0.6]])
y = torch.tensor([[1.0], [-0.5], [0.25], [0.75]])
model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2]]))
    model.bias.fill_(0.1)
frozen = copy.deepcopy(model)
frozen.requires_grad_(False)
shadow = Shadow(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        frozen_loss = ((frozen(x) - y) ** 2).mean()
    print("step", loss.item(), frozen_loss.item(), float(frozen.weight.requires_grad),
          float(shadow.copy.bias.requires_grad), float(model.weight.requires_grad))
'''


def test_requires_grad_on_a_deepcopy_of_a_model_freezes_its_parameters():
    """simple_ema/mnist_ema: ``self.ema_model = deepcopy(model)`` then ``self.ema_model.requires_grad_(False)``: the
    copy was taken for another library's object (a call into ``copy``), the call stayed as written and a Cell has no
    ``requires_grad_`` (AttributeError, first run). A copy holds what it copies: the freeze reaches each Parameter."""
    code = _convert(FROZEN_DEEPCOPY)
    t, m = _losses(FROZEN_DEEPCOPY, "torch_frozen_copy"), _losses(code, "ms_frozen_copy")
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert [row[2:] for row in t] == [[0.0, 0.0, 1.0]] * 3


EMA_OF_A_FROZEN_COPY = '''
from copy import deepcopy
import torch
import torch.nn as nn


class EMAModel(nn.Module):
    def __init__(self, model, beta=0.5):
        super().__init__()
        self.ema_model = deepcopy(model)
        self.ema_model.requires_grad_(False)
        self.beta = beta

    def update(self, model):
        for ema_param, raw_param in zip(self.ema_model.parameters(), model.parameters()):
            ema_param.copy_(self.beta * ema_param + (1 - self.beta) * raw_param)


x = torch.tensor([[0.5, -1.0], [1.5, 0.25], [-0.3, 0.8], [0.9, -0.6]])
y = torch.tensor([[1.0], [-0.5], [0.25], [0.75]])
model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]]))
    model[0].bias.fill_(0.1)
    model[2].weight.copy_(torch.tensor([[0.2, -0.3, 0.15]]))
    model[2].bias.fill_(-0.05)
ema = EMAModel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    ema.update(model)
    print("step", loss.item(), len(list(ema.ema_model.parameters())), *ema.ema_model[0].weight.flatten().tolist(),
          *ema.ema_model[2].weight.flatten().tolist())
'''


def test_parameters_of_a_frozen_ema_copy_are_listed_and_updated():
    """simple_ema/mnist_ema: the EMA copy is frozen (``requires_grad_(False)``) and updated through
    ``zip(self.ema_model.parameters(), model.parameters())``; ``parameters()`` was ``trainable_params()``, which lists
    no frozen parameter, so the zip was empty and the EMA weights never moved (silently: the run's own losses are the
    raw model's). A module the file freezes lists its frozen parameters, as torch does, and no buffer (BatchNorm's
    running statistics stay out of the zip)."""
    code = _convert(EMA_OF_A_FROZEN_COPY)
    t, m = _losses(EMA_OF_A_FROZEN_COPY, "torch_ema_frozen"), _losses(code, "ms_ema_frozen")
    assert len(t) == len(m) == 4, (t, m, code)
    assert t[0][1] == 6.0
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)


EPISODES_THEN_A_VALUE_REGRESSION = '''
import numpy as np
import torch
import torch.nn as nn

policy = nn.Linear(3, 2)
value = nn.Linear(3, 1)
with torch.no_grad():
    policy.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.25, 0.15, 0.05]]))
    policy.bias.copy_(torch.tensor([0.1, -0.05]))
    value.weight.copy_(torch.tensor([[0.05, 0.1, -0.2]]))
    value.bias.fill_(0.3)
policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
value_optimizer = torch.optim.SGD(value.parameters(), lr=0.05)
steps_taken = [0]
for update in range(3):
    policy_optimizer.zero_grad()
    total_policy_loss = 0
    all_states = []
    all_returns = []
    for episode in range(2):
        states, log_probs, rewards = [], [], []
        obs = np.array([0.1 * episode + 0.05 * update, -0.2, 0.3], dtype=np.float32)
        for t in range(3):
            steps_taken[0] += 1
            state = torch.tensor(obs, dtype=torch.float32)
            states.append(state)
            probs = torch.softmax(policy(state), dim=0)
            action = int(torch.argmax(probs).item())
            log_probs.append(torch.log(probs[action]))
            obs = (obs * 0.9 + (0.1 if action == 1 else -0.1)).astype(np.float32)
            rewards.append(1.0 + 0.5 * action)
        returns = [sum(rewards[i:]) for i in range(len(rewards))]
        with torch.no_grad():
            advantages = torch.tensor(returns, dtype=torch.float32) - value(torch.stack(states)).squeeze(-1)
        for i in range(len(log_probs)):
            total_policy_loss += log_probs[i] * advantages[i]
        all_states.extend(states)
        all_returns.extend(returns)
    policy_loss = -total_policy_loss / 2
    policy_loss.backward()
    policy_optimizer.step()
    value_optimizer.zero_grad()
    predictions = value(torch.stack(all_states)).squeeze(-1)
    value_loss = nn.MSELoss()(predictions, torch.tensor(all_returns, dtype=torch.float32))
    value_loss.backward()
    value_optimizer.step()
    print("step", policy_loss.item(), value_loss.item(), len(all_states), steps_taken[0],
          *value.weight.flatten().tolist())
'''


def test_a_second_backward_reads_the_episodes_the_first_one_ran():
    """rlrn/vpg_baseline: the episode loop (environment steps, states and log-probabilities appended to lists) feeds
    the policy loss, then a value regression on the states it collected. The value loss's differentiated function
    ran the whole episode loop again (the general region reruns an earlier forward's statements, right for a GAN's
    ``fake = G(z)``): other episodes, the states appended twice. A statement that appends to a list runs once; the
    second function reads what the first handed back."""
    code = _convert(EPISODES_THEN_A_VALUE_REGRESSION)
    t, m = (_losses(EPISODES_THEN_A_VALUE_REGRESSION, "torch_value_after_episodes"),
            _losses(code, "ms_value_after_episodes"))
    assert len(t) == len(m) == 3, (t, m, code)
    assert [row[2:4] for row in t] == [[6.0, 6.0], [6.0, 12.0], [6.0, 18.0]]
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
