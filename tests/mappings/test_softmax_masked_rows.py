"""MindSpore 2.10's CPU Softmax kernel gives *other* rows wrong values, silently, when one row is all ``-inf`` (a fully
masked query of padded attention: NaViT's attention pooling was 76 off with inputs that agreed). Every torch softmax
form is converted to mindport's written-out softmax; this differential test runs each form over shapes, dims and
dtypes with fully masked rows and compares with torch (NaN where torch gives NaN), and attention with fully masked
queries (0 there, as torch's attention gives)."""
from __future__ import annotations

import numpy as np
import pytest

from test_snippet_fixes import run_both

FORMS = {
    "functional": "F.softmax(x, dim={dim})",
    "torch": "torch.softmax(x, {dim})",
    "special": "torch.special.softmax(x, {dim})",
    "method": "x.softmax(dim={dim})",
    "layer": "nn.Softmax(dim={dim})(x)",
    "functional_dtype": "F.softmax(x, dim={dim}, dtype=torch.float64)",
}

def _literal(array) -> str:
    return repr(array.tolist()).replace("inf", "np.inf")


SHAPES = [((16, 24), -1), ((2, 4, 2, 24), -1), ((3, 5, 7), 1), ((8, 2, 24), 2), ((4, 9), 0)]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_with_fully_masked_rows_matches_torch(form, shape, dim, dtype):
    rng = np.random.default_rng(abs(hash((form, shape, dtype))) % 2**32)
    x = rng.standard_normal(shape).astype(dtype)
    moved = np.moveaxis(x, dim, -1)  # a view: masks along the softmax axis
    index = np.ndindex(*moved.shape[:-1])
    for n, position in enumerate(index):
        if n % 3 == 1:
            moved[position] = -np.inf  # a fully masked row
        elif n % 3 == 2:
            moved[position][: moved.shape[-1] // 2] = -np.inf  # half masked
    program = (
        "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        f"x = torch.from_numpy(np.array({_literal(x)}, dtype=np.{dtype}))\n"
        f"y = {FORMS[form].format(dim=dim)}\n"
    )
    run_both(program, ["y"], rtol=1e-5, atol=1e-7)


def test_attention_with_fully_masked_queries_matches_torch():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 4, 2, 16), (2, 4, 24, 16), (2, 4, 24, 16)))
    mask = np.zeros((2, 1, 2, 24), dtype=bool)
    mask[0, 0, 0, :16] = mask[0, 0, 1, 16:] = True
    mask[1, 0, 0, :8] = True  # batch 1, query 1: fully masked
    arrays = {"q": q, "k": k, "v": v, "m": mask}
    lines = "".join(f"{n} = torch.from_numpy(np.array({_literal(a)}, dtype=np.{'bool_' if a.dtype == bool else a.dtype}))\n"
                    for n, a in arrays.items())
    program = ("import numpy as np\nimport torch\nimport torch.nn.functional as F\n" + lines
               + "y = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=1.0)\n")
    run_both(program, ["y"], rtol=1e-5, atol=1e-6)
