"""Issue 30 (native ports): ``~mask`` of a mask a module-level function of the file builds, called directly or
through an attribute the class binds to such functions, is MindSpore's own ``~`` (native_facts.BoolFacts).

MindSpore's ``~`` is a logical not whatever the dtype (torch inverts an integer's bits), so ``~x`` of a tensor not
known to be bool becomes the runtime ``mp_math.bitwise_not``. x-transformers builds its causal masks by
``self.create_causal_mask(i, j, device)``, an attribute its ``__init__`` binds to ``onnx_create_causal_mask if
onnxable else create_causal_mask``, two module-level functions each returning a bool (``torch.ones(..., dtype=
torch.bool).triu(...)``; a comparison padded by ``F.pad(..., value=False)``): its three ``~causal_mask`` kept the
runtime helper in each of its four trials ports. Now a call of a module-level function every return of which is bool
by its own code, and ``self.NAME(...)`` where ``__init__`` binds ``self.NAME`` in its top-level statements and every
``self.NAME = ...`` of the file is such a function (or a conditional choice between them), is bool; a constant
``F.pad`` of a bool is bool. The negatives (a function returning an integer mask; an attribute also bound to a lambda
elsewhere) keep the runtime's bit inversion. Also ``~`` of a converted ``any``/``all`` (``~mask.any(dim=-1)``, ``~torch.all(
counts, -1)``) stays MindSpore's own: the converted call gives a bool whatever its input's dtype. Every class is
compared with torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn
    import torch.nn.functional as F


    def causal_mask(i, j, device):
        return torch.ones((i, j), device=device, dtype=torch.bool).triu(j - i + 1)


    def padded_causal_mask(i, j, device):
        r = torch.arange(i, device=device)
        mask = r[:, None] < r[None, :]
        mask = F.pad(mask, (j - i, 0), value=False)
        return mask


    def counted_mask(i, j, device):
        return torch.ones((i, j), device=device, dtype=torch.long).triu(j - i + 1)


    class ChosenMask(nn.Module):
        def __init__(self, dim=8, padded=False):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)
            self.make_mask = padded_causal_mask if padded else causal_mask

        def forward(self, x):
            q, k = self.q(x), self.k(F.pad(x, (0, 0, 2, 0)))
            sim = q @ k.transpose(-1, -2)
            i, j = sim.shape[-2:]
            allowed = ~self.make_mask(i, j, x.device)
            return torch.where(allowed, sim, torch.zeros_like(sim))


    class CalledMask(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.q = nn.Linear(dim, dim)

        def forward(self, x):
            sim = self.q(x) @ x.transpose(-1, -2)
            n = sim.shape[-1]
            allowed = ~padded_causal_mask(n, n, x.device)
            return torch.where(allowed, sim, torch.zeros_like(sim))


    class SameNameMask(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.causal_mask = causal_mask

        def forward(self, x):
            sim = self.q(x) @ x.transpose(-1, -2)
            n = sim.shape[-1]
            causal = self.causal_mask(n, n, x.device)
            keep = ~causal
            return torch.where(keep, sim, torch.zeros_like(sim))


    class EmptyRows(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.q = nn.Linear(dim, dim)

        def forward(self, x):
            h = self.q(x)
            counts = (h > 0.5).long()
            no_hit = ~h.gt(0.5).any(dim=-1)
            no_zero = ~torch.all(counts, dim=-1)
            return h.sum(-1) * no_hit.float() + no_zero.float(), (~counts.any(-1)).float()


    class CountedMask(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.count_mask = counted_mask

        def forward(self, x):
            sim = self.q(x) @ x.transpose(-1, -2)
            n = sim.shape[-1]
            return sim + (~self.count_mask(n, n, x.device)).float()


    class ReboundMask(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.build = causal_mask

        def simplify(self):
            self.build = lambda i, j, device: torch.ones((i, j), dtype=torch.long, device=device)

        def forward(self, x):
            sim = self.q(x) @ x.transpose(-1, -2)
            n = sim.shape[-1]
            return sim + (~self.build(n, n, x.device)).float()
""")

NATIVE = ("ChosenMask", "CalledMask", "SameNameMask", "EmptyRows")
RUNTIME = ("CountedMask", "ReboundMask")


def _class_code(code: str, name: str) -> str:
    return code.split(f"class {name}")[1].split("\nclass ")[0]


def test_bool_function_masks_give_native_not():
    code = convert_source(SOURCE).code
    for name in NATIVE:
        body = _class_code(code, name)
        assert "~" in body and "bitwise_not" not in body, body
    for name in RUNTIME:
        assert "mp_math.bitwise_not(" in _class_code(code, name), _class_code(code, name)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_bool_function_masks_match_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(56).standard_normal((2, 5, 8)).astype(np.float32)
    for name in (*NATIVE, *RUNTIME):
        assert_port_matches_in_mode(SOURCE, code, name, [x], tmp_path, f"{name}_{mode}", mode, rtol=1e-5, atol=1e-6)
