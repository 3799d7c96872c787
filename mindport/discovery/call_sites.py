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
A module handed in (a ResNet block's ``downsample``, an encoder layer's ``attention``) is written as it was built,
when it was built while recording (``nn.Sequential(nn.Conv2d(in_channels=16, ...), nn.BatchNorm2d(...))``); a call
with an argument that has no source form (a tensor, a lambda) is not kept.
"""
from __future__ import annotations

import math
import os
import sys
import types
from dataclasses import dataclass

MAX_TEXT = 1200  # characters of a recorded call kept (nested modules: an encoder of its layers)
MAX_CALLS = 3  # recorded calls kept per class, first met first
MAX_DEPTH = 8  # containers and constructed arguments inside one another


class _Unrenderable(Exception):
    pass


@dataclass
class _Call:
    """The arguments one ``__init__`` was called with: its named parameters, ``*args``, ``**kwargs``, and which of
    the named ones still hold their own default (left out of the text)."""
    names: list
    values: dict
    extra: list
    kwargs: dict
    defaults: dict


def _under(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.realpath(path), root]) == root
    except ValueError:
        return False


class CallRecorder:
    """Records the calls of ``keys``' (``"path.py:Name"``) ``__init__`` made while it is active (a context
    manager): ``calls[key]`` is the list of their argument texts, each once, in the order met. Every module built
    meanwhile (the repository's and torch's) keeps the arguments it was built with, so that a module handed to a
    recorded call is written as that construction (``EncoderLayer(attention=AttentionLayer(...), d_model=16)``,
    ``norm_layer=nn.LayerNorm(normalized_shape=16)``)."""

    def __init__(self, root: str, keys):
        self.root = os.path.realpath(root)
        self.keys = set(keys)
        self.calls: dict[str, list[str]] = {}
        self._files: dict[str, str | None] = {}
        self._built: dict[int, tuple] = {}  # id(module) -> (module, its _Call): the module kept alive, ids unique
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
        outermost = None
        for _ in range(12):
            if frame is None:
                break
            code = frame.f_code
            if code.co_name == "__init__" and code.co_argcount:
                if frame.f_locals.get(code.co_varnames[0]) is not module:
                    break  # the container's own __init__: no frame of this module above
                call = self._snapshot(frame, code, module)
                outermost = call
                self._keep(frame, code, call)
            frame = frame.f_back
        if outermost is not None:
            self._built[id(module)] = (module, outermost)

    def _keep(self, frame, code, call: _Call) -> None:
        qualname = getattr(code, "co_qualname", "")
        owner = qualname.rsplit(".", 1)[0] if qualname.endswith(".__init__") else ""
        if not owner or "<" in owner or "." in owner:  # a nested or local class: no module-level name
            return
        rel = self._rel(code.co_filename)
        if rel is None or f"{rel}:{owner}" not in self.keys:
            return
        try:
            text = self.arguments(call, frame.f_globals)
        except (_Unrenderable, RecursionError):
            return
        key = f"{rel}:{owner}"
        seen = self.calls.setdefault(key, [])
        if text is not None and len(text) <= MAX_TEXT and text not in seen and len(seen) < MAX_CALLS:
            seen.append(text)

    def _snapshot(self, frame, code, module) -> _Call:
        local = frame.f_locals
        names = code.co_varnames
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        has_var, has_kw = bool(code.co_flags & 0x04), bool(code.co_flags & 0x08)
        func = self._function(module, code)
        defaults = {}
        if func is not None:
            positional = names[:n_pos]
            for name, value in zip(positional[n_pos - len(func.__defaults__ or ()):], func.__defaults__ or ()):
                defaults[name] = value
            defaults.update(func.__kwdefaults__ or {})
        named = list(names[1:n_pos]) + list(names[n_pos:n_pos + n_kw])
        values = {n: local.get(n) for n in named}
        extra = list(local.get(names[n_pos + n_kw], ())) if has_var else []
        kwargs = dict(local.get(names[n_pos + n_kw + int(has_var)]) or {}) if has_kw else {}
        return _Call(named if not extra else list(names[1:n_pos]) + ["*"] + list(names[n_pos:n_pos + n_kw]),
                     values, extra, kwargs, defaults)

    def arguments(self, call: _Call, namespace: dict, depth: int = 0) -> str:
        """The call's arguments as source in ``namespace``: the named parameters by keyword (those still at their
        own default left out), then ``*args`` (the parameters before them by position then) and ``**kwargs``
        items; ``_Unrenderable`` when a value has no source form."""
        parts = []
        positional = "*" in call.names
        keyword_only = False
        for name in call.names:
            if name == "*":
                parts += [self.render(v, namespace, depth + 1) for v in call.extra]
                keyword_only = True
                continue
            value = call.values.get(name)
            if (keyword_only or not positional) and name in call.defaults and call.defaults[name] is value:
                continue
            text = self.render(value, namespace, depth + 1)
            parts.append(text if positional and not keyword_only else f"{name}={text}")
        parts += [f"{k}={self.render(v, namespace, depth + 1)}" for k, v in call.kwargs.items()
                  if str(k).isidentifier()]
        return ", ".join(parts)

    def render(self, value, namespace: dict, depth: int = 0) -> str:
        """Source text for ``value`` evaluated in ``namespace`` (the class's module); ``_Unrenderable`` when none."""
        if depth > MAX_DEPTH:
            raise _Unrenderable
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if isinstance(value, int):
            return repr(int(value))
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _Unrenderable
            return repr(float(value))
        if type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0 and hasattr(value, "item"):
            return self.render(value.item(), namespace, depth)  # np.int64(16): its number
        if type(value) in (list, tuple, dict):  # a table of the module (a MobileNetV3 setting): by its name
            named = next((k for k, v in namespace.items() if v is value and k.isidentifier()), None)
            if named is not None:
                return named
        if type(value) in (list, tuple):
            items = [self.render(v, namespace, depth + 1) for v in value]
            if type(value) is tuple:
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return "[" + ", ".join(items) + "]"
        if type(value) is dict:
            if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
                raise _Unrenderable
            return "{" + ", ".join(f"{k!r}: {self.render(v, namespace, depth + 1)}" for k, v in value.items()) + "}"
        if isinstance(value, type) or isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            return self._named(value, namespace)
        built = self._built.get(id(value))
        if built is not None and built[0] is value:  # a module built while recording: as it was built
            return f"{self._named(type(value), namespace)}({self.arguments(built[1], namespace, depth + 1)})"
        raise _Unrenderable

    def _named(self, obj, namespace: dict) -> str:
        """A class or function by the name the module gives it (``BasicBlock``, ``nn.ReLU``, ``torch.nn.ReLU``,
        ``F.relu``), else by its own project module; a lambda or a nested function has none."""
        name = getattr(obj, "__name__", "")
        if not name.isidentifier() or "<" in getattr(obj, "__qualname__", "<"):
            raise _Unrenderable
        for key, bound in namespace.items():
            if bound is obj and key.isidentifier():
                return key
        modules = [(k, v) for k, v in namespace.items() if isinstance(v, types.ModuleType) and k.isidentifier()]
        for key, bound in modules:
            if getattr(bound, name, None) is obj:
                return f"{key}.{name}"
        for key, bound in modules:
            if getattr(getattr(bound, "nn", None), name, None) is obj:  # only import torch: torch.nn.ReLU
                return f"{key}.nn.{name}"
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        file = getattr(module, "__file__", None) or ""
        if file and _under(file, self.root) and getattr(module, name, None) is obj:
            return f"__import__({module.__name__!r}, fromlist=['_']).{name}"
        raise _Unrenderable

    @staticmethod
    def _function(instance, code):
        for cls in type(instance).__mro__ if instance is not None else ():
            init = cls.__dict__.get("__init__")
            if getattr(init, "__code__", None) is code:
                return init
        return None
