"""The converter rule RecordDictTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/record_dicts.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression

_NOT_RECEIVERS = frozenset({"self", "cls", "super"})


class RecordDictTransform(Rule):
    """A ``@dataclass`` record a model builds in its forward (x-transformers' ``Intermediates(qk_similarities=...,
    pre_softmax_attn=...)``, returned with the output) is written as a dict display of its fields, ``{"qk_similarities":
    ..., "pre_softmax_attn": ..., "values": None, ...}`` (every field, its default where the call gives none), and
    every read or write of one of its fields, ``inter.pre_softmax_attn`` / ``inter.layer_type = t``, as the key's:
    ``inter["pre_softmax_attn"]`` / ``inter.update({"layer_type": t})``, in every file of the project.

    A static graph (GRAPH_MODE, ``@jit``) builds a dataclass object in the Python interpreter, and every value returned
    with it is an interpreted value: measured on MindSpore 2.10, an inner Cell returning ``(out, Intermediates(...))``
    made the next ``LayerNorm(out + x)`` fail to compile ("negative dimensions are not allowed"), even with the record
    never read; ``@mindspore.jit_class`` refuses a tensor argument, and a jit_class object built empty and filled by
    attribute writes reads back its defaults in a graph (a field written ``r.pre = t`` read ``None``). A dict display
    with string keys is a graph's own value: built, returned from a sub-cell, written by key after the return, held
    in a list and read in a comprehension, it compiled and gave PyNative's numbers. A field is written with ``update``:
    a graph's item write ``inter["layer_type"] = "a"`` (a string or None) into a dict a sub-cell returned fails to
    compile ("'tuple' object does not support item assignment"), ``update`` compiles for every value. PyNative and torch are unchanged
    but for the record's type: a caller of the model gets a dict where torch gives the dataclass (read it by key).

    Only records nothing else can tell from a dict are written so (``mindport.migrator.project.record_classes``, from
    every file of the project): a top-level ``@dataclass`` with no base and only annotated fields (methods nobody
    calls), built only in model methods and only with keywords and positions its fields cover, its name otherwise
    only in annotations and imports, no field named like a tensor's or a layer's attribute (``shape``, ``weight``),
    no ``getattr``/``hasattr`` of a field by name and no ``dataclasses.asdict``/``replace``/``fields`` in the project.
    Any other record built in a model's method keeps its class and its MP107 (GraphContainerTransform). A field read
    on ``self`` or on a module's name is not a record's and is left alone.
    """

    EXAMPLES = (
        Example(
            before="""
                from dataclasses import dataclass

                import torch
                import torch.nn as nn


                @dataclass
                class Intermediates:
                    pre_softmax_attn: torch.Tensor | None = None
                    values: torch.Tensor | None = None
                    layer_type: str | None = None


                class Attend(nn.Module):
                    def forward(self, q, k, v):
                        sim = q @ k.transpose(-1, -2)
                        out = sim.softmax(dim=-1) @ v
                        return out, Intermediates(pre_softmax_attn=sim)


                class Block(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.norm = nn.LayerNorm(8)
                        self.attend = Attend()

                    def forward(self, x):
                        out, inter = self.attend(x, x, x)
                        inter.values = x
                        inter.layer_type = "attn"
                        return self.norm(out + inter.pre_softmax_attn.mean()), inter
            """,
            after="""
                from dataclasses import dataclass

                import mindspore as ms
                from mindspore import nn
                from mindspore import ops


                @dataclass
                class Intermediates:
                    pre_softmax_attn: ms.Tensor | None = None
                    values: ms.Tensor | None = None
                    layer_type: str | None = None


                class Attend(nn.Cell):
                    def construct(self, q, k, v):
                        sim = q @ k.swapaxes(axis0=-1, axis1=-2)
                        out = ops.softmax(sim, axis=-1) @ v
                        return out, {"pre_softmax_attn": sim, "values": None, "layer_type": None}


                class Block(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.norm = nn.LayerNorm(normalized_shape=(8,), epsilon=1e-05)
                        self.attend = Attend()

                    def construct(self, x):
                        out, inter = self.attend(x, x, x)
                        inter.update({"values": x})
                        inter.update({"layer_type": "attn"})
                        return self.norm(out + inter["pre_softmax_attn"].mean()), inter
            """,
            note="The record is a dict of its fields, built and read by key; its class stays for the annotations.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._records = {name: fields for name, fields in ctx.options.record_classes}
        self._fields = frozenset(f for fields in self._records.values() for f, _ in fields)
        self._modules: set[str] = set()  # names the file binds to a module (import x / import x as y)
        self._called: set[int] = set()  # attributes that are a call's function: a method, not a field

    def visit_Module(self, node: cst.Module) -> None:
        if not self._records:
            return
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        for alias in small.names:
                            bound = alias.asname.name if alias.asname else alias.name
                            while isinstance(bound, cst.Attribute):
                                bound = bound.value
                            if isinstance(bound, cst.Name):
                                self._modules.add(bound.value)

    def visit_Call(self, node: cst.Call) -> None:
        if self._records and isinstance(node.func, cst.Attribute):
            self._called.add(id(node.func))

    def leave_Call(self, original_node, updated_node):
        func = original_node.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) \
            else None
        fields = self._records.get(name)
        if fields is None or any(a.star for a in original_node.args):
            return updated_node
        given: dict[str, cst.BaseExpression] = {}
        names = [f for f, _ in fields]
        for i, arg in enumerate(updated_node.args):
            key = arg.keyword.value if arg.keyword is not None else names[i] if i < len(names) else None
            if key is None or key not in names:
                return updated_node
            given[key] = arg.value
        elements = []
        for field, default in fields:
            value = given.get(field)
            if value is None:
                if default is None:
                    return updated_node  # a required field not given: the class's own TypeError
                value = parse_expression(default)
            elements.append(cst.DictElement(cst.SimpleString(f'"{field}"'), value))
        self.ctx.converted_sites += 1
        return cst.Dict(elements)

    def _field(self, node: cst.Attribute) -> bool:
        """A record's field: its name, not a call's function, not on ``self`` or a module."""
        if node.attr.value not in self._fields or id(node) in self._called:
            return False
        head = node.value
        while isinstance(head, cst.Attribute):  # self.x.values: a layer's attribute; inter.values: a record's
            head = head.value
        return not (isinstance(head, cst.Name) and (head.value in _NOT_RECEIVERS or head.value in self._modules))

    def leave_Assign(self, original_node, updated_node):
        target = original_node.targets[0].target if len(original_node.targets) == 1 else None
        if not isinstance(target, cst.Attribute) or not self._field(target) \
                or not isinstance(updated_node.targets[0].target, cst.Subscript):
            return updated_node
        # inter.layer_type = v -> inter.update({"layer_type": v}): Python's same write; a graph's item write of a
        # string or None into a dict a sub-cell returned fails ("'tuple' object does not support item assignment",
        # MindSpore 2.10), its update compiles (a tensor, an int, a string, None alike)
        return cst.Expr(cst.Call(
            func=cst.Attribute(value=updated_node.targets[0].target.value, attr=cst.Name("update")),
            args=[cst.Arg(cst.Dict([cst.DictElement(cst.SimpleString(f'"{target.attr.value}"'),
                                                    updated_node.value)]))]))

    def leave_Attribute(self, original_node, updated_node):
        if not self._field(original_node):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Subscript(value=updated_node.value, slice=[
            cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{original_node.attr.value}"')))])
