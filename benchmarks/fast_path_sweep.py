"""The fast path against the LibCST pipeline on any Python files: both must give the same output.

Converts every ``.py`` file under the given paths twice, ``convert_source(code)`` and ``convert_source(code,
fast=False)``, compares code, converted sites and diagnostics, and prints the differences (a unified diff for the
first few) and how much of the input the fast path took: files it left to LibCST whole, and the characters of the
top-level statements it handed to LibCST, by reason.

Usage: ``.venv/bin/python benchmarks/fast_path_sweep.py PATH [PATH ...]``, e.g. a real repository, or torch's own
sources (``.venv/lib/python3.11/site-packages/torch/nn``). Exit status 1 when any file differs.
"""
from __future__ import annotations

import collections
import difflib
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    import mindport.migrator as migrator
    from mindport import convert_source
    from mindport.migrator import fast

    files = [f for a in argv for f in (sorted(Path(a).rglob("*.py")) if Path(a).is_dir() else [Path(a)])]
    taken: collections.Counter = collections.Counter()
    original_statement = fast.StatementRewriter.statement
    original_convert = migrator.convert_fast

    def statement(self, stmt, start, end):
        try:
            text = original_statement(self, stmt, start, end)
        except fast.Decline as exc:
            taken["declined: " + (exc.args[0] if exc.args else "?")] += end - start
            raise
        taken["fast"] += end - start
        return text

    def convert(code, *args, **kwargs):
        result = original_convert(code, *args, **kwargs)
        if result is None:
            taken["whole files to LibCST"] += len(code)
        return result

    differ = 0
    for path in files:
        code = path.read_text(encoding="utf-8", errors="replace")
        fast.StatementRewriter.statement, migrator.convert_fast = statement, convert
        try:
            a = convert_source(code, str(path))
        finally:
            fast.StatementRewriter.statement, migrator.convert_fast = original_statement, original_convert
        b = convert_source(code, str(path), fast=False)
        same = (a.code, a.converted_sites, [(d.code, d.line, d.column, d.message) for d in a.diagnostics]) == \
            (b.code, b.converted_sites, [(d.code, d.line, d.column, d.message) for d in b.diagnostics])
        if not same:
            differ += 1
            print(f"DIFFERS {path} (sites {a.converted_sites} fast, {b.converted_sites} LibCST)")
            if differ <= 5:
                sys.stdout.writelines(list(difflib.unified_diff(b.code.splitlines(keepends=True),
                                                                a.code.splitlines(keepends=True),
                                                                "libcst", "fast", n=1))[:40])
    total = sum(taken.values()) or 1
    print(f"{len(files)} files, {differ} differ")
    for key, chars in taken.most_common():
        print(f"  {key}: {chars:,} characters ({chars / total:.1%})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
