"""torch's framework-level names that carry no numerical meaning in MindSpore, for converted code: compilation and
tracing decorators, type objects, constants, memory formats and dtype limits.

MindSpore runs converted code eagerly (PyNative) unless told otherwise, so ``torch.compile`` has nothing to do:
``torch.compile(model)`` gives back what it was given. Converted code imports this module as ``mp_framework``; each
name is the target of a mapping entry (``mindport/mappings/data/framework.toml``).
"""
from __future__ import annotations

import collections.abc
import contextlib
import enum
import math

import mindspore as ms
from mindspore import ops
import numpy as np

from mindport.runtime._graph import in_fallback as _in_fallback
from mindport.runtime._graph import host_only as _host_only
from mindport.runtime._graph import in_graph as _in_graph

# ------------------------------------------------------------------------------------------------- compilation

def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """``torch.compile(model)`` / ``@torch.compile(...)``: the model or function itself (compilation changes speed,
    not results; MindSpore compiles with ``mindspore.jit`` or GRAPH_MODE, a separate choice)."""
    if model is None:
        return lambda fn: fn
    return model


def _assert(condition, message):
    """``torch._assert(condition, message)``: an assert that torch.fx can trace; here a plain one."""
    assert condition, message


def ntuple(n, name="parse"):
    """``torch.nn.modules.utils._ntuple(n)``: the function that makes an int an n-tuple and any iterable a tuple (the
    private helpers model code reads as ``_pair(kernel_size)``); ``_single``, ``_pair``, ``_triple``, ``_quadruple``
    below are torch's four."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    # ``name`` is only torch's __name__ for the returned function: not set here, since a compiled graph that calls
    # ntuple cannot set a function's attribute (GRAPH_MODE read ``parse.__name__ = name`` on an int, depending on
    # which graphs were compiled before); the four below carry torch's names
    return parse


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


single = _named(ntuple(1), "_single")
pair = _named(ntuple(2), "_pair")
triple = _named(ntuple(3), "_triple")
quadruple = _named(ntuple(4), "_quadruple")


@ms.jit_class
class _KernelChoice:
    """What kernel_choice gives: a context manager and a decorator that change nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


def kernel_choice(*args, **kwargs):
    """``torch.nn.attention.sdpa_kernel(backends)``, ``torch.backends.cuda.sdp_kernel(enable_flash=...)``,
    ``torch.backends.cuda.enable_flash_sdp(True)``: which of torch's attention kernels may run. They change speed and
    rounding, not the result's meaning, and MindSpore chooses its own kernel: a context manager and decorator that
    does nothing (None where torch's own gives None, a statement). In a model's methods the converter writes the
    block's body alone (InertContextTransform): a static graph compiles no Python context manager."""
    return _KernelChoice()


