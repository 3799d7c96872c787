"""Frozen parameters vs buffers (issue 27, session frozen13): the converter keeps each ``register_buffer`` (and
MindSpore keeps BatchNorm's statistics) as a non-trainable Parameter, so a frozen parameter must not pass for a buffer.
Each case is a fine-tuning pattern trained for four SGD steps (momentum, weight decay; Adam, AdamW, Adamax where
named) in torch and in its conversion
on real MindSpore, from the same weights: the losses, each parameter's and buffer's value after training (which ones
changed), and the counts of parameters (all, trainable) and buffers must be torch's."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert

HEAD = '''
import copy
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.layer4 = nn.Linear(6, 6)
        self.fc = nn.Linear(6, 1)
        self.register_buffer("offset", torch.full((6,), 0.1))
        self.scale = nn.Parameter(torch.full((6,), 1.5), requires_grad=False)

    def forward(self, x):
        h = torch.relu(self.bn(self.body(x)) + self.offset)
        h = torch.relu(self.layer4(h)) * self.scale
        return self.fc(h)


def init(model):
    with torch.no_grad():
        model.body.weight.copy_(torch.linspace(-0.5, 0.5, 24).reshape(6, 4))
        model.body.bias.copy_(torch.linspace(-0.1, 0.1, 6))
        model.layer4.weight.copy_(torch.linspace(0.4, -0.3, 36).reshape(6, 6))
        model.layer4.bias.fill_(0.02)
        model.fc.weight.copy_(torch.linspace(-0.2, 0.3, 6).reshape(1, 6))
        model.fc.bias.fill_(0.05)


def report(model, tag):
    for name, t in (("body.weight", model.body.weight), ("body.bias", model.body.bias),
                    ("layer4.weight", model.layer4.weight), ("layer4.bias", model.layer4.bias),
                    ("fc.weight", model.fc.weight), ("fc.bias", model.fc.bias),
                    ("scale", model.scale), ("offset", model.offset)):
        print("val", tag, name, float(t.sum()))
    print("count", tag, sum(p.numel() for p in model.parameters()),
          sum(p.numel() for p in model.parameters() if p.requires_grad),
          len([b for b in model.buffers() if b.numel() == 6]))


x = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)
y = torch.sin(x.sum(1, keepdim=True))
model = Net()
init(model)
'''

LOOP = '''
criterion = nn.MSELoss()
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
report(model, "model")
'''

FILTERED = "optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1, " \
           "momentum=0.9, weight_decay=0.01)\n"
ALL = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)\n"

CASES = {
    # the classic fine-tuning head: freeze everything by attribute, unfreeze one block by its parameters()
    "attribute_freeze_then_block_unfreeze": '''
for p in model.parameters():
    p.requires_grad = False
for p in model.layer4.parameters():
    p.requires_grad = True
''' + FILTERED,
    # unfreeze by name
    "attribute_freeze_then_named_unfreeze": '''
for p in model.parameters():
    p.requires_grad = False
for n, p in model.named_parameters():
    if "fc" in n:
        p.requires_grad = True
''' + FILTERED,
    # by the module's requires_grad_
    "module_requires_grad_": '''
model.requires_grad_(False)
model.fc.requires_grad_(True)
''' + FILTERED,
    # the first children frozen, the optimizer given every parameter (torch skips those without a gradient)
    "children_loop_freeze": '''
for i, child in enumerate(model.children()):
    if i < 2:
        for p in child.parameters():
            p.requires_grad = False
''' + ALL,
    # one tensor frozen by attribute, the optimizer given every parameter
    "single_attribute_freeze": '''
model.body.weight.requires_grad = False
''' + ALL,
    # one tensor frozen by requires_grad_
    "single_requires_grad_": '''
model.layer4.weight.requires_grad_(False)
''' + FILTERED,
    # nothing frozen by the script: only the frozen-from-start Parameter (scale)
    "frozen_from_start_only": ALL,
    # progressive unfreezing: the body frozen, the optimizer built over every parameter, two steps, then the body
    # unfrozen (torch's optimizer holds it and trains it from then on; session train14)
    "unfreeze_after_optimizer_built": '''
for p in model.body.parameters():
    p.requires_grad = False
''' + ALL + '''
for step in range(2):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
for p in model.body.parameters():
    p.requires_grad = True
''',
    # the same with optimizers whose update reads the step count (torch counts each parameter's own steps: layer4,
    # unfrozen after two steps, gets the bias correction of its first step; MindSpore's optimizer has one counter).
    # The body stays frozen: its bias feeds BatchNorm, so its gradient is float noise, which Adam scales to lr.
    "adam_unfreeze_after_optimizer_built": '''
for p in [*model.body.parameters(), *model.layer4.parameters()]:
    p.requires_grad = False
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
for step in range(2):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
for p in model.layer4.parameters():
    p.requires_grad = True
''',
    "adamw_unfreeze_after_optimizer_built": '''
for p in [*model.body.parameters(), *model.layer4.parameters()]:
    p.requires_grad = False
optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
for step in range(2):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
for p in model.layer4.parameters():
    p.requires_grad = True
''',
    "adamax_unfreeze_after_optimizer_built": '''
for p in [*model.body.parameters(), *model.layer4.parameters()]:
    p.requires_grad = False
optimizer = torch.optim.Adamax(model.parameters(), lr=0.05)
for step in range(2):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
for p in model.layer4.parameters():
    p.requires_grad = True
''',
    # a freeze after the optimizer was built: torch's step skips the frozen parameter (no decay, no momentum)
    "freeze_after_optimizer_built": ALL + '''
for step in range(2):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
model.layer4.weight.requires_grad = False
''',
    # an EMA copy: deep-copied, frozen, updated from the model's parameters() (scale, frozen from the start, included)
    "ema_copy": '''
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
''' + ALL,
}

EMA_LOOP = '''
criterion = nn.MSELoss()
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(0.5).add_(0.5 * p)
    print("step", loss.item())
report(model, "model")
report(ema, "ema")
'''


def script(case: str) -> str:
    return HEAD + CASES[case] + (EMA_LOOP if case == "ema_copy" else LOOP)


def outcome(code: str, name: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    lines = [line.split() for line in out.getvalue().splitlines()]
    return {"losses": [float(p[1]) for p in lines if p[0] == "step"],
            "values": {f"{p[1]}.{p[2]}": float(p[3]) for p in lines if p[0] == "val"},
            "counts": {p[1]: [int(v) for v in p[2:]] for p in lines if p[0] == "count"}}


def compare(case: str) -> list[str]:
    """What differs from torch: [] when the port matches."""
    source = script(case)
    torch_run = outcome(source, f"torch_{case}")
    try:
        ms_run = outcome(_convert(source), f"ms_{case}")
    except Exception as exc:  # noqa: BLE001 - a crash is one of the outcomes the battery records
        return [f"crash: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"]
    problems = []
    if len(ms_run["losses"]) != len(torch_run["losses"]) or not np.allclose(
            ms_run["losses"], torch_run["losses"], rtol=1e-4, atol=1e-6):
        problems.append(f"losses {ms_run['losses']} vs torch {torch_run['losses']}")
    for key, value in torch_run["values"].items():
        got = ms_run["values"].get(key)
        if got is None or not np.isclose(got, value, rtol=1e-4, atol=1e-5):
            problems.append(f"{key} {got} vs torch {value}")
    if ms_run["counts"] != torch_run["counts"]:
        problems.append(f"counts {ms_run['counts']} vs torch {torch_run['counts']}")
    return problems


@pytest.mark.parametrize("case", sorted(CASES))
def test_frozen_parameters_train_as_torch(case):
    problems = compare(case)
    assert not problems, "\n".join(problems) + "\n" + _convert(script(case))


if __name__ == "__main__":  # the battery's table: python tests/training/test_frozen_parameters.py
    for case in sorted(CASES):
        problems = compare(case)
        print(f"{case:40s} {'OK' if not problems else 'DIFFERS'}")
        for problem in problems:
            print("    ", problem)


def test_a_freeze_marks_the_parameter_and_a_buffer_stays_one():
    """At run time, on MindSpore: ``p.requires_grad = False`` on a trainable Parameter marks it frozen (torch's
    parameters() lists it), a buffer made non-trainable is not marked, and a deep copy keeps the mark (an EMA copy)."""
    import copy

    import mindspore as ms
    import torch

    from mindport.runtime.containers import buffers, is_parameter, parameters

    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = ms.nn.Dense(3, 2)
            self.mask = ms.Parameter(ms.ops.ones(2), name="mask", requires_grad=False)

    net = Net()
    net.fc.weight.requires_grad = False
    assert is_parameter(net.fc.weight) and not is_parameter(net.mask)
    copied = copy.deepcopy(net)
    assert is_parameter(copied.fc.weight) and not is_parameter(copied.mask)
    # torch's counts for the same module: 2 parameters (one frozen), 1 buffer
    t = torch.nn.Linear(3, 2)
    t.register_buffer("mask", torch.ones(2))
    t.weight.requires_grad = False
    assert len(list(parameters(net))) == len(list(t.parameters())) == 2
    assert len(list(buffers(net))) == len(list(t.buffers())) == 1


def test_native_parameters_where_nothing_freezes_and_for_the_optimizer():
    """``model.parameters()`` stays ``trainable_params()`` in a file that freezes nothing (a register_buffer is no
    freeze), and for an optimizer in a file that does (torch's step skips a frozen parameter)."""
    plain = _convert(HEAD.replace("nn.Parameter(torch.full((6,), 1.5), requires_grad=False)",
                                  "nn.Parameter(torch.full((6,), 1.5))") + ALL + LOOP)
    assert "mp_containers.parameters" not in plain and "model.trainable_params()" in plain, plain
    frozen = _convert(script("single_attribute_freeze"))
    assert "ms_optim.SGD(model.trainable_params()" in frozen, frozen
    assert "mp_containers.parameters(model)" in frozen, frozen  # the counts in report()


EMA = '''
from copy import deepcopy

import torch
import torch.nn as nn


class Denoiser:
    def __init__(self):
        torch.manual_seed(0)
        self.F = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        self.F_ema = deepcopy(self.F).requires_grad_(False)
        self.F_ema.eval()

    def ema_update(self, decay=0.9):
        for p, p_ema in zip(self.F.parameters(), self.F_ema.parameters()):
            p_ema.data = decay * p_ema.data + (1 - decay) * p.data


def run():
    d = Denoiser()
    for step in range(3):
        with torch.no_grad():
            for p in d.F.parameters():
                p.add_(0.5)  # the trained model moves
        d.ema_update()
    return [float(p.sum()) for p in d.F_ema.parameters()], len(list(d.F_ema.parameters()))
'''


def test_an_ema_copy_frozen_whole_follows_the_model():
    """ZibinDong/diffusion_models_minimal_tutorial (training first contact 39): ``deepcopy(self.F).requires_grad_(False)``
    freezes an EMA copy whole; the file's freeze was not recognised (the receiver is a call, not a name), so
    ``F_ema.parameters()`` was ``trainable_params()``, empty, and the EMA never moved. The copy's parameters, after three
    updates, are torch's."""
    import mindspore as ms

    torch_ns: dict = {}
    exec(EMA, torch_ns)
    want_sums, want_count = torch_ns["run"]()
    code = _convert(EMA)
    assert "trainable_params" not in code, code
    ms_ns: dict = {}
    exec(code, ms_ns)
    # the converted run: its own seed stream differs, so start both from torch's weights
    d_torch = torch_ns["Denoiser"]()
    d_ms = ms_ns["Denoiser"]()
    from mindport.runtime.containers import parameters

    for p_ms, p_t in zip(parameters(d_ms.F), d_torch.F.parameters()):
        p_ms.set_data(ms.Tensor(p_t.detach().numpy()))
    for p_ms, p_t in zip(parameters(d_ms.F_ema), d_torch.F_ema.parameters()):
        p_ms.set_data(ms.Tensor(p_t.detach().numpy()))
    for _ in range(3):
        for p in parameters(d_ms.F):
            p.set_data(p + 0.5)
        d_ms.ema_update()
    got = [float(p.sum()) for p in parameters(d_ms.F_ema)]
    assert len(got) == want_count == 4
    np.testing.assert_allclose(got, want_sums, rtol=1e-5)
