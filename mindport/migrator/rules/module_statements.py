"""The converter rule ModuleStatementTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/module_statements.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind
from mindport.migrator.walk import parse_statement


class ModuleStatementTransform(Rule):
    """Module methods that are statements in torch and have no Cell method:
    ``model.requires_grad_(False)`` -> ``for _p in model.get_parameters(): _p.requires_grad = False``.

    Receivers that are evidently tensors are left to the tensor rules. (``zero_grad()`` is the training rule's:
    it disappears with the loop it belongs to, see ``training.py``.)
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Encoder(nn.Module):
                    pass


                def freeze():
                    encoder = Encoder()
                    encoder.requires_grad_(False)
                    return encoder
            """,
            after="""
                from mindspore import nn


                class Encoder(nn.Cell):
                    pass


                def freeze():
                    encoder = Encoder()
                    for _p in encoder.get_parameters():
                        _p.requires_grad = False
                    return encoder
            """,
            note='A Cell has no requires_grad_(): the flag is set on each of its parameters.',
        ),
    )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        call = self._call(node)
        if call is not None:
            self.ctx.handled.add(id(call))

    def _call(self, line: cst.SimpleStatementLine) -> cst.Call | None:
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
            return None
        call = line.body[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        name = call.func.attr.value
        if name != "requires_grad_" or self.scope.resolve(call.func.value) is not None:
            return None
        if receiver_kind(call.func.value, self.scope) in ("tensor", "python", "foreign"):
            return None
        if (len(call.args) > 1 or any(
                a.keyword is not None and a.keyword.value != "requires_grad" for a in call.args)):
            return None
        return call

    def leave_SimpleStatementLine(self, original_node, updated_node):
        call = self._call(original_node)
        if call is None:
            return updated_node
        self.ctx.converted_sites += 1
        flag = call.args[0].value if call.args else cst.Name("True")
        code = cst.Module(body=[])
        loop = parse_statement(f"for _p in {code.code_for_node(call.func.value)}.get_parameters():\n"
                                   f"    _p.requires_grad = {code.code_for_node(flag)}\n")
        return loop.with_changes(leading_lines=updated_node.leading_lines)
