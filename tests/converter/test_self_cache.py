"""The cache-on-self family (learning3d's PCN, LIIF, C-SWM, the neural Hawkes CTLSTMs): a model method writes
``self.x = v`` and another method reads it. MindSpore 2.10's GRAPH_MODE compiles a write and a read in one method,
but a write is not seen by another method ("ClassMember ... has no attribute", or the value ``__init__`` set).
SelfCacheTransform returns the value from the helper that writes it and passes it to the helper that reads it; what
it cannot thread keeps its PyNative meaning and is said (MP107). Expected values come from torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import assert_port_matches_in_mode, load_module

SHAPES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Shapes(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.gate = 1.0

        def encode(self, x):
            \"\"\"Written in a helper, read in forward and in a second helper.\"\"\"
            self.feature = self.fc(x) * self.scale

        def decode(self):
            self.coarse = self.feature.relu() + 1
            return self.coarse * 2

        def _inner(self, x):
            self.deep = x.sum(-1, keepdim=True)

        def _outer(self, x):
            self._inner(x)
            return x + self.deep

        def _maybe(self, x):
            if x.shape[0] > 1:
                self.gate = 3.0
            return x

        def forward(self, x):
            self.scale = x.shape[1]
            self.encode(x)
            y = self.decode()
            z = self._outer(x)
            x = self._maybe(x)
            return y + self.coarse + self.feature + z + self.deep * self.gate + x


    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, a, h, c):
            z = self.fc(torch.cat([a, h], -1))
            return z[:, :4] + c, z[:, 4:]

        def decay(self, c, z):
            return c * 0.5, torch.tanh(z)


    class SameMethod(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = Step()

        def forward(self, x):
            self.h = torch.zeros(x.shape[0], 4)
            self.c = torch.zeros(x.shape[0], 4)
            hs = []
            for i in range(3):
                c, z = self.cell(x, self.h, self.c)
                self.c, self.h = self.cell.decay(c, z)
                hs.append(self.h)
            return torch.stack(hs)
""")

