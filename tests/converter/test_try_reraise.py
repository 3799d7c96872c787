"""A ``try`` in forward whose handler prints and re-raises (Wav2Lip's decoder around ``torch.cat``): GRAPH_MODE has no
``try`` statement, so the converter keeps the body (TryReraiseTransform); the port matches torch in PyNative and
compiled. Handlers that recover are left as written."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import logging

    import torch
    import torch.nn as nn

    logger = logging.getLogger(__name__)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Conv2d(4, 2, 1), nn.Conv2d(4, 2, 1)])

        def forward(self, x):
            feats = [x[:, :2], x[:, 2:]]
            x = x[:, :2]
            for f in self.blocks:
                try:
                    x = torch.cat((x, feats[-1]), dim=1)
                except Exception as e:
                    print(x.shape)
                    logger.error("shapes %s", feats[-1].shape)
                    raise e
                else:
                    x = f(x)
                feats = feats[:-1]
            return x
""")


def test_reporting_try_is_its_body():
    code = convert_source(SOURCE).code
    assert "try:" not in code and "raise e" not in code and "x = f(x)" in code


def test_recovering_handlers_are_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                try:
                    y = x.relu()
                except RuntimeError as e:
                    raise ValueError("bad") from e
                try:
                    z = x + 1
                except Exception:
                    z = x
                    raise
                try:
                    w = x * 2
                finally:
                    print("done")
                return y, z, w
    """)
    assert convert_source(source).code.count("try:") == 3


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_reporting_try_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Decoder", [x], tmp_path, "reraise", mode, atol=1e-5)
