"""The converter rule DictUnpackTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/dict_unpack.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression

_RUNTIME = "mindport.runtime.graph_safe"


class DictUnpackTransform(Rule):
    """A dict display with ``**`` unpacking inside a function (``{**f_args, **new_args}``, ``{**cfg, 'dim': d}``)
    becomes ``mp_graph_safe.merged_dict(f_args, new_args)``, the same dict built by item assignments.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles such a display but reads wrong values from it: on 2.10,
    ``{**a}['k']`` gives an empty tuple instead of the tensor stored under 'k', and the error surfaces far away
    (``For Operator[Mul], other's type 'Tuple[Tuple[]]' does not match``). Model code routes keyword arguments to
    layers this way (lucidrains' ``route_args``). The parts keep their order, so a later key replaces an earlier one
    as in Python; plain ``key: value`` pairs between them are grouped into dict displays. Helper functions are
    compiled too when a model calls them, so the rule applies in every function; displays at module or class level
    (configuration, never compiled) are left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                def route(router, kwargs):
                    f_args, g_args = {}, {}
                    for key, val in kwargs.items():
                        if router.get(key):
                            f_args = {**f_args, key: val}
                        g_args = {**g_args, **{key: val}, 'depth': 1}
                    return f_args, g_args
            """,
            after="""
                from mindport.runtime import graph_safe as mp_graph_safe
                def route(router, kwargs):
                    f_args, g_args = {}, {}
                    for key, val in kwargs.items():
                        if router.get(key):
                            f_args = mp_graph_safe.merged_dict(f_args, {key: val})
                        g_args = mp_graph_safe.merged_dict(g_args, {key: val}, {'depth': 1})
                    return f_args, g_args
            """,
            note="Each ** part and each run of plain pairs is one argument, in order.",
        ),
        Example(
            before="""
                DEFAULTS = {'dim': 64}
                SMALL = {**DEFAULTS, 'depth': 2}
            """,
            after=None,
            note="Module-level displays are configuration, never compiled: left as written.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._depth = 0  # functions entered

    def visit_FunctionDef(self, node):
        self._depth += 1

    def leave_FunctionDef(self, original_node, updated_node):
        self._depth -= 1
        return updated_node

    def leave_Dict(self, original_node, updated_node):
        if not self._depth or not any(isinstance(e, cst.StarredDictElement) for e in updated_node.elements):
            return updated_node
        parts: list[cst.BaseExpression] = []
        run: list[cst.DictElement] = []
        for element in updated_node.elements:
            if isinstance(element, cst.StarredDictElement):
                if run:
                    parts.append(cst.Dict(run))
                    run = []
                parts.append(element.value)
            else:
                run.append(element.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        if run:
            parts.append(cst.Dict(run))
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME)}.merged_dict"),
                        args=[cst.Arg(p) for p in parts], lpar=updated_node.lpar, rpar=updated_node.rpar)
