"""Writes the file-local native bodies a file's sites call (mindport.mappings.local_bodies) into the converted file:
each once, under the name TableCallTransform chose for it (FileContext.local_body), its MindSpore names in the file's
own aliases (their imports scheduled), placed before the first top-level statement that reads it."""
from __future__ import annotations

import re

import libcst as cst

from mindport.mappings.local_bodies import local_bodies
from mindport.migrator.factories import insert_definitions
from mindport.migrator.walk import parse_statement

_QUALIFIED = re.compile(r"\bmindspore(?:\.[A-Za-z_]\w*)+")


def body_definition(ctx, runtime: str, name: str) -> cst.FunctionDef:
    """The definition of ``runtime``'s body named ``name``, its comment as the body's first line."""
    body = local_bodies()[runtime]
    text = _QUALIFIED.sub(lambda m: ctx.target_text(m.group(0)), body.source)
    head, _, rest = text.partition("\n")
    head = re.sub(rf"^def {re.escape(body.name)}\(", f"def {name}(", head)
    return parse_statement(f"{head}\n    # {body.comment}\n{rest}")


def write_local_bodies(module: cst.Module, ctx) -> cst.Module:
    """``module`` with a definition of every body its sites call (none: ``module`` itself)."""
    if not ctx.local_bodies:
        return module
    return insert_definitions(module, {name: body_definition(ctx, runtime, name)
                                       for runtime, name in ctx.local_bodies.items()})
