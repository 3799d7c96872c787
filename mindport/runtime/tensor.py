"""torch.Tensor methods that exist only as methods or mean something else than the ``torch.*`` function of the same
name, for what MindSpore 2.10 lacks: casts (``char``, ``cfloat``, ``cdouble``, ``type``), ``element_size``,
``new_tensor``/``new_full``, ``unfold`` (sliding windows, not im2col) and ``polygamma`` (``n`` after the receiver).

Converted code imports this module as ``mp_tensor``; a method call ``x.char()`` becomes ``mp_tensor.char(x)`` (the
receiver is the first argument). A method that means the same as a ``torch.*`` function (``x.kthvalue(2)``) calls
that function instead, in :mod:`mindport.runtime.math` or :mod:`mindport.runtime.linalg`.
"""
from __future__ import annotations

import builtins

import numpy as np

import mindspore as ms
from mindspore import ops

from mindspore.ops.primitive import constexpr as _constexpr

from mindport.names import PYTHON_TYPE_DTYPES
from mindport.runtime._graph import host_only as _host_only
from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime.promotion import result_type as _result_type
from mindport.runtime.math import _empty_extent, _nonempty_extent, _reduced_shape

_TYPE_NAMES = {
    "torch.FloatTensor": ms.float32, "torch.DoubleTensor": ms.float64, "torch.HalfTensor": ms.float16,
    "torch.BFloat16Tensor": ms.bfloat16, "torch.LongTensor": ms.int64, "torch.IntTensor": ms.int32,
    "torch.ShortTensor": ms.int16, "torch.CharTensor": ms.int8, "torch.ByteTensor": ms.uint8,
    "torch.BoolTensor": ms.bool_,
}


# ------------------------------------------------------------------------------------------------ casts, sizes

def _cast(x, dtype):
    """``x.astype(dtype)``, but complex to bool is ``x != 0`` as in torch (MindSpore's cast reads the real part only:
    ``0+3.5j`` became False)."""
    if dtype == ms.bool_ and x.dtype in (ms.complex64, ms.complex128):
        return x != 0
    return x.astype(dtype)


def bool_(x):
    """``x.bool()``: nonzero is True, for complex values too (see ``_cast``)."""
    return _cast(x, ms.bool_)


def char(x):
    """``x.char()``: cast to int8 (MindSpore's Tensor has no ``char`` method)."""
    return x.astype(ms.int8)


def cfloat(x):
    """``x.cfloat()``: cast to complex64 (no ``cfloat`` method in MindSpore)."""
    return x.astype(ms.complex64)


def cdouble(x):
    """``x.cdouble()``: cast to complex128 (no ``cdouble`` method in MindSpore)."""
    return x.astype(ms.complex128)


def type(x, dtype=None, non_blocking=False, **kwargs):  # noqa: A001 - torch's method name
    """``x.type(dtype)``: a cast; ``dtype`` may be a dtype, a torch type name such as ``'torch.FloatTensor'`` or the
    type itself (``torch.ByteTensor``, which converted code holds as its adapter; ``torch.Tensor``, held as
    ``ms.Tensor``, is the default type: float32).
    Without ``dtype`` torch returns the type name: the name of the matching CPU torch type is returned."""
    if dtype is None:
        for name, ms_dtype in _TYPE_NAMES.items():
            if x.dtype == ms_dtype:
                return name
        raise TypeError(f"no torch type name for {x.dtype}")
    if isinstance(dtype, str):
        name = dtype.replace("torch.cuda.", "torch.")
        if name not in _TYPE_NAMES:
            raise TypeError(f"unknown torch type name {dtype!r}")
        dtype = _TYPE_NAMES[name]
    elif dtype is ms.Tensor:  # x.type(torch.Tensor): torch.Tensor is the default tensor type, float32
        dtype = ms.float32
    else:
        dtype = _type_dtype(dtype)
    return _cast(x, dtype)


@ms.constexpr
def _type_dtype(dtype):
    """``x.type(torch.ByteTensor)``: the tensor type itself (converted code holds it as its adapter) is its dtype; a
    dtype is itself. A constant: graph mode computes it at compile time."""
    name = getattr(dtype, "torch_name", None)
    return _TYPE_NAMES.get(name.replace("torch.cuda.", "torch."), dtype) if isinstance(name, str) else dtype


# torch.Tensor's accessors of sparse layouts: on a dense (strided) tensor a call raises, with these layouts named
_SPARSE_ACCESSORS = {"values": "sparse", "indices": "sparse coordinate", "is_coalesced": "sparse coordinate",
                     "coalesce": "sparse coordinate", "crow_indices": "sparse row compressed",
                     "col_indices": "sparse row compressed", "ccol_indices": "sparse column compressed",
                     "row_indices": "sparse column compressed"}


