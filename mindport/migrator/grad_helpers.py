"""Calls of a file's one-line ``torch.autograd.grad`` helpers written out where they stand (a pass before the rules).

Physics-informed scripts wrap the derivative in a helper and call it from the loss:

    def gradients(outputs, inputs):
        return torch.autograd.grad(outputs, inputs, grad_outputs=torch.ones_like(outputs), create_graph=True)

    u = self.net(x)
    u_g = gradients(u, x)[0]           # u_t, u_x
    u_gg = gradients(u_x, x)[0]        # u_xx

MindSpore has no tape to take a gradient of a tensor already computed: the training-loop rule turns each
``torch.autograd.grad`` into a function of its inputs, made of the statements that compute its outputs from them
(``mindport.runtime.training.grad_graph``). Inside the helper those statements are in its caller, so the call was
left as torch's (MP105 "outputs does not depend on inputs in this block") and the port failed at run time. Python
evaluates ``gradients(u, x)`` as the helper's returned expression with ``outputs`` = ``u`` and ``inputs`` = ``x``,
so the call is that expression with the arguments put in: ``torch.autograd.grad(u, x, grad_outputs=
torch.ones_like(u), create_graph=True)[0]``, which the rule then follows in the caller's block, as written by hand.

Written out only when that is certain: the helper is defined once at module level, undecorated, its body one
``return`` of an expression (a docstring aside) holding one call of ``torch.autograd.grad`` (however the file imports
it: ``torch.autograd.grad``, ``autograd.grad``, ``grad`` from ``torch.autograd``), with no lambda or comprehension;
its parameters are plain ones (a default is a literal or a name: used when the call leaves it out). The call passes positional and keyword arguments that bind
each parameter once, each argument a name, an attribute chain, a literal, or a subscript of those with literal or
name indices (reading it twice reads the same tensor). A function that binds the helper's name itself keeps its calls.
The helper stays as written (its own ``torch.autograd.grad`` keeps MP105: alone it cannot be followed).

A helper of several lines is one when they are ``local = expression`` lines and a last ``return`` (hjlee21/PINN_STUDY's
``dy_dt = torch.autograd.grad(outputs=y_pred, inputs=t, ...)[0]; residual = dy_dt - a * b * torch.cos(b * t); return
torch.mean(residual ** 2)``): the expression they compute, each local put in where it is read, when each is read once,
by a later line, in the order the lines bind them (the same computation in the same order). Its expression may read
names of the module besides its parameters (``a``, ``b``): a call is written out only where no enclosing function
binds one of them. A helper calling such a helper (the total loss calling the residual) becomes one once the inner
call is written out in it: the pass repeats while it writes something, a few levels deep.

A method of the same form (``def gradients(self, u, x): return torch.autograd.grad(u, x, ...)``, defined once in its
class, its expression not reading ``self``) called as ``self.gradients(u, x)`` in a method of that class (or a closure
inside one) is written out the same way.
"""
from __future__ import annotations

import builtins

import libcst as cst

from mindport.migrator.rules.references import torch_imports
from mindport.migrator.scopes import dotted_name
from mindport.migrator.syntax import function_bindings, module_code
from mindport.migrator.walk import transform, walk

_GRAD = "torch.autograd.grad"
_DEPTH = 4  # helpers calling helpers, at most this deep
_BUILTINS = frozenset(dir(builtins))  # True, None, abs: the same in every module


def inline_grad_helpers(module: cst.Module, foreign: tuple = ()) -> cst.Module:
    """The module with calls of its one-line ``torch.autograd.grad`` helpers written out (module docstring), and calls
    of helpers of several lines (``foreign``: those of the project's other modules, :func:`module_grad_helpers`)
    written out as lines before the statement that calls them."""
    code = module_code(module)
    if "grad" not in code and not foreign:
        return module
    imports = torch_imports(module)
    if not imports:
        return module
    bindings = import_bindings(module)
    outside: dict[tuple[str, str], tuple] = {}
    for key, name, source, their_bindings in foreign:
        if key not in {target.rpartition(".")[0] if kind == "from" else target
                       for kind, target in bindings.values()}:
            continue  # the file does not import that module
        function = cst.parse_module(source).body[0]
        theirs = {bound: target for bound, (_, target) in their_bindings if target.split(".")[0] == "torch"}
        found = _line_helper(function, theirs) if isinstance(function, cst.FunctionDef) else None
        if found is not None:
            outside[(key, name)] = (*found, dict(their_bindings))
    for _ in range(_DEPTH):  # a helper calling a helper is one once the inner call is written out in it
        helpers: dict[str, tuple] = {}
        defined: dict[str, int] = {}
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                defined[stmt.name.value] = defined.get(stmt.name.value, 0) + 1
                found = _helper(stmt, imports)
                if found is not None:
                    helpers[stmt.name.value] = found
            elif isinstance(stmt, cst.ClassDef):
                defined[stmt.name.value] = defined.get(stmt.name.value, 0) + 1
        helpers = {name: found for name, found in helpers.items() if defined[name] == 1}
        written = transform(module, _WriteOut(helpers, imports))
        lines: dict[str, tuple] = {}
        for stmt in written.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value not in helpers \
                    and defined.get(stmt.name.value) == 1:
                found = _line_helper(stmt, imports)
                if found is not None:
                    lines[stmt.name.value] = found
        if lines or outside:
            written = transform(written, _WriteLines(lines, outside, bindings, _Names.of(written)))
        if written.deep_equals(module):
            break
        module = written
    if "grad" in module_code(module):
        module = transform(module, _IntoBranches(imports))
    return module


