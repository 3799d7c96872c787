"""An int where torch takes any number: ``torch.clamp(x, 0, 1)``, ``x.masked_fill(m, 0)``, ``F.leaky_relu(x, 1)``,
``torch.lerp(a, b, 1)``. Users write ints as often as floats; MindSpore's ops often check the Python type ("For
'MaskedFill', the type of 'value' should be float ...") or compute in the int's dtype.

Enumerated from the tables (the layers' constructors have their own enumeration in test_float_arguments.py): every
function and Tensor-method entry whose example passes a float literal gets that literal written as an int (one
argument at a time); where torch accepts the int, the converted call must run on MindSpore and match torch, in every
call style the entry's own proof uses."""
from __future__ import annotations

import ast
import dataclasses

import pytest

from mindport.mappings import load_registry
from mindport.proofs.function import _bind_example, applicable_styles, prove, torch_snippet


class _Floats(ast.NodeVisitor):
    """The float literals of an example's arguments, as (start, end) offsets into its text."""

    def __init__(self, text: str):
        self.text, self.spans = text, []

    def visit_Constant(self, node):
        if isinstance(node.value, float) and abs(node.value) < 1e6:
            self.spans.append((node.col_offset - 2, node.end_col_offset - 2))  # "f(" is two characters

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return self.visit_Constant(node.operand)
        self.generic_visit(node)


def _int_variants(entry):
    """The example with one float literal written as an int, each one in turn: its integral part, or the nearest
    non-zero int for a fraction (``0.5`` -> ``1``, ``-1e-3`` -> ``-1``): another value, but one torch takes too."""
    text = entry.example.args
    finder = _Floats(text)
    finder.visit(ast.parse(f"f({text})", mode="eval"))
    for start, end in finder.spans:
        literal = text[start:end]
        value = float(literal)
        as_int = str(int(value) or (1 if value > 0 else -1 if value < 0 else 0))
        yield literal, as_int, text[:start] + as_int + text[end:]


def _torch_accepts(entry) -> bool:
    import numpy as np
    import torch

    from mindport.proofs.function import make_input

    code = torch_snippet(entry, "positional")
    scope: dict = {}
    rng = np.random.default_rng(0)
    arrays = [torch.tensor(make_input(s, rng)) for s in entry.example.inputs.values()]
    if entry.kind == "method":
        arrays.insert(0, torch.tensor(make_input(entry.example.self, rng)))
    try:
        exec(compile(code, "<int variant>", "exec"), scope)  # noqa: S102 - our own snippet
        with torch.no_grad():
            scope["run"](*arrays)
    except Exception:  # torch refuses the int here (a float-only argument): not a case
        return False
    return True


def _cases():
    cases = []
    seen: set[int] = set()
    for entry in sorted(load_registry(), key=lambda e: e.torch):
        if id(entry) in seen or entry.kind not in ("function", "method") or not entry.supported:
            continue
        seen.add(id(entry))
        example = entry.example
        if example is None or example.program or example.proof or example.compare != "values" or not example.args:
            continue
        for literal, as_int, args in _int_variants(entry):
            variant = dataclasses.replace(entry, example=dataclasses.replace(example, args=args))
            if not _torch_accepts(variant):
                continue
            before, after = _bind_example(entry)[0], _bind_example(variant)[0]
            param = next((name for name in after if after[name] != before.get(name)), "")
            for style in applicable_styles(variant):
                if style not in ("positional", "variables"):
                    continue  # the value written as a literal and through a name; the other styles only move it
                cases.append(pytest.param(variant, style, param, id=f"{entry.torch}[{literal}->{as_int}-{style}]"))
    return cases


CASES = _cases()


def test_the_enumeration_reaches_the_known_members():
    ids = {c.id.split("[")[0] for c in CASES}
    for known in ("torch.clamp", "torch.Tensor.masked_fill", "torch.lerp", "torch.nn.functional.leaky_relu"):
        assert known in ids, sorted(ids)
    assert len(CASES) > 100


@pytest.mark.parametrize(("entry", "style", "param"), CASES)
def test_an_int_where_torch_takes_a_float_converts_and_matches(entry, style, param):
    if style == "variables" and entry.values.get(param) == "functions_float_literal":
        # a tensor-or-number argument: only a literal is known to be a number; a name holding an int fails loudly
        # (MindSpore's own type or kernel check), never silently
        with pytest.raises((TypeError, RuntimeError)):  # Tensor.lerp: "The kernel LerpScalar unregistered"
            prove(entry, style)
        return
    prove(entry, style)
