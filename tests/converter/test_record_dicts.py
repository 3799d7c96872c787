"""A ``@dataclass`` record a model builds in its forward and returns with its output compiles in GRAPH_MODE and gives
torch's numbers: x-transformers' ``Attend`` returns ``(out, Intermediates(qk_similarities=..., pre_softmax_attn=...))``,
``Attention`` writes ``intermediates.values = v``, ``AttentionLayers`` collects them, writes ``inter.layer_type``,
feeds ``inter.pre_softmax_attn`` to the next layer (residual attention) and returns ``LayerIntermediates(hiddens=...,
attn_intermediates=[...])`` (trials xtransformers/vit, enc_dec: "negative dimensions are not allowed" at the next
LayerNorm, MindSpore 2.10; pure repro /work/notes/graph28-repros/dc.py). RecordDictTransform writes each record as a
dict display of its fields and every field read and write as the key's (``project.record_classes`` says which
classes qualify). The slice: that flow (built by keywords, by position, empty; written after a sub-cell returned it;
held in a list and read in a comprehension; a record holding a list of records), once per mode against torch; the
project fact over two files (the record read in a file that does not define it); and the classes left as they are
(with their MP107): built in ``__init__`` too, tested with ``isinstance``, a field named like a tensor attribute, a
``default_factory``, ``dataclasses.asdict`` in the project. Expected values are torch's outputs."""
from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.project import record_classes
from port_check import assert_port_matches_in_mode

RECORDS = textwrap.dedent("""\
    from dataclasses import dataclass, field

    import torch
    import torch.nn as nn


    @dataclass
    class Intermediates:
        qk_similarities: torch.Tensor | None = None
        pre_softmax_attn: torch.Tensor | None = None
        values: torch.Tensor | None = None
        layer_type: str | None = None

        def to_tuple(self):
            return (self.qk_similarities, self.pre_softmax_attn)


    @dataclass
    class LayerIntermediates:
        hiddens: list | None = None
        last_hidden: torch.Tensor | None = None
        attn_intermediates: list | None = field(default=None)


    class Attend(nn.Module):
        def forward(self, q, k, v, prev_attn=None, empty=False):
            if empty:
                return v, Intermediates()
            sim = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
            qk = sim.clone()
            if prev_attn is not None:
                sim = sim + prev_attn
            out = sim.softmax(dim=-1) @ v
            return out, Intermediates(qk, pre_softmax_attn=sim)


    class Attention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, dim * 3)
            self.attend = Attend()

        def forward(self, x, prev_attn=None):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            out, intermediates = self.attend(q, k, v, prev_attn=prev_attn)
            intermediates.values = v
            return out, intermediates


    class Layers(nn.Module):
        def __init__(self, dim, depth=2):
            super().__init__()
            self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(depth)])
            self.attns = nn.ModuleList([Attention(dim) for _ in range(depth)])
            self.final_norm = nn.LayerNorm(dim)

        def forward(self, x):
            hiddens = []
            intermediates = []
            prev_attn = None
            for norm, attn in zip(self.norms, self.attns):
                hiddens.append(x)
                out, inter = attn(norm(x), prev_attn=prev_attn)
                x = out + x
                inter.layer_type = "a"
                prev_attn = inter.pre_softmax_attn
                intermediates.append(inter)
            x = self.final_norm(x)
            return x, LayerIntermediates(hiddens=hiddens, last_hidden=x, attn_intermediates=intermediates)


    class Wrapper(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.layers = Layers(dim)
            self.head = nn.Linear(dim, 3)

        def forward(self, x):
            x, intermediates = self.layers(x)
            maps = [t.pre_softmax_attn.mean(dim=-1, keepdim=True) for t in intermediates.attn_intermediates]
            values = intermediates.attn_intermediates[-1].values
            kinds = [t.layer_type for t in intermediates.attn_intermediates]
            bias = maps[0] + maps[1] if kinds[0] == "a" else maps[0]
            return self.head(x + bias + values), intermediates.hiddens[1] + intermediates.last_hidden
""")


def test_records_written_as_dicts():
    code = convert_source(RECORDS).code
    assert 'return out, {"qk_similarities": qk, "pre_softmax_attn": sim, "values": None, "layer_type": None}' \
        in code, code
    assert 'return v, {"qk_similarities": None, "pre_softmax_attn": None, "values": None, "layer_type": None}' \
        in code, code
    assert 'intermediates.update({"values": v})' in code and 'inter.update({"layer_type": "a"})' in code, code
    assert 't["pre_softmax_attn"], dim=-1, keepdim=True) for t in' in code and 'intermediates["attn_intermediates"][-1]["values"]' in code
    assert '"attn_intermediates": None}' not in code  # field(default=None) given by the call
    assert "(self.qk_similarities, self.pre_softmax_attn)" in code  # the class keeps its own body


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_records_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    result = convert_source(RECORDS)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    assert_port_matches_in_mode(RECORDS, result.code, "Wrapper", [x], tmp_path, "records", mode,
                                rtol=1e-5, atol=1e-5)


def test_record_read_in_another_file():
    """The record is defined and built in one file and read in another that does not import it (x-transformers'
    autoregressive wrapper reads ``cache.attn_intermediates``): the project fact, read over both files, says so."""
    user = textwrap.dedent("""\
        import torch


        def z_loss(model, x):
            _, cache = model.layers(x)
            return sum(t.pre_softmax_attn.sum() for t in cache.attn_intermediates) + torch.tensor(0.0)
    """)
    facts = record_classes([ast.parse(RECORDS), ast.parse(user)])
    assert [name for name, _ in facts] == ["Intermediates", "LayerIntermediates"]
    code = convert_source(user, record_classes=facts).code
    assert 'sum(t["pre_softmax_attn"].sum() for t in cache["attn_intermediates"])' in code, code


LEFT = {
    "built in __init__ too": ("        self.empty = Intermediates()\n", "        self.attend = Attend()\n"),
    "isinstance": ("        assert isinstance(intermediates, Intermediates)\n",
                   "        intermediates.values = v\n"),
    "a tensor attribute's name": ("    shape: tuple | None = None\n", "    layer_type: str | None = None\n"),
    "default_factory": ("    more: list = field(default_factory=list)\n", "    layer_type: str | None = None\n"),
    "dataclasses.asdict": ("from dataclasses import asdict\n", "from dataclasses import dataclass, field\n"),
}


@pytest.mark.parametrize("case", sorted(LEFT))
def test_records_nothing_can_tell_from_a_dict_only(case):
    """A class that could be told from a dict keeps its class, and its constructions in forward keep MP107."""
    added, after = LEFT[case]
    source = RECORDS.replace(after, after + added, 1)
    assert source != RECORDS
    names = [name for name, _ in record_classes([ast.parse(source)])]
    if case == "dataclasses.asdict":
        assert names == []
    else:
        assert "Intermediates" not in names and "LayerIntermediates" in names
    result = convert_source(source)
    assert "Intermediates(qk, pre_softmax_attn=sim)" in result.code
    assert any(d.code == "MP107" and "'Intermediates'" in d.message for d in result.diagnostics)
