"""Causes of discovery batch 20's first contact (disc51, session 49), each a fixture of our own: the expected statuses
come from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# easezyc/Multitask-Recommendation-Library: every model's forward(categorical_x, numerical_x) shifts the categorical
# ids by per-field offsets into one shared table (torchfm's ``x + x.new_tensor(self.offsets).unsqueeze(0)``). The
# first error gave the ids one column per field (_fixed_length_hint), but the table then refused ids drawn up to its
# own size ("index out of range in self"), and with two arguments the hint budget was spent on the first error's
# retries: no retry with fewer ids followed, 7 of 14 models not built. A single-argument FieldIds was built. The class:
# an embedding's "index out of range in self" with several arguments retries every integer argument from a quarter of
# its range, next, whatever the hint budget.
TWO_ARGUMENTS = '''
import numpy as np
import torch
from torch import nn


class FieldIds(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.table = nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

    def forward(self, x):
        return self.table(x + x.new_tensor(self.offsets).unsqueeze(0))


class TwoTower(nn.Module):
    def __init__(self, categorical_field_dims, numerical_num, embed_dim):
        super().__init__()
        self.embedding = FieldIds(categorical_field_dims, embed_dim)
        self.numerical = nn.Linear(numerical_num, embed_dim)
        self.width = (len(categorical_field_dims) + 1) * embed_dim
        self.head = nn.Linear(self.width, 1)

    def forward(self, categorical_x, numerical_x):
        emb = torch.cat([self.embedding(categorical_x), self.numerical(numerical_x).unsqueeze(1)], 1)
        return torch.sigmoid(self.head(emb.view(-1, self.width)))
'''

# The same library's SingleTaskModel: one embedding and one Linear per task (ModuleLists), so both arguments were
# guessed as ids; once the ids fitted the fields, "mat1 and mat2 must have the same dtype, but got Long and Float"
# at the numerical Linear, and nothing made that argument float: not built. The class: with several arguments, ids
# refused by a layer of float weights are retried as floats of the same shape, for the arguments that layer was
# given (every one after the first when the error names none).
PER_TASK = '''
import numpy as np
import torch
from torch import nn


class FieldIds(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.table = nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

    def forward(self, x):
        return self.table(x + x.new_tensor(self.offsets).unsqueeze(0))


class PerTask(nn.Module):
    def __init__(self, categorical_field_dims, numerical_num, embed_dim, task_num):
        super().__init__()
        self.task_num = task_num
        self.embedding = nn.ModuleList([FieldIds(categorical_field_dims, embed_dim) for _ in range(task_num)])
        self.numerical = nn.ModuleList([nn.Linear(numerical_num, embed_dim) for _ in range(task_num)])
        self.width = (len(categorical_field_dims) + 1) * embed_dim
        self.head = nn.Linear(self.width, 1)

    def forward(self, categorical_x, numerical_x):
        out = []
        for i in range(self.task_num):
            emb = torch.cat([self.embedding[i](categorical_x), self.numerical[i](numerical_x).unsqueeze(1)], 1)
            out.append(torch.sigmoid(self.head(emb.view(-1, self.width))))
        return out
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh51"), {"towers.py": TWO_ARGUMENTS, "tasks.py": PER_TASK}, "*")


def test_ids_refused_by_a_linear_beside_ids_are_retried_as_floats(proven):
    model = proven["tasks.py:PerTask"]
    assert model["status"] == "proven", model
    ids, numbers = model["inputs"][:2]
    assert ":int64:" in ids and ":float32" in numbers, model["inputs"]


def test_field_ids_beside_another_argument_are_drawn_within_every_field(proven):
    model = proven["towers.py:TwoTower"]
    assert model["status"] == "proven", model
    ids, numbers = model["inputs"][:2]
    assert ":int64:" in ids and ids.split(":")[0].endswith("x2"), model["inputs"]  # one column per field
    high = int(ids.rsplit(":", 1)[1])
    assert high <= 8, model["inputs"]  # below the smallest field's size, as the offsets need
    assert ":float32" in numbers, model["inputs"]
    assert proven["towers.py:FieldIds"]["status"] == "proven", proven["towers.py:FieldIds"]


def test_fewer_ids_only_for_integer_forms_and_the_index_error():
    from mindport.discovery.build import _fewer_ids

    problem = "IndexError: index out of range in self"
    assert _fewer_ids(problem, "2x2:int64:0:24") == "2x2:int64:0:6"
    assert _fewer_ids(problem, "2x16:float32") == "2x16:float32"
    assert _fewer_ids(problem, "value:None") == "value:None"
    assert _fewer_ids("RuntimeError: other", "2x2:int64:0:24") == "2x2:int64:0:24"
