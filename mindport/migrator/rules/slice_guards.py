"""The converter rule SliceGuardTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/slice_guards.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind
from mindport.migrator.syntax import int_literal
from mindport.migrator.walk import read

_RUNTIME = "mindport.runtime.tensor"


class SliceGuardTransform(Rule):
    """A subscript read in a function whose slice has a step (``x[..., 0::2, 0::2]``, ``x[:, :, 1::2]``) or a bound
    read from data (``prods[i, :yi]`` with ``yi`` an element of a tensor the loop iterates) ->
    ``mp_tensor.sliced(x, (..., slice(0, None, 2), slice(0, None, 2)))``: the same values, with a backward MindSpore
    2.10's CPU kernels get right. Their backward of basic slicing fails in two classes (measured on 2.10, torch's
    gradients compared):

    * a stepped slice on an axis after another axis the index keeps: ``x[:, :, 0::2]`` of a 4-d tensor,
      ``x[..., 1::2, 1::2]``, ``x[:, 1::2]`` of a 3-d one, ``x[::2, ::2]`` of a 3-d one (StridedSliceGrad "N input
      memory out of bounds"; a shake-shake shortcut, a YOLO Focus layer). A step on the first axis alone, on the
      last axis after ``...``, and any 2-d slice pass: those subscripts are left as written;
    * an empty result: ``p[i, :yi]`` with ``yi`` 0 (StridedSliceGrad "0 input memory out of bounds" whenever a bound
      is 0), or an integer index after an empty slice (UnsortedSegmentSum "loop_size_"); an AngularSoftmax's
      ``torch.cat([prods[i, :yi], prods[i, yi+1:]])`` over the labels. A bound computed from a tensor's element
      is the visible sign that a slice may be empty (a size, a literal or a loop counter over ``range`` is not).

    A stepped read of a name or of a tensor whose items are slices, int literals, ``None`` and at most one ``...``,
    with no bound read from data, is MindSpore's own subscripts (``_stepped_last``): the bounds with steps of 1 (``x[..., 1:, 1:]``), then
    each stepped axis swapped to the last place, stepped after ``...`` and swapped back (``.swapaxes(-2, -1)[...,
    ::2].swapaxes(-2, -1)``), the two forms the kernels get right, in PyNative and GRAPH_MODE (torch takes positive
    steps only: bounds then step select what the stepped slice does). Any other guarded read goes through
    ``mindport.runtime.tensor.sliced``, which decides at run time: an empty result is a constant of its shape
    (nothing flows back through it, as torch's zero gradient), a stepped axis is taken by ``ops.gather`` (whose
    backward scatters), the rest of the index by MindSpore's subscript with steps of 1; an index that is not basic
    (a tensor, a mask, a list), a value that is no MindSpore tensor and a compiled graph get MindSpore's subscript
    as written. Assignment targets (``x[:, ::2] = v``) are left as written (no backward of a read).

    A read that code writes through is left as written too: torch's basic slice is a view, so
    ``Xa = X[:, :, 1::2]; Xa[:, :, 1:] += ...`` (a parallel scan's strided piece), ``y = x[:, :, ::3]; y[0] = -1``, a
    reshape or view of the piece written item by item, and ``x[:, ::2].mul_(2)`` change ``X``; MindSpore 2.10's
    PyNative subscript keeps such writes (measured) and the converter's write-back handles the in-place call, while
    ``sliced``'s gather would be a copy. Refused: a read bound to a name that the function writes in place (an item
    write, an augmented assignment, a ``*_`` method, an ``inplace=True`` call; also through a name bound to a view of
    it), a read bound to a name whose base the function writes in place, and a read an in-place call writes
    directly."""

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class ShortCut(nn.Module):
                    def forward(self, input):
                        first = input[..., 0::2, 0::2]
                        return torch.cat((first, input[..., 1::2, 1::2]), 1), input[::2], input[..., ::2]
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class ShortCut(nn.Cell):
                    def construct(self, input):
                        first = input[..., ::2].swapaxes(-2, -1)[..., ::2].swapaxes(-2, -1)
                        return ops.cat((first, input[..., 1:, 1:][..., ::2].swapaxes(-2, -1)[..., ::2].swapaxes(-2, -1)), axis=1), input[::2], input[..., ::2]
            """,
            note='Steps on two axes after "...": the bounds first, then each stepped axis stepped in the last place; '
                 'a step on the first axis alone, or on the last axis after "...", is left as written (MindSpore '
                 'gets those right).',
        ),
        Example(
            before="""
                import torch


                def margin_denominator(prods, y):
                    rest = [torch.cat([prods[i, :yi], prods[i, yi + 1:]]) for i, yi in enumerate(y)]
                    head = [prods[i, :n] for i, n in enumerate(range(3))]
                    return torch.stack(rest), head
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                def margin_denominator(prods, y):
                    rest = [ops.cat([mp_tensor.sliced(prods, (i, slice(None, yi))), mp_tensor.sliced(prods, (i, slice(yi + 1, None)))]) for i, yi in enumerate(y)]
                    head = [prods[i, :n] for i, n in enumerate(range(3))]
                    return ops.stack(mp_tensor.promoted(rest)), head
            """,
            note="Bounds read from a label tensor's elements may make a slice empty: guarded; a bound counted over "
                 "a range is left as written.",
        ),
        Example(
            before="""
                import torch


                def scan(X, A):
                    Xa = X[:, :, 1::2]
                    Xa[:, :, 1:] += A[:, :, 1::2][:, :, 1:] * Xa[:, :, :-1]
                    return X
            """,
            after="""
                from mindport.runtime import inplace as mp_inplace


                def scan(X, A):
                    Xa = X[:, :, 1::2]
                    Xa[:, :, 1:] += A[:, :, 1:].swapaxes(2, -1)[..., ::2].swapaxes(2, -1)[:, :, 1:] * Xa[:, :, :-1]
                    X = mp_inplace.view_update(X, (('getitem', ((slice(None, None, None), slice(None, None, None), slice(1, None, 2),),), {}),), Xa)
                    return X
            """,
            note="Xa is a view that the next line writes into (torch changes X): left as written, MindSpore's "
                 "PyNative subscript keeps the write (a compiled graph loses it: the write-back of "
                 "ViewWriteBackTransform raises there); A's stepped read, only read, is guarded.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._depth = 0
        self._targets: set[int] = set()  # ids of subscripts that are assigned or deleted
        self._data_names: set[str] = set()  # names bound to the elements of a tensor by a loop
        self._refused: set[int] = set()  # ids of reads written through in place (torch's view), left native

    def visit_FunctionDef(self, node):
        self._depth += 1
        self._refused |= _written_through(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._depth -= 1
        return updated_node

    def _note_targets(self, target) -> None:
        if isinstance(target, cst.Subscript):
            self._targets.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note_targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self._note_targets(target.value)

    def visit_Assign(self, node):
        for target in node.targets:
            self._note_targets(target.target)

    def visit_AugAssign(self, node):
        self._note_targets(node.target)

    def visit_AnnAssign(self, node):
        self._note_targets(node.target)

    def visit_Del(self, node):
        self._note_targets(node.target)

    def visit_For(self, node):
        self._note_targets(node.target)
        self._note_iteration(node.target, node.iter)

    def _note_comprehension(self, node):
        """A comprehension's element is visited before its ``for`` clauses: read them first."""
        clause = node.for_in
        while clause is not None:
            self._note_iteration(clause.target, clause.iter)
            clause = clause.inner_for_in

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _note_comprehension

    def _note_iteration(self, target, iterable) -> None:
        """``for yi in y`` / ``for i, yi in enumerate(y)`` over a tensor ``y``: ``yi`` holds its elements (data)."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "enumerate" and iterable.args \
                and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            iterable, target = iterable.args[0].value, target.elements[1].value
        if isinstance(target, cst.Name) and not isinstance(iterable, (cst.Call, cst.List, cst.Tuple)) \
                and receiver_kind(iterable, self.scope) == "tensor":
            self._data_names.add(target.value)

    def leave_Subscript(self, original_node, updated_node):
        if not self._depth or id(original_node) in self._targets or id(original_node) in self._refused \
                or receiver_kind(original_node.value, self.scope) in ("python", "foreign", "engine", "object"):
            return updated_node
        elements = list(updated_node.slice)
        if not all(isinstance(e.slice, cst.Slice) or _basic_index(e.slice.value) for e in elements):
            return updated_node
        data_bound = any(self._data_bound(e.slice) for e in elements)
        if not (_needs_stepped_guard(elements) or data_bound):
            return updated_node
        # a name (a tensor or an array: both have swapaxes) or a tensor by its kind; another receiver (``df.iloc``,
        # an object of unknown type) keeps the runtime's sliced, which hands anything but a tensor its own subscript
        native = None if data_bound or not (isinstance(original_node.value, cst.Name) or receiver_kind(
            original_node.value, self.scope) == "tensor") else _stepped_last(updated_node, elements)
        if native is not None:
            self.ctx.converted_sites += 1
            return native
        parts = [_index_expression(e.slice) for e in elements]
        index = parts[0] if len(parts) == 1 else cst.Tuple([cst.Element(p) for p in parts])
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        return cst.Call(func=cst.parse_expression(f"{runtime_alias(_RUNTIME)}.sliced"),
                        args=[cst.Arg(updated_node.value), cst.Arg(index)],
                        lpar=updated_node.lpar, rpar=updated_node.rpar)

    def _data_bound(self, part) -> bool:
        if not isinstance(part, cst.Slice) or not self._data_names:
            return False
        names = set()
        for bound in (part.lower, part.upper):
            if bound is not None:
                names |= _names_in(bound)
        return bool(names & self._data_names)


def _names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n):
            found.add(n.value)

        def visit_Attribute(self, n):
            read(n.value, self)
            return False  # x.attr: the attribute's name is no variable

    read(node, _Names())
    return found


def _basic_index(value: cst.BaseExpression) -> bool:
    """An index element that may be an int (a literal, a name, arithmetic on them), ``None`` or ``...``: no list,
    comparison (a mask), call or subscript (a tensor index), which ``sliced`` would hand back to MindSpore anyway."""
    if isinstance(value, (cst.Integer, cst.Ellipsis, cst.Name)):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        return _basic_index(value.expression)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        return _basic_index(value.left) and _basic_index(value.right)
    return False


def _has_step(part) -> bool:
    if not isinstance(part, cst.Slice) or part.step is None:
        return False
    return not (isinstance(part.step, cst.Integer) and part.step.value == "1")


def _full(part) -> bool:
    return isinstance(part, cst.Slice) and part.lower is None and part.upper is None and not _has_step(part)


def _needs_stepped_guard(elements) -> bool:
    """A step that MindSpore's backward may get wrong: any step, except a step on the first axis with every other
    element ``:`` or ``...``, and a step on the last slice after ``...`` with no other step."""
    parts = [e.slice for e in elements]
    stepped = [i for i, p in enumerate(parts) if _has_step(p)]
    if not stepped:
        return False
    if stepped == [0] and all(_full(p) or (isinstance(p, cst.Index) and isinstance(p.value, cst.Ellipsis))
                              for p in parts[1:]):
        return False
    if stepped == [len(parts) - 1] and any(isinstance(p, cst.Index) and isinstance(p.value, cst.Ellipsis)
                                           for p in parts[:-1]):
        return False
    return True


def _stepped_last(node: cst.Subscript, elements) -> "cst.BaseExpression | None":
    """A stepped read whose items are slices, int literals, ``None`` and at most one ``...`` (no bound read from data),
    as MindSpore's own subscripts whose backward its CPU kernels get right: the bounds first, with steps of 1
    (``x[..., 1:, 1:]``), then each stepped axis swapped to the last place, stepped after ``...`` and swapped back
    (``.swapaxes(-2, -1)[..., ::2].swapaxes(-2, -1)``; the last axis needs no swap). torch takes positive steps
    only, so bounds then step select what the stepped slice does. None for any other index (a name may be a tensor
    or ``None`` at run time: the runtime's ``sliced`` decides)."""
    parts = [e.slice for e in elements]
    ellipsis = [i for i, p in enumerate(parts) if isinstance(p, cst.Index) and isinstance(p.value, cst.Ellipsis)]
    if len(ellipsis) > 1:
        return None
    for p in parts:
        if isinstance(p, cst.Index):
            v = p.value
            if not (int_literal(v) is not None or isinstance(v, cst.Ellipsis)
                    or isinstance(v, cst.Name) and v.value == "None"):
                return None
        elif p.step is not None and not (isinstance(p.step, cst.Integer) and int(p.step.value, 0) > 0):
            return None

    def keeps_axis(p) -> bool:  # a slice or None gives the result an axis; an int takes one
        return isinstance(p, cst.Slice) or isinstance(p.value, cst.Name)

    at = ellipsis[0] if ellipsis else len(parts)
    stepped = []
    for i, p in enumerate(parts):
        if _has_step(p):
            axis = sum(keeps_axis(q) for q in parts[:i]) if i < at else -sum(keeps_axis(q) for q in parts[i:])
            stepped.append((axis, p.step))
    plain = []
    for e, p in zip(elements, parts):
        if _has_step(p):
            lower = None if isinstance(p.lower, cst.Integer) and int(p.lower.value, 0) == 0 else p.lower
            p = cst.Slice(lower=lower, upper=p.upper)
        plain.append(cst.SubscriptElement(slice=p))
    expr = node.value
    if not all(_full(e.slice) or isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis)
               for e in plain):
        expr = node.with_changes(slice=plain, lpar=[], rpar=[])
    last = [cst.SubscriptElement(cst.Index(cst.Ellipsis()))]
    for axis, step in sorted(stepped, key=lambda a: a[0] != -1):
        taken = [*last, cst.SubscriptElement(cst.Slice(lower=None, upper=None, step=step))]
        if axis == -1:
            expr = cst.Subscript(value=expr, slice=taken)
            continue
        swap = [cst.Arg(cst.Integer(str(axis)) if axis >= 0 else cst.UnaryOperation(
            cst.Minus(), cst.Integer(str(-axis)))), cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer("1")))]
        swapped = cst.Call(func=cst.Attribute(value=expr, attr=cst.Name("swapaxes")), args=swap)
        expr = cst.Call(func=cst.Attribute(value=cst.Subscript(value=swapped, slice=taken), attr=cst.Name("swapaxes")),
                        args=swap)
    return expr.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar else expr


