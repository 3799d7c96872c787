"""The converter rule AliasUpdateTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/alias_updates.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import bindings_in_scope, head_name, target_names
from mindport.migrator.walk import walk

_LOOPS = (cst.For, cst.While)


class AliasUpdateTransform(Rule):
    """After an in-place update of a tensor that another local name refers to (``r = h`` or ``r = h = ...``
    earlier in the same function, neither rebound since), the other name is bound to the updated tensor again
    (``r = h``) where it is read afterwards.

    In torch an in-place update changes the tensor itself, so every name bound to it sees the new values:
    ``h = self.fc(x); r = h; h += 1; return h + r`` is ``2 * (h + 1)``. MindSpore 2.10 does not keep this
    (measured on CPU): in PyNative ``Tensor.__iadd__`` (``+=``, ``-=``, ``*=``, ``/=`` ...) returns a new tensor and
    binds only ``h`` to it, so ``r`` keeps the old values; in GRAPH_MODE an item write ``h[0] = v`` (also
    ``h[i] += v``) gives ``h`` a new value that ``r`` does not see, and the runtime's in-place updates
    (``h = mp_inplace.add_(h, other=x)``) are not ordered before later reads of ``r`` when ``h`` is no Parameter.
    Either way the result differs without any error. So the rule writes ``r = h`` after the update: for an item
    write and a ``*_`` method (the receiver is the same object before and after, in torch and in Python), and, after
    an augmented assignment, ``r = h if isinstance(h, ms.Tensor) else r`` (an augmented assignment of a Python
    number makes a new number in torch's Python too, where ``r`` keeps the old one; the test is decided at compile
    time in GRAPH_MODE).

    The caller's names are other names of a function's parameter: ``def forward(self, z): z -= self.shift`` changes
    the tensor its caller passed (``y = self.flow(h); return y + h`` reads the shifted ``h`` in torch). MindSpore's
    PyNative ``-=`` binds a new tensor to ``z`` only (GRAPH_MODE's updates the caller's, measured), and the text of
    the function can't tell whether a caller reads its argument again. So ``z -= e`` (also ``+=``, ``*=``, ``/=``)
    of a parameter that still refers to the caller's object (no other binding of it before the line, nor in a loop
    around it), and that the function's text shows to be a tensor (the input of a model's ``forward``, a receiver
    of ``.shape``/``.view(...)``..., the first argument of a ``torch.``/``F.`` call), is
    ``z = mp_inplace.isub(z, e)`` (``iadd``, ``imul``, ``itruediv``): the tensor written in place in PyNative
    (gradients as torch's), MindSpore's own ``-=`` in a graph, Python's for a number or a numpy array. A parameter
    annotated or defaulted as a number (``eps=1e-6``) is left. Left as written: a name not read after the update, an alias made inside a loop body whose
    names the body rebinds (the alias may not hold on the next pass), and aliases the text can't settle
    (containers, attributes, a function's parameter updated in place for its caller, views such as ``v = h[:, :2]``,
    an alias made before a loop whose body updates and then rebinds the name: it holds on the first pass only).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)

                    def forward(self, x):
                        h = self.fc(x)
                        r = h
                        h += 1
                        h.add_(x)
                        h[:, 0] = 0
                        return h + r
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import inplace as mp_inplace


                class Block(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def construct(self, x):
                        h = self.fc(x)
                        r = h
                        h = h + 1
                        r = h if isinstance(h, ms.Tensor) else r
                        h = mp_inplace.add_(h, other=x)
                        r = h
                        h[:, 0] = 0
                        r = h
                        return h + r
            """,
            note="Each update of h is seen by r again, as in torch (where r is h); h += 1 before item writes of h is "
                 "h = h + 1 (AugAssignRebindTransform).",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Flow(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.shift = nn.Parameter(torch.zeros(4))

                    def forward(self, z, eps=1e-6):
                        z -= self.shift
                        eps *= 2
                        return z * 2 + eps
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace


                class Flow(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.shift = ms.Parameter(ops.zeros(4))

                    def construct(self, z, eps=1e-6):
                        z = mp_inplace.isub(z, self.shift)
                        eps *= 2
                        return z * 2 + eps
            """,
            note="The caller's tensor z is updated in place as in torch; the number eps is left.",
        ),
        Example(
            before="""
                def scaled(x):
                    y = x * 2
                    first = y
                    y += 1
                    y = y * 3
                    return y
            """,
            note="first is never read after the update: nothing to rebind.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._plan: dict[int, list[tuple[str, str, bool]]] = {}  # line id -> (alias, updated name, guarded)
        self._caller: set[int] = set()  # lines updating a parameter the caller's tensor: x += e

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if isinstance(node.body, cst.IndentedBlock):
            self._plan.update(_plan(node))
            self._caller |= _parameter_updates(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        rebinds = self._plan.pop(id(original_node), None) or []
        if id(original_node) in self._caller:
            self._caller.discard(id(original_node))
            updated_node = self._in_place(updated_node)
        if not rebinds or len(updated_node.body) != 1:
            return updated_node
        lines = [updated_node]
        for alias, name, guarded in rebinds:
            if guarded:
                tensor = self.ctx.target_text("mindspore.Tensor")
                value = f"{name} if isinstance({name}, {tensor}) else {alias}"
            else:
                value = name
            lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(alias))],
                                                             cst.parse_expression(value))]))
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)

    def _in_place(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """``x += e`` of a parameter -> ``x = mp_inplace.iadd(x, e)`` (left when another rule rewrote it)."""
        small = line.body[0] if len(line.body) == 1 else None
        helper = _HELPERS.get(type(small.operator)) if isinstance(small, cst.AugAssign) else None
        if helper is None or not isinstance(small.target, cst.Name):
            return line
        call = cst.Call(self.ctx.target_expr(f"mindport.runtime.inplace.{helper}"),
                        [cst.Arg(cst.Name(small.target.value)), cst.Arg(small.value)])
        self.ctx.converted_sites += 1
        return line.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(small.target.value))], call,
                                                  semicolon=small.semicolon)])


