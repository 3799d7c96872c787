"""A softmax's (or log_softmax's, gelu's, layer_norm's, leaky_relu's ...) result is floating point by construction
(native_facts.FloatFacts, _FLOAT_OR_RAISE): torch computes them for real floating inputs only (an integer, bool or
complex input raises "softmax_lastdim_kernel_impl not implemented for 'Long'"), so in every program torch runs the
result is floating, whatever the input's dtype looked like to the converter. The decisions that read float facts then take MindSpore's own op: x-transformers' top-p
``probs.amax(dim=-1, keepdim=True)`` of ``F.softmax(logits, dim=-1)`` (ops.amax), ``torch.log(probs)`` (no int-to-
float guard), a join of two softmaxes (no promotion). The converted module runs against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Probs(nn.Module):
        def forward(self, logits):
            probs = F.softmax(logits, dim=-1)
            m = probs.amax(dim=-1, keepdim=True)
            l = torch.log(probs)
            s = logits.log_softmax(-1).sigmoid()
            j = torch.cat((probs, logits.softmax(dim=-1)), dim=-1)
            g = torch.stack((F.gelu(logits), F.layer_norm(logits, (7,)), F.leaky_relu(logits)))
            return m, l, s, j, g
""")


def test_a_softmaxs_result_is_floating_for_the_facts():
    code = convert_source(SOURCE).code
    assert "m = ops.amax(probs, axis=-1, keepdims=True)" in code, code
    assert "l = ops.log(probs)" in code and "s = ops.sigmoid(" in code, code
    assert "j = ops.cat((probs, " in code and "g = ops.stack((" in code and "promoted" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_float_facts_match_torch(mode, tmp_path):
    logits = np.random.default_rng(0).standard_normal((3, 7)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Probs", [logits], tmp_path, "probs", mode, rtol=1e-5, atol=1e-6)