def method_value(x, name):
    """``x.<name>`` where torch reads a Tensor method as a value, without calling it (``m = torch.mean(b, 0).values``,
    ``f = t.is_coalesced``): torch gives a bound method, and reading it never fails. The same here: on a MindSpore
    tensor, a callable. Called, a sparse accessor of a dense tensor raises torch's RuntimeError; a method MindSpore's
    Tensor also has is MindSpore's (a call written later is not converted by mindport: the site is flagged MP104);
    any other raises NotImplementedError naming the method. Not a tensor: the attribute as it is."""
    if not isinstance(x, ms.Tensor):
        return getattr(x, name)
    if name in _SPARSE_ACCESSORS:
        layout = _SPARSE_ACCESSORS[name]

        def sparse_accessor(*args, **kwargs):
            raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided")
        return sparse_accessor
    own = getattr(x, name, None)
    if callable(own):
        return own

    def unconverted(*args, **kwargs):
        raise NotImplementedError(f"torch.Tensor.{name} was read as a value and called later: mindport converts a "
                                  "tensor method where it is called (MP104)")
    return unconverted


def size_of(x, dim=None):
    """``x.size()`` / ``x.size(d)`` in ``__init__`` on a receiver nothing in its file tells the kind of, an
    attribute of a parameter (NCRF++'s ``nn.Embedding(data.word_alphabet.size(), d)``, whose ``Alphabet`` class is
    the project's own): a MindSpore tensor gives its shape (torch.Size is a tuple) or one extent, as torch's
    ``Tensor.size``; any other object answers with its own ``size`` method."""
    if isinstance(x, ms.Tensor):
        return tuple(x.shape) if dim is None else x.shape[dim]
    return x.size() if dim is None else x.size(dim)


def element_size(x) -> int:
    """``x.element_size()``: bytes per element (MindSpore spells it as the property ``itemsize``)."""
    return x.itemsize


class _Storage(list):
    """What torch's ``Tensor.storage()`` is read for: the values in memory order (``tolist()``, ``len``, indexing,
    ``size()``); a copy, so writing into it does not reach the tensor."""

    def tolist(self) -> list:
        return list(self)

    def size(self) -> int:
        return len(self)


def storage(x) -> _Storage:
    """``x.storage()``: the tensor's values as a flat list (MindSpore's ``Tensor.storage()`` is an untyped byte store
    with no ``tolist``)."""
    _host_only("x.storage() is a Python list of the tensor's values: call it outside "
               "construct/@jit")
    return _Storage(x.asnumpy().reshape(-1).tolist())


