"""Issue 30 (native ports): joins whose members have one dtype by construction are MindSpore's own ``ops.cat`` /
``ops.stack``, without ``mp_tensor.promoted`` (TableCallTransform._one_dtype; native_facts.FloatFacts,
_FunctionFacts.one_promotion).

Classes met in the trials ports (native25):
* a comprehension over a ModuleList of floating layers, joined directly or through ``tuple(...)``/``list(...)``
  (crossformer's ``fmaps = tuple([conv(x) for conv in self.convs])``; a generator too);
* a list appended, in a loop, a name whose binding in the same block is floating (mamba-minimal's selective scan
  ``y = ...; ys.append(y)`` after ``y = None``);
* members that are one tree of ``+ - *`` over the same operands up to operand order (llama2.c's and nanochat's rotary
  embeddings ``xq_r * cos - xq_i * sin`` / ``xq_r * sin + xq_i * cos``): torch's binary promotion does not depend on
  the order, so the members have one dtype whatever the operands' dtypes (float16/32/64 and int64 tried).
Negatives keep the runtime join and match torch with mixed dtypes: a different tree (a float literal, a division),
an operand rebound between, a list given an integer, a ModuleList with an Embedding-free integer layer... (below).

MindSpore 2.10 measured (native25, /work/notes/native25.md): PyNative ops.cat/ops.stack refuse every mixed pair
loudly; GRAPH_MODE's ops.cat promotes mixed numeric pairs as torch does but gives wrong values with a bool first
member silently. So every fact here proves one dtype; none guesses.

Slice: forms for all fixtures; numbers for each positive in PyNative (dtype sweep) and the Cells in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent('''
    import torch
    from torch import nn


    class MultiConv(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(3, 2, k, padding=k // 2) for k in (1, 3)])

        def forward(self, x):
            fmaps = tuple([conv(x) for conv in self.convs])
            return torch.cat(fmaps, dim=1)


    class MultiConvGen(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(3, 2, 1), nn.Conv2d(3, 2, 3, padding=1)])

        def forward(self, x):
            return torch.cat(list(conv(x) for conv in self.convs), dim=1) + torch.cat([c(x) for c in self.convs], 1)


    class Scan(nn.Module):
        def forward(self, a):
            x = torch.zeros(a.shape[0], a.shape[2])
            ys = []
            y = None
            for i in range(a.shape[1]):
                x = torch.exp(a[:, i]) * 0.5 * x + a[:, i]
                y = x.sum(-1)
                ys.append(y)
            return torch.stack(ys, dim=1)


    def rotary(xq, cos, sin):
        xq_r, xq_i = xq.reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
        cos = cos.view(1, -1, 1)
        out_r = xq_r * cos - xq_i * sin
        out_i = xq_r * sin + xq_i * cos
        return torch.stack([out_r, out_i], dim=-1).flatten(2)


    def halves(x, cos, sin):
        d = x.shape[-1] // 2
        x1, x2 = x[..., :d], x[..., d:]
        y1 = x1 * cos + x2 * sin
        y2 = x1 * (-sin) + x2 * cos
        return torch.cat([y1, y2], -1)


    class Rotary(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cos", torch.cos(torch.arange(4.0)))
            self.register_buffer("sin", torch.sin(torch.arange(4.0)))

        def forward(self, x):
            return rotary(x, self.cos, self.sin)


    def scaled(x, cos, sin):
        y1 = x * cos
        y2 = x * sin * 2.0
        return torch.cat([y1, y2], 1)


    def rebound(x, cos, sin):
        y1 = x * cos
        cos = sin
        y2 = x * cos
        return torch.cat([y1, y2], 1)


    def divided(x, cos):
        y1 = x * cos
        y2 = x / cos
        return torch.cat([y1, y2], 1)


    def given_int(a):
        ys = []
        y = a[:, 0].float()
        for i in range(a.shape[1]):
            ys.append(y)
            y = a[:, i]
        return torch.stack(ys, dim=1)
''')

POSITIVES = ("class MultiConv(", "class MultiConvGen", "class Scan", "def rotary", "def halves")
NEGATIVES = ("def scaled", "def rebound", "def divided", "def given_int")


def _part(code: str, head: str) -> str:
    return code.split(head)[1].split("\nclass ")[0].split("\ndef ")[0]


def _run(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<fixture>", "exec"), namespace)  # noqa: S102 - the fixture and its conversion
    return namespace


def test_one_dtype_joins_are_native():
    code = convert_source(SOURCE).code
    for head in POSITIVES:
        assert "mp_tensor.promoted" not in _part(code, head), _part(code, head)
    for head in NEGATIVES:
        assert "mp_tensor.promoted" in _part(code, head), _part(code, head)


def test_native_joins_match_torch_across_dtypes():
    import mindspore as ms
    import torch

    ms.set_context(mode=ms.PYNATIVE_MODE)
    code = convert_source(SOURCE).code
    want, got = _run(SOURCE), _run(code)
    rng = np.random.default_rng(25)
    kinds = ("float32", "float64", "float16", "int64")

    def pair(shape, kind):
        values = rng.integers(-3, 4, shape) if kind == "int64" else rng.standard_normal(shape)
        array = values.astype(kind)
        return torch.from_numpy(array), ms.Tensor(array)

    for kx in kinds:
        for kc in kinds:
            tx, mx = pair((2, 4, 8), kx)
            tc, mc = pair((4,), kc)
            ts, ms_ = pair((4, 1), kc)
            for name, args in (("rotary", ((tx, tc, ts), (mx, mc, ms_))),
                               ("halves", ((tx, tc[:, None].expand(4, 4), ts), (mx, mc[:, None].broadcast_to((4, 4)), ms_)))):
                w = want[name](*args[0])
                g = got[name](*args[1])
                assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (name, kx, kc, g.dtype, w.dtype)
                np.testing.assert_allclose(g.asnumpy().astype(np.float64), w.numpy().astype(np.float64),
                                           rtol=2e-3 if "float16" in (kx, kc) else 1e-6, atol=1e-6)
    # the negatives, on integer operands where torch promotes: the runtime join gives torch's dtype and values
    tx, mx = pair((2, 3), "int64")
    tc, mc = pair((2, 3), "int64")
    for name, args in (("scaled", ((tx, tc, tc), (mx, mc, mc))), ("divided", ((tx, tc.abs() + 1), (mx, mc.abs() + 1)))):
        w, g = want[name](*args[0]), got[name](*args[1])
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (name, g.dtype, w.dtype)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6)
    ta, ma = pair((2, 3), "int64")
    w, g = want["given_int"](ta), got["given_int"](ma)
    assert str(g.dtype).lower() == str(w.dtype).replace("torch.", "")
    np.testing.assert_allclose(g.asnumpy(), w.numpy())


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_native_join_cells_match_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(7)
    image = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    sequence = (rng.standard_normal((2, 4, 3)) * 0.3).astype(np.float32)
    for cls, x in (("MultiConv", image), ("MultiConvGen", image), ("Scan", sequence),
                   ("Rotary", rng.standard_normal((2, 4, 8)).astype(np.float32))):
        assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"{cls}_{mode}", mode, rtol=1e-5, atol=1e-5)
