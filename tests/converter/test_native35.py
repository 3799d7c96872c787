"""Issue 30 (native ports), native35: classes of runtime sites made MindSpore's own where the code's facts allow it.

* ``nn.Sequential(*layers)`` right after ``layers.append(nn.Linear(d, e))`` (T2T-ViT's patch embedding: the list
  grown by ``extend`` in a loop, the head appended last) gives floats: its last member is the appended layer
  (native_facts._appended_tail, FloatFacts._sequential_kind), so ``torch.cat((cls_tokens, x), 1)`` of its output and
  a float Parameter is ``ops.cat`` without ``mp_tensor.promoted``. Negatives keep the runtime join: a keeping layer
  appended last (the sequence's input decides), the list handed on as well (another holder may change it).
* ``torch.Tensor(h, d)`` / ``torch.LongTensor(4)``: a legacy constructor visibly given sizes (two or more positional
  arguments, or one integer literal) is the runtime constructor's value, ``ops.zeros((h, d), ms.float32)``
  (TableCallTransform._sized_constructor, SIZED_CONSTRUCTORS). Negatives keep the runtime: one argument that may be
  data (``torch.Tensor(y)``), a star, a keyword. ``zero_()`` of such a receiver is the receiver (ResNeXt's shortcut
  ``torch.Tensor(n, c, d, h, w).zero_()``), of another new tensor ``ops.zeros_like`` (TableCallTransform._fresh_fill).

Numbers: each positive converted and run against torch in PyNative and GRAPH_MODE (weights moved).

Not made native: ``torch.rand(d).uniform_(a, b)`` on a new tensor as ``ops.rand(d) * (b - a) + a`` gives the
same values, but draws MindSpore's shared stream where the runtime's in-place fills draw a stream of their own in a
tracked run (tests/training/test_train21_causes.py::test_the_trackers_shared_stream_is_not_moved_by_in_place_fills:
the draws after it moved)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SEQUENTIAL = textwrap.dedent('''
    import torch
    from torch import nn


    class Embed(nn.Module):
        def __init__(self, channels=6, dims=(8, 5), dim=4):
            super().__init__()
            layers = []
            layer_dim = channels
            for d in dims:
                layers.extend([nn.Linear(layer_dim, d), nn.GELU()])
                layer_dim = d
            layers.append(nn.Linear(layer_dim, dim))
            self.to_embedding = nn.Sequential(*layers)
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim))

        def forward(self, x):
            x = self.to_embedding(x)
            cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
            return torch.cat((cls_tokens, x), dim=1)


    class KeepLast(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            layers = [nn.Linear(dim, dim)]
            layers.append(nn.ReLU())  # a keeping layer (nn.GELU gives floats or raises: native41)
            self.body = nn.Sequential(*layers)
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim))

        def forward(self, x):
            x = self.body(x)
            return torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)


    class HandedOn(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            layers = []
            layers.append(nn.Linear(dim, dim))
            self.body = nn.Sequential(*layers)
            self.layers = layers
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim))

        def forward(self, x):
            x = self.body(x)
            return torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
''')

SIZED = textwrap.dedent('''
    import torch
    from torch import nn


    class RelBias(nn.Module):
        def __init__(self, num_heads=2, d_head=4):
            super().__init__()
            self.u_bias = nn.Parameter(torch.Tensor(num_heads, d_head))
            self.steps = torch.LongTensor(3)
            torch.nn.init.xavier_uniform_(self.u_bias)

        def forward(self, x):
            return x + self.u_bias + torch.Tensor(x.shape[0], 2, 4).fill_(0.5)


    class Shortcut(nn.Module):
        def __init__(self, planes=5):
            super().__init__()
            self.planes = planes

        def forward(self, out):
            zero_pads = torch.Tensor(out.size(0), self.planes - out.size(1), out.size(2)).zero_()
            counts = torch.ones(out.size(2), dtype=torch.long).zero_()
            return torch.cat([out, zero_pads], dim=1), counts


    def data(y):
        return torch.Tensor(y)


    def starred(shape):
        return torch.FloatTensor(*shape)


    def keyword(n):
        return torch.FloatTensor(n, 2, device="cpu")
''')


def _part(code: str, head: str) -> str:
    return code.split(head)[1].split("\nclass ")[0].split("\ndef ")[0]


def test_appended_sequence_join_is_native():
    code = convert_source(SEQUENTIAL).code
    assert "mp_tensor.promoted" not in _part(code, "class Embed("), _part(code, "class Embed(")
    for head in ("class KeepLast(", "class HandedOn("):
        assert "mp_tensor.promoted" in _part(code, head), _part(code, head)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_appended_sequence_join_matches_torch(tmp_path, mode):
    code = convert_source(SEQUENTIAL).code
    x = np.random.default_rng(35).standard_normal((2, 3, 6)).astype(np.float32)
    assert_port_matches_in_mode(SEQUENTIAL, code, "Embed", [x], tmp_path, f"embed_{mode}", mode, atol=1e-5)


def _converted(code: str, tmp_path, name: str):
    from tests.converter.port_check import load_module
    return load_module(code, tmp_path / f"{name}.py", name)


def test_sized_constructors_are_native():
    code = convert_source(SIZED).code
    part = _part(code, "class RelBias(")
    assert "ops.zeros((num_heads, d_head), ms.float32)" in part and "ops.zeros((3,), ms.int64)" in part, part
    assert "mp_tensor" not in part, part
    for head in ("def data", "def starred", "def keyword"):
        assert "mp_tensor." in _part(code, head), _part(code, head)
    part = _part(code, "class Shortcut(")
    assert "zero_pads = ops.zeros((out.shape[0], self.planes - out.shape[1], out.shape[2]), ms.float32)" in part
    assert "ops.zeros_like(ops.ones(" in part and "mp_inplace" not in part, part


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sized_constructors_match_torch(tmp_path, mode):
    code = convert_source(SIZED).code
    x = np.random.default_rng(35).standard_normal((3, 2, 4)).astype(np.float32)
    # torch.LongTensor(3) is uninitialised in torch: read for its dtype and shape only, below
    assert_port_matches_in_mode(SIZED, code, "RelBias", [x], tmp_path, f"sized_{mode}", mode, atol=1e-6)
    assert_port_matches_in_mode(SIZED, code, "Shortcut", [x], tmp_path, f"shortcut_{mode}", mode, atol=0)
    module = _converted(code, tmp_path, f"sized_{mode}_values")
    net = module.RelBias()
    assert str(net.u_bias.dtype) == "Float32" and net.u_bias.shape == (2, 4)
    assert str(net.steps.dtype) == "Int64" and net.steps.asnumpy().tolist() == [0, 0, 0]
