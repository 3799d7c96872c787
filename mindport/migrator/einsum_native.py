"""``torch.einsum`` with a literal equation that is one batched matrix product, written as MindSpore's own ops at
conversion time (``rules/table_calls.py`` asks; the runtime ``einsum`` parses any other equation when it runs:
``ops.einsum`` has no CPU kernel in MindSpore 2.10).

An equation of two operands qualifies when its labels split into *batch* labels (in both operands and the output,
leading each of them in the same order), one *contracted* label (in both operands, not in the output) and one *free*
label of each operand (in that operand and the output), no label repeated inside a term, ``...`` only leading
every term (and then terms naming as many axes each: matmul aligns batch axes from the right), and no label summed out of one operand alone: ``'b h i d, b h j d -> b h i j'`` is ``ops.matmul(q, k.swapaxes(-1, -2))``,
``'b h i j, b h j d -> b h i d'`` is ``ops.matmul(attn, v)``; a matrix applied to the last axis of a tensor,
``'b n d, d e -> b n e'``, is ``ops.matmul(x, w)``, and on another axis, ``'b h i j, h g -> b g i j'`` (talking heads), is
``ops.movedim(ops.matmul(ops.movedim(x, -3, -1), w), -1, -3)``. A batch label one operand lacks
(``'b h i j, b j d -> b h i d'``) is a size-1 axis inserted there (``ops.expand_dims(v, 1)``), which matmul broadcasts. An operand with no
free label (``'abc,ac->ab'``) is a column: ``ops.matmul(x, ops.expand_dims(c, -1)).squeeze(-1)``. Two vectors with no contracted label, ``'i, j -> i j'``
(rotary embeddings' frequencies), are ``ops.outer``. Any other product with one contracted label and free labels in
both operands (``'b h i j, b h j w d -> b h i w d'``: two free labels of one operand) is a matmul between
``ops.permute``s, every output label but the last free one of each operand a batch axis of the product. An equation
that sums nothing (``'abc,cd->abcd'``, of any number of operands) is the operands' broadcast product ``*``. Anything
else keeps the runtime function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from mindport.migrator.table import fix_commas, parenthesize


@dataclass(frozen=True)
class Plan:
    """How to write the product: ``outer``, or ``matmul(a', b')`` with each operand's last two axes swapped first
    when ``swap_a``/``swap_b``, and the result's swapped when ``swap_out``."""

    outer: bool = False
    swap_a: bool = False
    swap_b: bool = False
    swap_out: bool = False
    axis: int | None = None  # a matrix applied to this axis of a (negative, not -1): a moved to the end and back
    # batch axes an operand lacks ('b h i j, b j d -> b h i d': v has no h): inserted (size 1) before the product, at
    # these positions in ascending order, so that matmul broadcasts them as einsum does
    insert_a: tuple[int, ...] = ()
    insert_b: tuple[int, ...] = ()
    vector_b: bool = False  # b has no free label ('abc,ac->ab'): a matrix times a vector, b's last axis added, then dropped
    # the general plan (:func:`_permuted`): each operand's axes put in the product's order first (ops.permute), the
    # product's put in the output's order after; None where the order already is
    perm_a: tuple[int, ...] | None = None
    perm_b: tuple[int, ...] | None = None
    perm_out: tuple[int, ...] | None = None


def _terms(equation: str) -> tuple[list[str], str] | None:
    text = equation.replace(" ", "")
    if "->" not in text or text.count("->") != 1:
        return None
    inputs, output = text.split("->")
    terms = inputs.split(",")
    if "." in text:  # '...' leading every term: broadcast batch axes, which matmul broadcasts as einsum does
        if not all(t.startswith("...") and "." not in t[3:] for t in (*terms, output)):
            return None
        terms, output = [t[3:] for t in terms], output[3:]
        if any(len(t) < 2 for t in terms):
            return None
    if not all(t.isalpha() for t in terms) or not (output.isalpha() or output == ""):
        return None
    if any(len(set(t)) != len(t) for t in (*terms, output)):
        return None  # a repeated label: a diagonal
    return terms, output


