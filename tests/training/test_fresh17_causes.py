"""Session trainfresh17 (issue 27): causes found at first contact with the fresh17 entries. One test each, on real
torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# the PyTorch quickstart's shape (Lechatelia/simpletorchdemo main.py): loaders built at module level or returned by
# a helper, then handed to train()/test() functions whose parameter reads `len(dataloader.dataset)` (or another
# field only torch's DataLoader has: .sampler, .drop_last, .batch_size is shared)
LOADER_UNDER_ANOTHER_NAME = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

x = torch.linspace(-1.0, 1.0, 60).reshape(20, 3)
y = (x.sum(1) > 0).long()


def make_loaders(batch):
    train = DataLoader(TensorDataset(x[:12], y[:12]), batch_size=batch)
    held = DataLoader(TensorDataset(x[12:], y[12:]), batch_size=batch, drop_last=True)
    return train, held


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    for batch, (X, t) in enumerate(dataloader):
        loss = loss_fn(model(X), t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", loss.item(), float(batch * len(X)), float(size))


def test(dataloader, model):
    correct = 0
    with torch.no_grad():
        for X, t in dataloader:
            correct += (model(X).argmax(1) == t).type(torch.float).sum().item()
    print("step", correct / len(dataloader.dataset), float(len(dataloader)))


model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.4, 0.25, 0.05]]))
    model.bias.copy_(torch.tensor([0.1, -0.1]))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
train_loader = DataLoader(TensorDataset(x, y), batch_size=8)
loaders = make_loaders(4)
train_part, held_out = make_loaders(4)
for epoch in range(2):
    train(train_loader, model, nn.CrossEntropyLoss(), optimizer)
    train(dataloader=loaders[0], model=model, loss_fn=nn.CrossEntropyLoss(), optimizer=optimizer)
    test(held_out, model)
print("step", float(held_out.drop_last))
'''


def test_a_loader_read_as_torch_s_under_another_name():
    """Lechatelia/simpletorchdemo (first run fresh17, 3 entries: AttributeError: 'BatchDataset' object has no
    attribute 'dataset'): `train_dataloader = DataLoader(...)` became a mindspore.dataset pipeline because the file
    never read `train_dataloader.dataset`; it read `dataloader.dataset`, the parameter of the train()/test()
    functions the loader is passed to. The rule now follows a loader through the file's function parameters
    (positional and keyword) and through the names a helper's returned loaders are assigned to (a tuple unpacked
    pairwise), for the fields a pipeline lacks (.dataset, .sampler, .drop_last ...): those loaders keep torch's
    DataLoader (mindport.runtime.data)."""
    code = _convert(LOADER_UNDER_ANOTHER_NAME)
    assert "GeneratorDataset" not in code.split("held = ")[1].split("\n")[0], code
    t, m = _losses(LOADER_UNDER_ANOTHER_NAME, "torch_loader_names"), _losses(code, "ms_loader_names")
    assert len(t) == 15 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)


# SimCLR's NT-Xent (William-f-12/SimCLR src/loss.py, and most NT-Xent implementations): the self-similarities are
# masked in place with fill_diagonal_ on a matrix the loss differentiates through; square and tall (wrap) cases
NT_XENT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

encoder = nn.Linear(4, 3)
with torch.no_grad():
    encoder.weight.copy_(torch.linspace(-0.5, 0.7, 12).reshape(3, 4))
    encoder.bias.copy_(torch.tensor([0.1, -0.2, 0.05]))
opt = torch.optim.Adam(encoder.parameters(), lr=0.05)
x1 = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
x2 = x1.flip(0) * 0.5 + 0.1
for step in range(4):
    z1, z2 = F.normalize(encoder(x1), dim=1), F.normalize(encoder(x2), dim=1)
    z = torch.cat([z1, z2], dim=0)
    sim = (z @ z.T) / 0.5
    sim.fill_diagonal_(float('-inf'))
    targets = torch.cat([torch.arange(4) + 4, torch.arange(4)], dim=0)
    tall = torch.cat([z, z], dim=0) @ z1.T
    tall.fill_diagonal_(0.0, wrap=True)
    loss = F.cross_entropy(sim.to(dtype=torch.float32), targets) + 0.1 * tall.pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print("step", loss.item(), float(torch.isinf(sim).sum().item()), float((tall == 0).sum().item()))
'''


def test_fill_diagonal_inside_the_differentiated_loss():
    """William-f-12/SimCLR (first run fresh17: RuntimeError: Illegal primitive FillDiagonal's bprop not defined):
    `sim.fill_diagonal_(float('-inf'))` mapped to mindport.runtime.inplace.fill_diagonal_, which wrote MindSpore's
    Tensor.fill_diagonal into the receiver: FillDiagonal has no backward. The diagonal is now chosen by a constant
    mask (ops.where): the same values, torch's zero gradient at the filled positions (wrap=True on a tall matrix
    fills every (cols+1)-th element, as torch does)."""
    code = _convert(NT_XENT)
    t, m = _losses(NT_XENT, "torch_nt_xent"), _losses(code, "ms_nt_xent")
    assert len(t) == 4 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]


# the DCGAN tutorial's device check (vltkv/Generate-faces-with-GAN main.py): `device.type` of a torch.device, and a
# tensor's `x.device.type` / `.index`
DEVICE_FIELDS = '''
import torch


def main():
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    net = torch.nn.Linear(2, 1)
    if (device.type == 'cuda') and torch.cuda.device_count() > 1:
        net = torch.nn.DataParallel(net)
    x = torch.ones(3, 2)
    other = torch.device("cpu", 1)
    print("step", float(device.type == "cpu"), float(device.index is None), float(x.device.type == "cpu"),
          float(x.device.index is None), float(other.type == "cpu"), float(other.index))


class Trainer:
    def __init__(self):
        self.dev = torch.device("cpu")
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def fit(self, device):
        print("step", float(self.dev.type == "cpu"), float(self.device.type == "cpu"), float(device.type == "cpu"),
              float(device.index is None), 1.0, 1.0)


main()
Trainer().fit(torch.device("cpu"))
'''


def test_a_device_s_type_and_index():
    """vltkv/Generate-faces-with-GAN (first run fresh17, 2 entries: AttributeError: 'str' object has no attribute
    'type'): torch.device(...) becomes its designation string, and `device.type == 'cuda'` read an attribute a str
    has not. `.type`/`.index` of a name (or `self.X`) the file binds to torch.device(...), of a parameter or
    attribute called `device` (torch reads `.type` of no string) and of a tensor's `.device` are now read from the
    designation ("cuda:1" -> "cuda", 1; "cpu" -> "cpu", None)."""
    code = _convert(DEVICE_FIELDS)
    t, m = _losses(DEVICE_FIELDS, "torch_device_fields"), _losses(code, "ms_device_fields")
    assert t == m == [[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]] * 2, (t, m, code)


# a VAE's loop (rwickman/VAE-PyTorch trainer.py): a shuffled loader with workers and prefetching, noise drawn with
# randn_like inside each step, two epochs
WORKERS_AND_NOISE = '''
import torch
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.arange(16.0).view(16, 1), torch.arange(16))
loader = DataLoader(data, 4, num_workers=2, prefetch_factor=4, drop_last=True, shuffle=True)
seen = []
for epoch in range(2):
    for x, y in loader:
        eps = torch.randn_like(x)
        seen.append([int(v) for v in y.tolist()] + [round(float(eps.sum()), 4)])
print(seen)
'''


def test_the_tracker_draws_a_prefetching_loader_s_indices_as_mindport_does(tmp_path):
    """rwickman/vae_trainer (deterministic entry, first run fresh17: 7e-6 apart at step 1, 1.5e-2 in epoch 2,
    against a float32-vs-float64 control of 1.1e-7). Torch's DataLoader with workers prefetches its sampler's
    indices when an epoch starts, and RandomSampler draws its closing (empty) permutation then, before the epoch's
    randn_like noise; mindport's loader reads indices as batches are taken, so its noise came one permutation
    earlier in the shared stream. The tracker (benchmarks/training/boot.py) now makes torch's loader read in the
    process, as mindport's does: the same batches and the same noise on both sides."""
    from test_fresh_causes import _run_boot

    t = _run_boot(tmp_path, "torch", "track", WORKERS_AND_NOISE)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(WORKERS_AND_NOISE))
    assert t == m and len(eval(t)) == 8, (t, m)


