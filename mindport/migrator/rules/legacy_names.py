"""The converter rule LegacyNameTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/legacy_names.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.legacy_names import legacy
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import dotted_name


class LegacyNameTransform(Rule):
    """Names Python, NumPy and SciPy removed -> the current names that meant the same object.

    Model code written before a removal reads ``collections.Sequence`` (Python 3.10 removed the ABC aliases of
    ``collections``), ``np.float`` / ``np.int`` / ``np.bool`` / ``np.object`` / ``np.long`` ... (NumPy 1.24 removed
    the aliases of Python's own classes: ``np.float`` *was* ``float``, not ``np.float64``), ``scipy.signal.hann`` and
    the other window functions (SciPy 1.13: they live in ``scipy.signal.windows``). On current libraries such a file
    stops at import or in a constructor, so the port could not run at all. Each old name becomes the current name of
    the same object, in attribute reads (``np.float`` -> ``float``, ``collections.Mapping`` ->
    ``collections.abc.Mapping`` with ``import collections.abc`` added) and in ``from`` imports (``from collections
    import Sequence`` -> ``from collections.abc import Sequence``; ``from numpy import float`` is dropped, the builtin
    is the same). The names are table data (``mindport/legacy_names.toml``, one entry per family with its source);
    the reference side of a discovery build or proof gets the old names back with the same objects
    (``mindport.discovery.legacy_names``). An assignment to an old name (``np.float = float``, a repository's own
    shim) is left alone; a builtin whose name is bound to something else where it is read is ``builtins.float``.
    """

    EXAMPLES = (
        Example(
            before="""
                import collections
                import numpy as np
                import torch


                def flatten(values):
                    if isinstance(values, collections.Sequence):
                        return torch.tensor(np.array(values, dtype=np.float))
                    return values
            """,
            after="""
                import collections
                import numpy as np
                import mindspore as ms
                import collections.abc


                def flatten(values):
                    if isinstance(values, collections.abc.Sequence):
                        return ms.Tensor(np.array(values, dtype=float))
                    return values
            """,
            note="NumPy's alias of a Python class becomes that class; a collections ABC is read from collections.abc.",
        ),
        Example(
            before="""
                from collections import OrderedDict, Iterable
                from scipy.signal import blackmanharris, get_window
            """,
            after="""
                from collections import OrderedDict
                from collections.abc import Iterable
                from scipy.signal import get_window
                from scipy.signal.windows import blackmanharris
            """,
            note="A from import takes each removed name from the module that has it now.",
        ),
        Example(
            before="""
                import numpy as np
                np.float = float
            """,
            note="A repository's own shim for the old name stays as written.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._targets: set[int] = set()
        self._imports: list[str] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def leave_Attribute(self, original_node, updated_node):
        if id(original_node) in self._targets:
            return updated_node
        dotted = dotted_name(updated_node)
        qual = self.scope.resolve_dotted(dotted) if dotted else None
        new = legacy().get(qual) if qual else None
        if new is None:
            return updated_node
        new_mod, _, new_name = new.rpartition(".")
        if new_mod == "builtins":
            self.ctx.converted_sites += 1
            if not self.scope.lookup(new_name)[0]:
                return cst.Name(new_name)
            if "builtins" not in self._imports:  # the builtin's name is bound to something else here
                self._imports.append("builtins")
            return cst.parse_expression(new)
        head = dotted.split(".", 1)[0]
        head_qual = self.scope.lookup(head)[1] or head
        text = head + new[len(head_qual):] if new.startswith(head_qual + ".") else new
        if new_mod != qual.rpartition(".")[0] and new_mod not in self._imports:
            self._imports.append(new_mod)  # collections.abc is no attribute of collections until imported
        self.ctx.converted_sites += 1
        return cst.parse_expression(text)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.ImportFrom):
            return updated_node
        node = updated_node.body[0]
        module = dotted_name(node.module) if node.module is not None and not node.relative else None
        if module is None or isinstance(node.names, cst.ImportStar):
            return updated_node
        kept, lines = [], []
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            new = legacy().get(f"{module}.{name}") if name else None
            if new is None:
                kept.append(alias)
                continue
            self.ctx.converted_sites += 1
            new_mod, _, new_name = new.rpartition(".")
            local = alias.asname.name.value if alias.asname is not None else name
            if new_mod == "builtins":
                if local != new_name:
                    lines.append(cst.parse_statement(f"{local} = {new_name}"))
                continue  # `from numpy import float`: the builtin of that name is the same object
            bound = new_name if local == new_name else f"{new_name} as {local}"
            lines.append(cst.parse_statement(f"from {new_mod} import {bound}"))
        if not lines and len(kept) == len(node.names):
            return updated_node
        out = []
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            out.append(updated_node.with_changes(body=[node.with_changes(names=kept)]))
        if out:
            lines = [line.with_changes(leading_lines=[]) for line in lines]
        elif lines:
            lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        out.extend(lines)
        if not out:
            return cst.RemovalSentinel.REMOVE
        return cst.FlattenSentinel(out) if len(out) > 1 else out[0]

    def leave_Module(self, original_node, updated_node):
        if not self._imports:
            return updated_node
        present = {dotted_name(a.name) for stmt in updated_node.body if isinstance(stmt, cst.SimpleStatementLine)
                   for small in stmt.body if isinstance(small, cst.Import) for a in small.names if a.asname is None}
        missing = [m for m in self._imports if m not in present]
        if not missing:
            return updated_node
        body = list(updated_node.body)
        at = 0
        for i, stmt in enumerate(body):  # after the module's first block of imports (its docstring, __future__)
            if not isinstance(stmt, cst.SimpleStatementLine):
                break
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                at = i + 1
            elif not (i == 0 and isinstance(stmt.body[0], cst.Expr)):
                break
        new = [cst.parse_statement(f"import {m}") for m in missing]
        return updated_node.with_changes(body=body[:at] + new + body[at:])