def to_sparse(x, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``x.to_sparse()``: the values, kept dense. MindSpore's buffers and most of its ops take dense tensors only
    (``register_buffer`` refuses a COOTensor: whisper's alignment heads), and every value reads the same; methods only
    a sparse tensor has (``indices()``, ``values()``, ``_nnz()``) then fail loudly."""
    return x


def to_dense(x, dtype=None, *, masked_grad=None):
    """``x.to_dense()``: a COOTensor/CSRTensor's dense form; a dense tensor itself (what :func:`to_sparse` keeps)."""
    out = x.to_dense() if hasattr(x, "to_dense") and not isinstance(x, ms.Tensor) else x
    return out if dtype is None else out.astype(dtype)


_TORCH_DEVICE_TYPES = {"CPU": "cpu", "GPU": "cuda", "Ascend": "npu"}


@ms.constexpr
def _device_designation():
    target = ms.get_context("device_target")
    kind = _TORCH_DEVICE_TYPES.get(target, target.lower())
    return kind if kind == "cpu" else f"{kind}:{ms.get_context('device_id')}"


@ms.constexpr
def _device_ordinal():
    return -1 if ms.get_context("device_target") == "CPU" else int(ms.get_context("device_id"))


def get_device(x):
    """``x.get_device()``: torch's device ordinal, -1 for a CPU tensor and the device index otherwise (FoldingNet's
    ``if idx.get_device() == -1:`` picks its CPU path by it). Placement is global in MindSpore: the ordinal of the
    device MindSpore computes on (-1 on CPU, ``device_id`` on a GPU or an Ascend device); a constant, also in a
    graph."""
    return _device_ordinal()


def device(x):
    """``x.device``: where the tensor lives, as ``str(tensor.device)`` reads in torch (``'cpu'``, ``'cuda:0'``): the
    converter writes ``torch.device(...)`` as that string, so ``x.device == torch.device('cpu')`` and ``str(x.device)``
    keep their answers (MindSpore's ``Tensor.device`` reads ``'CPU'``). Placement is global in MindSpore: the device
    MindSpore computes on. A constant, also in a graph, which does not compile ``Tensor.device``: the line reading it
    would run through the JIT Fallback, and whatever that line also binds (``n, device = x.shape[-2], x.device``)
    would become an interpreted value that later ops fail on."""
    return _device_designation()


def is_cuda(x):
    """``x.is_cuda``: whether MindSpore computes on a GPU (placement is global). A constant, also in a static graph,
    which does not compile ``ms.get_context`` (ENet's ``if input.is_cuda:`` inside ``forward`` failed to compile)."""
    return _device_designation().startswith("cuda")


_TO_KEYWORDS = ("dtype", "device", "non_blocking", "copy", "memory_format", "other", "layout", "pin_memory")


def _python_dtype(value):
    """A Python type torch takes wherever it takes a dtype (``x.to(bool)``, ``dtype=float``) as torch reads it
    (mindport.names.PYTHON_TYPE_DTYPES); any other value as it is."""
    if value is bool or value is int or value is float or value is complex:
        return getattr(ms, PYTHON_TYPE_DTYPES[value.__name__].rpartition(".")[2])
    return value


def to(x, *args, **kwargs):
    """``x.to(a)`` when the converter cannot tell what ``a`` is, decided on the value: a dtype casts, a tensor casts
    to its dtype (torch: and its device), a device (a string, an index, None) leaves ``x`` where it is (placement is
    global in MindSpore). ``x`` may be a Cell (``model.to(torch.float64)``): its floating-point Parameters are cast
    in place. ``dtype=`` casts, ``other=`` casts to its dtype; ``device=``, ``non_blocking=``, ``copy=``,
    ``memory_format=``, ``layout=``, ``pin_memory=`` have no effect. Like torch, returns ``x`` itself when nothing
    changes. Compiles in a graph (no set literal: the graph compiler has no sets), where the decision is made at
    compile time."""
    for key in kwargs:
        if key not in _TO_KEYWORDS:
            raise TypeError("to() got an unexpected keyword argument '" + key + "'")
    dtype = _python_dtype(kwargs.get("dtype"))
    for arg in args + (kwargs.get("other"),):
        if isinstance(arg, ms.Tensor):
            dtype = arg.dtype
        elif isinstance(arg, ms.Type):
            dtype = arg
        elif arg is bool or arg is int or arg is float or arg is complex:  # x.to(bool): Python's types are dtypes
            dtype = _python_dtype(arg)
        elif not (arg is None or isinstance(arg, (str, int, bool))):
            raise TypeError("to() received an invalid argument: expected a dtype, a device or a tensor")
    if isinstance(x, ms.nn.Cell):
        return _cell_to(x, dtype)
    if dtype is None or dtype == x.dtype:
        return x
    return _cast(x, dtype)


_FLOATING = (ms.float16, ms.bfloat16, ms.float32, ms.float64, ms.complex64, ms.complex128)


def _cell_to(cell, dtype):
    """``module.to(dtype)``: the module's floating-point parameters and buffers (registered buffers are non-trainable
    Parameters here) cast in place, the module returned; integer ones stay, as in torch."""
    if dtype is not None:
        if dtype not in _FLOATING:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
        for param in cell.get_parameters():
            if param.dtype in _FLOATING and param.dtype != dtype:
                param.set_dtype(dtype)
    return cell


# ----------------------------------------------------------------------------------------------- construction

def as_tensor(input_data, dtype=None):
    """``torch.as_tensor(data, dtype)`` of a value that may already be a tensor (``torch.as_tensor(t).long()`` on
    a forward's argument, a DDPM UNet's time steps): a tensor is given back as it is, cast only when ``dtype``
    differs, as torch gives it back; other data (a list, an array, a number) becomes ``mindspore.Tensor(data,
    dtype)``. In a static graph (GRAPH_MODE) ``mindspore.Tensor(t)`` of a tensor is run by the Python interpreter,
    and its result has no known dtype or rank: every later op that reads them (a LayerNorm's ``astype(x.dtype)``,
    a MultiheadAttention's rank check) failed to compile. The test on the argument's type is a constant there."""
    if isinstance(input_data, ms.Tensor):
        if dtype is None or input_data.dtype == dtype:
            return input_data
        return input_data.astype(dtype)
    if not _in_graph():
        input_data, dtype = sequence_data(input_data, dtype)
    return ms.Tensor(input_data, dtype=dtype)


_TORCH_INFERRED = {bool: ms.bool_, int: ms.int64, float: ms.float32, complex: ms.complex64}
_WIDTHS = ((ms.complex64, ms.complex128), (ms.float16, ms.bfloat16, ms.float32, ms.float64),
           (ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64))  # each kind's dtypes, narrowest first


def _holds_tensor(data, depth: int = 0) -> bool:
    if isinstance(data, ms.Tensor):
        return depth > 0
    if isinstance(data, (list, tuple)) and depth < 64:
        return any(_holds_tensor(item, depth + 1) for item in data)
    return False


def _scalar_leaves(data, dtypes: list):
    """``data`` (nested lists/tuples) with each tensor a Python number, as torch reads a tensor inside a sequence:
    a scalar, whatever its shape, if it holds one element (ValueError otherwise, torch's message); ``dtypes``
    gathers each leaf's dtype as torch infers it (a tensor's own, a numpy scalar's own, a Python number the
    default's)."""
    if isinstance(data, (list, tuple)):
        return [_scalar_leaves(item, dtypes) for item in data]
    if isinstance(data, ms.Tensor):
        if data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        dtypes.append(data.dtype)
        return data.reshape(()).asnumpy().item()
    if isinstance(data, np.generic):
        dtypes.append(ms.from_numpy(np.asarray(data)).dtype)
        return data.item()
    dtypes.append(_TORCH_INFERRED.get(builtins.type(data), ms.float32))
    return data


def _torch_promoted(dtypes: list):
    """torch's ``promoteTypes`` over the leaves' dtypes: the widest float if any leaf is floating (an integer or bool
    leaf never widens it: int64 with float32 is float32), else the widest integer, else bool."""
    for widths in _WIDTHS:
        found = [d for d in dtypes if d in widths]
        if found:
            return builtins.max(found, key=widths.index)
    return ms.bool_


def sequence_data(data, dtype=None):
    """``data`` of a tensor constructor (``torch.tensor``/``as_tensor``/``FloatTensor``... of a list) as torch reads
    it, and the dtype torch infers: a tensor inside a list or tuple is a scalar when it holds one element, so
    ``torch.tensor([t1, t2])`` of shape-(1,) tensors is shape (2,) (``mindspore.Tensor`` stacks them: (2, 1); a
    REINFORCE-with-GAE script's returns became (T, 1) and broadcast its loss against (T,) values). Data without a
    tensor inside is returned as it is, with ``dtype`` unchanged."""
    if not _holds_tensor(data):
        return data, dtype
    dtypes: list = []
    values = _scalar_leaves(data, dtypes)
    inferred = dtype if dtype is not None else _torch_promoted(dtypes)
    return values, inferred


def tensor(data, dtype=None):
    """``torch.tensor(data, dtype)`` of data that is not a literal: a list or tuple holding tensors is read as torch
    reads it (:func:`sequence_data`: one-element tensors are scalars); anything else is ``mindspore.Tensor(data,
    dtype)``, as before. In a static graph (GRAPH_MODE) it is ``mindspore.Tensor`` unchanged."""
    if _in_graph():
        return ms.Tensor(data, dtype=dtype)
    data, dtype = sequence_data(data, dtype)
    return ms.Tensor(data, dtype=dtype)


def new_tensor(x, data, dtype=None):
    """``x.new_tensor(data)``: a new tensor from ``data`` with ``x``'s dtype unless ``dtype`` is given (MindSpore's
    Tensor has no ``new_tensor``; ``mindspore.Tensor(data)`` would infer the dtype from the data instead)."""
    dtype = dtype if dtype is not None else x.dtype
    if isinstance(data, ms.Tensor):
        return data.astype(dtype)
    return ms.Tensor(data, dtype=dtype)


def new_full(input, size, fill_value, dtype=None):
    """Tensor.new_full: a tensor of ``size`` filled with ``fill_value``, the receiver's dtype by default;
    Tensor.new_full raises 'new_full method support Ascend only' on CPU in 2.10."""
    return ops.full(tuple(size), fill_value, dtype=dtype or input.dtype)


def new(input, *data, dtype=None):
    """torch's legacy ``x.new(...)`` (Beta-VAE: ``std.data.new(std.size()).normal_()``): a tensor of the receiver's
    dtype: ``x.new()`` empty; ``x.new(2, 3)`` or ``x.new(x.size())`` of those sizes (zeros, where torch leaves memory
    uninitialised); ``x.new([1, 2])`` / an array / a tensor from that data. ``x.size()`` converts to MindSpore's shape,
    a plain tuple, so a tuple of ints is read as sizes (torch reads a tuple that is not a torch.Size as data). A
    receiver that is no tensor (the converter rewrites ``.new`` on receivers it cannot type): its own ``new``."""
    if not isinstance(input, ms.Tensor) and hasattr(input, "new"):
        return input.new(*data) if dtype is None else input.new(*data, dtype=dtype)
    dtype = input.dtype if dtype is None else dtype
    if not data:
        return ops.zeros((0,), dtype)
    if len(data) == 1 and isinstance(data[0], tuple) and all(isinstance(n, (int, np.integer)) for n in data[0]):
        data = data[0]
    if all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in data):
        return ops.zeros(tuple(int(n) for n in data), dtype)
    if len(data) > 1:
        raise TypeError(f"new(): expected data or sizes, got {data!r}")
    value = data[0]
    if isinstance(value, ms.Tensor):
        return value.astype(dtype)
    return ms.Tensor(np.asarray(value), dtype)


# ------------------------------------------------------------------------------------ other meaning than torch.*

def unfold(input, dimension, size, step):
    """Tensor.unfold: all windows of ``size`` elements every ``step`` along ``dimension``, as a new last axis.
    mindspore's Tensor.unfold is im2col (ops.unfold); this gathers the windows along ``dimension``."""
    dim = dimension % input.ndim if input.ndim else 0
    if input.ndim == 0:
        return input.reshape(1)
    count = (input.shape[dim] - size) // step + 1
    index = (ops.arange(count, dtype=ms.int64) * step).reshape(-1, 1) + ops.arange(size, dtype=ms.int64).reshape(1, -1)
    out = ops.gather(input, index.reshape(-1), dim)
    out = out.reshape(*input.shape[:dim], count, size, *input.shape[dim + 1:])
    return ops.moveaxis(out, dim + 1, -1)


def polygamma(x, n):
    """``x.polygamma(n)``: ``mindspore.ops.polygamma`` takes ``n`` first, as a Tensor."""
    return ops.polygamma(ms.Tensor(n, ms.int64) if not isinstance(n, ms.Tensor) else n, x)


# ------------------------------------------------------------------------------------- torch.Size, layouts, formats

class _SizeType(builtins.type):  # this module defines type() (x.type())
    def __instancecheck__(cls, obj):  # a MindSpore shape is a plain tuple: isinstance(x.shape, torch.Size) holds
        return isinstance(obj, tuple)


class Size(tuple, metaclass=_SizeType):
    """torch.Size: a tuple of ints (MindSpore shapes are plain tuples, which compare equal to it) with ``numel()``."""

    def __new__(cls, sizes=()):
        _host_only("torch.Size is a plain tuple inside construct or @jit (a graph has no tuple "
                   "subclasses, so numel() is missing): use the tuple, and math.prod(shape) for numel()")
        return super().__new__(cls, (int(s) for s in sizes))

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"torch.Size({list(self)!r})"


# torch's layouts and memory formats. MindSpore tensors are dense and contiguous: where torch takes one of these
# (torch.zeros(..., layout=torch.strided), x.contiguous(memory_format=...)) the mapping drops the argument; these
# names stand for them where the code refers to them otherwise (a default value, a comparison).
strided = "torch.strided"
contiguous_format = "torch.contiguous_format"
channels_last = "torch.channels_last"
channels_last_3d = "torch.channels_last_3d"
preserve_format = "torch.preserve_format"


def is_signed(x):
    """torch.is_signed / Tensor.is_signed: False only for unsigned and bool dtypes (MindSpore's says False for
    float16, silently, on 2.10)."""
    return x.dtype not in (ms.uint8, ms.uint16, ms.uint32, ms.uint64, ms.bool_)


# ------------------------------------------------------------------------------------- typed tensor constructors

def _on_accelerator() -> bool:
    """Whether the tensors of this run live on an accelerator (MindSpore's device target is not the CPU): where torch
    code's ``.cuda()`` tensors would be."""
    return ms.get_context("device_target") != "CPU"


class _TypedTensorMeta(builtins.type):
    """The metaclass of torch's legacy typed tensor types as converted code holds them (``torch.FloatTensor``,
    ``torch.cuda.LongTensor``): calling one builds a tensor (torch's constructor), and ``isinstance(x, T)`` is what
    torch answers for a tensor on the same device: its dtype is T's and T is a CUDA type exactly when the run is on an
    accelerator (a CPU run: ``isinstance(x, torch.cuda.FloatTensor)`` is False, as torch on the CPU says, so
    DCGAN's ``isinstance(input.data, torch.cuda.FloatTensor) and self.ngpu > 1`` takes its single-device branch)."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, ms.Tensor) and obj.dtype == cls.dtype and cls.is_cuda == _on_accelerator()

    def __repr__(cls) -> str:
        return f"<class '{cls.torch_name}'>"


@_constexpr
def _typed_dtypes(classes):
    """The dtypes of the typed tensor types in ``classes`` (one or a tuple) that match a tensor of this run (CPU
    types on the CPU, cuda types on an accelerator): a constant, computed when a graph compiles."""
    classes = classes if isinstance(classes, tuple) else (classes,)
    return tuple(c.dtype for c in classes if getattr(c, "is_cuda", None) == _on_accelerator())


def is_typed(value, classes):
    """``isinstance(value, torch.FloatTensor)`` / ``(torch.LongTensor, torch.cuda.LongTensor)`` in a model's
    methods: the classes' own isinstance (see _TypedTensorMeta) in PyNative; a static graph does not call a
    metaclass's ``__instancecheck__`` (measured on 2.10: ``isinstance(x, FloatTensor)`` is False there for every
    tensor), so there the test is the tensor's dtype against the matching types' dtypes, a constant."""
    if not _in_graph():
        return isinstance(value, classes)
    if not isinstance(value, ms.Tensor):
        return False
    return value.dtype in _typed_dtypes(classes)


def _dtype_kind(dtype) -> str:
    """bool, integer, float or complex: the classes torch's typed constructors tell apart (see _typed_constructor)."""
    if dtype == ms.bool_:
        return "bool"
    for kind, widths in zip(("complex", "float", "integer"), _WIDTHS):
        if dtype in widths:
            return kind
    return "integer"  # uint16/32/64: integers


