"""Python's ``math`` functions of sizes in a model's methods compile in GRAPH_MODE and give torch's numbers. A graph
ran ``math.sqrt(tokens.shape[1])`` through its JIT Fallback: an interpreted result, a tensor reshaped with it one too,
and the next layer's ``b, n, _, h = *x.shape, heads`` failed ("The starred unpack merge input must be sequence, but
got AbstractAny": vit-pytorch's PiT, trials entry vit/pit). A call read from the module, ``math.sqrt(n)``, is compiled
by the graph itself (measured on 2.10 for every function of MathCallTransform's list: /tmp/native27/mc4.py in
native27's write-up), so MathCallTransform writes a bare ``sqrt`` as ``math.sqrt`` (adding ``import math`` when the
file has none) and leaves ``math.sqrt`` alone: no ``mindport.runtime`` (issue 30). The slice: PiT's pooling (``from
math import sqrt``, in a lambda) followed by a layer unpacking the shape, ``import math`` with
``log``/``ceil``/``floor``/``pow`` of sizes as a scale; the same model with only ``from math import ...`` names; both
modes vs torch's own outputs. Where ``math`` names something else, ``mp_graph_safe.math_call`` stays (code check)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

POOL = textwrap.dedent("""\
    import math
    from math import sqrt

    import torch
    import torch.nn as nn


    class Attend(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = 2
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            b, n, _, h = *x.shape, self.heads
            scale = math.log(n) + math.ceil(n / 3) - math.floor(math.pow(h, 1.5))
            return self.proj(x).reshape(b, n, h, -1).sum(-1) * scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.attend = Attend()

        def forward(self, tokens):
            grid = (lambda t, g: t.reshape(t.shape[0], g, t.shape[1] // g, t.shape[2]))(tokens, int(sqrt(tokens.shape[1])))
            side = int(math.sqrt(grid.shape[1] * grid.shape[2]))
            x = grid.reshape(grid.shape[0], side * side, -1)
            return self.attend(x)
""")


# the same model with the functions imported by name only: the file binds no ``math``
BARE = POOL.replace("import math\nfrom math import sqrt\n", "from math import ceil, floor, log, pow, sqrt\n").replace(
    "math.", "")

# ``math`` is another module here: the bare ``sqrt`` cannot be written ``math.sqrt``
SHADOWED = POOL.replace("import math\nfrom math import sqrt\n", "import cmath as math\nfrom math import sqrt\n")


def test_the_calls_are_read_from_the_module():
    code = convert_source(POOL).code
    assert "int(math.sqrt(tokens.shape[1]))" in code, code
    assert "math.log(n) + math.ceil(n / 3) - math.floor(math.pow(h, 1.5))" in code
    assert "mindport" not in code.replace("mp_math.sum", "").replace("from mindport.runtime import math as mp_math", "")
    assert "math_call" not in code
    bare = convert_source(BARE).code
    assert "\nimport math\n" in bare and "int(math.sqrt(tokens.shape[1]))" in bare and "math.pow(h, 1.5)" in bare, bare
    assert "math_call" not in bare
    shadowed = convert_source(SHADOWED).code
    assert "mp_graph_safe.math_call(sqrt, tokens.shape[1])" in shadowed, shadowed


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("source", ["pool", "bare"])
def test_math_calls_match_torch(tmp_path, mode, source):
    src = {"pool": POOL, "bare": BARE}[source]
    x = np.random.default_rng(0).standard_normal((2, 16, 4)).astype(np.float32)
    assert_port_matches_in_mode(src, convert_source(src).code, "Net", [x], tmp_path, source, mode, atol=1e-5)
