"""Load Python source a test wrote (a torch model, its conversion) as a module of its own.

The module is registered in ``sys.modules`` under its name before it runs: GRAPH_MODE's parser imports a Cell's module
by name, and MindSpore's autodiff reads a function's source from its file, so the code is always a real file."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_source(code: str, directory: Path, name: str) -> ModuleType:
    """``code`` written to ``directory/name.py`` and loaded as module ``name``."""
    path = Path(directory) / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    return load_file(path, name)
