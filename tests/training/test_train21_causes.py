"""Session train21 (issue 27): classes redone or found on the training corpus and fresh20 (/work/notes/train21.md).
One test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# A trainer object that comes out of a method of the project (SimonLembeye/out-of-distribution-detection's
# ``trainer = classifier.get_and_update_current_trainer(); trainer.train()``), its class an abstract base's subclass
# that inherits train() from it; beside it a loss whose base is imported from torch under another name (not one of
# the base names the project knows by name) with its own train()/eval(), made by a project function: a layer, whose
# train()/eval() become set_train (test_fresh14_causes' SmoothCE, through an import and a factory)
TRAINER_FROM_A_METHOD = '''
import torch
import torch.nn as nn
from abc import ABC, abstractmethod
from torch.nn import CrossEntropyLoss as TorchCE


class SmoothCE(TorchCE):
    def __init__(self, eps=0.0):
        super().__init__()
        self.eps = eps
        self.smooth = True

    def train(self):
        self.smooth = True

    def eval(self):
        self.smooth = False

    def forward(self, output, target):
        if not self.smooth:
            return super().forward(output, target)
        one_hot = torch.zeros_like(output).scatter(1, target.view(-1, 1), 1)
        soft = one_hot * (1 - self.eps) + (1 - one_hot) * self.eps / (output.size(1) - 1)
        return -(soft * torch.log_softmax(output, dim=1)).sum(dim=1).mean()


def make_criterion():
    criterion = SmoothCE(0.2)
    return criterion


class BaseTrainer(ABC):
    def __init__(self, net, opt):
        self.net, self.opt = net, opt

    def train(self):
        self.net.train()
        self.train_epoch()

    @abstractmethod
    def train_epoch(self):
        pass


class StepTrainer(BaseTrainer):
    def train_epoch(self):
        for i in range(3):
            self.opt.zero_grad()
            loss = crit(self.net(x), y)
            loss.backward()
            self.opt.step()
            print("step", loss.item())


class Holder:
    def __init__(self, net):
        self.net = net

    def make_trainer(self):
        self.net.train()
        trainer = StepTrainer(self.net, torch.optim.SGD(self.net.parameters(), lr=0.5))
        return trainer


x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
y = torch.tensor([0, 1, 2, 1, 0, 2])
net = nn.Linear(4, 3)
with torch.no_grad():
    net.weight.copy_(torch.linspace(-0.4, 0.5, 12).reshape(3, 4))
    net.bias.copy_(torch.tensor([0.1, -0.1, 0.05]))
crit = make_criterion()
holders = [Holder(net), Holder(net)]
for holder in holders:
    crit.train()
    trainer = holder.make_trainer()
    trainer.train()
    net.eval()
    crit.eval()
    with torch.no_grad():
        print("step", crit(net(x), y).item())
'''


def test_train_of_a_trainer_returned_by_a_project_method_is_its_own():
    """SimonLembeye/out-of-distribution-detection (fresh20: "'Cifar10Trainer' object has no attribute 'set_train'"):
    ``trainer.train()`` on an object returned by a project method became ``trainer.set_train(True)``. A project class
    with no torch base that defines train()/eval() (or inherits them from a project base) is a trainer: functions
    returning its objects have the project return kind "object", and train()/eval() on it stay the class's own.
    Decided by the bases (train20's reverted form took any class defining train/eval outside a few base names for a
    trainer, so a CrossEntropyLoss subclass with its own train()/eval() kept ``.train()``): the loss here, based on
    an imported torch class, still becomes set_train, and its own train/eval run through it."""
    code = _convert(TRAINER_FROM_A_METHOD)
    assert "trainer.train()" in code and "net.set_train(False)" in code and "self.net.set_train(True)" in code, code
    assert "crit.set_train(True)" in code and "crit.set_train(False)" in code, code
    t, m = _losses(TRAINER_FROM_A_METHOD, "torch_trainer_method"), _losses(code, "ms_trainer_method")
    assert len(t) == 8 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[4][0] < t[0][0] and t[3][0] != t[2][0]  # it learns; the plain evaluation loss is not the smoothed one


# A VAE-like reparametrisation (mivadi/projectAI18's Gaussian and logit-normal latents) drawing its noise through the
# legacy constructors given a size object: torch.FloatTensor(mu.size()).normal_(), torch.Tensor(x.size()).uniform_(),
# x.new(x.size()).normal_(), torch.cuda.FloatTensor-free; also a slice of a size and a data tuple beside them. The
# noise's moments over many elements are compared (the two frameworks draw other numbers); the training itself uses
# a tiny standard deviation, so its losses are torch's to float32 accuracy
SIZE_AS_SHAPE = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
big = torch.zeros(200, 100)
draws = {"float_normal": torch.FloatTensor(big.size()).normal_(),
         "tensor_uniform": torch.Tensor(big.size()).uniform_(-1.0, 3.0),
         "new_normal": big.new(big.size()).normal_(2.0, 0.5),
         "shape_uniform": torch.FloatTensor(big.shape).uniform_(),
         "slice_normal": torch.DoubleTensor(torch.zeros(3, 200, 100).size()[1:]).normal_()}
for name, t in draws.items():
    print("step", t.dim(), t.shape[0], t.shape[1], round(float(t.mean()), 1), round(float(t.std()), 1),
          float(t.min() >= -1.0) if name == "tensor_uniform" else 1.0)
data = torch.FloatTensor((2, 3))
print("step", data.dim(), data.shape[0], float(data.sum()))

x = torch.linspace(-1.0, 1.0, 48).reshape(6, 8)
enc = nn.Linear(8, 4)
dec = nn.Linear(4, 8)
with torch.no_grad():
    enc.weight.copy_(torch.linspace(-0.3, 0.3, 32).reshape(4, 8))
    enc.bias.fill_(0.05)
    dec.weight.copy_(torch.linspace(0.2, -0.25, 32).reshape(8, 4))
    dec.bias.fill_(-0.05)
opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=0.05)
logvar = torch.full((6, 4), -30.0)
for step in range(5):
    mu = enc(x)
    std = torch.exp(0.5 * logvar)
    eps = torch.FloatTensor(std.size()).normal_()
    z = eps.mul(std).add_(mu)
    noise = std.new(std.size()).uniform_()
    loss = ((dec(z + 1e-9 * noise) - x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def test_a_size_object_given_to_a_legacy_constructor_is_a_shape():
    """mivadi/projectAI18 (fresh20): ``eps = torch.FloatTensor(std.size()).normal_()`` became
    ``mp_tensor.FloatTensor(std.shape)``: torch reads a torch.Size as sizes, the runtime constructor (as torch for a
    plain tuple) read MindSpore's shape tuple as data: a [2] tensor, then "Mul" failed to broadcast [2] with [50, 8].
    A visible size argument (``.size()``, ``.shape``, a slice of one, ``torch.Size``) of a legacy constructor is
    passed as sizes one by one; a data tuple stays data."""
    code = _convert(SIZE_AS_SHAPE)
    # a data tuple of numbers is MindSpore's own Tensor of that data (TableCallTransform._data_constructor)
    assert "FloatTensor(*std.shape)" in code and "ms.Tensor((2, 3), ms.float32)" in code, code
    t, m = _losses(SIZE_AS_SHAPE, "torch_size_as_shape"), _losses(code, "ms_size_as_shape")
    assert len(t) == len(m) == 11, (t, m, code)
    assert m[:6] == t[:6], (m[:6], t[:6])  # ranks, sizes, moments (to one decimal) of each draw; the data tuple
    assert t[0][:5] == [2, 200, 100, 0.0, 1.0] and t[1][3:5] == [1.0, 1.2] and t[5] == [1, 2, 5.0], t
    np.testing.assert_allclose(m[6:], t[6:], rtol=1e-5)
    assert t[-1][0] < t[6][0]


# One optimizer over an encoder and a classifier head that the first phase's loss does not use (WojciechTesla/
# inDISTrial_rEVOLUTION's contrastive phase, then its hard-negative phase with the classify-mode heads, one Adam for
# both): torch's head has .grad None for four steps, which Adam skips without counting them; in the fifth step it
# takes the bias correction of its own first step. Adam, and AdamW with weight decay beside it
HEAD_FIRST_USED_LATER = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)
y = torch.tensor([0, 1, 2, 1, 0, 2])
nets = []
for kind in ("adam", "adamw"):
    enc = nn.Linear(4, 5)
    head = nn.Linear(5, 3)
    with torch.no_grad():
        enc.weight.copy_(torch.linspace(-0.4, 0.5, 20).reshape(5, 4))
        enc.bias.fill_(0.1)
        head.weight.copy_(torch.linspace(0.3, -0.2, 15).reshape(3, 5))
        head.bias.fill_(-0.05)
    params = list(enc.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=0.05) if kind == "adam" else torch.optim.AdamW(params, lr=0.05,
                                                                                      weight_decay=0.1)
    nets.append((enc, head, opt))
for step in range(8):
    losses = []
    for enc, head, opt in nets:
        h = enc(x)
        loss = (h ** 2).mean() if step < 4 else nn.functional.cross_entropy(head(h), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("step", *losses)
'''


def test_a_parameter_first_reached_after_steps_of_the_others_has_its_own_step_count():
    """wojciech/siamese_hard_negative_moons (fresh20, runs and learns, 7.8e-2 off torch where its float64 control is
    0.0): one Adam trains the encoder in a contrastive phase whose loss does not use the classifier head, then the
    encoder and the head in the hard-negative phase. torch counts each parameter's own steps (a parameter whose
    .grad is None is skipped, its step not taken), so the head's first update has the bias correction of step 1;
    the port's optimizer skipped the head's update (grads_of) but read its one shared counter (step 5): the head
    moved 0.63x as far, and the curves parted at the first step of the second phase (1.0963 vs 1.1045). The
    parameters grads_of skips are now stepped apart with their own counts, as frozen ones already were."""
    code = _convert(HEAD_FIRST_USED_LATER)
    t, m = _losses(HEAD_FIRST_USED_LATER, "torch_head_later"), _losses(code, "ms_head_later")
    assert len(t) == len(m) == 8, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=2e-6, atol=1e-7)
    assert t[5][0] < t[4][0] and t[5][1] < t[4][1]


def test_the_trackers_shared_stream_is_not_moved_by_in_place_fills(tmp_path):
    """murumura/dcgan_mnist, dcgan_celeba_imagefolder (fresh20, first contact: run and learn, 1.54e-1 and 2.75e-1 off
    torch, apart at the first loss before any update): in a deterministic run (boot.py track) torch's in-place
    fills (``m.weight.data.normal_(0.0, 0.02)`` of DCGAN's weights_init) draw torch's own generator, mindport's
    drew the shared stream, so the noise and the loader's permutation after them were other numbers (another first
    batch). The tracker gives mindport's in-place fills a stream of their own, as torch's have; the draws after
    them are the same on both sides."""
    from test_fresh_causes import _run_boot

    script = ("import torch\nw = torch.empty(3, 4)\nw.normal_(0.0, 0.02)\nb = torch.empty(5).uniform_(-1, 1)\n"
              "z = torch.randn(2, 3)\np = torch.randperm(6)\nprint([round(v, 6) for v in z.flatten().tolist()], "
              "p.tolist())\n")
    t = _run_boot(tmp_path, "torch", "track", script)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(script))
    assert t == m, (t, m)
