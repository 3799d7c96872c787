"""Issue 30 (native ports): a softmax whose input is built from names bound by unpacking, or filled in place with a
finite value, is MindSpore's own ``ops.softmax`` (native_facts.UnmaskedFacts).

MindSpore 2.10's CPU softmax kernel gives the other rows wrong values where a row is all ``-inf``; the runtime's
``mp_F.softmax`` writes it out. The converter proves from the code that no such row can reach a softmax. Two common
forms were not followed and kept the runtime softmax:

- names bound by unpacking (``q, k, v = self.to_qkv(x).chunk(3, dim=-1)``, lucidrains'
  ``q, k, v = map(lambda t: rearrange(t, ...), qkv)``, ``q, k = [t * scale for t in (q, k)]``): each element of a
  value with no -inf row has none;
- an in-place ``sim.masked_fill_(~mask, max_neg_value)`` with a finite fill (``-torch.finfo(sim.dtype).max``),
  which was read as any in-place update.

Each positive is compared with torch in PyNative and GRAPH_MODE (the fill case with a fully masked row: a finite fill
leaves a finite row). The negatives (an unpacked parameter, an in-place fill given by the caller) keep the runtime
softmax and match torch on a row of all ``-inf``."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from einops import rearrange


    class LinearAttn(nn.Module):
        def __init__(self, dim=8, heads=2):
            super().__init__()
            self.heads = heads
            self.to_qkv = nn.Conv2d(dim, dim * 3, 1, bias=False)

        def forward(self, x):
            qkv = self.to_qkv(x).chunk(3, dim=1)
            q, k, v = map(lambda t: rearrange(t, 'b (h c) x y -> b h c (x y)', h=self.heads), qkv)
            q = q.softmax(dim=-2)
            k = k.softmax(dim=-1)
            context = torch.einsum('bhdn,bhen->bhde', k, v)
            return torch.einsum('bhde,bhdn->bhen', context, q)


    class CrossAttn(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.to_q = nn.Linear(dim, dim)
            self.to_kv = nn.Linear(dim, dim * 2)

        def forward(self, x, mask):
            q = self.to_q(x)
            k, v = self.to_kv(x).chunk(2, dim=-1)
            q, k = [t * 0.5 for t in (q, k)]
            sim = q @ k.transpose(-1, -2)
            max_neg_value = -torch.finfo(sim.dtype).max
            sim.masked_fill_(~mask, max_neg_value)
            attn = F.softmax(sim, dim=-1)
            return attn @ v


    class HeadsAttn(nn.Module):
        def __init__(self, dim=8, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, dim * 3)

        def forward(self, x):
            b, n, c = x.shape
            q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            return (attn @ v).transpose(1, 2).reshape(b, n, c)


    class SeqAttend(nn.Module):
        def __init__(self, dim=8, heads=2, n=5):
            super().__init__()
            self.heads = heads
            self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
            self.attend = nn.Sequential(nn.Softmax(dim=-1), nn.Dropout(0.0))
            self.rel_pos_bias = nn.Embedding(n * n, heads)
            self.register_buffer('rel_pos_indices', torch.arange(n * n).view(n, n), persistent=False)

        def forward(self, x):
            q, k, v = self.to_qkv(x).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), (q, k, v))
            sim = torch.einsum('b h i d, b h j d -> b h i j', q, k)
            bias = self.rel_pos_bias(self.rel_pos_indices)
            sim = sim + rearrange(bias, 'i j h -> h i j')
            attn = self.attend(sim)
            return rearrange(torch.einsum('b h i j, b h j d -> b h i d', attn, v), 'b h n d -> b n (h d)')


    class LayerAttend(nn.Module):
        def __init__(self, dim=8, heads=2, n=5):
            super().__init__()
            self.heads = heads
            self.to_qk = nn.Linear(dim, dim * 2, bias=False)
            self.attend = nn.Softmax(dim=-1)
            self.rel_pos_bias = nn.Embedding(n * n, heads)
            self.register_buffer('rel_pos_indices', torch.arange(n * n).view(n, n), persistent=False)

        def forward(self, x):
            q, k = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), self.to_qk(x).chunk(2, dim=-1))
            bias = self.rel_pos_bias(self.rel_pos_indices)
            return self.attend(q @ k.transpose(-1, -2) + rearrange(bias, 'i j h -> h i j'))


    class SeqMasked(nn.Module):
        def __init__(self):
            super().__init__()
            self.attend = nn.Sequential(nn.Dropout(0.0), nn.Softmax(dim=-1))

        def forward(self, x, mask):
            return self.attend(x.masked_fill(mask, float('-inf')))


    class GivenPair(nn.Module):
        def forward(self, pair):
            a, b = pair
            return F.softmax(a + b, dim=-1)


    class GivenFill(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x, mask, fill):
            sim = self.fc(x)
            sim.masked_fill_(mask, fill)
            return F.softmax(sim, dim=-1)
""")