def _resolved(func, imports: dict[str, str]) -> str | None:
    dotted = dotted_name(func)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    if head not in imports:
        return None
    return f"{imports[head]}.{rest}" if rest else imports[head]


def _plain(expr) -> bool:
    """A name, an attribute chain, a literal, or a subscript of those by literals, names and slices of them."""
    if isinstance(expr, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    if isinstance(expr, cst.Attribute):
        return _plain(expr.value)
    if isinstance(expr, cst.Subscript):
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not _plain(index.value):
                    return False
            elif isinstance(index, cst.Slice):
                if not all(part is None or _plain(part) for part in (index.lower, index.upper, index.step)):
                    return False
            else:
                return False
        return _plain(expr.value)
    return False


class _Reads(cst.CSTVisitor):
    """Names read (not attribute names, not keyword names), the torch.autograd.grad calls, and whether the
    expression holds a lambda or a comprehension (names it binds itself)."""

    def __init__(self, imports: dict[str, str]) -> None:
        super().__init__()
        self.imports = imports
        self.names: set[str] = set()
        self.grads = 0
        self.binds = False

    def visit_Name(self, node):
        self.names.add(node.value)

    def visit_Attribute(self, node):
        walk(node.value, self)
        return False

    def visit_Arg(self, node):
        walk(node.value, self)
        return False

    def visit_Call(self, node):
        if _resolved(node.func, self.imports) == _GRAD:
            self.grads += 1

    def visit_Lambda(self, node):
        self.binds = True

    def visit_ListComp(self, node):
        self.binds = True

    def visit_GeneratorExp(self, node):
        self.binds = True

    def visit_SetComp(self, node):
        self.binds = True

    def visit_DictComp(self, node):
        self.binds = True

    def visit_NamedExpr(self, node):
        self.binds = True


def _helper(function: cst.FunctionDef, imports: dict[str, str], method: bool = False):
    """(parameter names, defaults, returned expression) of a one-line torch.autograd.grad helper; None otherwise.
    A ``method``'s first parameter (``self``) is not among the names, and the expression may not read it."""
    params = function.params
    if method:
        if not params.params:
            return None
        params = params.with_changes(params=params.params[1:])
    body = _plain_body(function, params)
    if body is None:
        return None
    names = tuple(p.name.value for p in params.params)
    value = _folded(body, names)
    if value is None:
        return None
    reads = _Reads(imports)
    walk(value, reads)
    if reads.grads != 1 or reads.binds:
        return None
    defaults = {p.name.value: p.default for p in params.params if p.default is not None}
    return names, defaults, value, frozenset(reads.names - set(names))


def _folded(body: list, names: tuple[str, ...]):
    """The one expression a body of ``local = expression`` lines and a last ``return expression`` evaluates: each
    local put in where it is read. Only when that is the same computation in the same order: every local bound once,
    no parameter rebound, each read exactly once, by a later line, and the locals met (each after the locals its own
    expression reads) in the order the lines bind them. None otherwise."""
    if not body or not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in body):
        return None
    *lines, last = [s.body[0] for s in body]
    if not isinstance(last, cst.Return) or last.value is None:
        return None
    values: dict[str, cst.BaseExpression] = {}
    for line in lines:
        if not isinstance(line, cst.Assign) or len(line.targets) != 1 \
                or not isinstance(line.targets[0].target, cst.Name):
            return None
        local = line.targets[0].target.value
        if local in names or local in values:
            return None
        values[local] = line.value
    if not values:
        return last.value
    met: list[str] = []

    def meet(expr) -> None:
        for read in _Names.ordered(expr):
            if read in values:
                meet(values[read])
                met.append(read)

    meet(last.value)
    if met != list(values):  # each local read once, in the order bound (a local read by no one: not met)
        return None
    written = last.value
    for local in reversed(met):  # the last bound first: its expression may read earlier locals, put in after
        written = written.visit(_Substitute({local: values[local].with_changes(lpar=[cst.LeftParen()],
                                                                               rpar=[cst.RightParen()])}))
    return written


