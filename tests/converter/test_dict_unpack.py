"""Keyword arguments routed to layers through dict displays with ``**`` (``{**f_args, key: val}``): MindSpore's static
graph reads such a display wrong (an empty tuple instead of the tensor), so the converter builds the dict with
``mindport.runtime.graph_safe.merged_dict``; the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.runtime.graph_safe import merged_dict
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def route(routes, kwargs, depth):
        routed = [({}, i) for i in range(depth)]
        for key in [k for k in kwargs.keys() if k in routes]:
            val = kwargs[key]
            for i, (wanted, (args, _)) in enumerate(zip(routes[key], routed)):
                routed[i] = ({**args, **({key: val} if wanted else {})}, i)
        return [args for args, _ in routed]


    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, scale=None, shift=None):
            y = self.proj(x)
            if scale is not None:
                y = y * scale
            if shift is not None:
                y = y + shift
            return y


    class Routed(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Scaled(), Scaled(), Scaled()])
            self.routes = {'scale': (True, False, True), 'shift': (False, True, True)}

        def forward(self, x, **kwargs):
            for layer, kw in zip(self.layers, route(self.routes, kwargs, len(self.layers))):
                x = layer(x, **kw)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = Routed()

        def forward(self, x):
            extra = {'shift': x[:, :1]}
            return self.body(x, **{**extra, 'scale': x.sigmoid()})
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_routed_keyword_arguments_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "routed[i] = (mp_graph_safe.merged_dict(args, ({key: val} if wanted else {})), i)" in code
    assert "**mp_graph_safe.merged_dict(extra, {'scale': mp_math.sigmoid(x)})" in code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "routes", mode, atol=1e-5)


def test_merged_dict_is_python_dict_unpacking():
    a, b = {"k": 1, "z": 2}, {"z": 3, 4: "four"}
    assert merged_dict(a, {"m": 0}, b) == {**a, "m": 0, **b}
    assert list(merged_dict(a, {"m": 0}, b)) == list({**a, "m": 0, **b})  # order kept, later keys win
    assert merged_dict() == {} and merged_dict(a) is not a