# an RL agent class (HiddenBeginner/rl-pytorch-exercise REINFORCE/agent.py, ActorCritic/agent.py): not a module,
# holds the policy, defines its own train() (the update) and calls it as self.train() after an episode, next to
# self.policy.train() (the module's)
AGENT_TRAIN = '''
import torch
import torch.nn as nn


class Agent:
    def __init__(self, policy, lr, mode="train"):
        self.policy = policy
        self.mode = mode
        if self.mode == "train":
            self.policy.train()
            self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        else:
            self.policy.eval()
        self.data = []

    def run_episode(self, states):
        for s in states:
            with torch.no_grad():
                a = int(self.policy(s).argmax())
            self.data.append((s, a, 1.0 + a))
        if self.mode == "train":
            self.train()
        self.data = []

    def train(self):
        self.policy.train()
        s = torch.stack([d[0] for d in self.data])
        a = torch.tensor([d[1] for d in self.data]).unsqueeze(1)
        r = torch.tensor([d[2] for d in self.data]).unsqueeze(1)
        probs = torch.softmax(self.policy(s) * 2.0, dim=1)
        loss = -(torch.log(probs.gather(1, a)) * r).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        print("step", loss.item())


policy = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 2))
with torch.no_grad():
    policy[0].weight.copy_(torch.tensor([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]]))
    policy[0].bias.zero_()
    policy[2].weight.copy_(torch.tensor([[0.2, -0.3, 0.1], [-0.1, 0.25, 0.3]]))
    policy[2].bias.zero_()
agent = Agent(policy, 0.05)
states = [torch.tensor([0.5, -1.0]), torch.tensor([1.0, 0.2]), torch.tensor([-0.3, 0.7])]
for episode in range(4):
    agent.run_episode(states)
'''