def _tensor_leaves(data):
    if isinstance(data, ms.Tensor):
        yield data
    elif isinstance(data, (list, tuple)):
        for item in data:
            yield from _tensor_leaves(item)


def _typed_constructor(name: str, dtype, cuda: bool = False):
    torch_name = f"torch.cuda.{name}" if cuda else f"torch.{name}"

    def make(cls, *data, size=None, device=None):
        if size is not None:  # torch.FloatTensor(size=(d_in, d_out)): the sizes as a keyword (nothing else with it)
            if data:
                raise TypeError(f"{torch_name}: data and size= together (torch takes one or the other)")
            return ops.zeros(tuple(int(n) for n in size), dtype)
        if not data:  # torch.FloatTensor(): an empty 1-D tensor, not a 0-d one
            return ops.zeros((0,), dtype)
        if len(data) == 1 and not isinstance(data[0], int):
            value = data[0]
            if isinstance(value, ms.Tensor):
                # torch refuses a tensor of another dtype ("expected TensorOptions(dtype=long int ...)": LongTensor of
                # a float tensor, FloatTensor of an int64 or a float64 one): refused here too, except between two
                # integer widths, cast, since MindSpore's ops may give another integer width than torch's (int32
                # indices where torch has int64).
                if value.dtype != dtype and not (_dtype_kind(value.dtype) == _dtype_kind(dtype) == "integer"):
                    raise TypeError(f"{torch_name}(tensor): expected a {dtype} tensor, got {value.dtype} (torch "
                                    f"refuses another dtype's tensor: convert it first, e.g. x.long() / x.float())")
                return value.astype(dtype)
            if _holds_tensor(value):
                if _dtype_kind(dtype) in ("bool", "integer") and builtins.any(
                        _dtype_kind(t.dtype) in ("float", "complex") for t in _tensor_leaves(value)):
                    # torch reads each tensor of the list as an index: a floating one is refused (Python floats
                    # in the list are truncated, as torch truncates them)
                    raise TypeError("only integer tensors of a single element can be converted to an index")
                value = sequence_data(value, dtype)[0]
            return ms.Tensor(np.asarray(value), dtype)
        if not all(isinstance(n, int) for n in data):
            raise TypeError(f"{name}: expected data or sizes, got {data!r}")
        return ops.zeros(tuple(data), dtype)

    doc = (f"``{torch_name}(data)`` / ``{torch_name}(*sizes)`` / ``{torch_name}(size=sizes)``: a {dtype} tensor from "
           f"a list, array or tensor, or of the given sizes (zeros; torch leaves them uninitialised). MindSpore has no typed tensor classes: "
           f"``isinstance(x, {torch_name})`` is True for a {dtype} tensor when the run is "
           f"{'on an accelerator' if cuda else 'on the CPU'} (see _TypedTensorMeta).")
    return _TypedTensorMeta(f"cuda_{name}" if cuda else name, (), {
        "__new__": make, "__doc__": doc, "__module__": __name__, "dtype": dtype, "is_cuda": cuda,
        "torch_name": torch_name, "__slots__": ()})


