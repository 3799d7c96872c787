"""An in-place update of a list's or dict's item compiles in GRAPH_MODE: the write-back the converter adds after it
(``feats[0] = f`` for a list's item, ``state = mp_inplace.view_update(state, (('getitem', ('m',), {}),), m)`` for a
dict's, ViewWriteBackTransform) sets the container's item, in a graph as in PyNative. ``view_update`` used to raise in a graph before looking at its base, so
every such update (a feature list summed into its first item, a dict of states) failed to compile though there is no
tensor to write into. The surface: ``+=``, ``-=``, ``*=``, the ``_`` methods and ``torch.<op>_`` functions the converter rewrites
(``relu_``; a ``.mul_``/``.add_`` on a list item is left as MindSpore's method, see the write-up), positive and negative list indices, a local dict's items read by a string key (``m = state["m"];
m *= x``: the converter wrote no write-back for them at all, and PyNative was silently off: state["m"] kept the old
values); the reads after the updates go through the container. Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

ITEMS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)

        def forward(self, x):
            y = self.a(x)
            feats = [torch.tanh(y), y * 2, torch.sin(y)]
            f = feats[0]
            f += feats[1]
            g = feats[1]
            g -= 0.5
            h = feats[-1]
            torch.relu_(h)
            state = {"m": y + 1, "n": y * 2}
            m = state["m"]
            m *= x
            n = state['n']
            torch.relu_(n)
            return feats[0] * 2, feats[1], feats[2], f, state["m"], state["n"]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_list_and_dict_items_updated_in_place_match_torch(tmp_path, mode):
    code = convert_source(ITEMS).code
    assert code.count("mp_inplace.view_update(") == 2, code  # the dict's items
    for item in ("feats[0] = f", "feats[1] = g", "feats[-1] = h"):  # a list's items: Python's item assignment
        assert item in code, code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(ITEMS, code, "Net", [x], tmp_path, "items", mode, atol=1e-5)


def test_a_tensor_view_still_refuses_a_graph(tmp_path):
    """Through a tensor's view that is no basic index (a narrow; y[0] is written back as y[0] = v, which compiles)
    the write-back stays PyNative-only: in a graph it raises, never silently."""
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                y = x * 1
                v = y.narrow(0, 0, 1)
                v += 1
                return y
    """)
    code = convert_source(source).code
    x = np.ones((2, 3), np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "tview", "pynative")
    with pytest.raises(RuntimeError, match="can't be compiled in graph mode"):
        assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "tview", "graph")
