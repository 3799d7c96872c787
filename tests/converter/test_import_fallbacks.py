"""``try: from torch.nn.functional import scaled_dot_product_attention`` / ``except ImportError: ... = None``: the
handler's fallback assignment must not hide the import. Before, the import was removed with the other torch imports but
the call by bare name was left as it was (the name had two bindings), so the port failed with a NameError (whisper's
attention). The import's binding wins; the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    try:
        from torch.nn.functional import scaled_dot_product_attention as sdpa
        from torch.nn.functional import gelu
        HAVE_SDPA = True
    except (ImportError, RuntimeError):
        sdpa = None
        gelu = lambda t: t
        HAVE_SDPA = False


    class Attention(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            if HAVE_SDPA:
                return gelu(sdpa(q, k, v, is_causal=True))
            return x
""")


def test_an_import_with_a_fallback_is_converted_and_matches(tmp_path):
    code = convert_source(SOURCE).code
    assert "sdpa(q" not in code and "import torch" not in code, code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Attention", [x], tmp_path, "fallback", "pynative", atol=1e-5)


def test_a_name_bound_only_in_a_handler_is_left_alone():
    source = textwrap.dedent("""\
        import torch

        try:
            import numpy as np
        except ImportError:
            relu = None


        def f(x):
            return relu(x)
    """)
    assert "return relu(x)" in convert_source(source).code


OPTIONAL_PACKAGE = textwrap.dedent("""\
    import os

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class PlainSwiGLU(nn.Module):
        def __init__(self, dim=8, hidden=16):
            super().__init__()
            self.w12 = nn.Linear(dim, 2 * hidden)
            self.w3 = nn.Linear(hidden, dim)

        def forward(self, x):
            a, b = self.w12(x).chunk(2, dim=-1)
            return self.w3(F.silu(a) * b)


    ENABLED = os.environ.get("NO_FUSED") is None
    try:
        if ENABLED:
            from xformers.ops import SwiGLU
            FUSED = True
        else:
            raise ImportError
    except ImportError:
        SwiGLU = PlainSwiGLU
        FUSED = False


    class Block(SwiGLU):
        def forward(self, x):
            return super().forward(x) + x
""")


def test_an_optional_torch_based_package_takes_its_fallback(tmp_path):
    """``try: from xformers.ops import SwiGLU`` / ``except ImportError: SwiGLU = PlainSwiGLU`` (DINOv2's layers): the
    torch-based package is as good as absent under MindSpore, so its import raises ImportError and the fallback class
    is the base. Before, the import was dropped and the module failed with a NameError."""
    code = convert_source(OPTIONAL_PACKAGE).code
    assert "raise ModuleNotFoundError(" in code and "from xformers" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    source = OPTIONAL_PACKAGE.replace("from xformers.ops import SwiGLU", "raise ImportError")  # torch without xformers
    assert_port_matches_in_mode(source, code, "Block", [x], tmp_path, "optional", "pynative", atol=1e-5)


FALLBACK_NAME = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    try:
        from apex.normalization import FusedLayerNorm as _FusedLayerNorm

        class ESM1bLayerNorm(_FusedLayerNorm):
            pass
    except ImportError:
        from torch.nn import LayerNorm as ESM1bLayerNorm


    class Block(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.norm = ESM1bLayerNorm(dim)

        def forward(self, x):
            return self.norm(x)
""")


def test_a_name_the_import_error_fallback_defines_stays_bound_for_other_modules(tmp_path):
    """esm's ``modules.py``: ``except ImportError: from torch.nn import LayerNorm as ESM1bLayerNorm``, used in the
    module and imported by others (``from esm.modules import ESM1bLayerNorm``). The module's own uses converted, the
    import went and the handler became ``pass``: importing the name from the converted module failed (the sweep's
    "converted module does not import")."""
    import mindspore as ms
    import torch

    from port_check import load_module

    code = convert_source(FALLBACK_NAME).code
    module = load_module(code, tmp_path / "m_fallback_name.py", "m_fallback_name")
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    with torch.no_grad():
        want = torch.nn.LayerNorm(8)(torch.from_numpy(x)).numpy()
    norm = module.ESM1bLayerNorm(8)  # what `from m_fallback_name import ESM1bLayerNorm` gives another module
    np.testing.assert_allclose(norm(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    assert_port_matches_in_mode(FALLBACK_NAME.replace("from apex", "raise ImportError\n    from apex"), code,
                                "Block", [x], tmp_path, "fallback_name", "pynative", atol=1e-5)


NOT_FOUND_HANDLER = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    try:
        from apex.optimizers import FusedAdam as Adam
        from apex.normalization import FusedLayerNorm as LayerNorm
    except ModuleNotFoundError:
        from torch.optim import AdamW as Adam
        from torch.nn import LayerNorm


    class Block(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.norm = LayerNorm(dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            return self.proj(self.norm(x))
""")


