"""Issue 30 (native ports): cross-call dtype facts (native_facts.CallerFloats, the one place they are decided).

A parameter every call of its function in the file gives a floating value (a layer's output, a float creation, another
such parameter: a fixed point over the file's calls) is floating inside the function, so an int-to-float guard there
is MindSpore's own op (``ops.sigmoid``) and a join of it with other floats needs no run-time promotion. Module-level
functions, a class's ``forward`` (through ``self.<attr> = C(...)``) and its other methods (``self._gate(k)``) count;
arguments bind as Python binds them (keywords; a default ``None`` left out is no tensor). An integer at any call, a
starred call, a method read on another object, a ``getattr`` by a run-time name, a default of another kind or an
exported name keep the runtime form, which gives torch's numbers for an integer input.

Also: ``x.to(torch.float)`` is floating, and ``torch.tensor(data)`` without a dtype is when its data is floating or a
list of floating values and integer literals (``torch.tensor([tau * 2.0, 1])``).

Expected values come from torch; the positives run in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    def mix(a, b):
        return torch.cat([a, b], dim=1)


    class Gate(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.to_kv = nn.Linear(dim, dim * 2)

        def forward(self, x, context=None):
            x = self.norm(x)
            if context is not None:
                x = torch.cat((x, context), dim=1)
            k, v = self.to_kv(x).chunk(2, dim=-1)
            return self._gate(k, 0.5) * v

        def _gate(self, t, scale):
            return torch.sigmoid(t) + t.exp() * scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 8)
            self.ctx = nn.Linear(4, 8)
            self.gate = Gate(8)

        def forward(self, x):
            h = self.proj(x)
            c = self.ctx(x)
            y = self.gate(h, context=c) + self.gate(h).repeat(1, 2, 1)
            return self._join(y, c.repeat(1, 2, 1))

        def _join(self, p, q):
            return mix(p.sigmoid(), q)
""")

NEGATIVES = {
    # an integer at one call: torch gives sigmoid/exp of an int64 tensor as float32
    "int_call": ("return self._gate(k, 0.5) * v", "return self._gate(k, 0.5) * v + self._gate(torch.arange(8), 0.5)"),
    "starred": ("return self._gate(k, 0.5) * v", "return self._gate(*(k, 0.5)) * v"),
    "foreign": ("return self._join(y, c.repeat(1, 2, 1))",
                "return self._join(y, c.repeat(1, 2, 1)) + self.gate._gate(y, 1.0)"),
    "getattr": ("return self._gate(k, 0.5) * v", "return getattr(self, '_' + 'gate')(k, 0.5) * v"),
    "exported": ("class Net(nn.Module):", "__all__ = ['mix', 'Gate', 'Net']\n\n\nclass Net(nn.Module):"),
}


def _variant(kind):
    old, new = NEGATIVES[kind]
    assert old in SOURCE
    return SOURCE.replace(old, new, 1)


def test_every_call_floating_makes_the_guards_and_joins_native():
    code = convert_source(SOURCE).code
    assert "return ops.sigmoid(t) + ops.exp(t) * scale" in code, code  # a method's parameter (self._gate(k, 0.5))
    assert "x = ops.cat((x, context), axis=1)" in code, code  # forward by keyword, and a None default left out
    assert "return mix(ops.sigmoid(p), q)" in code, code  # _join, called by forward with floats
    assert "return ops.cat([a, b], axis=1)" in code, code  # forward -> _join -> mix: the fixed point
    assert "mindport" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_caller_floats_port_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "caller_floats", mode, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(NEGATIVES))
def test_unproven_callers_keep_the_runtime_form(kind):
    code = convert_source(_variant(kind)).code
    if kind == "exported":  # mix may be called from another file with anything
        assert "ops.cat(mp_tensor.promoted([a, b]), axis=1)" in code, code
    else:
        assert "return mp_math.sigmoid(t) + mp_math.exp(t) * scale" in code, code


def test_a_default_of_another_kind_keeps_the_runtime_form():
    source = SOURCE.replace("def _gate(self, t, scale):", "def _gate(self, t, scale=2):") \
        .replace("return torch.sigmoid(t) + t.exp() * scale", "return torch.sigmoid(t) + torch.exp(scale)") \
        .replace("return self._gate(k, 0.5) * v", "return self._gate(k) * v")
    code = convert_source(source).code
    assert "return ops.sigmoid(t) + mp_math.exp(scale)" in code, code  # t is proven, the int default is not


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_an_integer_call_keeps_torch_numbers(mode, tmp_path):
    source = _variant("int_call")
    code = convert_source(source).code
    assert "mp_math.sigmoid(t)" in code, code
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "caller_floats_int", mode, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------- float dtypes named by .to and torch.tensor data

