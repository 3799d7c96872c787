"""The MindSpore side of a parity run (see ``sides.py``): everything here imports MindSpore, nothing imports torch
(a ``.pt`` checkpoint is read by mindport's loader, which unpickles tensors only)."""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import os
import tempfile
import time
import traceback

import numpy as np

from mindport.errors import InputError, MigrationError
from mindport.validators.parity.loading import ObjectInput, map_arrays
from mindport.validators.parity.sides import (
    LOSSES,
    OPTIMIZERS,
    TrainSpec,
    error_text,
    flat_numpy,
    graph_location,
    timed,
)


def _tensors(arrays):
    import mindspore as ms

    # a ``value:``/``fn:`` input (a Python number, flag, string, None, a function) goes to the forward as it is;
    # a list input (HRNet's branches) has its arrays converted
    return [map_arrays(a, lambda v: ms.Tensor(np.ascontiguousarray(v))) for a in arrays]


def _import_object(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def ms_kwargs(entry, kwargs: dict) -> dict:
    """torch keyword arguments -> the mapped MindSpore API's, by the entry: renamed, dropped, and the arguments whose
    MindSpore default differs (``emit``) given torch's default when not given."""
    out = {}
    for name in entry.emit:
        param = entry.param(name)
        if name not in kwargs and param is not None and param.default is not None:
            out[entry.rename.get(name, name)] = ast.literal_eval(param.default)
    for name, value in kwargs.items():
        if name in entry.drop:
            continue
        if name in entry.unsupported:
            raise InputError(f"{entry.torch}: {name} is not supported by the MindSpore target: {entry.unsupported[name]}")
        out[entry.rename.get(name, name)] = value
    return out


def mapped_class(torch_name: str):
    """The MindSpore class the mapping tables give for a torch class, and its entry."""
    from mindport.mappings import load_registry

    entry = load_registry().lookup(torch_name)
    if entry is None or not entry.supported or not entry.target("nn"):
        raise InputError(f"{torch_name} has no MindSpore mapping entry")
    return _import_object(entry.target("nn")), entry


_CALL_DEPTH = "Exceed function call depth limit"
GRAPH_RECURSION_LIMIT = 10000  # mindspore.set_recursion_limit's value for a graph whose loops unroll past 1000 calls


def _raise_stack_limit() -> None:
    """The main thread's stack may grow to the hard limit: a deeper compile needs more (MindSpore's own advice)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))


@contextlib.contextmanager
def _graph_cwd(folder: str | None):
    """GRAPH_MODE writes ``rank_0/om/analyze_fail.ir`` into the working directory when it fails to compile: it runs
    from ``folder`` (a worker's log folder) or a temporary folder, never from the user's."""
    previous = os.getcwd()
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="mindport-graph-"))
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(previous)


class MindSporeSide:
    """One MindSpore Cell: built here from a reference (constructor arguments recorded), or given (``compare``)."""

    def __init__(self, cell=None, graph_dir: str | None = None):
        self.tape = None  # the torch side's draws, replayed by every model call (use_draws)
        self.cell = cell
        self.graph_dir = graph_dir  # where GRAPH_MODE runs (its failure files land there)

    def use_draws(self, tape: list | None) -> None:
        """Every later model call replays ``tape`` (the torch side's ``draws``) instead of drawing: the same values
        in the same order, checked draw by draw (``mindport.proofs.replay``). None or [] draws as MindSpore does."""
        self.tape = tape or None

    def _draws(self):
        import contextlib

        from mindport.proofs.replay import drawing

        return drawing("mindspore", self.tape) if getattr(self, "tape", None) else contextlib.nullcontext()

    def hello(self) -> dict:
        import mindspore as ms

        ms.set_context(mode=ms.PYNATIVE_MODE)
        return {"framework": "mindspore", "version": str(ms.__version__)}

    # ------------------------------------------------------------------------------------------------ building

    def build(self, ref: str, ctor: str, seed: int, root=None, cwd=None) -> dict:
        import mindspore as ms

        from mindport.validators.parity.loading import build_model
        from mindport.validators.parity.configs import record_constructor_args

        ms.set_seed(seed)
        with record_constructor_args():
            cell = build_model(ref, ctor, root=root, isolated=True, cwd=cwd)
        if not isinstance(cell, ms.nn.Cell):
            raise InputError(f"{ref}({ctor}) built a {type(cell).__name__}, not a mindspore.nn.Cell")
        self.cell = cell
        return self.info()

    def info(self) -> dict:
        return {"type": type(self.cell).__name__, "kind": "mindspore"}

    def transfer(self, state: dict | None = None, path: str | None = None, source: str = "", strict: bool = False,
                 save: str | None = None) -> dict:
        """Fill the cell from a torch state (numpy) or a checkpoint file; with ``save``, write the result as a
        MindSpore checkpoint when every parameter was filled. Returns the weights info, diagnostics and the plan."""
        from mindport.migrator.weights import save_weights, transfer_weights

        source = source or str(path or "torch model")
        try:
            rep = transfer_weights(path if path is not None else state, self.cell, strict=strict)
        except MigrationError as exc:  # InputError too: an unreadable checkpoint
            return {"info": {"source": source, "ok": False, "error": exc.message}, "diagnostics": list(exc.diagnostics),
                    "plan": [], "mapping": {}}
        if state is not None and rep.unexpected and not rep.missing:
            _drop_aliases(rep, state)
        info = {"source": source, "ok": rep.ok, "transferred": len(rep.mapping), "missing": list(rep.missing),
                "unexpected": list(rep.unexpected), "dropped": list(rep.dropped)}
        if save is not None and rep.ok:
            save_weights(self.cell, save)
            info["output"] = str(save)
            info["map"] = dict(rep.mapping)
        plan = [{"name": item.name, "sources": list(item.sources), "transform": item.transform,
                 "shape": list(item.shape)} for item in rep.weight_map.items if item.buffer is None]
        diags = [dataclasses.replace(d, severity="warning") if d.severity == "error" and not strict else d
                 for d in rep.diagnostics]
        return {"info": info, "diagnostics": diags, "plan": plan, "mapping": dict(rep.mapping)}

    def load_mindspore_checkpoint(self, path: str) -> None:
        """A MindSpore checkpoint (``mindport weights``' output) loaded into the cell; every parameter must be filled."""
        import mindspore as ms

        try:
            params = ms.load_checkpoint(path)
        except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is an input error
            raise InputError(f"cannot read the checkpoint {path}: {error_text(exc).splitlines()[0]}") from None
        not_loaded, _ = ms.load_param_into_net(self.cell, params)
        if not_loaded:
            raise InputError(f"checkpoint {path} leaves {len(not_loaded)} parameter(s) of the model unfilled: "
                             f"{', '.join(not_loaded[:5])}")

    def plan(self, shapes: dict) -> list[dict]:
        """The weight map for a torch state of these shapes (``compare(..., transfer=False)``: names only)."""
        from mindport.migrator.weights import plan_transfer

        state = {k: np.zeros(shape, dtype) for k, (shape, dtype) in shapes.items()}
        plan, _ = plan_transfer(state, self.cell)
        return [{"name": item.name, "sources": list(item.sources), "transform": item.transform,
                 "shape": list(item.shape)} for item in plan.items if item.buffer is None]

    def state(self) -> dict:
        seen, out = set(), {}
        for _, param in self.cell.parameters_and_names():
            if id(param) not in seen:
                seen.add(id(param))
                out[param.name] = np.array(param.asnumpy(), copy=True)
        return out

    # ------------------------------------------------------------------------------------------------- running

    @timed
    def forward(self, inputs, record: bool = True) -> dict:
        import mindspore as ms

        from mindport.validators.parity.configs import ms_config
        from mindport.validators.parity.hooks import finish_records, mapped_torch_name, ms_hooks, raise_site

        cell = self.cell
        cell.set_train(False)
        previous = ms.get_context("mode")
        records = [] if record else None
        started: list = []
        outputs, kinds, error, where = None, {}, "", ""
        try:
            ms.set_context(mode=ms.PYNATIVE_MODE)
            if records is None:
                with self._draws():
                    out = cell(*_tensors(inputs))
                    outputs, kinds = flat_numpy(out)  # PyNative runs asynchronously: syncing surfaces a failing op here
            else:
                with ms_hooks(cell, records, started), self._draws():
                    out = cell(*_tensors(inputs))
                    outputs, kinds = flat_numpy(out)
        except Exception as exc:  # noqa: BLE001 - the port raising is a parity failure, reported
            error, where = error_text(exc), raise_site(exc)
            traceback.print_exc()  # the whole stack to this side's log
        finally:
            ms.set_context(mode=previous)
        self.functions_out = [k for k, v in kinds.items() if v == "function"]  # read by graph()
        if records is not None:
            finish_records(records, ms_config, "construct", extra=lambda c: {"mapped_torch": mapped_torch_name(c)})
        return {"outputs": outputs, "kinds": kinds, "records": records, "started": started, "error": error,
                "error_site": where}

    def forward64(self, inputs) -> dict:
        """The cell once in float64 (the float64 control of an ill-conditioned draw, as torch's ``float64_gap``): its
        float32 parameters and floating inputs cast to float64, PyNative; the parameters get their float32 values
        back afterwards. ``{"outputs": [(key, array)]}``, or ``{"error": ...}`` when the cell does not run in float64
        (a tensor it makes in float32 meets a float64 one): then there is no control and the verdict stands."""
        import mindspore as ms

        cell = self.cell
        cell.set_train(False)
        previous = ms.get_context("mode")
        saved = []
        as64 = lambda a: a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a  # noqa: E731
        try:
            ms.set_context(mode=ms.PYNATIVE_MODE)
            for _, param in cell.parameters_and_names():
                if param.dtype == ms.float32 and all(param is not p for p, _ in saved):
                    saved.append((param, np.array(param.asnumpy(), copy=True)))
                    param.set_dtype(ms.float64)
                    param.set_data(ms.Tensor(saved[-1][1].astype(np.float64)))
            with self._draws():
                outputs, _ = flat_numpy(cell(*_tensors([map_arrays(a, as64) for a in inputs])))
            return {"outputs": outputs}
        except Exception as exc:  # noqa: BLE001 - no float64 run: no control
            return {"error": error_text(exc, 300)}
        finally:
            for param, value in saved:
                param.set_dtype(ms.float32)
                param.set_data(ms.Tensor(value))
            ms.set_context(mode=previous)

    def graph(self, inputs) -> dict:
        """The cell once more in GRAPH_MODE: its outputs, or why it did not compile or run."""
        import mindspore as ms

        start = time.perf_counter()
        if getattr(self, "tape", None):  # the replayed draws are Python functions a static graph cannot compile
            return {"skipped": f"the forward draws random values ({len(self.tape)} draws replayed from torch's run "
                               "in PyNative): GRAPH_MODE is not run on replayed draws"}
        objects = [a for a in inputs if isinstance(a, ObjectInput)]
        if objects:  # a static graph takes tensors, tuples, lists and dicts as its inputs, not an object
            return {"skipped": f"an input read by attribute ({objects[0]!r}): a static graph takes tensors, tuples "
                               "and dicts, so GRAPH_MODE is not run on it"}
        functions = getattr(self, "functions_out", None)
        if functions:  # a closure handed back (RevIN's ``reverse_fn``): "Function in output is not supported"
            return {"skipped": f"the forward returns a function ({functions[0]}): a static graph returns tensors, "
                               "tuples, lists and dicts, so GRAPH_MODE is not run on it"}
        previous = ms.get_context("mode")
        self.cell.set_train(False)
        note = ""
        try:
            with _graph_cwd(self.graph_dir):
                ms.set_context(mode=ms.GRAPH_MODE)
                try:
                    outputs, kinds = flat_numpy(self.cell(*_tensors(inputs)))
                except Exception as exc:  # noqa: BLE001 - retried once below when only the call depth stopped it
                    if _CALL_DEPTH not in str(exc):
                        raise
                    # loops unrolled past the compiler's default call depth (two stacked GRU cells over 64 steps in
                    # and 64 out): compiled once more with the limit raised, the stack allowed to grow with it
                    _raise_stack_limit()
                    ms.set_recursion_limit(GRAPH_RECURSION_LIMIT)
                    try:
                        outputs, kinds = flat_numpy(self.cell(*_tensors(inputs)))
                    finally:
                        ms.set_recursion_limit(1000)
                    note = (f"compiles only with mindspore.set_recursion_limit({GRAPH_RECURSION_LIMIT}) called "
                            "first: its loops unroll past GRAPH_MODE's default function call depth of 1000")
        except Exception as exc:  # noqa: BLE001 - any compile/run failure is a finding, not a crash
            return {"error": error_text(exc), "location": graph_location(str(exc)),
                    "seconds": round(time.perf_counter() - start, 4)}
        finally:
            ms.set_context(mode=previous)
        answer = {"outputs": outputs, "kinds": kinds, "seconds": round(time.perf_counter() - start, 4)}
        if note:
            answer["note"] = note
        return answer

    def export(self, path: str, inputs, rtol: float, atol: float, model: str = "", checkpoint=None,
               labels=None) -> dict:
        """The Cell in inference mode as MindIR at ``path``, reloaded and compared (mindport.export.export_cell)."""
        from mindport.export import ExportReport, export_cell

        self.cell.set_train(False)
        labels = labels or [f"{'x'.join(map(str, a.shape))}:{a.dtype}" for a in inputs]
        report = ExportReport(model, path, list(labels), checkpoint)
        with _graph_cwd(self.graph_dir):
            return export_cell(self.cell, path, [np.ascontiguousarray(a) for a in inputs], report, rtol=rtol, atol=atol).to_json()

    @timed
    def grads(self, inputs, projections: dict) -> dict:
        """Gradients of ``sum(output * R)`` for every trainable parameter, by MindSpore parameter name."""
        import mindspore as ms

        from mindport.validators.parity.metrics import flatten_outputs

        cell = self.cell
        cell.set_train(False)
        params = cell.trainable_params()
        weights = {k: ms.Tensor(v) for k, v in projections.items()}

        def projected(*args):
            total = None
            for key, leaf in flatten_outputs(cell(*args)):
                if key in weights:
                    term = (leaf * weights[key].astype(leaf.dtype)).sum()
                    total = term if total is None else total + term
            return total

        ms.set_context(mode=ms.PYNATIVE_MODE)
        with self._draws():
            loss, grads = ms.value_and_grad(projected, None, params)(*_tensors(inputs))
        return {"loss": float(loss.asnumpy()), "grads": {p.name: np.array(g.asnumpy(), copy=True)
                                                        for p, g in zip(params, grads)}}

    @timed
    def train(self, batches: list, targets: list, spec: TrainSpec) -> dict:
        """``spec.steps`` steps with the optimizer and loss the mapping tables give for torch's, dropout cells off."""
        import mindspore as ms

        from mindport.validators.parity.metrics import flatten_outputs

        cell = self.cell
        cell.set_train(True)
        for _, sub in cell.cells_and_names():
            if "Dropout" in type(sub).__name__:
                sub.set_train(False)
        params = cell.trainable_params()
        opt_cls, opt_entry = mapped_class(OPTIMIZERS[spec.optimizer])
        optimizer = opt_cls(params, **ms_kwargs(opt_entry, {"lr": spec.lr, **spec.optimizer_args}))
        loss_cls, loss_entry = mapped_class(LOSSES[spec.loss])
        loss_fn = loss_cls(**ms_kwargs(loss_entry, {}))
        n_inputs = len(batches[0]) if batches else 0
        keys = [key for key, _ in targets[0]] if targets else []

        def step_loss(*args):
            leaves = dict(flatten_outputs(cell(*args[:n_inputs])))
            total = None
            for key, t in zip(keys, args[n_inputs:]):
                leaf = leaves[key]
                if spec.loss == "cross_entropy":
                    term = loss_fn(leaf.reshape(-1, leaf.shape[-1]), t.reshape(-1))
                else:
                    term = loss_fn(leaf, t)
                total = term if total is None else total + term
            return total

        ms.set_context(mode=ms.PYNATIVE_MODE)
        grad_fn = ms.value_and_grad(step_loss, None, params)
        losses = []
        for batch, target in zip(batches, targets):
            loss, grads = grad_fn(*_tensors(batch), *_tensors([v for _, v in target]))
            optimizer(grads)
            losses.append(float(loss.asnumpy()))
        cell.set_train(False)
        return {"losses": losses, "state": self.state(), "optimizer": opt_entry.target("nn"),
                "loss": loss_entry.target("nn")}

    # ------------------------------------------------------------------------------------------- msprobe interop

    def describe(self) -> list[dict]:
        """Every cell: path, MindSpore class, the torch class it stands for, its parameters' leaf names both ways."""
        from mindport.mappings import load_registry
        from mindport.migrator.weights.plan import _ms_class_path

        registry = load_registry()
        out = []
        for path, sub in self.cell.cells_and_names():
            entry = registry.layer_for_target(_ms_class_path(sub))
            torch_class = entry.torch.rsplit(".", 1)[1] if entry is not None else type(sub).__name__
            to_torch = {ms_leaf: t_leaf for t_leaf, ms_leaf in (entry.weights.items() if entry else ()) if ms_leaf}
            params = [{"ms": leaf, "torch": to_torch.get(leaf, leaf)}
                      for leaf, p in getattr(sub, "_params", {}).items() if p is not None]
            out.append({"path": path, "ms_class": type(sub).__name__, "torch_class": torch_class,
                        "torch_api": entry.torch if entry is not None else "", "params": params})
        return out


def _drop_aliases(rep, state: dict) -> None:
    """Torch keys that matched nothing and hold exactly a placed key's tensor: the one Parameter under a second name
    of torch's state (awd-lstm-lm's WeightDrop sets ``F.dropout(raw, training=False)``, the ``weight_hh_l0_raw``
    Parameter itself, back as ``weight_hh_l0``: after an eval forward the module registers it under both). Only the
    proof, which holds the torch model's values, can tell: the weight plan reads shapes. Dropped with a note when
    every MindSpore parameter was filled; a key of values no placed key has stays unexpected."""
    from mindport.errors import Diagnostic

    placed = {}
    for key in rep.mapping:
        value = np.asarray(state.get(key)) if key in state else None
        if value is not None and value.size > 1:  # one number proves nothing (a scalar 0, a 1-element bias)
            placed.setdefault((value.shape, value.dtype.str), []).append((key, value))
    aliases = {}
    for key in rep.unexpected:
        value = np.asarray(state[key]) if key in state else None
        if value is None or value.size <= 1:
            continue
        twin = next((k for k, v in placed.get((value.shape, value.dtype.str), []) if np.array_equal(v, value)), None)
        if twin is not None:
            aliases[key] = twin
    if not aliases:
        return
    rep.unexpected = [k for k in rep.unexpected if k not in aliases]
    rep.dropped = [*rep.dropped, *aliases]
    rep.diagnostics = [d for d in rep.diagnostics if not (d.code == "MP301" and d.api in aliases)] + [
        Diagnostic("MP304", f"torch key {key} holds the same values as {twin} (one tensor under two names of torch's "
                            f"state): not moved twice", api=key, severity="info") for key, twin in aliases.items()]
