"""Fixes from the discovery sweep's fourth slice (manifest rows 83-116), each with the repository that showed it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mindport


def _stubbed_run(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    from mindport.discovery.prove import stub_env

    env = dict(os.environ, **stub_env(tmp_path / "stubbed.txt", [tmp_path]))
    env["PYTHONPATH"] += os.pathsep + str(Path(mindport.__file__).resolve().parents[1])
    return subprocess.run([sys.executable, str(tmp_path / script)], capture_output=True, text=True, env=env)


def test_an_import_the_repository_guards_with_except_importerror_is_not_stubbed(tmp_path):
    """deepxde chooses its backend by trying ``import tensorflow`` in a ``try/except ImportError``: with a stub the
    probe succeeded, deepxde chose TensorFlow and its PyTorch models failed (``AttributeError: __version__`` of the
    stub). A guarded import fails as the repository expects; an unguarded one is still stubbed."""
    (tmp_path / "backend.py").write_text(textwrap.dedent("""
        def available():
            try:
                import missing_framework_abc
                return "missing_framework_abc"
            except ImportError:
                pass
            try:
                from missing_framework_def import thing
            except (ValueError, ModuleNotFoundError):
                return "torch"
            return "missing_framework_def"

        try:
            import missing_plain_xyz
        except RuntimeError:  # not an import error: stubbed
            pass
        import missing_logger_uvw

        print(available())
    """))
    run = _stubbed_run(tmp_path, "backend.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "torch"
    assert sorted((tmp_path / "stubbed.txt").read_text().split()) == ["missing_logger_uvw", "missing_plain_xyz"]
