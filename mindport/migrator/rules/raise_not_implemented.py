"""The converter rule RaiseNotImplementedTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/raise_not_implemented.md shows both."""
from __future__ import annotations

import builtins

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.scopes import dotted_name
from mindport.names import is_torch


# what the line raises -> what a static graph accepts (MindSpore 2.10's parser: ParseRaiseCall's list), a subclass
_GRAPH_SAFE = {"NotImplemented": "NotImplementedError", "ArithmeticError": "OverflowError", "LookupError": "IndexError"}


class RaiseNotImplementedTransform(GraphMethodRule):
    """``raise NotImplemented`` -> ``raise NotImplementedError``; ``raise ArithmeticError``/``LookupError`` -> a subclass.

    ``NotImplemented`` is the value binary operators return, not an exception: raising it is itself an error in
    Python 3 (``TypeError: exceptions must derive from BaseException``), the intent is plainly
    ``NotImplementedError``. Torch never runs such a line when it is the ``forward`` of a helper module nobody calls;
    MindSpore's static graph (GRAPH_MODE) parses a Cell whose method the model calls, construct included, and stops
    at it (``Unsupported exception type: NotImplemented``).

    For the same reason a raise of a builtin exception the graph refuses takes a subclass it accepts, which every
    ``except`` of the original type still catches: ``raise ArithmeticError`` -> ``raise OverflowError`` (batch 8
    Wave-U-Net's ``centre_crop``, called from ``forward``: "Unsupported exception type: ArithmeticError"),
    ``raise LookupError`` -> ``raise IndexError``. Only the type's name in a traceback differs.

    In the code a graph compiles (a model's methods but ``__init__``), a raise of a class that is not Python's (the
    project's own exception, or a package's) is ``mp_framework.raise_own(E, *args)``: the graph refuses the class
    wherever the raise stands, reached or not (golbin/WaveNet's ``check_input_size``, called from ``forward``:
    "Unsupported exception type: InputSizeError"). PyNative raises ``E(*args)`` as torch does; a graph raises a
    RuntimeError naming ``E`` where it takes the branch. A raise with ``from`` stays as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Updater(nn.Module):
                    def forward(self, x):
                        raise NotImplemented
            """,
            after="""
                from mindspore import nn


                class Updater(nn.Cell):
                    def construct(self, x):
                        raise NotImplementedError
            """,
            note="The exception the line means, which a static graph accepts.",
        ),
        Example(
            before="""
                def centre_crop(x, target):
                    crop = (x.shape[-1] - target.shape[-1]) // 2
                    if crop < 0:
                        raise ArithmeticError
                    return x[:, :, crop:-crop]
            """,
            after="""
                def centre_crop(x, target):
                    crop = (x.shape[-1] - target.shape[-1]) // 2
                    if crop < 0:
                        raise OverflowError
                    return x[:, :, crop:-crop]
            """,
            note="A subclass the graph accepts: `except ArithmeticError` still catches it.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class InputSizeError(Exception):
                    pass


                class Stack(nn.Module):
                    def check(self, x, output_size):
                        if output_size < 1:
                            raise InputSizeError(int(x.size(2)), output_size)

                    def forward(self, x):
                        self.check(x, x.size(2) - 4)
                        return x
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import framework as mp_framework


                class InputSizeError(Exception):
                    pass


                class Stack(nn.Cell):
                    def check(self, x, output_size):
                        if output_size < 1:
                            mp_framework.raise_own(InputSizeError, int(x.shape[2]), output_size)

                    def construct(self, x):
                        self.check(x, x.shape[2] - 4)
                        return x
            """,
            note="The project's own exception in code a graph compiles: raised as is in PyNative; in a graph, a "
                 "RuntimeError naming it (the graph refuses the class wherever the raise stands).",
        ),
    )

    def __init__(self, ctx, module_classes: set[str] = frozenset()) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._file_classes: set[str] = set()  # the classes the file defines at its top level

    def visit_Module(self, node: cst.Module) -> None:
        self._file_classes = {s.name.value for s in node.body if isinstance(s, cst.ClassDef)}

    def leave_Raise(self, original_node, updated_node):
        own = self._own_exception(updated_node)
        if own is not None:
            self.ctx.converted_sites += 1
            self.runtime_modules.add("mindport.runtime.framework")
            exc = updated_node.exc
            args = list(exc.args) if isinstance(exc, cst.Call) else []
            return cst.Expr(cst.Call(func=parse_framework("raise_own"), args=[cst.Arg(own), *args]))
        exc = updated_node.exc
        name = exc.func if isinstance(exc, cst.Call) else exc
        if isinstance(name, cst.Name) and name.value in _GRAPH_SAFE and not self.scope.lookup(name.value)[0]:
            self.ctx.converted_sites += 1
            new = cst.Name(_GRAPH_SAFE[name.value])
            return updated_node.with_changes(exc=exc.with_changes(func=new) if isinstance(exc, cst.Call) else new)
        return updated_node

    def _own_exception(self, node: cst.Raise):
        """The class of ``raise E(...)`` / ``raise E`` in compiled code when a graph refuses it: a name (or dotted
        path) that is neither Python's nor torch's."""
        if not self.compiled or node.exc is None or node.cause is not None:
            return None
        exc = node.exc
        target = exc.func if isinstance(exc, cst.Call) else exc
        name = dotted_name(target)
        if not name or not isinstance(target, (cst.Name, cst.Attribute)) or is_torch(name):
            return None
        if name not in self._file_classes and (self.scope.resolve(target) is None or hasattr(builtins, name)):
            return None  # a class of the file's or an imported one; not a caught exception (raise e), not Python's
        if isinstance(exc, cst.Call) and any(a.star for a in exc.args):
            return None
        return target


def parse_framework(name: str) -> cst.BaseExpression:
    from mindport.migrator.walk import parse_expression

    return parse_expression(f"{runtime_alias('mindport.runtime.framework')}.{name}")
