"""Suite-wide switch: ``MINDPORT_CROSSCHECK=1 pytest`` converts every source twice, with the fast path and with the
LibCST pipeline alone, and fails on any difference (code, converted sites or diagnostics). The lean check that always
runs is tests/converter/test_fast_path.py; this one puts every converter test and every mapping proof behind it."""
from __future__ import annotations

import os


def pytest_configure(config) -> None:
    if os.environ.get("MINDPORT_CROSSCHECK") != "1":
        return
    import mindport.migrator as migrator

    original = migrator.convert_source

    def checked(code, filename="<string>", **options):
        options.pop("fast", None)
        fast = original(code, filename, **options)
        slow = original(code, filename, fast=False, **options)
        got = (fast.code, fast.converted_sites, [(d.code, d.line, d.column, d.message) for d in fast.diagnostics])
        want = (slow.code, slow.converted_sites, [(d.code, d.line, d.column, d.message) for d in slow.diagnostics])
        assert got == want, f"fast path differs from the LibCST pipeline on {filename}:\n{code}"
        return fast

    migrator.convert_source = checked