CACHE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Cache(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.edges = None
            self.batch = 0

        def _edges(self, batch):
            if self.edges is None or self.batch != batch:
                self.batch = batch
                self.edges = torch.arange(batch).float() + 1
            return self.edges

        def forward(self, x):
            e = self._edges(x.shape[0])
            return self.fc(x) * e[:, None]


    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, x):
            self.steps = self.steps + 1
            return x * self.steps


    class Exposed(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            self.last = self.fc(x)
            return self.last * 2


    def probe(model, x):
        model(x)
        return model.last
""")


def _x(shape=(2, 4), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_helpers_return_and_take_the_cached_values():
    code = convert_source(SHAPES).code
    assert "def _mp_encode(self, x, _mp_scale=None):" in code  # public: threaded as a twin
    assert "_mp_feature = self._mp_encode(x, _mp_scale=_mp_scale)\n        self.feature = _mp_feature" in code
    assert "def _mp_decode(self, _mp_feature=None):" in code
    assert "return _mp_coarse * 2, _mp_coarse" in code
    assert "def encode(self, x):\n        self._mp_encode(x)\n" in code  # torch's name, signature and return
    assert "def decode(self):\n        return self._mp_decode()[0]\n" in code
    assert "\n        self._inner(x)\n" not in code and "_mp_deep = self._inner(x)" in code
    assert "def _maybe(self, x, _mp_gate=None):" in code  # a write under if: the old value comes in
    assert "_mp_c, _mp_h = self.cell.decay(c, z)\n            self.c = _mp_c\n            self.h = _mp_h" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_written_in_one_method_read_in_another_matches(tmp_path, mode):
    code = convert_source(SHAPES).code
    assert_port_matches_in_mode(SHAPES, code, "Shapes", [_x()], tmp_path, "self_cache", mode, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_state_written_and_read_in_one_method_loop_is_read_as_a_local(tmp_path, mode):
    code = convert_source(SHAPES).code
    assert_port_matches_in_mode(SHAPES, code, "SameMethod", [_x()], tmp_path, "self_cache_s", mode, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_cache_kept_across_calls_matches_and_is_said(tmp_path, mode):
    result = convert_source(CACHE)
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert any("self.edges before writing it" in d.message for d in said)
    assert_port_matches_in_mode(CACHE, result.code, "Cache", [_x()], tmp_path, "self_cache_c", mode, atol=1e-5)


def test_state_across_calls_keeps_pynative_meaning_and_is_said(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(CACHE)
    assert any(d.code == "MP107" and "construct reads self.steps before writing it" in d.message
               for d in result.diagnostics)
    assert "# mindport: MP107 construct reads self.steps" in result.code
    torch_net = load_module(CACHE, tmp_path / "t_counter.py", "t_counter").Counter()
    ms_net = load_module(result.code, tmp_path / "m_counter.py", "m_counter").Counter()
    x = _x()
    for _ in range(3):
        want = torch_net(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-6)


def test_an_attribute_read_outside_the_cell_is_said_and_kept_in_pynative(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(CACHE)
    assert any(d.code == "MP107" and "self.last is read by code outside the class" in d.message
               for d in result.diagnostics)
    t_mod = load_module(CACHE, tmp_path / "t_exposed.py", "t_exposed")
    m_mod = load_module(result.code, tmp_path / "m_exposed.py", "m_exposed")
    torch.manual_seed(0)
    torch_net, ms_net = t_mod.Exposed().eval(), m_mod.Exposed()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = _x()
    with torch.no_grad():
        want = t_mod.probe(torch_net, torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_mod.probe(ms_net, ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


NEGATIVES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Same(nn.Module):
        def forward(self, x):
            self.last = x * 2
            return self.last + 1


    class Called(nn.Module):
        def gen(self, x):
            self.feat = x * 2

        def query(self):
            return self.feat + 1

        def forward(self, x):
            self.gen(x)
            return self.query() * 2


    class Stored(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.zeros(4))

        def _add(self, x):
            self.total = self.total + x.sum(0)

        def forward(self, x):
            self._add(x)
            return x + self.total


    class Behind(nn.Module):
        def bump(self):
            self.k = self.k * 2

        def forward(self, x):
            self.k = 2.0
            self.bump()
            return x * self.k


    class Kept(nn.Module):
        def forward(self, x):
            self.attn = x.softmax(-1)
            return x * 2


    def use(model, x):
        model.gen(x)
        model.bump()
        return model.query()
""")


def test_left_alone_a_helper_called_from_outside_buffers_and_writes_behind_a_local(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(NEGATIVES)
    code = result.code
    assert "_mp_last = x * 2\n        self.last = _mp_last\n        return _mp_last + 1" in code
    assert "return x * self.k" in code  # bump (not threaded) writes self.k: no local copy
    assert "self.attn = ops.softmax(x, -1)" in code or "_mp_attn" not in code  # never read: as it was
    assert "def gen(self, x):" in code and "def query(self):" in code  # called outside the class: not threaded
    assert "def _add(self, x):" in code  # a buffer: a graph writes it back
    said = {d.message for d in result.diagnostics if d.code == "MP107"}
    assert any("query reads self.feat, which another method writes" in m for m in said)
    assert not any("total" in m or "last" in m for m in said)
    t_net = load_module(NEGATIVES, tmp_path / "t_behind.py", "t_behind").Behind()
    m_net = load_module(code, tmp_path / "m_behind.py", "m_behind").Behind()
    x = _x()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), t_net(torch.from_numpy(x)).numpy(), rtol=1e-6)


