"""The converter rule SliceGuardTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/slice_guards.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind

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

    ``mindport.runtime.tensor.sliced`` decides at run time: an empty result is a constant of its shape (nothing
    flows back through it, as torch's zero gradient), a stepped axis is taken by ``ops.gather`` (whose backward
    scatters), the rest of the index by MindSpore's subscript with steps of 1; an index that is not basic (a
    tensor, a mask, a list), a value that is no MindSpore tensor and a compiled graph get MindSpore's subscript as
    written. Assignment targets (``x[:, ::2] = v``) are left as written (no backward of a read)."""

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
                from mindport.runtime import tensor as mp_tensor


                class ShortCut(nn.Cell):
                    def construct(self, input):
                        first = mp_tensor.sliced(input, (..., slice(0, None, 2), slice(0, None, 2)))
                        return ops.cat(mp_tensor.promoted((first, mp_tensor.sliced(input, (..., slice(1, None, 2), slice(1, None, 2))))), axis=1), input[::2], input[..., ::2]
            """,
            note='Steps on two axes after "...": guarded; a step on the first axis alone, or on the last axis after '
                 '"...", is left as written (MindSpore gets those right).',
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
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._depth = 0
        self._targets: set[int] = set()  # ids of subscripts that are assigned or deleted
        self._data_names: set[str] = set()  # names bound to the elements of a tensor by a loop

    def visit_FunctionDef(self, node):
        self._depth += 1

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
        if not self._depth or id(original_node) in self._targets \
                or receiver_kind(original_node.value, self.scope) in ("python", "foreign", "engine", "object"):
            return updated_node
        elements = list(updated_node.slice)
        if not all(isinstance(e.slice, cst.Slice) or _basic_index(e.slice.value) for e in elements):
            return updated_node
        if not (_needs_stepped_guard(elements) or any(self._data_bound(e.slice) for e in elements)):
            return updated_node
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
            n.value.visit(self)
            return False  # x.attr: the attribute's name is no variable

    node.visit(_Names())
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


def _index_expression(part) -> cst.BaseExpression:
    if isinstance(part, cst.Index):
        return part.value
    none = cst.Name("None")
    args = [part.lower or none, part.upper or none]
    if part.step is not None:
        args.append(part.step)
    return cst.Call(func=cst.Name("slice"), args=[cst.Arg(a) for a in args])