def plan(equation: str) -> Plan | None:
    """The native form of a two-operand ``equation``, or None when it is not one batched matrix product."""
    parsed = _terms(equation)
    if parsed is None or len(parsed[0]) != 2:
        return None
    if "." in equation and len(parsed[0][0]) != len(parsed[0][1]):
        # matmul aligns batch axes from the right: the two '...' line up only when both terms name as many axes
        # ('...bnd,...de->...bne', mixture-of-experts' gating: w's '...' met x's b; einsum49). Left to the runtime.
        return None
    found = _plain(equation, parsed)
    if found is None and "." not in equation:
        found = _permuted(*parsed[0], parsed[1])
    return found


def _plain(equation: str, parsed) -> Plan | None:
    """The forms written without a permutation (the first ones this module knew; kept, so their text is stable)."""
    (a, b), out = parsed
    if "." not in equation and len(b) >= 1 and set(b) <= set(a) and not set(b) <= set(out) \
            and len(set(a) - set(b)) >= 1:
        # 'abc,ac->ab' (mamba's selective scan): b as a column (a label no term uses), the product's column dropped
        extra = next(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in a + b + out)
        column = plan(f"{a},{b}{extra}->{out}{extra}")
        if column is not None and not column.outer and column.axis is None and not column.swap_out \
                and not column.vector_b and column.perm_a is column.perm_b is column.perm_out is None:  # no permuted plan
            return Plan(swap_a=column.swap_a, swap_b=column.swap_b, insert_a=column.insert_a,
                        insert_b=column.insert_b, vector_b=True)
        return None
    if len(a) == 1 and len(b) == 1 and out == a + b and a != b:
        return Plan(outer=True)
    if len(b) == 2 and len(a) >= 2 and a[-1] in b and out == a[:-1] + b.replace(a[-1], "") and not set(a[:-1]) & set(b):
        return Plan(swap_b=b[0] != a[-1])  # 'b n d, d e -> b n e': x @ w (matmul broadcasts w over x's batch)
    if len(b) == 2 and len(a) >= 2 and len(set(b) & set(a)) == 1:
        contracted = (set(b) & set(a)).pop()
        free = b.replace(contracted, "")
        p = a.index(contracted)
        if out == a[:p] + free + a[p + 1:]:  # 'b h i j, h g -> b g i j' (talking heads): the matrix on axis h
            return Plan(swap_b=b[0] != contracted, axis=p - len(a))
    found = _broadcast_batch(a, b, out, "." in equation)
    if found is not None:
        return found
    batch = [c for c in out if c in a and c in b]
    contracted = [c for c in a if c in b and c not in out]
    free_a = [c for c in a if c not in b]
    free_b = [c for c in b if c not in a]
    if len(contracted) != 1 or len(free_a) != 1 or len(free_b) != 1 or set(free_a + free_b) - set(out):
        return None
    n = len(batch)
    if len(a) != n + 2 or len(b) != n + 2 or len(out) != n + 2:
        return None
    if list(a[:n]) != batch or list(b[:n]) != batch or list(out[:n]) != batch:
        return None  # batch labels leading, in the same order everywhere (matmul broadcasts them as torch does)
    (k,), (i,), (j,) = contracted, free_a, free_b
    if set(a[n:]) != {i, k} or set(b[n:]) != {k, j} or set(out[n:]) != {i, j}:
        return None
    return Plan(swap_a=a[n:] == k + i, swap_b=b[n:] == j + k, swap_out=out[n:] == j + i)


