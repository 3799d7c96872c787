"""A helper of another file of the project that writes into the tensor its caller hands it (former's
``util.mask_(dot, maskval=-inf)``, called from every attention block of ``modules.py``): a static graph (GRAPH_MODE)
drops the write into the caller's tensor, so every block's attention came out unmasked, with no error (pbloem/former
first contact: 3 models "GRAPH_MODE outputs differ from PyNative"). The project's facts name such helpers
(project.argument_writers, ArgumentWriteTransform's own plan on their file): the helper returns what it writes and
each call in another file binds it again. Expected values come from torch."""
from __future__ import annotations

import shutil
import sys
import textwrap

import numpy as np
import pytest

UTIL = textwrap.dedent("""\
    import torch


    def mask_(matrices, maskval=0.0, mask_diagonal=True):
        h, w = matrices.size(-2), matrices.size(-1)
        indices = torch.triu_indices(h, w, offset=0 if mask_diagonal else 1)
        matrices[..., indices[0], indices[1]] = maskval


    def scale_(t, by):
        t.mul_(by)


    def twice(a):
        a.add_(1.0)
        return a * 2
""")

MODEL = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    from .util import mask_, scale_ as rescale_, twice


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.k = nn.Linear(4, 4)

        def forward(self, x):
            dot = torch.bmm(self.q(x), self.k(x).transpose(1, 2))
            mask_(dot, maskval=float('-inf'), mask_diagonal=False)
            rescale_(dot, 0.5)
            return F.softmax(dot, dim=2)
""")


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    from mindport.migrator.repo import convert_path

    root = tmp_path_factory.mktemp("imported_writers")
    src = root / "src" / "attn"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "util.py").write_text(UTIL)
    (src / "model.py").write_text(MODEL)
    convert_path(root / "src", root / "conv", jobs=1)
    shutil.copytree(src, root / "t_attn")
    shutil.copytree(root / "conv" / "attn", root / "m_attn")
    return root


def test_the_helper_gives_back_what_it_writes_and_each_caller_binds_it(trees):
    util = (trees / "m_attn" / "util.py").read_text()
    model = (trees / "m_attn" / "model.py").read_text()
    assert "return matrices" in util and "return t" in util, util
    assert "return a * 2" in util and "return a\n" not in util, util  # returns a value: left as written
    assert "dot = mask_(dot, maskval=float('-inf'), mask_diagonal=False)" in model, model
    assert "dot = rescale_(dot, 0.5)" in model, model


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_masked_attention_matches_torch(trees, mode):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    sys.path.insert(0, str(trees))
    try:
        from m_attn.model import Attention as MsAttention
        from t_attn.model import Attention as TorchAttention
    finally:
        sys.path.remove(str(trees))
    torch.manual_seed(0)
    t_net = TorchAttention().eval()
    m_net = MsAttention()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    assert np.triu(want[0], 1).max() == 0.0  # torch's attention is masked
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = m_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