def _index_expression(part) -> cst.BaseExpression:
    if isinstance(part, cst.Index):
        return part.value
    none = cst.Name("None")
    args = [part.lower or none, part.upper or none]
    if part.step is not None:
        args.append(part.step)
    return cst.Call(func=cst.Name("slice"), args=[cst.Arg(a) for a in args])


# ------------------------------------------------------------------------------------------- writes through a view
# torch's basic slice is a view: ``Xa = X[:, :, 1::2]`` then ``Xa[:, :, 1:] += ...`` (a parallel scan's strided
# piece), ``y = x[:, :, ::3]; y[0] = -1`` or ``Xv = Xa.reshape(...); Xv[..., 1].add_(...)`` change ``X``.
# MindSpore 2.10's PyNative subscript keeps these writes too (measured), ``sliced``'s gather is a copy that would
# not: such reads are left as written. So is a read an in-place call writes straight away (``x[:, ::2].mul_(2)``,
# ``F.relu(x[:, :, 1::2], inplace=True)``): the converter's own write-back (``x[i] = mp_inplace.mul_(x[i], ...)``)
# handles it, as it handles any view written in place. The scan reads the function as torch wrote it.

_VIEW_METHODS = frozenset({"view", "reshape", "view_as", "reshape_as", "transpose", "permute", "unsqueeze",
                           "squeeze", "flatten", "unflatten", "narrow", "t", "expand", "expand_as", "select",
                           "diagonal", "movedim", "moveaxis", "swapaxes", "swapdims", "as_strided", "unfold",
                           "split", "chunk", "unbind", "contiguous"})


