"""A block's forward inputs read from its container's own call: while a container's forward runs at its build, the
builder records what it hands each sub-module that is another candidate (its positional and keyword arguments:
tensors of the shapes, dtypes and values the container computes, masks, time steps, a state list, ``None``), and
the block is tried with those inputs before any guessed one, built with the arguments the container built it with.

A block's forward rarely takes what its first layer suggests: Anomaly-Transformer's
``AnomalyAttention.forward(queries, keys, values, sigma, attn_mask)`` gets ``sigma`` of shape B x L x H from a
projection (the name rule drew it as a diffusion time step, int64 in [0, 10)) and ``attn_mask=None``; a U-Net's
``UpConvBlock.forward(input, skip)`` gets a skip at twice the input's resolution; a ConvLSTM cell
``forward(input_tensor, cur_state)`` gets ``[h, c]``; a temporal attention gets its padding mask as a bool tensor.
Recorded at the call, each input is kept exactly: a tensor as a ``.npy`` file of its values (``loading.py`` reads
it on both sides), a Python value as ``value:LITERAL``, a list or tuple of tensors as ``[a.npy, b.npy]``. Keyword
arguments are put in the forward's own positional order, a parameter skipped between them gets its default.
A call with an argument that has no input form (a module, a function, a dict of tensors) is not kept.
"""
from __future__ import annotations

import inspect
import math
import os
import re

MAX_CALLS = 2  # recorded calls kept per class (distinct constructions first)
MAX_ELEMENTS = 1 << 21  # elements of one recorded tensor


class _NoForm(Exception):
    pass


def class_key(module, root: str) -> str | None:
    """``rel.py:Name`` of the module's class when it is defined at module level in a file under ``root``."""
    cls = type(module)
    if "<" in cls.__qualname__ or "." in cls.__qualname__:
        return None
    try:
        file = inspect.getsourcefile(cls) or ""
    except (TypeError, OSError):
        return None
    root = os.path.realpath(root)
    real = os.path.realpath(file)
    try:
        if not file or os.path.commonpath([real, root]) != root:
            return None
    except ValueError:
        return None
    return os.path.relpath(real, root).replace(os.sep, "/") + ":" + cls.__name__


class ForwardRecorder:
    """Forward pre-hooks (with keyword arguments) on every sub-module of ``model`` whose class key is in ``keys``,
    while active (a context manager): ``observed[key]`` gets ``{"ctor": text or None, "inputs": [spec, ...]}`` for
    the first call of each instance, at most MAX_CALLS per class, arrays written under ``out_dir``. ``ctor_of``:
    the constructor text of an instance (call_sites.CallRecorder's record of the container's build), or None."""

    def __init__(self, model, keys, root: str, out_dir: str, observed: dict, ctor_of=None):
        self.model, self.keys, self.root, self.out_dir = model, set(keys), root, out_dir
        self.observed, self.ctor_of = observed, ctor_of or (lambda m: None)
        self._handles, self._seen = [], set()

    def __enter__(self):
        for _, module in self.model.named_modules():
            if module is self.model:
                continue
            key = class_key(module, self.root)
            if key is None or key not in self.keys:
                continue
            self._handles.append(module.register_forward_pre_hook(self._hook(key), with_kwargs=True))
        return self

    def __exit__(self, *exc):
        for handle in self._handles:
            handle.remove()
        self._handles = []
        return False

    def _hook(self, key):
        def hook(module, args, kwargs):
            try:
                self._record(key, module, args, kwargs)
            except Exception:  # noqa: BLE001 - recording never changes what the model does
                pass
            return None
        return hook

    def _record(self, key, module, args, kwargs) -> None:
        if id(module) in self._seen:
            return
        self._seen.add(id(module))
        kept = self.observed.setdefault(key, [])
        if len(kept) >= MAX_CALLS:
            return
        ctor = self.ctor_of(module)
        if any(k["ctor"] == ctor for k in kept):
            return
        stem = re.sub(r"[^A-Za-z0-9_]+", "_", key) + f"-{len(kept)}"
        try:
            values = positional(module.forward, args, kwargs)
            specs = [self._spec(v, f"{stem}-{i}") for i, v in enumerate(values)]
        except _NoForm:
            return
        kept.append({"ctor": ctor, "inputs": specs})

    def _spec(self, value, stem: str, depth: int = 0) -> str:
        import numpy as np
        import torch

        if isinstance(value, torch.Tensor):
            if value.numel() > MAX_ELEMENTS or value.is_complex() or value.layout != torch.strided:
                raise _NoForm
            array = value.detach().cpu()
            if array.dtype in (torch.float16, torch.bfloat16, torch.float64):
                array = array.float()  # the proof's inputs are float32
            array = array.numpy()
            if array.dtype.kind == "f" and not np.isfinite(array).all():
                raise _NoForm
            os.makedirs(self.out_dir, exist_ok=True)
            path = os.path.join(self.out_dir, stem + ".npy")
            np.save(path, np.ascontiguousarray(array), allow_pickle=False)
            return path
        if depth == 0 and type(value) in (list, tuple) and value and all(isinstance(v, torch.Tensor) for v in value):
            items = [self._spec(v, f"{stem}_{i}", depth + 1) for i, v in enumerate(value)]
            inner = ", ".join(items) + ("," if type(value) is tuple and len(items) == 1 else "")
            return f"[{inner}]" if type(value) is list else f"({inner})"
        return "value:" + _literal(value)


def _literal(value) -> str:
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float) and math.isfinite(value):
        return repr(float(value))
    if type(value) in (list, tuple) and len(value) <= 16:
        items = [_literal(v) for v in value]
        return ("[" + ", ".join(items) + "]") if type(value) is list else \
            ("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
    raise _NoForm


def positional(forward, args, kwargs) -> list:
    """The call's arguments in the forward's positional order: keyword ones put in their places, a parameter skipped
    before the last one given takes its default; ``_NoForm`` when they do not bind (``**kwargs`` only, a keyword-only
    parameter given)."""
    if not kwargs:
        return list(args)
    try:
        sig = inspect.signature(forward)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        raise _NoForm from None
    params = list(sig.parameters.values())
    given = bound.arguments
    out, last = [], -1
    for i, p in enumerate(params):
        if p.name in given:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise _NoForm
            last = i
    for p in params[:last + 1]:
        if p.name in given:
            out.append(given[p.name])
        elif p.default is not p.empty:
            out.append(p.default)
        else:
            raise _NoForm
    return out
