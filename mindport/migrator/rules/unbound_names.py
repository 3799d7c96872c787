"""The converter rule UnboundNameTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/unbound_names.md shows both."""
from __future__ import annotations

import ast
import builtins
import textwrap

import libcst as cst

from mindport.mappings import COMPLETE_STARS, star_names
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import MODULE_NAMES, code_of
from mindport.migrator.walk import parse_statement

# a module that binds names at run time in ways no statement shows: nothing is taken as unbound there
_DYNAMIC = ("import *", "globals()", "exec(", "__builtins__", "setattr(sys.modules", "vars()")


class UnboundNameTransform(GraphMethodRule):
    """In a model's methods and the module's functions, a statement on a branch of an ``if`` (or after an ``if`` one
    of whose branches returns, raises, continues or breaks) that reads a name nothing binds (not the function, not
    the module, not Python's builtins) is ``raise NameError(...)``, with the statement kept above it as a comment.

    Such a read is the repository's own slip, usually on a branch its runs never take (``if lengths is not None:
    out = pad_packed_sequence(output)[0]``, ``output`` a typo for ``out``): torch runs the method, and would raise
    ``NameError`` on that line if it ran. MindSpore's static graph (GRAPH_MODE, ``@jit``) resolves every name of
    the method when it compiles it, taken branch or not, and refused the whole method ("NameError: The name 'output'
    is not defined, or not supported in graph mode"). The ``raise`` is what the line does in Python, and a graph
    compiles it (a branch settled when the graph is built drops it; one decided at run time raises there, as torch
    does).

    A module's function is compiled by the graph of every method that calls it, so its lines are treated alike:
    lucidrains' hourglass transformer's ``pad_to_multiple`` returns early when ``m.is_integer()`` and otherwise
    reads ``math.ceil(m)`` in a file that never imports ``math``; torch never reached the line, GRAPH_MODE refused
    the model ("The name 'math' is not defined").

    A name bound only by an import of a torch-based package in a ``try`` that catches ImportError (dinov2's
    ``from xformers.ops import memory_efficient_attention, unbind``) is bound nowhere in the port: the conversion
    makes that import raise, so the fallback runs (``XFORMERS_AVAILABLE = False``); a line after ``if not
    XFORMERS_AVAILABLE: return ...`` reading it is treated alike, and the site flagged in it (MP106) goes with it.

    Taken only on a branch or after an early exit (a line every call runs would fail in torch too: a fragment, not
    a model), and only in a
    file that binds no names in ways a statement does not show (``from m import *``, ``globals()``,
    ``exec``; a star import of a torch module whose names the tables list entirely, ``from torch.nn.init import *``
    (mappings.COMPLETE_STARS), binds those names and no other: gwinndr/MusicTransformer-Pytorch's
    ``MultiheadAttentionRPR`` reads ``warnings`` on a branch torch never takes, in such a file); a name any statement of the module binds (at any depth outside functions: ``if __name__ ==
    "__main__": device = ...``), or the method binds (a parameter, an assignment, a loop, a nested function's), is
    left alone.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Encoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.lstm = nn.LSTM(8, 8, batch_first=True)

                    def forward(self, x, lengths=None):
                        out, hidden = self.lstm(x)
                        if lengths is not None:
                            out = nn.utils.rnn.pad_packed_sequence(output)[0]
                        return out
            """,
            after="""
                from mindspore import nn


                class Encoder(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.lstm = nn.LSTM(input_size=8, hidden_size=8, batch_first=True)

                    def construct(self, x, lengths=None):
                        out, hidden = self.lstm(x)
                        if lengths is not None:
                            # mindport: 'output' is bound nowhere: torch raises NameError on this line (GRAPH_MODE compiles no unbound name)
                            # out = nn.utils.rnn.pad_packed_sequence(output)[0]
                            raise NameError("name 'output' is not defined")
                        return out
            """,
            note="output is bound nowhere in the file: the line raises what it raised in torch.",
        ),
        Example(
            before="""
                import torch.nn as nn
                import torch.nn.functional as F


                def pad_to_multiple(x, multiple):
                    m = x.shape[-1] / multiple
                    if m.is_integer():
                        return x
                    return F.pad(x, (0, math.ceil(m) * multiple - x.shape[-1]))


                class Pad(nn.Module):
                    def forward(self, x):
                        return pad_to_multiple(x, 4)
            """,
            after="""
                from mindspore import nn


                def pad_to_multiple(x, multiple):
                    m = x.shape[-1] / multiple
                    if m.is_integer():
                        return x
                    # mindport: 'math' is bound nowhere: torch raises NameError on this line (GRAPH_MODE compiles no unbound name)
                    # return F.pad(x, (0, math.ceil(m) * multiple - x.shape[-1]))
                    raise NameError("name 'math' is not defined")


                class Pad(nn.Cell):
                    def construct(self, x):
                        return pad_to_multiple(x, 4)
            """,
            note="A module's function after an early return: math is never imported, the line raises as in torch.",
        ),
        Example(
            before="""
                from mindspore import nn


                class Net(nn.Cell):
                    def construct(self, x):
                        def scale(v):
                            return v * factor
                        factor = 2
                        return scale(x) + offset


                if __name__ == "__main__":
                    offset = 1
            """,
            note="factor is the method's, offset the module's (bound under __main__): left as written.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._module_bound: frozenset[str] | None = None  # None: a file this rule leaves alone
        self._bound: list[frozenset[str]] = []  # per enclosing compiled function: the names bound in it
        self._in_branch: set[int] = set()  # ids of the statement lines an if of a compiled function holds
        self._depth = 0  # enclosing classes and functions
        self._raised: set[int] = set()  # ids of the raise statements written
        self._optional: frozenset[str] = frozenset()  # names bound only by a guarded torch-based package import

    def visit_Module(self, node: cst.Module) -> None:
        if not self._module_classes or any(text in node.code for text in _DYNAMIC if text != "import *"):
            return
        try:
            tree = ast.parse(node.code)
        except SyntaxError:
            return
        stars = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]
        if any(n.level or n.module not in COMPLETE_STARS for n in stars):
            return  # a star whose names are not all known
        optional = _optional_imports(tree, self.scope.is_package)
        bound = _module_bindings(tree, {id(node) for node in optional}) - {"*"}
        bound |= {name for n in stars for name in star_names(n.module)}
        self._optional = frozenset(n for node in optional for n in _imported_names(node)) - bound
        self._module_bound = frozenset(bound) | MODULE_NAMES | frozenset(dir(builtins))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        self._depth += 1

    def leave_ClassDef(self, original_node, updated_node):
        self._depth -= 1
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self._depth == 0:  # a module's function: a graph compiles it when a model's method calls it
            self._compiled[-1] = True
        self._depth += 1
        if not self.compiled or self._module_bound is None:
            return
        outer = self._bound[-1] if self._bound else frozenset()
        try:
            tree = ast.parse(textwrap.dedent(code_of(node.with_changes(decorators=[]))))
        except SyntaxError:
            self._bound.append(frozenset({"*"}))
            return
        self._bound.append(outer | _function_bindings(tree))
        self._in_branch |= _branch_lines(node.body)

    def leave_FunctionDef(self, original_node, updated_node):
        self._depth -= 1
        if self.compiled and self._module_bound is not None and self._bound:
            self._bound.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.compiled or self._module_bound is None or not self._bound or "*" in self._bound[-1] \
                or id(original_node) not in self._in_branch:
            return updated_node
        try:
            tree = ast.parse(textwrap.dedent(code_of(original_node.with_changes(leading_lines=[]))))
        except SyntaxError:
            return updated_node
        reads = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        unbound = [n for n in dict.fromkeys(reads) if n not in self._bound[-1] and n not in self._module_bound]
        if not unbound:
            return updated_node
        name = unbound[0]
        self.ctx.converted_sites += 1
        original = code_of(original_node.with_changes(leading_lines=[])).strip().splitlines()
        reason = (f"{name!r} is bound only by a torch-based package's import, which raises under MindSpore (the "
                  "ImportError fallback runs)" if name in self._optional else f"{name!r} is bound nowhere")
        comments = [cst.EmptyLine(comment=cst.Comment(
            f"# mindport: {reason}: torch raises NameError on this line (GRAPH_MODE compiles no "
            "unbound name)"))] + [cst.EmptyLine(comment=cst.Comment(f"# {line}")) for line in original]
        raised = parse_statement(f"raise NameError({repr(f'name {name!r} is not defined')})")
        raised = raised.with_changes(leading_lines=[*original_node.leading_lines, *comments])
        self._raised.add(id(raised))
        if getattr(self, "runner", None) is not None:
            self.runner.supersede()  # a site flagged in the line (the package's own call, MP106) goes with it
        return raised

    def leave_IndentedBlock(self, original_node, updated_node):
        """The lines after a ``raise`` written here never run; a graph still resolves their names (a name the
        replaced line bound, ``remainder = math.ceil(m) * k`` then ``F.pad(x, (0, remainder))``): they are kept as
        comments at the block's end."""
        body = list(updated_node.body)
        cut = next((i for i, stmt in enumerate(body) if id(stmt) in self._raised), None)
        if cut is None or cut == len(body) - 1:
            return updated_node
        dead = [line for stmt in body[cut + 1:] for line in code_of(stmt).strip("\n").splitlines()]
        comments = [cst.EmptyLine(comment=cst.Comment(
            "# mindport: the lines below never run after the raise above (GRAPH_MODE would resolve their names)"))]
        comments += [cst.EmptyLine(comment=cst.Comment(f"# {line}".rstrip())) for line in dead]
        return updated_node.with_changes(body=body[:cut + 1], footer=[*comments, *updated_node.footer])


