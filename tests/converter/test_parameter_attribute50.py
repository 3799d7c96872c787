"""A Python attribute set on a Parameter and read in forward (fix50; MAML / learn2learn "fast weights", met in
easezyc/Multitask-Recommendation-Library's Meta_Linear/Meta_Embedding: ``self.weight.fast = None`` in ``__init__``,
``weight.fast = weight - lr * grad`` by the outer loop over ``parameters()``, ``if self.weight.fast is not None:
F.linear(x, self.weight.fast, self.bias.fast)`` in forward). The class: MindSpore's static graph sees a Parameter as
a tensor and has none of its Python attributes; measured on MindSpore 2.10: ``self.weight.fast`` fails to compile
("'Parameter' object has no attribute 'fast'"), ``getattr(self.weight, 'fast', None)`` compiles and reads None
whatever was set (a silent wrong answer), a Cell property reading it the same. No rewrite reaches the value the
outer loop sets on the Parameter object, so the read keeps its torch meaning (PyNative runs it, the same numbers)
and the conversion says MP107 at the read, once per method and attribute name."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearFW(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.weight.fast = None
        self.bias.fast = None

    def forward(self, x):
        if self.weight.fast is not None and self.bias.fast is not None:
            out = F.linear(x, self.weight.fast, self.bias.fast)
        else:
            out = super().forward(x)
        return out


def set_fast(model, scale):
    for weight in model.parameters():
        weight.fast = weight * scale
'''


def test_a_parameters_attribute_read_in_forward_is_said_and_runs_in_pynative(tmp_path):
    import mindspore as ms

    result = convert_source(SOURCE, "layers.py")
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "self.weight.fast" in said[0].message and said[0].line == 14, \
        [d.format() for d in result.diagnostics]
    t = load_module(SOURCE, tmp_path / "t_fast50.py", "t_fast50")
    m = load_module(result.code, tmp_path / "m_fast50.py", "m_fast50")
    torch.manual_seed(0)
    tl = t.LinearFW(5, 3)
    ml = m.LinearFW(5, 3)
    ml.weight.set_data(ms.Tensor(tl.weight.detach().numpy()))
    ml.bias.set_data(ms.Tensor(tl.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    np.testing.assert_allclose(ml(ms.Tensor(x)).asnumpy(), tl(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    t.set_fast(tl, 0.5)
    m.set_fast(ml, 0.5)
    expected = tl(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(ml(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    # what the MP107 says: a static graph refuses the read (were it ever to compile, the flag should go)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(AttributeError, match="has no attribute 'fast'"):
            m.LinearFW(5, 3)(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_a_tensors_own_attribute_and_a_sub_layers_attribute_are_not_said():
    source = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc.scale = 2.0
        self.weight = nn.Parameter(torch.ones(4))
        self.weight.requires_grad = False

    def forward(self, x):
        return self.fc(x) * self.fc.scale * self.weight.shape[0] + self.weight.requires_grad
'''
    result = convert_source(source, "net.py")
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
