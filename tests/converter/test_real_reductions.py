"""Issue 30 (native ports): the channel LayerNorm's ``var`` and unused einops imports.

- ``torch.var(x, dim=1, unbiased=False, keepdim=True)`` whose value over an empty extent nothing reads
  (native_facts.absorbed_reduction, now also through an operand that is a broadcast with ``x``:
  ``(x - mean) / (var + eps).sqrt()``), with an integer ``dim`` (a 0-d input raises in torch and MindSpore alike) and a
  real input (the float facts, or a file that makes no complex value: native_facts.real_file) is MindSpore's own
  ``ops.var(x, axis=1, ddof=0, keepdims=True)``; the runtime var stays for a complex-making file, a run-time ``dim``,
  an unabsorbed value;
- a file whose einops calls were all written out and whose other einops names nothing reads (``from einops import
  rearrange, repeat`` with ``repeat`` read nowhere) does not load the einops backend (imports._reads_einops).

Expected values come from torch; the positives run in PyNative and GRAPH_MODE, empty extents included."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HEAD = "import torch\nfrom torch import nn\n"

CHANNEL_NORM = textwrap.dedent("""
    class LayerNorm(nn.Module):
        def __init__(self, dim=4, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.g = nn.Parameter(torch.ones(1, dim, 1, 1) * 1.5)
            self.b = nn.Parameter(torch.zeros(1, dim, 1, 1) + 0.25)

        def forward(self, x):
            var = torch.var(x, dim = 1, unbiased = False, keepdim = True)
            mean = torch.mean(x, dim = 1, keepdim = True)
            return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


    class LayerNorm0(LayerNorm):
        def __init__(self):
            super().__init__(0)


    class Unbiased(nn.Module):
        def forward(self, x):
            v = x.var(-1, keepdim=True)
            return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(v + 1e-5)
""")

REAL = HEAD + CHANNEL_NORM

# the same norm in files that can make a complex value, or read the variance otherwise
COMPLEX_MAKING = {
    "imaginary": HEAD + CHANNEL_NORM + "\n\ndef rotate(t):\n    return t * 1j\n",
    "view_as_complex": HEAD + CHANNEL_NORM + "\n\ndef rotate(t):\n    return torch.view_as_complex(t)\n",
    "dtype_parameter": HEAD + CHANNEL_NORM + "\n\ndef make(n, dtype):\n    return torch.zeros(n, dtype=dtype)\n",
    "to_name": HEAD + CHANNEL_NORM + "\n\ndef cast(t, kind):\n    return t.to(kind)\n",
    "relative_import": HEAD + "from .rotary import freqs\n" + CHANNEL_NORM,
    "getattr": HEAD + CHANNEL_NORM + "\n\ndef kind(name):\n    return getattr(torch, name)\n",
}

UNPROVEN = HEAD + textwrap.dedent("""
    class Neg(nn.Module):
        def __init__(self):
            super().__init__()
            self.dim = 1

        def forward(self, x, y):
            a = torch.var(x, dim=self.dim, unbiased=False, keepdim=True)   # run-time dim
            p = (x - x.mean(1, keepdim=True)) / (a + 1e-5).sqrt()
            b = torch.var(x, dim=1, keepdim=True)                           # read alone
            c = torch.var(x, dim=1, keepdim=True)                           # absorbed by y, not x
            q = (y - y.mean(1, keepdim=True)) / (c + 1e-5).sqrt()
            return p, b, q
""")

# a float fact makes the input real in any file: a convolution's output
FLOAT_INPUT = HEAD + textwrap.dedent("""
    class ConvNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)

        def forward(self, x):
            h = self.conv(x)
            var = torch.var(h, dim=1, unbiased=False, keepdim=True)
            return (h - h.mean(1, keepdim=True)) / (var + 1e-5).sqrt()


    def rotate(t):
        return torch.view_as_complex(t)
