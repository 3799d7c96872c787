"""Native factories: a torch class called with arguments known only at run time (``nn.Linear(*args, **kwargs)`` in
a helper such as ``linear(*args, **kwargs)``) is built by a function the converter writes into the file, with
torch's parameters and defaults, whose body is the entry's own conversion of a call passing every parameter by name:

    def make_linear(in_features, out_features, bias=True, device=None, dtype=None):
        \"\"\"torch.nn.Linear's parameters, building MindSpore's nn.Dense.\"\"\"
        return nn.Dense(in_channels=in_features, out_channels=out_features, has_bias=bias)

It takes what torch's class takes, positionally or by keyword, so any call site keeps working; the converter writes
one only where that conversion is static for every value (no parameter needs the runtime adapter's decision, none is
unsupported) and names no ``mindport.runtime`` helper. The rule that uses it is TableCallTransform; this module only
writes the definition and places it.
"""
from __future__ import annotations

import libcst as cst

from mindport.mappings import Entry
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import parse_statement


def factory_name(entry: Entry, taken) -> str:
    """``torch.nn.Conv3d`` -> ``make_conv3d`` (``make_conv3d_`` ... when the file already uses the name)."""
    name = "make_" + entry.torch.rsplit(".", 1)[-1].lower()
    while name in taken:
        name += "_"
    return name


def factory_parameters(entry: Entry) -> str | None:
    """torch's parameter list as source (``in_channels, out_channels, kernel_size, stride=1, ...``); None when the
    signature takes ``*args`` or ``**kwargs`` (no fixed parameters to bind)."""
    params = entry.signature or ()
    if not params or any(p.kind in ("var_positional", "var_keyword") for p in params):
        return None
    out, star = [], False
    for p in params:
        if p.kind == "keyword_only" and not star:
            out.append("*")
            star = True
        out.append(p.name if p.default is None else f"{p.name}={p.default}")
    return ", ".join(out)


def factory_def(name: str, entry: Entry, parameters: str, body: cst.BaseExpression, built: str,
                branches=()) -> cst.FunctionDef:
    """The definition: torch's parameters, a docstring naming both classes, ``return <MindSpore construction>``;
    ``branches``, (condition, construction or a ``raise`` statement as source) each, come first: a parameter whose
    value picks another class (``padding_mode``), decided when the factory is called."""
    doc = f"{entry.torch}'s parameters, building MindSpore's {built}"
    others = [f"{c}: {code_of(b.func)}" for c, b in branches if not isinstance(b, str)]
    doc += f" ({'; '.join(others)})." if others else "."
    lines = [f"def {name}({parameters}):", f'    """{doc}"""']
    for condition, branch in branches:
        lines += [f"    if {condition}:", f"        {branch if isinstance(branch, str) else 'return ' + code_of(branch)}"]
    lines.append(f"    return {code_of(body)}")
    return parse_statement("\n".join(lines) + "\n")


def base_init(entry: Entry, parameters: str, built: cst.Call) -> cst.FunctionDef:
    """The ``__init__`` of a class whose base is MindSpore's class (``class GroupNorm32(nn.GroupNorm)``): torch's
    parameters, handed to the base bound statically, so the class is built with torch's arguments as before."""
    call = built.with_changes(func=cst.parse_expression("super().__init__"))
    return parse_statement(f'def __init__(self, {parameters}):\n    """{entry.torch}\'s parameters."""\n'
                           f'    {code_of(call)}\n')


def with_init(cls: cst.ClassDef, init: cst.FunctionDef) -> cst.ClassDef:
    """``cls`` with ``init`` first in its body, after its docstring; a body of only ``pass`` (or ``...``) replaced."""
    body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
    start = 1 if body and _docstring(body[0]) else 0
    rest = [s for s in body[start:] if not _placeholder(s)]
    if rest:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *_comments(rest[0])])
    block = cst.IndentedBlock(body=[*body[:start], init, *rest])
    return cls.with_changes(body=block)


def _docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _placeholder(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and (
        isinstance(stmt.body[0], cst.Pass)
        or isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Ellipsis))


def insert_definitions(module: cst.Module, definitions: dict[str, cst.FunctionDef]) -> cst.Module:
    """Each definition placed just before the first top-level statement that names it (after the imports, and before
    any use, module-level ones included)."""
    body = list(module.body)
    for name, definition in definitions.items():
        index = next((i for i, stmt in enumerate(body) if _names(stmt, name)), len(body))
        spaced = definition.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        body.insert(index, spaced)
        if index + 1 < len(body) and hasattr(body[index + 1], "leading_lines"):
            body[index + 1] = body[index + 1].with_changes(
                leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *_comments(body[index + 1])])
    return module.with_changes(body=body)


def _comments(stmt) -> list:
    return [line for line in getattr(stmt, "leading_lines", ()) if line.comment is not None]


def _names(stmt: cst.CSTNode, name: str) -> bool:
    found = False

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> bool:
            nonlocal found
            found = found or node.value == name
            return False

    stmt.visit(_Find())
    return found
