"""What a converter rule is: one concern of the rewrite, as a small class with LibCST-style hooks, its documentation
(the docstring) and its examples (``EXAMPLES``: torch source -> converted source, and sources it leaves alone), which
the test suite runs and ``docs/converter/`` shows."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from mindport.migrator.context import FileContext
from mindport.names import Scope


@dataclass(frozen=True)
class Example:
    """``before`` converted by the whole converter gives ``after`` (``after=None``: the rule leaves it alone, so the
    converter's output is ``before`` itself). ``note`` says what the example shows, on the rule's docs page.

    The sources may be written indented inside triple quotes: they are dedented, and the first newline dropped."""

    before: str
    after: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", _source(self.before))
        if self.after is not None:
            object.__setattr__(self, "after", _source(self.after))

    @property
    def expected(self) -> str:
        return self.before if self.after is None else self.after


def _source(text: str) -> str:
    text = textwrap.dedent(text)
    return text[1:] if text.startswith("\n") else text


class Rule:
    """One concern of the rewrite. Subclasses define ``visit_X(node)`` and/or ``leave_X(original, updated)``; the
    engine (``engine.py``) runs every rule's hooks in one traversal, in the order ``rules/__init__.py`` gives."""

    EXAMPLES: ClassVar[tuple[Example, ...]] = ()

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.runner = None  # the engine's RuleRunner, set when the rule runs

    @property
    def scope(self) -> Scope:
        return self.runner.scope  # type: ignore[union-attr]

    def flag(self, node: cst.CSTNode, code: str, message: str, suggestion: str = "", api: str = "") -> None:
        self.runner.flag(node, code, message, suggestion, api)  # type: ignore[union-attr]

    def remark(self, node: cst.CSTNode, code: str, message: str, suggestion: str = "", api: str = "") -> None:
        self.runner.remark(node, code, message, suggestion, api)  # type: ignore[union-attr]

    def hooks(self, prefix: str) -> dict[str, object]:
        return {name[len(prefix):]: getattr(self, name) for name in dir(type(self)) if name.startswith(prefix)}


def forward_methods(node: cst.ClassDef, module_classes: set[str]) -> set[int]:
    """Ids of the methods of a model class but ``__init__``: the code a static graph compiles (``forward`` and the
    helpers it calls)."""
    if node.name.value not in module_classes or not isinstance(node.body, cst.IndentedBlock):
        return set()
    return {id(s) for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value != "__init__"}


class GraphMethodRule(Rule):
    """A rule acting only in the code a static graph compiles: a model class's methods but ``__init__``, and the
    functions nested in them (``self.compiled``); with ``MODULE_FUNCTIONS``, a module's functions too (a graph compiles
    one with every method that calls it, from any file)."""

    MODULE_FUNCTIONS: ClassVar[bool] = False

    def __init__(self, ctx: FileContext, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._methods: set[int] = set()
        self._module_functions: set[int] = set()  # ids of the module's functions (MODULE_FUNCTIONS)
        self._compiled: list[bool] = []  # per enclosing function: whether a graph compiles it

    @property
    def compiled(self) -> bool:
        return bool(self._compiled and self._compiled[-1])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods |= forward_methods(node, self._module_classes)

    def visit_Module(self, node: cst.Module) -> None:
        if self.MODULE_FUNCTIONS and self.ctx.imports("torch"):  # a file with no torch: no model calls it
            from mindport.migrator.syntax import module_level

            self._module_functions = {id(s) for s in module_level(node.body) if isinstance(s, cst.FunctionDef)}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._compiled.append(id(node) in self._methods or id(node) in self._module_functions or self.compiled)

    def leave_FunctionDef(self, original_node, updated_node):
        self._compiled.pop()
        return updated_node
