"""Safe autofixes for `mindport lint --fix`: the only lint module that imports libcst.

Each fix is one libcst transform that edits only the nodes at the reported positions, so comments,
quotes and formatting elsewhere come out as they went in. Fixes are conservative: a fix is applied only
where the rewrite is equivalent (MS210), or turns code that cannot work as intended into the documented
MindSpore form with the same meaning (MS107 containers, MS209 keyword renames), or makes graph code compile with
the same result on every path Python runs (MS415 `name = None` first, MS417 `map(lambda)` as a list comprehension).
"""
from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation
from typing import Sequence

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from mindport.validators.lint.context import FileContext
from mindport.validators.lint.findings import Finding

FIXABLE = ("MS107", "MS209", "MS210", "MS415", "MS417")


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


class _Names:
    """How to spell `nn.CellList` / `ParameterTuple` in this file, adding an import when nothing fits."""

    def __init__(self, source: str):
        try:
            self.aliases = FileContext("<fix>", source, ast.parse(source)).aliases
        except SyntaxError:
            self.aliases = {}
        self.imports: list[tuple[str, str]] = []

    def _local(self, qualname: str) -> str | None:
        for name, target in self.aliases.items():
            if target == qualname:
                return name
        return None

    def nn(self, cls_name: str) -> str:
        direct = self._local(f"mindspore.nn.{cls_name}")
        if direct:
            return direct
        nn = self._local("mindspore.nn")
        if nn:
            return f"{nn}.{cls_name}"
        ms = self._local("mindspore")
        if ms:
            return f"{ms}.nn.{cls_name}"
        self.imports.append(("mindspore.nn", cls_name))
        return cls_name

    def parameter_tuple(self) -> str:
        direct = self._local("mindspore.ParameterTuple")
        if direct:
            return direct
        ms = self._local("mindspore")
        if ms:
            return f"{ms}.ParameterTuple"
        self.imports.append(("mindspore", "ParameterTuple"))
        return "ParameterTuple"


