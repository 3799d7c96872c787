"""Issue 30 vs issue 26: joins whose members are floating point by construction stay MindSpore's own join (no
``mp_tensor.promoted``). Each static fact of native_facts.FloatFacts / OwnOutputs added for it is checked here on a
model converted and run against torch (weights moved, PyNative and GRAPH_MODE), and the cases where a member may
be an integer in torch keep the helper (and still match torch on integer inputs)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
MODES = ("pynative", "graph")


def _convert(source: str) -> str:
    result = convert_source(source)
    return result.code


def _x(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


# A ViT: a Parameter made of torch.zeros, expanded and indexed; the output of a class of the file whose forward
# returns a convolution's output (PatchEmbed); blocks of a ModuleList of the file's own residual blocks (they keep
# floats); a head that is a Linear or an Identity.
VIT = HEAD + textwrap.dedent("""
    class PatchEmbed(nn.Module):
        def __init__(self, c, d):
            super().__init__()
            self.proj = nn.Conv2d(c, d, 2, 2)

        def forward(self, x):
            return self.proj(x).flatten(2).transpose(1, 2)


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.act = nn.GELU()

        def forward(self, x):
            return x + self.act(self.norm(x))


    class Net(nn.Module):
        def __init__(self, c=3, d=8, depth=2):
            super().__init__()
            self.patch_embed = PatchEmbed(c, d)
            self.cls_token = nn.Parameter(torch.randn(1, 1, d))
            self.pos = nn.Parameter(torch.zeros(1, 5, d))
            self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
            self.head = nn.Linear(d, 3) if depth else nn.Identity()

        def forward(self, img):
            x = self.patch_embed(img)
            cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
            x = torch.cat((cls_tokens, x), dim=1)
            x = x + self.pos
            for blk in self.blocks:
                x = blk(x)
            y = torch.cat([x[:, :1] * 2, self.pos[:, 1:].repeat(x.shape[0], 1, 1)], dim=1)
            z = torch.cat([self.head(x), self.head(y)], dim=-1)
            return z
""")


@pytest.mark.parametrize("mode", MODES)
def test_parameter_own_class_outputs_and_loop_blocks_are_floating(mode, tmp_path):
    code = _convert(VIT)
    assert "promoted" not in code, code
    assert_port_matches_in_mode(VIT, code, "Net", [_x(2, 3, 4, 4)], tmp_path, "vit", mode, atol=1e-5)


# einops: repeat of a Parameter, and an nn.Sequential that starts with Rearrange (no weights) and ends in a Linear.
EINOPS = HEAD + textwrap.dedent("""
    from einops import repeat
    from einops.layers.torch import Rearrange


    class Net(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.to_patch = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=2, p2=2),
                                          nn.LayerNorm(12), nn.Linear(12, d), nn.Dropout(0.0))
            self.cls_token = nn.Parameter(torch.randn(1, 1, d))

        def forward(self, img):
            x = self.to_patch(img)
            t = repeat(self.cls_token, '() n d -> b n d', b=img.shape[0])
            return torch.cat((t, x), dim=1)
""")


@pytest.mark.parametrize("mode", MODES)
def test_einops_repeat_and_a_sequential_ending_in_a_float_layer_are_floating(mode, tmp_path):
    code = _convert(EINOPS)
    assert "promoted" not in code, code
    assert_port_matches_in_mode(EINOPS, code, "Net", [_x(2, 3, 4, 4)], tmp_path, "einops", mode, atol=1e-5)


# A forward parameter given to a layer of floating weights before any rebinding (torch refuses an integer there),
# rebound later only to floats; a skip made of convolutions (U-Net).
PARAM = HEAD + textwrap.dedent("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.ReLU())
            self.up = nn.Conv2d(6, 3, 1)

        def forward(self, x):
            skip = self.down(x)
            x = torch.cat([x, skip], 1)
            x = self.up(x)
            return torch.cat([x, skip, x * 0.5], 1)
""")


@pytest.mark.parametrize("mode", MODES)
def test_parameter_given_to_a_float_layer_is_floating(mode, tmp_path):
    code = _convert(PARAM)
    assert "promoted" not in code, code
    assert_port_matches_in_mode(PARAM, code, "Net", [_x(2, 3, 4, 4)], tmp_path, "param", mode, atol=1e-5)


# Where torch may see an integer member, the helper stays: the input of an Embedding (its output is float, not its
# input), a parameter read before the layer that rebinds it in a loop, an attribute also assigned None.
INTEGER = HEAD + textwrap.dedent("""
    class Net(nn.Module):
        def __init__(self, d=4):
            super().__init__()
            self.emb = nn.Embedding(10, d)
            self.fc = nn.Linear(d, d)
            self.proj = None
            self.proj = nn.Linear(d, 1)

        def forward(self, idx):
            e = self.emb(idx)
            a = torch.cat([e, idx.unsqueeze(-1)], -1)
            b = torch.cat([self.proj(e), idx.unsqueeze(-1)], -1)
            return a, b
""")


