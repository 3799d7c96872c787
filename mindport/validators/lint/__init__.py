"""`mindport lint`: MindSpore pitfalls and PyTorch leftovers, checked with the stdlib `ast` module.

    from mindport.validators.lint import lint_paths
    result = lint_paths(["model.py"], select=["MS1", "MS2"], ignore=["MS104"])
    for f in result.findings:
        print(f.format())          # model.py:12:16: MS201 nn.Conv2d without `pad_mode=`: ...

Codes: MS0xx input, MS1xx migration-guide pitfalls, MS2xx default-value traps, MS3xx torch leftovers,
MS4xx static-graph syntax, MS5xx optimizer/loss semantics. One page per rule in docs/rules/.
Importing this package loads neither torch, mindspore nor libcst (only `--fix` loads libcst).
"""
from __future__ import annotations

from mindport.validators.lint.engine import UsageError, lint_paths, lint_source, select_rules
from mindport.validators.lint.findings import Finding, InputProblem, LintResult
from mindport.validators.lint.rules import REGISTRY, Rule, all_rules

__all__ = [
    "Finding",
    "InputProblem",
    "LintResult",
    "REGISTRY",
    "Rule",
    "UsageError",
    "all_rules",
    "lint_paths",
    "lint_source",
    "select_rules",
]
