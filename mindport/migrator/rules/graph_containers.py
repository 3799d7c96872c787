"""The converter rule GraphContainerTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/graph_containers.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.project import VALUE_BASES
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.scopes import NOT_TENSOR_KINDS, receiver_kind
from mindport.migrator.syntax import code_of, last_name, on_self
from mindport.migrator.walk import parse_expression, walk

_RUNTIME = "mindport.runtime.graph_safe"
# what changes a list or a dict in place
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "clear", "reverse", "sort", "remove", "update",
                       "setdefault", "popitem"})
_CONTAINERS = (cst.List, cst.Dict, cst.ListComp, cst.DictComp)
MP107 = "MP107"


class GraphContainerTransform(GraphMethodRule):
    """In a model's methods, ``dict(x)`` of one argument is ``mp_graph_safe.dict_copy(x)``; a list or dict the
    method builds and binds to a second name (``m = l``) and then changes in place through either name, and an
    in-place ``sort``/``remove`` of a list held on ``self`` (``self.order.sort()``), are flagged MP107 (a warning:
    GRAPH_MODE gives another result than PyNative there); so are ``ks = self.order`` and ``inner = rows[0]`` (of a
    list the method builds) when the new name is then changed in place, and a ``for`` loop over an iterator
    (``enumerate``/``iter``/``zip``/``reversed`` bound to a name) that ``next()`` advanced first (NCRFpp's CRF: in a
    graph ``next`` does not advance the iterator the loop reads, and a ``@jit`` function building a list that way
    gets one item more: tests/converter/test_next_then_loop.py). Its straight form, the binding, the ``next(it)``
    statements (``a = next(it)`` or ``next(it)``, no default) and the loop in this order in one block, the name read
    nowhere else, is written over a tuple of the items instead, which a graph runs as Python does:
    ``it = tuple(enumerate(xs))`` (``tuple(xs)`` for ``iter(xs)``), the i-th ``next(it)`` is ``it[i]`` and the loop
    runs over ``it[k:]`` (tests/converter/test_next_then_loop56.py).

    A static graph (GRAPH_MODE, ``@jit``) holds lists and dicts as values. Measured on MindSpore 2.10 (graph19's
    probe, plain Python vs PyNative vs GRAPH_MODE): ``dict(d)`` of a dict holding tensors built a wrong dict
    (``[e[k] for k in dict(d)]`` gave one tensor, not three), silently; ``dict_copy`` copies a dict by ``update``,
    which compiles right (a non-dict argument goes to ``dict`` as before). ``m = l; m.append(v)`` left ``l``
    unchanged (the same for ``extend``, ``insert``, ``pop``, ``clear``, ``reverse``, ``m[0] = v``, ``m += [v]``, and
    for a dict's ``e[k] = v``/``e.update(...)`` through a second name), and ``self.order.sort()`` left the list
    unsorted: no rewrite keeps both names right in every flow, so these are flagged where they are (PyNative, which
    runs the Python, is unaffected). A list changed only before its second name is bound, and not in a loop around
    the binding (``new_hidden = []``, a loop of ``new_hidden.append(h)``, then ``hidden = new_hidden``: a stacked
    RNN's per-layer states, Ravoxsg's language model), is one value under both names and is not flagged. Copies are not aliases: ``list(l)``, ``l[:]`` and ``{**d}`` then changed give
    Python's result in a graph; ``l.copy()`` and ``copy.copy(l)`` then changed fail to compile there (loud).

    Objects a graph builds in the Python interpreter (measured on MindSpore 2.10, graph23's probes): a tensor read back
    from them has no known dtype or rank, so the next op that reads those (a LayerNorm's ``astype(x.dtype)``, an
    attention's rank check) fails to compile ("negative dimensions are not allowed", the message MindSpore raises
    while printing the real TypeError). ``dict(a=x, b=y)`` (keywords only) is such an object; the display ``{"a": x,
    "b": y}`` is the same dict and compiles, so it is written so. An object of a project class that is not a module,
    built in a model's method from anything but literals, is one too: a ``@dataclass``, a ``namedtuple``/
    ``NamedTuple``, a ``dict``/``OrderedDict`` subclass read by attribute (perceiver's ``ModuleOutput``), a plain
    class holding tensors (fast-transformers' mask objects). Every one of these failed in a graph, whether read by
    attribute, by key or through a method, built in the same method or returned by a sub-cell, and
    ``@mindspore.jit_class`` refuses a tensor argument. No rewrite keeps every caller's attribute reads right, so
    each such construction is flagged MP107 (a graph-sound form: a tuple, or a dict display read by key). One built
    of literals only (``Scale(2.0)(x)``) compiles and is not flagged; nor is one built in ``__init__``.

    A Python attribute set on a Parameter (``self.weight.fast = None``, or ``w.fast = ...`` for ``w`` over
    ``.parameters()``: MAML's fast weights) and read in a model's method as ``self.weight.fast`` is flagged MP107 once
    per method and name: a graph sees a Parameter as a tensor without it and refuses to compile ("'Parameter' object
    has no attribute 'fast'"), and ``getattr(self.weight, 'fast', None)`` compiles but reads None whatever was set
    (measured on MindSpore 2.10, tests/converter/test_parameter_attribute50.py); PyNative runs it as torch does.
    (An attribute a model's method writes on a layer it then calls, FocalNet's ``blk.H, blk.W = H, W``: the rule
    SubCellArgumentTransform.)

    ``self.s.data = v`` (a Parameter's data replaced in a model's method: normflows' ActNorm initialises its scale
    from the first batch) is ``mp_framework.set_data(self.s, v)``: the same write in PyNative; in a graph, which has
    no SetData kernel on CPU ("Unsupported op [SetData]"), an ``ops.assign`` in place that the next call sees, as
    torch's write. A value of another shape or dtype, which torch's ``.data =`` allows, is refused there.
    ``p.data = v`` outside a model's method (a hand-written optimizer putting weights back: SAM's ``second_step``),
    ``p`` possibly a tensor, is ``set_data`` too: a Parameter of the same shape and dtype is written in place, so the
    optimizer MindSpore compiled, which holds the Parameter's storage, keeps updating it.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Heads(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2)

                    def forward(self, x):
                        outs = {"a": self.fc(x), "b": self.fc(x) * 2}
                        kept = dict(outs)
                        feats = [x]
                        more = feats
                        more.append(x * 2)
                        return kept["a"] + kept["b"], torch.cat(feats, 1)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import graph_safe as mp_graph_safe


                class Heads(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=2)

                    def construct(self, x):
                        outs = {"a": self.fc(x), "b": self.fc(x) * 2}
                        kept = mp_graph_safe.dict_copy(outs)
                        feats = [x]
                        more = feats  # mindport: MP107 GRAPH_MODE holds lists and dicts as values: a change made through 'more' is not seen through 'feats' (nor back) in a graph, where PyNative follows Python
                        more.append(x * 2)
                        return kept["a"] + kept["b"], ops.cat(mp_tensor.promoted(feats), axis=1)
            """,
            note="The dict is copied by update; the alias is flagged (a warning), not rewritten.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._aliases: dict[int, tuple[str, str]] = {}  # id of a flagged m = l -> (m, l)
        self._self_sorts: set[int] = set()
        self._advanced_loops: dict[int, str] = {}  # id of a for over an iterator next() advanced before -> its name
        self._iterator_plan: dict[int, tuple[str, str, int]] = {}  # the straight form of it, rewritten

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.compiled
        super().visit_FunctionDef(node)
        if self.compiled and not outer:
            self._said_attrs: set[str] = set()  # the attributes set on a Parameter already said in this method
            aliases, sorts = _aliased(node)
            self._aliases.update(aliases)
            self._self_sorts |= sorts
            said, plan = _advanced_then_looped(node)
            self._advanced_loops.update(said)
            self._iterator_plan.update(plan)

    def leave_For(self, original_node, updated_node):
        planned = self._iterator_plan.get(id(original_node))
        if planned is not None:  # for ... in it, after k next(it): over the items next() left
            self.ctx.converted_sites += 1
            return updated_node.with_changes(iter=parse_expression(f"{planned[1]}[{planned[2]}:]"))
        name = self._advanced_loops.get(id(original_node))
        if name is not None:
            self.remark(original_node, MP107,
                        f"GRAPH_MODE's next() does not advance the iterator '{name}' for this loop: the loop runs over "
                        f"every item again in a graph (the items next() took too), where PyNative starts after them",
                        f"loop over the remaining items by index or slice (for i in range(1, len(xs))) instead of "
                        f"next({name}) then a loop over {name}")
        return updated_node

    def leave_Assign(self, original_node, updated_node):
        target = original_node.targets[0].target if len(original_node.targets) == 1 else None
        if isinstance(target, cst.Attribute) and target.attr.value == "data" and (
                self.compiled and on_self(target.value) or not self.compiled and _data_of_tensor(target.value, self.scope)):
            # self.s.data = v -> mp_framework.set_data(self.s, v); outside a model's method too (SAM's
            # p.data = self.state[p]["old_p"]): a Parameter's values are written in place, where the optimizers
            # MindSpore compiled hold them
            self.ctx.converted_sites += 1
            return cst.Expr(cst.Call(func=self.ctx.target_expr("mindport.runtime.framework.set_data"), args=[
                cst.Arg(updated_node.targets[0].target.value,
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(updated_node.value)]))
        names = self._aliases.get(id(original_node))
        if names is not None:
            self.remark(original_node, MP107,
                        f"GRAPH_MODE holds lists and dicts as values: a change made through '{names[0]}' is not seen "
                        f"through '{names[1]}' (nor back) in a graph, where PyNative follows Python",
                        "keep one name (bind the changed list back: l = m), or copy it (m = list(l))")
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        if id(original_node) in self._self_sorts:
            self.remark(original_node, MP107,
                        "GRAPH_MODE runs sort/remove of a list on a copy: the list held on self is left as it was in "
                        "a graph, where PyNative changes it",
                        "sort a local copy: xs = sorted(self.xs)")
        return updated_node

    def visit_Module(self, node: cst.Module) -> None:
        self._value_classes = _value_classes(node, self._module_classes) | (
            self.ctx.options.object_classes - set(self._module_classes))
        self._tensor_attrs = _tensor_attribute_writes(node)

    def leave_Attribute(self, original_node, updated_node):
        # self.weight.fast read in a model's method, where the file sets .fast on a tensor (MAML's fast weights)
        inner = original_node.value
        if self.compiled and original_node.attr.value in getattr(self, "_tensor_attrs", ()) \
                and isinstance(inner, cst.Attribute) and on_self(inner) \
                and receiver_kind(inner, self.scope) == "tensor" \
                and original_node.attr.value not in self._said_attrs:
            self._said_attrs.add(original_node.attr.value)  # said once per method and name
            name = f"self.{inner.attr.value}.{original_node.attr.value}"
            self.remark(original_node, MP107,
                        f"{name} reads a Python attribute set on a Parameter: a static graph (GRAPH_MODE) sees a "
                        f"Parameter as a tensor with no such attribute and refuses to compile ('Parameter' object has "
                        f"no attribute '{original_node.attr.value}'; getattr with a default silently reads the "
                        f"default there, whatever was set); PyNative runs it as Python",
                        "run this Cell in PyNative, or hand the value to construct as an argument (a fast weight "
                        "passed in, or a Cell attribute set before compiling)")
        return updated_node

    def leave_Call(self, original_node, updated_node):
        planned = self._iterator_plan.get(id(original_node))
        if planned is not None:
            kind, name, index = planned
            self.ctx.converted_sites += 1
            if kind == "next":  # the index-th next(it): the index-th item
                return parse_expression(f"{name}[{index}]")
            if last_name(original_node.func) == "iter":  # it = iter(xs): the items of xs
                return updated_node.with_changes(func=cst.Name("tuple"))
            return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(updated_node)])
        if self.compiled and isinstance(original_node.func, cst.Name) \
                and original_node.func.value in getattr(self, "_value_classes", ()) \
                and not all(_constant(a.value) for a in original_node.args):
            name = original_node.func.value
            self.remark(original_node, MP107,
                        f"an object of the class '{name}' (the project's, not a Cell) built in a model's method: a static "
                        f"graph (GRAPH_MODE) builds it in the Python interpreter, and a tensor read back from it (or "
                        f"returned beside it in one tuple: ``return y, Cache(...)``) has no known dtype or rank there, "
                        f"so a layer or an op given it (LayerNorm, attention, ops.split) fails to compile; PyNative "
                        f"runs it as Python",
                        "hold the values in a tuple or a dict display ({'key': value}) read by key, or build the "
                        "object outside construct")
            return updated_node
        if self.compiled and _keyword_dict(original_node):
            self.ctx.converted_sites += 1
            return cst.Dict([cst.DictElement(cst.SimpleString(f'"{a.keyword.value}"'), a.value)
                             for a in updated_node.args])
        if not self.compiled or not isinstance(original_node.func, cst.Name) or original_node.func.value != "dict" \
                or len(original_node.args) != 1 or original_node.args[0].keyword is not None \
                or original_node.args[0].star:
            return updated_node
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.dict_copy"))


def _elements(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """An assignment target's elements: ``a.H, a.W`` gives both, any other target itself."""
    return [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]


# a tensor's own attributes, which a graph reads (or which convert elsewhere): never a value set on a Parameter
_TENSOR_OWN = frozenset({"data", "grad", "requires_grad", "name", "shape", "dtype", "T", "mT", "H", "mH", "ndim",
                         "device", "is_leaf", "grad_fn", "real", "imag", "retain_grad"})


def _tensor_attribute_writes(module: cst.Module) -> frozenset[str]:
    """Names ``A`` the file sets as ``self.P.A = v`` (``self.weight.fast = None`` in a layer's __init__) or as
    ``w.A = v`` for ``w`` looping over ``.parameters()`` (MAML's ``for weight in self.model.parameters(): weight.fast =
    None``): Python attributes put on a Parameter. Whether ``self.P`` is a tensor is the reader's scope's to say."""
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def __init__(self):
            self.loops: list[str] = []

        def visit_For(self, loop: cst.For) -> None:
            it = loop.iter
            if isinstance(loop.target, cst.Name) and (
                    isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "parameters"
                    or isinstance(it, cst.Name)):
                self.loops.append(loop.target.value)
            else:
                self.loops.append("")

        def leave_For(self, loop: cst.For) -> None:
            self.loops.pop()

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            for el in _elements(target.target):
                if not isinstance(el, cst.Attribute) or el.attr.value in _TENSOR_OWN:
                    continue
                owner = el.value
                if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self" \
                        or isinstance(owner, cst.Name) and owner.value in self.loops and owner.value:
                    found.add(el.attr.value)

    module.visit(Visitor())
    return frozenset(found)


def _keyword_dict(node: cst.Call) -> bool:
    """``dict(a=x, b=y)``: keywords only (at least one, no ``**``). A graph builds it in the Python interpreter, and a
    tensor read back from it has no known dtype (a LayerNorm given it failed to compile); the display ``{"a": x,
    "b": y}`` is the same dict, which a graph compiles."""
    return isinstance(node.func, cst.Name) and node.func.value == "dict" and bool(node.args) \
        and all(a.keyword is not None and not a.star for a in node.args)


def _value_classes(module: cst.Module, module_classes) -> frozenset[str]:
    """The file's top-level classes whose objects hold values, not layers: no base, or bases among ``object``,
    ``dict``, ``OrderedDict``, ``NamedTuple`` (a ``@dataclass``, perceiver's ``ModuleOutput(OrderedDict)``, a
    mask object), and the names bound to ``namedtuple(...)``. Module classes and classes of other bases (an
    exception, a torch class) are not among them."""
    found: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value not in module_classes:
            bases = {last_name(a.value) for a in stmt.bases if a.keyword is None}
            if bases <= VALUE_BASES:
                found.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call) \
                        and last_name(small.value.func) == "namedtuple":
                    found.add(small.targets[0].target.value)
    return frozenset(found)


def _constant(node: cst.BaseExpression) -> bool:
    """A literal number, string, True/False/None: an object built of these only holds no tensor (a graph compiles
    ``Scale(2.0)(x)``)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) \
        or isinstance(node, cst.Name) and node.value in ("True", "False", "None")


def _advanced_then_looped(node: cst.FunctionDef) -> tuple[dict[int, str], dict[int, tuple[str, str, int]]]:
    """The ``for`` loops of a compiled function over a name bound to ``iter``/``enumerate``/``zip``/``reversed``
    (...) that ``next(name)`` also reads: NCRFpp's CRF, ``seq_iter = enumerate(scores)``, ``_, first =
    next(seq_iter)``, then ``for idx, cur in seq_iter``. Measured on MindSpore 2.10: in a graph the loop runs over
    every item (next() took one from a copy), so the history it builds has one item more, silently.

    Returns the loops to say (MP107) and the rewrite of the straight form: the binding, the ``next(name)`` statements
    (``a = next(it)`` or ``next(it)`` alone, no default) and the loop stand in this order in one block (other
    statements between them), and the name is read nowhere else in the function. Then the iterator is a tuple of its items (``tuple(enumerate(xs))``,
    ``tuple(xs)`` for ``iter(xs)``), the i-th ``next`` is ``name[i]`` and the loop runs over ``name[k:]``: Python's
    items in Python, PyNative and a graph. Plan: id of a node -> (kind, name, index)."""
    iterators: set[str] = set()
    advanced: set[str] = set()
    loops: list[tuple[cst.For, str]] = []
    uses: dict[str, int] = {}
    blocks: list[list[cst.BaseStatement]] = []  # the function's body and every block in it

    class Scan(cst.CSTVisitor):
        def visit_Assign(self, assign):
            value = assign.value
            if _iterator_call(value):
                for target in assign.targets:
                    if isinstance(target.target, cst.Name):
                        iterators.add(target.target.value)

        def visit_Call(self, call):
            if isinstance(call.func, cst.Name) and call.func.value == "next" and call.args \
                    and isinstance(call.args[0].value, cst.Name):
                advanced.add(call.args[0].value.value)

        def visit_For(self, loop):
            if isinstance(loop.iter, cst.Name):
                loops.append((loop, loop.iter.value))

        def visit_Name(self, name):
            uses[name.value] = uses.get(name.value, 0) + 1

        def visit_IndentedBlock(self, block):
            blocks.append(list(block.body))

    walk(node, Scan())
    said = {id(loop): name for loop, name in loops if name in iterators and name in advanced}
    plan: dict[int, tuple[str, str, int]] = {}
    for body in blocks:
        for at, stmt in enumerate(body):
            bound = _single_assign(stmt)
            if bound is None or not isinstance(bound.targets[0].target, cst.Name) or len(bound.targets) != 1 \
                    or not _iterator_call(bound.value):
                continue
            name = bound.targets[0].target.value
            nexts: list[cst.Call] = []
            loop = None
            for later in body[at + 1:]:
                call = _next_statement(later, name)
                if call is not None:
                    nexts.append(call)
                    continue
                if isinstance(later, cst.For) and isinstance(later.iter, cst.Name) and later.iter.value == name:
                    loop = later
                    break  # statements between that do not name it (the count below) run as they did
            if loop is None or not nexts or id(loop) not in said or uses.get(name) != len(nexts) + 2:
                continue
            call = bound.value
            if last_name(call.func) == "iter" and (len(call.args) != 1 or call.args[0].star):
                continue  # iter(f, sentinel)
            said.pop(id(loop))
            plan[id(call)] = ("bind", name, 0)
            for i, advance in enumerate(nexts):
                plan[id(advance)] = ("next", name, i)
            plan[id(loop)] = ("loop", name, len(nexts))
    return said, plan


def _iterator_call(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
        and value.func.value in ("iter", "enumerate", "zip", "reversed")


def _single_assign(stmt: cst.BaseStatement) -> cst.Assign | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        return stmt.body[0]
    return None


def _next_statement(stmt: cst.BaseStatement, name: str) -> cst.Call | None:
    """The ``next(name)`` call of ``a, b = next(name)`` or of ``next(name)`` alone (one argument: no default)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next" \
            and len(value.args) == 1 and not value.args[0].star and not value.args[0].keyword \
            and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name:
        return value
    return None


def _aliased(node: cst.FunctionDef) -> tuple[dict[int, tuple[str, str]], set[int]]:
    """The ``m = l`` statements of a compiled function that bind a second name to a list/dict it builds, where
    either name is then changed in place; and its ``self.x.sort()``/``self.x.remove(v)`` statements."""
    built: set[str] = set()  # names bound to a list/dict display, comprehension, list(...)/dict(...)
    aliases: list[tuple[cst.Assign, str, str]] = []
    elements: list[tuple[cst.Assign, str, str]] = []  # a name bound to an item of a built list/dict
    changed: set[str] = set()
    called: set[str] = set()  # changed by a list/dict method (not by an item write, which a tensor also has)
    sorts: set[int] = set()
    # where each change and each m = l stand: (name, order in the source, the loops around it)
    changes: list[tuple[str, int, frozenset[int]]] = []
    places: dict[int, tuple[int, frozenset[int]]] = {}
    loops: list[int] = []

    def change(name: str, node: cst.CSTNode) -> None:
        changed.add(name)
        changes.append((name, len(changes) + len(places), frozenset(loops)))

    class Visitor(cst.CSTVisitor):
        def visit_For(self, loop: cst.For) -> None:
            loops.append(id(loop))

        def leave_For(self, loop: cst.For) -> None:
            loops.pop()

        def visit_While(self, loop: cst.While) -> None:
            loops.append(id(loop))

        def leave_While(self, loop: cst.While) -> None:
            loops.pop()

        def visit_Assign(self, assign: cst.Assign) -> None:
            for target in assign.targets:
                target = target.target
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                    change(target.value.value, assign)
                if not isinstance(target, cst.Name):
                    continue
                value = assign.value
                if isinstance(value, _CONTAINERS) or isinstance(value, cst.Call) \
                        and isinstance(value.func, cst.Name) and value.func.value in ("list", "dict"):
                    built.add(target.value)
                elif isinstance(value, cst.Name):
                    places[id(assign)] = (len(changes) + len(places), frozenset(loops))
                    aliases.append((assign, target.value, value.value))
                elif isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
                        and value.value.value == "self":  # ks = self.order: the list held on self
                    aliases.append((assign, target.value, "self." + value.attr.value))
                elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
                        and not any(isinstance(e.slice, cst.Slice) for e in value.slice):
                    elements.append((assign, target.value, value.value.value))  # inner = rows[0]; rows[:] is a copy

        def visit_AugAssign(self, aug: cst.AugAssign) -> None:
            if isinstance(aug.target, cst.Name) and isinstance(aug.operator, (cst.AddAssign, cst.BitOrAssign)):
                change(aug.target.value, aug)
            elif isinstance(aug.target, cst.Subscript) and isinstance(aug.target.value, cst.Name):
                change(aug.target.value.value, aug)

        def visit_Del(self, stmt: cst.Del) -> None:
            if isinstance(stmt.target, cst.Subscript) and isinstance(stmt.target.value, cst.Name):
                change(stmt.target.value.value, stmt)

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MUTATORS \
                    and isinstance(func.value, cst.Name):
                change(func.value.value, call)
                called.add(func.value.value)

        def visit_Expr(self, stmt: cst.Expr) -> None:
            call = stmt.value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                    and call.func.attr.value in ("sort", "remove") and isinstance(call.func.value, cst.Attribute) \
                    and isinstance(call.func.value.value, cst.Name) and call.func.value.value.value == "self":
                sorts.add(id(stmt))

    walk(node, Visitor())
    # a chain m = l; n = m: every name of it shares the list
    flagged: dict[int, tuple[str, str]] = {}
    shared = set(built) | {source for _, _, source in aliases if source.startswith("self.")}
    for _ in range(len(aliases)):
        grown = {alias for _, alias, source in aliases if source in shared} - shared
        if not grown:
            break
        shared |= grown
    for assign, alias, source in aliases:
        if source.startswith("self."):  # an attribute may hold a tensor: only a list/dict method counts
            if alias in called:
                flagged[id(assign)] = (alias, source)
        elif source in shared and _changed_after(changes, places[id(assign)], {alias, source}):
            flagged[id(assign)] = (alias, source)
    for assign, alias, source in elements:  # the item may itself be a list or dict: changed through the new name
        if source in shared and alias in changed:
            flagged[id(assign)] = (alias, source)
    return flagged, sorts


def _changed_after(changes, place: tuple[int, frozenset[int]], names: set[str]) -> bool:
    """Whether one of ``names`` is changed in place where the alias ``m = l`` at ``place`` may already hold: later in
    the source, or in a loop around the alias too (its next turn runs the change after the binding). A list filled
    only before the second name is bound (``new = []``; a loop of ``new.append(h)``; then ``hidden = new``: a
    stacked RNN's per-layer states) is one value under both names, in a graph as in Python."""
    at, around = place
    return any(name in names and (order > at or loops & around) for name, order, loops in changes)


def _data_of_tensor(owner: cst.BaseExpression, scope) -> bool:
    """``owner.data = v`` outside a model's method where ``owner`` may be a tensor: not ``self``/``cls`` (a dataset's
    own ``self.data``) nor a value known to be something else (a list, a numpy array, an object of the project's).
    What it holds is decided when it runs (mindport.runtime.framework.set_data sets any other object's attribute)."""
    if isinstance(owner, cst.Name) and owner.value in ("self", "cls"):
        return False
    if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value in ("self", "cls"):
        return False  # self.dataset.data = ...: an attribute of the program's own objects, left as written
    return receiver_kind(owner, scope) not in NOT_TENSOR_KINDS
