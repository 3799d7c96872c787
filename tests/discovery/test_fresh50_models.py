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


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh50"), {"readout.py": TABLE_ARGUMENT}, "*")


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