def _permuted(a: str, b: str, out: str) -> "Plan | None":
    """Any other product of two operands with one contracted label ``k`` and at least one free label in each
    (``'b h i j, b h j w d -> b h i w d'``, SepViT's windows: ``w`` a second free label of the values): the output's
    last free label of ``a`` is the product's row ``i``, of ``b`` its column ``j``; every other output label (batch
    labels and further free labels) is a batch axis of the product, in the output's order, where an operand lacking it
    gets a size-1 axis (matmul broadcasts it as einsum does). So ``a`` is permuted to ``[its batch labels] i k``, ``b``
    to ``[its batch labels] k j``, and the product ``[batch] i j`` is permuted to the output's order. No label may be
    summed out of one operand alone (``'ij,jk->k'``: None)."""
    contracted = [c for c in a if c in b and c not in out]
    free_a = [c for c in a if c not in b]
    free_b = [c for c in b if c not in a]
    if len(contracted) != 1 or not free_a or not free_b or set(out) != set(a + b) - set(contracted):
        return None
    (k,) = contracted
    i = max(free_a, key=out.index)
    j = max(free_b, key=out.index)
    batch = [c for c in out if c not in (i, j)]
    product = batch + [i, j]
    a_order = [c for c in batch if c in a] + [i, k]
    b_order = [c for c in batch if c in b] + [k, j]

    def permutation(source, order):
        found = tuple(source.index(c) for c in order)
        return None if found == tuple(range(len(found))) else found

    return Plan(perm_a=permutation(a, a_order), perm_b=permutation(b, b_order),
                perm_out=permutation("".join(product), out),
                insert_a=tuple(n for n, c in enumerate(batch) if c not in a),
                insert_b=tuple(n for n, c in enumerate(batch) if c not in b))


def _broadcast_batch(a: str, b: str, out: str, ellipsis: bool) -> "Plan | None":
    """``'b h i j, b j d -> b h i d'`` (one operand lacks batch labels the other has, each term's batch labels in the
    output's order): the lacking operand gets size-1 axes there (matmul then broadcasts them as einsum does), and
    the product is planned as one with every batch label on both sides; None otherwise."""
    n = len(out) - 2
    if ellipsis or n < 1 or len(a) < 2 or len(b) < 2:
        return None
    batch, a_batch, b_batch = out[:n], a[:-2], b[:-2]
    if (len(a_batch) == n) == (len(b_batch) == n) or not set(a_batch) <= set(batch) or not set(b_batch) <= set(batch):
        return None  # exactly one operand lacks labels (both full: the plain plan below)
    if [c for c in batch if c in a_batch] != list(a_batch) or [c for c in batch if c in b_batch] != list(b_batch):
        return None
    if set(a[-2:]) & set(batch) or set(b[-2:]) & set(batch):
        return None
    full = plan(f"{batch}{a[-2:]},{batch}{b[-2:]}->{out}")
    if full is None or full.outer or full.axis is not None or not full.perm_a is full.perm_b is full.perm_out is None:
        return None  # (a permuted plan's permutations are not carried over here)
    return Plan(swap_a=full.swap_a, swap_b=full.swap_b, swap_out=full.swap_out,
                insert_a=tuple(i for i, c in enumerate(batch) if c not in a_batch),
                insert_b=tuple(i for i, c in enumerate(batch) if c not in b_batch))


