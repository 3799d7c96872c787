"""Causes found by the training corpus's first contact with four more repositories (benchmarks/training/fresh44.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder

# gyuwon12/DeepLearning-basic-study's Encoder-Decoder/models.py initialises a recurrent layer by torch's private
# name list, d2l's idiom: ``for name in module._flat_weights_names: if "weight" in name:
# nn.init.xavier_uniform_(module._parameters[name])``, applied to the model through ``self.apply(init)``. MindSpore's
# GRU keeps torch's parameter names but no such list: the port stopped before training (AttributeError: The 'GRU'
# object has no attribute '_flat_weights_names'.). torch's ``_flat_weights_names`` / ``_flat_weights`` of an
# RNN/GRU/LSTM are now derived members of the layer (the surface table), read by the layer's class at run time.
FLAT_WEIGHTS = '''
import torch
import torch.nn as nn


def init_recurrent(module):
    if type(module) == nn.GRU or type(module) == nn.LSTM:
        for name in module._flat_weights_names:
            if "weight" in name:
                nn.init.xavier_uniform_(module._parameters[name])


class Tagger(nn.Module):
    def __init__(self, kind, layers, bidirectional):
        super().__init__()
        self.rnn = getattr(nn, kind)(3, 5, layers, bidirectional=bidirectional)
        self.out = nn.Linear(5 * (2 if bidirectional else 1), 2)
        self.apply(init_recurrent)

    def forward(self, x):
        h = self.rnn(x)[0]
        return self.out(h)


torch.manual_seed(0)
x = torch.sin(torch.arange(72.0) * 0.7).reshape(6, 4, 3)
y = (x.sum(-1) > 0).long()
for kind, layers, bidirectional in (("GRU", 2, True), ("LSTM", 1, False)):
    model = Tagger(kind, layers, bidirectional)
    names = model.rnn._flat_weights_names
    flat = model.rnn._flat_weights
    print("step", len(names), len(flat), sum(float(w.sum()) for w in flat) * 0.0)
    with torch.no_grad():
        for i, name in enumerate(names):  # deterministic weights both sides share, in torch's order
            w = model.rnn._parameters[name]
            w.copy_(torch.linspace(-0.3, 0.3, w.numel()).reshape(w.shape) * (1 + 0.1 * i))
        model.out.weight.copy_(torch.linspace(-0.5, 0.5, model.out.weight.numel()).reshape(model.out.weight.shape))
        model.out.bias.fill_(0.0)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 2), y.reshape(-1))
        loss.backward()
        opt.step()
        print("step", loss.item())
'''


def _convert_and_run(tmp_path, source):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(source)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    return _run_in_folder(src), _run_in_folder(out), code


def test_a_recurrent_layer_initialised_through_its_flat_weights_names(tmp_path):
    t, m, code = _convert_and_run(tmp_path, FLAT_WEIGHTS)
    assert "import torch" not in code, code
    assert len(t) == len(m) == 12, (t, m, code)
    assert t[0][:2] == [16.0, 16.0] and t[6][:2] == [4.0, 4.0]
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-4, atol=1e-6)
    assert t[5][0] < t[1][0] and t[11][0] < t[7][0]


# sgould/fun_and_games' reinforce.py: a generator acts in a grid world and yields ``(sample, log_p_action)``,
# ``torch.log`` of the policy's probabilities; the loop collects an episode with ``list(generate_episode(...))``, takes
# ``policy_loss = log_probs[action]`` per step and hands it to ``gradients_wrt_params(net, loss)``, which sets
# ``param.grad = torch.autograd.grad(loss, param, retain_graph=True)[0]`` parameter by parameter before a hand-written
# ``param.data += lr * param.grad``. The helper's grad of a loss handed in stayed torch's call (MP105, "loss is not
# computed in this block"), and the port failed at its first step (TypeError: iteration over a 0-d tensor, from
# torch.autograd.grad given a MindSpore tensor). Now: a helper's ``torch.autograd.grad`` of a parameter it never
# rebinds is a handed loss (project.backward_params), in the function's body or a loop of it (the region reads a copy
# of the name, so each pass differentiates the value handed in); a generator's yielded values are recorded as a
# returned value is (they are what its consumer collects); and a handed value computed without a call from values
# held before (an item of a recorded value) is recorded as a function of them, so the differentiation computes the
# yielded log-probability again from the parameters. A loop taking such a grad for each parameter it visits, doing
# nothing else but keep it, is differentiated once before the loop for all of them (torch's saved graph serves every
# call; four value_and_grad per step had made the port 30x slower than torch, past the corpus's time-out).
YIELDED = '''
import numpy as np
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 5)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        return nn.functional.softmax(self.fc2(torch.tanh(self.fc1(x))), dim=1)


def rollout(policy, states):
    for s in states:
        state = torch.tensor(s, dtype=torch.float32).unsqueeze(0)
        probs = policy(state).squeeze()
        log_probs = torch.log(probs)
        action = int(np.argmax(probs.detach().numpy()))
        yield (state, action), log_probs


def gradients_wrt_params(net, loss):
    for name, param in net.named_parameters():
        g = torch.autograd.grad(loss, param, retain_graph=True)[0]
        param.grad = g


def update_params(net, lr):
    for name, param in net.named_parameters():
        param.data += lr * param.grad


policy = Policy()
with torch.no_grad():
    for i, p in enumerate(policy.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * (0.9 + 0.2 * i)).reshape(p.shape) * 0.5)
states = [[0.1 * k, 1.0 - 0.2 * k] for k in range(4)]
for episode in range(3):
    steps = list(rollout(policy, states))
    total = 0.0
    summed = [torch.zeros_like(p) for p in policy.parameters()]
    for t, ((state, action), log_probs) in enumerate(steps):
        policy_loss = log_probs[action]
        gradients_wrt_params(policy, policy_loss)
        for acc, p in zip(summed, policy.parameters()):
            acc += (t + 1) * p.grad
        total += policy_loss.item()
    # the episode's gradients first, then the update (torch's graph then holds the weights it computed with)
    for acc, p in zip(summed, policy.parameters()):
        p.grad = acc
    update_params(policy, 0.5)
    print("step", total, float(policy.fc1.weight.sum()), float(policy.fc2.weight.sum()))
'''


def test_a_yielded_log_probability_differentiated_by_a_helper_parameter_by_parameter(tmp_path):
    t, m, code = _convert_and_run(tmp_path, YIELDED)
    assert "import torch" not in code and "autograd" not in code, code
    # one differentiation for the loop's parameters, before it (not one per parameter)
    assert code.count("value_and_grad(") == 1 and code.index("value_and_grad(") < code.index("for name, param"), code
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-4, atol=1e-6)
    assert t[2][0] > t[0][0]  # the log-probabilities of the chosen actions grow


# The same class in a function's body: ``grads = torch.autograd.grad(loss, list(net.parameters()))`` of the loss a
# caller hands in, then ``p -= lr * g`` under no_grad (a hand-written SGD step helper). Before, MP105 kept torch's
# call and the port failed at its first step.
HANDED_SGD = '''
import torch
import torch.nn as nn


def sgd_step(net, loss, lr):
    grads = torch.autograd.grad(loss, list(net.parameters()))
    with torch.no_grad():
        for p, g in zip(net.parameters(), grads):
            p -= lr * g


net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape) * 0.5)
x = torch.cos(torch.arange(24.0)).reshape(8, 3)
y = x.sum(1, keepdim=True)
for step in range(4):
    loss = ((net(x) - y) ** 2).mean()
    sgd_step(net, loss, 0.1)
    print("step", loss.item())
'''


def test_a_helper_taking_the_gradients_of_a_loss_its_caller_hands_in(tmp_path):
    t, m, code = _convert_and_run(tmp_path, HANDED_SGD)
    assert "import torch" not in code and "autograd" not in code, code
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-5, atol=1e-7)
    assert t[3][0] < t[0][0]
