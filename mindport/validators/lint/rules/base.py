"""The shape of a lint rule (Fixit-style): one class, whose docstring is its documentation page and whose
VALID/INVALID examples are its tests (tests/lint/test_rules_examples.py collects them)."""
from __future__ import annotations

import ast
from typing import ClassVar, Iterable, Iterator

from mindport.validators.lint.context import FileContext

# A check yields (node, message) or (node, message, fixable): the engine turns it into a Finding at the
# node's start. The third item lets a fixable rule say that this particular finding has no safe fix.
Report = tuple[ast.AST, str] | tuple[ast.AST, str, bool]

REGISTRY: dict[str, type["Rule"]] = {}

FAMILIES = {
    "MS0": "Input",
    "MS1": "Migration-guide pitfalls",
    "MS2": "Default-value traps",
    "MS3": "Torch leftovers",
    "MS4": "Static-graph syntax",
    "MS5": "Optimizer and loss semantics",
}


class Rule:
    """Base class. Subclasses set `code`, `name`, `message` and implement `check`.

    Docstring layout (rendered by `python -m mindport.validators.lint.docs`):
    a first paragraph (what it does), then `## Why is this bad?` and `## Fix` sections.
    The page's example and "use instead" code are INVALID[0] and VALID[0], so the docs show tested code.
    """

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, stable
    message: ClassVar[str]  # default message
    severity: ClassVar[str] = "warning"  # error | warning | info
    fixable: ClassVar[bool] = False
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[str, ...]] = ()
    # (before, after) pairs checked by the test suite when the rule is fixable
    FIXES: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            if cls.code in REGISTRY:
                raise ValueError(f"duplicate rule code {cls.code}")
            REGISTRY[cls.code] = cls

    def check(self, ctx: FileContext) -> Iterable[Report]:
        raise NotImplementedError

    def run(self, ctx: FileContext) -> Iterator[Report]:
        yield from self.check(ctx)

    @classmethod
    def family(cls) -> str:
        return FAMILIES.get(cls.code[:3], "Other")
