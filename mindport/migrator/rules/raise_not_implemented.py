"""The converter rule RaiseNotImplementedTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/raise_not_implemented.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


# what the line raises -> what a static graph accepts (MindSpore 2.10's parser: ParseRaiseCall's list), a subclass
_GRAPH_SAFE = {"NotImplemented": "NotImplementedError", "ArithmeticError": "OverflowError", "LookupError": "IndexError"}


class RaiseNotImplementedTransform(Rule):
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
    )

    def leave_Raise(self, original_node, updated_node):
        exc = updated_node.exc
        name = exc.func if isinstance(exc, cst.Call) else exc
        if isinstance(name, cst.Name) and name.value in _GRAPH_SAFE and not self.scope.lookup(name.value)[0]:
            self.ctx.converted_sites += 1
            new = cst.Name(_GRAPH_SAFE[name.value])
            return updated_node.with_changes(exc=exc.with_changes(func=new) if isinstance(exc, cst.Call) else new)
        return updated_node
