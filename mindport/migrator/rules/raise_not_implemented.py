"""The converter rule RaiseNotImplementedTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/raise_not_implemented.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class RaiseNotImplementedTransform(Rule):
    """``raise NotImplemented`` -> ``raise NotImplementedError``.

    ``NotImplemented`` is the value binary operators return, not an exception: raising it is itself an error in
    Python 3 (``TypeError: exceptions must derive from BaseException``), the intent is plainly
    ``NotImplementedError``. Torch never runs such a line when it is the ``forward`` of a helper module nobody calls;
    MindSpore's static graph (GRAPH_MODE) parses a Cell whose method the model calls, construct included, and stops
    at it (``Unsupported exception type: NotImplemented``).
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
    )

    def leave_Raise(self, original_node, updated_node):
        exc = updated_node.exc
        name = exc.func if isinstance(exc, cst.Call) else exc
        if isinstance(name, cst.Name) and name.value == "NotImplemented" and not self.scope.lookup("NotImplemented")[0]:
            self.ctx.converted_sites += 1
            new = cst.Name("NotImplementedError")
            return updated_node.with_changes(exc=exc.with_changes(func=new) if isinstance(exc, cst.Call) else new)
        return updated_node
