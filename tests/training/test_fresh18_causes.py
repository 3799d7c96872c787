"""Session trainfresh18 (issue 27): causes found at first contact with the fresh18/fresh18b entries. One test each,
on real torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# a Trainer class holding its GradScaler on `self` (WickedFoxes/simple_task_pytorch's ClassifierTrainer): the loop
# runs through the general training region and keeps torch's scaler calls (unscale_ before clipping, step, update,
# get_scale, state_dict), which the converted scaler must answer as torch's disabled CPU scaler does; a helper
# function taking the scaler as a parameter, and a scaler made with enabled=False, the same
SCALER_ON_SELF = '''
import torch
import torch.nn as nn
from torch.cuda.amp import autocast, GradScaler

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = (x.sum(1, keepdim=True) > 0).float()


class Trainer:
    def __init__(self, model, optimizer, amp=True):
        self.model = model
        self.opt = optimizer
        self.scaler = GradScaler(enabled=amp)
        self.loss_fn = nn.BCEWithLogitsLoss()

    def train(self, epochs, clip=None):
        for epoch in range(epochs):
            self.model.train()
            self.opt.zero_grad(set_to_none=True)
            with autocast(enabled=True):
                loss = self.loss_fn(self.model(x), y)
            self.scaler.scale(loss).backward()
            if clip is not None:
                self.scaler.unscale_(self.opt)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
            self.scaler.step(self.opt)
            self.scaler.update()
            print("step", loss.item(), float(self.scaler.get_scale()), float(self.scaler.is_enabled()),
                  float(len(self.scaler.state_dict())))


def helper_step(model, opt, scaler):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    return loss.item()


def make(seed):
    torch.manual_seed(seed)
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
        model.bias.fill_(0.05)
    return model


m1 = make(0)
trainer = Trainer(m1, torch.optim.SGD(m1.parameters(), lr=0.5), amp=True)
trainer.train(3, clip=0.1)
m2 = make(0)
second = Trainer(m2, torch.optim.Adam(m2.parameters(), lr=0.05), amp=False)
second.train(3)
m3 = make(0)
opt3 = torch.optim.SGD(m3.parameters(), lr=0.3)
scaler3 = torch.amp.GradScaler("cuda", enabled=False)
for _ in range(3):
    print("step", helper_step(m3, opt3, scaler3))
'''


def test_a_grad_scaler_used_through_torch_s_methods():
    """WickedFoxes/simple_task_pytorch (first run fresh18b, both entries: AttributeError: 'DisabledLossScaler' object
    has no attribute 'unscale_'): `self.scaler = GradScaler(enabled=cfg.amp)` in a Trainer class; its loop went
    through the general training region, which keeps the scaler's calls after the gradient, and the converted scaler
    (cuda_loss_scaler's DisabledLossScaler, a MindSpore StaticLossScaler) had MindSpore's scale/unscale/adjust only.
    It now also answers torch's GradScaler surface as torch's scaler does without CUDA (disabled): unscale_(opt) and
    update() change nothing, step(opt) is the optimizer's step, get_scale() 1.0, is_enabled() False, state_dict()
    {}."""
    code = _convert(SCALER_ON_SELF)
    t, m = _losses(SCALER_ON_SELF, "torch_scaler_on_self"), _losses(code, "ms_scaler_on_self")
    assert len(t) == 9 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[2][0] < t[0][0] and t[5][0] < t[3][0] and t[8][0] < t[6][0]


# a plain Trainer class (no nn.Module) whose own train(epochs) is called on the object as it is made
TRAIN_ON_A_NEW_OBJECT = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = x.sum(1, keepdim=True) * 0.5


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            self.opt.zero_grad()
            loss = ((self.model(x) - y) ** 2).mean()
            loss.backward()
            self.opt.step()
            print("step", loss.item())
        return self

    def eval(self):
        self.model.eval()
        with torch.no_grad():
            print("step", ((self.model(x) - y) ** 2).mean().item())


model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
Trainer(model, 0.2).train(4)
Trainer(model, 0.2).eval()
Trainer(model, lr=0.1).train(2)
Trainer(model, 0.1).eval()
'''


def test_train_called_on_a_new_object_of_a_plain_class():
    """Found writing the scaler test above (the fresh18b Trainer shape written as `Trainer(...).train(3)`): a call of
    the file's own non-Module class's train(epochs) on the object as it is made was taken for nn.Module's
    train(mode) and became `.set_train(3)` (AttributeError: 'Trainer' object has no attribute 'set_train'), and its
    own eval() became `.set_train(False)`; a name bound to such an object was already kept. The receiver made by a
    call of such a class is now kept the same."""
    code = _convert(TRAIN_ON_A_NEW_OBJECT)
    assert ".train(4)" in code and ".eval()" in code, code
    t, m = _losses(TRAIN_ON_A_NEW_OBJECT, "torch_train_new_object"), _losses(code, "ms_train_new_object")
    assert len(t) == 8 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[3][0] < t[0][0]


# a script in a sub-folder importing the modules next to it by their bare names (Adenialzz/SimpleImageGeneration's
# vae/vae/main.py: `from losses import vae_loss`, `from models import ...`, run from its own folder), with a metric
# line between the loss and its backward (which sends the loop to the general backward region)
SIBLING_TREE = {
    "gen/vae/models.py": '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 2)
        self.dec = nn.Linear(2, 4)

    def forward(self, x):
        h = torch.tanh(self.enc(x))
        return torch.sigmoid(self.dec(h)), h
''',
    "gen/vae/losses.py": '''
import torch
import torch.nn as nn


def recon_loss(x, x_hat, h):
    return nn.functional.binary_cross_entropy(x_hat, x, reduction="sum") + 0.1 * torch.sum(h ** 2)
''',
    "gen/vae/main.py": '''
import torch
from models import Net
from losses import recon_loss
from helpers import make_data

x_all = make_data()
model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(3):
    overall = 0.0
    for i in range(2):
        x = x_all[i * 4:(i + 1) * 4]
        optimizer.zero_grad()
        x_hat, h = model(x)
        loss = recon_loss(x, x_hat, h)
        overall += loss.item()
        loss.backward()
        optimizer.step()
    print("step", overall)
''',
    "gen/vae/helpers/__init__.py": '''
import torch


def make_data():
    return torch.linspace(0.05, 0.95, 32).reshape(8, 4)
''',
    "gen/other/main.py": "print(1)\n",
}


def _run_in_folder(folder) -> list[list[float]]:
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "main.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [[float(v) for v in line.split()[1:]] for line in done.stdout.splitlines() if line.startswith("step")]


def test_a_script_importing_the_modules_next_to_it(tmp_path):
    """Adenialzz/SimpleImageGeneration vae/vae (first run fresh18b: AttributeError: 'Tensor' object has no attribute
    'backward', with no MP flag): the project's top-level names were only the tree's top folders (`gen` here), so
    `from losses import recon_loss` in gen/vae/main.py, run from its folder where Python finds gen/vae/losses.py,
    was taken for a third-party module, `loss = recon_loss(...)` for a foreign value and its `.backward()` for a
    foreign method, left as written. A file's sibling modules and packages are now the project's own for it."""
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in SIBLING_TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1)
    assert ".backward()" not in (out / "gen/vae/main.py").read_text()
    t, m = _run_in_folder(src / "gen/vae"), _run_in_folder(out / "gen/vae")
    assert len(t) == len(m) == 3
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-5)
    assert t[-1][0] < t[0][0]


# a checkpoint helper saving a scheduler's state with the model's and the optimizer's and a resume that loads all
# three mid-script (WickedFoxes/simple_task_pytorch's src/utils/checkpoint.py shape), for ReduceLROnPlateau stepped on
# a metric, StepLR, and OneCycleLR stepped per batch
SCHEDULER_CHECKPOINT = '''
import os
import tempfile
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = x.sum(1, keepdim=True) * 0.5 + 0.1


def save(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict() if scheduler else None, "epoch": epoch}, path)


def load(path, model, optimizer=None, scheduler=None):
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model"])
    if optimizer and ckpt.get("optimizer"):
        optimizer.load_state_dict(ckpt["optimizer"])
    if scheduler and ckpt.get("scheduler"):
        scheduler.load_state_dict(ckpt["scheduler"])
    return ckpt


def build(kind):
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
        model.bias.fill_(0.05)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    if kind == "plateau":
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0)
    elif kind == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    else:
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.3, total_steps=12)
    return model, optimizer, scheduler


def run(kind, model, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for i in range(2):
            optimizer.zero_grad()
            loss = ((model(x[i * 4:(i + 1) * 4]) - y[i * 4:(i + 1) * 4]) ** 2).mean()
            loss.backward()
            optimizer.step()
            if kind == "onecycle":
                scheduler.step()
        with torch.no_grad():
            val = ((model(x) - y) ** 2).mean().item()
        if kind == "plateau":
            scheduler.step(val + (0.5 if epoch % 2 else 0.0))
        elif kind == "step":
            scheduler.step()
        print("step", val, float(optimizer.param_groups[0]["lr"]))


folder = tempfile.mkdtemp()
for kind in ("plateau", "step", "onecycle"):
    path = os.path.join(folder, kind + ".ckpt")
    model, optimizer, scheduler = build(kind)
    run(kind, model, optimizer, scheduler, 3)
    save(path, model, optimizer, scheduler, 3)
    model2, optimizer2, lr_scheduler = build(kind)
    ckpt = load(path, model2, optimizer2, lr_scheduler)
    print("step", float(ckpt["epoch"]), float(optimizer2.param_groups[0]["lr"]))
    run(kind, model2, optimizer2, lr_scheduler, 3)
'''


def test_a_scheduler_saved_and_loaded_with_a_checkpoint():
    """WickedFoxes/simple_task_pytorch (fresh18b after the first fixes, both entries: AttributeError:
    'ReduceLROnPlateau' / 'OneCycleLR' object has no attribute 'state_dict'): its CheckpointSaver saves
    `scheduler.state_dict()` with the model's and the optimizer's; MindSpore's schedulers have no
    state_dict/load_state_dict, and `scheduler.load_state_dict(...)` was taken for a model's. A receiver named like
    a scheduler now goes through mindport.runtime.optim.state_dict/load_state_dict, which give torch's scheduler
    state (its attributes but the optimizer, Python numbers for MindSpore's 0-d Parameters) and put it back (the
    stepped Parameters assigned in place), so a resumed run continues the schedule where torch's does."""
    code = _convert(SCHEDULER_CHECKPOINT)
    t, m = _losses(SCHEDULER_CHECKPOINT, "torch_scheduler_ckpt"), _losses(code, "ms_scheduler_ckpt")
    assert len(t) == 21 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[6][1] < 0.2 and t[3][1] == t[2][1] and t[10][1] == t[9][1] and t[17][1] == t[16][1]
