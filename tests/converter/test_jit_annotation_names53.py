"""``from torch.jit.annotations import List`` (timm's densenet: ``def bn_function(self, inputs: List[torch.Tensor])``)
had no mapping entry (MP104): the converted file kept ``import torch`` for its annotations, so the port needed torch
installed. torch.jit.annotations re-exports typing's generics; the entries name them (mindport.runtime.math's
``jit_List`` ... are typing's own objects). The converted module imports no torch and matches torch's numbers."""
from __future__ import annotations

import textwrap
import typing

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    from torch import nn
    from torch.jit.annotations import Dict, List, Optional, Tuple


    class Dense(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(6, 3, 1)

        def joined(self, xs: List[torch.Tensor], extra: Optional[torch.Tensor] = None) -> torch.Tensor:
            out = torch.cat(xs, 1)
            return out if extra is None else out + extra

        def forward(self, x):
            pair: Tuple[torch.Tensor, torch.Tensor] = (x, x * 2)
            named: Dict[str, torch.Tensor] = {"a": pair[0]}
            return self.conv(self.joined([named["a"], pair[1]]))
""")


def test_the_annotations_need_no_torch():
    result = convert_source(SOURCE)
    assert "torch" not in result.code.replace("mindport", ""), result.code
    assert not [d for d in result.diagnostics if d.code == "MP104"], result.diagnostics
    from mindport.runtime import math as mp_math

    assert (mp_math.jit_List, mp_math.jit_Dict, mp_math.jit_Tuple, mp_math.jit_Optional) == (
        typing.List, typing.Dict, typing.Tuple, typing.Optional)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_dense_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Dense", [x], tmp_path, "dense", mode,
                                rtol=1e-5, atol=1e-5)
