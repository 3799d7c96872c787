"""``map(functools.partial(f, ...), items)`` consumed at once compiles in GRAPH_MODE and gives torch's numbers:
denoising-diffusion-pytorch's ``k, v = map(partial(torch.cat, dim=-2), ((mk, k), (mv, v)))`` (trials ddpm_lucid/unet:
a graph's ``map`` handed each pair's items to ``cat`` one by one, "For Operator[Concat], tensors's type
'Tuple[Int64*2]' does not match expected type 'tuple of Tensor'"). MapLambdaTransform writes it as a list
comprehension calling ``f(*args, item, **kw)``. The slice: the memory key/value concatenation (pairs of tensors,
a keyword), two iterables zipped with a keyword, a positional argument bound by the partial, and a partial whose
argument calls something (left as written). Expected values are torch's outputs, both modes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

MEM_KV = textwrap.dedent("""\
    from functools import partial
    import torch
    import torch.nn as nn


    def scaled(s, x, b=0.0):
        return x * s + b


    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.mem_kv = nn.Parameter(torch.randn(2, 3, 4))

        def forward(self, k, v):
            mk = self.mem_kv[0:1].expand(k.shape[0], -1, -1)
            mv = self.mem_kv[1:2].expand(k.shape[0], -1, -1)
            k, v = map(partial(torch.cat, dim=-2), ((mk, k), (mv, v)))
            a, b = map(partial(torch.add, alpha=2), (k, v), (v, k))
            c, d = map(partial(scaled, 0.5, b=1.0), (a, b))
            return k * v + a - b + c * d
""")

LEFT = textwrap.dedent("""\
    from functools import partial
    import torch.nn as nn


    def scaled(x, s):
        return x * s


    class Net(nn.Module):
        def forward(self, x, y):
            a, b = map(partial(scaled, s=x.sum()), (x, y))
            return a + b
""")


def test_written_out():
    code = convert_source(MEM_KV).code
    assert "map(" not in code, code
    assert "k, v = [torch_cat(_mp_item, dim=-2) for _mp_item in ((mk, k), (mv, v))]" in code, code
    assert "[scaled(0.5, _mp_item, b=1.0) for _mp_item in (a, b)]" in code, code
    assert "map(partial(scaled, s=" in convert_source(LEFT).code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_memory_kv_matches_torch(tmp_path, mode):
    rng = np.random.default_rng(0)
    k, v = (rng.standard_normal((2, 5, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(MEM_KV, convert_source(MEM_KV).code, "Attn", [k, v], tmp_path, "memkv", mode,
                                rtol=1e-5, atol=1e-5)
