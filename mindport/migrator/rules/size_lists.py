"""The converter rule SizeListArgumentTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/size_lists.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule

# torch's size arguments (an int or any sequence of ints), which MindSpore's layers take as an int or a tuple only
SIZE_NAMES = frozenset({"kernel_size", "stride", "padding", "dilation", "output_padding", "output_size"})


class SizeListArgumentTransform(Rule):
    """A list display passed for a size parameter of the file's own class or function -> a tuple display.

    torch's layers take a size as an int or any sequence (``kernel_size=[1, 1]``); MindSpore's take an int or a tuple
    and refuse a list ("When expanding an int number to tuple, input type must be integer or tuple[int], but got
    list"). Model code often hands sizes through its own blocks (GMAN's ``conv2d_(..., kernel_size=[1, 1],
    stride=[1, 1])``, whose ``__init__`` passes them to ``nn.Conv2d``): the layer call inside sees only a name. A
    parameter is a size parameter when it is named like torch's (``kernel_size``, ``stride``, ``padding``,
    ``dilation``, ``output_padding``, ``output_size``) or the function passes it on as one of those keywords
    (``nn.Conv2d(c, c, kernel_size=k)``); a list display given for it, by keyword or by position, is written as the
    tuple display of the same elements (indexing, ``len`` and unpacking read both alike). Lists held in local names
    of the layer's own function are the TableCallTransform's (``tuple(rate) if isinstance(rate, list) else rate``).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Conv(nn.Module):
                    def __init__(self, c_in, c_out, kernel_size, k=1, stride=(1, 1)):
                        super().__init__()
                        self.conv = nn.Conv2d(c_in, c_out, kernel_size, stride=stride, dilation=k)

                    def forward(self, x):
                        return self.conv(x)


                def build(c):
                    return Conv(c, c, [1, 1], [1, 1], stride=[2, 1]), sum([1, 2])
            """,
            after="""
                from mindspore import nn


                class Conv(nn.Cell):
                    def __init__(self, c_in, c_out, kernel_size, k=1, stride=(1, 1)):
                        super().__init__()
                        self.conv = nn.Conv2d(in_channels=c_in, out_channels=c_out, kernel_size=kernel_size, stride=stride, dilation=k, has_bias=True, pad_mode='valid')

                    def construct(self, x):
                        return self.conv(x)


                def build(c):
                    return Conv(c, c, (1, 1), (1, 1), stride=(2, 1)), sum([1, 2])
            """,
            note="Sizes handed to the file's own block as lists become tuples, by keyword and by position; other "
                 "lists stay.",
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._sizes: dict[str, tuple[list[str], frozenset[str]]] = {}
        for stmt in node.body:
            function = stmt
            if isinstance(stmt, cst.ClassDef):
                function = next((s for s in stmt.body.body if isinstance(s, cst.FunctionDef)
                                 and s.name.value == "__init__"), None)
            if isinstance(function, cst.FunctionDef):
                params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
                if isinstance(stmt, cst.ClassDef) and params[:1] == ["self"]:
                    params = params[1:]
                sizes = _size_parameters(function, params)
                if sizes:
                    self._sizes[stmt.name.value] = (params, sizes)

    def leave_Call(self, original_node, updated_node):
        func = original_node.func
        if not isinstance(func, cst.Name) or func.value not in self._sizes \
                or self.scope.resolve(func) is not None:
            return updated_node
        params, sizes = self._sizes[func.value]
        args, changed = [], False
        position = 0
        for arg in updated_node.args:
            name = None
            if arg.keyword is not None:
                name = arg.keyword.value
            elif not arg.star:
                name = params[position] if position < len(params) else None
                position += 1
            value = arg.value
            if name in sizes and isinstance(value, cst.List) and value.elements \
                    and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(value.elements) - 1
                            and len(value.elements) > 1 else e for i, e in enumerate(value.elements)]
                if len(elements) == 1:
                    elements = [elements[0].with_changes(comma=cst.Comma())]
                arg = arg.with_changes(value=cst.Tuple(elements=elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
                changed = True
            args.append(arg)
        if not changed:
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(args=args)


def _size_parameters(function: cst.FunctionDef, params: list[str]) -> frozenset[str]:
    """The parameters of ``function`` that are sizes: named like torch's, or passed on as a size keyword."""
    found = {p for p in params if p in SIZE_NAMES}
    names = set(params)

    class _Find(cst.CSTVisitor):
        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None and node.keyword.value in SIZE_NAMES and isinstance(node.value, cst.Name) \
                    and node.value.value in names:
                found.add(node.value.value)

    function.visit(_Find())
    return frozenset(found)