class SDPBackend(enum.IntEnum):
    """``torch.nn.attention.SDPBackend``: torch's attention kernels, with torch's values, so lists and dicts of them
    (handed to kernel_choice) compare and print as torch's do."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


def wrap(fn_or_name):
    """``torch.fx.wrap``: marks a function as a leaf for torch.fx tracing; here the argument itself."""
    return fn_or_name


# -------------------------------------------------------------------------------------- types and constants

device = str  # converted code names devices by strings (``torch.device("cuda")`` -> ``"cuda"``)
pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
# torch.__version__: the torch release whose behaviour the mapping tables reproduce (their proofs run against it), so
# converted code that branches on the version (``padding = 1 if torch.__version__ >= '1.5.0' else 2``) takes the
# branch written for that release.
torch_version = "2.13.0"
# torch.version.hip: the ROCm release a torch build was made with (None on a CUDA or CPU build); MindSpore has no ROCm
# backend, so a converted program never runs on one.
version_hip = None

# torch._six (torch < 2.0: Python 2/3 compatibility names, removed in torch 2.0; code written for torch 1.x still
# imports them): what each name was on Python 3, where it is today's Python itself. inf and nan are the ones above.
string_classes = (str, bytes)
int_classes = int
container_abcs = collections.abc
FileNotFoundError = FileNotFoundError  # noqa: A001,PLW0127 - builtins' own class (torch._six re-exported it)
imap = map


def raise_from(value, from_value):
    """``torch._six.raise_from``: ``raise value from from_value`` (Python's exception chaining: a graph compiles
    none, so mindport's error says so there)."""
    _host_only("torch._six.raise_from raises a Python exception and can't be compiled in graph mode; call it "
               "outside construct/@jit")
    raise value from from_value


def raise_own(exc_type, *args, **kwargs):
    """``raise E(*args)`` of an exception class a static graph refuses (the project's own, or a package's: golbin/
    WaveNet's ``InputSizeError`` in ``check_input_size``, called from ``forward``, stopped every GRAPH_MODE compile,
    "Unsupported exception type: InputSizeError", whether or not the raise is reached). PyNative raises ``E(*args)``
    itself; a graph parses only :func:`_graph_raise`, a RuntimeError naming the class, raised where the graph takes
    the branch (the shape check of a too-short input, at compile time)."""
    if _in_graph():
        _graph_raise("mindport: " + exc_type.__name__ + " raised in a static graph (its own message is built in "
                     "PyNative only)")
    else:
        _python_raise(exc_type, args, kwargs)


def _graph_raise(message):
    raise RuntimeError(message)


def _python_raise(exc_type, args, kwargs):
    raise exc_type(*args, **kwargs)


def with_metaclass(meta, *bases):
    """``torch._six.with_metaclass(Meta, Base)``: a base class that makes the class deriving from it an instance of
    ``meta`` with bases ``bases`` (``class A(with_metaclass(Meta, Base))`` is ``class A(Base, metaclass=Meta)``)."""

    class _Bridge(meta):
        def __new__(mcs, name, _bridge_bases, namespace):
            return meta(name, bases, namespace)

    return type.__new__(_Bridge, "temporary_class", (), {})


# torch.Size and the memory formats are mindport.runtime.tensor's (Size, contiguous_format, channels_last ...).


def _numpy_dtype(dtype):
    """The numpy dtype of a MindSpore (or numpy) dtype, by name (``Float32`` -> float32)."""
    name = str(dtype).lower().replace("bool_", "bool")
    return np.dtype({"bool": "bool"}.get(name, name))


class finfo:  # noqa: N801 - torch's name
    """``torch.finfo(dtype)``: the limits of a floating dtype (a MindSpore dtype after conversion), as Python
    floats like torch's: ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``;
    without a dtype, float32's (torch's default dtype).

    In a graph (``construct``, ``@jit``) the class runs through MindSpore's JIT Fallback and its values become graph
    constants, which hold Python floats as float32 (MindSpore 2.10): float64's ``max``, ``min`` and ``tiny`` would
    become inf, -inf and 0 silently, so ``finfo(float64)`` raises there; the other dtypes' limits are float32 values
    and compile as they are."""

    _BFLOAT16 = dict(bits=16, eps=2.0 ** -7, max=3.3895313892515355e38, tiny=2.0 ** -126, resolution=0.01)

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        type = ms.float32 if type is None else type
        if type == ms.float64 and _in_fallback():
            raise RuntimeError("mindport: torch.finfo(torch.float64) inside construct or @jit: a graph holds Python "
                               "floats as float32, so float64's max, min and tiny would be inf, -inf and 0; read "
                               "the limits outside the graph (in __init__) and keep them as attributes, or use "
                               "float32's")
        self.dtype = str(type).lower()
        if type == ms.bfloat16:
            values = dict(self._BFLOAT16)
        else:
            info = np.finfo(_numpy_dtype(type))
            values = dict(bits=info.bits, eps=float(info.eps), max=float(info.max), tiny=float(info.tiny),
                          resolution=10.0 ** -int(info.precision))
        self.bits = values["bits"]
        self.eps, self.max, self.tiny, self.resolution = values["eps"], values["max"], values["tiny"], \
            values["resolution"]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self) -> str:
        return f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, eps={self.eps}, " \
               f"smallest_normal={self.smallest_normal}, tiny={self.tiny}, dtype={self.dtype})"


class iinfo:  # noqa: N801 - torch's name
    """``torch.iinfo(dtype)``: the limits of an integer dtype, as Python ints: ``bits``, ``min``, ``max``."""

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        info = np.iinfo(_numpy_dtype(type))
        self.dtype = str(type).lower()
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


_default_device = "cpu"


def set_default_device(device) -> None:
    """``torch.set_default_device(d)``: the device torch's factories place tensors on. MindSpore's placement is global
    (``mindspore.set_device``), as the device rule writes ``.to(d)``/``.cuda()`` (nothing to move), so the call
    changes no value: the device is kept for ``get_default_device`` and chosen as ``torch.device(d)`` is
    (select_device: the one MindSpore computes on is kept, an accelerator this machine lacks is the CPU). ``"meta"``
    (tensors with no data) has no MindSpore counterpart: it raises, rather than compute with data torch would not
    have."""
    if not _in_graph():  # a graph keeps the device it was compiled with: the call changes no value there either
        _keep_default_device(device)
        if device is not None:
            select_device(device)