""")


def _lines(code):
    return {line.strip().split(" = ")[0]: line for line in code.splitlines() if " = " in line}


def test_real_absorbed_vars_are_native():
    code = convert_source(REAL).code
    assert "var = ops.var(x, axis = 1, ddof=0, keepdims = True)" in code, code
    assert "v = ops.var(x, axis=-1, ddof=1, keepdims=True)" in code, code
    assert "mp_math" not in code and "mindport" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls, shape", [("LayerNorm", (2, 4, 3, 3)), ("LayerNorm0", (2, 0, 3, 3)),
                                        ("Unbiased", (2, 3, 5)), ("Unbiased", (2, 3, 0)), ("Unbiased", (0, 3, 5))])
def test_native_vars_match_torch(cls, shape, mode, tmp_path):
    code = convert_source(REAL).code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(REAL, code, cls, [x], tmp_path, f"var_{cls}_{'_'.join(map(str, shape))}", mode,
                                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(COMPLEX_MAKING))
def test_complex_making_files_keep_the_runtime_var(kind):
    code = convert_source(COMPLEX_MAKING[kind]).code
    assert "var = mp_math.var(x, dim = 1, keepdim = True, correction=0)" in code, code
    assert "v = mp_math.var(" in _lines(code)["v"], code


def test_complex_making_file_matches_torch(tmp_path):
    source = COMPLEX_MAKING["view_as_complex"]
    code = convert_source(source).code
    x = np.random.default_rng(2).standard_normal((2, 4, 3, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "LayerNorm", [x], tmp_path, "complex_file", "pynative",
                                rtol=1e-4, atol=1e-5)


def test_unproven_vars_keep_the_runtime(tmp_path):
    code = convert_source(UNPROVEN).code
    lines = _lines(code)
    for name in ("a", "b", "c"):
        assert "mp_math.var(" in lines[name], lines[name]
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(UNPROVEN, code, "Neg", [x, y], tmp_path, "unproven", "pynative", rtol=1e-4, atol=1e-5)
    x0 = np.zeros((2, 0, 4), np.float32)  # b is read alone: torch's NaN over the empty extent
    assert_port_matches_in_mode(UNPROVEN, code, "Neg", [x0, x0], tmp_path, "unproven0", "pynative", atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_float_fact_makes_the_input_real(mode, tmp_path):
    code = convert_source(FLOAT_INPUT).code
    assert "var = ops.var(h, axis=1, ddof=0, keepdims=True)" in code, code
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(FLOAT_INPUT, code, "ConvNorm", [x], tmp_path, "convnorm", mode, rtol=1e-4, atol=1e-5)


def test_complex_input_is_refused_loudly():
    """The caveat of real_file: a complex tensor from another file makes MindSpore's var raise, never a value."""
    import mindspore as ms
    from mindspore import ops

    x = ms.Tensor(np.array([[1 + 2j, 3 - 1j], [0.5 + 0j, 2 + 2j]], dtype=np.complex64))
    with pytest.raises((TypeError, RuntimeError, ValueError)):
        ops.var(x, axis=1, ddof=0, keepdims=True).asnumpy()


EINOPS = "import torch\nfrom torch import nn\nfrom einops import rearrange, repeat\n" + textwrap.dedent("""
    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            x = self.proj(x)
            return rearrange(x, 'b n (h d) -> b h n d', h = 2)
""")


def test_unread_einops_names_need_no_backend():
    code = convert_source(EINOPS).code
    # the import stays (the user's to drop: test_einops_layers), but no einops function takes a MindSpore tensor
    assert "from einops import repeat" in code and "mindport" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einops_written_out_port_matches_torch(mode, tmp_path):
    code = convert_source(EINOPS).code
    x = np.random.default_rng(4).standard_normal((2, 3, 8)).astype(np.float32)
    assert_port_matches_in_mode(EINOPS, code, "Heads", [x], tmp_path, "einops_drop", mode, atol=1e-5)


@pytest.mark.parametrize("extra", ["__all__ = ['repeat']\n", "TILE = repeat\n",
                                   "def tile(t, pattern):\n    return repeat(t, pattern, b=2)\n"])
def test_read_or_exported_einops_names_keep_the_backend(extra):
    code = convert_source(EINOPS + "\n\n" + extra).code
    assert "import mindport.runtime.einops_backend" in code or "import einops_backend as mp_einops" in code, code


# ------------------------------------------------- module-level functions whose every caller in the file gives floats

SWISH = HEAD + textwrap.dedent("""
    def swish(x):
        return x * torch.sigmoid(x)


    def nonlinearity(x, scale=2.0):
        return x * x.sigmoid() * scale


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)
            self.bn = nn.BatchNorm2d(4)
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            h = self.bn(self.conv(x))
            h = swish(h) + nonlinearity(h)
            h = h.mean((2, 3))
            return swish(self.lin(h))
""")

SWISH_NEGATIVES = {
    "int_caller": SWISH + "\n\ndef count(n):\n    return swish(torch.arange(n))\n",
    "value": SWISH + "\n\nclass Holder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                     "        self.act = swish\n",
    "exported": SWISH + "\n\n__all__ = ['swish', 'nonlinearity', 'Block']\n",
    "keyword": SWISH + "\n\ndef kw(t):\n    return swish(x=t.long())\n",
    "starred": SWISH + "\n\ndef kw(t):\n    return swish(*[t.float()])\n",
    "lambda": SWISH + "\n\ndef apply(ts):\n    return list(map(lambda t: swish(t), ts))\n",
}


def test_function_callers_make_guards_native():
    code = convert_source(SWISH).code
    assert "return x * ops.sigmoid(x)" in code, code
    assert "return x * ops.sigmoid(x) * scale" in code, code
    assert "mp_math.sigmoid" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_function_callers_match_torch(mode, tmp_path):
    code = convert_source(SWISH).code
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(SWISH, code, "Block", [x], tmp_path, "swish", mode, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(SWISH_NEGATIVES))
def test_unproven_function_callers_keep_the_guard(kind):
    code = convert_source(SWISH_NEGATIVES[kind]).code
    assert "return x * mp_math.sigmoid(x)" in code, code


def test_int_caller_keeps_torch_meaning():
    """The guard kept for an integer caller gives torch's float sigmoid of an int64 tensor."""
    import mindspore as ms
    import torch

    source = SWISH_NEGATIVES["int_caller"]
    code = convert_source(source).code
    namespace_t, namespace_m = {}, {}
    exec(compile(source, "<torch>", "exec"), namespace_t)  # noqa: S102 - test snippet
    exec(compile(code, "<ms>", "exec"), namespace_m)  # noqa: S102 - test snippet
    want = namespace_t["count"](5).numpy()
    got = namespace_m["count"](5)
    assert isinstance(got, ms.Tensor)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    assert want.dtype == np.float32 and torch.arange(5).dtype == torch.int64