def test_a_helper_another_class_overrides_is_not_threaded():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class A(nn.Module):
            def encode(self, x):
                self.f = x * 2

            def forward(self, x):
                self.encode(x)
                return self.f + 1


        class B(A):
            def encode(self, x):
                self.f = x * 3
    """)
    result = convert_source(source)
    assert "def encode(self, x):\n        self.f = x * 2" in result.code and "self.encode(x)\n" in result.code
    assert any(d.code == "MP107" and "construct reads self.f, which another method writes" in d.message
               for d in result.diagnostics)


def test_public_helpers_keep_their_return_for_callers_outside_the_class(tmp_path):
    """A training script calling ``model.encode(x)`` / ``model.decode()`` gets what torch's methods give (None, and
    one tensor), not the threaded tuple; the attributes they write are torch's too."""
    import mindspore as ms
    import torch

    code = convert_source(SHAPES).code
    torch.manual_seed(0)
    torch_net = load_module(SHAPES, tmp_path / "t_public.py", "t_public").Shapes().eval()
    ms_net = load_module(code, tmp_path / "m_public.py", "m_public").Shapes()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = _x()
    with torch.no_grad():
        torch_net(torch.from_numpy(x))
        torch_net.scale = 2
        want_encode = torch_net.encode(torch.from_numpy(x))
        want_decode = torch_net.decode().numpy()
        want_feature = torch_net.feature.numpy()
    ms_net(ms.Tensor(x))
    ms_net.scale = 2
    assert want_encode is None and ms_net.encode(ms.Tensor(x)) is None
    got = ms_net.decode()
    assert not isinstance(got, tuple)
    np.testing.assert_allclose(got.asnumpy(), want_decode, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ms_net.feature.asnumpy(), want_feature, rtol=1e-5, atol=1e-6)


LAZY_PROPERTY = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def precompute(dim, end, theta):
        freqs = 1.0 / theta ** (torch.arange(0, dim, 2).float() / dim)
        t = torch.arange(end).float()
        return torch.outer(t, freqs)


    class Rope(nn.Module):
        \"\"\"Mistral's freqs_cis: a property that builds its cache on first read, indexed by positions.\"\"\"

        def __init__(self, dim=4, theta=None):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.dim = dim
            self.theta = theta
            self._freqs: torch.Tensor = None
            self._scale = None

        @property
        def freqs(self):
            if self._freqs is None:
                theta = self.theta or 10000.0
                self._freqs = precompute(self.dim * 2, 16, theta)
            if self._freqs.dtype != torch.float32:
                self._freqs = self._freqs.float()
            return self._freqs

        @property
        def scale(self):
            if self._scale is None:
                self._scale = torch.ones(self.dim) * 0.5
            return self._scale

        def forward(self, x, positions):
            f = self.freqs[positions]
            return self.fc(x) * f.cos() + f.sin() * self.scale + self.freqs.sum()
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_property_building_its_cache_on_first_read_matches(tmp_path, mode):
    code = convert_source(LAZY_PROPERTY).code
    assert "_mp__freqs = self._freqs\n        if _mp__freqs is None:" in code
    assert "mp_framework.keep_cache(self, '_freqs', _mp__freqs)" in code and "return _mp__freqs" in code
    positions = np.array([0, 3, 5], np.int64)
    assert_port_matches_in_mode(LAZY_PROPERTY, code, "Rope", [_x((3, 4)), positions], tmp_path, "self_cache_lp",
                                mode, atol=1e-5)


def test_a_property_cache_is_kept_in_pynative(tmp_path):
    import mindspore as ms

    code = convert_source(LAZY_PROPERTY).code
    net = getattr(load_module(code, tmp_path / "m_keep.py", "m_keep"), "Rope")()
    first = net.freqs
    assert net._freqs is first and net.freqs is first  # built once, then read from self
    assert isinstance(net.scale, ms.Tensor) and net._scale is net.scale


