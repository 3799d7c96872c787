"""Constructor arguments read from the repository's own call sites, as the repository computes them: the builder
builds every candidate once on the meta device (no memory, no initialisation) and records, while it does, each call
of a candidate class's ``__init__`` that the repository's code makes, with the values the arguments have at that
call (read from the class's ``__init__`` frame when it hands on to ``nn.Module.__init__`` through
``super().__init__()``, which is patched while recording).

A block class rarely has a call the scanner can read as literals: WideResNet builds
``NetworkBlock(n, nChannels[0], nChannels[1], block, 1, dropRate)`` from its depth, DenseNet its ``_DenseBlock`` and
``_Transition`` from a running channel count, a ResNet ``block(self.inplanes, planes, stride, downsample)`` from a
class handed in as ``block``. Recorded at the call, these are plain values: ``nb_layers=2, in_planes=16,
out_planes=32, block=BasicBlock, stride=1, dropRate=0.0``, rendered as source evaluated in the class's own module
(``build_model``): numbers, strings, None, containers of them, and classes or functions named as that module names
them (``BasicBlock``, ``nn.BatchNorm2d``) or as their project module (``__import__('models.blocks', ...).Block``).
A call with an argument that has no such source form (a module instance: a ResNet block's ``downsample``
``Sequential``) is not kept; its siblings usually are (the blocks after the first take ``downsample=None``).
"""
from __future__ import annotations

import math
import os
import sys
import types

MAX_TEXT = 400  # characters of a recorded call kept (as scan.py's literal calls)
MAX_CALLS = 3  # recorded calls kept per class, first met first


class _Unrenderable(Exception):
    pass


def render(value, namespace: dict, root: str, depth: int = 0) -> str:
    """Source text for ``value`` evaluated in ``namespace`` (the class's module); ``_Unrenderable`` when none."""
    if depth > 4:
        raise _Unrenderable
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Unrenderable
        return repr(float(value))
    kind = type(value).__module__
    if kind == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # np.int64(16): its number
        return render(value.item(), namespace, root, depth)
    if type(value) in (list, tuple):
        items = [render(v, namespace, root, depth + 1) for v in value]
        if type(value) is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if type(value) is dict:
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
            raise _Unrenderable
        return "{" + ", ".join(f"{k!r}: {render(v, namespace, root, depth + 1)}" for k, v in value.items()) + "}"
    if isinstance(value, type) or isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return _named(value, namespace, root)
    raise _Unrenderable


def _named(obj, namespace: dict, root: str) -> str:
    """A class or function by the name the module gives it (``BasicBlock``, ``nn.ReLU``, ``F.relu``), else by its own
    project module; a lambda or a nested function has none."""
    name = getattr(obj, "__name__", "")
    if not name.isidentifier() or "<" in getattr(obj, "__qualname__", "<"):
        raise _Unrenderable
    for key, bound in namespace.items():
        if bound is obj and key.isidentifier():
            return key
    for key, bound in namespace.items():
        if isinstance(bound, types.ModuleType) and key.isidentifier() and getattr(bound, name, None) is obj:
            return f"{key}.{name}"
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    file = getattr(module, "__file__", None) or ""
    if file and _under(file, root) and getattr(module, name, None) is obj:
        return f"__import__({module.__name__!r}, fromlist=['_']).{name}"
    raise _Unrenderable


def _under(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.realpath(path), root]) == root
    except ValueError:
        return False