def native_product(equation: str, first: cst.BaseExpression, second: cst.BaseExpression,
                   ops: Callable[[str], cst.BaseExpression]) -> "cst.BaseExpression | None":
    """The MindSpore expression of ``einsum(equation, first, second)`` by :func:`plan` (``ops("matmul")`` gives the
    expression naming ``mindspore.ops.matmul`` in the file), or None: ``ops.matmul(q, k.swapaxes(-1, -2))``,
    ``ops.outer(a, b)``, ``ops.movedim(ops.matmul(ops.movedim(x, -3, -1), w), -1, -3)``, ``ops.matmul(attn,
    ops.expand_dims(v, 1))``, ``ops.matmul(x, ops.expand_dims(c, -1)).squeeze(-1)``. torch.einsum and einops'
    einsum (its named axes renamed to letters) both write it."""
    found = plan(equation)
    if found is None:
        return None

    def number(value: int) -> cst.BaseExpression:
        return cst.parse_expression(str(value))

    def call(name: str, *args: cst.BaseExpression) -> cst.Call:
        return cst.Call(func=ops(name), args=fix_commas([cst.Arg(a) for a in args]))

    def swapped(expr):
        return cst.Call(func=cst.Attribute(value=parenthesize(expr), attr=cst.Name("swapaxes")),
                        args=fix_commas([cst.Arg(number(-1)), cst.Arg(number(-2))]))

    if found.outer:
        return call("outer", first, second)

    def permuted(expr, order):
        if order is None:
            return expr
        return call("permute", expr, cst.Tuple([cst.Element(number(n)) for n in order]))

    first, second = permuted(first, found.perm_a), permuted(second, found.perm_b)
    if found.vector_b:  # 'abc,ac->ab': b as a column
        second = call("expand_dims", second, number(-1))
    for position in found.insert_a:  # 'b h i j, b j d -> b h i d': a size-1 axis where an operand lacks a batch label
        first = call("expand_dims", first, number(position))
    for position in found.insert_b:
        second = call("expand_dims", second, number(position))
    if found.axis is not None:  # 'b h i j, h g -> b g i j': the matrix on axis h, the product's axis put back there
        first = call("movedim", first, number(found.axis), number(-1))
    product = call("matmul", swapped(first) if found.swap_a else first, swapped(second) if found.swap_b else second)
    if found.axis is not None:
        return call("movedim", product, number(-1), number(found.axis))
    if found.vector_b:  # the column's axis dropped
        return cst.Call(func=cst.Attribute(value=product, attr=cst.Name("squeeze")), args=[cst.Arg(number(-1))])
    if found.perm_out is not None:
        return permuted(product, found.perm_out)
    return swapped(product) if found.swap_out else product


def broadcast_product(equation: str, operands: list[cst.BaseExpression],
                      ops: Callable[[str], cst.BaseExpression]) -> "cst.BaseExpression | None":
    """``einsum`` of two or more operands that sums nothing (every label of every term is in the output:
    ``'abc,cd->abcd'``, ``'abc,abd,abc->abcd'``, Mamba's discretisation) is the elementwise product of the operands,
    each permuted to the output's order of its labels (``ops.permute``) and given a size-1 axis for each output label
    it lacks after its first one (``ops.expand_dims``; the leading ones broadcasting adds), which ``*`` broadcasts as
    einsum does; None for any other equation."""
    parsed = _terms(equation)
    if parsed is None or "." in equation:
        return None
    terms, out = parsed
    if len(terms) != len(operands) or len(terms) < 2 or not out or set("".join(terms)) != set(out):
        return None

    def number(value: int) -> cst.BaseExpression:
        return cst.parse_expression(str(value))

    def call(name: str, *args: cst.BaseExpression) -> cst.Call:
        return cst.Call(func=ops(name), args=fix_commas([cst.Arg(a) for a in args]))

    product = None
    for term, operand in zip(terms, operands):
        order = [c for c in out if c in term]
        permutation = tuple(term.index(c) for c in order)
        expr = operand
        if permutation != tuple(range(len(term))):
            expr = call("permute", expr, cst.Tuple([cst.Element(number(n)) for n in permutation]))
        lead = out.index(order[0])  # output labels before the operand's first: broadcasting adds those itself
        for position, label in enumerate(out):
            if label not in term and position > lead:
                expr = call("expand_dims", expr, number(position - lead))
        expr = parenthesize(expr)
        product = expr if product is None else cst.BinaryOperation(left=product, operator=cst.Multiply(), right=expr)
    return product


def native_einsum(equation: str, operands: list[cst.BaseExpression],
                  ops: Callable[[str], cst.BaseExpression]) -> "cst.BaseExpression | None":
    """The MindSpore expression of ``einsum(equation, *operands)``: one batched matrix product of two operands
    (:func:`native_product`) or a product that sums nothing (:func:`broadcast_product`); None otherwise (the runtime
    einsum parses the equation when it runs)."""
    if len(operands) == 2:
        found = native_product(equation, operands[0], operands[1], ops)
        if found is not None:
            return found
    return broadcast_product(equation, operands, ops)
