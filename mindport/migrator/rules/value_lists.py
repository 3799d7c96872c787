"""The converter rule ValueListSizeTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/value_lists.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import walk

_SIZING = frozenset({"max", "min", "sum", "len", "range", "sorted"})

MESSAGE = ("a tensor's values made a Python list (.tolist()) give sizes or a loop's length here: a static graph "
           "(GRAPH_MODE) has no tensor values while it compiles (MindSpore 2.10: \"Getitem can not get element from an "
           "empty dynamic length sequence\"); this model runs in PyNative only")


class ValueListSizeTransform(GraphMethodRule):
    """In a model's methods, a tensor's values turned into a Python list (``x.tolist()``) that then gives sizes or a
    loop's length (an argument of ``max``, ``min``, ``sum``, ``len``, ``range``, ``sorted``, or iterated by a ``for`` or
    a comprehension, directly or through the name it is bound to in the method) is said: MP107, the line kept as
    written.

    Image-Captioning's decoders: ``decode_lengths = (caption_lengths - 1).tolist()`` and then ``torch.zeros(batch_size,
    max(decode_lengths), vocab_size)``, ``for t in range(max(decode_lengths))``, ``sum([l > t for l in
    decode_lengths])``: the shapes and the loop's length come from the input's values. MindSpore's static graph
    (GRAPH_MODE) compiles before it has values: ``tolist()`` gives a sequence of unknown length and ``max`` of it fails
    ("Getitem can not get element from an empty dynamic length sequence", measured on 2.10); no graph form computes a
    shape from values. PyNative runs it as torch does. A ``tolist()`` whose list only goes on as data (to
    ``pack_padded_sequence``, which PackedFieldTransform handles, or returned) is left unsaid.

    A module's functions too (``MODULE_FUNCTIONS``: a graph compiles one with every method that calls it, from any
    file): cnnimageretrieval's ``rmac(x)`` (called by its RMAC layer's forward) loops ``for i_ in cenH.tolist()``
    over regions whose sizes give the pooling window, ``F.max_pool2d(R, (R.size(-2), R.size(-1)))``: GRAPH_MODE
    failed there ("all arguments are required to be constants, but input 0 is a variable").
    """

    MODULE_FUNCTIONS = True

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Decoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)

                    def forward(self, x, lengths):
                        steps = (lengths - 1).tolist()
                        out = torch.zeros(x.shape[0], max(steps), 4)
                        for t in range(max(steps)):
                            out[:, t] = self.fc(x[:, t])
                        return out
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                import mindport.runtime.graph_order  # noqa: F401  (dict keys in sorted/min/max/zip in a graph)


                class Decoder(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def construct(self, x, lengths):
                        steps = (lengths - 1).tolist()  # mindport: MP107 a tensor's values made a Python list (.tolist()) give sizes or a loop's length here: a static graph (GRAPH_MODE) has no tensor values while it compiles (MindSpore 2.10: "Getitem can not get element from an empty dynamic length sequence"); this model runs in PyNative only
                        out = ops.zeros((x.shape[0], max(steps), 4))
                        for t in range(max(steps)):
                            out[:, t] = self.fc(x[:, t])
                        return out
            """,
            note="Sizes from a tensor's values: said, the code kept (PyNative runs it).",
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def regions(x, starts):
                    out = []
                    for s in starts.tolist():
                        r = x[:, :, int(s):int(s) + 2]
                        out.append(F.max_pool2d(r, (r.size(-2), r.size(-1))))
                    return torch.cat(out, 1)
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import unbatched as mp_unbatched
                from mindport.runtime import tensor as mp_tensor


                def regions(x, starts):
                    out = []
                    # mindport: MP107 a tensor's values made a Python list (.tolist()) give sizes or a loop's length here: a static graph (GRAPH_MODE) has no tensor values while it compiles (MindSpore 2.10: "Getitem can not get element from an empty dynamic length sequence"); this model runs in PyNative only
                    for s in starts.tolist():
                        r = x[:, :, int(s):int(s) + 2]
                        out.append(mp_unbatched.max_pool2d(r, kernel_size=(r.shape[-2], r.shape[-1])))
                    return ops.cat(mp_tensor.promoted(out), axis=1)
            """,
            note="A module's function (a graph compiles it with the model method that calls it): said the same.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._said: set[int] = set()  # ids of the .tolist() calls to say at

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.compiled:
            self._said.update(id(call) for call in _sizing_lists(node))

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._said:
            self._said.discard(id(node))
            self.remark(node, "MP107", MESSAGE)


def _is_tolist(node) -> bool:
    return isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value == "tolist"


def _sizing_lists(fn: cst.FunctionDef) -> list:
    """The ``.tolist()`` calls of the function (not of functions nested in it) whose list gives sizes or a loop's
    length, directly or through a name bound to it."""
    bound: dict[str, cst.Call] = {}
    sized: list = []
    reads: list = []  # names read where a list gives sizes

    def note(expr) -> None:
        if _is_tolist(expr):
            sized.append(expr)
        elif isinstance(expr, cst.Name):
            reads.append(expr.value)

    class Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return node is fn

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _is_tolist(node.value):
                bound[node.targets[0].target.value] = node.value

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value in _SIZING:
                for arg in node.args:
                    note(arg.value)
                    if isinstance(arg.value, (cst.ListComp, cst.GeneratorExp)):
                        note(arg.value.for_in.iter)

        def visit_For(self, node: cst.For) -> None:
            note(node.iter)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            note(node.iter)

    walk(fn, Visitor())
    out = list(dict.fromkeys(id(c) for c in sized))
    calls = {id(c): c for c in sized}
    for name in reads:
        call = bound.get(name)
        if call is not None and id(call) not in calls:
            calls[id(call)] = call
            out.append(id(call))
    return [calls[i] for i in out]
