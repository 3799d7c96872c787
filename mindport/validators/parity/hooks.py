"""Capturing every layer's inputs, output and call site (``file:line`` of the user's statement), in completion order;
runs inside a side (torch or MindSpore) and hands the parent plain records."""
from __future__ import annotations

import contextlib
import functools
import os
import sys

import numpy as np


def _leaves(obj) -> list:
    from mindport.validators.parity.metrics import flatten_outputs, to_numpy

    out = []
    for _, value in flatten_outputs(obj):
        try:
            array = to_numpy(value)
        except TypeError:
            continue  # a non-tensor argument (a module, a string): not compared
        if array is None:
            continue
        array = np.asarray(array)
        if array.dtype.kind not in "biufc":
            continue
        # A copy: a later in-place layer (torch ReLU(inplace=True)) would otherwise rewrite the recorded output.
        out.append(np.array(array, copy=True))
    return out


@functools.lru_cache(maxsize=1)
def _framework_dirs() -> tuple[str, ...]:
    """Source folders whose frames are not the user's statement: the frameworks, the stdlib, this package, the
    runtime layer (its Cells call sub-cells on the user's behalf) and the proofs (the draw replay raises where the
    port's statement draws)."""
    import importlib.util
    import sysconfig

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dirs = [sysconfig.get_paths()["stdlib"], os.path.dirname(os.path.abspath(__file__)),
            os.path.join(package, "runtime"), os.path.join(package, "proofs")]
    for name in ("torch", "mindspore", "onnx"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(spec.submodule_search_locations)
    return tuple(os.path.join(d, "") for d in dirs)


def call_site(frame) -> str:
    """``file:line`` of the innermost frame outside the frameworks: the statement that called the layer."""
    skip = _framework_dirs()
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not filename.startswith(skip):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def raise_site(exc: BaseException) -> str:
    """``file:line`` of the innermost statement outside the frameworks that an exception went through."""
    skip = _framework_dirs()
    found, tb = "", exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<") and not filename.startswith(skip):
            found = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def definition_site(layer, method: str) -> str:
    """``file:line`` of a user-defined layer's forward/construct ("" for framework classes)."""
    cls = type(layer)
    if cls.__module__.startswith(("torch.", "mindspore.", "mindport.runtime")):
        return ""
    code = getattr(getattr(cls, method, None), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


# The bytes of layer inputs and outputs one side keeps for the localisation. Every layer's tensors are copied (a
# container's too), so a deep CNN at a real input size kept several times its activations: pytorch_segmentation_
# tutorial's resnet101_atrous (42.5 M parameters, 2x3x256x512, output stride 8) reached 8.6 GB in its MindSpore side,
# which the machine's OOM killer stopped ("the MindSpore process stopped (exit code -9)"), at load, every run. Past the
# budget a layer's tensors are not copied and its record says so (``unrecorded``): that layer is "not compared" in the
# localisation, the outputs are compared as always.
RECORD_BYTES = 1 << 30


def _hooked(named, records: list[dict], started: list | None = None):
    """Hooks on every layer: its inputs are copied when it starts (an in-place layer, torch's ReLU(inplace=True),
    rewrites them before it returns), its output when it returns; within :data:`RECORD_BYTES` in all. ``started``
    receives (path, call) at each start."""
    calls: dict[str, int] = {}
    starts: dict[str, int] = {}
    pending: dict[str, list] = {}
    handles = []
    kept = [0]  # bytes copied so far

    def copied(obj) -> list | None:
        if kept[0] > RECORD_BYTES:
            return None
        try:
            leaves = _leaves(obj)
        except Exception:  # noqa: BLE001 - unflattenable values are just not compared
            return []
        kept[0] += sum(a.nbytes for a in leaves)
        return leaves

    for path, layer in named:
        def pre_hook(layer, inputs, path=path):
            pending.setdefault(path, []).append(copied(inputs))
            if started is not None:
                starts[path] = starts.get(path, -1) + 1
                started.append((path, starts[path]))

        def hook(layer, inputs, output, path=path):
            n = calls.get(path, 0)
            calls[path] = n + 1
            leaves = copied(output)
            stack = pending.get(path)
            ins = stack.pop() if stack else []
            record = {"path": path, "call": n, "type": type(layer).__name__, "type_module": type(layer).__module__,
                      "leaves": leaves or [], "inputs": ins or [], "site": call_site(sys._getframe(1)),
                      "layer": layer}
            if leaves is None or ins is None:  # half a layer is not compared: neither half is kept
                record.update(leaves=[], inputs=[], unrecorded=True)
            records.append(record)
        handles.append(layer.register_forward_pre_hook(pre_hook))
        handles.append(layer.register_forward_hook(hook))
    return handles


def finish_records(records: list[dict], config, method: str, extra=None) -> list[dict]:
    """Plain records (no layer objects) for the parent: each layer's settings and definition site added once."""
    cache: dict[int, tuple] = {}
    for rec in records:
        layer = rec.pop("layer", None)
        if layer is None:
            continue
        if id(layer) not in cache:
            info = {"config": config(layer), "def": definition_site(layer, method)}
            if extra is not None:
                info.update(extra(layer))
            cache[id(layer)] = info
        rec.update(cache[id(layer)])
    return records


@contextlib.contextmanager
def torch_hooks(module, records: list[dict]):
    handles = _hooked(list(module.named_modules()), records)
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def ms_hooks(cell, records: list[dict], started: list | None = None):
    """Record every cell's inputs and output; ``started`` (optional) receives (path, call) as each cell starts, so
    that the cell that raised is the innermost one that started and never returned."""
    handles = _hooked(list(cell.cells_and_names()), records, started)
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def mapped_torch_name(ms_layer) -> str:
    """The torch class name whose mapping entry targets this MindSpore class ("" when none)."""
    try:
        from mindport.mappings import load_registry
        from mindport.migrator.weights.plan import _ms_class_path

        entry = load_registry().layer_for_target(_ms_class_path(ms_layer))
    except Exception:  # noqa: BLE001
        return ""
    return entry.torch.rsplit(".", 1)[-1] if entry is not None else ""


def types_correspond(torch_rec: dict, ms_rec: dict) -> bool:
    tname, mname = torch_rec["type"], ms_rec["type"]
    if tname == mname:
        return True
    return torch_rec.get("type_module", "").startswith("torch.nn") and ms_rec.get("mapped_torch") == tname
