"""``filter(lambda p: p.requires_grad, net.parameters())`` (akamaster/pytorch_resnet_cifar10's parameter count): the
lambda's parameter is a Parameter at every call (an item of ``.parameters()``), whose ``requires_grad`` MindSpore's
Parameter has as torch's does: the flag read as it is (ObjectSurfaceTransform._lambda_parameter,
object_surface.parameter_items_lambda) instead of ``mp_tensor.requires_grad``, which decides at run time for a value
that may be a plain tensor. Another name's flag in such a lambda, or a nested lambda's own parameter, keeps the
runtime's. The converted function counts as torch's does (one Parameter frozen)."""
from __future__ import annotations

import textwrap

from mindport.migrator import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.head = nn.Linear(4, 2)
            self.head.bias.requires_grad_(False)

        def forward(self, x):
            return self.head(self.fc(x))


    def count(net, w):
        trainable = len(list(filter(lambda p: p.requires_grad, net.parameters())))
        matrices = len(list(filter(lambda p: p.requires_grad and len(p.data.size()) > 1, net.parameters())))
        other = len(list(filter(lambda p: w.requires_grad, net.parameters())))
        return trainable, matrices, other
""")


def test_a_parameters_lambda_reads_the_flag_natively_and_counts_as_torch(tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    assert "lambda p: p.requires_grad" in code and "lambda p: p.requires_grad and" in code, code
    assert code.count("mp_tensor.requires_grad(") == 1 and "mp_tensor.requires_grad(w)" in code, code
    t = load_module(SOURCE, tmp_path / "t_count.py", "t_count")
    m = load_module(code, tmp_path / "m_count.py", "m_count")
    want = t.count(t.Net(), torch.zeros(2))
    got = m.count(m.Net(), ms.Tensor([0.0, 0.0]))
    assert got == want == (3, 2, 0), (got, want)
