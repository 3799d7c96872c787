"""The converter rule LayerInitCallTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/layer_init_calls.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.mappings.surface import load_converted_init_calls, load_init_calls
from mindport.migrator.rules.base import Example, Rule


class LayerInitCallTransform(Rule):
    """A subclass of a torch layer that overrides ``reset_parameters`` gets it called after the base ``__init__``.

    torch's layer ``__init__`` ends by calling ``self.reset_parameters()`` (``nn.Linear``, the convolutions, the
    norms, ``Embedding``, the RNNs; ``MultiheadAttention``: ``self._reset_parameters()``), so a subclass's own
    ``reset_parameters`` is its initialisation (``class ZeroLinear(nn.Linear)`` whose ``reset_parameters`` zeroes
    the weight). MindSpore's classes draw their weights in ``__init__`` and call no such method: the port built
    with MindSpore's draw, silently. The call goes right after the base ``__init__`` call, where torch's ``__init__``
    makes it (before the subclass's own lines after ``super().__init__``); a subclass without an ``__init__`` gets
    one that passes its arguments on. Which torch classes call which method is read from torch's source
    (``mappings/data/surface/init_calls.toml``, ``python -m mindport.proofs.init_calls --write``).
    ``Embedding(..., _weight=w)`` calls none (torch skips it for a given weight): left as is. Where the converted
    class's own ``__init__`` calls it already (MindSpore's RNN cells: ``self.reset_parameters(dtype=dtype)``, the
    file's ``[converted]``), no call is added and the override takes those keywords (``**_mindspore_arguments``;
    without them the port did not build).

    ``super().reset_parameters()`` in such a class is the next class's own, or the base layer's draw as torch's
    (ObjectSurfaceTransform: ``mindport.runtime.layers.reset_parameters(super())``; MindSpore's Cell has no such
    method).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class ZeroLinear(nn.Linear):
                    def reset_parameters(self):
                        super().reset_parameters()
                        nn.init.zeros_(self.bias)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import layers as mp_nn


                class ZeroLinear(nn.Dense):
                    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
                        \"\"\"torch.nn.Linear's parameters.\"\"\"
                        super().__init__(in_channels=in_features, out_channels=out_features, has_bias=bias, dtype=dtype or ms.float32)
                        self.reset_parameters()  # torch.nn.Linear.__init__ calls it; MindSpore's does not

                    def reset_parameters(self):
                        mp_nn.reset_parameters(super())
                        self.bias.set_data(ms.common.initializer.initializer(ms.common.initializer.Zero(), self.bias.shape, self.bias.dtype))
            """,
            note="The override runs where torch's __init__ runs it (here the __init__ taking torch's parameters); "
                 "its super() call is the base layer's own draw.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Table(nn.Embedding):
                    def reset_parameters(self):
                        nn.init.uniform_(self.weight, -0.1, 0.1)
            """,
            after="""
                import mindspore as ms
                from mindport.runtime import adapt as mp_adapt


                class Table(mp_adapt.api("torch.nn.Embedding")):
                    def __init__(self, *args, **kwargs):
                        super().__init__(*args, **kwargs)
                        self.reset_parameters()  # torch.nn.Embedding.__init__ calls it; MindSpore's does not

                    def reset_parameters(self):
                        self.embedding_table.set_data(ms.common.initializer.initializer(ms.common.initializer.Uniform(scale=0.1), self.embedding_table.shape, self.embedding_table.dtype))
            """,
            note="A subclass with no __init__ of its own (and none written for it) gets one that passes its "
                 "arguments on.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[tuple[str, tuple[str, ...]] | None] = []  # per class: (torch base, methods to call)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._overridden(node))

    def _overridden(self, node: cst.ClassDef) -> tuple[str, tuple[str, ...]] | None:
        """(torch base class, the methods its ``__init__`` calls that this class defines), or None."""
        own = {s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)}
        for base in node.bases:
            qual = self.scope.resolve_torch(base.value) if base.keyword is None else None
            calls = tuple(c for c in load_init_calls().get(qual or "", ()) if c in own)
            if calls:
                return qual, calls
        return None

    def leave_ClassDef(self, original_node, updated_node):
        made = self._classes.pop()
        if made is None:
            return updated_node
        qual, calls = made
        body = list(updated_node.body.body)
        called = load_converted_init_calls().get(qual, ())
        if called:  # the converted class's own __init__ calls the override already, with its arguments
            body = [_taking_keywords(s) if isinstance(s, cst.FunctionDef) and s.name.value in called else s
                    for s in body]
            updated_node = updated_node.with_changes(body=updated_node.body.with_changes(body=body))
            calls = tuple(c for c in calls if c not in called)
            if not calls:
                return updated_node
        lines = [_call_line(name, qual) for name in calls]
        for i, statement in enumerate(body):
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
                inserter = _AfterBaseInit(lines)
                body[i] = statement.with_changes(body=statement.body.visit(inserter))
                self.ctx.converted_sites += inserter.count
                return updated_node.with_changes(body=updated_node.body.with_changes(body=body))
        init = cst.parse_statement("def __init__(self, *args, **kwargs):\n    super().__init__(*args, **kwargs)\n")
        init = init.with_changes(body=init.body.with_changes(body=[*init.body.body, *lines]))
        self.ctx.converted_sites += 1
        at = next((i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef)), len(body))
        if at < len(body):
            init = init.with_changes(leading_lines=body[at].leading_lines)
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        body.insert(at, init)
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


def _taking_keywords(function: cst.FunctionDef) -> cst.FunctionDef:
    """``def reset_parameters(self)`` -> ``def reset_parameters(self, **_mindspore_arguments)``: MindSpore's RNN
    cells call it with ``dtype=``; torch's, with none."""
    if function.params.star_kwarg is not None:
        return function
    return function.with_changes(params=function.params.with_changes(
        star_kwarg=cst.Param(cst.Name("_mindspore_arguments"), star="**")))


def _is_super(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def _call_line(name: str, qual: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(
        body=[cst.Expr(cst.Call(func=cst.Attribute(value=cst.Name("self"), attr=cst.Name(name))))],
        trailing_whitespace=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(
            f"# {qual}.__init__ calls it; MindSpore's does not")))


def _is_base_init(line: cst.BaseStatement) -> bool:
    """``super().__init__(...)``, ``super(C, self).__init__(...)`` or ``Base.__init__(self, ...)`` (as rewritten:
    MindSpore's or the file's class), not ``Embedding(..., _weight=w)`` (torch's then calls no reset_parameters)."""
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
        return False
    call = line.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__"):
        return False
    if any(a.keyword is not None and a.keyword.value in ("_weight", "embedding_table") for a in call.args):
        return False
    receiver = call.func.value
    return _is_super(receiver) or (bool(call.args) and isinstance(call.args[0].value, cst.Name)
                                   and call.args[0].value.value == "self" and call.args[0].keyword is None)


class _AfterBaseInit(cst.CSTTransformer):
    """In one ``__init__`` body (not its nested functions or classes): the lines after each base ``__init__`` call."""

    def __init__(self, lines) -> None:
        super().__init__()
        self.lines = lines
        self.count = 0

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_IndentedBlock(self, original_node, updated_node):
        out = []
        for line in updated_node.body:
            out.append(line)
            if _is_base_init(line):
                out += self.lines
                self.count += 1
        return updated_node.with_changes(body=out) if len(out) != len(updated_node.body) else updated_node