DATA = textwrap.dedent("""
    import torch


    def schedule(t, start=-3, tau=1.0):
        v_start = torch.tensor(start / tau).sigmoid()
        w = torch.tensor([tau * 2.0, 1]).exp()
        u = torch.tensor([start, 1]).exp()
        return (t.to(torch.float) * v_start).sin() + w.sum() + u.sum()
""")


def test_float_data_and_to_float_are_native():
    code = convert_source(DATA).code
    assert "v_start = ops.sigmoid(" in code, code
    assert "w = ops.exp(" in code, code
    assert "u = mp_math.exp(" in code, code  # [start, 1]: start may be anything
    assert "ops.sin((t.astype(" in code or "ops.sin((t.to(" in code, code


def test_float_data_gives_torch_numbers():
    import torch

    code = convert_source(DATA).code
    namespace_t, namespace_m = {}, {}
    exec(compile(DATA, "<torch>", "exec"), namespace_t)  # noqa: S102 - test snippet
    exec(compile(code, "<ms>", "exec"), namespace_m)  # noqa: S102 - test snippet
    for start, tau in ((-3, 1.0), (2, 0.5)):
        want = namespace_t["schedule"](torch.arange(5), start, tau).numpy()
        import mindspore as ms
        got = namespace_m["schedule"](ms.Tensor(np.arange(5)), start, tau).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------- joins of one root followed through a local binding

SHIFT = textwrap.dedent("""
    import torch
    from torch import nn


    class Shift(nn.Module):
        def forward(self, pos_score):
            b, h, n1, n2 = pos_score.size()
            zeros = pos_score.new_zeros(b, h, n1, 1)
            padded = torch.cat([zeros, pos_score], dim=-1)
            padded = padded.view(b, h, n2 + 1, n1)
            return padded[:, :, 1:].reshape(b, h, n1, n2)
""")

SHIFT_NEGATIVES = {
    "rebound": ("padded = torch.cat([zeros, pos_score], dim=-1)",
                "pos_score = pos_score.long()\n        padded = torch.cat([zeros, pos_score], dim=-1)"),
    "dtype": ("pos_score.new_zeros(b, h, n1, 1)", "pos_score.new_zeros(b, h, n1, 1, dtype=torch.float64)"),
}


def test_a_join_of_one_root_through_a_binding_is_native():
    code = convert_source(SHIFT).code
    assert "padded = ops.cat([zeros, pos_score], axis=-1)" in code, code
    assert "mindport" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_join_of_one_root_matches_torch(mode, tmp_path):
    code = convert_source(SHIFT).code
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(SHIFT, code, "Shift", [x], tmp_path, "shift", mode, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", sorted(SHIFT_NEGATIVES))
def test_a_join_of_two_roots_keeps_the_promotion(kind):
    old, new = SHIFT_NEGATIVES[kind]
    code = convert_source(SHIFT.replace(old, new, 1)).code
    assert "ops.cat(mp_tensor.promoted([zeros, pos_score]), axis=-1)" in code, code


# ------------------------------------------------------------------ a torch layer's weight is a floating Parameter

TOKENS = textwrap.dedent("""
    import torch
    from torch import nn


    class Tokens(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.iou_token = nn.Embedding(1, dim)
            self.mask_tokens = nn.Embedding(3, dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            out = torch.cat([self.iou_token.weight, self.mask_tokens.weight], dim=0)
            return self.proj(x) @ out.t() + self.proj.bias.sigmoid().sum()
""")


def test_layer_weights_join_natively():
    code = convert_source(TOKENS).code
    assert "out = ops.cat([self.iou_token.embedding_table, self.mask_tokens.embedding_table], axis=0)" in code, code
    assert "ops.sigmoid(self.proj.bias)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_weights_match_torch(mode, tmp_path):
    code = convert_source(TOKENS).code
    x = np.random.default_rng(7).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(TOKENS, code, "Tokens", [x], tmp_path, "tokens", mode, rtol=1e-5, atol=1e-5)


def test_a_reassigned_weight_keeps_the_promotion():
    source = TOKENS.replace("self.proj = nn.Linear(dim, dim)",
                            "self.proj = nn.Linear(dim, dim)\n        self.mask_tokens.weight = self.proj.weight")
    code = convert_source(source).code
    assert "mp_tensor.promoted([self.iou_token.embedding_table, self.mask_tokens" in code, code