class _Names(cst.CSTVisitor):
    """The names an expression reads (not attribute names, not keyword names)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()
        self.order: list[str] = []

    @classmethod
    def of(cls, expr) -> set[str]:
        finder = cls()
        walk(expr, finder)
        return finder.found

    @classmethod
    def ordered(cls, expr) -> list[str]:
        """Every read, in the order of the source (Python's order of evaluation for the expressions kept here)."""
        finder = cls()
        walk(expr, finder)
        return finder.order

    def visit_Name(self, node):
        self.found.add(node.value)
        self.order.append(node.value)

    def visit_Attribute(self, node):
        walk(node.value, self)
        return False

    def visit_Arg(self, node):
        walk(node.value, self)
        return False


class _Substitute(cst.CSTTransformer):
    """The helper's expression with its parameters' reads replaced by the call's arguments."""

    def __init__(self, values: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.values = values
        self._skip: set[int] = set()

    def visit_Attribute(self, node):
        self._skip.add(id(node.attr))

    def visit_Arg(self, node):
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def leave_Name(self, original_node, updated_node):
        if id(original_node) in self._skip or original_node.value not in self.values:
            return updated_node
        return self.values[original_node.value].deep_clone()  # a node of its own at each read


class _WriteOut(cst.CSTTransformer):
    def __init__(self, helpers: dict, imports: dict[str, str]) -> None:
        super().__init__()
        self._helpers = helpers
        self._imports = imports
        self._bound: list[set[str]] = []  # per enclosing function: the names it binds (a local hides the helper)
        self._methods: list[dict] = []  # per enclosing class: its one-line helper methods (defined once)
        self._selves: list[str | None] = []  # per enclosing function: its first parameter when it is a method
        self._class_at: list[int] = []  # per enclosing class: how many functions enclose it

    def visit_ClassDef(self, node):
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        defs = [s for s in body if isinstance(s, cst.FunctionDef)]
        found = {}
        for d in defs:
            helper = _helper(d, self._imports, method=True)
            if helper is not None and sum(e.name.value == d.name.value for e in defs) == 1 \
                    and d.params.params[0].name.value not in _Names.of(helper[2]):
                found[d.name.value] = helper
        self._methods.append(found)
        self._class_at.append(len(self._selves))

    def leave_ClassDef(self, original_node, updated_node):
        self._methods.pop()
        self._class_at.pop()
        return updated_node

    def visit_FunctionDef(self, node):
        self._bound.append(function_bindings(node))
        in_class = bool(self._class_at) and self._class_at[-1] == len(self._selves)  # a method of the class
        self._selves.append(node.params.params[0].name.value if in_class and node.params.params
                            and not node.decorators else None)

    def _self_name(self) -> str | None:
        """The enclosing method's first parameter, when no function inside it (a closure) binds that name."""
        for i in range(len(self._selves) - 1, -1, -1):
            if self._selves[i] is not None:
                inner = self._bound[i + 1:]
                return None if any(self._selves[i] in bound for bound in inner) else self._selves[i]
        return None

    def leave_FunctionDef(self, original_node, updated_node):
        self._bound.pop()
        self._selves.pop()
        return updated_node

    def leave_Call(self, original_node, updated_node):
        func = original_node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and self._methods \
                and self._self_name() == func.value.value \
                and func.attr.value in self._methods[-1]:
            helper = self._methods[-1][func.attr.value]  # self.gradients(u, x) in a method of the same class
        elif isinstance(func, cst.Name) and func.value in self._helpers \
                and not any(func.value in bound for bound in self._bound):
            helper = self._helpers[func.value]
        else:
            return updated_node
        names, defaults, value, free = helper
        if any(name in bound for bound in self._bound for name in free):
            return updated_node  # a name the helper reads from the module is a local here: another value
        values: dict[str, cst.BaseExpression] = {}
        args = list(updated_node.args)
        for i, arg in enumerate(args):
            if arg.star or not _plain(arg.value):
                return updated_node
            if arg.keyword is None:
                if i >= len(names) or any(a.keyword is not None for a in args[:i]):
                    return updated_node
                name = names[i]
            else:
                name = arg.keyword.value
            if name not in names or name in values:
                return updated_node
            values[name] = arg.value.with_changes(lpar=[], rpar=[]) if hasattr(arg.value, "lpar") else arg.value
        for name in names:
            if name not in values:
                if name not in defaults:
                    return updated_node
                values[name] = defaults[name]
        written = value.visit(_Substitute(values))
        if isinstance(written, cst.BaseExpression) and hasattr(written, "lpar") and updated_node.lpar:
            written = written.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return written


# --- helpers of several lines whose locals are read more than once, and helpers of the project's other modules
def import_bindings(module: cst.Module) -> dict[str, tuple[str, str]]:
    """The names the file's top-level imports bind -> ("import", the module) or ("from", "module.name")
    (``import utils`` -> ("import", "utils"), ``import numpy as np`` -> ("import", "numpy"), ``from utils import
    residual`` -> ("from", "utils.residual"); ``import a.b`` binds ``a`` to ("import", "a"))."""
    names: dict[str, tuple[str, str]] = {}
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    dotted = dotted_name(alias.name)
                    if dotted is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names[alias.asname.name.value] = ("import", dotted)
                    else:
                        names[dotted.split(".")[0]] = ("import", dotted.split(".")[0])
            elif isinstance(stmt, cst.ImportFrom) and not stmt.relative and stmt.module is not None \
                    and not isinstance(stmt.names, cst.ImportStar):
                source = dotted_name(stmt.module)
                for alias in stmt.names:
                    name = dotted_name(alias.name)
                    bound = alias.asname.name.value if alias.asname is not None and isinstance(
                        alias.asname.name, cst.Name) else name
                    if source and name and bound:
                        names[bound] = ("from", f"{source}.{name}")
    return names


def module_grad_helpers(source: str) -> tuple:
    """The helpers of several lines holding ``torch.autograd.grad`` that a module defines at its top level (after its
    own helpers' calls are written out in them): ((name, function source, the module's import bindings), ...), for
    the callers in the project's other modules (``convert_path``; kimy-de/pinns's ``utils.burgers_equation``)."""
    if "autograd" not in source:
        return ()
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return ()
    module = inline_grad_helpers(module)
    imports = torch_imports(module)
    if not imports:
        return ()
    bindings = tuple(sorted((k, v) for k, v in import_bindings(module).items()))
    names = [s.name.value for s in module.body if isinstance(s, cst.FunctionDef)]
    found = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and names.count(stmt.name.value) == 1 \
                and _line_helper(stmt, imports) is not None:
            found.append((stmt.name.value, module.code_for_node(stmt.with_changes(leading_lines=[])), bindings))
    return tuple(found)


def _plain_body(function: cst.FunctionDef, params: cst.Parameters) -> list | None:
    """The body of a helper without its docstring, when it takes plain positional parameters (defaults of plain
    values), has no decorator and an indented body; None otherwise."""
    if params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) \
            or params.star_kwarg is not None or function.decorators \
            or not isinstance(function.body, cst.IndentedBlock):
        return None
    if any(p.default is not None and not _plain(p.default) for p in params.params):
        return None
    body = list(function.body.body)
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]
    return body


