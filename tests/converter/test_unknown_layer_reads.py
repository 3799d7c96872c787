"""A torch layer's member read on a receiver whose class the converter cannot know (a layer passed to a module-level
function: RepMLP's ``fuse_bn(conv, bn)`` reads ``bn.running_var``, ``bn.weight``): names some mapped layer holds
under another name go through ``mp_adapt.layer_attribute``, which decides by the object's class when the code runs
(MindSpore's BatchNorm2d: ``moving_variance``, ``gamma``); a plain object's attribute of the same name reads as
written."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Config:
        eps = 0.5


    def fuse_bn(conv, bn):
        std = (bn.running_var + bn.eps).sqrt()
        t = (bn.weight / std).reshape(-1, 1, 1, 1)
        return conv.weight * t, bn.bias - bn.running_mean * bn.weight / std


    def scale(cfg):
        return cfg.eps


    class Fused(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.fused = nn.Conv2d(3, 4, 3)

        def fuse(self):
            k, b = fuse_bn(self.conv, self.bn)
            self.fused.weight.data = k * scale(Config())
            self.fused.bias.data = b

        def forward(self, x):
            self.fuse()
            return self.fused(x)
""")


def test_reads_go_through_the_accessor():
    code = convert_source(SOURCE).code
    assert "mp_adapt.layer_attribute(bn, 'running_var')" in code
    assert "mp_adapt.layer_attribute(bn, 'weight')" in code
    assert "def forward" not in code and "self.fused(x)" in code


def test_the_port_matches(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    import torch

    source = SOURCE.replace("self.bn = nn.BatchNorm2d(4)",
                            "self.bn = nn.BatchNorm2d(4)\n        self.bn.running_var.uniform_(0.5, 2.0)\n"
                            "        self.bn.running_mean.normal_()\n        self.bn.weight.data.normal_()")
    torch.manual_seed(0)
    assert_port_matches_in_mode(source, convert_source(source).code, "Fused", [x], tmp_path, "unknown_reads",
                                "pynative", atol=1e-5)


def test_torch_imported_only_in_a_function_still_counts_as_torch_code():
    """The file imports mindspore at module level and torch only inside a function: still torch code (the reads
    convert); a file importing mindspore and no torch anywhere is MindSpore code (our own output: left alone)."""
    body = SOURCE.replace("import torch\nimport torch.nn as nn\n", "import mindspore\n\n\ndef load():\n"
                          "    import torch\n    import torch.nn as nn\n    return nn\n")
    assert "mp_adapt.layer_attribute(bn, 'running_var')" in convert_source(body).code
    ms_only = "import mindspore\n\n\ndef fuse_bn(conv, bn):\n    return bn.running_var\n"
    assert "layer_attribute" not in convert_source(ms_only).code


CHAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(10, 6)
            self.norm = nn.LayerNorm(6)

        def forward(self, x):
            return self.norm(self.embedding(x))


    class Body(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()
            self.blocks = nn.ModuleList([nn.BatchNorm1d(6)])

        def forward(self, x):
            return self.decoder(x)


    class LMHead(nn.Module):
        def __init__(self, body):
            super().__init__()
            vocab, width = body.decoder.embedding.weight.size()
            self.body = body
            self.linear = nn.Linear(width, vocab, bias=False)
            self.linear.weight = body.decoder.embedding.weight
            self.shift = nn.Parameter(body.blocks[0].weight.detach() * 0 + body.decoder.norm.bias.detach())

        def forward(self, x):
            return self.linear(self.body(x) + self.shift)


    class Model(LMHead):
        def __init__(self):
            super().__init__(Body())
""")


def test_a_layer_reached_through_a_passed_in_model_reads_by_its_class(tmp_path):
    """gpt-pytorch's ``GPTLMHead(gpt)``: ``gpt.decoder.embedding.weight`` on a model passed to the constructor is the
    Embedding's ``embedding_table`` (tied to the head's Linear); on main it raised AttributeError ('weight')."""
    code = convert_source(CHAIN).code
    assert "mp_adapt.layer_attribute(body.decoder.embedding, 'weight')" in code
    assert "mp_adapt.layer_attribute(body.blocks[0], 'weight')" in code
    x = np.array([[1, 2, 3, 9], [0, 4, 4, 7]], dtype=np.int64)
    import torch

    torch.manual_seed(0)
    assert_port_matches_in_mode(CHAIN, code, "Model", [x], tmp_path, "chain_reads", "pynative", atol=1e-5)
