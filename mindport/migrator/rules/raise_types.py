"""The converter rule GraphRaiseTypeTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/raise_types.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.rules.raise_not_implemented import _GRAPH_SAFE
from mindport.migrator.scopes import dotted_name

# the exception types MindSpore 2.10's static graph raises (its own refusal lists them: "Raise only support some
# Python standard exception types: ..."), measured with a project class on a branch never taken
GRAPH_EXCEPTIONS = frozenset({
    "AssertionError", "AttributeError", "BaseException", "EnvironmentError", "Exception", "IOError",
    "IndentationError", "IndexError", "KeyError", "KeyboardInterrupt", "MemoryError", "NameError",
    "NotImplementedError", "OSError", "OverflowError", "RuntimeError", "RuntimeWarning", "StopIteration",
    "TypeError", "UnboundLocalError", "ValueError", "ZeroDivisionError"})


class GraphRaiseTypeTransform(GraphMethodRule):
    """In a model's methods, ``raise C(...)`` (or ``raise C``) of a class MindSpore's static graph cannot raise (a
    project's own exception class: golbin/WaveNet's ``InputSizeError``; a standard type outside the graph's list) is
    said: MP107, a warning on the line, which is left as written.

    MindSpore 2.10's graph (GRAPH_MODE, ``@jit``) raises only some of Python's standard exception types and refuses
    any other at compile time, on a branch the input never takes too ("Unsupported exception type: InputSizeError";
    measured with the raise behind a condition folded to False). No rewrite keeps torch's meaning: a standard type
    instead would escape every ``except InputSizeError``. PyNative raises the class as torch does; the conversion
    says the model will not compile in GRAPH_MODE, and where. ``ArithmeticError``/``LookupError``/``NotImplemented``
    are rewritten (RaiseNotImplementedTransform); a raised name starting with a lower-case letter (an instance held
    in a variable) is left alone.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn
                from project.errors import InputSizeError


                class Net(nn.Module):
                    def forward(self, x):
                        if x.shape[-1] < 8:
                            raise InputSizeError(x.shape[-1], 8)
                        return x
            """,
            after="""
                from mindspore import nn
                from project.errors import InputSizeError


                class Net(nn.Cell):
                    def construct(self, x):
                        if x.shape[-1] < 8:
                            raise InputSizeError(x.shape[-1], 8)  # mindport: MP107 GRAPH_MODE raises only Python's standard exception types: this raise of InputSizeError fails to compile there, on a branch never taken too (PyNative raises it as torch does)
                        return x
            """,
            note="A project's exception class: said, left as written.",
        ),
    )

    def leave_Raise(self, original_node, updated_node):
        if not self.compiled or original_node.exc is None:
            return updated_node
        exc = original_node.exc
        name = dotted_name(exc.func if isinstance(exc, cst.Call) else exc) or ""
        last = name.rsplit(".", 1)[-1]
        if not last[:1].isupper() or last in GRAPH_EXCEPTIONS or last in _GRAPH_SAFE:
            return updated_node
        self.remark(original_node, "MP107", f"GRAPH_MODE raises only Python's standard exception types: this raise "
                    f"of {last} fails to compile there, on a branch never taken too (PyNative raises it as torch does)")
        return updated_node