LAZY_FORWARD = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class LitCaches(nn.Module):
        \"\"\"lit-llama's forward: rope and mask caches built on the first call, sliced to the sequence length.\"\"\"

        def __init__(self, dim=8, block=16):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)
            self.dim, self.block = dim, block
            self.rope_cache = None
            self.mask_cache = None

        def build_rope_cache(self):
            theta = 1.0 / (10000 ** (torch.arange(0, self.dim, 2).float() / self.dim))
            idx = torch.outer(torch.arange(self.block).float(), theta)
            return torch.stack([torch.cos(idx), torch.sin(idx)], dim=-1)

        def reset_cache(self):
            self.rope_cache = None
            self.mask_cache = None

        def forward(self, x):
            B, T, C = x.shape
            if self.rope_cache is None:
                self.rope_cache = self.build_rope_cache()
            if self.mask_cache is None:
                ones = torch.ones((self.block, self.block), dtype=torch.bool)
                self.mask_cache = torch.tril(ones).unsqueeze(0).unsqueeze(0)
            rope = self.rope_cache[:T]
            mask = self.mask_cache[:, :, :T, :T]
            q, k, v = self.qkv(x).split(self.dim, dim=2)
            q = q.reshape(B, 1, T, C)
            k = k.reshape(B, 1, T, C)
            v = v.reshape(B, 1, T, C)
            xs = q.float().reshape(*q.shape[:-1], -1, 2)
            q = torch.stack([xs[..., 0] * rope[..., 0] - xs[..., 1] * rope[..., 1],
                             xs[..., 1] * rope[..., 0] + xs[..., 0] * rope[..., 1]], -1).flatten(3)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0)
            return y.reshape(B, T, C)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_forward_building_its_caches_on_first_use_matches(tmp_path, mode):
    result = convert_source(LAZY_FORWARD)
    code = result.code
    assert "_mp_rope_cache = self.rope_cache" in code
    assert "mp_framework.keep_cache(self, 'mask_cache', _mp_mask_cache)" in code
    assert any("self.rope_cache before writing it" in d.message for d in result.diagnostics if d.code == "MP107")
    assert_port_matches_in_mode(LAZY_FORWARD, code, "LitCaches", [_x((2, 6, 8))], tmp_path, "self_cache_lf", mode,
                                atol=1e-5)


def test_a_forward_cache_is_kept_in_pynative(tmp_path):
    import mindspore as ms

    code = convert_source(LAZY_FORWARD).code
    net = getattr(load_module(code, tmp_path / "m_keepf.py", "m_keepf"), "LitCaches")()
    net(ms.Tensor(_x((2, 6, 8))))
    assert net.rope_cache is not None and tuple(net.mask_cache.shape) == (1, 1, 16, 16)
    net.reset_cache()
    assert net.rope_cache is None


BUFFER_CACHE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class PalmCaches(nn.Module):
        \"\"\"PaLM's get_mask / get_rotary_embedding: a buffer re-registered when missing or too short.\"\"\"

        def __init__(self, dim=4):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.register_buffer("mask", None, persistent=False)
            self.register_buffer("pos_emb", None, persistent=False)

        def get_mask(self, n):
            if self.mask is not None and self.mask.shape[-1] >= n:
                return self.mask[:n, :n]
            mask = torch.ones((n, n), dtype=torch.bool).triu(1)
            self.register_buffer("mask", mask, persistent=False)
            return mask

        def get_rotary_embedding(self, n):
            if self.pos_emb is not None and self.pos_emb.shape[-2] >= n:
                return self.pos_emb[:n]
            pos_emb = torch.arange(n).float()[:, None] * torch.ones(4)
            self.register_buffer("pos_emb", pos_emb, persistent=False)
            return pos_emb

        def forward(self, x):
            n = x.shape[1]
            h = self.fc(x) * self.get_rotary_embedding(n).cos()
            return (h @ h.transpose(-1, -2)).masked_fill(self.get_mask(n), 0.0)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_buffer_cache_registered_in_forward_matches(tmp_path, mode):
    code = convert_source(BUFFER_CACHE).code
    assert 'mp_framework.keep_buffer(self, "mask", mask, persistent=False)' in code
    assert_port_matches_in_mode(BUFFER_CACHE, code, "PalmCaches", [_x((2, 5, 4))], tmp_path, "self_cache_bc", mode,
                                atol=1e-5)