def _line_helper(function: cst.FunctionDef, imports: dict[str, str]):
    """(parameter names, defaults, [(local, expression), ...], returned expression, free names) of a helper whose body
    is ``local = expression`` lines and a last ``return expression`` holding ``torch.autograd.grad`` (its locals read
    any number of times: written out as lines, not folded into one expression); None otherwise."""
    params = function.params
    body = _plain_body(function, params)
    if not body or not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in body):
        return None
    *assigns, last = [s.body[0] for s in body]
    if not isinstance(last, cst.Return) or last.value is None:
        return None
    names = tuple(p.name.value for p in params.params)
    lines: list[tuple[str, cst.BaseExpression]] = []
    for line in assigns:
        if not isinstance(line, cst.Assign) or len(line.targets) != 1 \
                or not isinstance(line.targets[0].target, cst.Name):
            return None
        local = line.targets[0].target.value
        if local in names or any(local == bound for bound, _ in lines):
            return None
        lines.append((local, line.value))
    reads = _Reads(imports)
    for _, value in lines:
        walk(value, reads)
    walk(last.value, reads)
    if reads.grads < 1 or reads.binds:
        return None
    defaults = {p.name.value: p.default for p in params.params if p.default is not None}
    free = reads.names - set(names) - {local for local, _ in lines} - _BUILTINS
    return names, defaults, lines, last.value, frozenset(free)