class _Fixer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, findings: Sequence[Finding], names: _Names):
        super().__init__()
        self.names = names
        self.at: dict[tuple[int, int], Finding] = {(f.line, f.col - 1): f for f in findings}
        self.done: set[tuple[int, int]] = set()

    def _finding(self, node: cst.CSTNode, code: str) -> Finding | None:
        for key in self._keys(node):
            f = self.at.get(key)
            if f is not None and f.code == code and key not in self.done:
                return f
        return None

    def _keys(self, node: cst.CSTNode):
        # ast places a parenthesised expression at its opening parenthesis, libcst inside it
        pos = self.get_metadata(PositionProvider, node).start
        yield pos.line, pos.column
        lpar = getattr(node, "lpar", ())
        if lpar:
            yield pos.line, pos.column - len(lpar)

    def _mark(self, node: cst.CSTNode) -> None:
        for key in self._keys(node):
            if key in self.at:
                self.done.add(key)
                return

    # ---- MS107: containers of Cells / Parameters ----------------------------------------------------
    def _wrap_container(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        f = self._finding(original, "MS107")
        if f is None:
            return updated
        target = re.search(r"use (nn\.CellList|nn\.CellDict|ParameterTuple)$", f.message)
        if target is None:
            return updated
        kind = target.group(1)
        inner: cst.BaseExpression = updated
        if kind == "ParameterTuple":
            func = self.names.parameter_tuple()
            if isinstance(inner, cst.Tuple) and not inner.lpar:  # `a, b` -> `(a, b)`: one argument
                inner = inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        elif kind == "nn.CellDict":
            func = self.names.nn("CellDict")
        else:
            func = self.names.nn("CellList")
            if isinstance(inner, cst.Tuple):
                inner = cst.List(elements=inner.elements)
            elif isinstance(inner, cst.GeneratorExp):
                inner = cst.ListComp(elt=inner.elt, for_in=inner.for_in)
            elif isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "tuple":
                inner = inner.with_changes(func=cst.Name("list"))
        self._mark(original)
        if isinstance(inner, cst.List) and not inner.elements:
            return cst.Call(func=_expr(func), args=[])
        return cst.Call(func=_expr(func), args=[cst.Arg(value=inner)])

    def leave_List(self, original, updated):
        return self._wrap_container(original, updated)

    def leave_Tuple(self, original, updated):
        return self._wrap_container(original, updated)

    def leave_ListComp(self, original, updated):
        return self._wrap_container(original, updated)

    def leave_GeneratorExp(self, original, updated):
        return self._wrap_container(original, updated)

    def leave_Dict(self, original, updated):
        return self._wrap_container(original, updated)

    def leave_DictComp(self, original, updated):
        return self._wrap_container(original, updated)

    # ---- MS209: torch keyword renames; MS210: keep_prob -> p -----------------------------------------
    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if original.keyword is None:
            return updated
        f = self._finding(original, "MS209")
        if f is None:
            return updated
        m = re.search(r"use `(\w+)=`", f.message)
        if m is None:
            return updated
        self._mark(original)
        return updated.with_changes(keyword=cst.Name(m.group(1)))

    # ---- MS415: possibly-unbound locals of graph code; MS417: map over a closure -----------------------
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        span = self.get_metadata(PositionProvider, original)
        names: list[str] = []
        for key, f in self.at.items():
            if f.code != "MS415" or key in self.done or not span.start.line <= f.line <= span.end.line:
                continue
            m = re.match(r"`(\w+)` may be unassigned", f.message)
            if m is None:
                continue
            self.done.add(key)
            if m.group(1) not in names:
                names.append(m.group(1))
        if not names or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        first = 1 if body and _is_docstring(body[0]) else 0
        new = [cst.parse_statement(f"{name} = None\n") for name in names]
        return updated.with_changes(body=updated.body.with_changes(body=body[:first] + new + body[first:]))

    def _map_to_comprehension(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        if self._finding(original, "MS417") is None:
            return None
        lam = updated.args[0].value if updated.args else None
        if not (isinstance(lam, cst.Lambda) and len(updated.args) == 2 and len(lam.params.params) == 1):
            return None
        self._mark(original)
        return cst.ListComp(elt=lam.body, for_in=cst.CompFor(target=lam.params.params[0].name,
                                                             iter=updated.args[1].value))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        comprehension = self._map_to_comprehension(original, updated)
        if comprehension is not None:
            return comprehension
        f = self._finding(original, "MS210")
        if f is not None:
            fixed = self._dropout(updated)
            if fixed is not None:
                self._mark(original)
                return fixed
            return updated
        return self._wrap_container(original, updated) if self._finding(original, "MS107") else updated

    @staticmethod
    def _dropout(call: cst.Call) -> cst.Call | None:
        args = list(call.args)
        index = next((i for i, a in enumerate(args) if a.keyword and a.keyword.value == "keep_prob"), None)
        if index is None:
            positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
            if positional != [0]:
                return None  # more positional arguments follow: leave it to a human
            index = 0
        value = args[index].value
        if not isinstance(value, (cst.Float, cst.Integer)):
            return None
        try:
            p = Decimal(1) - Decimal(value.value.replace("_", ""))
        except InvalidOperation:
            return None
        if p < 0 or p > 1:
            return None
        text = format(p.normalize(), "f") if p != 0 else "0.0"
        args[index] = args[index].with_changes(
            keyword=cst.Name("p"),
            value=cst.Float(text) if "." in text else cst.Integer(text),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                  whitespace_after=cst.SimpleWhitespace("")),
        )
        return call.with_changes(args=args)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def fix_source(source: str, findings: Sequence[Finding], path: str = "<string>") -> tuple[str, int]:
    """Apply the safe fixes for `findings` (only fixable codes are considered). Returns (source, count)."""
    todo = [f for f in findings if f.fixable and f.code in FIXABLE]
    if not todo:
        return source, 0
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return source, 0
    names = _Names(source)
    fixer = _Fixer(todo, names)
    new_module = MetadataWrapper(module).visit(fixer)
    if names.imports:
        context = CodemodContext()
        for mod, obj in dict.fromkeys(names.imports):
            AddImportsVisitor.add_needed_import(context, mod, obj)
        new_module = AddImportsVisitor(context).transform_module(new_module)
    return new_module.code, len(fixer.done)
