"""Causes of discovery batch 19's first contact (disc50, session 48), each a fixture of our own: the expected
statuses come from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# daiquocnguyen/Graph-Transformer's UGformerV1.forward(input_x, graph_pool, X_concat) looks its node ids up in a
# feature table that is another argument (``F.embedding(input_x, X_concat)``). Every guessed form was float; the
# retry with ids made every argument of the first one's form ids, the table too ("mat1 and mat2 must have the same
# dtype, but got Long and Float"): not built. The class: a forward argument handed as the ids of a functional lookup
# (F.embedding, F.one_hot) is the one made ids; the others keep their float form.
TABLE_ARGUMENT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class NodeReadout(nn.Module):
    def __init__(self, feature_dim=16, num_classes=10):
        super().__init__()
        self.proj = nn.Linear(feature_dim, feature_dim)
        self.out = nn.Linear(feature_dim, num_classes)

    def forward(self, node_ids, features, weights):
        h = self.proj(F.embedding(node_ids, features)).mean(1)
        return self.out(h * weights)
'''

# LynnHo/DCGAN-LSGAN-WGAN-GP-DRAGAN-Pytorch's DepthToSpace: ``N, C, H, W = x.size()`` then ``C // (self.bs ** 2)`` in a
# view. Every guessed block size (8, 16, 32, 64) met a 16-channel form, "shape '[2, 8, 8, 0, 16, 16]' is invalid":
# not built. The class: an axis the forward floor-divides by a number of the model's (its attributes and integer
# constants) is a multiple of it; a form whose axis is not gets the number there (the built model's value).
MODEL_DIVISOR = '''
import torch.nn as nn


class GroupMean(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        b, c, length = x.shape
        groups = x.reshape(b, c // (self.k * self.k), self.k * self.k, length)
        return groups.mean(2)
'''

# jrfiedler/xynn's AutoInt attention: ``torch.tensordot(x, self.W_q, dims=([-1], [0]))`` with a raw parameter, no
# Linear to read the width from. Every form was 16 wide: "contracted dimensions need to match, but first has size 16
# in dim -1 and second has size 32 in dim 0" (the forms of its first layer, a LayerNorm after the product), not built.
# The class: a tensordot's complaint gives the input's last
# axis as a Linear's "mat1 and mat2 shapes cannot be multiplied" does; the model is proven at its own defaults.
CONTRACTED_PARAMETER = '''
import torch
import torch.nn as nn


class FieldMixer(nn.Module):
    def __init__(self, field_input_size, out=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(field_input_size, out) * 0.1)
        self.norm = nn.LayerNorm(out)

    def forward(self, x):
        rows, fields, _ = x.shape
        return self.norm(torch.tensordot(x, self.w, dims=([-1], [0])).reshape(rows, fields, -1))


class MixerStack(nn.Module):
    def __init__(self, field_input_size, num_layers=2):
        super().__init__()
        layers = []
        for _ in range(num_layers):
            layers.append(FieldMixer(field_input_size))
            field_input_size = 8
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh50"), {"readout.py": TABLE_ARGUMENT, "groups.py": MODEL_DIVISOR,
                                                            "mixer.py": CONTRACTED_PARAMETER}, "*")


def test_a_tensordot_with_a_parameter_gives_the_input_width(proven):
    model = proven["mixer.py:MixerStack"]
    assert model["status"] == "proven", model
    width = model["ctor"].partition("field_input_size=")[2].split(",")[0]
    assert width and model["inputs"][0].split(":")[0].endswith("x" + width), model


def test_an_axis_divided_by_a_number_of_the_model_is_a_multiple_of_it(proven):
    model = proven["groups.py:GroupMean"]
    assert model["status"] == "proven", model


def test_ids_of_a_functional_lookup_keep_the_table_float(proven):
    model = proven["readout.py:NodeReadout"]
    assert model["status"] == "proven", model
    ids, table = (_dtype_kind(spec) for spec in model["inputs"][:2])
    assert (ids, table) == ("i", "f"), model["inputs"]


def _dtype_kind(spec: str) -> str:
    """'i' or 'f': the kind of an input the report names (a spec ``2x16:int64:0:10`` or a recorded ``.npy``)."""
    if spec.endswith(".npy"):
        import numpy as np

        return np.load(spec).dtype.kind
    return "i" if ":int" in spec else "f"


def test_scan_marks_only_functional_lookups_as_ids():
    import ast

    from mindport.discovery.scan import Param, _id_arguments

    func = ast.parse('''
def forward(self, a, b, c, d):
    x = F.embedding(a, b)
    y = torch.nn.functional.one_hot(c, 3)
    return self.embedding(d) + torch.embedding(b, d)
''').body[0]
    params = [Param(n) for n in ("a", "b", "c", "d")]
    _id_arguments(func, params)
    assert [p.use for p in params] == ["ids", "", "ids", ""]


def test_scan_reads_the_divisor_an_axis_must_be_a_multiple_of():
    import ast

    from mindport.discovery.scan import Param, _asserted_sizes

    func = ast.parse('''
def forward(self, x, y):
    n, c, h, w = x.size()
    x = x.view(n, self.bs, self.bs, c // (self.bs ** 2), h, w)
    return x, y.size(1) // 2, y.size(2) // n
''').body[0]
    params = [Param("x"), Param("y")]
    _asserted_sizes(func, params)
    assert params[0].sizes == [[1, "%self.bs ** 2"]] and params[1].sizes == [], [p.sizes for p in params]