def cuda_set_device(device) -> None:
    """``torch.cuda.set_device(i)`` (an index, ``"cuda:1"`` or a device): the current CUDA device, chosen as
    ``torch.device("cuda", i)`` is (select_device: placement is global in MindSpore; the CPU where this machine has
    no GPU, where torch itself would refuse the call). Nothing in a static graph."""
    if not _in_graph():
        if isinstance(device, int):
            select_device("cuda", device)
        else:
            select_device(device)


_deterministic = False  # what torch.use_deterministic_algorithms was last given (torch's default: off)


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """``torch.use_deterministic_algorithms(mode, warn_only=...)``: on, MindSpore's deterministic kernels
    (``mindspore.set_deterministic(True)``, which may be called once per process: a second call raises "can not be set
    repeatedly", so it is called only while MindSpore's context is still off); off, nothing changes in MindSpore
    (a computation made deterministic is one torch's non-deterministic kernels may give, so a script switching it
    off after on computes what torch allows). The mode is kept for ``are_deterministic_algorithms_enabled``. On the
    CPU torch's kernels give the same values either way; nothing in a static graph."""
    global _deterministic
    if _in_graph():
        return
    _deterministic = bool(mode)
    if _deterministic and ms.get_context("deterministic") != "ON":
        ms.set_deterministic(True)


def are_deterministic_algorithms_enabled() -> bool:
    """``torch.are_deterministic_algorithms_enabled()``: the mode use_deterministic_algorithms was last given."""
    return _deterministic


def _keep_default_device(device) -> None:
    global _default_device
    text = "cpu" if device is None else str(device)
    if text.partition(":")[0] == "meta":
        raise NotImplementedError("mindport: torch.set_default_device('meta'): MindSpore has no data-less tensors")
    _default_device = text


def get_default_device() -> str:
    """``torch.get_default_device()``: the device ``set_default_device`` was given, ``"cpu"`` before (a device is its
    string in converted code, ``framework.device``; torch's ``device('cpu')`` prints ``cpu``); a CUDA device with
    no index is torch's current one, ``cuda:0``."""
    return "cuda:0" if _default_device == "cuda" else _default_device


def synchronize(device=None) -> None:
    """``torch.cuda.synchronize()``: wait for the device's queued work (``mindspore.runtime.synchronize``). Nothing
    inside a graph: a compiled graph's outputs are ready when it returns (and the graph compiler can't parse the
    builtin)."""
    if not _in_graph():
        ms.runtime.synchronize()


def device_scope(device=None):
    """``with torch.cuda.device(i):`` (the current CUDA device for what the block allocates): nothing to select in
    MindSpore, whose placement is global (``mindspore.set_device``), so the block runs as written. A static graph
    enters no Python context manager (only a jit_class instance), so mindport's error says so there."""
    _host_only("torch.cuda.device is a Python context manager and can't be entered in graph mode; drop the `with` "
               "(MindSpore's placement is global) or enter it outside construct/@jit")

    return contextlib.nullcontext()


def get_device_name(device=None) -> str:
    """``torch.cuda.get_device_name(device)``: the name of the device MindSpore runs on (``mindspore.hal``; "CPU" on
    the CPU). An index (``0``, ``"cuda:1"``, a ``torch.device``'s text) picks the device; placement is global, so
    without one it is device 0."""
    index = 0
    if isinstance(device, int):
        index = device
    elif device is not None and str(device).rpartition(":")[2].isdigit():
        index = int(str(device).rpartition(":")[2])
    return ms.hal.get_device_name(index)


# ---------------------------------------------------------------------------------------------- mixed precision

class TorchDisabledScaler:
    """torch's GradScaler methods as its disabled scaler answers them (no CUDA): ``unscale_(optimizer)`` and
    ``update()`` change nothing, ``step(optimizer)`` is the optimizer's step on the gradients ``backward`` stored,
    ``get_scale()`` is 1.0, ``is_enabled()`` False and ``state_dict()`` empty (``load_state_dict`` takes one and
    changes nothing). Shared by :class:`DisabledLossScaler` and mindport.runtime.training's ``GradScaler``."""

    def unscale_(self, optimizer) -> None:
        pass

    def step(self, optimizer, *args, **kwargs):
        from mindport.runtime.training import step

        return step(optimizer, *args, **kwargs)

    def update(self, new_scale=None) -> None:
        pass

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return False

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict) -> None:
        pass