class _HelperCalls(cst.CSTVisitor):
    """The calls of a statement that are not inside a lambda, a comprehension or a nested function."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node):
        self.found.append(node)

    def visit_Lambda(self, node):
        return False

    def visit_ListComp(self, node):
        return False

    def visit_GeneratorExp(self, node):
        return False

    def visit_SetComp(self, node):
        return False

    def visit_DictComp(self, node):
        return False

    def visit_FunctionDef(self, node):
        return False


_SIMPLE = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return)


class _WriteLines(cst.CSTTransformer):
    """A statement calling a helper of several lines (one call, plain arguments) becomes the helper's lines, each
    local renamed (``u_tx`` -> ``u_tx_burgers_equation``) and each parameter read as its argument, then the statement
    with the returned expression in place of the call: Python's own computation, in the same order, where the
    training-loop rule follows each ``torch.autograd.grad`` in the caller's block. A helper of another module of the
    project (``utils.burgers_equation(u, x)`` after ``import utils``) is written out where every name it reads
    besides its parameters and locals is bound by the same import in the caller."""

    def __init__(self, lines: dict, outside: dict, bindings: dict, seen: set[str]) -> None:
        super().__init__()
        self._lines = lines
        self._outside = outside
        self._bindings = bindings
        self._seen = set(seen)
        self._bound: list[set[str]] = []

    def visit_FunctionDef(self, node):
        self._bound.append(function_bindings(node))

    def leave_FunctionDef(self, original_node, updated_node):
        self._bound.pop()
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self._expanded(updated_node.body))

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self._expanded(updated_node.body))

    def _expanded(self, body) -> list:
        out = []
        for stmt in body:
            out.extend(self._expand(stmt))
        return out

    def _helper_of(self, func):
        if isinstance(func, cst.Name):
            if any(func.value in bound for bound in self._bound):
                return None
            if func.value in self._lines:
                return self._lines[func.value], None
            kind, target = self._bindings.get(func.value, ("", ""))
            if kind == "from":
                module, _, name = target.rpartition(".")
                found = self._outside.get((module, name))
                return (found[:5], found[5]) if found is not None else None
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and not any(func.value.value in bound for bound in self._bound):
            kind, target = self._bindings.get(func.value.value, ("", ""))
            if kind == "import":
                found = self._outside.get((target, func.attr.value))
                return (found[:5], found[5]) if found is not None else None
        return None

    def _expand(self, stmt) -> list:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                or not isinstance(stmt.body[0], _SIMPLE):
            return [stmt]
        calls = _HelperCalls()
        walk(stmt, calls)
        sites = [(call, found) for call in calls.found if (found := self._helper_of(call.func)) is not None]
        if len(sites) != 1:
            return [stmt]
        call, ((names, defaults, lines, value, free), their_bindings) = sites[0]
        if any(name in bound for bound in self._bound for name in free):
            return [stmt]  # a name the helper reads from its module is a local here: another value
        if their_bindings is not None and any(
                their_bindings.get(name) is None or self._bindings.get(name) != their_bindings.get(name)
                for name in free):
            return [stmt]  # a name the other module's helper reads is not imported alike here
        values: dict[str, cst.BaseExpression] = {}
        args = list(call.args)
        for i, arg in enumerate(args):
            if arg.star or not _plain(arg.value):
                return [stmt]
            if arg.keyword is None:
                if i >= len(names) or any(a.keyword is not None for a in args[:i]):
                    return [stmt]
                name = names[i]
            else:
                name = arg.keyword.value
            if name not in names or name in values:
                return [stmt]
            values[name] = arg.value.with_changes(lpar=[], rpar=[]) if hasattr(arg.value, "lpar") else arg.value
        for name in names:
            if name not in values:
                if name not in defaults:
                    return [stmt]
                values[name] = defaults[name]
        helper = code_of_func(call.func)
        for local, _ in lines:
            fresh = f"{local}_{helper}"
            n = 2
            while fresh in self._seen:
                fresh, n = f"{local}_{helper}_{n}", n + 1
            self._seen.add(fresh)
            values[local] = cst.Name(fresh)
        written = []
        for local, expr in lines:
            written.append(cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(target=values[local].deep_clone())],
                value=expr.visit(_Substitute(values)))]))
        result = value.visit(_Substitute(values))
        if hasattr(result, "lpar") and not isinstance(result, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)):
            result = result.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        if written:
            written[0] = written[0].with_changes(leading_lines=stmt.leading_lines)
            stmt = stmt.with_changes(leading_lines=[])
        return [*written, stmt.deep_replace(call, result)]


def code_of_func(func) -> str:
    """The helper's own name (``utils.burgers_equation`` -> ``burgers_equation``)."""
    return func.attr.value if isinstance(func, cst.Attribute) else func.value


