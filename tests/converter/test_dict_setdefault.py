"""``d.setdefault(k, v)`` in a model's methods, on a dict the method builds (or its ``**kwargs``): MindSpore 2.10's
GRAPH_MODE leaves the dict unchanged, as a statement ("The key 'scale' does not exist in the dict") and as a value
alike. The converter writes ``if k not in d: d[k] = v`` (then ``y = d[k]`` for ``y = d.setdefault(k, v)``), which
a static graph keeps; each port matches torch in PyNative and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

DEFAULTS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, **kwargs):
            kwargs.setdefault('scale', 2.0)
            kwargs.setdefault('scale', 5.0)
            opts = {}
            opts.setdefault('shift', x.mean())
            kept = opts.setdefault('shift', x.sum())
            key = 'bias'
            opts.setdefault(key, self.proj(x))
            return self.proj(x) * kwargs['scale'] + kept + opts['shift'] + opts[key]


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = Gate()

        def forward(self, x):
            return self.gate(x) + self.gate(x, scale=3.0)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_setdefault_on_a_methods_own_dict_matches(tmp_path, mode):
    code = convert_source(DEFAULTS).code
    assert ".setdefault(" not in code, code
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(DEFAULTS, code, "Net", [x], tmp_path, "setdefault", mode, atol=1e-5)


def test_setdefault_on_other_objects_or_with_a_computed_key_is_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x, cache):
                cache.setdefault('a', x)
                d = {}
                d.setdefault(str(x.shape[0]), x)
                d.setdefault('b', []).append(x)
                return x
    """)
    code = convert_source(source).code
    assert "cache.setdefault('a', x)" in code and "d.setdefault(str(x.shape[0]), x)" in code, code
    assert "d.setdefault('b', []).append(x)" in code, code