_HELPERS = {cst.AddAssign: "iadd", cst.SubtractAssign: "isub", cst.MultiplyAssign: "imul",
            cst.DivideAssign: "itruediv"}


# --- the analysis, on the torch source of one function --------------------------------------------------------------

def _plan(fn: cst.FunctionDef) -> dict[int, list[tuple[str, str, bool]]]:
    """For each line of ``fn`` (not of its nested functions) that updates a name in place while another name is
    bound to the same object and mentioned afterwards: (that name, the updated one, guarded)."""
    order = _Order(fn)
    plan: dict[int, list[tuple[str, str, bool]]] = {}
    evidence = _tensor_evidence(fn)

    def block(statements, groups: dict[str, _Object], loops: tuple) -> dict[str, _Object]:
        groups = dict(groups)
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                if len(stmt.body) == 1:
                    update = _update(stmt.body[0])
                    if update is not None:
                        name, guarded = update
                        aliases = [a for a, g in groups.items()
                                   if a != name and name in groups and g == groups[name]
                                   and order.mentioned_after(a, stmt, loops)]
                        if guarded and not (_made_by_torch(groups.get(name)) or name in evidence
                                            or any(a in evidence for a in aliases)):
                            aliases = []  # nothing in the text says a tensor: a counter (seek += n) is left
                        if aliases:
                            plan[id(stmt)] = [(a, name, guarded) for a in sorted(aliases)]
                _bind(stmt, groups, evidence)
                continue
            bound = bindings_in_scope(stmt)
            for child, is_loop in _blocks(stmt):
                inner = {k: (_Object(v.tensorish) if is_loop and k in bound else v)
                         for k, v in groups.items()}  # a loop's own names: no alias from before it holds
                block(child, inner, loops + ((stmt,) if is_loop else ()))
            for name in bound:  # bound in the statement: its own object from here (keeping the tensor hint)
                groups[name] = _Object(_made_by_torch(groups.get(name)))
        return groups

    block(fn.body.body, {}, ())
    return plan


