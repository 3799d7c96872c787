"""File-local native bodies (data: ``mindport/mappings/data/local/bodies.toml``; no MindSpore import).

A runtime function that guards a MindSpore kernel fault rather than a decision about torch's semantics (tanh: a
fixed precise formula of MindSpore's own ops) needs nothing of mindport at run time once the converter's facts
settle what its run-time checks decide (the input floating point, ``when = "floating"``). Such a function declares
a native body: the converter (TableCallTransform._local_body_target) calls it at the settled sites under a
collision-safe name and writes its definition once into the converted file (mindport.migrator.local_bodies), so
the port imports no mindport for it. The body and the runtime function are kept in step by
tests/runtime/test_local_bodies.py, which runs both against torch."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).parent / "data" / "local" / "bodies.toml"
WHEN = ("floating",)


@dataclass(frozen=True)
class LocalBody:
    runtime: str  # the runtime function it stands for: ``mindport.runtime.math.tanh``
    name: str  # the definition's name in ``source`` (a fresh one is written where the file uses it)
    when: str  # the fact the site needs (WHEN)
    comment: str  # one line written above the definition: the MindSpore fault it works around
    source: str  # ``def name(<the runtime function's parameters>): ...``, MindSpore names fully qualified


@lru_cache(maxsize=1)
def local_bodies() -> dict[str, LocalBody]:
    """runtime target -> its body."""
    data = tomllib.loads(PATH.read_text(encoding="utf-8"))
    out = {}
    for item in data.get("body", ()):
        body = LocalBody(item["runtime"], item["name"], item["when"], item["comment"], item["source"].strip() + "\n")
        if body.when not in WHEN:
            raise ValueError(f"{PATH}: {body.runtime}: unknown when = {body.when!r} (one of {WHEN})")
        out[body.runtime] = body
    return out