class DisabledLossScaler(TorchDisabledScaler, ms.amp.StaticLossScaler):
    """``GradScaler(enabled=False)``: torch's scaler then passes values through (``scale(loss)`` is ``loss``); this is a
    static scaler of 1, so ``scale``/``unscale`` are exact identities and ``adjust`` changes nothing. It takes the
    DynamicLossScaler arguments the GradScaler mapping writes and ignores them. It also answers torch's own GradScaler
    methods (:class:`TorchDisabledScaler`), for the calls the training rule does not rewrite (a scaler held on ``self``
    in a Trainer class whose loop runs through the general training region, or one passed to a helper)."""

    def __init__(self, scale_value=65536.0, scale_factor=2, scale_window=2000):
        super().__init__(1.0)


def cuda_loss_scaler(scale_value=65536.0, scale_factor=2, scale_window=2000):
    """``torch.cuda.amp.GradScaler(...)`` / ``torch.amp.GradScaler("cuda", ...)``: torch scales the loss only where
    CUDA computes; without it the scaler disables itself with a warning (``scale(loss)`` is ``loss``, ``get_scale()``
    1.0, ``step`` the optimizer's step even after an overflow). So a MindSpore GPU run gets
    ``mindspore.amp.DynamicLossScaler`` with torch's values, any other device :class:`DisabledLossScaler` (a static
    scale of 1): what torch does on the same device. ``GradScaler("cpu")`` scales on the CPU and is converted to
    DynamicLossScaler directly."""
    _host_only("torch GradScaler is part of the Python training loop: use it outside construct/@jit")
    if ms.get_context("device_target") == "GPU":
        return ms.amp.DynamicLossScaler(scale_value=scale_value, scale_factor=scale_factor, scale_window=scale_window)
    return DisabledLossScaler(scale_value, scale_factor, scale_window)


# ------------------------------------------------------------------------------------------------------- device

@ms.constexpr
def _gpu_count():
    hal = getattr(ms, "hal", None)  # MindSpore >= 2.3
    if hal is None:
        return 1 if ms.get_context("device_target") == "GPU" else 0
    # torch answers 0 without CUDA; MindSpore's device_count raises when the package has no GPU backend
    return int(hal.device_count("GPU")) if hal.is_available("GPU") else 0


@ms.constexpr
def _accelerator_count():
    hal = getattr(ms, "hal", None)
    if hal is None:
        return 1 if ms.get_context("device_target") in ("GPU", "Ascend") else 0
    return sum(int(hal.device_count(t)) if hal.is_available(t) else 0 for t in ("GPU", "Ascend"))


def accelerator_available() -> bool:
    """``torch.accelerator.is_available()``: a GPU or an Ascend device MindSpore can compute on. A constant, also in
    a static graph (see cuda_available)."""
    return _accelerator_count() > 0


def accelerator_device_count() -> int:
    """``torch.accelerator.device_count()``: MindSpore's GPU and Ascend devices (0 on a CPU-only machine, as
    torch). A constant, also in a static graph."""
    return _accelerator_count()


def cuda_available() -> bool:
    """``torch.cuda.is_available()`` (and ``torch.backends.cudnn.is_available()``): whether MindSpore has a GPU
    backend with a device. A constant, also in a static graph, which cannot call ``ms.hal.is_available`` (a builtin:
    "'builtin_function_or_method' object has no attribute '__code__'"; CapsNet's routing asks inside forward)."""
    return _gpu_count() > 0


def cuda_device_count() -> int:
    """``torch.cuda.device_count()``: MindSpore's GPU count, 0 without a GPU backend (torch's answer without CUDA).
    A constant, also in a static graph (see cuda_available)."""
    return _gpu_count()


def select_device(target, device_id=None) -> None:
    """``device = torch.device(...)``: torch makes a device object and changes nothing global; MindSpore computes
    on one device per process, chosen before its first kernel (``ms.set_device`` raises once one ran: gcnii's
    ``device = torch.device('cpu')`` after its data loading). The device MindSpore already computes on is kept as it
    is (nothing to choose); another is set, with MindSpore's own error where kernels already ran on the current one
    (torch would compute what follows elsewhere: that cannot be followed).

    ``target``: MindSpore's (``"GPU"``, ``"Ascend"``, ``"CPU"``) or torch's designation of a device (a run-time
    ``"cuda:1"``, ``"cpu"``, a ``torch.device``'s string). An accelerator is taken only where ``ms.hal.is_available``
    finds one, else the CPU: torch makes ``torch.device("cuda")`` on any machine, ``ms.set_device("GPU")`` raises
    where there is none. Nothing in a static graph, which cannot call the ``ms.hal`` and context builtins ("has no
    attribute '__code__'"): a device line in a function forward calls (DGCNN's ``get_graph_feature``)."""
    if not _in_graph():
        _set_device(*_mindspore_target(target, device_id))


