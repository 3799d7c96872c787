"""A model class's ``__repr__`` reading ``self.<name>`` the class never sets (batch 7 DropEdge: MultiLayerGCNBlock
prints ``self.aggrmethod``, which only GraphBaseBlock sets): torch never calls it in forward, MindSpore calls
``str(model)`` (every sub-Cell's ``__repr__``) when it compiles a graph, and the AttributeError stopped GRAPH_MODE.
ReprUnsetTransform falls back to MindSpore's description there; a ``__repr__`` whose reads are all set is left."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Base(nn.Module):
        def __init__(self, d, aggrmethod):
            super().__init__()
            self.aggrmethod = aggrmethod
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return self.fc(x) + x if self.aggrmethod == "add" else self.fc(x)

        def __repr__(self):
            return "%s %s (%d)" % (self.__class__.__name__, self.aggrmethod, self.fc.in_features)


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.model = Base(d, aggrmethod="add")

        def forward(self, x):
            return self.model(x)

        def __repr__(self):
            return "%s %s (%d)" % (self.__class__.__name__, self.aggrmethod, self.model.fc.in_features)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block(4)

        def forward(self, x):
            return torch.relu(self.block(x))
""")


def test_only_the_unset_read_is_guarded():
    code = convert_source(SOURCE).code
    assert code.count("except AttributeError:") == 1 and "Block never sets self.aggrmethod" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_repr_with_an_unset_attribute_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "repr_unset", mode, atol=1e-5)