FloatTensor = _typed_constructor("FloatTensor", ms.float32)


def Tensor(*data, size=None, device=None):  # noqa: N802 - torch's name
    """``torch.Tensor(...)`` called: of a tensor, that tensor (its dtype kept, as torch returns it); otherwise
    ``torch.FloatTensor``'s meaning (data or sizes, float32 whatever the data: ``ms.Tensor([1, 2])`` is int64;
    ``size=`` the sizes as a keyword)."""
    if len(data) == 1 and isinstance(data[0], ms.Tensor) and size is None:
        return data[0]
    return FloatTensor(*data, size=size, device=device)


def sparse_FloatTensor(*data, device=None):  # noqa: N802 - torch's name
    """``torch.sparse.FloatTensor(*sizes)`` / ``(indices, values[, size])``: the sparse float32 tensor's values,
    kept dense as :func:`to_sparse` keeps them: zeros of those sizes (KGAT's placeholder adjacency Parameter), or
    ``values`` written at the columns of ``indices`` (sparse_dim x nnz), duplicates summed as torch's coalesce sums
    them; without ``size`` each sparse dimension is its largest index + 1. A constructor of the model's set-up
    (``__init__``): without ``size`` it reads the indices on the host, so inside construct/@jit it raises."""
    _host_only("torch.sparse.FloatTensor is built where the model is set up (__init__): call it outside "
               "construct/@jit")
    if not data or isinstance(data[0], int):
        return FloatTensor(*data) if data else ops.zeros((0,), ms.float32)
    indices, values = data[0], data[1]
    values = values if isinstance(values, ms.Tensor) else ms.Tensor(np.asarray(values))
    indices = indices if isinstance(indices, ms.Tensor) else ms.Tensor(np.asarray(indices))
    if len(data) > 2:
        size = tuple(int(n) for n in data[2])
    else:
        size = tuple(int(n) + 1 for n in indices.max(axis=1).asnumpy().tolist()) + tuple(values.shape[1:])
    dense = ops.zeros(size, ms.float32)
    return ops.tensor_scatter_add(dense, indices.astype(ms.int64).swapaxes(0, 1), values.astype(ms.float32))


