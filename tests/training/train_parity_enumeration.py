"""Training parity enumeration (issue 27): normalisation layers (BatchNorm2d/1d with their momentum, affine and
track_running_stats settings, GroupNorm, LayerNorm) x optimizers (Adam with weight_decay/amsgrad/eps, AdamW, SGD with
momentum/nesterov/dampening/weight_decay, RMSprop) x schedulers (StepLR, MultiStepLR, CosineAnnealingLR, OneCycleLR,
LambdaLR, ExponentialLR, ReduceLROnPlateau, ...), the learning rate each scheduler gives, clip_grad_norm_ (its total
norm, norm types 2, 1, inf, 3) and clip_grad_value_. Each combination is a fresh model trained a few steps on the
same data. Run by boot.py (track) on both sides with one group name as argument; prints ``loss NAME STEP VALUE``
lines (test_train23_causes.py)."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        if norm == "bn2d":
            self.n1, self.n2 = nn.BatchNorm2d(8), nn.BatchNorm2d(8)
        elif norm == "bn2d_momentum":
            self.n1, self.n2 = nn.BatchNorm2d(8, momentum=0.3), nn.BatchNorm2d(8, momentum=0.05)
        elif norm == "bn2d_noaffine":
            self.n1, self.n2 = nn.BatchNorm2d(8, affine=False), nn.BatchNorm2d(8, track_running_stats=False)
        elif norm == "gn":
            self.n1, self.n2 = nn.GroupNorm(2, 8), nn.GroupNorm(4, 8, eps=1e-3)
        else:
            self.n1, self.n2 = nn.GroupNorm(1, 8), nn.GroupNorm(8, 8, affine=False)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.n1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.n2(self.conv2(x)))
        return self.fc(x.mean(dim=(2, 3)))


class MLP(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 16)
        if norm == "bn1d":
            self.n1, self.n2 = nn.BatchNorm1d(16), nn.BatchNorm1d(16, eps=1e-3, momentum=0.2)
        else:
            self.n1, self.n2 = nn.LayerNorm(16), nn.LayerNorm(16, eps=1e-6, elementwise_affine=False)
        self.out = nn.Linear(16, 5)

    def forward(self, x):
        x = F.relu(self.n1(self.fc1(x)))
        x = F.relu(self.n2(self.fc2(x)))
        return self.out(x)


def make_optimizer(kind, params):
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-2)
    if kind == "adam_wd":
        return torch.optim.Adam(params, lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=1e-2)
    if kind == "adam_amsgrad":
        return torch.optim.Adam(params, lr=1e-2, amsgrad=True)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.05)
    if kind == "adamw_amsgrad":
        return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.05, amsgrad=True, eps=1e-6)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05)
    if kind == "sgd_nesterov":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)
    if kind == "sgd_dampening":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-3)
    if kind == "rmsprop":
        return torch.optim.RMSprop(params, lr=1e-3)
    if kind == "rmsprop_full":
        return torch.optim.RMSprop(params, lr=1e-3, alpha=0.9, eps=1e-6, momentum=0.5, centered=True,
                                   weight_decay=1e-3)
    raise ValueError(kind)


def make_scheduler(kind, optimizer):
    if kind == "none":
        return None
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    if kind == "multistep":
        return torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 3, 4], gamma=0.3)
    if kind == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=1e-4)
    if kind == "cosine_restarts":
        return torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=1e-4)
    if kind == "onecycle":
        return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, total_steps=10)
    if kind == "onecycle_linear":
        return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, total_steps=10, anneal_strategy="linear",
                                                   three_phase=True, pct_start=0.2)
    if kind == "lambda":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda epoch: 1.0 / (1 + epoch))
    if kind == "exponential":
        return torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.7)
    if kind == "plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0)
    if kind == "plateau_max":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.3, patience=0,
                                                          threshold=0.05, threshold_mode="abs", cooldown=1,
                                                          min_lr=3e-3)
    if kind == "linear":
        return torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=4)
    if kind == "poly":
        return torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=6, power=2.0)
    raise ValueError(kind)


def train(name, model, optimizer, scheduler, plateau, X, Y, steps, clip, batch):
    criterion = nn.CrossEntropyLoss()
    model.train()
    for step in range(steps):
        i = (step * batch) % X.shape[0]
        x, y = X[i:i + batch], Y[i:i + batch]
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        if plateau:
            scheduler.step(loss.item())
        elif scheduler is not None:
            scheduler.step()
        print("loss", name, step, loss.item())
    model.eval()
    with torch.no_grad():
        print("loss", name + "/eval", 0, criterion(model(X), Y).item())


def learning_rates(images, labels):
    """The learning rate each scheduler gives, step by step (SGD with momentum under it)."""
    criterion = nn.CrossEntropyLoss()
    for kind in ("step", "multistep", "cosine", "cosine_restarts", "onecycle", "onecycle_linear", "lambda",
                 "exponential", "plateau", "plateau_max", "linear", "poly"):
        model = ConvNet("bn2d")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        scheduler = make_scheduler(kind, optimizer)
        model.train()
        for step in range(10):
            i = (step * 16) % 64
            optimizer.zero_grad()
            loss = criterion(model(images[i:i + 16]), labels[i:i + 16])
            loss.backward()
            optimizer.step()
            if kind.startswith("plateau"):
                scheduler.step(loss.item())
                lr = optimizer.param_groups[0]["lr"]
            else:
                scheduler.step()
                lr = scheduler.get_last_lr()[0]
            print("loss", kind, step, loss.item())
            print("loss", kind + "/lr", step, float(lr))


def clipping(images, labels):
    """clip_grad_norm_'s total norm and clipping for each norm type, then clip_grad_value_; each model built after
    the first one's model.train() above and never put in a mode itself: it trains in torch's mode from birth."""
    criterion = nn.CrossEntropyLoss()
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        model = ConvNet("bn2d")
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(5):
            i = (step * 16) % 64
            optimizer.zero_grad()
            loss = criterion(model(images[i:i + 16]), labels[i:i + 16])
            loss.backward()
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.3, norm_type=norm_type)
            optimizer.step()
            print("loss", "clip%s" % norm_type, step, loss.item())
            print("loss", "clip%s/total" % norm_type, step, float(total))
    model = ConvNet("bn2d")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(5):
        i = (step * 16) % 64
        optimizer.zero_grad()
        loss = criterion(model(images[i:i + 16]), labels[i:i + 16])
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)
        optimizer.step()
        print("loss", "clipvalue", step, loss.item())


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    images = torch.randn(64, 3, 8, 8)
    rows = torch.randn(64, 12)
    labels = torch.randn(64, 5).argmax(1)
    combos = []
    if which in ("norms", "all"):
        for norm in ("bn2d", "bn2d_momentum", "bn2d_noaffine", "gn", "gn_mixed", "bn1d", "ln"):
            combos.append((norm, "adam", "step", 10, 1.0))
    if which in ("optims", "optims_full", "all"):
        schedulers = ("none", "step", "multistep", "cosine", "onecycle", "lambda", "exponential", "plateau")
        for k, opt in enumerate(("adam", "adam_wd", "adam_amsgrad", "adamw", "adamw_amsgrad", "sgd", "sgd_nesterov",
                                 "sgd_dampening", "rmsprop", "rmsprop_full")):
            # every optimizer with one scheduler, every scheduler with one or two optimizers ("optims_full": each
            # optimizer with each scheduler, 80 combinations, measured in /work/notes/train23.md)
            for sched in (schedulers if which == "optims_full" else schedulers[k % len(schedulers):][:1]):
                combos.append(("bn2d", opt, sched, 5, 0.5))
    for norm, opt, sched, steps, clip in combos:
        model = ConvNet(norm) if norm not in ("bn1d", "ln") else MLP(norm)
        optimizer = make_optimizer(opt, model.parameters())
        scheduler = make_scheduler(sched, optimizer)
        X = rows if norm in ("bn1d", "ln") else images
        train("%s/%s/%s" % (norm, opt, sched), model, optimizer, scheduler, sched == "plateau", X, labels, steps,
              clip, 16)
    if which in ("lr", "all"):
        learning_rates(images, labels)
    if which in ("clips", "all"):
        clipping(images, labels)


if __name__ == "__main__":
    main()
