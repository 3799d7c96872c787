"""torch modules that torch 2.0 removed, for the torch side of a proof or a discovery build (the reference run).

Code written for torch 1.x imports ``torch._six`` (Python 2/3 compatibility names: ``from torch._six import inf``,
``container_abcs``, ``string_classes`` ...); on torch >= 2.0 that import fails, so the original model cannot be run
at all and nothing can be compared ("No module named 'torch._six'": CvT and the other torch 1.x repositories of the
discovery sweep). The converter maps every name (``mindport/mappings/data/framework.toml``, targets in
``mindport.runtime.framework``); the reference side gets the module back here, each name with the value torch 1.x
gave it on Python 3 (``SIX``; torch/_six.py of torch 1.4-1.13), so the reference computes what it computed there.

``install()`` adds a finder asked after the real ones (an installed torch that still has ``torch._six`` keeps its
own); it imports nothing heavy.
"""
from __future__ import annotations

import builtins
import collections.abc
import importlib.abc
import importlib.machinery
import math
import sys
import types


def _raise_from(value, from_value):
    raise value from from_value


def _with_metaclass(meta, *bases):
    class _Bridge(meta):
        def __new__(mcs, name, _bridge_bases, namespace):
            return meta(name, bases, namespace)

    return type.__new__(_Bridge, "temporary_class", (), {})


# torch._six's public names on Python 3, as torch 1.x defined them
SIX = {
    "inf": math.inf,
    "nan": math.nan,
    "string_classes": (str, bytes),
    "int_classes": int,
    "container_abcs": collections.abc,
    "FileNotFoundError": builtins.FileNotFoundError,
    "imap": map,
    "raise_from": _raise_from,
    "with_metaclass": _with_metaclass,
    "PY2": False,
    "PY3": True,
    "PY37": sys.version_info >= (3, 7),
}
MODULES = {"torch._six": SIX}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MODULES:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name, f"{spec.name} as torch 1.x had it (mindport.discovery.legacy_torch)")
        module.__dict__.update(MODULES[spec.name])
        return module

    def exec_module(self, module):
        parent, _, child = module.__name__.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)


def install() -> None:
    """Make ``import torch._six`` work on a torch without it (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
