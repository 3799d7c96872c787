"""Names Python, NumPy and SciPy removed, put back for the reference (torch) side of a discovery build or proof.

Code written before the removals reads ``collections.Sequence`` (gone in Python 3.10), ``np.float`` (NumPy 1.24),
``scipy.signal.blackmanharris`` (SciPy 1.13): on this machine it stops at import or in a constructor, so the original
model cannot be built, nor anything compared. The converter writes the current names in the port
(``mindport/legacy_names.toml``, rule ``LegacyNameTransform``); here the reference gets each old name back bound to
the very object the current name holds (what it was on the versions the code was written for: ``np.float`` *is*
``float``), so it computes what it computed there. Only the torch side: the MindSpore side runs the port, which must
not need them.

``install()`` sets the names on the modules already imported and, for the others (numpy, scipy.signal), once they
are imported (a finder asked first that lets the real finders find the module, then adds the names after it ran).
A name the installed library still has is left alone. It imports nothing heavy.
"""
from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.machinery
import sys

from mindport.legacy_names import by_module, moved_modules


def _restore(module) -> None:
    for old_name, new_mod, new_name in by_module().get(module.__name__, ()):
        if old_name in vars(module):
            continue
        try:
            target = builtins if new_mod == "builtins" else importlib.import_module(new_mod)
            setattr(module, old_name, getattr(target, new_name))
        except (ImportError, AttributeError):
            pass


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds a module with the old names as the other finders do, and restores the names once it has run."""

    def find_spec(self, name, path=None, target=None):
        if name in moved_modules():
            return self._moved(name, path, target)
        if name not in by_module():
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _restore(module)

        loader.exec_module = exec_module
        return spec


    def _moved(self, name, path, target):
        """The renamed module's own object under its old name (``pytorch_lightning.core.lightning`` is
        ``pytorch_lightning.core.module``, ``legacy_names.toml``'s moved_module entries), when no other finder finds
        a module of the old name and the new one imports; else None (the other finders decide)."""
        for finder in sys.meta_path:
            if type(finder).__module__.startswith("mindport.") or not hasattr(finder, "find_spec"):
                continue  # (a stand-in of the stubs is no module of the library)
            if finder.find_spec(name, path, target) is not None:
                return None  # the installed library still has it
        try:
            new = importlib.import_module(moved_modules()[name])
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(name, _Alias(new), is_package=hasattr(new, "__path__"))


class _Alias(importlib.abc.Loader):
    """Gives an already imported module for another name."""

    def __init__(self, module):
        self.module, self.spec = module, getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec  # the import set the old name's spec on it: its own again


def install() -> None:
    """Put the old names back now and on later imports (idempotent)."""
    for name in by_module():
        if name in sys.modules:
            _restore(sys.modules[name])
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


def uninstall() -> None:
    """Take the restored names and the finder away again (for a test run in a process that goes on)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AfterImport)]
    for name, entries in by_module().items():
        module = sys.modules.get(name)
        for old_name, _, _ in entries if module is not None else ():
            vars(module).pop(old_name, None)
