"""Issue 30 (native ports): a layer built through a module-level ``functools.partial`` of a torch layer class
(``LinearNoBias = partial(nn.Linear, bias=False)``, x-transformers' ``self.combine_mixture = LinearNoBias(dim, k)``)
is a layer of that class for native_facts (``FileFacts.partials``, ``ClassFacts.partial_layer``): a softmax of its
output is MindSpore's own ``ops.softmax`` as for ``nn.Linear`` itself. On main such a softmax kept the runtime's
``mp_F.softmax``. A name rebound elsewhere in the file (``Proj = partial(...)`` then ``Proj = make``), a partial of
something that is not a layer class, and a ``partial`` that is not ``functools.partial`` keep the runtime softmax.
The native form is compared with torch in PyNative and GRAPH_MODE; the kept ones on a row of all ``-inf``."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    from functools import partial
    import functools
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    LinearNoBias = partial(nn.Linear, bias=False)
    Proj = functools.partial(nn.Linear, bias=True)
    Rebound = partial(nn.Linear, bias=False)
    Rebound = partial(nn.Identity)


    def shift(dim, k):
        return nn.Identity()


    Shifted = partial(shift, k=1)


    class Mixture(nn.Module):
        def __init__(self, dim=8, k=4):
            super().__init__()
            self.combine = LinearNoBias(dim, k)
            self.proj = Proj(dim, k)

        def forward(self, x):
            a = self.combine(x).softmax(dim=-1)
            b = F.softmax(self.proj(x), dim=-1)
            return a, b


    class KeptRebound(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.fc = Rebound(dim)

        def forward(self, x):
            return F.softmax(self.fc(x), dim=-1)


    class KeptShifted(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.fc = Shifted(dim)

        def forward(self, x):
            return F.softmax(self.fc(x), dim=-1)
""")


def _class_code(code: str, name: str) -> str:
    return code.split(f"class {name}")[1].split("\nclass ")[0]


def test_softmax_of_a_partial_layer_is_native():
    code = convert_source(SOURCE).code
    body = _class_code(code, "Mixture")
    assert body.count("ops.softmax(") == 2 and "mp_F.softmax" not in body, body
    for name in ("KeptRebound", "KeptShifted"):
        assert "mp_F.softmax(" in _class_code(code, name), code


def test_partial_layer_softmax_matches_torch(tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(30).standard_normal((2, 5, 8)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "Mixture", [x], tmp_path, f"mix_{mode}", mode, rtol=1e-4, atol=1e-6)


def test_kept_runtime_softmax_matches_torch_on_a_row_of_minus_inf(tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(31).standard_normal((3, 4, 8)).astype(np.float32)
    x[1, 2, :] = -np.inf
    assert_port_matches_in_mode(SOURCE, code, "KeptRebound", [x], tmp_path, "rebound", "pynative")
    assert_port_matches_in_mode(SOURCE, code, "KeptShifted", [x], tmp_path, "shifted", "pynative")
