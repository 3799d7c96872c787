"""A size built as a list in one file reaching a MindSpore layer in another (batch 7's EfficientDet, effdet/d0:
``BlockArgs(..., stride=[int(options['s'][0])])`` in ``utils.py``, read as ``s = self._block_args.stride`` in
``model.py`` and handed as ``Conv2d(stride=s)`` through a factory to the wrapper class of ``utils_extra.py``, whose
``nn.Conv2d(..., stride=stride)`` MindSpore refused: "When expanding an int number to tuple, input type must be
integer or tuple[int], but got list"). ``mindport.migrator.project.list_names`` reads, across the project's files,
the names it binds to a list (a namedtuple's field, a config attribute, a dict key, a keyword of the project's own
calls, and what is read from those); a size given by a parameter or a local read from such a name is written to take
either, and the setting torch's layer keeps for it (``(2,)`` for ``[2]``, which EfficientNet expands and compares to
``[2, 2]``) is recorded on the converted layer. A tree of our own, converted with ``convert_path`` and run in both
frameworks."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_path
from mindport.migrator.project import list_names, parse_files
from mindport.migrator.weights import transfer_weights
from test_star_imports import _import, _write

TREE = {
    "net/__init__.py": "",
    "net/config.py": """\
        import collections

        BlockArgs = collections.namedtuple("BlockArgs", ["kernel_size", "stride", "channels"])
        SETTINGS = {"window": [3]}


        def decode(text):
            # 'k3s2c8': kernel 3, stride 2, 8 channels; the stride kept as a list, as EfficientNet's decoder does
            return BlockArgs(kernel_size=int(text[1]), stride=[int(text[3])], channels=int(text[5:]))
    """,
    "net/layers.py": """\
        import torch.nn as nn


        class SameConv(nn.Module):
            def __init__(self, cin, cout, kernel_size, stride=1, bias=True):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, kernel_size, stride=stride, padding=kernel_size // 2, bias=bias)
                self.stride = self.conv.stride  # torch: (2,) for stride=[2], which EfficientNet expands itself
                if len(self.stride) == 1:
                    self.stride = [self.stride[0]] * 2

            def forward(self, x):
                return self.conv(x)


        class Pool(nn.Module):
            def __init__(self, window):
                super().__init__()
                self.pool = nn.MaxPool2d(kernel_size=window, stride=1)

            def forward(self, x):
                return self.pool(x)


        def conv_factory(bias):
            return SameConv if bias else SameConv
    """,
    "net/model.py": """\
        import torch.nn as nn

        from net.config import SETTINGS, decode
        from net.layers import Pool, conv_factory


        class Net(nn.Module):
            def __init__(self, specs=("k3s2c8", "k1s1c4")):
                super().__init__()
                Conv = conv_factory(True)
                blocks, cin = [], 3
                for spec in specs:
                    args = decode(spec)
                    s = args.stride
                    blocks.append(Conv(cin, args.channels, kernel_size=args.kernel_size, stride=s))
                    cin = args.channels
                self.blocks = nn.Sequential(*blocks)
                self.pool = Pool(window=SETTINGS["window"])

            def forward(self, x):
                return self.pool(self.blocks(x))
    """,
}


def test_the_names_a_project_binds_to_lists_are_read_across_its_files(tmp_path):
    _write(tmp_path, TREE)
    found = list_names(parse_files(tmp_path, sorted(TREE)))
    assert {"stride", "window"} <= found  # a namedtuple's keyword; a dict key handed on as a keyword
    assert not {"kernel_size", "channels", "cin", "bias"} & found  # ints: no list reaches them


@pytest.mark.parametrize("specs", [("k3s2c8", "k1s1c4"), ("k3s1c4",)])
def test_a_list_size_from_another_file_converts_and_matches(tmp_path, specs):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, TREE)
    convert_path(src, out, jobs=1)
    layers = (out / "net/layers.py").read_text()
    assert "stride=((stride[0] if len(stride) == 1 else tuple(stride)) if isinstance(stride, list) else stride)" \
        in layers, layers
    torch.manual_seed(0)
    t_net = _import(src, "net.model", ("net",)).Net(specs).eval()
    m_net = _import(out, "net.model", ("net",)).Net(specs)
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    got = m_net(ms.Tensor(x)).asnumpy()
    # the size torch's layer keeps for a one-element list ((2,)) is the converted layer's too: [2, 2] after expansion
    assert [m_net.blocks[i].stride for i in range(len(specs))] == [block.stride for block in t_net.blocks]
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
