"""The converter rule IndexTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/indexing.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind

# index elements that are no tensor: numbers, strings, None, Ellipsis, slices
_PLAIN = (cst.Integer, cst.Float, cst.SimpleString, cst.Ellipsis)


class IndexTransform(Rule):
    """A subscript whose last elements are bare ``:`` after an index that may be a tensor (``x[mask, :]``,
    ``feats[keep, :, :]``) -> the same subscript without them (``x[mask]``). Trailing full slices select nothing in
    torch (and numpy): the two read and write the same elements. MindSpore 2.10 answers otherwise when the index is a
    boolean mask of two or more dimensions: ``x[mask, :]`` of an (8, 2, 5) tensor with an (8, 2) mask gave shape
    (n, 2) instead of (n, 5), values silently wrong (the neural spline flow's ``widths[inside_mask, :]``). Subscripts
    of literal indices (``x[0, :]``, ``x[:, :]``) and of evident Python values are left as written. Not covered: a
    2-d mask followed by a partial slice (``x[mask, 1:3]``, shape (n, 1) in MindSpore), which no rewrite of the text
    can tell from a 1-d index. A uint8 mask written ``x[m.byte()]`` (torch's legacy mask, read as a boolean one)
    is written ``x[m.bool()]``: MindSpore refuses a uint8 index."""

    EXAMPLES = (
        Example(
            before="""
                import torch


                def inside(widths, inputs, bound):
                    mask = (inputs >= -bound) & (inputs <= bound)
                    widths[inputs > bound, :] = 0
                    return widths[mask, :], inputs[0, :], torch.ones(1), widths[mask.byte()]
            """,
            after="""
                from mindspore import ops


                def inside(widths, inputs, bound):
                    mask = (inputs >= -bound) & (inputs <= bound)
                    widths[inputs > bound] = 0
                    return widths[mask], inputs[0, :], ops.ones(1), widths[mask.bool()]
            """,
            note='The mask index loses its trailing full slice, in a read and in an assignment; a literal index keeps '
                 'it; a uint8 mask is read as the boolean mask it stands for.',
        ),
    )

    def leave_Subscript(self, original_node, updated_node):
        updated_node = _byte_masks_as_bool(updated_node)
        elements = list(updated_node.slice)
        kept = len(elements)
        while kept > 1 and _full_slice(elements[kept - 1]):
            kept -= 1
        if kept == len(elements) or not any(_maybe_tensor(e) for e in elements[:kept]) \
                or receiver_kind(original_node.value, self.scope) in ("python", "foreign", "engine"):
            return updated_node
        last = elements[kept - 1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(slice=[*elements[:kept - 1], last])


def _byte_masks_as_bool(node: cst.Subscript) -> cst.Subscript:
    """``logdet[self.mask_d.byte()]``: torch reads a uint8 tensor as an index as a boolean mask (its legacy form);
    MindSpore refuses it ("The tensor index must be int or bool type"). As an index, ``.byte()`` is ``.bool()``."""
    elements, changed = [], False
    for element in node.slice:
        value = element.slice.value if isinstance(element.slice, cst.Index) else None
        if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "byte":
            element = element.with_changes(slice=element.slice.with_changes(
                value=value.with_changes(func=value.func.with_changes(attr=cst.Name("bool")))))
            changed = True
        elements.append(element)
    return node.with_changes(slice=elements) if changed else node


def _full_slice(element: cst.SubscriptElement) -> bool:
    part = element.slice
    return isinstance(part, cst.Slice) and part.lower is None and part.upper is None and part.step is None


def _maybe_tensor(element: cst.SubscriptElement) -> bool:
    part = element.slice
    if not isinstance(part, cst.Index):
        return False
    value = part.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return not isinstance(value, _PLAIN) and not (isinstance(value, cst.Name) and value.value == "None")