DoubleTensor = _typed_constructor("DoubleTensor", ms.float64)
HalfTensor = _typed_constructor("HalfTensor", ms.float16)
BFloat16Tensor = _typed_constructor("BFloat16Tensor", ms.bfloat16)
LongTensor = _typed_constructor("LongTensor", ms.int64)
IntTensor = _typed_constructor("IntTensor", ms.int32)
ShortTensor = _typed_constructor("ShortTensor", ms.int16)
CharTensor = _typed_constructor("CharTensor", ms.int8)
ByteTensor = _typed_constructor("ByteTensor", ms.uint8)
BoolTensor = _typed_constructor("BoolTensor", ms.bool_)
# torch.cuda.<Type>: the same constructors; isinstance is True on an accelerator run only
cuda_FloatTensor = _typed_constructor("FloatTensor", ms.float32, cuda=True)
cuda_DoubleTensor = _typed_constructor("DoubleTensor", ms.float64, cuda=True)
cuda_HalfTensor = _typed_constructor("HalfTensor", ms.float16, cuda=True)
cuda_BFloat16Tensor = _typed_constructor("BFloat16Tensor", ms.bfloat16, cuda=True)
cuda_LongTensor = _typed_constructor("LongTensor", ms.int64, cuda=True)
cuda_IntTensor = _typed_constructor("IntTensor", ms.int32, cuda=True)
cuda_ShortTensor = _typed_constructor("ShortTensor", ms.int16, cuda=True)
cuda_CharTensor = _typed_constructor("CharTensor", ms.int8, cuda=True)
cuda_ByteTensor = _typed_constructor("ByteTensor", ms.uint8, cuda=True)
cuda_BoolTensor = _typed_constructor("BoolTensor", ms.bool_, cuda=True)



