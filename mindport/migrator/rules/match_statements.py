"""The converter rule MatchStatementTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/match_statements.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import bindings_in_scope, function_bindings

_SUBJECT = "_mp_subject"


class MatchStatementTransform(GraphMethodRule):
    """In code a static graph compiles (a model's methods and the module's functions, which a graph compiles with
    every method that calls them), a ``match`` statement whose patterns are values becomes an ``if``/``elif``/``else``
    chain: ``case 'cumsum':`` is ``subject == 'cumsum'``, ``case None:`` (``True``, ``False``) is ``subject is None``,
    ``case 'a' | 'b':`` joins its alternatives with ``or``, a guard (``case 'a' if flag:``) is joined with ``and``, and
    the wildcard ``case _:`` is the ``else``. A subject that is not a plain name or attribute is evaluated once, bound
    to ``_mp_subject`` before the chain. With no wildcard, a name the cases bind and nothing else in the function
    does is bound to ``None`` before the chain: a graph compiles every branch and refuses a name one branch leaves
    unbound ("The local variable 'y' is not defined in false branch"); Python would raise NameError where it is None. Python compares value patterns with ``==`` and singletons with ``is``, and
    runs the first case that matches, as the chain does.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) has no ``match``: its parser refuses the statement
    (static_graph.rst lists ``Match`` as unsupported; PeaBrane/mamba-tiny's ``selective_scan(..., mode=...)``, which
    the model's forward calls, failed to compile). A ``match`` with any other pattern (a capture ``case x:``, a class,
    sequence or mapping pattern) is left as written and flagged MP107: it runs in PyNative only.
    """

    MODULE_FUNCTIONS = True

    EXAMPLES = (
        Example(
            before="""
                import torch


                def activate(x, mode="double"):
                    match mode:
                        case "double":
                            y = x * 2
                        case "relu" | "positive":  # the positive part
                            y = torch.relu(x)
                        case _:
                            y = x
                    return y
            """,
            after="""
                from mindspore import ops


                def activate(x, mode="double"):
                    if mode == "double":
                        y = x * 2
                    elif mode == "relu" or mode == "positive":  # the positive part
                        y = ops.relu(x)
                    else:
                        y = x
                    return y
            """,
            note="Value patterns compare with ==, alternatives with or; the wildcard is the else.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Gate(nn.Module):
                    def forward(self, x, kind=None):
                        match kind.lower() if kind else None:
                            case None:
                                return x
                            case "half" if x.ndim > 1:
                                return x / 2
                        return -x
            """,
            after="""
                from mindspore import nn


                class Gate(nn.Cell):
                    def construct(self, x, kind=None):
                        _mp_subject = kind.lower() if kind else None
                        if _mp_subject is None:
                            return x
                        elif _mp_subject == "half" and (x.ndim > 1):
                            return x / 2
                        return -x
            """,
            note="A computed subject is evaluated once; None is tested with is; a guard joins with and.",
        ),
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._functions = getattr(self, "_functions", []) + [node]

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_Match(self, original_node, updated_node):
        if not self.compiled:
            return updated_node
        if not all(_test_of(case.pattern, cst.Name("x")) is not None or _wildcard(case.pattern)
                   for case in updated_node.cases) \
                or any(_wildcard(case.pattern) and case.guard is None for case in updated_node.cases[:-1]):
            self.ctx.diagnose(original_node, "MP107", "a match statement with a capture, class, sequence or mapping "
                              "pattern: MindSpore's static graph (GRAPH_MODE) has no match statement; it runs in "
                              "PyNative only", suggestion="write it as an if/elif chain")
            return updated_node
        subject = updated_node.subject
        bind = None
        if not _plain(subject):
            bind = cst.SimpleStatementLine(
                [cst.Assign([cst.AssignTarget(cst.Name(_SUBJECT))], subject.with_changes(lpar=[], rpar=[]))],
                leading_lines=updated_node.leading_lines)
            subject = cst.Name(_SUBJECT)
        chain = None
        for case in reversed(updated_node.cases):
            test = None if _wildcard(case.pattern) else _test_of(case.pattern, subject)
            if case.guard is not None:
                guard = case.guard.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) \
                    if isinstance(case.guard, (cst.BooleanOperation, cst.Comparison, cst.IfExp)) else case.guard
                test = guard if test is None else cst.BooleanOperation(test, cst.And(), guard)
            if test is None:  # the wildcard: the else
                chain = cst.Else(body=case.body)
            else:
                chain = cst.If(test=test, body=case.body, orelse=chain)
        if isinstance(chain, cst.Else):  # a match of one wildcard case: its body
            statements = list(chain.body.body)
        else:
            statements = [chain]
        if not _wildcard(updated_node.cases[-1].pattern):
            function = self._functions[-1] if getattr(self, "_functions", None) else None
            if function is not None:
                # the function's own names but those the match binds (its parameters included)
                elsewhere = function_bindings(function.deep_remove(original_node))
                names = sorted(set().union(*(bindings_in_scope(case.body) for case in updated_node.cases)) - elsewhere)
                statements = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))], cst.Name("None"))])
                              for n in names] + statements
        if not bind:
            statements[0] = statements[0].with_changes(leading_lines=updated_node.leading_lines)
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(([bind] if bind else []) + statements)


def _plain(subject) -> bool:
    """A name or an attribute chain of one: read twice, it reads the same."""
    while isinstance(subject, cst.Attribute):
        subject = subject.value
    return isinstance(subject, cst.Name)


def _wildcard(pattern) -> bool:
    return isinstance(pattern, cst.MatchAs) and pattern.pattern is None and pattern.name is None


def _test_of(pattern, subject):
    """The condition a value pattern tests, or None for any other pattern."""
    if isinstance(pattern, cst.MatchValue):
        return cst.Comparison(subject, [cst.ComparisonTarget(cst.Equal(), pattern.value)])
    if isinstance(pattern, cst.MatchSingleton):
        return cst.Comparison(subject, [cst.ComparisonTarget(cst.Is(), pattern.value)])
    if isinstance(pattern, cst.MatchOr):
        tests = [_test_of(element.pattern, subject) for element in pattern.patterns]
        if not tests or any(t is None for t in tests):
            return None
        joined = tests[0]
        for test in tests[1:]:
            joined = cst.BooleanOperation(joined, cst.Or(), test)
        return joined
    return None