def _parameter_updates(fn: cst.FunctionDef) -> set[int]:
    """The lines of ``fn`` (not of its nested functions) that are ``x += e`` (``-=``, ``*=``, ``/=``) of one of its
    parameters while the parameter still refers to the caller's object: no other binding of it before the line,
    nor in a loop around the line."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
              if not _number(p)}
    params -= {"self", "cls"}
    params &= _tensor_evidence(fn)
    if not params:
        return set()
    order = _Order(fn)
    bindings: dict[str, list[int]] = {}
    found: list[tuple[cst.SimpleStatementLine, str, tuple]] = []

    def block(statements, loops: tuple) -> None:
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body[0] if len(stmt.body) == 1 else None
                if isinstance(small, cst.AugAssign) and type(small.operator) in _HELPERS \
                        and isinstance(small.target, cst.Name) and small.target.value in params:
                    found.append((stmt, small.target.value, loops))
                    continue
                names, at = bindings_in_scope(stmt), order.position[id(stmt)]
            else:
                names, at = _bound_names_here(stmt), order.position[id(stmt)]
                for child, is_loop in _blocks(stmt):
                    block(child, loops + ((stmt,) if is_loop else ()))
            for name in names & params:
                bindings.setdefault(name, []).append(at)

    block(fn.body.body, ())
    lines = set()
    for stmt, name, loops in found:
        at = order.position[id(stmt)]
        spots = bindings.get(name, ())
        if any(p < at for p in spots):
            continue
        if any(order.position[id(loop)] <= p <= order.last[id(loop)] for loop in loops for p in spots):
            continue
        lines.add(id(stmt))
    return lines


_TENSOR_MEMBERS = frozenset({
    "shape", "size", "dim", "ndim", "dtype", "device", "numel", "view", "reshape", "permute", "transpose",
    "unsqueeze", "squeeze", "contiguous", "detach", "clone", "float", "half", "to", "sum", "mean", "max", "min",
    "softmax", "expand", "expand_as", "masked_fill", "new_zeros", "new_ones", "new_full", "type_as", "flatten",
    "chunk", "split", "matmul", "exp", "log", "abs", "clamp", "pow", "sqrt", "norm", "argmax", "requires_grad",
})


def _tensor_evidence(fn: cst.FunctionDef) -> set[str]:
    """The parameters of ``fn`` its text shows to be tensors (or arrays): the input of a model's ``forward``, a
    receiver of a tensor member (``x.shape``, ``x.view(...)``), the first argument of a ``torch.``/``F.`` call;
    ``in_channels *= 2`` of a builder's number is not touched."""
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    found: set[str] = set()
    if fn.name.value == "forward" and len(params) > 1 and params[0] == "self":
        found.add(params[1])

    class Visitor(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.attr.value in _TENSOR_MEMBERS:
                found.add(node.value.value)

        def visit_Call(self, node: cst.Call) -> None:
            if head_name(node.func) in ("torch", "F") and node.args and isinstance(node.args[0].value, cst.Name):
                found.add(node.args[0].value.value)

    walk(fn, Visitor())
    return found


def _number(param: cst.Param) -> bool:
    """A parameter annotated as a Python number or string, or whose default is a literal one (``eps=1e-6``)."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if isinstance(annotation, cst.Name) and annotation.value in ("int", "float", "bool", "str", "complex"):
        return True
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    return isinstance(default, (cst.Integer, cst.Float, cst.SimpleString)) or \
        (isinstance(default, cst.Name) and default.value in ("True", "False"))


def _bound_names_here(stmt) -> set[str]:
    """The names a compound statement binds in its header (a for target, ``with ... as``), not in its body."""
    names: set[str] = set()
    if isinstance(stmt, cst.For):
        names.update(target_names(stmt.target))
    if isinstance(stmt, cst.With):
        for item in stmt.items:
            if item.asname is not None:
                names.update(target_names(item.asname.name))
    return names


def _update(small) -> "tuple[str, bool] | None":
    """The name a statement updates in place, and whether the update may also be a Python number's rebinding
    (an augmented assignment of a name)."""
    if isinstance(small, cst.AugAssign):
        target = small.target
        if isinstance(target, cst.Name):
            return target.value, True
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            return target.value.value, False
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            return target.value.value, False
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            return func.value.value, False  # torch's in-place methods: h.add_(x), h.masked_fill_(m, 0)
    return None


def _bind(line: cst.SimpleStatementLine, groups: dict[str, _Object], evidence: set[str]) -> None:
    """Track the names ``line`` binds: ``r = h`` (and ``r = h = v``, ``a, r = b, h``) joins r to h's object; any
    other binding makes a name refer to an object of its own."""
    small = line.body[0] if len(line.body) == 1 else None
    evidence = evidence | {n for n, g in groups.items() if g.tensorish}  # h = x + 1 of a tensor x
    if isinstance(small, cst.Assign):
        names = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
        if isinstance(small.value, cst.Name) and len(names) == len(small.targets):
            source = small.value.value
            group = groups.setdefault(source, _Object())
            for name in names:
                groups[name] = group
            return
        if len(names) == len(small.targets) and len(names) > 1:
            group = _Object(_tensorish(small.value, evidence))
            for name in names:
                groups[name] = group  # a = b = self.conv(x)
            return
        if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple) \
                and isinstance(small.value, cst.Tuple) \
                and len(small.targets[0].target.elements) == len(small.value.elements):
            pairs = list(zip(small.targets[0].target.elements, small.value.elements))
            new = {}
            for target, value in pairs:
                if not isinstance(target.value, cst.Name):
                    break
                if isinstance(value.value, cst.Name):
                    new[target.value.value] = groups.setdefault(value.value.value, _Object())
                else:
                    new[target.value.value] = _Object(_tensorish(value.value, evidence))
            else:
                groups.update(new)
                return
    if isinstance(small, cst.AugAssign):
        return  # the same object in torch (a tensor), or a new number: handled at the update
    value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
    for name in bindings_in_scope(line):
        groups.pop(name, None)
        groups[name] = _Object(value is not None and _tensorish(value, evidence))


class _Object:
    """One object the function's names may refer to (the names bound to it are aliases); ``tensorish``: made by
    torch code (a hint: the guard decides)."""

    __slots__ = ("tensorish",)

    def __init__(self, tensorish: bool = False) -> None:
        self.tensorish = tensorish


def _made_by_torch(group: "_Object | None") -> bool:
    return group is not None and group.tensorish


def _tensorish(value, evidence: set[str]) -> bool:
    """Whether an expression is made by torch code: a call of ``torch.``/``F.``/``self.<layer>(...)``, a tensor
    method, or anything mentioning a name the text shows to be a tensor."""
    found = [False]

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value in evidence:
                found[0] = True

        def visit_Call(self, node: cst.Call) -> None:
            if head_name(node.func) in ("torch", "F", "self"):
                found[0] = True
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _TENSOR_MEMBERS:
                found[0] = True

    if value is not None:
        walk(value, Visitor())
    return found[0]


def _blocks(stmt) -> list:
    """The statement lists inside a compound statement, with whether each is a loop body."""
    out = []
    loop = isinstance(stmt, _LOOPS)
    for field in ("body", "orelse", "finalbody"):
        part = getattr(stmt, field, None)
        if isinstance(part, (cst.Else, cst.Finally)):
            part = part.body
        if isinstance(part, cst.If):  # elif
            out.extend(_blocks(part))
            continue
        if isinstance(part, cst.IndentedBlock):
            out.append((part.body, loop and field == "body"))
    for handler in getattr(stmt, "handlers", ()) or ():
        if isinstance(handler.body, cst.IndentedBlock):
            out.append((handler.body.body, False))
    return out


class _Order:
    """Positions of the function's statements and of the names mentioned in them, in source order."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        self.position: dict[int, int] = {}
        self.last: dict[int, int] = {}  # a compound statement: the position of its last statement
        self.mentions: dict[str, list[int]] = {}
        counter = [0]
        stack: list = []
        order = self

        class Visitor(cst.CSTVisitor):
            def on_visit(self, node) -> bool:
                if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    counter[0] += 1
                    order.position[id(node)] = counter[0]
                    stack.append(node)
                elif isinstance(node, cst.Name) and stack:
                    order.mentions.setdefault(node.value, []).append(counter[0])
                return super().on_visit(node)

            def on_leave(self, node) -> None:
                if stack and node is stack[-1]:
                    order.last[id(node)] = counter[0]
                    stack.pop()

        walk(fn.body, Visitor())

    def mentioned_after(self, name: str, stmt, loops: tuple) -> bool:
        """Whether ``name`` appears after ``stmt``, or anywhere in a loop around it (read on the next pass)."""
        at = self.position[id(stmt)]
        spots = self.mentions.get(name, ())
        if any(p > at for p in spots):
            return True
        return any(self.position[id(loop)] <= p <= self.last[id(loop)] for loop in loops for p in spots)
