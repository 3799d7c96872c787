"""An in-place update of an indexed view as a statement (NCSNv2: ``self.embed.weight.data[:, :n].normal_(1, 0.02)``,
``...data[:, n:].zero_()``): indexing a MindSpore tensor makes a copy, so the converted statement updates the copy
and assigns it back. The parameter itself must hold torch's values (deterministic ops compared exactly, random
ones by their bounds and moments)."""
from __future__ import annotations

import textwrap

import numpy as np
import torch

from mindport import convert_source

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Norm(nn.Module):
        def __init__(self, num_features, num_classes):
            super().__init__()
            self.embed = nn.Embedding(num_classes, num_features * 3)
            self.fc = nn.Linear(4, 6)
            self.embed.weight.data[:, :2 * num_features].normal_(1, 0.02)
            self.embed.weight.data[:, 2 * num_features:].zero_()
            self.fc.weight.data[0].fill_(2.0)
            self.fc.bias.data[1:].uniform_(-0.5, -0.25)
            self.fc.weight.data[1:3, ::2].add_(10.0)

        def forward(self, y):
            return self.embed(y)


    def run():
        torch.manual_seed(0)
        m = Norm(16, 10)
        scale = m.embed.weight[:, :32]
        w = m.fc.weight
        return (m.embed.weight[:, 32:], w[0], w[1:3, ::2] - 10.0, w[1:3, 1::2], w[3:], m.fc.bias[:1],
                scale, m.fc.bias[1:])
""")


def _values(out):
    return [o.detach().numpy() if hasattr(o, "detach") else o.asnumpy() for o in out]


def test_the_statement_writes_into_the_parameter(tmp_path):
    result = convert_source(SOURCE, "norm.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "] = mp_inplace.normal_(" in result.code, result.code
    t_ns: dict = {}
    exec(compile(SOURCE, "norm_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    m_ns: dict = {}
    exec(compile(result.code, "norm_ms.py", "exec"), m_ns)  # noqa: S102 - its conversion
    t_out, m_out = _values(t_ns["run"]()), _values(m_ns["run"]())
    # zero_, fill_ and add_ are deterministic: exact; the untouched rest is the layer's own random init
    np.testing.assert_array_equal(m_out[0], np.zeros((10, 16), np.float32))
    np.testing.assert_array_equal(m_out[1], np.full(4, 2.0, np.float32))
    assert np.abs(m_out[2]).max() < 1.0 and np.abs(m_out[3]).max() < 1.0  # the +10 landed on the view only
    for t, m in zip(t_out[:5], m_out[:5]):
        assert t.shape == m.shape
    # normal_(1, 0.02) and uniform_(-0.5, -0.25): the parameter holds the drawn values, not the layer's init
    scale = m_out[6]
    assert abs(scale.mean() - 1.0) < 0.01 and abs(scale.std() - 0.02) < 0.005
    assert m_out[7].min() >= -0.5 and m_out[7].max() <= -0.25
    assert t_out[6].shape == scale.shape


def test_a_value_read_from_the_update_is_still_flagged():
    source = "import torch\n\n\ndef f(w: torch.Tensor):\n    return w[0].add_(1)\n"
    result = convert_source(source, "f.py")
    assert [d.code for d in result.diagnostics] == ["MP102"]


CHAINED = '''
import torch


def f(x, lengths):
    mask = x.new().resize_as_(x).fill_(0)
    for i in range(x.size(0)):
        mask[i][lengths[i] - 1].fill_(1)
        mask[i][0].add_(2)
        mask[i][1:3].mul_(3)
    return mask
'''


def test_in_place_update_of_a_chained_index_is_written_back():
    """Cadene vqa.pytorch's ``mask[i][lengths[i] - 1].fill_(1)``: a view of a view in torch; the in-place update is
    written back into ``mask[i, lengths[i] - 1]`` (it was flagged MP102 and crashed on MindSpore's kernel-less
    InplaceFillScalar). Compared with torch."""
    import mindspore as ms
    import numpy as np
    import torch

    from mindport import convert_source

    result = convert_source(CHAINED, "chained.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "mask[i, lengths[i] - 1] = " in result.code, result.code
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(CHAINED, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    x = np.ones((3, 5), dtype=np.float32)
    lengths = np.array([2, 5, 3], dtype=np.int64)
    want = t_ns["f"](torch.from_numpy(x), torch.from_numpy(lengths)).numpy()
    np.testing.assert_array_equal(m_ns["f"](ms.Tensor(x), ms.Tensor(lengths)).asnumpy(), want)
