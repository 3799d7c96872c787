"""The converter rule TryReraiseTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/try_reraise.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import head_name

_REPORTERS = ("print", "logging", "logger", "log", "warnings")  # what a handler may call before it re-raises


class TryReraiseTransform(GraphMethodRule):
    """In a model's methods, a ``try`` whose every ``except`` only reports (``print``, ``logging``, ``logger``,
    ``warnings`` calls) and re-raises the exception it caught (``raise`` or ``raise e``) is its body (then its
    ``else``).

    MindSpore's static graph (GRAPH_MODE, ``@jit``) has no ``try`` statement ("Unsupported statement 'Try'"); such a
    ``try`` changes nothing when the body succeeds and raises the same exception when it fails, so the body alone
    means the same, less the report printed before the error (Wav2Lip's decoder printed the two shapes a failed
    ``torch.cat`` was given). A handler that does anything else (returns, recovers, raises another exception) and a
    ``try`` with ``finally`` are left as written (lint MS401 names them).

    A ``try`` whose body holds nothing once converted (CPC's ``try: self.baseNet.flatten_parameters() except
    RuntimeError: pass``: MindSpore's RNNs have no flat weights to compact, so the call goes) cannot raise, so no
    handler runs: it is its ``else`` (or ``pass``), whatever the handlers do.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Decoder(nn.Module):
                    def forward(self, x, skip):
                        try:
                            x = torch.cat((x, skip), dim=1)
                        except Exception as e:
                            print(x.shape, skip.shape)
                            raise e
                        try:
                            y = skip + 1
                        except RuntimeError:
                            y = None
                        return x, y
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Decoder(nn.Cell):
                    def construct(self, x, skip):
                        x = ops.cat(mp_tensor.promoted((x, skip)), axis=1)
                        try:
                            y = skip + 1
                        except RuntimeError:
                            y = None
                        return x, y
            """,
            note="The reporting handler goes; a handler that recovers is left (lint MS401 names it).",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Context(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.rnn = nn.LSTM(8, 8, batch_first=True)

                    def forward(self, x):
                        try:
                            self.rnn.flatten_parameters()
                        except RuntimeError:
                            pass
                        return self.rnn(x)[0]
            """,
            after="""
                from mindspore import nn
                import mindport.runtime.unbatched  # noqa: F401  (layers taking inputs without a batch axis)


                class Context(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.rnn = nn.LSTM(input_size=8, hidden_size=8, batch_first=True)

                    def construct(self, x):
                        pass
                        return self.rnn(x)[0]
            """,
            note="The dropped flatten_parameters() leaves nothing that can raise: the try is gone (CPC's autoregressor).",
        ),
    )

    def leave_Try(self, original_node, updated_node):
        if self.compiled and updated_node.finalbody is None and _only_pass(updated_node.body):
            # nothing left in the body can raise (``self.rnn.flatten_parameters()`` was dropped): no handler runs
            body = list(updated_node.orelse.body.body) if updated_node.orelse else [cst.SimpleStatementLine([cst.Pass()])]
            body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
            self.ctx.converted_sites += 1
            return cst.FlattenSentinel(body)
        if not self.compiled or updated_node.finalbody is not None \
                or not updated_node.handlers or not all(_reraises(h) for h in updated_node.handlers):
            return updated_node
        body = list(updated_node.body.body) + (list(updated_node.orelse.body.body) if updated_node.orelse else [])
        body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(body)


def _only_pass(block) -> bool:
    """Whether a block holds nothing but ``pass`` statements."""
    lines = list(block.body) if isinstance(block, cst.IndentedBlock) else [block]
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body)
               for line in lines)


def _reraises(handler: cst.ExceptHandler) -> bool:
    """Whether the handler only reports and then re-raises what it caught."""
    caught = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else None
    lines = list(handler.body.body) if isinstance(handler.body, cst.IndentedBlock) else []
    smalls = [s for line in lines if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    if len(smalls) != sum(len(line.body) if isinstance(line, cst.SimpleStatementLine) else 1 for line in lines) \
            or not smalls:
        return False  # a compound statement in the handler
    *reports, last = smalls
    if not (isinstance(last, cst.Raise) and last.cause is None and (
            last.exc is None or (caught is not None and isinstance(last.exc, cst.Name) and last.exc.value == caught))):
        return False
    return all(isinstance(s, cst.Pass) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.Call)
                                           and head_name(s.value.func) in _REPORTERS) for s in reports)


