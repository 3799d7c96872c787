"""The two sides of a parity run and how the parent talks to them.

A side owns one model and does everything that needs its framework: build it, load or take weights, run it with
hooks on every layer, compute gradients of a seeded loss, train it, perturb its parameters. It answers with plain
data only (numpy arrays, lists, dicts, strings), so the parent (``compare.py``) compares without importing either
framework, and the side can live in a process of its own (``worker.py``: ``validate`` runs the torch side and the
MindSpore side in two processes that never share ``sys.modules``) or in the caller's process (``compare``, which
receives models already built).

Both kinds of side are driven through the same two calls: ``side.submit(method, *args)`` returns a
:class:`Pending` whose ``result()`` is the method's return value (or raises its exception), so the parent can start
the same work on both sides and collect both answers, while the two processes run in parallel.

The implementations are ``side_torch.TorchSide``, ``side_mindspore.MindSporeSide`` and :class:`OnnxSide` here.
"""
from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field

import numpy as np

from mindport.errors import InputError

# --train-steps: the optimizer and loss names the CLI takes, as the torch API each one is (their MindSpore classes
# come from the mapping tables)
OPTIMIZERS = {"sgd": "torch.optim.SGD", "adam": "torch.optim.Adam", "adamw": "torch.optim.AdamW"}
LOSSES = {"mse": "torch.nn.MSELoss", "cross_entropy": "torch.nn.CrossEntropyLoss"}


class SideError(RuntimeError):
    """A side failed in a way that is not the user's input (a crash, an unexpected exception)."""

    def __init__(self, side: str, message: str, detail: str = ""):
        super().__init__(message)
        self.side, self.message, self.detail = side, message, detail


@dataclass
class TrainSpec:
    steps: int
    optimizer: str = "sgd"  # a key of OPTIMIZERS
    lr: float = 0.01
    optimizer_args: dict = field(default_factory=dict)  # torch keyword arguments (momentum=0.9, ...)
    loss: str = "mse"  # a key of LOSSES
    rtol: float = 1e-4  # per-step loss and final weights, relative


class Pending:
    """The answer to one submitted call (already there for an in-process side; read from the pipe for a process)."""

    def __init__(self, value=None, exc: BaseException | None = None, receive=None):
        self._value, self._exc, self._receive = value, exc, receive

    def result(self):
        if self._receive is not None:
            receive, self._receive = self._receive, None
            try:
                self._value = receive()
            except BaseException as exc:  # noqa: BLE001 - re-raised below, and on every later result()
                self._exc = exc
        if self._exc is not None:
            raise self._exc
        return self._value


