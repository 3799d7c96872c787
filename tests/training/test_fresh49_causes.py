"""Causes met by fresh49's first contact (benchmarks/training/fresh49.json), each a class with a fixture of our own,
run converted under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

from test_fresh18_causes import _run_in_folder

# EmilienDupont/wgan-gp's Trainer (training.py) is handed its generator, critic and both optimizers by main.py; its
# critic step samples fakes through a method of its own (self.sample_generator(n), whose body calls self.G(z)). torch
# builds every Module in training mode; MindSpore's Cells start in inference mode, and nothing in the converted files
# set the generator's: its BatchNorm2d layers normalized with their running statistics (mean 0, variance 1), so the
# fakes, the critic's scores and the gradient penalty were off from the first step (first run fresh49:
# emilien/wgan_gp_mnist at 3.1e-4 from torch where torch's own float32-vs-float64 difference is 1.3e-6). Class: an
# attribute of the object (``self.<name>``, not a method of the class) that a step calls, directly or through the
# class's own methods, in a file that never switches modes: mindport.runtime.training.train_mode(self.<name>) before
# the step (Cells only; a mode the code set is kept).
TRAINER = '''
import torch


class Trainer:
    def __init__(self, generator, critic, g_opt, d_opt):
        self.G, self.D, self.G_opt, self.D_opt = generator, critic, g_opt, d_opt

    def sample(self, n):
        return self.G(torch.linspace(-1, 1, n * 4).reshape(n, 4))

    def critic_step(self, real):
        fake = self.sample(real.size(0))
        self.D_opt.zero_grad()
        loss = self.D(fake).mean() - self.D(real).mean()
        loss.backward()
        self.D_opt.step()
        return loss.item()

    def generator_step(self, n):
        self.G_opt.zero_grad()
        loss = -self.D(self.sample(n)).mean()
        loss.backward()
        self.G_opt.step()
        return loss.item()
'''

MAIN = '''
import torch
import torch.nn as nn
from trainer import Trainer


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, z):
        return self.net(z)


g = Generator()
d = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(list(g.parameters()) + list(d.parameters())):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
t = Trainer(g, d, torch.optim.SGD(g.parameters(), lr=0.05), torch.optim.SGD(d.parameters(), lr=0.05))
real = torch.linspace(0, 2, 18).reshape(6, 3)
for step in range(6):
    print("step", t.critic_step(real), t.generator_step(6))
'''


def test_a_model_a_trainer_holds_and_calls_through_its_own_method_trains_from_birth(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "trainer.py").write_text(TRAINER)
    (src / "main.py").write_text(MAIN)
    convert_path(src, out, jobs=1)
    code = (out / "trainer.py").read_text()
    assert "train_mode(self.G)" in code and "train_mode(self.D)" in code, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 6
    for a, b in zip(t, m):
        for x, y in zip(a, b):
            assert abs(x - y) <= 1e-5 * max(1.0, abs(x)), (t, m)
    assert t[-1][0] > t[0][0] + 0.1  # the critic's loss moves: training happens (the fakes use batch statistics)


# uoguelph-mlrg/Cutout steps its MultiStepLR with the epoch, ``scheduler.step(epoch)`` (the form of scripts written for
# torch < 1.4). Given an epoch a scheduler computes its closed form; MindSpore 2.10's MultiStepLR inherits StepLR's,
# which reads a ``step_size`` it has not (first run fresh49: AttributeError: 'MultiStepLR' object has no attribute
# 'step_size' after the first epoch). Class: MultiStepLR stepped with an epoch: the runtime MultiStepLR computes
# torch's closed form, base_lr * gamma ** bisect_right(milestones, epoch).
MULTISTEP_EPOCH = '''
import torch

model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.5)
x = torch.linspace(-1, 1, 8).reshape(4, 2)
for epoch in range(8):
    opt.zero_grad()
    loss = (model(x) - 1).pow(2).mean()
    loss.backward()
    opt.step()
    sched.step(epoch)
    print("step", float(opt.param_groups[0]["lr"]))
'''


def test_a_multistep_scheduler_stepped_with_the_epoch_takes_torchs_rate(tmp_path):
    from test_fresh46_causes import _convert_and_run

    t, m, code = _convert_and_run(tmp_path, MULTISTEP_EPOCH)
    assert "mp_optim.MultiStepLR(" in code, code
    assert t == m and len(t) == 8, (t, m)
    assert {r[0] for r in t} == {0.5, 0.25, 0.0625}  # the milestone listed twice counts twice, as torch's


# timgaripov/swa's train.py and facebookresearch/mixup-cifar10's train.py run their epochs at the top level of the
# script, the backward inside functions (utils.train_epoch of another module; a train(epoch) of the file), with no
# main block: the converter did not take them for programs, so they ran MindSpore's CPU convolutions uncapped
# (mindport/cpu_kernels.py): VGG16's first step took over 60 s, both garipov entries timed out at 400 s where torch
# took 28-41 s, and the CIFAR MobileNet took 252 s against torch's 17 s (first run fresh49). Class: a module-level loop
# calling functions makes the file a program: ONEDNN_MAX_CPU_ISA=AVX2 is set after its imports (the module it imports
# is left as written).
CAP_UTILS = '''
import torch


def train_epoch(model, x, y, optimizer):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()
'''

CAP_MAIN = '''
import torch
import torch.nn as nn
import utils

net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2 * 4 * 4, 1))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).reshape(p.shape))
opt = torch.optim.SGD(net.parameters(), lr=0.002)
x = torch.linspace(-1, 1, 4 * 36).reshape(4, 1, 6, 6)
y = torch.tensor([[0.5], [-0.5], [1.0], [0.0]])
for epoch in range(5):
    print("step", utils.train_epoch(net, x, y, opt))
'''


def test_a_script_whose_top_level_loop_calls_the_training_gets_the_cpu_cap(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "utils.py").write_text(CAP_UTILS)
    (src / "main.py").write_text(CAP_MAIN)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert 'os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")' in code, code
    assert code.index("ONEDNN_MAX_CPU_ISA") < code.index("nn.Conv2d(")  # before the first convolution
    assert "ONEDNN" not in (out / "utils.py").read_text()  # the module it imports is left as written
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 5
    for a, b in zip(t, m):
        assert abs(a[0] - b[0]) <= 1e-5 * max(1.0, abs(a[0])), (t, m)
    assert t[-1][0] < t[0][0]
