"""A module function that a model's forward calls, binding a name on one branch only and reading it under the same
condition later (trials memeff/chunked_attention: ``if exists(attn_bias): attn_bias_chunks = ...`` then
``attn_bias_chunks[i][j] if exists(attn_bias) else None``; the forward picks it by name, ``attn_fn = attention if
not memory_efficient else memory_efficient_attention``). GRAPH_MODE compiles the function with the method and
refused it ("UnboundLocalError: The local variable 'attn_bias_chunks' is not defined in false branch");
BranchBindingTransform took only model methods' blocks. Now a module function a model method names (calls or picks,
or through another such function) is taken too: the name is bound to None first. A function no model method calls is
left as written. Fails before in graph."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def exists(v):
        return v is not None


    def chunked(q, bias=None, size=2):
        if exists(bias):
            pieces = bias.split(size, -1)
        out = []
        for i, part in enumerate(q.split(size, -1)):
            extra = pieces[i] if exists(bias) else 0.0
            out.append(part * 2 + extra)
        return torch.cat(out, -1)


    def outer(q, bias):
        return chunked(q, bias) + chunked(q)


    def plain(q, bias):
        return q


    def unused(flag):
        if flag:
            value = 1
        return value


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            fn = outer if x.shape[0] > 1 else plain
            return fn(self.fc(x), x * 3)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_function_branch_bindings_in_graph(tmp_path, mode):
    code = convert_source(SOURCE).code
    chunked = code[code.index("def chunked"):code.index("def outer")]
    assert "fn = outer if" in code, code
    assert "    pieces = None\n" in chunked, code
    unused = code[code.index("def unused"):code.index("class Net")]
    assert "value = None" not in unused, code
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "branch53", mode, rtol=1e-5, atol=1e-5)