class LocalSide:
    """A side in the caller's process."""

    def __init__(self, impl, name: str):
        self.impl, self.name = impl, name
        self.log = ""

    def submit(self, method: str, *args, **kwargs) -> Pending:
        try:
            return Pending(getattr(self.impl, method)(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to whoever reads the result
            return Pending(exc=exc)

    def call(self, method: str, *args, **kwargs):
        return self.submit(method, *args, **kwargs).result()

    def close(self) -> None:
        pass


def both(ref, ms, method: str, *args, **kwargs) -> tuple:
    """Run ``method`` on both sides at once; the reference's answer (or error) is read first."""
    p_ref, p_ms = ref.submit(method, *args, **kwargs), ms.submit(method, *args, **kwargs)
    try:
        return p_ref.result(), p_ms.result()
    except BaseException:
        with contextlib.suppress(BaseException):
            p_ms.result()  # keep the pipe in step
        raise


def _checked(fn, *args, **kwargs):
    """A side's answer; a side that crashed while building or loading is an input problem (exit code 2)."""
    try:
        return fn(*args, **kwargs)
    except SideError as exc:
        raise InputError(f"the {exc.side} side failed: {exc.message}") from exc


def _forward_answer(pending) -> dict:
    try:
        return pending.result()
    except SideError as exc:  # the MindSpore process died while running the port: a parity failure
        return {"error": exc.message, "records": [], "started": [], "outputs": None}


# ----------------------------------------------------------------------------------------------------------------
# Shared by the sides

def error_text(exc: BaseException, limit: int = 1200) -> str:
    """An exception as a few readable lines, the message first: MindSpore's section headings, separator lines and
    C++ call stack dropped."""
    lines, in_stack = [], False
    for ln in str(exc).splitlines():
        stripped = ln.strip()
        if "C++ Call Stack" in stripped:
            in_stack = True
            continue
        if not stripped or set(stripped) <= set("-") or (stripped.startswith("- ") and stripped.endswith(":")):
            continue  # "- Kernel select failed:" and the like: the message follows
        if in_stack and re.match(r"^[\w/.]+\.(cc|h|cpp|py)(:\d+)?\b", stripped):
            continue
        lines.append(ln)
    head = f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__
    return "\n".join([head, *lines[1:]])[:limit]


def graph_location(text: str) -> str:
    """The user's line in MindSpore's compile error: its trace lines read ``# In file F:L`` or ``# 0 In file F:L, C~C``."""
    from mindport.validators.parity.hooks import _framework_dirs

    found = re.findall(r"#\s*\d*\s*In file (.+?):(\d+)", text)
    users = [f for f in found if not f[0].startswith(_framework_dirs())]  # the user's line, not MindSpore's
    where = (users or found)[-1] if found else None
    return f"{where[0]}:{where[1]}" if where else ""


def timed(fn):
    """Decorator: the method's dict result gets the seconds it took (measured where the work happened)."""
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        if isinstance(result, dict):
            result["seconds"] = round(time.perf_counter() - start, 4)
        return result
    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


def flat_numpy(out) -> tuple[list, dict]:
    """A model's output as ``[(key, array copy)]`` plus each container's kind."""
    from mindport.validators.parity.metrics import flatten_outputs, to_numpy

    kinds: dict = {}
    flat = []
    for key, value in flatten_outputs(out, kinds=kinds):
        array = to_numpy(value)
        flat.append((key, None if array is None else np.array(array, copy=True)))
    return flat, kinds


def constant_parameter(array: np.ndarray) -> bool:
    from mindport.validators.parity.metrics import is_constant

    return array.size > 0 and is_constant(array)


def perturbation(shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """A seeded value like a default init: uniform in +-1/sqrt(fan_in)."""
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0]) if shape else 1
    bound = 1.0 / np.sqrt(max(fan_in, 1))
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------------
# An exported ONNX model as the reference (numpy only: onnx.reference.ReferenceEvaluator)

class OnnxSide:
    def __init__(self, path):
        import onnx

        self.path = str(path)
        try:
            self.model = onnx.load(self.path)
        except Exception as exc:
            raise InputError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})") from exc
        init_names = {i.name for i in self.model.graph.initializer}
        self.input_names = [i.name for i in self.model.graph.input if i.name not in init_names]

    def hello(self) -> dict:
        return {"framework": "onnx"}

    def info(self) -> dict:
        return {"type": "onnx", "kind": "onnx"}

    def state(self) -> dict:
        from onnx import numpy_helper

        return {i.name: numpy_helper.to_array(i) for i in self.model.graph.initializer if not i.name.startswith("onnx::")}

    @timed
    def forward(self, inputs, record: bool = True) -> dict:
        from onnx.reference import ReferenceEvaluator

        if len(inputs) != len(self.input_names):
            raise InputError(f"{self.path} takes {len(self.input_names)} input(s) ({', '.join(self.input_names)}), "
                             f"got {len(inputs)}")
        try:
            outs = ReferenceEvaluator(self.model).run(None, dict(zip(self.input_names, inputs)))
        except Exception as exc:  # noqa: BLE001 - reported as the reference raising
            return {"error": error_text(exc, 600)}
        outputs, kinds = flat_numpy(outs[0] if len(outs) == 1 else tuple(outs))
        return {"outputs": outputs, "kinds": kinds, "records": None}

    def perturb(self, paths, seed: int, every: bool = False, names=None, positive: bool = False) -> list[str]:
        return []  # an ONNX graph's initializers are not perturbed: a constant output stays inconclusive

    def _needs_torch(self, *args, **kwargs):
        raise InputError("gradient and training parity need a torch reference (FILE.py:Name), not an ONNX model")

    grads = train = snapshot = restore = _needs_torch
