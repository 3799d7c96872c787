"""A layer that forwards its keyword arguments and replaces one first (perceiver's ``PreNorm``:
``kwargs.update(context=...)``, then ``self.fn(x, **kwargs)``): a static graph lost the updated key at the call; the
converter writes an item assignment, and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class CrossAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.to_q = nn.Linear(dim, dim)
            self.to_kv = nn.Linear(dim, dim)

        def forward(self, x, context=None):
            context = x if context is None else context
            attn = torch.softmax(self.to_q(x) @ self.to_kv(context).transpose(1, 2), dim=-1)
            return attn @ context


    class PreNorm(nn.Module):
        def __init__(self, dim, fn, context_dim=None):
            super().__init__()
            self.fn = fn
            self.norm = nn.LayerNorm(dim)
            self.norm_context = nn.LayerNorm(context_dim) if context_dim is not None else None

        def forward(self, x, **kwargs):
            x = self.norm(x)
            if self.norm_context is not None:
                context = kwargs['context']
                kwargs.update(context=self.norm_context(context))
            return self.fn(x, **kwargs)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.cross = PreNorm(4, CrossAttention(4), context_dim=4)
            self.self_attn = PreNorm(4, CrossAttention(4))

        def forward(self, x, context):
            x = self.cross(x, context=context) + x
            return self.self_attn(x) + x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_forwarded_keyword_replaced_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "kwargs['context'] = self.norm_context(context)" in code
    rng = np.random.default_rng(0)
    x, context = (rng.standard_normal((2, n, 4)).astype(np.float32) for n in (3, 5))
    assert_port_matches_in_mode(SOURCE, code, "Net", [x, context], tmp_path, "upd", mode, atol=1e-5)


def test_update_on_other_objects_is_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x, pbar, **kwargs):
                pbar.update(1)
                kwargs.update(other)
                return x
    """)
    code = convert_source(source).code
    assert "pbar.update(1)" in code and "kwargs.update(other)" in code
