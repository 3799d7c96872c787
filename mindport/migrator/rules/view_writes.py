"""The converter rule ViewWriteBackTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/view_writes.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import _index_value, _plain_argument
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import code_of, target_names
from mindport.migrator.walk import walk

class ViewWriteBackTransform(Rule):
    """A name bound to a torch view of a tensor (``v = y[0]``, ``v = y.narrow(1, 0, 2)``, ``a, v = y.chunk(2, 2)``,
    ``v = y.transpose(0, 1)[1]``, ``v = y.float()`` ...) and then written in place (``v += 1``, ``v.add_(1)``,
    ``v.zero_()``, ``v.copy_(z)``, ``v[...] = 5``, ``F.relu(v, inplace=True)``, ``nn.init.zeros_(v)``): after the
    write, the base is written back: ``y[0] = v`` where the view is one basic index of the base (integers, slices of
    integers without a step, ``...``, ``None``: MindSpore's item assignment writes the base in PyNative and in graph
    mode, and carries the gradient; a stepped slice's backward faults on MindSpore 2.10's CPU kernels), ``y = mp_inplace.view_update(y, <the view's steps>, v)`` otherwise.

    torch's views share the base's storage (its schemas mark them ``Tensor(a) self -> Tensor(a)``), so the write
    changes ``y`` and the caller's tensor ``y`` came from. MindSpore's indexing, narrow, transpose, reshape ... make
    copies: the converted write reached ``v`` only, and a later read of ``y`` silently had the old values (2,060 of
    3,816 cases of tests/converter/test_views_written_in_place.py on main). ``view_update`` writes the view's values
    where its elements live in the base (found by taking the same views of the base's element positions), keeps the
    base's identity (the caller's tensor, a Parameter) and writes nothing where torch's operation copied
    (``reshape``/``flatten`` of a transpose, advanced indexing, ``.to()`` of another dtype). A view of a view
    (``w = y[1]; v = w[:, 2:]``) is written back into each. A list's item and a local dict's item
    (``m = state["m"]; m *= x``) are set back into the container, in a graph too; an item of what a layer or a
    helper returned (``outs = self.layer(h); h = outs[0]``: a tensor, a list or a tuple) only when it is no tuple
    (``if not isinstance(outs, tuple): outs[0] = h``): a tuple's item is the tensor written itself, which
    MindSpore's item assignment changes in place in PyNative, and a tuple takes no item assignment. Through a tensor's views, PyNative
    only: in a compiled graph ``view_update`` raises (a graph keeps no order between such updates), never silently.

    Flagged (MP102, the write keeps its torch form) where the write-back can't follow: a view whose arguments are
    computed by calls (evaluated again they could differ), a complex part (``.real``/``.imag``,
    ``torch.view_as_real``), or a base bound again between the view and the write.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def shift(y):
                    v = y[0]
                    v += 1
                    w = y.narrow(1, 0, 2)
                    w.zero_()
                    return y
            """,
            after="""
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import math as mp_math


                def shift(y):
                    v = y[0]
                    v += 1
                    y[0] = v
                    w = mp_math.narrow(y, dim=1, start=0, length=2)
                    w = mp_inplace.zero_(w)
                    y = mp_inplace.view_update(y, (('narrow', (1, 0, 2), {}),), w)
                    return y
            """,
            note="Each write through a view reaches y (and the caller's tensor), as in torch: an item by item "
                 "assignment, a narrow through the run-time helper.",
        ),
        Example(
            before="""
                def scaled(y):
                    v = y * 2
                    v += 1
                    return y
            """,
            note="v is no view of y: nothing to write back.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._plan: dict[int, list[tuple[str, str, str, bool]]] = {}  # line id -> (base, steps, view, named base)
        self._flags: dict[int, str] = {}  # line id -> why the write can't be written back
        self._copies: set[int] = set()  # v = y[idx] with an advanced idx, later v[...] = e: v = y[idx].copy()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if isinstance(node.body, cst.IndentedBlock):
            plan, flags, copies = _plan(node, self.scope)
            self._plan.update(plan)
            self._flags.update(flags)
            self._copies |= copies

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if id(original_node) in self._copies:
            self._copies.discard(id(original_node))
            assign = updated_node.body[0]
            if isinstance(assign, cst.Assign) and isinstance(assign.value, (cst.Subscript, cst.Call, cst.Attribute,
                                                                             cst.Name)):
                self.ctx.converted_sites += 1
                copied = cst.Call(cst.Attribute(assign.value, cst.Name("copy")))
                return updated_node.with_changes(body=[assign.with_changes(value=copied)])
            return updated_node
        why = self._flags.pop(id(original_node), None)
        if why is not None:
            self.flag(original_node, "MP102", f"an in-place write through a torch view ({why}): torch's view shares "
                      "its base's storage, MindSpore's is a copy, and the write can't be written back here",
                      "write the base itself (y[...] = ..., y.narrow(...).copy_(...)) or clone() the view")
            return updated_node
        backs = self._plan.pop(id(original_node), None)
        if not backs or len(updated_node.body) != 1:
            return updated_node
        helper = code_of(self.ctx.target_expr("mindport.runtime.inplace.view_update"))
        lines = [updated_node]
        for base, steps, view, named, index in backs:
            if isinstance(index, tuple):  # a tuple's item is the tensor written (PyNative): a tuple takes no item
                lines.append(cst.parse_statement(f"if not isinstance({base}, tuple):\n    {base}{index[0]} = {view}\n"))
                continue
            if index is not None:  # MindSpore's own item assignment writes the base (PyNative and graph)
                lines.append(cst.parse_statement(f"{base}{index} = {view}\n"))
                continue
            call = f"{helper}({base}, {steps}, {view})"
            lines.append(cst.parse_statement(f"{base} = {call}\n" if named else f"{call}\n"))
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)


# --- the analysis, on the torch source of one function --------------------------------------------------------------

_TORCH_VIEWS = frozenset({"narrow", "select", "diagonal", "t", "transpose", "swapaxes", "swapdims", "permute",
                          "movedim", "moveaxis", "reshape", "flatten", "unflatten", "unsqueeze", "squeeze", "chunk",
                          "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes",
                          "adjoint", "broadcast_to", "ravel", "conj", "resolve_conj", "resolve_neg", "positive",
                          "as_strided", "detach"})


class _Chain:
    """A view of ``base`` (source text) by ``steps`` (view_update's steps as source, None when an argument is computed
    by a call), or ``unfollowed`` (why it can't be written back)."""

    def __init__(self, base: str, steps: "str | None", unfollowed: str = "", advanced: bool = False,
                 index: "str | None" = None) -> None:
        self.base, self.steps, self.unfollowed, self.advanced = base, steps, unfollowed, advanced
        self.index = index  # the view is base[index], basic indexing only: written back as base[index] = view


def _chain(expr: cst.BaseExpression, scope) -> "_Chain | None":
    """``expr`` as torch views of a name or an attribute (``y[0]``, ``y.narrow(1, 0, 2).t()``, ``torch.select(y, 0,
    1)``, ``y.chunk(2)[1]``, ``y.float()``), or None."""
    from mindport.mappings.views import (CAST_METHODS, CONJUGATE_ATTRIBUTES, PIECE_METHODS, UNFOLLOWED_VIEWS,
                                         VIEW_ATTRIBUTES, VIEW_METHODS)

    steps: list[str] = []
    plain, unfollowed, advanced, node = True, "", False, expr
    index_text = None
    while True:
        if isinstance(node, cst.Call) and not any(a.star for a in node.args):
            func = node.func
            qual = scope.resolve_torch(func) if isinstance(func, (cst.Attribute, cst.Name)) else None
            if qual is not None:  # torch.narrow(y, ...), torch.view_as_real(y)
                name = qual.rsplit(".", 1)[-1]
                if not qual.startswith("torch.") or qual.count(".") != 1 or not node.args \
                        or node.args[0].keyword is not None:
                    break
                if name in UNFOLLOWED_VIEWS:
                    unfollowed = unfollowed or qual
                elif name not in _TORCH_VIEWS or (name in PIECE_METHODS and not steps):
                    break
                args, receiver = node.args[1:], node.args[0].value
            elif isinstance(func, cst.Attribute) and scope.resolve(func) is None:
                name = func.attr.value
                if name in CAST_METHODS:
                    steps.append("('cast', (), {})")
                    node = func.value
                    continue
                if name in UNFOLLOWED_VIEWS:
                    unfollowed = unfollowed or f".{name}()"
                elif not (name in VIEW_METHODS or (name in PIECE_METHODS and steps and steps[-1].startswith(
                        "('getitem'"))):
                    break
                args, receiver = node.args, func.value
            else:
                break
            plain = plain and all(_plain_argument(a.value, scope) for a in args)
            positional = [code_of(a.value) for a in args if a.keyword is None]
            keywords = ", ".join(f"{a.keyword.value!r}: {code_of(a.value)}" for a in args if a.keyword is not None)
            steps.append(f"({name!r}, ({', '.join(positional)}{',' * (len(positional) == 1)}), {{{keywords}}})")
            node = receiver
        elif isinstance(node, cst.Attribute) and (node.attr.value in VIEW_ATTRIBUTES | CONJUGATE_ATTRIBUTES
                                                  or node.attr.value in UNFOLLOWED_VIEWS) and steps is not None \
                and not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            if node.attr.value in UNFOLLOWED_VIEWS:
                unfollowed = unfollowed or f".{node.attr.value}"
            steps.append(f"({node.attr.value!r}, (), {{}})")
            node = node.value
        elif isinstance(node, cst.Subscript):
            elements = node.slice
            if len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
                    and isinstance(elements[0].slice.value, (cst.SimpleString, cst.ConcatenatedString)):
                if steps or not isinstance(node.value, cst.Name):
                    break  # an item of a dict's item, or of an attribute's dict: not followed
                # a local dict's item (m = state["m"]; m *= x): torch changed the very tensor the dict holds
                steps.append(f"('getitem', ({code_of(elements[0].slice.value)},), {{}})")
                node = node.value
                continue
            index = _index_value(node, scope)
            plain = plain and index is not None
            basic = all(_basic(e.slice) for e in elements)
            advanced = advanced or not basic
            stepped = any(isinstance(e.slice, cst.Slice) and e.slice.step is not None for e in elements)
            index_text = code_of(node.with_changes(value=cst.Name("_")))[1:] \
                if basic and not stepped and not steps else None  # a stepped slice's backward faults on CPU
            steps.append(f"('getitem', ({index},), {{}})")
            node = node.value
        else:
            break
    if not steps or not _base(node):
        return None
    if scope.resolve_torch(node) is not None:
        return None
    text = f"({', '.join(reversed(steps))},)"
    return _Chain(code_of(node), text if plain else None, unfollowed, advanced,
                  index_text if len(steps) == 1 and plain else None)


def _basic(part) -> bool:
    """An index element that is basic indexing for sure: an integer, a slice of integers, ``...``, ``None``."""
    if isinstance(part, cst.Slice):
        return all(b is None or _integer(b) for b in (part.lower, part.upper, part.step))
    value = part.value
    return _integer(value) or isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name)
                                                                  and value.value == "None")