class CallRecorder:
    """Records the calls of ``keys``' (``"path.py:Name"``) ``__init__`` made while it is active (a context
    manager): ``calls[key]`` is the list of their argument texts, each once, in the order met."""

    def __init__(self, root: str, keys):
        self.root = os.path.realpath(root)
        self.keys = set(keys)
        self.calls: dict[str, list[str]] = {}
        self._files: dict[str, str | None] = {}
        self._previous = None

    def __enter__(self):
        import torch.nn as nn

        self._previous = original = nn.Module.__init__
        recorder = self

        def init(module, *args, **kwargs):
            try:
                recorder._record(module, sys._getframe(1))
            except Exception:  # noqa: BLE001 - recording never changes what the model does
                pass
            return original(module, *args, **kwargs)

        nn.Module.__init__ = init
        return self

    def __exit__(self, *exc):
        import torch.nn as nn

        nn.Module.__init__ = self._previous
        return False

    def _rel(self, filename: str) -> str | None:
        if filename not in self._files:
            rel = None
            if filename and not filename.startswith("<") and _under(filename, self.root):
                rel = os.path.relpath(os.path.realpath(filename), self.root).replace(os.sep, "/")
            self._files[filename] = rel
        return self._files[filename]

    def _record(self, module, frame) -> None:
        """``nn.Module.__init__`` of ``module`` is running: the ``__init__`` frames of the same object above it (the
        class's own, then its bases' through ``super().__init__(...)``) hold the arguments it was built with (read
        when the module's first statement hands on to ``nn.Module``, as nearly every module's does)."""
        for _ in range(12):
            if frame is None:
                return
            code = frame.f_code
            if code.co_name == "__init__" and code.co_argcount:
                if frame.f_locals.get(code.co_varnames[0]) is not module:
                    return  # the container's own __init__: no frame of this module above
                self._call(frame, code)
            frame = frame.f_back

    def _call(self, frame, code) -> None:
        qualname = getattr(code, "co_qualname", "")
        owner = qualname.rsplit(".", 1)[0] if qualname.endswith(".__init__") else ""
        if not owner or "<" in owner or "." in owner:  # a nested or local class: no module-level name
            return
        rel = self._rel(code.co_filename)
        if rel is None or f"{rel}:{owner}" not in self.keys:
            return
        try:
            text = self._arguments(frame, code)
        except _Unrenderable:
            return
        key = f"{rel}:{owner}"
        seen = self.calls.setdefault(key, [])
        if text is not None and text not in seen and len(seen) < MAX_CALLS:
            seen.append(text)

    def _arguments(self, frame, code) -> str | None:
        """The call's arguments as source: the named parameters by keyword (those still at their own default left
        out), then ``*args`` (the parameters before them by position then) and ``**kwargs`` items."""
        local = frame.f_locals
        names = code.co_varnames
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        has_var, has_kw = bool(code.co_flags & 0x04), bool(code.co_flags & 0x08)
        func = self._function(local.get(names[0]) if n_pos else None, code)
        defaults = {}
        if func is not None:
            positional = names[:n_pos]
            for name, value in zip(positional[n_pos - len(func.__defaults__ or ()):], func.__defaults__ or ()):
                defaults[name] = value
            defaults.update(func.__kwdefaults__ or {})
        namespace = frame.f_globals
        extra = list(local.get(names[n_pos + n_kw], ())) if has_var else []
        parts = []
        for i, name in enumerate(names[1:n_pos], start=1):
            value = local.get(name)
            if not extra and name in defaults and defaults[name] is value:
                continue
            text = render(value, namespace, self.root)
            parts.append(text if extra else f"{name}={text}")
        parts += [render(v, namespace, self.root) for v in extra]
        for name in names[n_pos:n_pos + n_kw]:
            value = local.get(name)
            if name in defaults and defaults[name] is value:
                continue
            parts.append(f"{name}={render(value, namespace, self.root)}")
        if has_kw:
            kwargs = local.get(names[n_pos + n_kw + int(has_var)]) or {}
            parts += [f"{k}={render(v, namespace, self.root)}" for k, v in kwargs.items() if str(k).isidentifier()]
        text = ", ".join(parts)
        return text if len(text) <= MAX_TEXT else None

    @staticmethod
    def _function(instance, code):
        for cls in type(instance).__mro__ if instance is not None else ():
            init = cls.__dict__.get("__init__")
            if getattr(init, "__code__", None) is code:
                return init
        return None
