"""The two installs: ``pip install mindport`` (light: convert, lint, the mapping tables) and
``pip install 'mindport[full]'`` (adds torch, MindSpore, numpy, onnx, safetensors, matplotlib for weights,
validate, scaffold, export, migrate's parity step and ``mappings prove``). A command that needs the full install
checks first and says which extra to install, in one message (exit code 2)."""
from __future__ import annotations

import importlib.util

from mindport.errors import InputError

FULL_EXTRA = "mindport[full]"
# what each part of the full install is for, to name what is missing
FULL_MODULES = ("numpy", "torch", "mindspore", "matplotlib", "onnx", "safetensors")


class MissingExtraError(InputError):
    """A command needs modules of the full install that are not installed."""


def missing(modules) -> list[str]:
    found = []
    for name in modules:
        try:
            if importlib.util.find_spec(name) is None:
                found.append(name)
        except (ImportError, ValueError):
            found.append(name)
    return found


def require_full(what: str, modules=("numpy", "torch", "mindspore")) -> None:
    """Raise MissingExtraError when ``modules`` are not all importable. ``what``: the command, as the message
    names it (``"`mindport weights`"``)."""
    lacking = missing(modules)
    if lacking:
        raise MissingExtraError(
            f"{what} needs {', '.join(lacking)}, which this install lacks (`pip install mindport` is the light "
            f"install: convert and lint). Install the full one: pip install '{FULL_EXTRA}'")