def _view_chain(node):
    """The subscripts an expression takes views through (``X[:, ::2].view(...)[0]`` -> both subscripts) and the name
    they start from; ("", []) when the expression is no view of a name."""
    subscripts = []
    while True:
        if isinstance(node, cst.Subscript):
            subscripts.append(node)
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _VIEW_METHODS:
            node = node.func.value
        elif isinstance(node, cst.Name):
            return node.value, subscripts
        else:
            return "", subscripts


def _root(node) -> str:
    """The name a receiver starts from through subscripts, attributes and calls (``Xa[:, 1].add_`` -> ``Xa``)."""
    while isinstance(node, (cst.Subscript, cst.Attribute, cst.Call)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return node.value if isinstance(node, cst.Name) else ""


def _in_place_call(call: cst.Call):
    """The value an in-place call writes (``y.add_(1)`` -> ``y``, ``mp_inplace.add_(y, other=1)`` /
    ``F.relu(y, inplace=True)`` -> ``y``), or None."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    inplace_kw = any(a.keyword is not None and a.keyword.value == "inplace"
                     and not (isinstance(a.value, cst.Name) and a.value.value == "False") for a in call.args)
    first = next((a.value for a in call.args if a.keyword is None and a.star == ""), None)
    module = _root(func.value) if isinstance(func, cst.Attribute) else ""
    if name.endswith("_") and not name.startswith("_") and isinstance(func, cst.Attribute) \
            and module not in ("mp_inplace", "torch", "ops", "F", "nn", "init", "mp_init"):
        return func.value  # a tensor method: x.add_(...)
    if first is not None and (inplace_kw or module == "mp_inplace"
                              or (name.endswith("_") and not name.startswith("_"))):
        return first
    return None


def _written_through(function: cst.FunctionDef) -> set[int]:
    """Ids of the subscript reads in ``function`` whose view a later in-place write reaches (see above)."""
    written: set[str] = set()
    aliases: list[tuple[str, str]] = []  # (name, the name it is a view of)
    bound: list[tuple[str, str, list]] = []  # (name, base name, subscripts) of `name = <view of base>`
    bare: list[cst.CSTNode] = []  # values written in place by a call whose result is dropped

    class _Scan(cst.CSTVisitor):
        def visit_Assign(self, node):
            for t in node.targets:
                _note_target(t.target)
            if len(node.targets) == 1:
                _note_binding(node.targets[0].target, node.value)

        def visit_AugAssign(self, node):
            _note_target(node.target)

        def visit_Call(self, node):
            value = _in_place_call(node)
            if value is not None:
                written.add(_root(value))

        def visit_Expr(self, node):
            if isinstance(node.value, cst.Call):
                value = _in_place_call(node.value)
                if value is not None:
                    bare.append(value)

    def _note_target(target):
        if isinstance(target, cst.Subscript):
            written.add(_root(target))
        elif isinstance(target, cst.Name):
            pass
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                _note_target(element.value)

    def _note_binding(target, value):
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements):
            for t, v in zip(target.elements, value.elements):
                _note_binding(t.value, v.value)
            return
        if isinstance(target, cst.Name):
            base, subscripts = _view_chain(value)
            if base:
                aliases.append((target.value, base))
                bound.append((target.value, base, subscripts))

    read(function, _Scan())
    written.discard("")
    changed = True
    while changed:  # a view of a view: Xv = Xa.reshape(...) written -> Xa written too
        changed = False
        for name, base in aliases:
            if name in written and base not in written:
                written.add(base)
                changed = True
    refused = set()
    for name, base, subscripts in bound:
        if name in written or base in written:  # the view is written, or its base is (the view would see it)
            refused |= {id(s) for s in subscripts}
    for value in bare:
        refused |= {id(s) for s in _view_chain(value)[1]}
    return refused
