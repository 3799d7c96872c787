"""A ``*name`` parameter given by keyword: ``torch.zeros(size=(2, 3))`` (N-BEATS), ``x.view(size=...)``.

torch's C++ argument parser takes an int-list parameter spread out, as one sequence or by its schema name; the
Python-level functions with ``*tensors``/``*operands`` refuse the keyword. The set is enumerated from the mapping
tables (every entry with a ``*name`` parameter and an example) and the installed torch decides, case by case, whether
the keyword form is valid: binding must agree with torch, and where torch takes it the converted call must match.
"""
from __future__ import annotations

import ast
import dataclasses

import pytest
import torch

from mindport.mappings import load_registry
from mindport.mappings.arguments import CallBindError, Extra, bind
from mindport.mappings.transforms import Arg
from mindport.proofs.function import PROGRAM_STYLE, compare, make_input, prepare

import numpy as np


def _varargs_entries():
    out = []
    for entry in load_registry():
        params = entry.signature or ()
        var = next((p for p in params if p.kind == "var_positional"), None)
        if var is None or entry.example is None or entry.example.program or not entry.example.args:
            continue
        if var.name.endswith("_rest"):  # ``(*size_rest, size=None)``: the keyword is an ordinary parameter
            continue
        out.append((entry, var.name))
    return out


ENTRIES = _varargs_entries()


def _keyword_call(entry, name: str) -> tuple[str, str]:
    """(the call's argument source with the varargs part given as ``name=(...)``, the receiver's call prefix)."""
    call = ast.parse(f"f({entry.example.args})", mode="eval").body
    positional = [p for p in entry.signature if p.kind == "positional"]
    fixed = [ast.unparse(a) for a in call.args[: len(positional)]]
    spread = [ast.unparse(a) for a in call.args[len(positional):]]
    keywords = [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords]
    parts = [*fixed, f"{name}=({', '.join(spread)},)", *keywords]
    return ", ".join(parts)


def _torch_program(entry, name: str) -> tuple[str, dict]:
    args = _keyword_call(entry, name)
    inputs = dict(entry.example.inputs)
    if entry.kind == "method":
        method = entry.torch.rsplit(".", 1)[1]
        inputs = {"self_": entry.example.self, **inputs}
        body = f"self_.{method}({args})"
    else:
        body = f"{entry.torch}({args})"
    program = f"import torch\n\n\ndef run({', '.join(inputs)}):\n    return {body}\n"
    return program, inputs


def _torch_takes_it(entry, name: str) -> bool:
    program, inputs = _torch_program(entry, name)
    namespace: dict = {}
    exec(compile(program, "<keyword varargs>", "exec"), namespace)  # noqa: S102 - generated from the tables
    rng = np.random.default_rng(0)
    values = [torch.tensor(a) if isinstance(a, np.ndarray) else a
              for a in (make_input(spec, rng) for spec in inputs.values())]
    try:
        namespace["run"](*values)
    except TypeError as exc:
        if "keyword" in str(exc) or "invalid combination" in str(exc) or "missing" in str(exc):
            return False
        raise
    return True


def _binds(entry, name: str) -> bool:
    try:
        bind(entry, [("", name, Arg("(2, 3)"), Extra("(2, 3)", keyword=name))])
    except CallBindError:
        return False
    return True


def test_the_enumerated_set_is_not_empty():
    names = {entry.torch for entry, _ in ENTRIES}
    assert {"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.Tensor.view",
            "torch.Tensor.reshape", "torch.Tensor.permute", "torch.atleast_1d", "torch.einsum"} <= names


@pytest.mark.parametrize("entry,name", ENTRIES, ids=[e.torch for e, _ in ENTRIES])
def test_binding_takes_the_keyword_where_torch_does(entry, name):
    assert _binds(entry, name) == _torch_takes_it(entry, name), (
        f"{entry.torch}({name}=...): torch {'takes' if _torch_takes_it(entry, name) else 'refuses'} it")


@pytest.mark.parametrize("entry,name", [(e, n) for e, n in ENTRIES if _binds(e, n)],
                         ids=[e.torch for e, n in ENTRIES if _binds(e, n)])
def test_the_keyword_form_converts_and_matches_torch(entry, name):
    program, inputs = _torch_program(entry, name)
    example = dataclasses.replace(entry.example, program=program, inputs=inputs, styles=())
    case = prepare(dataclasses.replace(entry, example=example), PROGRAM_STYLE)
    assert f"{name}=" not in case.ms_code.split("def run", 1)[1] or entry.kind == "method", case.ms_code
    compare(case, case.call(*case.args))
