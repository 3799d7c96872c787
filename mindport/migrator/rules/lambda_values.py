"""The converter rule LambdaValueTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/lambda_values.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule, forward_methods
from mindport.migrator.walk import replace_nodes, walk

_NAME = "_mp_lambda"
_EMPTY = cst.Module([])
_OWN_SCOPE = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.FunctionDef, cst.ClassDef)


class LambdaValueTransform(Rule):
    """A lambda handed to a call or chosen by a conditional expression while a model is built
    (``GraphConv(h, d, activation=lambda x: x)``, ``nn.ReLU() if relu else lambda x: x``), or written as an item of
    a list, tuple or dict display there, in a class body or at module level (SphereFace's ``self.mlambda = [lambda x: x**0, ...]``,
    Glow's ``FlowPermutation = {"reverse": lambda obj, z, logdet, rev: ..., ...}``), is bound to a name on the
    line before: ``_mp_lambda = lambda x: x``, then ``activation=_mp_lambda``.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles a lambda a layer stored by reading its source line, and
    takes it only when the line is an assignment of the lambda ("Parse Lambda Function Fail. Node type must be
    Lambda, but got Call": VGAE's GAE did not compile; "... but got Tuple" for a list item, "illegal target for
    annotation" for a dict item). Creating a lambda does nothing else, so creating it one line
    earlier is the same program. Statements of functions outside a model's forward code (``__init__``, builders) are
    rewritten; a lambda inside another lambda or a comprehension (it may read the loop's variable), and a compound
    statement's header (``if``, ``for``, ``with``), are left as written. A lambda that is a parameter's default value
    (``def __init__(self, scheme=(lambda m, x: m(x)))``, stored and called in forward) is bound on the line before the
    ``def`` as ``_mp_default_<parameter>``: the def's line is no lambda's assignment either.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class GraphConv(nn.Module):
                    def __init__(self, d, activation):
                        super().__init__()
                        self.proj = nn.Linear(d, d)
                        self.activation = activation

                    def forward(self, x):
                        return self.activation(self.proj(x))


                class GAE(nn.Module):
                    def __init__(self, d, relu=False):
                        super().__init__()
                        self.base = GraphConv(d, activation=nn.ReLU())
                        self.mean = GraphConv(d, activation=lambda x: x)
                        self.out = nn.ReLU() if relu else lambda x: x

                    def forward(self, x):
                        return self.out(self.mean(self.base(x)))
            """,
            after="""
                from mindspore import nn


                class GraphConv(nn.Cell):
                    def __init__(self, d, activation):
                        super().__init__()
                        self.proj = nn.Dense(in_channels=d, out_channels=d)
                        self.activation = activation

                    def construct(self, x):
                        return self.activation(self.proj(x))


                class GAE(nn.Cell):
                    def __init__(self, d, relu=False):
                        super().__init__()
                        self.base = GraphConv(d, activation=nn.ReLU())
                        _mp_lambda = lambda x: x
                        self.mean = GraphConv(d, activation=_mp_lambda)
                        _mp_lambda = lambda x: x
                        self.out = nn.ReLU() if relu else _mp_lambda

                    def construct(self, x):
                        return self.out(self.mean(self.base(x)))
            """,
            note="Each lambda on a line of its own, the only form a static graph compiles from a stored layer.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class AngleLinear(nn.Module):
                    Signs = {"plus": lambda x: x, "minus": lambda x: -x}

                    def __init__(self, m=2):
                        super().__init__()
                        self.m = m
                        self.mlambda = [
                            lambda x: x**0,
                            lambda x: x**1,
                            lambda x: 2*x**2-1,
                        ]

                    def forward(self, cos_theta):
                        return AngleLinear.Signs["minus"](self.mlambda[self.m](cos_theta))
            """,
            after="""
                from mindspore import nn


                class AngleLinear(nn.Cell):
                    _mp_lambda = lambda x: x
                    _mp_lambda_2 = lambda x: -x
                    Signs = {"plus": _mp_lambda, "minus": _mp_lambda_2}

                    def __init__(self, m=2):
                        super().__init__()
                        self.m = m
                        _mp_lambda = lambda x: x**0
                        _mp_lambda_2 = lambda x: x**1
                        _mp_lambda_3 = lambda x: 2*x**2-1
                        self.mlambda = [
                            _mp_lambda,
                            _mp_lambda_2,
                            _mp_lambda_3,
                        ]

                    def construct(self, cos_theta):
                        return AngleLinear.Signs["minus"](self.mlambda[self.m](cos_theta))
            """,
            note="Lambdas in a list or a dict: each bound first, in a method or in the class body.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class DualPath(nn.Module):
                    def __init__(self, scheme=(lambda module, x1, x2: module(x1) + x2)):
                        super().__init__()
                        self.scheme = scheme
                        self.body = nn.Identity()

                    def forward(self, x):
                        return self.scheme(self.body, x, x)
            """,
            after="""
                from mindspore import nn


                class DualPath(nn.Cell):
                    _mp_default_scheme = (lambda module, x1, x2: module(x1) + x2)
                    def __init__(self, scheme=_mp_default_scheme):
                        super().__init__()
                        self.scheme = scheme
                        self.body = nn.Identity()

                    def construct(self, x):
                        return self.scheme(self.body, x, x)
            """,
            note="A parameter's default lambda: bound before the def, where defaults are evaluated.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._graph_methods: set[int] = set()  # ids of model-class methods but __init__ (a graph parses them)
        self._functions: list[bool] = []  # per enclosing function: its lambdas are hoisted

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._graph_methods |= forward_methods(node, self._module_classes)
        self._functions.append("class")  # a class body's own statements: lambdas in a list/dict display only

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(id(node) not in self._graph_methods)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        params = updated_node.params
        written = {p.name.value for p in (*original_node.params.params, *original_node.params.kwonly_params)
                   if isinstance(p.default, cst.Lambda)}  # the source's lambdas, not a layer class's factory
        defaults = [p for p in (*params.params, *params.kwonly_params)
                    if isinstance(p.default, cst.Lambda) and p.name.value in written]
        if not defaults:
            return updated_node
        # a lambda as a parameter's default (pytorchcv's DualPathSequential: `dual_path_scheme=(lambda module, x1,
        # x2: module(x1, x2))`, stored and called in forward): its source line is the def's, which a graph cannot
        # parse as a lambda; bound on the line before the def (defaults are evaluated there, at definition time)
        lines, names = [], {}
        for p in defaults:
            name = f"_mp_default_{p.name.value}"
            names[id(p.default)] = cst.Name(name)
            value = p.default
            if not value.lpar and "\n" in _EMPTY.code_for_node(value):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)]))
        self.ctx.converted_sites += len(defaults)
        new_params = replace_nodes(params, names)
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel([*lines, updated_node.with_changes(params=new_params, leading_lines=[])])

    def leave_ClassDef(self, original_node, updated_node):
        self._functions.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        # the module's own statements are read as a class body's: lambdas in a list/dict display only (a module-level
        # table of derivatives read in forward: tonyduan's flows, session 51)
        mode = self._functions[-1] if self._functions else "class"
        if not mode:
            return updated_node
        found: list[cst.Lambda] = []
        for stmt in updated_node.body:
            _lambda_values(stmt, found, calls=mode is True)
        if not found or self.scope.lookup(_NAME)[0]:
            return updated_node
        lines, names = [], {}
        for i, node in enumerate(found):
            name = _NAME if i == 0 else f"{_NAME}_{i + 1}"
            names[id(node)] = cst.Name(name)
            if not node.lpar and "\n" in _EMPTY.code_for_node(node):  # a line break the call's parentheses allowed
                node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], node)]))
        line = replace_nodes(updated_node, names)
        self.ctx.converted_sites += len(found)
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel([*lines, line.with_changes(leading_lines=[])])


def _lambda_values(stmt: cst.CSTNode, found: list, calls: bool = True) -> None:
    """The lambdas of the statement passed as a call's argument or given by a conditional expression's branch
    (``calls``), or written as an item of a list, tuple, set or dict display, not inside another lambda, a
    comprehension or a nested scope."""

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.Element, cst.DictElement)) and isinstance(node.value, cst.Lambda):
                found.append(node.value)
            elif not calls:
                pass
            elif isinstance(node, cst.Arg) and isinstance(node.value, cst.Lambda):
                found.append(node.value)
            elif isinstance(node, cst.IfExp):
                found.extend(v for v in (node.body, node.orelse) if isinstance(v, cst.Lambda))
            return not isinstance(node, _OWN_SCOPE)

    walk(stmt, Visitor())