def test_a_module_not_found_handler_takes_the_fallback(tmp_path):
    """affjljoo3581/GPT2's ``fusing.py`` (batch15, first contact): ``try: from apex... import ...`` twice, ``except
    ModuleNotFoundError:`` torch's classes. The guarded imports raised ImportError, which that handler does not catch:
    the converted module failed to import. Python raises ModuleNotFoundError for an absent package (an ImportError
    subclass, so ``except ImportError`` handlers catch it too), and the block raises once."""
    code = convert_source(NOT_FOUND_HANDLER).code
    assert code.count("raise ModuleNotFoundError(") == 1 and "apex" not in code.replace("apex is", ""), code
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    source = NOT_FOUND_HANDLER.replace("from apex.optimizers import FusedAdam as Adam", "raise ModuleNotFoundError")
    assert_port_matches_in_mode(source, code, "Block", [x], tmp_path, "notfound", "pynative", atol=1e-5)


DEF_FALLBACK = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    try:
        from torch.nn.functional import scaled_dot_product_attention as slow_attn
    except ImportError:
        def slow_attn(query, key, value, scale: float, attn_mask=None, dropout_p=0.0):
            attn = query.mul(scale) @ key.transpose(-2, -1)
            if attn_mask is not None:
                attn.add_(attn_mask)
            return attn.softmax(dim=-1) @ value

    try:
        from torch.nn import RMSNorm
    except ImportError:
        class RMSNorm(nn.Module):
            def __init__(self, dim, eps=1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.ones(dim))

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


    class Attention(nn.Module):
        def __init__(self, dim=16, heads=2):
            super().__init__()
            self.heads = heads
            self.norm = RMSNorm(dim, eps=1e-6)
            self.qkv = nn.Linear(dim, 3 * dim)

        def forward(self, x, bias):
            b, n, d = x.shape
            q, k, v = self.qkv(self.norm(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
            out = slow_attn(query=q, key=k, value=v, scale=0.3, attn_mask=bias, dropout_p=0.0)
            return out.transpose(1, 2).reshape(b, n, d)
""")


def test_a_def_or_class_in_the_import_error_handler_keeps_the_import(tmp_path):
    """VAR's ``models/basic_var.py`` (batch21, first contact): ``try: from torch.nn.functional import
    scaled_dot_product_attention as slow_attn`` / ``except ImportError: def slow_attn(...)``, and the same with a
    class (``try: from torch.nn import RMSNorm`` / ``except ImportError: class RMSNorm(nn.Module)``, older torch). The
    import succeeds under torch, so its binding is the one the module reads. Before, the def/class statement rebound
    the name, the import went (the handler kept only the fallback) and the calls were left as written: the port
    called the never-run fallback's name, which the import no longer bound (NameError)."""
    code = convert_source(DEF_FALLBACK).code
    assert "slow_attn(query=q" not in code, code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(DEF_FALLBACK, code, "Attention", [x, bias], tmp_path, "def_fallback", "pynative",
                                atol=1e-5)


def test_a_def_in_a_handler_whose_try_imports_another_name_stays_local(tmp_path):
    """Only the names the ``try`` imports keep the import: a helper the handler defines under another name is the
    module's own function, converted and called as written."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        try:
            from torch.nn.functional import silu
        except ImportError:
            def swish(x):
                return x * torch.sigmoid(x)
        else:
            def swish(x):
                return silu(x) * 2.0


        class Net(nn.Module):
            def forward(self, x):
                return swish(x)
    """)
    code = convert_source(source).code
    assert "return swish(x)" in code, code
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "local_def", "pynative", atol=1e-5)