class _IntoBranches(cst.CSTTransformer):
    """``u = net(x)`` before an ``if`` whose branches take ``torch.autograd.grad(u, x, ...)`` (kimy-de/pinns:
    ``u_hat_f = pinn(variables_f)``, then ``if args.eq == 'bg': loss_f = ...burgers_equation(u_hat_f, variables_f)``)
    is moved into every branch of the ``if`` (an ``else`` added when it has none): it runs once on every path, where
    it ran, and the training-loop rule finds the statement computing the gradient's outputs from its inputs in the
    gradient's own block (across blocks it flagged MP105 "does not depend on ... in this block"). Simple statements
    between it and the ``if`` that neither read nor bind its name or a name it reads (``optimizer.zero_grad()``,
    another loss term) stay where they are, before it now."""

    def __init__(self, imports: dict[str, str]) -> None:
        super().__init__()
        self._imports = imports

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self._moved(list(updated_node.body)))

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self._moved(list(updated_node.body)))

    def _moved(self, body: list) -> list:
        out: list = []
        for stmt in body:
            if isinstance(stmt, cst.If) and (found := self._source(out, stmt)) is not None:
                before = out.pop(found)
                out.append(self._into(stmt, before))
                continue
            out.append(stmt)
        return out

    def _source(self, out: list, node: cst.If) -> int | None:
        """The index in ``out`` of the assignment whose name a branch of ``node`` takes the gradient of: the
        nearest one before it, past simple statements that neither read nor bind its name or a name it reads
        (``optimizer.zero_grad()``, another loss term), which then run before it as they ran after it."""
        between: set[str] = set()
        for index in range(len(out) - 1, -1, -1):
            before = out[index]
            if not isinstance(before, cst.SimpleStatementLine) \
                    or any(isinstance(s, (cst.Return, cst.Raise, cst.Break, cst.Continue, cst.Global, cst.Nonlocal,
                                          cst.Del)) for s in before.body):
                return None
            if len(before.body) == 1 and isinstance(before.body[0], cst.Assign) and len(before.body[0].targets) == 1 \
                    and isinstance(before.body[0].targets[0].target, cst.Name):
                name = before.body[0].targets[0].target.value
                reads = _Names.of(before.body[0].value)
                if name not in reads and not self._test_reads(node, name) and self._takes_grad(node, name, reads):
                    return index if not between & (reads | {name}) else None
            between |= _Names.of(before)
        return None

    def _test_reads(self, node, name: str) -> bool:
        while isinstance(node, cst.If):
            if name in _Names.of(node.test):
                return True
            node = node.orelse
        return False

    def _takes_grad(self, node: cst.If, name: str, reads: set[str]) -> bool:
        """Does a branch take torch.autograd.grad of ``name`` with respect to a name the assignment reads?"""
        calls = _AllCalls()
        walk(node, calls)
        for call in calls.found:
            if _resolved(call.func, self._imports) != _GRAD:
                continue
            args = {a.keyword.value if a.keyword else ("outputs", "inputs")[i] if i < 2 else "?": a.value
                    for i, a in enumerate(call.args)}
            outputs, inputs = args.get("outputs"), args.get("inputs")
            if isinstance(outputs, cst.Name) and outputs.value == name and isinstance(inputs, cst.Name) \
                    and inputs.value in reads:
                return True
        return False

    def _into(self, node, stmt):
        """The ``if`` with ``stmt`` first in each branch, and an ``else`` holding it where the chain has none."""
        if isinstance(node, cst.If):
            body = node.body
            orelse = node.orelse
            return node.with_changes(
                body=body.with_changes(body=[stmt.deep_clone(), *body.body]),
                orelse=self._into(orelse, stmt) if orelse is not None else cst.Else(
                    body=cst.IndentedBlock(body=[stmt.deep_clone()])))
        return node.with_changes(body=node.body.with_changes(body=[stmt.deep_clone(), *node.body.body]))


class _AllCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node):
        self.found.append(node)
