"""Session train17 (issue 27): causes of the training corpus's failures on integ17, each against real torch and real
MindSpore."""
from __future__ import annotations

import numpy as np
import pytest

from test_fresh_causes import _convert, _run_boot

STACKED_LSTM = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(10, 4, num_layers=2)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        out, _ = self.gru(out)
        return self.head(out)


model = Net()
optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(6, 2, 3)
print([round(v, 6) for v in model(x).reshape(-1).tolist()])
'''


def test_the_tracker_gives_stacked_recurrent_layers_torchs_weights(tmp_path):
    """jessicayung/lstm_ar (deterministic entry): a 2-layer nn.LSTM. MindSpore's nn.RNN/LSTM/GRU list their
    parameters by kind (weight_ih_l0, weight_ih_l1, weight_hh_l0, ...), torch's by layer and direction
    (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_ih_l1, ...): the tracker (benchmarks/training/boot.py)
    paired them by position and stopped ("track: parameter lstm.weight_hh_l0 is (128, 32) in MindSpore, (128,) in
    torch"). It now pairs each layer's parameters in torch's order: the same weights give torch's outputs."""
    t = _run_boot(tmp_path, "torch", "track", STACKED_LSTM)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(STACKED_LSTM))
    np.testing.assert_allclose(eval(m), eval(t), rtol=1e-4, atol=1e-5)


POLICY_WITH_DROPOUT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Dropout(p=0.5), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


def update_policy(returns, log_probs, optimiser):
    loss = -(returns * log_probs).sum()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss.item()


def train(policy, optimiser, episode):
    policy.train()
    log_probs, rewards = [], []
    for step in range(5):
        state = torch.tensor([0.1 * step, 1.0 - 0.2 * step, 0.3 * episode, 0.5])
        probs = F.softmax(policy(state), dim=-1)
        dist = torch.distributions.Categorical(probs=probs)
        action = torch.tensor(step % 3)
        log_probs.append(dist.log_prob(action))
        rewards.append(float(step % 2) - 0.3 * episode)
    log_probs = torch.stack(log_probs)
    return update_policy(torch.tensor(rewards), log_probs, optimiser)


policy = Policy()
optimiser = torch.optim.SGD(policy.parameters(), lr=0.5)
for episode in range(4):
    print("loss %.7f" % train(policy, optimiser, episode))
'''

# both sides' Dropout masks from one numpy stream (the frameworks' own draws differ): torch's nn.Dropout computes
# x * mask / (1 - p), MindSpore's Dropout kernel x * mask * (1 / (1 - p)); the masks are the same numbers
TORCH_MASKS = '''
import numpy as _np
import torch as _torch
_masks = _np.random.RandomState(7)
def _forward(self, x):
    if not self.training:
        return x
    mask = _torch.from_numpy((_masks.random_sample(tuple(x.shape)) >= self.p).astype(_np.float32))
    return x * mask / (1 - self.p)
_torch.nn.Dropout.forward = _forward
'''
MINDSPORE_MASKS = '''
import numpy as _np
import mindspore as _ms
_masks = _np.random.RandomState(7)
def _draw(self, x):
    mask = _ms.Tensor((_masks.random_sample(tuple(x.shape)) >= 0.5).astype(_np.float32))
    return x * mask * _ms.Tensor(1 / (1 - 0.5), x.dtype), mask
_ms.ops.Dropout.__call__ = _draw
'''


PEEK = ("        probs = F.softmax(policy(state), dim=-1)\n",
        "        greedy = policy(state).argmax().item()\n"
        "        probs = F.softmax(policy(state), dim=-1)\n")


@pytest.mark.parametrize("peek", [False, True], ids=["one_call", "a_call_between"])
def test_values_collected_through_dropout_are_differentiated_with_their_own_masks(tmp_path, peek):
    """georgeyiasemis/pg_gridworld: REINFORCE whose policy has a Dropout, log-probabilities collected while acting in
    training mode and differentiated after the episode. mindport computes a collected value again inside the
    differentiated step (``record``), where the Dropout would draw a new mask: it refused ("Dropout draws a new random
    mask"). nn.Dropout now keeps the masks it draws between two records and applies them when the recorded value is
    computed again (checked: the value must come out the same). The losses after each update are torch's; also when
    the policy runs once more (a greedy look, its own mask) before the call whose value is recorded."""
    script = POLICY_WITH_DROPOUT.replace(*PEEK) if peek else POLICY_WITH_DROPOUT
    assert script.count("policy(state)") == 1 + peek
    t = _losses_of(_run_boot_all(tmp_path / "t", "torch", TORCH_MASKS + script))
    m = _losses_of(_run_boot_all(tmp_path / "m", "mindspore", MINDSPORE_MASKS + _convert(script)))
    assert len(t) == 4 and t[0] != t[-1]
    np.testing.assert_allclose(m, t, rtol=1e-5)


def _run_boot_all(tmp_path, side, text):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    state = tmp_path.parent / "state"
    state.mkdir(exist_ok=True)
    tmp_path.mkdir()
    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "script.py"
    script.write_text(text)
    from _harness import child_env

    env = child_env()
    p = subprocess.run([sys.executable, str(root / "benchmarks" / "training" / "boot.py"), side, "track", str(state),
                        str(script)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    shutil.rmtree(tmp_path)
    return p.stdout


def _losses_of(out):
    return [float(line.split()[-1]) for line in out.splitlines() if line.startswith("loss")]


def test_a_dropout_that_keeps_its_masks_still_compiles_in_a_graph():
    """The masks are kept by a Python construct given to each nn.Dropout built in PyNative; a model built there and
    compiled later (``ms.jit``) must compile MindSpore's own Dropout (the first version's construct failed to parse:
    'ParseRaiseCall')."""
    import mindspore as ms

    import mindport.runtime.training

    mindport.runtime.training.keep_dropout_masks()  # what a file that records calls after its imports

    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.drop = ms.nn.Dropout(p=0.5)

        def construct(self, x):
            return self.drop(x)

    net = Net()
    net.set_train(True)

    @ms.jit
    def run(x):
        return net(x)

    out = run(ms.Tensor(np.ones((64, 8), np.float32))).asnumpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 0 < (out == 0).mean() < 1


def test_assigning_through_an_empty_index_tensor_assigns_nothing():
    """cfh/connect4_a2c: ``draws[iact] = is_board_full_batch(new_boards[iact])`` with ``iact = torch.where(wins ==
    0)[0]`` empty (every game won). torch assigns to no element; MindSpore 2.10's setitem raised "select with an empty
    condition list is not possible". The values are torch's."""
    import mindspore as ms
    import torch

    from _harness import load_module

    source = (
        "import torch\n"
        "def run(wins, rows):\n"
        "    draws = torch.zeros(wins.shape[0], dtype=torch.bool)\n"
        "    iact = torch.where(wins == 0)[0]\n"
        "    draws[iact] = rows[iact].sum(dim=1) > 0\n"
        "    table = torch.zeros(wins.shape[0], 2)\n"
        "    table[iact, 1] = 5.0\n"
        "    table[iact] = rows[iact]\n"
        "    return draws.float(), table\n")
    module = load_module(_convert(source), "ms_empty_index17")
    for wins in (np.array([1, 1, 1], np.int64), np.array([0, 1, 0], np.int64)):
        rows = np.arange(6, dtype=np.float32).reshape(3, 2)
        expected = [t.numpy() for t in load_module(source, "torch_empty_index17").run(torch.tensor(wins),
                                                                                       torch.tensor(rows))]
        got = [t.asnumpy() for t in module.run(ms.Tensor(wins), ms.Tensor(rows))]
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)