def max(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """``torch.max`` / ``Tensor.max``, all three forms: no dim (the largest value), a dim (the (values, indices)
    pair: ``ops.max``; a static graph's ``x.max(1)`` gives the values only), a tensor (elementwise maximum). It
    compiles in a graph: which form it is is known when the graph compiles."""
    if isinstance(dim, ms.Tensor):
        return ops.maximum(input, dim)
    _nonempty_extent("max", input, dim)  # MindSpore returns uninitialised memory, torch raises
    if input.dtype == ms.bool_:  # MindSpore's ReduceMax/ArgMaxWithValue refuse bool: in uint8, values back as bool
        return _bool_result(_reduced_max(input.astype(ms.uint8), dim, keepdim), dim)
    return _reduced_max(input, dim, keepdim)


# max/min reduce through these, never by calling themselves by name: graph code reads the names ``max``/``min`` as
# Python's builtins (a graph compiled the bool branch of ``max`` as builtin max(a, b, c): "The parameters number of
# the function is 2, but the number of provided arguments is 3", NCRF++'s CRF Viterbi, ``torch.max(cur_values, 1)``
# in a loop over a tensor's rows)
def _reduced_max(input, dim, keepdim):
    if dim is None:
        return input.max()
    if _empty_extent(input.shape, None):  # no element, reduced extent not empty: ops.max raises, torch gives no rows
        return _no_rows(input, dim, keepdim)
    return ops.max(input, dim, keepdim)


def _reduced_min(input, dim, keepdim):
    if dim is None:
        return input.min()
    if _empty_extent(input.shape, None):
        return _no_rows(input, dim, keepdim)
    return ops.min(input, dim, keepdim)


def min(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """``torch.min`` / ``Tensor.min``: as :func:`max`, with the smallest values."""
    if isinstance(dim, ms.Tensor):
        return ops.minimum(input, dim)
    _nonempty_extent("min", input, dim)
    if input.dtype == ms.bool_:
        return _bool_result(_reduced_min(input.astype(ms.uint8), dim, keepdim), dim)
    return _reduced_min(input, dim, keepdim)


def _bool_result(result, dim):
    """A max/min computed on a bool tensor as uint8: its values as bool again (the indices as they are)."""
    if dim is None:
        return result.astype(ms.bool_)
    return result[0].astype(ms.bool_), result[1]


def _no_rows(input, dim, keepdim):
    """(values, int64 indices) of a max/min over ``dim`` of a tensor without elements: empty, in torch's shape."""
    shape = _reduced_shape(input.shape, dim, keepdim)
    return ops.zeros(shape, input.dtype), ops.zeros(shape, ms.int64)


def requires_grad(x) -> bool:
    """``x.requires_grad``: a Parameter's flag; a tensor's own flag when ``requires_grad_`` set one; True for the
    loss a converted backward region differentiated (``mindport.runtime.training.value_and_grad`` marks the value it
    returns, as torch's loss is a node of its graph); else False. A MindSpore Tensor has no such attribute of its own
    (gradients are what ``grad``/``value_and_grad`` compute for the arguments asked), so another tensor computed from
    Parameters reads False where torch's autograd reads True.

    A Parameter's flag is read as it is: in a static graph (GRAPH_MODE compiles ``forward``) MindSpore refuses that
    read ("'Parameter' object's method 'requires_grad' is not supported in 'construct'"), loudly, where the
    ``getattr`` default read False for every Parameter, silently (objsurf28)."""
    if isinstance(x, ms.Parameter):
        return x.requires_grad
    return bool(getattr(x, "requires_grad", False))


def dtype_text(dtype) -> str:
    """``str(x.dtype)`` as torch writes it: ``'torch.float32'`` for MindSpore's ``Float32`` (``'torch.bfloat16'``,
    ``'torch.int64'``, ``'torch.bool'``: torch's names are MindSpore's lower-cased); anything else (a numpy dtype, a
    string) its own ``str``."""
    if isinstance(dtype, ms.Type):
        return "torch." + str(dtype).lower()
    return str(dtype)


def grad(x):
    """``x.grad``: the gradient ``mindport.runtime.training`` keeps on the tensor (``backward(grads)`` adds into it,
    ``zero_grad`` resets it), None where no backward reached it, as torch's."""
    return getattr(x, "grad", None)


def is_cpu(x) -> bool:
    """``x.is_cpu``: placement is global in MindSpore; whether it computes on the CPU."""
    return _device_designation() == "cpu"


def formattable(x):
    """``format(x, spec)`` with a spec (``f"{loss:.4f}"``, ``"{:.6f}".format(loss)``) as torch's
    ``Tensor.__format__``: a 0-d tensor formats as its Python number; anything else is returned as it is (a tensor
    of more dimensions refuses a spec in both frameworks). MindSpore's Tensor refuses every spec."""
    if isinstance(x, ms.Tensor) and x.ndim == 0:
        return x.item()
    return x


@_constexpr(check=False)
def _joined_dtype(dtypes):
    """torch's common type of the dtypes (mindport.runtime.promotion.result_type), a MindSpore dtype; a constant in a
    graph."""
    return getattr(ms, _result_type(str(d).lower() for d in dtypes).replace("bool", "bool_"))


def promoted(tensors):
    """The tensors a torch join (``torch.cat``, ``stack``, ``column_stack``, ... : mindport.runtime.promotion.JOINS)
    is given, each in their common type as torch promotes them (``column_stack([float32, int64])`` is float32):
    MindSpore's Concat and Stack refuse mixed dtypes. The converter writes ``ops.column_stack(mp_tensor.promoted(
    (x, c)))`` where a member's dtype may differ from the others', and MindSpore's own call where its facts say they
    all have one. Tensors already of that type are passed as they are; PyNative and GRAPH_MODE."""
    tensors = tuple(tensors)
    target = _joined_dtype(tuple(t.dtype for t in tensors))
    return tuple(t if t.dtype == target else t.astype(target) for t in tensors)


def cat(tensors, axis=0, dim=None):
    """torch.cat where a member may be a 1-D tensor of no elements (``acc = torch.tensor([])`` grown by cat in a
    loop): torch skips such members (its legacy rule), MindSpore's Concat refuses their rank. The others are joined
    by ``ops.cat`` in the common type of all of them (torch's promotion, :func:`promoted`); all of them empty gives
    the first."""
    axis = axis if dim is None else dim
    tensors = promoted(tensors)
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not kept:
        return tensors[0]
    return kept[0] if len(kept) == 1 else ops.cat(kept, axis)


# ------------------------------------------------------------------------------------------------ guarded slicing
# MindSpore 2.10's CPU backward of basic slicing fails in two classes (measured, tests/training/
# test_fresh20_causes.py; table in the converter rule SliceGuardTransform's docs):
# * a slice with a step on an axis after another axis the index keeps (``x[:, :, 0::2]`` of a 4-d tensor,
#   ``x[..., 1::2, 1::2]``, ``x[::2, ::2]`` of a 3-d one): StridedSliceGrad, "N input memory out of bounds" (the
#   kernel sizes the stepped axis of the incoming gradient as end - begin, not as its count);
# * an empty result (``p[i, :yi]`` with ``yi`` 0; ``x[2:2, 1]``): StridedSliceGrad "0 input memory out of bounds"
#   when a bound is 0, UnsortedSegmentSum "loop_size_" when an integer index follows the empty slice.
# The forward is right in both. ``sliced`` gives the same values with a backward that avoids both kernels.


def _index_int(value):
    """``value`` as an int when it is one (a Python or numpy integer, a 0-d integer tensor), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, ms.Tensor) and value.ndim == 0 and value.dtype in (ms.int8, ms.int16, ms.int32, ms.int64,
                                                                            ms.uint8, ms.uint16, ms.uint32, ms.uint64):
        return int(value)
    return None


def _plain_slice(item):
    """A slice with int bounds (numpy integers and 0-d integer tensors read as ints), or None when a bound is none
    of these."""
    bounds = []
    for bound in (item.start, item.stop, item.step):
        if bound is None:
            bounds.append(None)
            continue
        value = _index_int(bound)
        if value is None:
            return None
        bounds.append(value)
    return builtins.slice(*bounds)


def sliced(input, index):
    """``input[index]`` for a basic index (ints, slices, ``None``, ``...``), written by the converter where a slice has
    a step or a bound read from data (SliceGuardTransform): the same values as MindSpore's (and torch's) subscript,
    with a backward MindSpore 2.10's CPU kernels get right. An empty result is a constant of its shape (nothing
    flows back through it); a stepped axis is taken with ``ops.gather`` (its backward scatters), the rest of the
    index by MindSpore's own subscript with steps of 1. Any other index (a tensor, a list, a mask), an input that
    is no MindSpore tensor, and a static graph: MindSpore's subscript as written."""
    if _in_graph() or not isinstance(input, ms.Tensor):
        return input[index]
    items = index if builtins.type(index) is tuple else (index,)
    plain = []
    for item in items:
        if item is None or item is Ellipsis:
            plain.append(item)
        elif isinstance(item, builtins.slice):
            item = _plain_slice(item)
            if item is None or item.step == 0:
                return input[index]
            plain.append(item)
        else:
            value = _index_int(item)
            if value is None:
                return input[index]
            plain.append(value)
    consumed = builtins.sum(1 for item in plain if item is not None and item is not Ellipsis)
    if plain.count(Ellipsis) > 1 or consumed > input.ndim:
        return input[index]
    if Ellipsis in plain:
        at = plain.index(Ellipsis)
        plain[at:at + 1] = [builtins.slice(None)] * (input.ndim - consumed)
    else:
        plain += [builtins.slice(None)] * (input.ndim - consumed)
    shape, axis, gathers, rest = [], 0, [], []
    for item in plain:
        if item is None:
            shape.append(1)
            rest.append(None)
            continue
        size = input.shape[axis]
        if isinstance(item, int):
            if not -size <= item < size:
                return input[index]  # MindSpore's own error
            rest.append(item)
        else:
            positions = builtins.range(*item.indices(size))
            shape.append(len(positions))
            if item.step not in (None, 1):
                gathers.append((axis, positions))
                rest.append(builtins.slice(None))
            else:
                rest.append(item)
        axis += 1
    if 0 in shape:
        return ops.zeros(tuple(shape), input.dtype)
    if not gathers:
        return input[index]
    out = input
    for axis, positions in gathers:
        out = ops.gather(out, ms.Tensor(list(positions), ms.int64), axis)
    if builtins.all(isinstance(item, builtins.slice) and item == builtins.slice(None) for item in rest):
        return out
    return out[tuple(rest)]
