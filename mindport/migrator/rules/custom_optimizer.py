"""The converter rule CustomOptimizerTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/custom_optimizer.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression, parse_statement

_OPTIMIZER_BASES = {"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"}


class CustomOptimizerTransform(Rule):
    """A hand-written optimizer: ``class MySGD(torch.optim.Optimizer)`` with ``step(self, closure=None)`` reading
    ``p.grad`` -> ``construct(self, gradients, closure=None)`` (what ``optimizer(grads)`` calls in MindSpore), where
    ``p.grad`` is the gradient of ``p`` from ``gradients`` (aligned with ``self.parameters``). The in-place updates
    of ``p`` and of the state tensors are the table's (``mindport.runtime.inplace``). A parameter with no gradient
    path gets a zero gradient in MindSpore where torch has None: ``if p.grad is None`` skips nothing. The base is
    ``mindport.runtime.optim.Optimizer`` (MindSpore's experimental Optimizer, whose groups keep torch's keys: its
    own needs an "lr" in every group)."""

    EXAMPLES = (
        Example(
            before="""
                import torch


                class MySGD(torch.optim.Optimizer):
                    def step(self, closure=None):
                        for group in self.param_groups:
                            for p in group["params"]:
                                p.sub_(group["lr"] * p.grad)
            """,
            after="""
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import optim as mp_optim


                class MySGD(mp_optim.Optimizer):
                    def construct(self, gradients, closure=None):
                        _grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}
                        for group in self.param_groups:
                            for p in group["params"]:
                                p = mp_inplace.sub_(p, other=group["lr"] * _grads[id(p)])
            """,
            note='step(self, closure) becomes construct(self, gradients, closure); p.grad reads the gradient that belongs to p.',
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[bool] = []
        self._in_step = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [b for b in node.bases if self.scope.resolve_torch(b.value) in _OPTIMIZER_BASES]
        for base in bases:
            self.ctx.handled.add(id(base.value))
        self._classes.append(bool(bases))

    def leave_ClassDef(self, original_node, updated_node):
        if not self._classes.pop():
            return updated_node
        # the base is mindport.runtime.optim.Optimizer: MindSpore's experimental Optimizer, whose groups keep
        # torch's keys (MindSpore's needs an "lr" in each: defaults naming the rate "alpha" were refused)
        base = parse_expression(f"{self.ctx.alias_for('mindport.runtime.optim')}.Optimizer")
        bases = [b.with_changes(value=base) if self.scope.resolve_torch(o.value) in _OPTIMIZER_BASES else b
                 for o, b in zip(original_node.bases, updated_node.bases)]
        return updated_node.with_changes(bases=bases)

    def _is_step(self, node: cst.FunctionDef) -> bool:
        return bool(self._classes) and self._classes[-1] and node.name.value == "step"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_step(node):
            self._in_step += 1

    def leave_Attribute(self, original_node, updated_node):
        if self._in_step and updated_node.attr.value == "grad" and isinstance(updated_node.value, cst.Name):
            return parse_expression(f"_grads[id({updated_node.value.value})]")
        return updated_node

    def leave_FunctionDef(self, original_node, updated_node):
        if not self._is_step(original_node):
            return updated_node
        self._in_step -= 1
        params = updated_node.params
        extra = [p for p in params.params[1:] if p.name.value != "closure"]
        if extra or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
            self.flag(original_node, "MP105", "optimizer step with arguments other than closure",
                      "write construct(self, gradients) by hand", "torch.optim.Optimizer")
            return updated_node
        closure = [p for p in params.params[1:]]
        self.ctx.converted_sites += 1
        grads = parse_statement("_grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}")
        body = updated_node.body.with_changes(body=[grads, *updated_node.body.body])
        return updated_node.with_changes(
            name=cst.Name("construct"), body=body,
            params=params.with_changes(params=[params.params[0], cst.Param(cst.Name("gradients")), *closure]))
