"""The converter rule PackedFieldTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/packed_fields.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import parse_expression, walk

_RUNTIME = "mindport.runtime.rnn"
_RNN = "torch.nn.utils.rnn."
_PACKS = frozenset({_RNN + "pack_padded_sequence", _RNN + "pack_sequence"})
_CLASS = _RNN + "PackedSequence"
_LAYERS = frozenset({"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"})
_FIELDS = {"data": 0, "batch_sizes": 1, "sorted_indices": 2, "unsorted_indices": 3}


class PackedFieldTransform(GraphMethodRule):
    """In a model's methods, a packed sequence's fields are read by position (``packed.data`` is ``packed[0]``,
    ``.batch_sizes`` ``[1]``, ``.sorted_indices`` ``[2]``, ``.unsorted_indices`` ``[3]``), and
    ``PackedSequence(data, batch_sizes=..., ...)`` is ``mp_rnn.packed_sequence(...)``.

    torch's PackedSequence is a named tuple of those four fields, so position and name read the same item. A static
    graph (GRAPH_MODE, ``@jit``) compiles no named tuple built in it: mindport.runtime.rnn gives it the packed batch
    as a plain tuple that starts with the four fields, where ``.data`` failed to compile ("'Tuple' object has no attribute
    'data'", sgrvinod's HAN: the packed sentences' ``.data`` fed to a Linear and re-packed with the same
    ``batch_sizes``). ``packed_sequence`` is the PackedSequence in PyNative and that tuple in a graph. A packed
    sequence is a name the method binds only to ``pack_padded_sequence``/``pack_sequence``/``PackedSequence``, or to
    the first output of a recurrent layer of the model (``self.rnn = nn.GRU(...)``) called on a packed sequence
    (``out, h = self.rnn(packed)``, ``self.rnn(packed)[0]``); other ``.data`` reads are left as written.
    ``pack_padded_sequence(x, lengths.tolist())`` there takes ``lengths`` itself, as torch does: a graph's
    ``tolist()`` of a tensor with a dynamic shape (HAN's lengths read from a packed ``.data``) did not run ("The
    pointer[abs_base] is null").
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn
                from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


                class Attention(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.rnn = nn.GRU(4, 3, batch_first=True)
                        self.score = nn.Linear(3, 1)

                    def forward(self, x, lengths):
                        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
                        out, _ = self.rnn(packed)
                        scores = torch.exp(self.score(out.data).squeeze(1))
                        scores, _ = pad_packed_sequence(PackedSequence(scores, batch_sizes=out.batch_sizes,
                                                                       sorted_indices=out.sorted_indices,
                                                                       unsorted_indices=out.unsorted_indices),
                                                        batch_first=True)
                        return scores / scores.sum(1, keepdim=True)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import layers as mp_nn
                from mindport.runtime import rnn as mp_rnn


                class Attention(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.rnn = mp_nn.GRU(input_size=4, hidden_size=3, batch_first=True)
                        self.score = nn.Dense(in_channels=3, out_channels=1)

                    def construct(self, x, lengths):
                        packed = mp_rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
                        out, _ = self.rnn(packed)
                        scores = ops.exp(self.score(out[0]).squeeze(axis=1))
                        scores, _ = mp_rnn.pad_packed_sequence(mp_rnn.packed_sequence(scores, batch_sizes=out[1],
                                                                       sorted_indices=out[2],
                                                                       unsorted_indices=out[3]),
                                                        batch_first=True)
                        return scores / ops.sum(scores, dim=1, keepdim=True)
            """,
            note="The fields are read by position; the re-packing builds the runtime's packed sequence.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._layers: list[set[str]] = []  # per enclosing class: self.<name> = nn.LSTM/GRU/RNN(...)
        self._reads: dict[int, int] = {}  # id of a packed field read -> its position
        self._builds: set[int] = set()  # ids of the PackedSequence(...) calls in compiled methods
        self._listed: set[int] = set()  # ids of the lengths.tolist() given to pack_padded_sequence there

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        layers: set[str] = set()
        scope = self.scope

        class Layers(cst.CSTVisitor):
            def visit_Assign(self, assign: cst.Assign) -> None:
                target = assign.targets[0].target
                if len(assign.targets) == 1 and isinstance(target, cst.Attribute) \
                        and isinstance(target.value, cst.Name) and target.value.value == "self" \
                        and isinstance(assign.value, cst.Call) and scope.resolve_torch(assign.value.func) in _LAYERS:
                    layers.add(target.attr.value)

        walk(node, Layers())
        self._layers.append(layers)

    def leave_ClassDef(self, original_node, updated_node):
        self._layers.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.compiled
        super().visit_FunctionDef(node)
        if self.compiled and not outer:
            layers = self._layers[-1] if self._layers else set()
            reads, builds, listed = _packed_reads(node, self.scope.resolve_torch, layers)
            self._reads.update(reads)
            self._builds |= builds
            self._listed |= listed

    def leave_Attribute(self, original_node, updated_node):
        position = self._reads.get(id(original_node))
        if position is None:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Subscript(value=updated_node.value,
                             slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(position))))])

    def leave_Call(self, original_node, updated_node):
        if id(original_node) in self._listed:  # torch takes the lengths tensor as it takes its list
            self.ctx.converted_sites += 1
            return updated_node.func.value
        if id(original_node) not in self._builds:
            return updated_node
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.packed_sequence"))


def _packed_reads(node: cst.FunctionDef, resolve, layers: set[str]) -> tuple[dict[int, int], set[int], set[int]]:
    """The packed-field reads of a compiled function (id -> position), its ``PackedSequence(...)`` calls and the
    ``lengths.tolist()`` its ``pack_padded_sequence`` calls take."""
    assigns: list[cst.Assign] = []
    other: set[str] = set()  # names bound otherwise than by a plain assignment (for, with, +=, walrus, a parameter)
    attributes: list[cst.Attribute] = []
    builds: set[int] = set()
    listed: set[int] = set()  # ids of the lengths.tolist() given to pack_padded_sequence

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            assigns.append(assign)

        def visit_AugAssign(self, aug: cst.AugAssign) -> None:
            _names(aug.target, other)

        def visit_AnnAssign(self, ann: cst.AnnAssign) -> None:
            _names(ann.target, other)

        def visit_For(self, loop: cst.For) -> None:
            _names(loop.target, other)

        def visit_CompFor(self, loop: cst.CompFor) -> None:
            _names(loop.target, other)

        def visit_WithItem(self, item: cst.WithItem) -> None:
            if item.asname is not None:
                _names(item.asname.name, other)

        def visit_NamedExpr(self, named: cst.NamedExpr) -> None:
            _names(named.target, other)

        def visit_Param(self, param: cst.Param) -> None:
            other.add(param.name.value)

        def visit_Attribute(self, attr: cst.Attribute) -> None:
            if attr.attr.value in _FIELDS:
                attributes.append(attr)

        def visit_Call(self, call: cst.Call) -> None:
            qual = resolve(call.func)
            if qual == _CLASS:
                builds.add(id(call))
            elif qual == _RNN + "pack_padded_sequence":
                lengths = [a for i, a in enumerate(call.args) if a.keyword is None and i == 1 or a.keyword is not None
                           and a.keyword.value == "lengths"]
                if lengths and _is_tolist(lengths[0].value):
                    listed.add(id(lengths[0].value))

    walk(node, Visitor())
    packed: set[str] = set()

    def is_layer_call(expr) -> bool:
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self" \
            and expr.func.attr.value in layers and bool(expr.args) and expr.args[0].keyword is None \
            and not expr.args[0].star and is_packed(expr.args[0].value)

    def is_packed(expr) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in packed
        if isinstance(expr, cst.Call):
            return resolve(expr.func) in _PACKS or resolve(expr.func) == _CLASS
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, cst.Integer) and expr.slice[0].slice.value.value == "0":
            return is_layer_call(expr.value)
        return False

    def packed_targets(assign: cst.Assign) -> list[tuple[str, bool]]:
        """(name, bound to a packed sequence) for each name the assignment binds."""
        out: list[tuple[str, bool]] = []
        for target in assign.targets:
            target = target.target
            if isinstance(target, cst.Name):
                out.append((target.value, is_packed(assign.value)))
            elif isinstance(target, (cst.Tuple, cst.List)):
                for i, element in enumerate(target.elements):
                    names: set[str] = set()
                    _names(element.value, names)
                    first = i == 0 and isinstance(element.value, cst.Name) and is_layer_call(assign.value)
                    out.extend((name, first) for name in names)
            else:
                _names(target, other)
        return out

    # a name is packed when every binding of it is a packed sequence: from every name bound, drop those with a
    # binding that is not, until none is dropped (``packed, _ = self.rnn(packed)`` keeps ``packed``)
    packed = {name for assign in assigns for name, _ in packed_targets(assign)} - other
    while True:
        bindings: dict[str, list[bool]] = {}
        for assign in assigns:
            for name, is_pack in packed_targets(assign):
                bindings.setdefault(name, []).append(is_pack)
        now = {name for name, kinds in bindings.items() if all(kinds) and name not in other}
        if now == packed:
            break
        packed = now
    reads = {id(attr): _FIELDS[attr.attr.value] for attr in attributes if is_packed(attr.value)}
    return reads, builds, listed


def _is_tolist(expr) -> bool:
    return isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value == "tolist"


def _names(target, into: set[str]) -> None:
    if isinstance(target, cst.Name):
        into.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _names(element.value, into)
    elif isinstance(target, cst.StarredElement):
        _names(target.value, into)
