"""A tensor attribute a model method casts or moves in place of itself on every call (openai/CLIP's
ResidualAttentionBlock.attention: ``self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if
self.attn_mask is not None else None``; ``self.pe = self.pe.to(x.device)``). MindSpore 2.10's GRAPH_MODE compiles the
read of a tensor attribute the graph also writes as an interpreted value: a LayerNorm after it failed to compile
("negative dimensions are not allowed", CLIP's vision and text towers alike). SelfCacheTransform reads the value into
a local and writes it back with ``keep_cache`` (PyNative only): a graph casts the value ``__init__`` set on each call,
which is the value torch's cast gives. Expected values come from torch, over two calls."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d, attn_mask=None):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.ln_2 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, 2)
            self.fc = nn.Linear(d, d)
            self.attn_mask = attn_mask

        def attention(self, x):
            self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
            return self.attn(x, x, x, need_weights=False, attn_mask=self.attn_mask)[0]

        def forward(self, x):
            x = x + self.attention(self.ln_1(x))
            return x + self.fc(self.ln_2(x))


    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            mask = torch.empty(5, 5).fill_(float("-inf")).triu_(1)
            self.blocks = nn.Sequential(Block(8, mask), Block(8, mask))

        def forward(self, x):
            return self.blocks(x)


    class Unmasked(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Block(8), Block(8))

        def forward(self, x):
            return self.blocks(x)


    class Moved(nn.Module):
        def __init__(self):
            super().__init__()
            self.pe = torch.linspace(0.0, 1.0, 8)
            self.ln = nn.LayerNorm(8)
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            self.pe = self.pe.to(x.device)
            x = self.ln(x + self.pe)
            return self.ln(x + self.fc(x))
""")


def _x():
    return np.random.default_rng(0).standard_normal((5, 2, 8)).astype(np.float32)


def _two_calls(code, cls, tmp_path, mode):
    import mindspore as ms
    import torch

    torch.manual_seed(0)
    torch_net = getattr(load_module(SOURCE, tmp_path / "t_recast.py", "t_recast"), cls)().eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_recast_{mode}.py", f"m_recast_{mode}"), cls)()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = _x()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        for scale in (1.0, 2.0):  # the second call reads what the first one left on self
            with torch.no_grad():
                want = torch_net(torch.from_numpy(x * scale)).numpy()
            got = ms_net(ms.Tensor(x * scale)).asnumpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Masked", "Unmasked", "Moved"])
def test_an_attribute_cast_in_place_of_itself_matches(tmp_path, mode, cls):
    result = convert_source(SOURCE)
    _two_calls(result.code, cls, tmp_path, mode)


def test_the_cast_is_kept_in_pynative_and_a_dtype_cast_is_said():
    result = convert_source(SOURCE)
    code = result.code
    assert "mp_framework.keep_cache(self, 'attn_mask', _mp_attn_mask)" in code
    # a device move in place of itself is no statement on MindSpore (rules/device.py drops it before any rule)
    assert "self.pe = " not in code.split("def construct")[-1] and "_mp_pe" not in code, code
    said = [d.message for d in result.diagnostics if d.code == "MP107"]
    assert any("casts self.attn_mask again on each call" in m for m in said), said
    assert not any("self.pe" in m for m in said), said  # a device move gives the same value: nothing to say


def test_the_write_is_kept_on_self_in_pynative(tmp_path):
    import mindspore as ms

    code = convert_source(SOURCE).code
    net = load_module(code, tmp_path / "m_recast_kept.py", "m_recast_kept").Masked()
    net(ms.Tensor(_x()))
    assert net.blocks[0].attn_mask is not None and net.blocks[0].attn_mask.dtype == ms.float32


def test_another_write_reads_the_last_call_and_is_said():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Decay(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.state = torch.ones(4)

            def forward(self, x):
                self.state = self.state.to(x.device) * 0.5
                return self.fc(x) + self.state
    """)
    result = convert_source(source)
    assert "keep_cache" not in result.code
    assert any(d.code == "MP107" and "reads self.state before writing it" in d.message for d in result.diagnostics)