def _integer(node) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


_NO_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "names", "layout", "is_cuda"})


def _base(node) -> bool:
    """A name or an attribute path that can hold a tensor (``h.shape[0]`` is a number of a tuple: no view)."""
    if isinstance(node, cst.Attribute) and node.attr.value in _NO_TENSOR_ATTRIBUTES:
        return False
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _written(small, scope) -> "str | None":
    """The name a statement writes in place: ``v += e``, ``v[i] = e``, ``v[i] += e``, ``v.add_(e)``,
    ``F.relu(v, inplace=True)``, ``nn.init.zeros_(v)``, ``torch.relu_(v)``."""
    if isinstance(small, cst.AugAssign):
        target = small.target.value if isinstance(small.target, cst.Subscript) else small.target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            return target.value.value
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and scope.resolve(func) is None \
                and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            return func.value.value
        first = call.args[0].value if call.args and call.args[0].keyword is None else None
        if isinstance(first, cst.Name) and isinstance(func, cst.Attribute):
            in_place = any(a.keyword is not None and a.keyword.value == "inplace"
                           and isinstance(a.value, cst.Name) and a.value.value == "True" for a in call.args)
            if in_place or (func.attr.value.endswith("_") and not func.attr.value.startswith("_")):
                return first.value
    return None


def _plan(fn: cst.FunctionDef, scope):
    """For each line of ``fn`` (not of its nested functions) writing a name bound to a view in place: the
    write-backs (base, steps, view, whether the base is a name), or why none can be made."""
    lines: list[cst.SimpleStatementLine] = []
    bindings: dict[str, list[int]] = {}

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is fn

        def visit_ClassDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

        def visit_SimpleStatementLine(self, node):
            lines.append(node)
            looped.append(self.loops > 0)

        def leave_SimpleStatementLine(self, node):
            ends.append(len(mentions))

        def visit_Name(self, node):
            mentions.append(node.value)

        def visit_For(self, node):
            self._bind(target_names(node.target))
            self.loops += 1

        def leave_For(self, node):
            self.loops -= 1

        def visit_While(self, node):
            self.loops += 1

        def leave_While(self, node):
            self.loops -= 1

        def _bind(self, names):
            for name in names:
                bindings.setdefault(name, []).append(len(lines))

        def visit_Assign(self, node):
            if not _is_write_back(node):
                for target in node.targets:
                    self._bind(target_names(target.target))

        def visit_AnnAssign(self, node):
            self._bind(target_names(node.target))

        def visit_WithItem(self, node):
            if node.asname is not None:
                self._bind(target_names(node.asname.name))

        def visit_NamedExpr(self, node):
            self._bind(target_names(node.target))

    mentions: list[str] = []  # every name the function mentions, in source order
    ends: list[int] = []  # per line: how many names were mentioned up to its end
    looped: list[bool] = []  # per line: inside a loop
    collect = Collect()
    collect.loops = 0
    walk(fn, collect)
    parameters = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}

    def read_later(base: str, at: int) -> bool:
        """Is ``base`` read after line ``at`` (1-based): a parameter (the caller's tensor), an attribute, a line in
        a loop, or a mention further down."""
        name = base.split(".", 1)[0]
        return "." in base or name in parameters or looped[at - 1] or name in mentions[ends[at - 1]:]

    views: dict[str, tuple[_Chain, int]] = {}
    binding_lines: dict[str, cst.SimpleStatementLine] = {}
    returned: set[str] = set()  # names bound last to what a call other than torch's returned: maybe a tuple
    plan, flags, copies = {}, {}, set()
    for at, line in enumerate(lines, 1):
        small = line.body[0] if len(line.body) == 1 else None
        target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
        if isinstance(target, (cst.Name, cst.Tuple, cst.List)) and not _is_write_back(small):
            if isinstance(target, cst.Name):
                if _returned_by_a_call(small.value, scope):
                    returned.add(target.value)
                else:
                    returned.discard(target.value)
                chain = _chain(small.value, scope)
                if chain is not None and len(bindings.get(target.value, ())) == 1 \
                        and chain.base.split(".", 1)[0] != target.value:  # x = x[0]: the caller's tensor, left
                    views[target.value] = (chain, at)
                    binding_lines[target.value] = line
            elif isinstance(target, (cst.Tuple, cst.List)) \
                    and all(isinstance(e.value, cst.Name) for e in target.elements):  # a, v = y.chunk(2)
                first = cst.Subscript(small.value, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
                chain = _chain(first, scope)
                suffix = "('getitem', (0,), {}),)"
                for i, element in enumerate(target.elements):
                    name = element.value.value
                    if chain is not None and len(bindings.get(name, ())) == 1:
                        steps = chain.steps[:-len(suffix)] + f"('getitem', ({i},), {{}}),)" \
                            if chain.steps is not None and chain.steps.endswith(suffix) else None
                        views[name] = (_Chain(chain.base, steps, chain.unfollowed, chain.advanced), at)
            continue
        name = _written(small, scope) if small is not None else None
        if name not in views or _written_back(lines[at] if at < len(lines) else None, name):
            continue
        if views[name][0].steps == "(('data', (), {}),)" and not isinstance(small, cst.AugAssign):
            continue  # w = p.data; w.mul_(2): w is p itself (ObjectSurfaceTransform), the update reaches p
        backs, why, view = [], "", name
        while view in views:
            chain, bound_at = views[view]
            base_name = chain.base.split(".", 1)[0]
            if chain.unfollowed:
                why = f"{chain.unfollowed} of {chain.base}"
            elif chain.steps is None:
                why = f"a view of {chain.base} whose arguments are computed by calls"
            elif any(bound_at < p <= at for p in bindings.get(base_name, ())):
                why = f"{base_name} is bound again between the view and the write"
            if why:
                break
            named = "." not in chain.base
            index = chain.index
            if index is not None and named and chain.base in returned:
                index = (index, "tuple?")  # a layer's output may be a tuple: its item is the very tensor written
            backs.append((chain.base, chain.steps, view, named, index))
            view = chain.base if named else ""
        if not why and not any(read_later(base, at) for base, _, _, _, _ in backs):
            continue  # the base is never read again: nothing can tell (and a graph needs no write-back)
        if why:
            flags[id(line)] = why
        elif backs:
            plan[id(line)] = backs
            chain = views[name][0]
            if chain.advanced and name in binding_lines and _item_write(small):
                copies.add(id(binding_lines[name]))
    return plan, flags, copies


def _returned_by_a_call(value, scope) -> bool:
    """``out = self.layer(h)`` / ``out = helper(h)``: a call whose result the text can't type (a tuple, a list or a
    tensor); torch's own calls (``torch.split``, ``x.chunk``) are left to what they are."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, (cst.Attribute, cst.Name)) and scope.resolve_torch(func) is not None:
        return False
    return not (isinstance(func, cst.Attribute) and scope.resolve(func) is None
                and func.attr.value in _TORCH_VIEWS | {"clone", "detach", "contiguous", "float", "to"})


def _item_write(small) -> bool:
    """``v[i] = e`` / ``v[i] += e``: MindSpore 2.10 writes these into the tensor ``v`` was indexed from, also where
    the index is advanced (``v = y[[0, 2]]``), a copy in torch (measured)."""
    target = small.targets[0].target if isinstance(small, cst.Assign) else getattr(small, "target", None)
    return isinstance(target, cst.Subscript)


def _written_back(line, view: str) -> bool:
    """Is ``line`` a write-back of ``view`` already (the converter's output converted again)?"""
    small = line.body[0] if line is not None and len(line.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                cst.Subscript) \
            and isinstance(small.value, cst.Name) and small.value.value == view:
        return True  # y[0] = v
    call = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
        and call.func.attr.value == "view_update" and len(call.args) == 3 \
        and isinstance(call.args[2].value, cst.Name) and call.args[2].value.value == view


def _is_write_back(assign: cst.Assign) -> bool:
    """``y = mp_inplace.view_update(y, ...)``: this rule's own line (converting converted code changes nothing)."""
    value = assign.value
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value == "view_update"