def test_an_agent_class_s_own_train_method():
    """HiddenBeginner/rl-pytorch-exercise (first run fresh17, both entries: AttributeError: 'REINFORCEAgent' object
    has no attribute 'set_train'): `self.train()` inside the agent class (no module; it defines train(), the
    policy-gradient update) became `self.set_train(True)`, nn.Module's train(). A call through `self` of a method the
    enclosing non-module class defines now keeps its name; `self.policy.train()` stays the module's set_train."""
    code = _convert(AGENT_TRAIN)
    assert "self.train()" in code and "self.policy.set_train(True)" in code, code
    t, m = _losses(AGENT_TRAIN, "torch_agent_train"), _losses(code, "ms_agent_train")
    assert len(t) == 4 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)


# the same class, other in-place methods on intermediates between the forward statements (attention masks filled
# in place, activations clamped and scaled in place), in a module-level loop and in a Trainer method
INPLACE_INTERMEDIATES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(3, 4)
with torch.no_grad():
    net.weight.copy_(torch.linspace(-0.6, 0.8, 12).reshape(4, 3))
    net.bias.copy_(torch.tensor([0.1, -0.2, 0.3, 0.0]))
x = torch.linspace(-1.0, 1.0, 15).reshape(5, 3)
y = torch.tensor([0, 1, 2, 3, 1])
mask = torch.tensor([[False, False, False, True]] * 5)
opt = torch.optim.SGD(net.parameters(), lr=0.2)
for step in range(3):
    logits = net(x)
    logits.masked_fill_(mask, -1e4)
    hidden = net(x * 0.5)
    hidden.clamp_(min=0.0)
    hidden.mul_(0.5)
    loss = F.cross_entropy(logits, y) + hidden.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", loss.item(), float(logits[0, 3].item()), float(hidden.min().item()))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=0.05)

    def train_epoch(self):
        for step in range(3):
            out = self.model(x)
            out.sub_(out.mean(dim=1, keepdim=True))
            loss = (out ** 2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print("step", loss.item(), float(out.mean().item()), 0.0)


Trainer(net).train_epoch()
'''


def test_in_place_methods_between_the_forward_statements():
    """The class of the SimCLR failure: a torch in-place method on a tensor the loss reads (masked_fill_, clamp_,
    mul_, sub_), which the mapping makes a mindport.runtime.inplace call before the training rule plans the region,
    was taken for a write of `mp_inplace` (the module), not of its first argument: the line moved after the gradient,
    the loss differentiated the tensor before the in-place change and printed another value."""
    code = _convert(INPLACE_INTERMEDIATES)
    t, m = _losses(INPLACE_INTERMEDIATES, "torch_inplace_mid"), _losses(code, "ms_inplace_mid")
    assert len(t) == 6 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-5)


# the WGAN/DCGAN shape (vltkv/Generate-faces-with-GAN training/wgan.py): a training function of its own file gets
# the generator and the critic as parameters (built, initialised and given optimizers elsewhere), never calls
# train()/eval(); the generator's BatchNorm must normalise with batch statistics as torch's fresh Module does
GENERATOR_PASSED_IN = '''
import torch
import torch.nn as nn


def train_critic(generator, critic, optimizer_c, steps):
    for step in range(steps):
        for _ in range(2):
            optimizer_c.zero_grad()
            output_real = critic(real).view(-1)
            noise = torch.linspace(-1.0, 1.0, 12).reshape(4, 3) * (step + 1)
            fake = generator(noise)
            output_fake = critic(fake.detach()).view(-1)
            loss = -(torch.mean(output_real) - torch.mean(output_fake))
            loss.backward()
            optimizer_c.step()
        print("step", loss.item(), float(fake.mean().item()), float(fake.pow(2).mean().item()))


class Generator(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(3, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Linear(width, 2))

    def forward(self, z):
        return self.main(z)


def make(width):
    g = Generator(width)
    d = nn.Sequential(nn.Linear(2, width), nn.LeakyReLU(0.2), nn.Linear(width, 1))
    with torch.no_grad():
        for m in (*g.main, *d):
            if isinstance(m, nn.Linear):
                m.weight.copy_(torch.linspace(-0.5, 0.5, m.weight.numel()).reshape(m.weight.shape))
                m.bias.fill_(0.05)
    return g, d


real = torch.tensor([[0.5, 1.0], [1.5, 0.2], [0.9, 0.4], [1.1, 1.3]])
netG, netD = make(5)
train_critic(netG, netD, torch.optim.RMSprop(netD.parameters(), lr=0.01), 3)
'''


def test_a_model_passed_in_trains_in_training_mode():
    """vltkv/wgan_clip (deterministic, after the first fixes still 40 % apart at the first printed step) and the
    DCGAN/MixUp entries: train_wgan(dataloader, generator, critic, ...) never calls train()/eval() and never reads
    generator.parameters() (main.py builds its optimizer), so only the critic got set_train(True); the generator
    stayed a Cell in inference mode and its BatchNorm used running statistics where torch's fresh Module uses the
    batch's. Every plain local name a training step calls, in a file that never switches modes, now gets
    mindport.runtime.training.train_mode (set_train(True) for a Cell, nothing for a function)."""
    code = _convert(GENERATOR_PASSED_IN)
    t, m = _losses(GENERATOR_PASSED_IN, "torch_generator_in"), _losses(code, "ms_generator_in")
    assert len(t) == 3 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)


# vltkv/Generate-faces-with-GAN (fresh17's dcgan, open at trainfresh17's hand-over): a name the step assigns only in a
# branch (`if use_mixup: fake, fake_lam = mixup_data(fake, alpha)`) is handed back by forward_fn, and with the branch
# not taken the return raised UnboundLocalError
BRANCH_ONLY_OUTPUT = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = x.sum(1, keepdim=True) * 0.5
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.1, 0.3]]))
    model.bias.fill_(0.05)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def mix(t, lam):
    return lam * t + (1 - lam) * t.flip(0), lam


def train(use_mixup):
    for step in range(3):
        optimizer.zero_grad()
        out = model(x)
        if use_mixup:
            out, lam = mix(out, 0.7)
        loss = ((out - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        print("step", loss.item(), lam if use_mixup else 0.0, float("lam" in locals()))


train(False)
train(True)
'''


def test_a_name_the_step_assigns_only_in_a_branch():
    code = _convert(BRANCH_ONLY_OUTPUT)
    assert "UNBOUND" in code, code
    t, m = _losses(BRANCH_ONLY_OUTPUT, "torch_branch_only"), _losses(code, "ms_branch_only")
    assert len(t) == 6 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
