"""torch's container methods on the converted containers (FSRCNN: ``self.mid_part.extend([...])``).

Enumerated from the installed torch: every public method nn.Sequential, nn.ModuleList and nn.ModuleDict have beyond
nn.Module's is accounted for in the object surface; the ones the converted container lacks (SequentialCell has no
extend/insert/pop, a CellList no pop) go through mindport.runtime.layers, and a program using each of them builds the
same containers in both frameworks (the cells in the same order, parameters named as torch's keys)."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.mappings.surface import load_surface

CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


def _public_methods(name: str) -> list[str]:
    cls = getattr(torch.nn, name)
    base = set(dir(torch.nn.Module))
    return sorted(m for m in set(dir(cls)) - base if not m.startswith("_") and callable(getattr(cls, m)))


@pytest.mark.parametrize("name", CONTAINERS)
def test_every_public_method_is_accounted_for(name):
    layer = load_surface().layer(f"torch.nn.{name}")
    assert layer is not None
    for method in _public_methods(name):
        assert method in layer.same or method in layer.flagged or method in layer.renamed, f"{name}.{method}"
        if name != "ModuleDict":  # its views (keys/items/values) are flagged: they are not torch's odict views
            assert method not in layer.flagged, f"{name}.{method} is flagged: {layer.flagged[method]}"


SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self, m=2):
            super().__init__()
            self.mid = [nn.Linear(4, 4), nn.PReLU(4)]  # a list first, a Sequential after (FSRCNN)
            for _ in range(m):
                self.mid.extend([nn.Linear(4, 4), nn.Tanh()])
            self.mid = nn.Sequential(*self.mid)
            self.seq = nn.Sequential(nn.Linear(4, 4))
            self.seq.extend([nn.ReLU(), nn.Linear(4, 3)])
            self.seq.insert(1, nn.Tanh())
            self.seq.append(nn.Sigmoid())
            self.last = self.seq.pop(-1)
            self.blocks = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
            self.blocks.pop(0)
            self.blocks.insert(0, nn.Linear(3, 3))
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 5)})
            self.spare = self.heads.pop("b")

        def forward(self, x):
            y = self.seq(self.mid(x))
            for block in self.blocks:
                y = block(y)
            return self.heads["a"](y), self.last(y)
""")


def _build(code: str, name: str):
    namespace: dict = {}
    exec(compile(code, name, "exec"), namespace)  # noqa: S102 - our own test program and its conversion
    return namespace["Net"]()


def test_the_containers_are_built_as_in_torch():
    result = convert_source(SOURCE, "net.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    torch.manual_seed(0)
    t_net, m_net = _build(SOURCE, "net_torch.py"), _build(result.code, "net_ms.py")
    for attr in ("mid", "seq", "blocks"):
        t_kinds = [type(c).__name__ for c in getattr(t_net, attr)]
        m_kinds = [type(c).__name__ for c in getattr(m_net, attr)]
        assert len(t_kinds) == len(m_kinds), (attr, t_kinds, m_kinds)
    assert [type(c).__name__ for c in m_net.seq] == ["Dense", "Tanh", "ReLU", "Dense"]
    assert type(m_net.last).__name__ == "Sigmoid" and type(m_net.spare).__name__ == "Dense"
    t_keys = sorted(k for k in t_net.state_dict() if "mid" in k or "seq" in k or "blocks" in k)
    m_keys = sorted(n for n, _ in m_net.parameters_and_names() if n.split(".")[0] in ("mid", "seq", "blocks"))
    # MindSpore names Dense weights as torch does and PReLU's as "w" (the weight rule maps it)
    assert [k.replace(".w", ".weight") if k.endswith(".w") else k for k in m_keys] == t_keys
    from mindport.migrator.weights import transfer_weights

    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        t_out = t_net(torch.tensor(x))
    m_out = m_net(ms.Tensor(x))
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-5, atol=1e-6)
