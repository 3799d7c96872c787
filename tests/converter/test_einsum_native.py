"""``torch.einsum`` with a literal equation that is one batched matrix product is written as MindSpore's own
``ops.matmul``/``ops.outer`` (a matrix on an inner axis: ``ops.movedim`` around ``ops.matmul``) at conversion time (mindport/migrator/einsum_native.py); other equations keep the
runtime einsum; native28 added a matmul between ``ops.permute``s (two free labels of one operand, batch labels in
another order) and the broadcast product of an equation that sums nothing (of two or three operands). Each converted program is run against torch (real torch, real MindSpore), PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

# equation, shapes of the two operands, native (True) or the runtime einsum (False)
CASES = [
    ("b h i d, b h j d -> b h i j", (2, 3, 4, 5), (2, 3, 6, 5), True),
    ("b h i j, b h j d -> b h i d", (2, 3, 4, 6), (2, 3, 6, 5), True),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5), True),
    ("b i d, b j d -> b j i", (2, 3, 4), (2, 5, 4), True),
    ("b d i, b j d -> b i j", (2, 4, 3), (2, 5, 4), True),
    ("bnd,de->bne", (2, 3, 4), (4, 5), True),
    ("bnd,ed->bne", (2, 3, 4), (5, 4), True),
    ("...nd,...md->...nm", (2, 3, 4, 5), (2, 3, 6, 5), True),
    ("i , j -> i j", (4,), (5,), True),
    ("b h i j, h g -> b g i j", (2, 3, 4, 5), (3, 6), True),  # a matrix on an inner axis (cait's talking heads)
    ("b h i j, g h -> b g i j", (2, 3, 4, 5), (6, 3), True),
    ("b i h j, h g -> b i g j", (2, 4, 3, 5), (3, 6), True),
    ("h n l, h g -> g n l", (3, 4, 5), (3, 2), True),
    ("... h d, h g -> ... g d", (2, 3, 4), (3, 5), False),  # "..." not leading every term: the runtime's
    ("b h i j, h g -> b i j g", (2, 3, 4, 5), (3, 6), True),  # the new axis elsewhere: permuted (native28)
    ("b h i j, b j d -> b h i d", (2, 3, 4, 6), (2, 6, 5), True),  # v lacks h: a size-1 axis, broadcast
    ("b h i d, b j d -> b h i j", (2, 3, 4, 5), (2, 6, 5), True),
    ("b i d, b h j d -> b h i j", (2, 4, 5), (2, 3, 6, 5), True),
    ("b h i d, h j d -> b h i j", (2, 3, 4, 5), (3, 6, 5), True),
    ("b h i d, j d -> b h i j", (2, 3, 4, 5), (6, 5), True),
    ("b h i d, h b j d -> b h i j", (2, 3, 4, 5), (3, 2, 6, 5), True),  # batch labels in another order: permuted
    ("abc,ac->ab", (2, 3, 4), (2, 4), True),  # a matrix times a vector (mamba-minimal's scan)
    ("b h i j, b j -> b h i", (2, 3, 4, 5), (2, 5), True),
    ("bij,bi->bj", (2, 3, 4), (2, 3), True),
    ("ij,j->i", (3, 4), (4,), True),
    ("abc,ac->ba", (2, 3, 4), (2, 4), False),  # the result's axes in another order
    ("bhwc,hkc->bhwk", (2, 3, 4, 5), (3, 6, 5), True),  # h shared, b lacked by the second: broadcast (native25)
    ("bd,bd->b", (2, 3), (2, 3), False),
    # native28: two free labels of one operand, permuted around the matmul (einsum_native._permuted)
    ("b h i j, b h j w d -> b h i w d", (2, 3, 4, 5), (2, 3, 5, 6, 7), True),  # SepViT's windows
    ("b w i j, b j d -> b i w d", (2, 3, 4, 5), (2, 5, 6), True),
    ("ij,jk->k", (3, 4), (4, 5), False),  # i summed out of one operand alone: the runtime's
    # a product that sums nothing: the broadcast product (einsum_native.broadcast_product)
    ("abc,cd->abcd", (2, 3, 4), (4, 5), True),  # Mamba's discretisation
    ("bi,bj->bji", (2, 3), (2, 4), True),
    # '...' in terms naming different numbers of axes: matmul would align w's '...' with x's b (einsum49, silent
    # where the sizes agree: mixture-of-experts' hierarchical gating); the runtime's
    ("...bnd,...de->...bne", (3, 3, 4, 5), (3, 5, 6), False),
    ("...hij,...hg->...gij", (2, 3, 4, 5), (2, 3, 6), False),
    ("...nd,...dh->...nh", (3, 4, 5), (3, 5, 6), True),  # as many axes named: the '...' line up
]


def _source(equation: str) -> str:
    return textwrap.dedent(f"""
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, a, b):
                return torch.einsum({equation!r}, a, b)
    """)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("equation,shape_a,shape_b,native", CASES, ids=[c[0] for c in CASES])
def test_einsum_of_one_matrix_product_is_native_and_matches(equation, shape_a, shape_b, native, mode, tmp_path):
    source = _source(equation)
    result = convert_source(source)
    assert not result.diagnostics, result.diagnostics
    assert ("einsum" not in result.code) == native, result.code
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape_a).astype(np.float32), rng.standard_normal(shape_b).astype(np.float32)]
    assert_port_matches_in_mode(source, result.code, "Net", inputs, tmp_path, "einsum", mode, rtol=1e-5, atol=1e-5)


EINOPS_CASES = [
    ("b d_in n, b n -> b d_in", (2, 3, 4), (2, 4), True),  # mamba-minimal's scan: a matrix times a vector
    ("b h i d, b h j d -> b h i j", (2, 3, 4, 5), (2, 3, 6, 5), True),
    ("b l d_in, d_in n -> b l d_in n", (2, 3, 4), (4, 5), True),  # no contraction: the broadcast product
]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("pattern,shape_a,shape_b,native", EINOPS_CASES, ids=[c[0] for c in EINOPS_CASES])
def test_einops_einsum_of_one_matrix_product_is_native(pattern, shape_a, shape_b, native, mode, tmp_path):
    """einops' ``einsum(a, b, pattern)`` takes the same native plan once its named axes are letters
    (einsum_native.native_product, shared with torch.einsum)."""
    source = textwrap.dedent(f"""
        import torch.nn as nn
        from einops import einsum


        class Net(nn.Module):
            def forward(self, a, b):
                return einsum(a, b, {pattern!r})
    """)
    result = convert_source(source)
    assert not result.diagnostics, result.diagnostics
    assert ("einsum" not in result.code.split("class Net")[1]) == native, result.code
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(shape_a).astype(np.float32), rng.standard_normal(shape_b).astype(np.float32)]
    assert_port_matches_in_mode(source, result.code, "Net", inputs, tmp_path, "einops_einsum", mode, rtol=1e-5,
                                atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einsum_of_three_operands_that_sums_nothing_is_their_product(mode, tmp_path):
    """Mamba-minimal's ``einsum('abc,abd,abc->abcd', delta, B, u)`` (and einops' named form): the three operands
    broadcast and multiplied (einsum_native.broadcast_product); one that sums a label keeps the runtime einsum."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        from einops import einsum


        class Net(nn.Module):
            def forward(self, a, b, c):
                return (torch.einsum('abc,abd,abc->abcd', a, b, c), einsum(a, b, c, 'x l d, x l n, x l d -> x l d n'),
                        torch.einsum('abc,abd,abc->abd', a, b, c))
    """)
    result = convert_source(source)
    assert not result.diagnostics, result.diagnostics
    body = result.code.split("class Net")[1]
    assert body.count("einsum") == 1 and "ops.expand_dims(a, 3) * ops.expand_dims(b, 2) * ops.expand_dims(c, 3)" \
        in body, result.code
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 3, 5), (2, 3, 4))]
    assert_port_matches_in_mode(source, result.code, "Net", inputs, tmp_path, "einsum3", mode, rtol=1e-5, atol=1e-5)


def test_every_native_plan_of_random_equations_is_numpys_einsum():
    """The plans enumerated widely, cheaply: random equations of two or three operands over five labels (seeded),
    each emitted expression evaluated with NumPy's twins of the ops it names (permute -> transpose, expand_dims,
    matmul, outer, movedim) and compared with ``np.einsum`` on the same operands. Every equation with a native plan
    must match (native28's permuted plan once returned a vector plan without its permutations: ``'abc,ac->ba'``)."""
    import random

    import libcst as cst

    from mindport.migrator.einsum_native import native_einsum

    names = {"permute": lambda x, p: x.transpose(p), "expand_dims": np.expand_dims, "matmul": np.matmul,
             "outer": np.multiply.outer, "movedim": np.moveaxis}
    rng, pick = np.random.default_rng(1), random.Random(1)
    sizes = {c: i + 2 for i, c in enumerate("abcde")}
    planned = 0
    for _ in range(3000):
        terms = ["".join(pick.sample("abcde", pick.randint(1, 3))) for _ in range(pick.randint(2, 3))]
        labels = sorted(set("".join(terms)))
        equation = ",".join(terms) + "->" + "".join(pick.sample(labels, pick.randint(1, len(labels))))
        operands = [f"x{i}" for i in range(len(terms))]
        expr = native_einsum(equation, [cst.Name(x) for x in operands], cst.Name)
        if expr is None:
            continue
        planned += 1
        values = {x: rng.standard_normal([sizes[c] for c in t]) for x, t in zip(operands, terms)}
        got = eval(cst.Module([]).code_for_node(expr), dict(names), values)  # noqa: S307 - our own emitted text
        want = np.einsum(equation, *values.values())
        assert got.shape == want.shape and np.allclose(got, want), (equation, cst.Module([]).code_for_node(expr))
    assert planned > 500, planned
