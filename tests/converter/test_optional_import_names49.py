"""A name bound only by a guarded import of a torch-based package (dinov2's ``try: from xformers.ops import unbind``
/ ``except ImportError: XFORMERS_AVAILABLE = False``), read in forward after an early return on the fallback flag.
The conversion makes the import raise (the fallback runs under MindSpore), so the name is bound nowhere in the port,
and GRAPH_MODE, which resolves every name of a method it compiles, refused it ("The name 'unbind' is not defined":
dinov2/vit_mlp and vit_swiglu once their BlockChunk compiled). UnboundNameTransform takes such a name as unbound:
the line raises NameError, as torch does without the package. The port matches torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    try:
        from xformers.ops import unbind
        FAST = True
    except ImportError:
        FAST = False


    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(4, 12)

        def forward(self, x):
            qkv = self.qkv(x).reshape(x.shape[0], 3, 4)
            if not FAST:
                return qkv.sum(1)
            q, k, v = unbind(qkv, 1)
            return q * k + v
""")


def test_optional_import_name_raises():
    code = convert_source(SOURCE).code
    assert """raise NameError("name 'unbind' is not defined")""" in code, code
    assert "bound only by a torch-based package's import" in code
    assert "# q, k, v = unbind(qkv, 1)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_optional_import_name_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Attn", [x], tmp_path, "optional49", mode, atol=1e-6)