def test_a_buffer_cache_is_registered_in_pynative(tmp_path):
    import mindspore as ms

    code = convert_source(BUFFER_CACHE).code
    net = getattr(load_module(code, tmp_path / "m_keepb.py", "m_keepb"), "PalmCaches")()
    net(ms.Tensor(_x((2, 5, 4))))
    assert tuple(net.mask.shape) == (5, 5) and tuple(net.pos_emb.shape) == (5, 4)


GRID_CACHE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class GridHead(nn.Module):
        \"\"\"YOLOv3's YOLOLayer: a grid rebuilt when the feature map's size changes, inside the inference branch.\"\"\"

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 1)
            self.grid = torch.zeros(1)

        @staticmethod
        def _make_grid(nx, ny):
            yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
            return torch.stack((xv, yv), 2).view((1, ny, nx, 2)).float()

        def forward(self, x, img_size=20):
            stride = img_size // x.shape[2]
            self.stride = stride
            x = self.conv(x)
            bs, _, ny, nx = x.shape
            x = x.view(bs, 2, 4, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid.shape[1:3] != x.shape[2:4]:
                    self.grid = self._make_grid(nx, ny)
                x[..., 0:2] = (x[..., 0:2].sigmoid() + self.grid) * stride
                x[..., 2:4] = x[..., 2:4].exp()
            return x.reshape(bs, -1, 4)


    class Darknet(nn.Module):
        \"\"\"The layers built from config dicts and run in a zip loop, as YOLOv3's Darknet runs them.\"\"\"

        def __init__(self):
            super().__init__()
            self.module_defs = [{"type": "convolutional"}, {"type": "yolo"}, {"type": "yolo"}]
            self.module_list = nn.ModuleList([nn.Conv2d(3, 3, 1), GridHead(), GridHead()])

        def forward(self, x):
            img_size = x.size(2)
            outputs = []
            for module_def, module in zip(self.module_defs, self.module_list):
                if module_def["type"] == "yolo":
                    outputs.append(module(x, img_size))
                else:
                    x = module(x)
            return torch.cat(outputs, 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_grid_rebuilt_on_a_size_change_matches(tmp_path, mode):
    result = convert_source(GRID_CACHE)
    assert "_mp_grid = self.grid" in result.code and "mp_framework.keep_cache(self, 'grid', _mp_grid)" in result.code
    assert any("self.grid before writing it" in d.message for d in result.diagnostics if d.code == "MP107")
    assert_port_matches_in_mode(GRID_CACHE, result.code, "Darknet", [_x((2, 3, 5, 6))], tmp_path, "self_cache_g",
                                mode, atol=1e-5)


_FLAG_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class ActNorm(nn.Module):
        def __init__(self, shape):
            super().__init__()
            self.s = nn.Parameter(torch.zeros(shape)[None])
            self.t = nn.Parameter(torch.zeros(shape)[None])
            self.register_buffer("done", torch.tensor(0.0))

        def forward(self, z):
            if not self.done > 0.0:
                self.s.copy_(-torch.log(z.std(dim=(0, 2, 3), keepdim=True) + 1e-6))
                self.t.copy_(-z.mean(dim=(0, 2, 3), keepdim=True) * torch.exp(self.s))
                self.done = torch.tensor(1.0)
            return z * torch.exp(self.s) + self.t


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = ActNorm((3, 1, 1))

        def forward(self, x):
            return self.norm(x), self.norm(x * 2 + 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_buffer_flag_written_in_forward_keeps_its_write(tmp_path, mode):
    """normflows' ActNorm: a registered buffer tested and written in forward (data-dependent init on the first call,
    ``if not self.done > 0.0: ...; self.done = torch.tensor(1.0)``). MindSpore holds a buffer as a Parameter and a
    graph keeps ``self.done = v`` (an Assign: graph23's probe kc.py), so the write stays as written. Read through a
    local and kept by ``keep_cache`` (PyNative only), the flag stayed 0 in a graph: the second call initialised again
    from its own input, and the graph's numbers differed from torch's without a word."""
    result = convert_source(_FLAG_SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "self.done = ms.Tensor(1.0)" in result.code and "keep_cache" not in result.code
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(_FLAG_SOURCE, result.code, "Net", [x], tmp_path, "buffer_flag", mode)


_DATA_INIT_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class ActNorm(nn.Module):
        def __init__(self, shape):
            super().__init__()
            self.s = nn.Parameter(torch.zeros(shape)[None])
            self.t = nn.Parameter(torch.zeros(shape)[None])
            self.batch_dims = torch.nonzero(torch.tensor(self.s.shape) == 1, as_tuple=False)[:, 0].tolist()
            self.register_buffer("done", torch.tensor(0.0))

        def forward(self, z):
            if not self.done > 0.0:
                s_init = -torch.log(z.std(self.batch_dims, keepdim=True) + 1e-6)
                self.s.data = s_init.data
                self.t.data = (-z.mean(dim=self.batch_dims, keepdim=True) * torch.exp(self.s)).data
                self.done = torch.tensor(1.0)
            return z * torch.exp(self.s) + self.t


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = ActNorm((3, 1, 1))

        def forward(self, x):
            return self.norm(x), self.norm(x * 2 + 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_data_dependent_init_in_forward_matches(tmp_path, mode):
    """normflows' ActNorm as written: ``self.s.data = s_init.data`` on the first call, the dims a list attribute, the
    flag a buffer. A graph has no SetData kernel on CPU ("Unsupported op [SetData]"): ``mp_framework.set_data``
    assigns in place there (the write the second call sees, as torch's)."""
    result = convert_source(_DATA_INIT_SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_framework.set_data(self.s, s_init.data)" in result.code
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(_DATA_INIT_SOURCE, result.code, "Net", [x], tmp_path, "data_init", mode)


HOOKED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1)
            self.hook_layer = None

        def forward(self, x):
            x = self.conv(x)
            self.hook_layer = x
            return torch.relu(x) * 2


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            y = self.block(x)
            return self.block.hook_layer, y
""")


def test_a_feature_a_child_keeps_on_self_for_its_parent_is_said_and_kept_in_pynative(tmp_path):
    """DeepLabV3+'s Xception (first contact, session 30): Block.forward keeps ``self.hook_layer = x`` and the
    backbone's forward reads ``self.block2.hook_layer`` as its low-level feature. Block's forward is its only
    compiled method and reads nothing it writes, so the rule returned before it looked for readers outside the class:
    nothing was said, and GRAPH_MODE gave the feature of the previous (PyNative) call, a compile-time constant."""
    import mindspore as ms
    import torch

    result = convert_source(HOOKED, "hooked.py")
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "self.hook_layer is read by code outside the class" in said[0].message
    assert said[0].line == 13
    t_mod = load_module(HOOKED, tmp_path / "t_hooked.py", "t_hooked")
    m_mod = load_module(result.code, tmp_path / "m_hooked.py", "m_hooked")
    torch.manual_seed(0)
    torch_net, ms_net = t_mod.Net().eval(), m_mod.Net()
    transfer_weights(torch_net.state_dict(), ms_net)
    rng = np.random.default_rng(3)
    for _ in range(2):  # kept in PyNative: each call's own feature
        x = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
        with torch.no_grad():
            want = [w.numpy() for w in torch_net(torch.from_numpy(x))]
        got = [g.asnumpy() for g in ms_net(ms.Tensor(x))]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


NOT_SET_AT_INIT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class RevIN(nn.Module):
        def __init__(self, num_features, eps=1e-5, subtract_last=False):
            super().__init__()
            self.eps = eps
            self.subtract_last = subtract_last
            self.weight = nn.Parameter(torch.linspace(0.5, 2.0, num_features))

        def forward(self, x, mode: str):
            if mode == 'norm':
                self._get_statistics(x)
                x = self._normalize(x)
            else:
                x = self._denormalize(x)
            return x

        def _get_statistics(self, x):
            if self.subtract_last:
                self.last = x[:, -1, :].unsqueeze(1)
            else:
                self.mean = torch.mean(x, dim=1, keepdim=True).detach()
            self.stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + self.eps).detach()

        def _normalize(self, x):
            x = x - (self.last if self.subtract_last else self.mean)
            return x / self.stdev * self.weight

        def _denormalize(self, x):
            x = x / self.weight * self.stdev
            return x + (self.last if self.subtract_last else self.mean)


    class Forecaster(nn.Module):
        def __init__(self, subtract_last=False):
            super().__init__()
            self.revin = RevIN(4, subtract_last=subtract_last)
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.revin(self.fc(self.revin(x, 'norm')), 'denorm')


    class Last(Forecaster):
        def __init__(self):
            super().__init__(subtract_last=True)
""")


@pytest.mark.parametrize("cls", ["Forecaster", "Last"])
def test_an_attribute_the_class_never_sets_at_init_is_read_only_if_there(tmp_path, cls):
    """KaigeZheng/LTSF-model's RevIN (PatchTST), first contact: ``self.last`` (or ``self.mean``) is written by the
    first call on one branch and read on the same branch only; the threaded helpers read every attribute they take
    up front (``_mp_last = self.last``), which raised "The 'RevIN' object has no attribute 'last'". An attribute the
    class does not set while it is built is read with ``getattr(self, name, None)``."""
    import mindspore as ms
    import torch

    code = convert_source(NOT_SET_AT_INIT).code
    assert "getattr(self, 'last', None)" in code and "getattr(self, 'stdev', None)" in code
    assert "getattr(self, 'subtract_last'" not in code and "getattr(self, 'eps'" not in code
    t_mod = load_module(NOT_SET_AT_INIT, tmp_path / f"t_revin_{cls}.py", f"t_revin_{cls}")
    m_mod = load_module(code, tmp_path / f"m_revin_{cls}.py", f"m_revin_{cls}")
    torch.manual_seed(0)
    torch_net, ms_net = getattr(t_mod, cls)().eval(), getattr(m_mod, cls)()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = _x((2, 6, 4)) * 3 + 1
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


NONE_BUFFERS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def build_cache(seq_len, dim):
        theta = 10000 ** (-torch.arange(0, dim, 2).float() / dim)
        s = torch.einsum("i,j->ij", torch.arange(seq_len).float(), theta)
        sin, cos = s.sin(), s.cos()
        return torch.cat([sin, sin], dim=-1), torch.cat([cos, cos], dim=-1)


    class Rope(nn.Module):
        def __init__(self, dim=4, seq_len=8):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.register_buffer("rope_sin", None)
            self.register_buffer("rope_cos", None)
            self.rope_seq_len = seq_len
            self.dim = dim

        def forward(self, x):
            B, T, C = x.size()
            if (self.rope_sin is None) or (T > self.rope_seq_len):
                sin, cos = build_cache(T, self.dim)
                self.rope_sin = sin
                self.rope_cos = cos
            sin = self.rope_sin[:, :T, :]
            cos = self.rope_cos[:, :T, :]
            return self.fc(x) * cos + sin
""").replace("[:, :T, :]", "[:T]")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_cache_of_buffers_registered_as_none_and_its_companion_match(tmp_path, mode):
    """JunyuanHe's mini-GPT with RoPE (first contact, session 35): ``register_buffer("rope_sin", None)`` (no tensor:
    a plain ``None`` attribute in the port) filled in forward under ``if self.rope_sin is None``, with ``rope_cos``
    written beside it. Read as buffers, neither was a cache, and GRAPH_MODE read the ``None`` __init__ set ("'int'
    object is not subscriptable"); ``rope_cos``, not tested in the ``if``, was left even as a plain attribute."""
    result = convert_source(NONE_BUFFERS)
    code = result.code
    assert "_mp_rope_sin = self.rope_sin\n        _mp_rope_cos = self.rope_cos\n" in code
    assert "mp_framework.keep_cache(self, 'rope_cos', _mp_rope_cos)" in code and "cos = _mp_rope_cos[:T]" in code
    assert_port_matches_in_mode(NONE_BUFFERS, code, "Rope", [_x((2, 5, 4))], tmp_path, "self_cache_nb", mode,
                                atol=1e-5)


def test_a_cache_of_buffers_registered_as_none_is_kept_in_pynative(tmp_path):
    import mindspore as ms

    code = convert_source(NONE_BUFFERS).code
    net = load_module(code, tmp_path / "m_nb_keep.py", "m_nb_keep").Rope()
    net(ms.Tensor(_x((2, 5, 4))))
    assert tuple(net.rope_sin.shape) == (5, 4) and tuple(net.rope_cos.shape) == (5, 4)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_buffers_registered_as_none_and_filled_by_a_forward_move_and_match(tmp_path, mode):
    """After torch's first forward ``rope_sin``/``rope_cos`` are buffers of its state_dict: the weights move into the
    port (created as the Parameters a buffer is, since the port's class keeps them with ``keep_cache``, also where a
    PyNative forward of the port left them there as plain tensors: migrate's proofs), and the
    port then matches with them, in PyNative and in a graph, a sequence longer than the cache's rebuilding it."""
    import mindspore as ms
    import torch

    code = convert_source(NONE_BUFFERS).code
    t_mod = load_module(NONE_BUFFERS, tmp_path / "t_nb_state.py", "t_nb_state")
    m_mod = load_module(code, tmp_path / f"m_nb_state_{mode}.py", f"m_nb_state_{mode}")
    torch.manual_seed(0)
    torch_net, ms_net = t_mod.Rope().eval(), m_mod.Rope()
    ms_net.set_train(False)
    with torch.no_grad():
        torch_net(torch.from_numpy(_x((2, 5, 4))))
    ms_net(ms.Tensor(_x((2, 5, 4))))  # a PyNative forward before: the caches are plain tensors on the port
    assert {"rope_sin", "rope_cos"} <= set(torch_net.state_dict())
    assert transfer_weights(torch_net.state_dict(), ms_net).ok
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        for length in (5, 3, 11):
            x = _x((2, length, 4), seed=length)
            with torch.no_grad():
                want = torch_net(torch.from_numpy(x)).numpy()
            np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


TUPLE_RETURN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.K = None
            self.proj = nn.Linear(4, 4)

        def one_step(self, z, return_rec=False):
            self.K = self.proj(z[:, 0])
            pred = z[:, -1] * self.K
            if return_rec:
                rec = z[:, 0] + self.K
                return rec, pred
            return pred

        def forward(self, z):
            rec, pred = self.one_step(z, return_rec=True)
            return rec + pred * self.K
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_threaded_helper_returning_a_pair_gives_the_pair(tmp_path, mode):
    """``return rec, pred`` of a helper that writes self.K returns ``((rec, pred), K)``, not ``(rec, pred, K)``
    (thuml/Koopa's KPLayer: the caller unpacked the wrong items, a BatchMatMul shape error)."""
    code = convert_source(TUPLE_RETURN).code
    assert "return (rec, pred), _mp_K" in code
    z = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(TUPLE_RETURN, code, "Step", [z], tmp_path, "self_cache_pair", mode, atol=1e-5)


EARLY_RETURN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class ActNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(1, 4))
            self.inited = False

        def initialize(self, x):
            if not self.training:
                return
            with torch.no_grad():
                self.bias.data.copy_(-x.mean(0, keepdim=True))
            self.inited = True

        def forward(self, x):
            if not self.inited:
                self.initialize(x)
            return (x + self.bias) * 2
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_helper_returning_before_its_write_keeps_the_old_value(tmp_path, mode):
    """A bare ``return`` before the write (glow's ActNorm ``initialize_parameters``: ``if not self.training:
    return``) returns the value the attribute had: the write is not on every path, so the old value comes in. The file
    had failed to convert (MP299: the bare return was given a value without a space), and the early return then read
    an unbound local."""
    code = convert_source(EARLY_RETURN).code
    assert "def _mp_initialize(self, x, _mp_inited=None):" in code
    assert "            return _mp_inited\n" in code
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(EARLY_RETURN, code, "ActNorm", [x], tmp_path, "self_cache_early", mode, atol=1e-6)