def _class_code(code: str, name: str) -> str:
    return code.split(f"class {name}")[1].split("\nclass ")[0]


def test_unpacked_names_and_finite_inplace_fills_give_native_softmax():
    code = convert_source(SOURCE).code
    for name, count in (("LinearAttn", 2), ("CrossAttn", 1), ("HeadsAttn", 1)):
        body = _class_code(code, name)
        assert body.count("ops.softmax(") == count and "mp_F.softmax" not in body, body
    for name in ("GivenPair", "GivenFill"):
        assert "mp_F.softmax(" in _class_code(code, name), code


def test_softmax_layers_on_unmasked_inputs_are_native():
    """``nn.Sequential(nn.Softmax(dim=-1), nn.Dropout(p))`` (the softmax gets the sequence's input) and an
    ``nn.Softmax`` layer whose input reads einops' ``rearrange`` of an Embedding's output are MindSpore's own
    ``nn.Softmax``; a softmax member after a dropout of a masked input keeps the runtime layer."""
    code = convert_source(SOURCE).code
    for name in ("SeqAttend", "LayerAttend"):
        body = _class_code(code, name)
        assert "nn.Softmax(axis=-1)" in body and "mp_nn.Softmax" not in body, body
    assert "mp_nn.Softmax(" in _class_code(code, "SeqMasked"), code


def test_native_softmax_matches_torch(tmp_path):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(21)
    x4 = rng.standard_normal((2, 8, 3, 3)).astype(np.float32)
    x3 = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = rng.random((2, 5, 5)) > 0.4
    mask[0, 2, :] = False  # a fully masked query: a finite fill leaves it finite (uniform weights)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "LinearAttn", [x4], tmp_path, f"lin_{mode}", mode,
                                    rtol=1e-4, atol=1e-6)
        assert_port_matches_in_mode(SOURCE, code, "CrossAttn", [x3, mask], tmp_path, f"cross_{mode}", mode,
                                    rtol=1e-4, atol=1e-6)
        assert_port_matches_in_mode(SOURCE, code, "HeadsAttn", [x3], tmp_path, f"heads_{mode}", mode,
                                    rtol=1e-4, atol=1e-6)
        assert_port_matches_in_mode(SOURCE, code, "SeqAttend", [x3], tmp_path, f"seq_{mode}", mode,
                                    rtol=1e-4, atol=1e-6)
        assert_port_matches_in_mode(SOURCE, code, "LayerAttend", [x3], tmp_path, f"layer_{mode}", mode,
                                    rtol=1e-4, atol=1e-6)


def test_runtime_softmax_kept_where_a_row_may_be_all_minus_inf(tmp_path):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(22)
    pair = rng.standard_normal((2, 4, 6)).astype(np.float32)
    pair[0, 1, :] = -np.inf  # a row of all -inf in one member of the pair
    assert_port_matches_in_mode(SOURCE, code, "GivenPair", [pair], tmp_path, "pair", "pynative")
    x = rng.standard_normal((3, 4, 8)).astype(np.float32)
    mask = np.zeros((3, 4, 8), bool)
    mask[1, 2, :] = True
    fill = np.array(-np.inf, np.float32)
    assert_port_matches_in_mode(SOURCE, code, "GivenFill", [x, mask, fill], tmp_path, "fill", "pynative")
    assert_port_matches_in_mode(SOURCE, code, "SeqMasked", [x, mask], tmp_path, "seq_masked", "pynative")
