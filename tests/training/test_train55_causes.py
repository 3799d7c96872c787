"""Causes session 54 (train55) met running the rest of train54's sample of the training corpus, each a class with a
fixture of our own, converted and run under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from _harness import boot_losses, child_env

# greydanus/mnist1d (fresh45, notebooks/models.py) prints each model's size in __init__ with
# ``"... {} parameters".format(self.count_params())``, the class's own method returning the builtin sum of the
# parameters' ``.shape[0]`` after a flattening view: a Python int. The format check took every ``self.m(...)`` call
# for a sub-layer's output (a tensor) and flagged MP102 four times (the conversion exiting 1 on a script that runs and
# tracks). Class: a call of the class's own method (a ``def`` in the class, never assigned as ``self.m``) whose every
# return is a number by the project's return kinds (now also: ``x.shape``/``x.shape[i]`` and the builtin
# sum/max/min over a comprehension of numbers) is a number. The fixture: two such methods (a shape-sum and a
# numel-sum generator), formatted without a spec in __init__, beside a training loop.
# Same check, TingsongYu/PyTorch-Tutorial-2nd (fresh46, 04_train_script.py): ``'LR: {lr}'.format(...,
# lr=scheduler.get_last_lr()[0])`` flagged MP102: a name bound to a torch class's object (the scheduler) reads as a
# tensor, so its method's result did. Class: ``get_last_lr()`` is torch's list of Python floats (the port's
# mindport.runtime.optim.get_last_lr gives the same floats), a number formatted as torch formats it; a project
# class's own get_last_lr keeps its return kind. The fixture prints the rate each step with ``.format``.
OWN_METHOD_NUMBER = '''
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.inner = nn.Linear(3, width)
        self.outer = nn.Linear(width, 1)
        print("built with {} weights in {} tensors".format(self.weight_count(), self.tensor_count()))

    def weight_count(self):
        return sum(w.numel() for w in self.parameters())

    def tensor_count(self):
        return sum([1 + 0 * w.reshape(-1).shape[0] for w in self.parameters()])

    def forward(self, x):
        return self.outer(torch.tanh(self.inner(x)))


def main():
    torch.manual_seed(0)
    x = torch.linspace(-2, 2, 54).reshape(18, 3)
    y = torch.sin(x[:, :1]) + 0.5 * x[:, 1:2] * x[:, 2:]
    net = Regressor(12)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    for epoch in range(12):
        optimizer.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        print("step", loss.item())
        print("rate {}".format(scheduler.get_last_lr()[0]))
        scheduler.step()


if __name__ == "__main__":
    main()
'''


def test_own_method_returning_a_number_is_not_flagged_and_the_port_tracks(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(OWN_METHOD_NUMBER)
    report = convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert "MP102" not in code and "import torch" not in code, code
    assert report.ok, report
    state = tmp_path / "state"
    state.mkdir()
    torch_losses = boot_losses("torch", "track", state, src / "main.py")[0]
    port = boot_losses("mindspore", "track", state, out / "main.py")[0]
    assert len(torch_losses) == len(port) == 12
    np.testing.assert_allclose(port, torch_losses, rtol=1e-4)
    assert torch_losses[-1] < 0.5 * torch_losses[0]
    printed = [[line for line in subprocess.run(
        [sys.executable, str(d / "main.py")], capture_output=True, text=True, cwd=d, env=child_env(OMP_NUM_THREADS="1"),
        timeout=600).stdout.splitlines() if not line.startswith("step")] for d in (src, out)]
    # torch's text: the sizes as ints, the rates as floats (0.1 for 4 steps, then 0.05, then 0.025)
    assert printed[0] == printed[1] == ["built with 61 weights in 4 tensors"] + ["rate 0.1"] * 4 + ["rate 0.05"] * 4 \
        + ["rate 0.025"] * 4, printed


# vltkv/Generate-faces-with-GAN (corpus, main.py) and WickedFoxes/simple_task_pytorch (corpus, src/utils/seed.py)
# seed in a function that also calls ``torch.use_deterministic_algorithms(True)`` (resp. ``(False)``): an unsupported
# entry (MP101), left as torch's call, so both conversions exited 1 and the ports imported torch for it. Class: the
# process-wide determinism switch. MindSpore's counterpart, mindspore.set_deterministic(True), may be called once a
# process: mindport.runtime.framework.use_deterministic_algorithms calls it only while MindSpore's context is off,
# changes nothing for off (deterministic values are among those torch's non-deterministic kernels give) and keeps the
# mode for are_deterministic_algorithms_enabled (proven framework.toml entries). The fixture: a seeding helper
# switching it on, off and on, the mode printed, a training loop.
DETERMINISTIC_SWITCH = '''
import random

import numpy as np
import torch
import torch.nn as nn


def seed_everything(seed, strict):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(strict)
    torch.backends.cudnn.benchmark = not strict


def main():
    seed_everything(3, True)
    seed_everything(3, False)
    print("strict", torch.are_deterministic_algorithms_enabled())
    seed_everything(3, True)
    print("strict", torch.are_deterministic_algorithms_enabled())
    x = torch.linspace(-1, 1, 40).reshape(10, 4)
    y = (x[:, :2].sum(1, keepdim=True) > 0).float()
    net = nn.Sequential(nn.Linear(4, 6), nn.Sigmoid(), nn.Linear(6, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(10):
        optimizer.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
        print("step", loss.item())


if __name__ == "__main__":
    main()
'''


def test_deterministic_switch_converts_and_the_port_tracks(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(DETERMINISTIC_SWITCH)
    report = convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert "MP101" not in code and "import torch" not in code and "use_deterministic_algorithms(strict)" in code, code
    assert report.ok, report
    state = tmp_path / "state"
    state.mkdir()
    torch_losses = boot_losses("torch", "track", state, src / "main.py")[0]
    port = boot_losses("mindspore", "track", state, out / "main.py")[0]
    assert len(torch_losses) == len(port) == 10
    np.testing.assert_allclose(port, torch_losses, rtol=1e-4)
    assert torch_losses[-1] < 0.8 * torch_losses[0]
    printed = [[line for line in subprocess.run(
        [sys.executable, str(d / "main.py")], capture_output=True, text=True, cwd=d, env=child_env(OMP_NUM_THREADS="1"),
        timeout=600).stdout.splitlines() if line.startswith("strict")] for d in (src, out)]
    assert printed[0] == printed[1] == ["strict False", "strict True"], printed


# The return kinds the check above reads now follow ``name += value``: a method summing tensors into a 0 returns a
# tensor (still flagged when formatted without a spec), one summing ``loss.item()`` into a 0 a number (not flagged).
ACCUMULATED_RETURNS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def summed(self, xs):
        acc = 0
        for x in xs:
            acc += self.fc(x).sum()
        return acc / len(xs)

    def summed_number(self, xs):
        acc = 0
        for x in xs:
            acc += self.fc(x).sum().item()
        return acc / len(xs)

    def report(self, xs):
        print("tensor {}".format(self.summed(xs)))
        print("number {}".format(self.summed_number(xs)))
'''


def test_an_accumulated_tensor_return_is_still_a_tensor(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(ACCUMULATED_RETURNS)
    convert_path(src, out, jobs=1)
    lines = (out / "main.py").read_text().splitlines()
    assert "MP102" in next(line for line in lines if '"tensor {}"' in line)
    assert "MP102" not in next(line for line in lines if '"number {}"' in line)
