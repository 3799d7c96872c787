"""Fixes found by the third discovery sweep (benchmarks/discovery_sweep.py, manifest rows 53 on), one test each."""
from __future__ import annotations


def _build(tmp_path, source: str, name: str | None = None):
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "m.py").write_text(source)
    cands = {c.name: c for c in discover(tmp_path)}
    cand = cands[name] if name else next(iter(cands.values()))
    return build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 60,
                     max_params=1_000_000)


def test_the_rank_a_forward_unpacks_its_input_with_is_tried_first(tmp_path):
    """A token block that reshapes ``B, N, C = x.shape`` into an image before its first convolution (PVT/Swin-style
    blocks): the first layer's own forms (``2 x C x 32 x 32``) never ran. The rank the forward reads its input with
    (unpacking, ``dim() ==``, ``shape[i]``, a docstring's ``(B, N, C)``) now gives forms of that rank first."""
    res = _build(tmp_path, '''
import torch.nn as nn


class TokenConv(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        B, N, C = x.shape
        s = int(N ** 0.5)
        x = x.transpose(1, 2).reshape(B, C, s, s)
        return self.proj(x).flatten(2).transpose(1, 2)
''')
    assert res["status"] == "built", res
    assert res["inputs"] == ["2x16x16:float32"]


def test_ranks_read_from_the_forward_and_its_docstring():
    """Each argument's rank, read before the forward rebinds it; a docstring's type list is no shape."""
    import ast

    from mindport.discovery.scan import _params, _ranks

    src = '''
def forward(self, queries, keys, values, attn_mask, t=None):
    """queries: [batch, seq_len, heads, dim]
    attn_mask (Tensor, optional): a mask"""
    B, L, H, E = queries.shape
    _, S, _, D = values.shape
    assert keys.dim() == 4
    return queries


def forward(self, x, y, z):
    """z: B x T x C"""
    b = x.size(3)
    x = x.view(2, 3)
    n, c = x.shape
    return y.shape[-1] + z
'''
    got = []
    for func in ast.parse(src).body:
        params = _params(func.args, True)
        _ranks(func, params, ast.get_docstring(func) or "")
        got.append({p.name: p.rank for p in params})
    assert got == [{"queries": 4, "keys": 4, "values": 4, "attn_mask": 0, "t": 0}, {"x": 4, "y": 0, "z": 3}]


def test_a_second_argument_of_another_rank_gets_its_own_rank(tmp_path):
    """A head that takes ``(x, feats)`` and reads ``B, C, H, W = feats.shape``: the second argument was the first
    one's form again (``2 x 16``), and unpacking it raised."""
    res = _build(tmp_path, '''
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.q = nn.Linear(dim, dim)

    def forward(self, x, feats):
        B, C, H, W = feats.shape
        return self.q(x) + feats.reshape(B, -1).sum(-1, keepdim=True)
''')
    assert res["status"] == "built", res
    assert res["inputs"] == ["2x16:float32", "2x16x16x16:float32"]
