"""Issue 30 (native ports), the math side:

- a ``keepdim=True`` mean whose value over an empty extent nothing reads (native_facts.absorbed_reduction): the
  channel LayerNorm's ``mean = x.mean(1, keepdim=True)`` then ``(x - mean) / ...`` and RMSNorm's
  ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`` are MindSpore's own ``ops.mean``: where the reduced
  extent is 0, ``x`` has no element and neither has the broadcast, so torch's NaN is never read;
- joins whose members are floating through their reaching bindings (native_facts.FlowFloats: PiT's
  ``cls_token, tokens = x[:, :1], x[:, 1:]`` each rebound through a layer) or a parameter given to a layer a
  module-level factory of the file builds (MobileViT's ``y = x.clone()`` then ``self.conv1(x)`` with
  ``self.conv1 = conv_nxn_bn(...)``) stay ``ops.cat`` (no ``mp_tensor.promoted``).

Every positive is run against torch (PyNative and GRAPH_MODE), empty extents included; the negatives keep the
runtime helper and still match torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

NORMS = HEAD + textwrap.dedent("""
    class ChanNorm(nn.Module):
        def __init__(self, dim=4, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.g = nn.Parameter(torch.ones(1, dim, 1, 1) * 1.5)
            self.b = nn.Parameter(torch.zeros(1, dim, 1, 1) + 0.25)

        def forward(self, x):
            var = torch.var(x, dim=1, unbiased=False, keepdim=True)
            mean = torch.mean(x, dim=1, keepdim=True)
            return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


    class ChanNorm1(ChanNorm):
        def __init__(self):
            super().__init__(1)


    class RMSNorm(nn.Module):
        def __init__(self, dim=5, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim) * 0.5)

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            return self._norm(x.float()).type_as(x) * self.weight


    class RMSNorm0(RMSNorm):
        def __init__(self):
            super().__init__(0)


    class Centered(nn.Module):
        def forward(self, x):
            m = x.mean(dim=(1, 2), keepdim=True)
            y = x * 2.0
            return torch.exp(-(x - m) ** 2) + y
""")

NEGATIVES = HEAD + textwrap.dedent("""
    class Neg(nn.Module):
        def forward(self, x, y):
            a = x.mean(1, keepdim=True)          # read alone
            m = y.mean(1, keepdim=True)          # absorbed by x, not by y
            c = x - m
            n = x.mean(-1)                       # no keepdim
            k = x.mean(1, keepdim=True)
            x = x[:, :1]                         # x rebound before the read
            d = x - k
            e = x.mean(1, keepdim=True)
            f = x - e
            return a, c, n, d, f, e              # e also returned