def _mindspore_target(spec, device_id=None) -> tuple[str, int | None]:
    """(MindSpore's target, device id) of a target or a torch device designation, the CPU for an accelerator this
    machine lacks (see select_device)."""
    kind, _, number = str(spec).partition(":")
    target = {"cuda": "GPU", "npu": "Ascend", "GPU": "GPU", "Ascend": "Ascend"}.get(kind, "CPU")
    if device_id is None and number.isdigit():
        device_id = int(number)
    hal = getattr(ms, "hal", None)  # MindSpore >= 2.3
    if target != "CPU" and hal is not None and not hal.is_available(target):
        return "CPU", None
    return target, (None if device_id is None else int(device_id))


def _set_device(target: str, device_id: int | None) -> None:
    if ms.get_context("device_target") == target and (
            device_id is None or target == "CPU" or ms.get_context("device_id") == device_id):
        return
    if device_id is None:
        ms.set_device(target)
    else:
        ms.set_device(target, device_id)


def keep_cache(owner, name, value):
    """``owner.<name> = value`` for a cache a model builds on first use (``if self.rope_cache is None:``), written by
    SelfCacheTransform after it binds the value to a local. PyNative keeps it on ``owner`` as torch does. A static
    graph (GRAPH_MODE) does not: there an attribute write of a tensor turns the value read after it into an
    interpreted one that later ops refuse ("Failed to infer for primitive:DtypeToEnum", "Invalid input args for
    unpack call", measured on MindSpore 2.10), and the graph builds the value on each call from the local."""
    if not _in_graph():
        setattr(owner, name, value)
    return value


def held_call(cell, *args, _mp_state=None, **kwargs):
    """``cell(*args, **kwargs)`` for a sub-Cell its parent calls more than once in one construct (SegRNN's RevIN:
    ``self.revin(x, 'norm')`` keeps the statistics on self, ``self.revin(y, 'denorm')`` reads them), written by
    SelfCacheTransform: ``(value, state)``. A class that keeps state from one call to the next has a threaded
    ``_mp_construct`` taking the state the previous call gave (None: its own attributes, what PyNative's previous
    call left) and giving ``(value, *state)``; a static graph (GRAPH_MODE) does not carry a sub-Cell's ``self.x``
    write from one call to the next, the state passed along does. Any other cell is called as it is and the state
    handed back unchanged (the class, in another file, keeps no state)."""
    threaded = getattr(cell, "_mp_construct", None)
    if threaded is None:
        return cell(*args, **kwargs), _mp_state
    out = threaded(*args, _mp_state=_mp_state, **kwargs)
    return out[0], out[1:]


def set_data(parameter, value):
    """``p.data = v`` in a model's method (normflows' ActNorm: ``self.s.data = s_init.data``, its data-dependent init
    on the first call). PyNative: that same write. A static graph (GRAPH_MODE) has no SetData kernel on CPU
    ("Unsupported op [SetData]"); ``ops.assign`` writes the Parameter in place there, and the next call sees it, as
    torch's. torch's ``.data =`` may also change the shape or the dtype, which an assign cannot: a graph refuses
    that (at compile time) instead of casting."""
    if _in_graph():
        if value.shape != parameter.shape or value.dtype != parameter.dtype:
            raise ValueError("mindport: in GRAPH_MODE p.data = v needs v of p's shape and dtype (an assign in place)")
        ops.assign(parameter, value)
        return parameter
    if isinstance(parameter, ms.Parameter) and isinstance(value, ms.Tensor) and value.shape == parameter.shape \
            and value.dtype == parameter.dtype:
        # in place: an optimizer MindSpore compiled keeps the storage it was built with, and a Parameter given new
        # data is no longer the one it updates (davda54/sam's second_step: p.data = old_p, then base_optimizer.step()
        # moved nothing from the second step on); torch's optimizers read p's current data
        ops.assign(parameter, value)
        return parameter
    parameter.data = value  # another shape or dtype, a plain tensor, another object's .data: as written
    return parameter


def keep_buffer(owner, name, tensor, persistent=True):
    """``owner.register_buffer(name, tensor, persistent)`` outside ``__init__`` for a cache rebuilt when it is missing
    or too short (PaLM's ``if self.mask is not None and self.mask.shape[-1] >= n: return self.mask[:n, :n]``, then
    ``self.register_buffer("mask", mask, persistent=False)``), written by SelfCacheTransform. PyNative registers it
    as torch does; a static graph refuses ``register_buffer`` in ``construct`` ("is not supported in 'construct'"), so
    there it is not kept: the graph reads what ``__init__`` registered and builds the value on each call."""
    if not _in_graph():
        owner.register_buffer(name, tensor, persistent=persistent)
    return tensor
