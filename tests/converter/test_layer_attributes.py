"""A layer's configuration read back (``self.fc.out_features``, ``emb.embedding_dim``, ``conv.groups``: CLIP's
``attnpool.c_proj.in_features``, heads sized from the layer before): MindSpore's Cells hold the same values under
other names (``out_channels``, ``embedding_size``, ``group``). The entry's ``attributes`` rename the read where the
converter knows the layer; the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 5)
            self.emb = nn.Embedding(10, 5)
            self.conv = nn.Conv1d(4, 4, 1, groups=2)
            self.head = nn.Linear(self.fc.out_features, self.fc.in_features)
            std = self.head.in_features ** -0.5
            nn.init.normal_(self.head.weight, std=std)

        def forward(self, x, ids):
            y = self.head(self.fc(x) + self.emb(ids).mean(1)) * self.emb.embedding_dim
            return y * self.conv.groups + self.emb.num_embeddings
""")


def test_attributes_are_read_under_mindspore_names():
    code = convert_source(SOURCE).code
    assert "nn.Dense(in_channels=self.fc.out_channels, out_channels=self.fc.in_channels)" in code
    assert "self.head.in_channels ** -0.5" in code
    assert "self.emb.embedding_size" in code and "self.conv.group" in code and "self.emb.vocab_size" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6)).astype(np.float32)
    ids = rng.integers(0, 10, (3, 4)).astype(np.int64)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x, ids], tmp_path, "attrs", mode,
                                atol=1e-5)


NESTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pool(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_proj = nn.Linear(6, 4)
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            return self.norm(self.c_proj(x))


    class Visual(nn.Module):
        def __init__(self):
            super().__init__()
            self.attnpool = Pool()

        def forward(self, x):
            return self.attnpool(x)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.visual = Visual()
            std = self.visual.attnpool.c_proj.in_features ** -0.5
            nn.init.normal_(self.visual.attnpool.c_proj.weight, std=std)
            nn.init.constant_(self.visual.attnpool.norm.weight, 2.0)

        def forward(self, x):
            return self.visual(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layers_reached_through_classes_of_the_file(tmp_path, mode):
    """``self.visual.attnpool.c_proj.in_features`` (CLIP's initialize_parameters): each step an instance of a class
    of the file, the last a layer; its attribute and parameter are read under MindSpore's names."""
    code = convert_source(NESTED).code
    assert "self.visual.attnpool.c_proj.in_channels ** -0.5" in code and "self.visual.attnpool.norm.gamma" in code
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    assert_port_matches_in_mode(NESTED, code, "Net", [x], tmp_path, "nested", mode, atol=1e-5)
