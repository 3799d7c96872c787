"""A torch distribution built and read in a model's forward, compiled (GRAPH_MODE): ``Categorical(logits=l).entropy()``
(clamps the logits at the dtype's lowest float), ``Bernoulli(probs=p).logits`` (clamps the probabilities into
[eps, 1 - eps]) and ``Laplace(...).rsample()``'s clamp. runtime.distributions read those limits from dicts keyed by
dtypes: a static graph reads such a dict through its JIT Fallback, so the limit had no known type there (session
52 found the same pattern breaking ``matrix_rank`` in a graph). The limits are read through one constexpr per
limit now (runtime._dtype_limits); the ports match torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.distributions import Bernoulli, Categorical


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 5)

        def forward(self, x):
            logits = self.fc(x)
            masked = logits.masked_fill(logits > 0.5, float("-inf"))
            ent = Categorical(logits=masked).entropy()
            p = torch.sigmoid(logits * 40.0)
            b = Bernoulli(probs=p)
            return ent, b.logits, b.entropy()
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_distribution_limits_in_graph(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "mp_dist.Categorical(logits=masked).entropy()" in code, code
    x = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Heads", [x], tmp_path, "dist53", mode, rtol=1e-4, atol=1e-5)