def _branch_lines(node: cst.CSTNode, inside: bool = False) -> set[int]:
    """The ids of the statement lines under ``node`` that an ``if`` (or its ``elif``/``else``) holds, or that follow,
    in the same block, an ``if`` one of whose branches leaves it (``if m.is_integer(): return x`` then the lines run
    only when it did not)."""
    out: set[int] = set()
    for child in node.children:
        if isinstance(child, cst.SimpleStatementLine):
            if inside:
                out.add(id(child))
            continue
        out |= _branch_lines(child, inside or isinstance(child, cst.If))
        if isinstance(child, cst.If) and _leaves(child):
            inside = True
    return out


def _leaves(node: cst.If) -> bool:
    """Whether a branch of ``node`` ends in ``return``, ``raise``, ``continue`` or ``break``: the lines after the
    ``if`` in its block then run on some calls only."""
    branch: cst.CSTNode | None = node
    while branch is not None:
        body = getattr(branch, "body", None)
        last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else body
        if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body and isinstance(
                last.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        branch = getattr(branch, "orelse", None)
    return False


def _optional_imports(tree: ast.Module, is_package) -> list:
    """The imports of a torch-based package (``is_package``: one not part of the project) in the body of a module's
    ``try`` that catches ImportError (dinov2's ``from xformers.ops import memory_efficient_attention, unbind``): the
    conversion makes them raise, so under MindSpore they bind nothing and the ``except`` fallback runs."""
    out: list = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Try) and any(_catches_import_error(h.type) for h in node.handlers):
            for inner in node.body:
                for stmt in ast.walk(inner):
                    if isinstance(stmt, ast.ImportFrom) and not stmt.level and is_package(stmt.module) \
                            or isinstance(stmt, ast.Import) and all(is_package(a.name) for a in stmt.names):
                        out.append(stmt)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _catches_import_error(kind) -> bool:
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
               for n in names)


def _imported_names(node) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def _module_bindings(tree: ast.Module, skip: set[int] = frozenset()) -> set[str]:
    """Names the module's statements bind, at any depth outside function and class bodies (their own names too), but
    the import statements in ``skip`` (ids)."""
    out: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if id(node) in skip:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):  # a function's ``global x`` then ``x = ...``: the module's
            out |= set(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(n, ast.ClassDef) for n in ast.walk(node)):
            out |= _function_bindings(node)  # a class made in a function: its methods read the function's names
    return out


def _function_bindings(tree: ast.AST) -> frozenset[str]:
    """Every name a function (with what it nests) binds: parameters, assignments, loops, imports, nested names."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out |= set(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
    return frozenset(out)
