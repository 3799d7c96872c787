"""An einops import the file reads nowhere (imports.py, _drop_written_out_einops): lucidrains' segformer imports
``from einops.layers.torch import Rearrange`` and never names it; the converter moved the import to
``mindport.runtime.einops_layers``, the port's one import of mindport once every site was MindSpore's own. A name
layer read nowhere, in no code and no string (``__all__``), goes, as a name whose every use was written out already
did; one the file names (a read, ``__all__``) stays, and so does an unused einops function (einops' own import). Values against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from einops import rearrange, repeat
    from einops.layers.torch import Rearrange, Reduce


    class Tokens(nn.Module):
        def __init__(self, dim=12):
            super().__init__()
            self.proj = nn.Linear(3, dim)

        def forward(self, x):
            x = rearrange(x, 'b c h w -> b (h w) c')
            return self.proj(x)
""")

LISTED = textwrap.dedent("""
    import torch.nn as nn
    from einops.layers.torch import Rearrange, Reduce

    __all__ = ['Rearrange', 'Net']


    class Net(nn.Module):
        def forward(self, x):
            return x
""")


def test_unread_einops_names_go():
    code = convert_source(SOURCE).code
    assert "mindport" not in code, code
    assert "einops.layers" not in code and "Rearrange" not in code and "Reduce" not in code, code
    assert "from einops import repeat" in code, code  # an unused function stays einops' (no mindport)
    listed = convert_source(LISTED).code
    assert "import Rearrange\n" in listed, listed  # __all__ names it
    assert "Reduce" not in listed, listed


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_unread_einops_port_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Tokens", [x], tmp_path, "unread_einops", mode, atol=1e-5)