""")


def _lines(code):
    return {line.strip().split(" = ")[0]: line for line in code.splitlines() if " = " in line}


def test_absorbed_means_are_native():
    code = convert_source(NORMS).code
    assert "mean = ops.mean(x, axis=1, keep_dims=True)" in code, code
    assert "ops.mean(x.pow(2), axis=-1, keep_dims=True)" in code, code
    assert "m = ops.mean(x, axis=(1, 2), keep_dims=True)" in code, code
    assert "mp_math.mean" not in code, code


def test_unabsorbed_means_keep_the_runtime():
    lines = _lines(convert_source(NEGATIVES).code)
    for name in ("a", "m", "n", "k", "e"):
        assert "mp_math.mean(" in lines[name], lines[name]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls, shape", [("ChanNorm", (2, 4, 3, 3)), ("ChanNorm1", (2, 0, 3, 3)),
                                        ("RMSNorm", (2, 3, 5)), ("RMSNorm0", (2, 3, 0)),
                                        ("Centered", (2, 3, 4)), ("Centered", (2, 0, 4)), ("Centered", (0, 3, 4))])
def test_absorbed_means_match_torch(cls, shape, mode, tmp_path):
    code = convert_source(NORMS).code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(NORMS, code, cls, [x], tmp_path, f"norms_{cls}_{'_'.join(map(str, shape))}",
                                mode, rtol=1e-4, atol=1e-5)


def test_unabsorbed_means_match_torch(tmp_path):
    code = convert_source(NEGATIVES).code
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(NEGATIVES, code, "Neg", [x, y], tmp_path, "neg", "pynative", atol=1e-5)
    x0 = np.zeros((2, 0, 4), np.float32)  # empty extent: the runtime gives torch's NaN where it is read
    assert_port_matches_in_mode(NEGATIVES, code, "Neg", [x0, x0], tmp_path, "neg0", "pynative", atol=1e-5)


JOINS = HEAD + textwrap.dedent("""
    def conv_bn(inp, oup):
        return nn.Sequential(
            nn.Conv2d(inp, oup, 3, 1, 1, bias=False),
            nn.BatchNorm2d(oup),
            nn.SiLU()
        )


    class Pool(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.down = nn.Linear(dim, dim)
            self.cls_ff = nn.Linear(dim, dim)

        def forward(self, x):
            cls_token, tokens = x[:, :1], x[:, 1:]
            cls_token = self.cls_ff(cls_token)
            tokens = self.down(tokens)
            tokens = tokens * 2
            return torch.cat((cls_token, tokens), dim=1)


    class Fuse(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.conv1 = conv_bn(c, c)
            self.conv2 = conv_bn(2 * c, c)

        def forward(self, x):
            y = x.clone()
            x = self.conv1(x)
            x = torch.cat((x, y), 1)
            return self.conv2(x)
""")

JOIN_NEGATIVES = HEAD + textwrap.dedent("""
    def not_a_factory(inp, oup):
        layer = nn.Sequential(nn.Conv2d(inp, oup, 1))
        return layer


    class Half(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            a, b = x[:, :1], x[:, 1:]
            b = self.fc(b)
            return torch.cat((a, b), dim=1)       # a: x's dtype, whatever it is


    class Branch(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x, flag: bool = True):
            a = self.fc(x)
            if flag:
                a = x.sum(-1, keepdim=True).expand(-1, -1, x.shape[-1]).long()
            return torch.cat((a, self.fc(x)), dim=1)   # a: no straight-line binding


    class Fused(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.conv1 = not_a_factory(c, c)

        def forward(self, x):
            y = x.clone()
            x = self.conv1(x)
            return torch.cat((x, y), 1)
""")


def test_flow_joins_are_native():
    lines = _lines(convert_source(JOINS).code)
    code = convert_source(JOINS).code
    assert "return ops.cat((cls_token, tokens), axis=1)" in code, code
    assert "x = ops.cat((x, y), 1)" in code or "x = ops.cat((x, y), axis=1)" in code, lines
    assert "promoted" not in code, code


def test_joins_not_proven_keep_promoted():
    code = convert_source(JOIN_NEGATIVES).code
    assert code.count("mp_tensor.promoted(") == 3, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls, shape", [("Pool", (2, 5, 4)), ("Fuse", (2, 3, 6, 6))])
def test_flow_joins_match_torch(cls, shape, mode, tmp_path):
    code = convert_source(JOINS).code
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(JOINS, code, cls, [x], tmp_path, f"joins_{cls}", mode, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls, shape", [("Half", (2, 5, 4)), ("Branch", (2, 5, 4)), ("Fused", (2, 3, 6, 6))])
def test_unproven_joins_match_torch(cls, shape, tmp_path):
    code = convert_source(JOIN_NEGATIVES).code
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(JOIN_NEGATIVES, code, cls, [x], tmp_path, f"neg_{cls}", "pynative", atol=1e-5)


TOPK_AND_GUARDS = HEAD + textwrap.dedent("""
    class TopK(nn.Module):
        def forward(self, logits):
            v, _ = torch.topk(logits, 2)
            w = logits.topk(3, dim=0)[0]
            u, unused = logits.topk(2, largest=False)
            _, idx = torch.topk(logits, 1, dim=-1)      # indices read: torch's int64
            a, kept = torch.topk(logits, 2)             # both read
            return v, w, u, idx, a, kept


    class Stats(nn.Module):
        def forward(self, x):
            var = torch.var(x, dim=1, unbiased=False, keepdim=True)
            a = (var + 1e-5).sqrt()
            b = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
            c = torch.sqrt(x.std(dim=-1) * 2)
            return a, b, c


    class IntStats(nn.Module):
        def forward(self, n):
            s = n.sum(-1)
            return torch.sqrt(s + 1), torch.sqrt(n * 2), torch.exp(-n)
""")


def test_values_only_topk_and_non_integer_guards_are_native():
    lines = _lines(convert_source(TOPK_AND_GUARDS).code)
    assert lines["v, _"].strip() == "v, _ = ops.topk(logits, 2)", lines["v, _"]
    assert "ops.topk(logits, k=3, dim=0)[0]" in lines["w"], lines["w"]
    assert "ops.topk(logits, k=2, largest=False)" in lines["u, unused"], lines["u, unused"]
    for name in ("_, idx", "a, kept"):
        assert "mp_math.topk(" in lines[name], lines[name]
    assert "ops.sqrt(" in lines["a"] and "ops.rsqrt(" in lines["b"] and "ops.sqrt(" in lines["c"], lines
    code = convert_source(TOPK_AND_GUARDS).code
    assert code.count("mp_math.sqrt(") == 2 and "mp_math.exp(" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_values_only_topk_and_guards_match_torch(mode, tmp_path):
    code = convert_source(TOPK_AND_GUARDS).code
    x = np.random.default_rng(4).standard_normal((4, 6)).astype(np.float32)
    assert_port_matches_in_mode(TOPK_AND_GUARDS, code, "TopK", [x], tmp_path, "topk", mode)
    assert_port_matches_in_mode(TOPK_AND_GUARDS, code, "Stats", [x], tmp_path, "stats", mode, rtol=1e-4, atol=1e-5)


def test_integer_guards_still_match_torch(tmp_path):
    code = convert_source(TOPK_AND_GUARDS).code
    n = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert_port_matches_in_mode(TOPK_AND_GUARDS, code, "IntStats", [n], tmp_path, "ints", "pynative", rtol=1e-5,
                                atol=1e-5)


def test_topk_indices_stay_int64_like_torch(tmp_path):
    import mindspore as ms

    from tests.converter.port_check import load_module

    module = load_module(convert_source(TOPK_AND_GUARDS).code, tmp_path / "m_topk_dtype.py", "m_topk_dtype")
    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    out = module.TopK()(ms.Tensor(x))
    assert out[3].dtype == ms.int64 and out[5].dtype == ms.int64


SOFTMAX = HEAD + "from einops import rearrange\n" + textwrap.dedent("""
    class Attn(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.q = nn.Conv2d(c, c, 1)
            self.k = nn.Conv2d(c, c, 1)

        def forward(self, x):
            q = rearrange(self.q(x), 'b c h w -> b (h w) c')
            k = rearrange(self.k(x), 'b c h w -> b c (h w)')
            w_ = torch.einsum('bij,bjk->bik', q, k) * (int(x.shape[1]) ** (-0.5))
            w_ = torch.nn.functional.softmax(w_, dim=2)
            w_ = rearrange(w_, 'b i j -> b j i')
            return F.softmax(w_, dim=-1)


    class Masked(nn.Module):
        def forward(self, x, keep):
            s = rearrange(x.masked_fill(~keep, float('-inf')), 'b i j -> b j i')
            return F.softmax(s, dim=-1)
""")


def test_softmax_of_rearranged_values_is_native_and_matches_torch(tmp_path):
    pytest.importorskip("einops")
    code = convert_source(SOFTMAX).code
    attn = code.split("class Attn")[1].split("class Masked")[0]
    assert attn.count("ops.softmax(") == 2 and "mp_F.softmax" not in attn, attn
    assert "mp_F.softmax(" in code.split("class Masked")[1], code
    x = np.random.default_rng(6).standard_normal((2, 4, 3, 3)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOFTMAX, code, "Attn", [x], tmp_path, f"attn_{mode}", mode, rtol=1e-4, atol=1e-6)
    s = np.random.default_rng(7).standard_normal((2, 3, 3)).astype(np.float32)
    keep = np.ones((2, 3, 3), bool)
    keep[0, :, 1] = False  # a column masked: after the rearrange, a row of all -inf
    assert_port_matches_in_mode(SOFTMAX, code, "Masked", [s, keep], tmp_path, "masked", "pynative")


EINSUM_F = HEAD + textwrap.dedent("""
    class Heads(nn.Module):
        def forward(self, q, k, v):
            sim = torch.einsum(f'b h i d, b h j d -> b h i j', q, k) * 0.5
            attn = sim.softmax(dim=-1)
            return torch.einsum(f"b h i j, b h j d -> b h i d", attn, v)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einsum_of_an_f_string_without_fields_is_native(mode, tmp_path):
    code = convert_source(EINSUM_F).code
    assert "mp_math.einsum" not in code and code.count("ops.matmul(") == 2, code
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)).astype(np.float32) for _ in range(3))
    assert_port_matches_in_mode(EINSUM_F, code, "Heads", [q, k, v], tmp_path, f"einsum_f_{mode}", mode, atol=1e-5)


CALLERS = HEAD + textwrap.dedent("""
    class Block(nn.Module):
        def __init__(self, c):
            super(Block, self).__init__()
            layers = [nn.Conv2d(c, c, 3, 1, 1), nn.GroupNorm(1, c), nn.ReLU()]
            self.model = nn.Sequential(*layers)

        def forward(self, x):
            return self.model(x)


    class Up(nn.Module):
        def __init__(self, c):
            super(Up, self).__init__()
            self.model = nn.Sequential(nn.Conv2d(2 * c, c, 1), nn.ReLU())

        def forward(self, x, skip):
            x = torch.cat((x, skip), 1)
            x = self.model(x)
            return x


    class Net(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.inc = Block(c)
            self.down = Block(c)
            self.up = Up(c)
            self.out = nn.Conv2d(2 * c, c, 1)

        def forward(self, x):
            x = self.inc(x)
            d = self.down(x)
            u = self.up(d, x)
            return self.out(torch.cat((u, x), 1))
""")

CALLER_NEGATIVES = HEAD + textwrap.dedent("""
    class Up(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.conv = nn.Conv2d(2 * c, c, 1)

        def forward(self, x, skip):
            return self.conv(torch.cat((x, skip), 1).float())


    class Up2(Up):
        pass


    class Net(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.inc = nn.Conv2d(c, c, 1)
            self.up = Up(c)

        def forward(self, x, ids):
            return self.up(self.inc(x), ids)      # ids: any dtype


    class Other(nn.Module):
        def forward(self, a, b):
            return torch.cat((a, b), 1)


    class User(nn.Module):
        def __init__(self):
            super().__init__()
            self.inc = nn.Conv2d(3, 3, 1)
            self.o = Other()

        def forward(self, x):
            y = self.inc(x)
            return self.o(y, b=y.long())           # by keyword, an integer
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_joins_of_parameters_every_caller_gives_floats(mode, tmp_path):
    code = convert_source(CALLERS).code
    assert "promoted" not in code, code
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(CALLERS, code, "Net", [x], tmp_path, f"callers_{mode}", mode, rtol=1e-4, atol=1e-5)


def test_joins_of_parameters_some_caller_may_not_give_floats(tmp_path):
    code = convert_source(CALLER_NEGATIVES).code
    assert code.count("mp_tensor.promoted(") == 2, code
    x = np.random.default_rng(10).standard_normal((2, 3, 4, 4)).astype(np.float32)
    ids = np.arange(96, dtype=np.int64).reshape(2, 3, 4, 4)
    assert_port_matches_in_mode(CALLER_NEGATIVES, code, "Net", [x, ids], tmp_path, "callers_neg", "pynative",
                                rtol=1e-4, atol=1e-4)


PIECES = HEAD + textwrap.dedent("""
    class Split(nn.Module):
        def forward(self, x):
            c = x.size(1) // 2
            return x[:, :c, :, :], x[:, c:, :, :]


    class TwoRoots(nn.Module):
        def forward(self, x, y):
            return x[:, :1], y[:, 1:]


    class Block(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.split = Split()
            self.conv1 = nn.Conv2d(c // 2, c // 2, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c // 2)

        def forward(self, x):
            x1, x2 = self.split(x)
            out = F.relu(self.bn1(self.conv1(x2)))
            return torch.cat([x1, out], 1)


    class NoLayer(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.split = Split()
            self.conv1 = nn.Conv2d(c // 2, c // 2, 1)

        def forward(self, x):
            x1, x2 = self.split(x)
            return torch.cat([x1, self.conv1(x1 * 1.0)], 1)   # x1 goes through a product first: unknown


    class Roots(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.split = TwoRoots()
            self.conv1 = nn.Conv2d(c - 1, c - 1, 1)

        def forward(self, x):
            a, b = self.split(x, x.long())
            return torch.cat([a, self.conv1(b.float())], 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_pieces_of_one_tensor_given_to_a_layer_are_floating(mode, tmp_path):
    code = convert_source(PIECES).code
    block = code.split("class Block")[1].split("class NoLayer")[0]
    assert "ops.cat([x1, out], axis=1)" in block and "promoted" not in block, block
    x = np.random.default_rng(11).standard_normal((2, 4, 3, 3)).astype(np.float32)
    assert_port_matches_in_mode(PIECES, code, "Block", [x], tmp_path, f"pieces_{mode}", mode, rtol=1e-4, atol=1e-5)


def test_pieces_not_proven_keep_promoted(tmp_path):
    code = convert_source(PIECES).code
    assert "mp_tensor.promoted" in code.split("class NoLayer")[1].split("class Roots")[0], code
    assert "mp_tensor.promoted" in code.split("class Roots")[1], code
    x = np.random.default_rng(12).standard_normal((2, 4, 3, 3)).astype(np.float32)
    assert_port_matches_in_mode(PIECES, code, "Roots", [x], tmp_path, "roots", "pynative", rtol=1e-4, atol=1e-5)
    assert_port_matches_in_mode(PIECES, code, "NoLayer", [x], tmp_path, "nolayer", "pynative", rtol=1e-4,
                                atol=1e-5)