def test_integer_members_keep_the_helper_and_match_torch(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(INTEGER)
    assert code.count("mp_tensor.promoted") == 2, code
    torch.manual_seed(0)
    torch_net = load_module(INTEGER, tmp_path / "t_int.py", "t_int").Net().eval()
    ms_net = load_module(code, tmp_path / "m_int.py", "m_int").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    idx = np.array([[1, 2, 3], [4, 5, 9]], dtype=np.int64)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(idx))
    got = ms_net(ms.Tensor(idx))
    for g, w in zip(got, want):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", "")
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_facts_that_do_not_hold_for_every_input_keep_the_helper():
    """A parameter given to an Embedding, or read by a layer only after a rebinding (in a loop), says nothing of
    its own dtype; a class of the file whose forward returns its input unchanged keeps the input's dtype only."""
    code = _convert(HEAD + textwrap.dedent("""
        class Same(nn.Module):
            def forward(self, x):
                return x


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.fc = nn.Linear(4, 4)
                self.same = Same()

            def forward(self, idx, h, k, m):
                a = torch.cat([self.emb(idx), idx], -1)
                for _ in range(2):
                    h = self.fc(h)
                b = torch.cat([self.fc(k), self.same(m)], -1)
                c = torch.cat([self.fc(k), self.same(k)], -1)  # k given to the Linear: floating
                return a, b, c, torch.cat([h, k], -1)
    """))
    assert code.count("mp_tensor.promoted") == 3, code
    assert "ops.cat([self.fc(k), self.same(k)], axis=-1)" in code, code


# Lists: a U-Net's skips appended from convolutions and popped, a DenseNet-like list of features joined whole.
LISTS = HEAD + textwrap.dedent("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.downs = nn.ModuleList([nn.Conv2d(3, 3, 3, padding=1) for _ in range(2)])
            self.ups = nn.ModuleList([nn.Conv2d(6, 3, 3, padding=1) for _ in range(2)])
            self.inc = nn.Conv2d(3, 3, 1)

        def forward(self, x):
            x = self.inc(x)
            skips = []
            feats = [x]
            for down in self.downs:
                x = down(x)
                skips.append(x)
                feats.append(torch.relu(x))
            for up in self.ups:
                x = torch.cat([x, skips.pop()], 1)
                x = up(x)
            return torch.cat(feats, 1), torch.cat([x, feats[-1]], 1)
""")


@pytest.mark.parametrize("mode", MODES)
def test_lists_of_floats_joined_or_popped_are_floating(mode, tmp_path):
    code = _convert(LISTS)
    assert "promoted" not in code, code
    assert_port_matches_in_mode(LISTS, code, "Net", [_x(2, 3, 4, 4)], tmp_path, "lists", mode, atol=1e-5)


def test_lists_that_may_gain_an_integer_keep_the_helper():
    """A list given an integer (an argument appended), or handed to a function (which may append anything)."""
    code = _convert(HEAD + textwrap.dedent("""
        def g(xs):
            xs.append(torch.arange(3))


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inc = nn.Conv2d(3, 3, 1)

            def forward(self, x, idx):
                feats = [self.inc(x)]
                feats.append(idx)
                other = [self.inc(x)]
                g(other)
                return torch.cat(feats, 1), torch.cat(other, 1), torch.cat([other[0], x], 1)
    """))
    assert code.count("mp_tensor.promoted") == 3, code


# Tuple unpacking: ``a, b = u, v`` binds each name to its value; ``x1, x2 = x.chunk(2, -1)`` cuts one tensor, so
# its pieces (and their negations) have x's dtype, whatever it is (an integer input too); ``x.mean(...)`` has a
# float x's dtype (torch refuses an integer x).
UNPACK = HEAD + textwrap.dedent("""
    def rotate_half(x):
        x = x * 1
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)


    def with_mean(x):
        return torch.cat([x.mean(dim=-1, keepdim=True), x.amax(dim=-1, keepdim=True), x], dim=-1)


    def rebound(x):
        x1, x2 = x.chunk(2, dim=-1)
        x = x.long()
        return torch.cat((x1, x), dim=-1)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            x = self.fc(x)
            cls_token, tokens = x[:, :1], x[:, 1:]
            cls_token = self.fc(cls_token)
            return torch.cat((cls_token, tokens), dim=1), rotate_half(x)
""")


@pytest.mark.parametrize("mode", MODES)
def test_unpacked_names_and_pieces_of_one_tensor(mode, tmp_path):
    import mindspore as ms
    import torch

    code = _convert(UNPACK)
    assert code.count("mp_tensor.promoted") == 1 and "ops.cat(mp_tensor.promoted((x1, x)), axis=-1)" in code, code
    assert_port_matches_in_mode(UNPACK, code, "Net", [_x(2, 3, 4)], tmp_path, "unpack", mode, atol=1e-5)
    t_ns = load_module(UNPACK, tmp_path / f"t_unpack_fn_{mode}.py", f"t_unpack_fn_{mode}")
    m_ns = load_module(code, tmp_path / f"m_unpack_fn_{mode}.py", f"m_unpack_fn_{mode}")
    for values in (np.arange(12, dtype=np.int64).reshape(3, 4), _x(3, 4).astype(np.float64)):
        for name in ("rotate_half", "rebound") + (("with_mean",) if values.dtype.kind == "f" else ()):
            want = getattr(t_ns, name)(torch.from_numpy(values))
            fn = getattr(m_ns, name)
            ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
            try:
                got = (ms.jit(fn) if mode == "graph" else fn)(ms.Tensor(values))
            finally:
                ms.set_context(mode=ms.PYNATIVE_MODE)
            assert str(got.dtype).lower() == str(want.dtype).replace("torch.", ""), (name, values.dtype)
            np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-6)
