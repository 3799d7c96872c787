"""MS0xx: input problems the engine reports itself."""
from __future__ import annotations

from mindport.validators.lint.rules.base import Rule


class SyntaxErrorRule(Rule):
    """Reports a file that Python cannot parse, at the place of the error, instead of crashing the run.

    ## Why is this bad?
    No other rule can check a file that does not parse, and MindSpore's graph compiler re-parses
    `construct` source, so the error surfaces late and far from its cause.

    ## Fix
    Correct the syntax at the reported line and column. This finding cannot be silenced by
    `--ignore` or `# noqa`: a file that does not parse is never clean.
    """

    code = "MS001"
    name = "syntax-error"
    message = "syntax error"
    severity = "error"
    VALID = (
        "def construct(self, x):\n    return x\n",
        "import mindspore as ms\nx = ms.Tensor([1])\n",
    )
    INVALID = (
        "def construct(self, x:\n    return x\n",
        "class Net(nn.Cell)\n    pass\n",
    )

    def check(self, ctx):  # the engine emits MS001 when parsing fails
        return ()
