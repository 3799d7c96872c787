"""mindport: PyTorch -> MindSpore migration toolkit.

The stable Python API is re-exported here lazily, so importing :mod:`mindport` (as the lint path does)
costs nothing: torch, mindspore and libcst load only when a function that needs them is first used.
"""
from __future__ import annotations

__version__ = "0.1.0"

from mindport.errors import Diagnostic, MigrationError  # light: stdlib only

_LAZY = {
    "convert_source": "mindport.migrator",
    "convert_path": "mindport.migrator",
    "ConversionResult": "mindport.migrator",
    "ConversionReport": "mindport.migrator",
    "transfer_weights": "mindport.migrator.weights",
    "TransferReport": "mindport.migrator.weights",
    "compare": "mindport.validators.parity.compare",
    "validate": "mindport.validators.parity.compare",
    "ParityReport": "mindport.validators.parity.compare",
    "migrate": "mindport.migrate",
}

__all__ = ["__version__", "Diagnostic", "MigrationError", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mindport' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
