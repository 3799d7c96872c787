"""Constructor settings MindSpore's Cells do not keep (object_surface.toml's ``kept``: a ReLU's ``inplace``, a
BatchNorm's ``affine``, a LayerNorm's ``elementwise_affine``, a pool's ``ceil_mode``): recorded on the Cell under
torch's name where the file uses the name, read as ``getattr(layer, name, torch's default)`` (in ``construct`` too,
GRAPH_MODE included), written as plain attributes, read by the run-time accessor on a layer of unknown class; and
``nn.Embedding.from_pretrained`` read as an Embedding. Before: each read was left as torch's text with MP104 and
crashed (AttributeError) on MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode, torch_and_converted

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, inplace=True):
            super().__init__()
            self.bn = nn.BatchNorm2d(3, affine=False)
            self.bn_default = nn.BatchNorm2d(3)
            self.ln = nn.LayerNorm(6, elementwise_affine=False)
            self.pool = nn.MaxPool2d(2, ceil_mode=True)
            self.act = nn.LeakyReLU(0.1, inplace)
            self.drop = nn.Dropout(0.0)

        def forward(self, x):
            scale = (2.0 if self.bn.affine else 3.0) + (5.0 if self.bn_default.affine else 7.0)
            scale = scale + (11.0 if self.ln.elementwise_affine else 13.0) + (17.0 if self.pool.ceil_mode else 0.0)
            scale = scale + (19.0 if self.act.inplace else 23.0) + (29.0 if self.drop.inplace else 31.0)
            return self.act(self.pool(x)) * scale  # (after the pool: torch's in-place write leaves x alone)
""")


def test_the_reads_no_longer_flag_and_the_values_are_recorded():
    result = convert_source(SOURCE)
    assert result.diagnostics == []
    code = result.code
    assert "self.bn.affine = False" in code and "self.ln.elementwise_affine = False" in code
    assert "self.pool.ceil_mode = True" in code and "self.act.inplace = inplace" in code
    assert "self.bn_default.affine =" not in code and "self.drop.inplace =" not in code  # torch's default: not written
    assert "getattr(self.bn, 'affine', True)" in code


def test_a_construction_inside_an_expression_records_through_the_helper():
    code = convert_source(INIT).code
    assert "mp_nn.with_settings(nn.BatchNorm2d(num_features=4, affine=False, eps=1e-05, momentum=0.9)" in code
    assert "ceil_mode=True)" in code and "affine=False)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "kept", mode)


INIT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def build():
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, affine=False), nn.ReLU(),
                             nn.MaxPool2d(2, ceil_mode=True), nn.Hardswish())


    def prepare(model):
        seen = []
        for m in model.modules():
            if isinstance(m, (nn.ReLU, nn.Hardswish)):
                seen.append(m.inplace)
                m.inplace = True
                seen.append(m.inplace)
            if isinstance(m, nn.BatchNorm2d):
                seen.append(m.affine)
        return seen


    def describe(pool):
        return pool.ceil_mode, pool.dilation


    def lookup(vectors):
        class Lookup(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding.from_pretrained(vectors, freeze=True)

            def read(self):
                return self.emb.weight.shape[0], self.emb.embedding_dim, self.emb.weight.requires_grad

        return Lookup().read()
""")


def test_narrowed_and_unknown_receivers_and_from_pretrained_read_as_in_torch(tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    t, m = torch_and_converted(INIT, "kept_init", tmp_path, monkeypatch)
    t_model, m_model = t["build"](), m["build"]()
    assert t["prepare"](t_model) == m["prepare"](m_model) == [False, False, True, False, True]
    assert t["describe"](t_model[3]) == m["describe"](m_model[3]) == (True, 1)
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert t["lookup"](torch.tensor(table)) == m["lookup"](ms.Tensor(table)) == (4, 3, False)


def test_a_common_name_on_an_unknown_receiver_stays_as_written():
    """A kept setting named as configs' attributes often are (object_surface.toml's common_names: ``k``, ``alpha``)
    is read through the accessor only on a layer the converter knows; a distinctive one (``ceil_mode``) on any."""
    code = convert_source("import torch\n\n\ndef f(cfg, pool):\n    return cfg.k, cfg.alpha, pool.ceil_mode\n").code
    assert "return cfg.k, cfg.alpha, mp_adapt.layer_attribute(pool, 'ceil_mode')" in code
