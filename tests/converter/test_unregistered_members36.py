"""Modules a model keeps in a plain Python list (minemile's DeepLabv3 ASPP, first contact, session 35:
``self.modules = []`` then ``self.modules.append(nn.Sequential(conv, bn, act))``). torch registers none of them (no
state_dict entry, not in parameters(), not switched by eval()); the port keeps that, and GRAPH_MODE compiled none:
MindSpore names each member's Parameters without a path (``1.gamma`` of every Sequential, "its name '1.gamma'
already exists"), and a member left in MindSpore's inference mode used BatchNorm's moving statistics where torch's,
never switched, used the batch's. Real torch, real MindSpore; torch's own weights of each member copied, since its
state_dict has none."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

APPENDED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Aspp(nn.Module):
        def __init__(self, c=3, out=4):
            super().__init__()
            self.modules = []
            self.modules.append(nn.Sequential(nn.Conv2d(c, out, 1), nn.BatchNorm2d(out), nn.SiLU(inplace=True)))
            for rate in (1, 2):
                self.modules.append(nn.Sequential(nn.Conv2d(c, out, 3, padding=rate, dilation=rate),
                                                  nn.BatchNorm2d(out), nn.SiLU(inplace=True)))
            self.final = nn.Sequential(nn.Conv2d(3 * out, out, 1), nn.BatchNorm2d(out))

        def forward(self, x):
            outs = []
            for module in self.modules:
                outs.append(module(x))
            return self.final(torch.cat(outs, dim=1))


    class Literal(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = [nn.Linear(4, 4), nn.Linear(4, 4)]
            self.pair = (nn.Linear(4, 4), nn.Dropout(0.0))

        def forward(self, x):
            return self.heads[0](x) + self.heads[1](x) + self.pair[1](self.pair[0](x))


    class Stacked(nn.Module):
        # golbin/WaveNet (first contact, session 48): the list is built by a method, of blocks another method makes
        def __init__(self, c=3):
            super().__init__()
            self.blocks = self.stack(c)
            self.head = self.make_head(c)  # a method returning one registered module: no naming call for it
            self.body = self.make_body(c)  # nor for nn.Sequential(*layers)

        @staticmethod
        def block(c, dilation):
            block = nn.Sequential(nn.Conv2d(c, c, 3, padding=dilation, dilation=dilation), nn.BatchNorm2d(c))
            return block

        def stack(self, c):
            blocks = []
            for dilation in (1, 2):
                block = self.block(c, dilation)
                blocks.append(block)
            return blocks

        def make_head(self, c):
            head = nn.Conv2d(c, c, 1)
            return head

        def make_body(self, c):
            layers = []
            layers.append(nn.Conv2d(c, c, 1))
            return nn.Sequential(*layers)

        def forward(self, x):
            for block in self.blocks:
                x = torch.relu(block(x)) + x
            return self.body(self.head(x))


    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Aspp()
            self.b = Aspp()

        def forward(self, x):
            return self.a(x) + self.b(x)
""")


def _members(net):
    """(owner path, member) of every module kept in a plain list or tuple, in order."""
    found = []
    for path, sub in [("", net), *[(p, s) for p, s in getattr(net, "named_modules", lambda: [])() if p]]:
        for attr in ("modules", "heads", "pair", "blocks"):
            held = vars(sub).get(attr)
            if isinstance(held, (list, tuple)):
                found += [(f"{path}.{attr}.{i}", m) for i, m in enumerate(held)]
    return found


def _ms_members(cell, names):
    out = []
    for owner in names:
        sub = cell
        for part in [p for p in owner.split(".")[:-2] if p]:
            sub = getattr(sub, part)
        out.append(vars(sub)[owner.split(".")[-2]][int(owner.split(".")[-1])])
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls, shape", [("Aspp", (2, 3, 6, 6)), ("Literal", (3, 4)), ("Twice", (2, 3, 6, 6)),
                                        ("Stacked", (2, 3, 6, 6))])
def test_modules_in_a_plain_list_stay_unregistered_and_match(tmp_path, mode, cls, shape):
    import mindspore as ms
    import torch

    result = convert_source(APPENDED)
    assert result.code.count("mp_nn.own_names(self)") == 3  # Aspp (append), Literal (a display), Stacked (a method)
    t_mod = load_module(APPENDED, tmp_path / f"t_unreg_{cls}.py", f"t_unreg_{cls}")
    m_mod = load_module(result.code, tmp_path / f"m_unreg_{cls}_{mode}.py", f"m_unreg_{cls}_{mode}")
    torch.manual_seed(0)
    torch_net, ms_net = getattr(t_mod, cls)().eval(), getattr(m_mod, cls)()
    ms_net.set_train(False)
    members = _members(torch_net)
    assert members and all(m.training for _, m in members)  # eval() does not reach them in torch
    assert not any(".modules." in k or "heads" in k or "pair" in k or "blocks" in k for k in torch_net.state_dict())
    assert transfer_weights(torch_net.state_dict(), ms_net).ok  # nor are they in the port's parameters
    names = []
    for (owner, t_member), m_member in zip(members, _ms_members(ms_net, [o for o, _ in members])):
        assert m_member.training  # torch's training mode, which set_train(False) of the owner does not reach
        assert transfer_weights(t_member.state_dict(), m_member).ok
        names += [p.name for p in m_member.get_parameters()]
    assert len(names) == len(set(names))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = ms_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_list_of_plain_values_gets_no_naming_call():
    code = convert_source(APPENDED.replace("[nn.Linear(4, 4), nn.Linear(4, 4)]", "[int(4), 3]")
                          .replace("(nn.Linear(4, 4), nn.Dropout(0.0))", "(max(1, 2), 0.0)")).code
    assert code.count("mp_nn.own_names(self)") == 2
