"""torch.nn layers that MindSpore 2.10 lacks, runs differently, or names differently, as Cells (and two module
functions Cells lack: ``Embedding.from_pretrained``, ``add_module`` on a SequentialCell).

Converted code imports this module as ``mp_nn``. Each Cell keeps torch's constructor arguments, forward
semantics and parameter names (``weight``/``bias``, ``linear1``/``norm1``/``self_attn`` ...), so a torch
state_dict lands on it by name through ``mindport weights``. The computations live in
:mod:`mindport.runtime.nn_functional` and use ``mindspore.ops`` operations with CPU kernels.
"""
from __future__ import annotations

import copy

import mindspore as ms
from mindspore import Parameter, nn, ops
from mindspore.common.initializer import Normal, initializer
from mindspore.nn.cell import _IncompatibleKeys  # what Cell.load_state_dict returns (torch's named pair)
from mindspore.nn.layer.conv import _deconv_output_length  # MindSpore's own output-size rule (Conv1dTranspose)

from mindport.runtime import containers as _containers
from mindport.runtime.held_members import held_members
from mindport.runtime import inplace as _inplace
from mindport.runtime import math as _math
from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime import nn_functional as F


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


# -------------------------------------------------------------------------------------------------- normalization

class _InstanceNorm(nn.Cell):
    """torch.nn.InstanceNorm{1,2,3}d: MindSpore's InstanceNorm has no CPU kernel in 2.10 ('Unsupported op
    [InstanceNorm] on CPU'), always has gamma/beta and ignores track_running_stats. Parameters are ``weight``/``bias``
    (affine) and ``running_mean``/``running_var`` (track_running_stats), as in torch."""

    _spatial = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        # torch holds None where the configuration has no tensor (InstanceNorm2d(affine=False).weight is None)
        self.weight = Parameter(ops.ones(num_features, ms.float32), name="weight") if affine else None
        self.bias = Parameter(ops.zeros(num_features, ms.float32), name="bias") if affine else None
        self.running_mean = Parameter(ops.zeros(num_features, ms.float32), name="running_mean", requires_grad=False) \
            if track_running_stats else None
        self.running_var = Parameter(ops.ones(num_features, ms.float32), name="running_var", requires_grad=False) \
            if track_running_stats else None

    def construct(self, input):
        unbatched = input.ndim == self._spatial + 1
        x = input.unsqueeze(0) if unbatched else input
        stats = self.track_running_stats
        out = F.instance_norm(x, self.running_mean if stats else None, self.running_var if stats else None,
                              self.weight if self.affine else None, self.bias if self.affine else None,
                              self.training or not stats, self.momentum, self.eps)
        return out[0] if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3


class LayerNorm(nn.Cell):
    """torch.nn.LayerNorm with torch's parameter names (``weight``/``bias``) and optional bias, for the
    Transformer layers below (mindspore.nn.LayerNorm calls them gamma/beta and always has a bias)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.normalized_shape = _tuple(normalized_shape, 1)
        self.eps, self.elementwise_affine, self.has_bias = eps, elementwise_affine, bias and elementwise_affine
        self.weight = Parameter(ops.ones(self.normalized_shape, ms.float32), name="weight") \
            if elementwise_affine else None  # torch's None where there is no tensor
        self.bias = Parameter(ops.zeros(self.normalized_shape, ms.float32), name="bias") if self.has_bias else None

    def construct(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight if self.elementwise_affine else None,
                            self.bias if self.has_bias else None, self.eps)


class RMSNorm(nn.Cell):
    """torch.nn.RMSNorm: no MindSpore Cell in 2.10 (ops.rms_norm has no CPU kernel); parameter ``weight``."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = _tuple(normalized_shape, 1)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(ops.ones(self.normalized_shape, ms.float32), name="weight") \
            if elementwise_affine else None  # torch's None where there is no tensor

    def construct(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight if self.elementwise_affine else None, self.eps)


class LocalResponseNorm(nn.Cell):
    """torch.nn.LocalResponseNorm(size, alpha, beta, k): x / (k + alpha * mean of x^2 over a window of ``size``
    channels)^beta (mindport.runtime.nn_functional.local_response_norm). Not mindspore.nn.LRN: its CPU kernel fails
    from 8 channels on in 2.10 ("RuntimeError: Unknown Error!"; GRAPH_MODE "could not execute a primitive"), and its
    window is 2r+1 channels where torch's may be even."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def construct(self, x):
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extend_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(nn.Cell):
    """torch.nn.CrossMapLRN2d (the legacy Lua-torch LRN): x * (k + alpha/size * S)^-beta where S is the running
    channel-window sum of x^2 computed exactly as torch's loop does (a window of (size-1)/2+1 channels ahead; the
    first channel's square is never subtracted). 4-D input only, as torch."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def construct(self, x):
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {x.ndim}D instead.")
        channels = x.shape[1]
        square = x * x
        pre_pad = int((self.size - 1) / 2 + 1)
        current = square[:, 0]
        for c in range(1, min(pre_pad, channels)):
            current = current + square[:, c]
        scales = [current]
        for c in range(1, channels):
            if c < channels - pre_pad + 1:
                current = current + square[:, c + pre_pad - 1]
            if c > pre_pad:
                current = current - square[:, c - pre_pad]
            scales.append(current)
        scale = ops.stack(scales, 1) * (self.alpha / self.size) + self.k
        return ops.pow(scale, -self.beta) * x


# --------------------------------------------------------------------------------------------------- activations

class Softplus(nn.Cell):
    """torch.nn.Softplus: no mindspore.nn.Softplus Cell in 2.10; ops.softplus(x, beta, threshold)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def construct(self, x):
        return ops.softplus(x, self.beta, self.threshold)


class Upsample(nn.Cell):
    """torch.nn.Upsample: mindport's interpolate (torch's values where mindspore.nn.Upsample differs: bicubic with
    align_corners=False, non-integral scale factors)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)


class Softmax(nn.Cell):
    """torch.nn.Softmax: through mindport's softmax (mindspore.nn.Softmax's CPU kernel gives other rows wrong values
    when a row is all -inf; see mindport.runtime.nn_functional.softmax); ``dim=None``: torch's implicit, rank-dependent
    dim, decided per call."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, x):
        return F.softmax(x, self.dim)


class LogSoftmax(nn.Cell):
    """torch.nn.LogSoftmax: through mindport's log_softmax (mindspore.nn.LogSoftmax is 2-3e-6 off in float32 and has
    float32's precision in float64); ``dim=None``: torch's implicit, rank-dependent dim, decided per call."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, x):
        return F.log_softmax(x, self.dim)


class RReLU(nn.Cell):
    """torch.nn.RReLU: random slopes in training, the fixed slope (lower + upper) / 2 in eval (mindspore.nn.RReLU
    samples in both)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def construct(self, x):
        if self.inplace:  # torch writes the result into the input
            return _inplace.rrelu_(x, self.lower, self.upper, self.training)
        return F.rrelu(x, self.lower, self.upper, self.training)


class AlphaDropout(nn.Cell):
    """torch.nn.AlphaDropout: identity in eval; in training drops to SELU's saturation value and rescales."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def construct(self, x):
        return F.alpha_dropout(x, self.p, self.training)


class FeatureAlphaDropout(nn.Cell):
    """torch.nn.FeatureAlphaDropout: AlphaDropout of whole channels; identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def construct(self, x):
        return F.feature_alpha_dropout(x, self.p, self.training)


# ----------------------------------------------------------------------------------------------------- distances

class CosineSimilarity(nn.Cell):
    """torch.nn.CosineSimilarity (mindspore.nn.CosineSimilarity is a batch similarity-matrix metric instead)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def construct(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class FloatFunctional(nn.Cell):
    """torch.nn.quantized.FloatFunctional: the float forms of the operations a quantization-ready model keeps as a
    module (MiDaS's ``self.skip_add = nn.quantized.FloatFunctional()`` then ``self.skip_add.add(out, x)``). In float
    mode torch's methods are the plain operations (its ``activation_post_process`` is an Identity; no parameters);
    torch's ``forward`` raises, and so does this ``construct``."""

    def construct(self, *args):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        return ops.add(x, y)

    def add_scalar(self, x, y):
        return ops.add(x, y)

    def mul(self, x, y):
        return ops.mul(x, y)

    def mul_scalar(self, x, y):
        return ops.mul(x, y)

    def cat(self, x, dim=0):
        return ops.cat(tuple(x), axis=dim)

    def add_relu(self, x, y):
        return ops.relu(ops.add(x, y))

    def matmul(self, x, y):
        return ops.matmul(x, y)


class PairwiseDistance(nn.Cell):
    """torch.nn.PairwiseDistance: ||x1 - x2 + eps||_p over the last dim (no MindSpore Cell in 2.10)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.p, self.eps, self.keepdim = p, eps, keepdim

    def construct(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.p, self.eps, self.keepdim)


# --------------------------------------------------------------------------------------------------------- losses

class _Loss(nn.Cell):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class SoftMarginLoss(_Loss):
    """torch.nn.SoftMarginLoss: the SoftMarginLoss kernel is not registered on CPU in 2.10."""

    def construct(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """torch.nn.MultiLabelMarginLoss with torch's int64 targets (mindspore.nn.MultilabelMarginLoss wants int32 and
    has no CPU kernel in 2.10)."""

    def construct(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(nn.Cell):
    """torch.nn.TripletMarginLoss with any p (no TripletMarginLoss CPU kernel in 2.10)."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.margin, self.p, self.eps, self.swap, self.reduction = margin, p, eps, swap, reduction

    def construct(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     reduction=self.reduction)


# ---------------------------------------------------------------------------------------- embedding, fold, unfold

class EmbeddingBag(nn.Cell):
    """torch.nn.EmbeddingBag (mode 'sum'/'mean'/'max', offsets or 2-D bags, per_sample_weights, padding_idx);
    parameter ``weight`` (num_embeddings, embedding_dim), initialised N(0, 1) like torch."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None):
        super().__init__()
        if max_norm is not None:
            raise ValueError("EmbeddingBag: max_norm (in-place renormalisation of the weight) is not supported")
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.mode, self.include_last_offset, self.padding_idx = mode, include_last_offset, padding_idx
        if _weight is not None:
            data = _weight if isinstance(_weight, ms.Tensor) else ms.Tensor(_weight)
        else:
            data = initializer(Normal(1.0), (num_embeddings, embedding_dim), ms.float32).init_data()
            if padding_idx is not None:
                data[padding_idx] = 0
        self.weight = Parameter(data, name="weight")

    def construct(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)


class OptionalAffineLayerNorm(nn.LayerNorm):
    _mp_nn_LayerNorm_construct = nn.LayerNorm.construct

    """``torch.nn.LayerNorm`` with ``elementwise_affine=False`` or ``bias=False`` (MindSpore's LayerNorm always has
    gamma and beta Parameters): the missing scale is ones and the missing shift zeros, held as constants, so the Cell
    has the Parameters torch's module has (none, or ``gamma`` for torch's ``weight``) and a checkpoint carries the
    same, under MindSpore's names (the mapping table's weight rule applies unchanged). Also a ``normalized_shape``
    of several axes (``nn.LayerNorm([n_vertex, channels])``): the begin axis is the input's rank minus their number.
    Otherwise ``mindspore.nn.LayerNorm`` itself. (:class:`LayerNorm` above keeps torch's names, for the Transformer layers.)"""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=ms.float32, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, begin_norm_axis, begin_params_axis, gamma_init, beta_init, epsilon, dtype)
        for name, keep in (("gamma", elementwise_affine), ("beta", elementwise_affine and bias)):
            if not keep:
                value = getattr(self, name).value().copy()
                del self._params[name]  # noqa: SLF001 - torch's module has no such parameter
                object.__setattr__(self, name, value)
        self._axes = len(self.normalized_shape)  # torch normalises the last len(normalized_shape) axes
        self._epsilon = epsilon

    def construct(self, input_x):
        if self._axes == 1:
            return self._mp_nn_LayerNorm_construct(input_x)
        axis = input_x.ndim - self._axes  # MindSpore's CPU kernel refuses a negative begin axis other than -1
        norm = ops.LayerNorm(begin_norm_axis=axis, begin_params_axis=axis, epsilon=self._epsilon)
        return norm(input_x, self.gamma.astype(input_x.dtype), self.beta.astype(input_x.dtype))[0]


class FirstParameter:
    """torch's ``next(self.parameters())`` in a model's methods, as a class attribute the converter adds
    (``_mp_first_parameter = mp_nn.FirstParameter()``) and reads as ``self._mp_first_parameter``.

    GRAPH_MODE cannot compile the generator (``next(self.get_parameters())``, ``self.trainable_params()[0]`` and
    ``list(self.get_parameters())[0]`` all fail in MindSpore 2.10), but it resolves an attribute of ``self`` by
    Python's own attribute lookup when it compiles, and a Parameter found that way is the Cell's live Parameter
    (its value, dtype and gradient, not a copy). This descriptor gives that lookup the first parameter:
    ``next(cell.get_parameters())``, the same one PyNative's converted ``next(self.get_parameters())`` takes.
    ``FirstParameter("input_blocks")`` gives the first of the sub-module ``cell.input_blocks`` (torch's
    ``next(self.input_blocks.parameters())``: a graph reads a CellList as a tuple, which has no ``get_parameters``)."""

    def __init__(self, path: str = "") -> None:
        self._path = [part for part in path.split(".") if part]

    def __get__(self, cell, owner=None):
        if cell is None:
            return self
        for part in self._path:
            cell = getattr(cell, part)
        return next(cell.get_parameters())


class Modules:
    """torch's ``module.modules()`` in a model's methods after ``__init__`` (its forward and what forward calls), read
    as ``module._mp_modules``: every Cell under ``module`` and itself, in torch's order (``cells_and_names()``), as a
    list. GRAPH_MODE compiles no generator (the generator expression over ``cells_and_names()`` that ``modules()``
    becomes elsewhere fails: "Unsupported expression 'Yield'"), but resolves an attribute of a Cell by Python's own
    lookup when it compiles, and iterates a list of Cells. Installed on ``nn.Cell`` when this module loads (the
    receiver may be a MindSpore container, ``self._net.modules()``); a name of mindport's own, no Cell's."""

    def __get__(self, cell, owner=None):
        if cell is None:
            return self
        return [sub for _, sub in cell.cells_and_names()]


nn.Cell._mp_modules = Modules()  # noqa: SLF001  (a new name on Cell: nothing of MindSpore's is replaced)


class MemberList:
    """torch's ``module.parameters()`` / ``buffers()`` / ``named_parameters()`` / ``named_buffers()`` in a model's
    forward and the methods it calls, read as ``module._mp_parameters`` (``_mp_buffers``, ``_mp_named_parameters``,
    ``_mp_named_buffers``): :mod:`mindport.runtime.containers`' function of that name (torch's members: the frozen
    parameters too, no buffer among the parameters, torch's names), as a list. GRAPH_MODE refuses
    ``Cell.trainable_params()`` in construct ("not supported in 'construct'") and compiles no generator, but resolves
    an attribute of a Cell by Python's lookup when it compiles and takes a list of Parameters from it (openai's
    diffusion ``checkpoint(self._forward, (x,), self.parameters(), flag)``). Installed on ``nn.Cell`` when this
    module loads; names of mindport's own, no Cell's."""

    def __init__(self, function: str) -> None:
        self._function = function

    def __get__(self, cell, owner=None):
        if cell is None:
            return self
        return list(getattr(_containers, self._function)(cell))


for _member in ("parameters", "buffers", "named_parameters", "named_buffers"):
    setattr(nn.Cell, f"_mp_{_member}", MemberList(_member))  # new names on Cell: nothing of MindSpore's replaced
del _member


def add_module(parent, name, child):
    """torch's ``parent.add_module(name, child)`` (and ``register_module``): ``insert_child_to_cell``, and on a
    ``SequentialCell`` also its run list: SequentialCell.construct runs ``cell_list``, which insert_child_to_cell
    leaves untouched, so ``nn.Sequential()`` filled by add_module would run as the identity. A ``None`` child is
    allowed, as in torch (it is skipped when the sequence runs). On a ``ModuleDict`` (or a class built on one) the
    child is also one of its keys, so ``values()``/``items()`` list it."""
    if child is None:
        object.__setattr__(parent, name, None)
        return None
    if isinstance(parent, _containers.ModuleDict):
        parent[name] = child
    else:
        parent.insert_child_to_cell(name, child)
    if getattr(parent, "_auto_prefix", True):  # as Cell.__setattr__ names them: conv.weight, not weight
        child.update_parameters_name(name + ".")
    if isinstance(parent, nn.SequentialCell):
        parent.cell_list = [cell for cell in parent._cells.values() if cell is not None]  # noqa: SLF001
    return None


def own_names(cell):
    """Every Parameter of ``cell`` named by its path from it, as torch's state_dict keys (``net_l.layer_1.weight``).
    MindSpore names a Cell's Parameters when the Cell is set as an attribute, so a member added to a container the
    owner already holds (``self.net = nn.Sequential()`` then ``self.net.add_module('layer_1', ...)``, ``append``,
    ``extend``, ``insert``) keeps a name without the container's path: ``layer_1.weight``, and two such containers
    give two Parameters one name (building an optimizer over them raised "its name 'layer_1.weight' already
    exists"). Called at the end of such an owner's ``__init__``; an owner later set as another Cell's attribute is
    renamed by MindSpore from these paths, as usual. Cells an attribute holds in a plain list, tuple or dict are
    named too (:func:`_unregistered_members`). Returns the cell."""
    for name, param in cell.parameters_and_names():
        if param.name != name:
            param.name = name
    _unregistered_members(cell)
    return cell


_UNREGISTERED_NAMES: set[str] = set()  # the names given so far to the Parameters of unregistered members


def _unregistered_members(cell) -> None:
    """Modules a model keeps in a plain list, tuple or dict (minemile's DeepLabv3 ASPP: ``self.modules = []`` then
    ``self.modules.append(...)``), which torch does not register: no state_dict entry, not in ``parameters()``, not
    switched by the owner's ``train()``/``eval()``. The port keeps them so (a MindSpore Cell does not register a
    plain list either), with torch's two facts MindSpore lacks: such a module stays in training mode, torch's
    default (a MindSpore Cell starts in inference mode: a BatchNorm there used its moving statistics where torch's
    used the batch's), and a static graph (GRAPH_MODE) needs its Parameters' names unique (MindSpore names them at
    creation without a path: ``1.gamma`` of each Sequential, "its name '1.gamma' already exists"). Each is named by
    its path from the owner (``modules.1.1.gamma``), with a suffix where another model of the process took the name
    first."""
    registered = {id(sub) for _, sub in cell.cells_and_names()}
    for attr, key, member in held_members(cell, nn.Cell, registered):  # the rule the proof's weights follow too
        member.set_train(True)
        for path, param in member.parameters_and_names():
            wanted = name = f"{attr}.{key}.{path}"
            count = 1
            while name in _UNREGISTERED_NAMES:
                count += 1
                name = f"{wanted}_{count}"
            _UNREGISTERED_NAMES.add(name)
            param.name = name


def extend(container, cells):
    """torch's ``Sequential.extend(modules)``: a SequentialCell has no extend, so each cell is appended (append names
    its parameters by position, as torch's keys). A container that has its own (a ModuleList, or the Python list a
    name held before it became a Sequential) extends itself. Returns the container, as torch's does."""
    own = getattr(container, "extend", None)
    if own is not None:
        result = own(cells)
        return container if result is None else result
    for cell in cells:
        container.append(cell)
    return container


def insert(container, index, cell):
    """torch's ``Sequential.insert(index, module)``: the SequentialCell's own insertion, which renumbers the cells after
    ``index`` and their parameters' names; a container with an insert of its own uses it."""
    own = getattr(container, "insert", None)
    if own is not None:
        own(index, cell)
        return container
    container._insert(index, cell)  # noqa: SLF001 - SequentialCell's insertion (renames the cells after it)
    return container


def pop(container, *key):
    """torch's ``Sequential.pop(key)`` / ``ModuleList.pop(key=-1)``: the cell at ``key``, removed (the Cell's
    ``__delitem__`` renumbers the rest); a container with a pop of its own (a ModuleDict, a list) uses it."""
    own = getattr(container, "pop", None)
    if own is not None:
        return own(*key)
    index = key[0] if key else -1
    cell = container[index]
    del container[index]
    return cell


def train_override(method):
    """Marks a model class's own ``train(self, mode=True)``, converted to its ``set_train``: torch's
    ``Module.train(mode)`` calls each child's ``train``, so such an override (a backbone keeping its BatchNorms in eval
    mode) runs whenever an enclosing module is put in a mode. MindSpore's ``Cell.set_train`` sets the flag on every
    sub-cell without calling their ``set_train``; once this module is loaded it then calls the marked overrides of
    its sub-cells, the outermost on each path (each calls ``super().set_train(mode)``, which reaches its own)."""
    import functools
    import inspect

    try:
        takes_mode = len(inspect.signature(method).parameters) > 1
    except (TypeError, ValueError):
        takes_mode = True
    if takes_mode:
        method._mindport_train_override = True
        return method

    @functools.wraps(method)
    def set_train(self, mode=True):
        # torch's train(self) override takes no mode: model.train() calls it so; model.eval() calls the class's own
        # eval override (eval_override) where it has one
        if not mode and (done := _eval_of(self)) is not None:
            return done
        return method(self)

    set_train._mindport_train_override = True
    return set_train


def eval_override(method):
    """Marks a model class's own ``eval(self)``: torch's ``model.eval()`` calls it, and ``model.eval()`` converts to
    ``set_train(False)``, so ``set_train(False)`` on that model calls it (once: its own ``super().eval()``, i.e.
    ``super().set_train(False)``, sets the flag as torch's Module.eval does)."""
    method._mindport_eval_override = True
    return method


def _eval_of(cell):
    """The class's own eval override called for ``cell.set_train(False)`` (not re-entered from inside it)."""
    override = next((v for klass in type(cell).__mro__ if (v := vars(klass).get("eval")) is not None
                     and getattr(v, "_mindport_eval_override", False)), None)
    if override is None or cell.__dict__.get("_mp_in_eval", False):
        return None
    object.__setattr__(cell, "_mp_in_eval", True)
    try:
        result = override(cell)
    finally:
        object.__setattr__(cell, "_mp_in_eval", False)
    return cell if result is None else result


def _overrides_in(cell):
    """The sub-cells of ``cell`` whose class has a :func:`train_override`, the outermost on each path."""
    for child in cell._cells.values():  # noqa: SLF001 - a Cell's own sub-cells
        if child is None:
            continue
        if getattr(type(child).set_train, "_mindport_train_override", False):
            yield child
        else:
            yield from _overrides_in(child)


def _set_train(self, mode=True):
    """``Cell.set_train`` with torch's recursion into the sub-cells' own ``train`` (:func:`train_override`), and the
    class's own ``eval`` for ``set_train(False)`` (:func:`eval_override`)."""
    if not mode and (done := _eval_of(self)) is not None:
        return done
    _cell_set_train(self, mode)
    for child in _overrides_in(self):
        child.set_train(mode)
    return self


if not getattr(nn.Cell.set_train, "_mindport_recursive", False):
    _cell_set_train = nn.Cell.set_train
    _set_train._mindport_recursive = True
    nn.Cell.set_train = _set_train
else:
    _cell_set_train = nn.Cell.set_train._mindport_cell_set_train
_set_train._mindport_cell_set_train = _cell_set_train


def _torch_to_own(module, own) -> dict:
    """torch's name of each of the Cell's Parameters -> its key in the Cell's ``state_dict`` ``own`` (an Embedding's
    ``weight`` -> ``embedding_table``, a LayerNorm's ``weight`` -> ``gamma``, at any depth); names that are the same
    on both sides map to themselves."""
    from mindport.runtime.containers import _torch_named_parameters

    own_key = {id(value): key for key, value in own.items()}
    return {name: own_key[id(param)] for name, param in _torch_named_parameters(module, "", True, None)
            if id(param) in own_key}


def _own_keys(module, own, state_dict):
    """``state_dict`` with each key the Cell does not have but torch's naming of its parameters does (an
    Embedding's ``weight`` is its ``embedding_table``, a LayerNorm's ``weight`` its ``gamma``, at any depth:
    ``{'weight': w}`` written by hand for ``embedding.load_state_dict``) renamed to the Cell's own key; keys the Cell
    has, and unknown ones, are kept as they are (the Cell's own check reports them)."""
    if all(key in own for key in state_dict):
        return state_dict
    torch_to_own = _torch_to_own(module, own)
    renamed = {}
    for key, value in state_dict.items():
        target = key if key in own else torch_to_own.get(key, key)
        renamed[target if target not in state_dict or target == key else key] = value
    return renamed


class TorchKeyedStateDict(dict):
    """A Cell's ``state_dict()`` read by key: the Cell's own keys and order (what ``torch.save``'s conversion writes
    and ``load_state_dict`` reads back), and torch's name of each entry answered as well (``sd['norm.weight']`` is
    the LayerNorm's ``norm.gamma``), so a key taken from ``named_parameters()`` (torch's names) finds its tensor:
    kekmodel/FixMatch's EMA, ``esd[k].copy_(...)`` for each ``k`` of ``named_parameters()``, raised KeyError."""

    def __init__(self, items, aliases):
        super().__init__(items)
        self._mp_aliases = {alias: key for alias, key in aliases.items() if alias != key}

    def __missing__(self, key):
        own = self._mp_aliases.get(key) if isinstance(key, str) else None
        if own is None or not dict.__contains__(self, own):
            raise KeyError(key)
        return dict.__getitem__(self, own)

    def __contains__(self, key):
        return dict.__contains__(self, key) or (
            isinstance(key, str) and dict.__contains__(self, self._mp_aliases.get(key, key)))

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __setitem__(self, key, value):
        # sd[torch_name] = ... (the converter's in-place write back) replaces the Cell's own entry, adds no key
        if isinstance(key, str) and not dict.__contains__(self, key) and key in self._mp_aliases:
            key = self._mp_aliases[key]
        dict.__setitem__(self, key, value)


def state_dict(module, *args, **kwargs):
    """``module.state_dict()`` whose result is read by key (``sd[k]``, ``sd.get(k)``, ``k in sd``): the Cell's own
    ``state_dict`` as a :class:`TorchKeyedStateDict`, which answers torch's names too. Any other receiver (an
    optimizer, a project object) answers its own ``state_dict``."""
    own = module.state_dict(*args, **kwargs)
    if not isinstance(module, nn.Cell) or args or kwargs:
        return own
    return TorchKeyedStateDict(own, _torch_to_own(module, own))


def load_state_dict(module, state_dict, *args, **kwargs):
    """torch's ``module.load_state_dict(sd, strict=True)`` on a Cell, each Parameter written in place (``ops.assign``).
    MindSpore 2.10's ``Cell.load_state_dict`` (and ``load_param_into_net``) give a Parameter new storage
    (``assign_value``): once an optimizer has stepped, its updates no longer reach the Cell and training silently
    stops (measured: the loss repeats to every digit after a checkpoint is loaded mid-training, with
    ``mindspore.experimental.optim`` and ``mindspore.nn`` optimizers alike). Torch's key checks are the Cell's own: a
    missing or unexpected key under ``strict`` goes to the Cell's ``load_state_dict``, which raises as torch does; so
    does a tree with load-state-dict hooks (they may rename keys); buffers and mismatched shapes too (the Cell's
    error). Returns torch's ``(missing_keys, unexpected_keys)``. Any other receiver (an optimizer, a scheduler, a
    project object) answers its own ``load_state_dict``."""
    if not isinstance(module, nn.Cell):
        return module.load_state_dict(state_dict, *args, **kwargs)
    strict = kwargs.get("strict", args[0] if args else True)
    own = module.state_dict()
    state_dict = _own_keys(module, own, state_dict)
    hooked = any(getattr(cell, "_lazy_load_state_dict_pre_hooks", None)
                 or getattr(cell, "_lazy_load_state_dict_post_hooks", None)
                 for _, cell in module.cells_and_names())
    if hooked or (strict and set(own) != set(state_dict)) or set(kwargs) - {"strict"}:
        return module.load_state_dict(state_dict, *args, **kwargs)
    in_place = {key: value for key, value in state_dict.items()
                if isinstance(own.get(key), Parameter) and isinstance(value, ms.Tensor)
                and tuple(value.shape) == tuple(own[key].shape)}
    rest = {key: value for key, value in state_dict.items() if key not in in_place}
    result = module.load_state_dict(rest, strict=False) if rest else None
    for key, value in in_place.items():
        ops.assign(own[key], value.astype(own[key].dtype))
    missing = [key for key in own if key not in state_dict]
    unexpected = [key for key in state_dict if key not in own]
    return type(result)(missing, unexpected) if result is not None else _IncompatibleKeys(missing, unexpected)


def register_load_state_dict_pre_hook(cell, hook, with_module=False):
    """torch's private ``module._register_load_state_dict_pre_hook(hook, with_module=False)`` (gpt-fast's key remap of
    older checkpoints): the Cell's public ``register_load_state_dict_pre_hook``, which calls ``hook(cell, state_dict,
    prefix, ...)``; torch's private form passes the module only ``with_module``. The hook runs when the Cell's
    ``load_state_dict`` does; mindport's checkpoint conversion (``mindport weights``, ``load_param_into_net``) maps the
    names itself and runs no hook. Returns the removable handle."""
    if with_module:
        return cell.register_load_state_dict_pre_hook(hook)
    return cell.register_load_state_dict_pre_hook(lambda _cell, *args: hook(*args))


def register_parameter(parent, name, param):
    """torch's ``parent.register_parameter(name, param)``: ``insert_param_to_cell``, except that a ``None`` (an
    optional parameter left empty, ``bias=False``) is a plain attribute: ``insert_param_to_cell(name, None)`` keeps the
    None among the Cell's parameters, which a GRAPH_MODE compile reads as one and fails on."""
    if param is None:
        parent._params.pop(name, None)  # noqa: SLF001 - a parameter registered before is replaced by None, as in torch
        object.__setattr__(parent, name, None)
        return None
    parent.insert_param_to_cell(name, param)
    return None


def with_settings(cell, **settings):
    """A layer built inside an expression (``nn.Sequential(..., nn.BatchNorm2d(c, affine=False))``) with the torch
    settings its MindSpore Cell does not keep recorded as plain attributes under torch's names (object_surface.toml's
    ``kept``; a layer bound to a name gets ``layer.affine = False`` written after it instead): the Cell, returned."""
    for name, value in settings.items():
        setattr(cell, name, value)
    return cell


class PaddedEmbedding(nn.Embedding):
    """torch.nn.Embedding with a ``padding_idx``: MindSpore's ``nn.Embedding`` takes it, but only zeroes that row when
    it builds the table; its gradient is the other rows', so a padding row trains (2xic's TransformerEncoder with
    ``padding_idx=-1``: torch's row stayed 0, MindSpore's moved from the first Adam step, the loss 3e-4 off at step 2).
    Here the padding row is read through ``stop_gradient``: its output is the row as it stands (zeros unless a
    checkpoint or a write set it) and it receives no gradient, as in torch; the other rows are MindSpore's lookup.
    MindSpore's arguments (``vocab_size``, ``embedding_size``, ``embedding_table``) and parameter name
    (``embedding_table``); a negative ``padding_idx`` counts from the end, as torch's does."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal", dtype=ms.int32,
                 padding_idx=None):
        if padding_idx is not None and padding_idx < 0:
            padding_idx += vocab_size
        super().__init__(vocab_size, embedding_size, use_one_hot=use_one_hot, embedding_table=embedding_table,
                         dtype=dtype, padding_idx=padding_idx)

    def construct(self, ids):
        table = self.embedding_table
        if self.padding_idx is not None:
            frozen = (ops.arange(self.vocab_size) == self.padding_idx).reshape(self.vocab_size, 1)
            table = ops.where(frozen, ops.stop_gradient(table), table)
        out = ops.gather(table, ids.reshape(-1), 0)
        return out.reshape(tuple(ids.shape) + (self.embedding_size,))


def embedding_from_pretrained(embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                              scale_grad_by_freq=False, sparse=False):
    """torch.nn.Embedding.from_pretrained (a classmethod MindSpore's Embedding lacks): an ``nn.Embedding`` whose
    table is ``embeddings`` (a Tensor, array or nested list; its dtype kept), frozen unless ``freeze=False``. The
    table is the Cell's ``embedding_table``, so torch's ``weight`` lands on it like any Embedding's."""
    if max_norm is not None:
        raise ValueError("Embedding.from_pretrained: max_norm (in-place renormalisation of rows) is not supported")
    table = embeddings if isinstance(embeddings, ms.Tensor) else ms.Tensor(embeddings)
    if table.ndim != 2:
        raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {table.shape}")
    # a padding row receives no gradient (PaddedEmbedding), as torch's when freeze=False
    cell = PaddedEmbedding(table.shape[0], table.shape[1], embedding_table=table, dtype=ms.int64,
                           padding_idx=padding_idx)
    cell.embedding_table.requires_grad = not freeze
    return cell


class Fold(nn.Cell):
    """torch.nn.Fold: no mindspore.nn.Fold in 2.10 and ops.fold wants output_size as a Tensor."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.args = (output_size, kernel_size, dilation, padding, stride)

    def construct(self, x):
        return F.fold(x, *self.args)


class Unfold(nn.Cell):
    """torch.nn.Unfold: (N, C*kh*kw, L) like torch (mindspore.nn.Unfold is TF's extract_image_patches)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.args = (kernel_size, dilation, padding, stride)

    def construct(self, x):
        return F.unfold(x, *self.args)


# ------------------------------------------------------------------------------------------ padding, up-sampling

class _CircularPad(nn.Cell):
    """torch's _CircularPadNd: ops.pad(mode='circular'), the input's rank checked first as torch's forward does
    (``_check_input_dim``: a CircularPad1d takes 2-D or 3-D inputs; a subclass's forward may call it too)."""
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, 2 * self._dims)

    def _check_input_dim(self, input) -> None:
        if input.ndim != self._dims + 1 and input.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)")

    def construct(self, x):
        self._check_input_dim(x)
        return F.pad(x, self.padding, "circular")  # (a negative amount crops: F.pad)


class CircularPad1d(_CircularPad):
    """torch.nn.CircularPad1d: ops.pad(mode='circular') (no MindSpore Cell in 2.10)."""
    _dims = 1


class CircularPad2d(_CircularPad):
    """torch.nn.CircularPad2d: ops.pad(mode='circular') (no MindSpore Cell in 2.10)."""
    _dims = 2


class CircularPad3d(_CircularPad):
    """torch.nn.CircularPad3d: ops.pad(mode='circular') (no MindSpore Cell in 2.10)."""
    _dims = 3


class ConstantPad1d(nn.ConstantPad1d):
    """torch.nn.ConstantPad1d whose padding may be negative (a crop): MindSpore's Cell pads with ``ops.pad``, wrong
    for a negative amount from its second call on in 2.10; this one pads with :func:`mindport.runtime.nn_functional.pad`
    (crops by slicing). The converter writes it where the padding is not a literal of non-negative ints, so the
    padding may be a list as torch takes it (``pad = [k // 2] * 4``), which MindSpore's Cell refuses: a tuple here."""

    def __init__(self, padding, value):
        super().__init__(tuple(padding) if isinstance(padding, list) else padding, value)

    def construct(self, x):
        return F.pad(x, self.padding, "constant", self.value)


class ConstantPad2d(nn.ConstantPad2d):
    """torch.nn.ConstantPad2d whose padding may be negative: see :class:`ConstantPad1d`."""

    def __init__(self, padding, value):
        super().__init__(tuple(padding) if isinstance(padding, list) else padding, value)

    def construct(self, x):
        return F.pad(x, self.padding, "constant", self.value)


class ConstantPad3d(nn.ConstantPad3d):
    """torch.nn.ConstantPad3d whose padding may be negative: see :class:`ConstantPad1d`."""

    def __init__(self, padding, value):
        super().__init__(tuple(padding) if isinstance(padding, list) else padding, value)

    def construct(self, x):
        return F.pad(x, self.padding, "constant", self.value)


class ZeroPad2d(nn.ZeroPad2d):
    """torch.nn.ZeroPad2d whose padding may be negative (RWKV's token shift ``nn.ZeroPad2d((0, 0, 1, -1))``): see
    :class:`ConstantPad1d`."""

    def __init__(self, padding):
        super().__init__(tuple(padding) if isinstance(padding, list) else padding)

    def construct(self, x):
        return F.pad(x, self.padding, "constant", self.value)


class _ReflectionPad(nn.Cell):
    """MindSpore's ReflectionPadNd keeps ``padding`` in its own layout (pairs, first padded dimension first:
    ``[[0, 1], [1, 2]]`` for torch's ``(1, 2, 0, 1)``), which code reading ``layer.padding`` sees; these keep torch's
    tuple there and pad with the same MirrorPad(REFLECT) operation (ops.pad's reflect mode stops at 4-D inputs)."""
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, 2 * self._dims)
        self._pairs = [[self.padding[2 * i], self.padding[2 * i + 1]] for i in reversed(range(self._dims))]
        self._mirror = ops.MirrorPad(mode="REFLECT")

    def construct(self, x):
        full = [[0, 0]] * (x.ndim - self._dims) + self._pairs
        return self._mirror(x, ms.Tensor(full, ms.int64))


class ReflectionPad1d(_ReflectionPad):
    """torch.nn.ReflectionPad1d, with torch's ``padding`` attribute (left, right)."""
    _dims = 1


class ReflectionPad2d(_ReflectionPad):
    """torch.nn.ReflectionPad2d, with torch's ``padding`` attribute (left, right, top, bottom)."""
    _dims = 2


class ReflectionPad3d(_ReflectionPad):
    """torch.nn.ReflectionPad3d, with torch's ``padding`` attribute (left, right, top, bottom, front, back)."""
    _dims = 3


class UpsamplingBilinear2d(nn.Cell):
    """torch.nn.UpsamplingBilinear2d: bilinear with align_corners=True. ``mode`` and ``align_corners`` are torch's
    attributes of the layer, which the validator's settings check reads (without them it reported "align_corners
    differs: torch True, MindSpore None" on a correct port: minemile's DeepLabv3 decoder)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor
        self.mode, self.align_corners = "bilinear", True

    def construct(self, x):
        return F.upsample_bilinear(x, self.size, self.scale_factor)


class UpsamplingNearest2d(nn.Cell):
    """torch.nn.UpsamplingNearest2d: torch's nearest indices, also for a scale_factor."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, x):
        return F.upsample_nearest(x, self.size, self.scale_factor)


class AdaptiveAvgPool1d(nn.Cell):
    """torch.nn.AdaptiveAvgPool1d where ``output_size`` may not divide the length (MindSpore's refuses it): see
    nn_functional.adaptive_avg_pool1d."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, x):
        return F.adaptive_avg_pool1d(x, self.output_size)


class AdaptiveMaxPool1d(nn.Cell):
    """torch.nn.AdaptiveMaxPool1d where ``output_size`` may not divide the length, or with ``return_indices``: see
    nn_functional.adaptive_max_pool1d."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def construct(self, x):
        return F.adaptive_max_pool1d(x, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(nn.Cell):
    """torch.nn.AdaptiveMaxPool3d whose ``output_size`` holds None (torch keeps that input dimension): MindSpore's
    takes the size as a Tensor and refuses None; the size is completed from the input's shape when it runs. Torch's
    ``output_size`` attribute keeps the None."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def construct(self, x):
        sizes = self.output_size if isinstance(self.output_size, (tuple, list)) else (self.output_size,) * 3
        size = tuple(x.shape[i - 3] if s is None else s for i, s in enumerate(sizes))
        return ops.adaptive_max_pool3d(x, size)


class LPPool3d(nn.Cell):
    """torch.nn.LPPool3d: no MindSpore LPPool3d in 2.10 (see nn_functional.lp_pool3d)."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def construct(self, x):
        return F.lp_pool3d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


# --------------------------------------------------------------------------------------------------- transformers

def _gelu(x):
    return ops.gelu(x, approximate="none")


def _activation(activation):
    if activation == "relu":
        return ops.relu
    if activation == "gelu":
        return _gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class TransformerEncoderLayer(nn.Cell):
    """torch.nn.TransformerEncoderLayer with torch's attribute names (self_attn, linear1, linear2, norm1, norm2 with
    weight/bias), so torch checkpoints load by name; mindspore.nn.TransformerEncoderLayer calls them dense1/dense2
    and gamma/beta. The attention is mindspore.nn.MultiheadAttention (torch's parameter names)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, has_bias=bias, batch_first=batch_first)
        self.linear1 = nn.Dense(d_model, dim_feedforward, has_bias=bias)
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Dense(dim_feedforward, d_model, has_bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1 = nn.Dropout(p=dropout)
        self.dropout2 = nn.Dropout(p=dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False, attn_mask=attn_mask)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def construct(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(nn.Cell):
    """torch.nn.TransformerDecoderLayer with torch's attribute names (self_attn, multihead_attn, linear1/2,
    norm1/2/3 with weight/bias), so torch checkpoints load by name."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, has_bias=bias, batch_first=batch_first)
        self.multihead_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, has_bias=bias,
                                                    batch_first=batch_first)
        self.linear1 = nn.Dense(d_model, dim_feedforward, has_bias=bias)
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Dense(dim_feedforward, d_model, has_bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1 = nn.Dropout(p=dropout)
        self.dropout2 = nn.Dropout(p=dropout)
        self.dropout3 = nn.Dropout(p=dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False, attn_mask=attn_mask)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, key_padding_mask=key_padding_mask, need_weights=False,
                                attn_mask=attn_mask)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """torch.nn.Transformer.generate_square_subsequent_mask (a static method): the additive causal mask of size
    ``sz`` x ``sz``, -inf above the diagonal and 0 elsewhere, float32 unless ``dtype`` is given."""
    return ops.triu(ops.full((sz, sz), float("-inf"), dtype=dtype or ms.float32), diagonal=1)


def _clones(layer, n):
    return nn.CellList([copy.deepcopy(layer) for _ in range(n)])


class TransformerEncoder(nn.Cell):
    """torch.nn.TransformerEncoder: ``layers.<i>`` deep copies of the layer, then the optional ``norm``.

    Like torch's nested-tensor inference path (enable_nested_tensor, a post-norm batch_first layer with an even head
    count and relu/gelu, not training, 3-D input, a right-padded src_key_padding_mask and no mask), the padded
    positions of the output are 0 there. torch takes that path only with autograd off (torch.no_grad), the usual
    inference setting."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.mask_check = mask_check
        layer = encoder_layer
        self.use_nested_tensor = bool(
            enable_nested_tensor and isinstance(layer, TransformerEncoderLayer) and not layer.norm_first
            and layer.self_attn.batch_first and layer.self_attn.in_proj_bias is not None
            and layer.activation in (ops.relu, _gelu) and layer.norm1.eps == layer.norm2.eps
            and layer.self_attn.num_heads % 2 == 0)

    def _zero_padded(self, src, mask, src_key_padding_mask):
        if not self.use_nested_tensor or self.training or src.ndim != 3 or src_key_padding_mask is None \
                or mask is not None:
            return False
        keep = (~src_key_padding_mask.astype(ms.bool_)).astype(ms.int32)
        return not self.mask_check or bool((keep[:, 1:] <= keep[:, :-1]).all())  # torch: left-aligned tokens only

    def construct(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self._zero_padded(src, mask, src_key_padding_mask):
            output = ops.masked_fill(output, src_key_padding_mask.astype(ms.bool_).unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(nn.Cell):
    """torch.nn.TransformerDecoder: ``layers.<i>`` deep copies of the layer, then the optional ``norm``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(nn.Cell):
    """torch.nn.Transformer: ``encoder``/``decoder`` stacks with final LayerNorms, torch's parameter names."""

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)  # model.<it>(sz) as in torch

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model, layer_norm_eps, bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model, layer_norm_eps, bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                  memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, dtype=ms.float32):
        """torch.nn.Transformer.generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere."""
        return ops.triu(ops.full((sz, sz), float("-inf"), dtype=dtype), diagonal=1)



# ------------------------------------------------------------------------ activations built with inplace=True

class ELU(nn.Cell):
    """torch.nn.ELU with any alpha: x if x > 0 else alpha * (exp(x) - 1). MindSpore 2.10's Elu kernel refuses
    alpha != 1.0 ("In Elu, alpha must be 1.0f"): mindport.runtime.nn_functional.elu."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return F.elu(x, self.alpha)

    def extend_repr(self):
        return f"alpha={self.alpha}"


class SeLU(nn.Cell):
    """torch.nn.SELU: mindport.runtime.nn_functional.selu (MindSpore 2.10's nn.SeLU computes the value, but its
    gradient on the CPU is wrong where x < 0)."""

    def construct(self, x):
        return F.selu(x)


class Tanh(nn.Cell):
    """torch.nn.Tanh to torch's precision: mindport.runtime.math.tanh (MindSpore 2.10's nn.Tanh kernel is off by up
    to 1e-4 for 3 < |x| < 8)."""

    def construct(self, x):
        return _math.tanh(x)


# MindSpore 2.10's recurrent layers on the CPU compute each step with Python cell functions that call its float32
# tanh kernel (mindspore.nn.layer.rnn_cells: _rnn_tanh_cell, _gru_cell; off by up to 1e-4 for 3 < |x| < 8): a
# recurrence feeds that error back step after step (nn.RNN, hidden 16, weights of std 1: 4.5e-4 from float64 where
# torch's float32 is 2.0e-6; nn.GRU 9.0e-5 vs 7.2e-7). RNN and GRU below are MindSpore's own Cells whose steps use
# the same matrix products and mindport.runtime.math.tanh (torch's precision): 8.1e-7 and 1.9e-6. nn.LSTM without
# seq_length is MindSpore's fused LSTM kernel, equal to torch's there: not guarded. A port for a GPU or Ascend gets
# MindSpore's own layers (``convert --device``: table_calls.CPU_GUARD_LAYERS).

def _rnn_tanh_step(inputs, hidden, w_ih, w_hh, b_ih, b_hh):
    igates = ops.MatMul(False, True)(inputs, w_ih)
    hgates = ops.MatMul(False, True)(hidden, w_hh)
    if b_ih is not None:
        igates = igates + b_ih
        hgates = hgates + b_hh
    return _math.tanh(igates + hgates)


def _gru_step(inputs, hidden, w_ih, w_hh, b_ih, b_hh):
    gi = ops.MatMul(False, True)(inputs, w_ih)
    gh = ops.MatMul(False, True)(hidden, w_hh)
    if b_ih is not None:
        gi = gi + b_ih
        gh = gh + b_hh
    i_r, i_i, i_n = ops.Split(1, 3)(gi)
    h_r, h_i, h_n = ops.Split(1, 3)(gh)
    resetgate = ops.sigmoid(i_r + h_r)
    inputgate = ops.sigmoid(i_i + h_i)
    newgate = _math.tanh(i_n + resetgate * h_n)
    return newgate + inputgate * (hidden - newgate)


def _precise_steps(mode, step):
    """MindSpore's step-by-step recurrence (_DynamicRNNBase: what nn.RNN and, on the CPU, nn.GRU run) with one of
    the step functions above."""
    from mindspore.nn.layer.rnns import _DynamicRNNBase

    steps = _DynamicRNNBase(mode)
    steps.cell = step
    return steps


class RNN(nn.RNN):
    """torch.nn.RNN: MindSpore's nn.RNN (same arguments, parameters and results) whose tanh steps have torch's
    precision (see above); nonlinearity='relu' is MindSpore's own."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mindspore.nn.layer.rnns import _DynamicRNNTanh

        if isinstance(self.rnn, _DynamicRNNTanh):
            self.rnn = _precise_steps("RNN_TANH", _rnn_tanh_step)


class GRU(nn.GRU):
    """torch.nn.GRU: MindSpore's nn.GRU (same arguments, parameters and results) whose steps have torch's tanh
    precision on the CPU (see above); on Ascend MindSpore's own kernel."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mindspore.nn.layer.rnns import _DynamicGRUCPUGPU

        if isinstance(self.rnn, _DynamicGRUCPUGPU) and not self.rnn.is_gpu:
            self.rnn = _precise_steps("GRU", _gru_step)



# MindSpore 2.10's RNNCell/GRUCell/LSTMCell compute their step with the same Python cell functions and float32 tanh
# kernel on every device (mindspore.nn.layer.rnn_cells); a loop over a sequence feeds the error back (7 steps,
# hidden 16, weights of std 1, from float64: RNNCell 7.1e-4, GRUCell 1.1e-4, LSTMCell 4.8e-5 where torch's float32
# gives 4.7e-7, 3.4e-7, 2.4e-7; /tmp/legacy12/cells.py). These are MindSpore's own cells (same arguments, parameters
# and results) whose step is mindport.runtime.math's cell function (torch's tanh precision). Their construct stays
# the one mindport.runtime.unbatched gives MindSpore's cells (hx None is zeros, an unbatched step), which calls the
# step below. A port for a GPU or Ascend gets MindSpore's own cells (table_calls.CPU_GUARD_LAYERS).

def _cell_construct(pair):
    from mindport.runtime.unbatched import _cell

    return _cell(pair)


class RNNCell(nn.RNNCell):
    """torch.nn.RNNCell: MindSpore's nn.RNNCell whose tanh step has torch's precision (see above)."""

    construct = _cell_construct(pair=False)

    def _mp_batched_construct(self, x, hx):
        if self.nonlinearity == "tanh":
            return _math.rnn_tanh_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return _math.rnn_relu_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class GRUCell(nn.GRUCell):
    """torch.nn.GRUCell: MindSpore's nn.GRUCell whose step has torch's tanh precision (see above)."""

    construct = _cell_construct(pair=False)

    def _mp_batched_construct(self, x, hx):
        return _math.gru_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class LSTMCell(nn.LSTMCell):
    """torch.nn.LSTMCell: MindSpore's nn.LSTMCell whose step has torch's tanh precision (see above)."""

    construct = _cell_construct(pair=True)

    def _mp_batched_construct(self, x, hx):
        return _math.lstm_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


# float64 through an activation whose MindSpore 2.10 kernel takes float16/32 only (ReLU6, HShrink, SoftShrink:
# TypeError on a float64 input, where torch computes in float64): MindSpore's own Cell, whose construct computes a
# float64 input by torch's formula with MindSpore's float64-capable ops (exact: a clamp or a select), every other
# dtype by MindSpore's kernel. The class keeps MindSpore's name and base (isinstance(m, nn.ReLU6) holds).


class ReLU6(nn.ReLU6):
    """torch.nn.ReLU6: mindspore.nn.ReLU6; a float64 input is ``clamp(x, 0, 6)`` (MindSpore's ReLU6 kernel refuses
    float64)."""

    def construct(self, x):
        if x.dtype == ms.float64:
            return ops.clamp(x, 0.0, 6.0)
        return self._mp_float_base(x)  # base's construct as a method of self (see _mode_padded)

    _mp_float_base = nn.ReLU6.construct


class HShrink(nn.HShrink):
    """torch.nn.Hardshrink: mindspore.nn.HShrink; a float64 input is torch's ``0 if -lambd <= x <= lambd else x``
    (MindSpore's HShrink kernel refuses float64)."""

    def __init__(self, lambd=0.5):
        super().__init__(lambd)
        self.lambd = float(lambd)  # torch's name: read, and moved by a rebuild after a write (m.lambd = 0.3)

    def construct(self, x):
        if x.dtype == ms.float64:
            lambd = ms.Tensor(self.lambd, ms.float64)  # a Python float operand would be float32's 0.3
            return ops.where((x >= -lambd) & (x <= lambd), ops.zeros_like(x), x)
        return self._mp_float_base(x)

    _mp_float_base = nn.HShrink.construct


class SoftShrink(nn.SoftShrink):
    """torch.nn.Softshrink: mindspore.nn.SoftShrink; a float64 input is torch's ``x - lambd`` above lambd, ``x +
    lambd`` below -lambd, else 0 (MindSpore's SoftShrink kernel refuses float64)."""

    def __init__(self, lambd=0.5):
        super().__init__(lambd)
        self.lambd = float(lambd)  # torch's name: read, and moved by a rebuild after a write (m.lambd = 0.3)

    def construct(self, x):
        if x.dtype == ms.float64:
            lambd = ms.Tensor(self.lambd, ms.float64)  # a Python float operand would be float32's 0.7
            return ops.where(x > lambd, x - lambd, ops.where(x < -lambd, x + lambd, x * 0))
        return self._mp_float_base(x)

    _mp_float_base = nn.SoftShrink.construct


class Dropout2d(nn.Dropout2d):
    """torch.nn.Dropout2d at every rank torch takes: MindSpore's Dropout2d kernel takes a 4-D input only, torch's
    layer a 2-D (N, C) one too (element by element, with a warning: a classifier head's ``nn.Dropout2d`` after a
    Linear) and a 3-D (N, C, L) one (whole channels): those go through mindport.runtime.nn_functional.dropout2d."""

    def construct(self, x):
        if not self.training or self.keep_prob == 1 or x.ndim == 4:
            return self._mp_dropout_base(x)
        return F.dropout2d(x, 1.0 - self.keep_prob, True)

    def _mp_dropout_base(self, x):
        # the base's construct named, never ``super().construct``: a graph resolves ``super()`` from the instance's
        # class, so InplaceDropout2d (a subclass, whose _mp_inplace_base is this construct) called this construct
        # again without end ("Exceed function call depth limit 1000", Atcold/pytorch-PPUU's u_network); looked up
        # at each call, so a patched nn.Dropout2d.construct (mindport.proofs.replay's recorded draws) is the one run
        return nn.Dropout2d.construct(self, x)


class Dropout3d(nn.Dropout3d):
    """torch.nn.Dropout3d at every rank torch takes: MindSpore's kernel takes a 5-D input only, torch's layer an
    unbatched 4-D (C, D, H, W) one too (mindport.runtime.nn_functional.dropout3d)."""

    def construct(self, x):
        if not self.training or self.keep_prob == 1 or x.ndim == 5:
            return self._mp_dropout_base(x)
        return F.dropout3d(x, 1.0 - self.keep_prob, True)

    def _mp_dropout_base(self, x):  # named at each call, as Dropout2d's (InplaceDropout3d in a graph, replay)
        return nn.Dropout3d.construct(self, x)


def _inplace_cell(base, torch_name):
    """``base`` (the Cell torch's layer maps to, same constructor arguments) whose output is also written into its
    input, as torch's ``inplace=True`` does (the input keeps its identity; see mindport.runtime.inplace)."""

    def construct(self, x):
        # base's construct as a method of self, never base.construct(self, ...) (see _mode_padded)
        return _inplace._store(x, self._mp_inplace_base(_inplace._src(x)))

    cls = type(f"Inplace{base.__name__}", (base,), {"construct": construct, "_mp_inplace_base": base.construct,
                                                     "__doc__": (
        f"{torch_name}(..., inplace=True): mindspore.nn.{base.__name__} whose result is written into its input.")})
    cls.__module__ = __name__
    return cls


InplaceReLU = _inplace_cell(nn.ReLU, "torch.nn.ReLU")
InplaceReLU6 = _inplace_cell(ReLU6, "torch.nn.ReLU6")
InplaceLeakyReLU = _inplace_cell(nn.LeakyReLU, "torch.nn.LeakyReLU")
InplaceELU = _inplace_cell(ELU, "torch.nn.ELU")
InplaceCELU = _inplace_cell(nn.CELU, "torch.nn.CELU")
InplaceSeLU = _inplace_cell(SeLU, "torch.nn.SELU")
InplaceSiLU = _inplace_cell(nn.SiLU, "torch.nn.SiLU")
InplaceMish = _inplace_cell(nn.Mish, "torch.nn.Mish")
InplaceHSigmoid = _inplace_cell(nn.HSigmoid, "torch.nn.Hardsigmoid")
InplaceHSwish = _inplace_cell(nn.HSwish, "torch.nn.Hardswish")
InplaceHardtanh = _inplace_cell(nn.Hardtanh, "torch.nn.Hardtanh")
InplaceThreshold = _inplace_cell(nn.Threshold, "torch.nn.Threshold")
InplaceDropout = _inplace_cell(nn.Dropout, "torch.nn.Dropout")
InplaceDropout1d = _inplace_cell(nn.Dropout1d, "torch.nn.Dropout1d")
InplaceDropout2d = _inplace_cell(Dropout2d, "torch.nn.Dropout2d")
InplaceDropout3d = _inplace_cell(Dropout3d, "torch.nn.Dropout3d")


# ---------------------------------------------------------------------------------------- torch.nn.utils helpers

def parameters_to_vector(parameters):
    """torch.nn.utils.parameters_to_vector: the parameters flattened and concatenated, in order."""
    if _in_graph():
        raise RuntimeError("mindport: torch.nn.utils.parameters_to_vector reads a model's parameters, which a graph "
                           "can't (Cell.trainable_params is PyNative only): call it outside construct or @jit")
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """torch.nn.utils.vector_to_parameters: slice ``vec`` into the parameters, in order (their values change in
    place, as in torch)."""
    offset = 0
    for p in parameters:
        n = p.size
        p.set_data(vec[offset:offset + n].reshape(p.shape).astype(p.dtype))
        offset += n


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every axis but ``dim`` (all axes when ``dim`` is None), kept as size-1 axes."""
    if dim is None:
        return ops.sqrt((v * v).sum())
    axes = tuple(i for i in range(v.ndim) if i != dim % v.ndim)
    return ops.sqrt((v * v).sum(axis=axes, keepdims=True))


def _conv1d_axis(module) -> bool:
    """MindSpore's Conv1d/Conv1dTranspose weight has an extra size-1 axis 2 ((out, in, 1, k); torch's is 3-D)."""
    return isinstance(module, (nn.Conv1d, nn.Conv1dTranspose))


_SWITCHED: dict = {}


def switched_class(cls: type, target: type) -> type:
    """A class of the model's derived from a torch layer (``class CLeakyReLU(nn.LeakyReLU)``, ``class
    LayerNorm2d(nn.LayerNorm)``) built with arguments for which the layer's entry chooses another Cell
    (``inplace=True``: ``InplaceLeakyReLU``; ``elementwise_affine=False``: ``OptionalAffineLayerNorm``): ``cls`` over
    that Cell, so the subclass's own methods come first and its ``super().construct(x)`` is the chosen Cell's, as
    torch's layer behaves for those arguments. Named ``<cls>_mp_<Cell>``, not ``cls``'s name (GRAPH_MODE finds
    ``super(A, self)``'s ``A`` by name in the MRO, see _reparametrized_class); ``mp_adapt.class_name`` reads ``cls``'s
    name through ``_mp_reparametrized_of``."""
    key = (cls, target)
    if key not in _SWITCHED:
        marker = f"_mp_{target.__name__}"
        _SWITCHED[key] = type(cls)(cls.__name__ + marker, (cls, target), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__ + marker, "_mp_reparametrized_of": cls})
    return _SWITCHED[key]


def become(cell, target: type) -> None:
    """The ``__init__`` a converted file writes for torch's layer as a base class (``class TorchLayerNorm(nn.LayerNorm)``,
    mindport/migrator/factories.py) when torch's arguments, known only when the subclass is built, choose another
    Cell: ``cell`` (not yet initialised) becomes an instance of :func:`switched_class` of its class over ``target``,
    before ``target.__init__`` runs on it (whose zero-argument ``super()`` needs an instance of ``target``)."""
    if not isinstance(cell, target):
        object.__setattr__(cell, "__class__", switched_class(type(cell), target))


_REPARAMETRIZED: dict = {}


def _parameter_name(module, name: str) -> str:
    """The Cell's own name for torch's parameter ``name``: ``name`` where the Cell has it, else the one the entry of
    the Cell's class maps it to (an Embedding's ``weight`` is ``embedding_table``, a LayerNorm's ``gamma``)."""
    if name in module._params:  # noqa: SLF001
        return name
    from mindport.runtime import adapt

    entry = adapt.layer_entry(module)
    path = adapt._surface_paths(entry).get(name, name) if entry is not None else name  # noqa: SLF001
    if path in module._params:  # noqa: SLF001
        return path
    raise AttributeError(f"'{type(module).__name__}' object has no parameter '{name}'")


def _reparametrized_class(cls, marker: str, hook: tuple, compute):
    """``cls`` with the attribute ``hook[1]`` a property computed by ``compute(self)`` each time the Cell reads it
    (torch's legacy forward pre-hooks, weight_norm and spectral_norm, recompute the weight before each forward).
    ``marker`` (a class attribute) holds ``hook``: (the original class, name, ...), read back by the remove_ helper.
    The subclass is named ``<cls>_mp_weight_norm`` (by the marker), not ``cls``'s own name: GRAPH_MODE compiles
    ``super(A, self)`` as the first class named ``A`` in ``type(self).__mro__``, which a same-named subclass would be,
    so the base's construct called itself for ever ("Exceed function call depth limit"). ``mp_adapt.class_name``
    reads the original class's name through ``_mp_reparametrized_of``."""
    key = (cls, marker, hook)
    if key not in _REPARAMETRIZED:
        _REPARAMETRIZED[key] = type(cls.__name__ + marker, (cls,), {
            hook[1]: property(compute), hook[-1]: property(compute),  # torch's name and the Cell's own
            "__module__": cls.__module__, "__qualname__": cls.__qualname__ + marker,
            marker: (cls, *hook[1:]), "_mp_reparametrized_of": cls})
    return _REPARAMETRIZED[key]


def _torch_layout(module, name: str):
    """The value of ``name`` in torch's layout, and whether it was squeezed (a Conv1d's weight loses MindSpore's
    size-1 axis 2, so the reparametrized tensors keep torch's 3-D shape and checkpoint names land as they are)."""
    weight = getattr(module, name)
    squeezed = _conv1d_axis(module) and name == "weight" and weight.ndim == 4 and weight.shape[2] == 1
    return weight, (weight.value().squeeze(2) if squeezed else weight.value()), squeezed


def weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.weight_norm: the parameter ``name`` becomes ``name_g`` (its norm over every axis but ``dim``)
    and ``name_v`` (its direction), and the Cell computes ``name = v * g / ||v||`` each time it reads it, so training
    updates g and v as in torch and torch's ``weight_g``/``weight_v`` checkpoint entries land by name. A Conv1d's
    g and v keep torch's 3-D layout (MindSpore's Conv1d weight has an extra size-1 axis). Returns the Cell."""
    if getattr(type(module), "_mp_weight_norm", None) is not None:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    own = _parameter_name(module, name)  # an Embedding's weight is its embedding_table
    weight, v, squeezed = _torch_layout(module, own)
    del module._params[own]  # noqa: SLF001
    module.insert_param_to_cell(name + "_g", Parameter(_norm_except_dim(v, dim), name=name + "_g",
                                                       requires_grad=weight.requires_grad))
    module.insert_param_to_cell(name + "_v", Parameter(v.copy(), name=name + "_v", requires_grad=weight.requires_grad))

    def compute(self):
        v = getattr(self, name + "_v")
        w = v * (getattr(self, name + "_g") / _norm_except_dim(v, dim))
        return w.expand_dims(2) if squeezed else w

    module.__class__ = _reparametrized_class(type(module), "_mp_weight_norm",
                                             (type(module), name, dim, squeezed, own), compute)
    return module


def remove_weight_norm(module, name="weight"):
    """torch.nn.utils.remove_weight_norm: ``name`` is a plain parameter again, holding ``v * g / ||v||``."""
    hook = getattr(type(module), "_mp_weight_norm", None)
    if hook is None or hook[1] != name:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    weight = getattr(module, name)
    module.__class__ = hook[0]
    del module._params[name + "_g"]  # noqa: SLF001
    del module._params[name + "_v"]  # noqa: SLF001
    module.insert_param_to_cell(hook[-1], Parameter(weight, name=hook[-1]))
    return module


class _Parametrization(nn.Cell):
    """torch's ParametrizationList of one parameter: the tensors the parametrization is computed from, under torch's
    names (``original0``, ``original1``), so a checkpoint's ``parametrizations.weight.original0`` lands by name."""

    def __init__(self, originals):
        super().__init__()
        for i, value in enumerate(originals):
            setattr(self, f"original{i}", Parameter(value, name=f"original{i}"))


def parametrized_weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.parametrizations.weight_norm (torch's current form of weight_norm): the parameter ``name`` is
    computed as ``original1 * original0 / ||original1||`` (the norm over every axis but ``dim``; ``dim=None``: the
    whole tensor) each time the Cell reads it, from ``module.parametrizations.<name>.original0`` (the magnitude) and
    ``original1`` (the direction), torch's state-dict names. Returns the Cell."""
    if getattr(type(module), "_mp_parametrized_weight_norm", None) is not None:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    own = _parameter_name(module, name)
    weight, v, squeezed = _torch_layout(module, own)
    del module._params[own]  # noqa: SLF001
    if "parametrizations" not in module._cells:  # noqa: SLF001
        module.parametrizations = nn.Cell()
    norm_dim = None if dim in (None, -1) else dim  # torch: -1 (its dim=None) is the norm of the whole tensor
    setattr(module.parametrizations, name, _Parametrization((_norm_except_dim(v, norm_dim), v.copy())))

    def compute(self):
        originals = getattr(self.parametrizations, name)
        v = originals.original1
        w = v * (originals.original0 / _norm_except_dim(v, norm_dim))
        return w.expand_dims(2) if squeezed else w

    module.__class__ = _reparametrized_class(type(module), "_mp_parametrized_weight_norm",
                                             (type(module), name, dim, squeezed, own), compute)
    return module


def _normalize(x, eps):
    """torch.nn.functional.normalize of a vector: x / max(||x||, eps)."""
    return x / ops.maximum(ops.sqrt((x * x).sum()), ops.scalar_to_tensor(eps, x.dtype))


def _spectral_matrix(weight, dim):
    """The weight as the matrix whose largest singular value spectral_norm divides by: ``dim`` first, the rest
    flattened (torch's reshape_weight_to_matrix)."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch.nn.utils.spectral_norm: the parameter ``name`` becomes ``name_orig``, with the power-iteration vectors
    ``name_u`` and ``name_v`` beside it (non-trainable parameters: torch's buffers, same names, so a checkpoint's
    entries land by name), and the Cell reads ``name = name_orig / sigma``, ``sigma = u . (W v)``. In training mode
    each read first runs ``n_power_iterations`` steps of the power iteration and stores u and v (torch does it in a
    forward pre-hook, once per forward); in eval mode u and v are used as stored. ``dim`` defaults to 1 for the
    transposed convolutions, 0 otherwise. u and v start as normalised N(0, 1) draws, as in torch. A Conv1d keeps
    torch's 3-D layout. Returns the Cell. Unlike torch, reading ``name`` before the first forward already gives the
    normalised weight."""
    if n_power_iterations <= 0:
        raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}")
    if getattr(type(module), "_mp_spectral_norm", None) is not None:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = 1 if isinstance(module, (nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)) else 0
    own = _parameter_name(module, name)  # an Embedding's weight is its embedding_table
    weight, w, squeezed = _torch_layout(module, own)
    h, width = _spectral_matrix(w, dim).shape
    u = _normalize(ops.randn(h, dtype=w.dtype), eps)
    v = _normalize(ops.randn(width, dtype=w.dtype), eps)
    del module._params[own]  # noqa: SLF001
    module.insert_param_to_cell(name + "_orig", Parameter(w.copy(), name=name + "_orig",
                                                          requires_grad=weight.requires_grad))
    module.insert_param_to_cell(name + "_u", Parameter(u, name=name + "_u", requires_grad=False))
    module.insert_param_to_cell(name + "_v", Parameter(v, name=name + "_v", requires_grad=False))

    def compute(self):
        w = getattr(self, name + "_orig")
        u, v = getattr(self, name + "_u"), getattr(self, name + "_v")
        matrix = _spectral_matrix(w, dim)
        if self.training:
            m = ops.stop_gradient(matrix)
            u_new, v_new = u.value(), v.value()
            for _ in range(n_power_iterations):
                v_new = _normalize(ops.mv(m.t(), u_new), eps)
                u_new = _normalize(ops.mv(m, v_new), eps)
            ops.assign(u, u_new)
            ops.assign(v, v_new)
            u, v = u_new, v_new
        sigma = (u * ops.mv(matrix, v)).sum()
        out = w / sigma
        return out.expand_dims(2) if squeezed else out

    hook = (type(module), name, dim, squeezed, n_power_iterations, eps, own)
    module.__class__ = _reparametrized_class(type(module), "_mp_spectral_norm", hook, compute)
    return module


def remove_spectral_norm(module, name="weight"):
    """torch.nn.utils.remove_spectral_norm: ``name`` is a plain parameter again, holding ``name_orig / sigma``
    from the stored u and v (no power-iteration step)."""
    hook = getattr(type(module), "_mp_spectral_norm", None)
    if hook is None or hook[1] != name:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    training = module.training
    module.training = False
    weight = getattr(module, name)
    module.training = training
    module.__class__ = hook[0]
    for suffix in ("_orig", "_u", "_v"):
        del module._params[name + suffix]  # noqa: SLF001
    module.insert_param_to_cell(hook[-1], Parameter(weight, name=hook[-1]))
    return module


# ------------------------------------------------------------------------------------ 1-D convolutions' attributes

def _torch_1d(value):
    """MindSpore's 2-D form of a Conv1d setting ((1, k); padding (0, 0, p, p)) as torch's 1-tuple ((k,), (p,))."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == 1:
        return (value[1],)
    if isinstance(value, tuple) and len(value) == 4 and value[:2] == (0, 0) and value[2] == value[3]:
        return (value[2],)
    return value


_CONV1D_SETTINGS = ("kernel_size", "stride", "dilation", "padding")


class Conv1d(nn.Conv1d):
    """torch.nn.Conv1d: MindSpore's Conv1d, whose kernel_size, stride, dilation and padding read back as torch's
    1-tuples. MindSpore runs a Conv1d as a 2-D convolution and keeps them as (1, k) (padding (0, 0, p, p)), so code
    that computes a causal or "same" padding from ``conv.kernel_size[0]``/``conv.stride[0]`` (EnCodec's SConv1d)
    read 1; ``padding='same'`` reads back as 'same', and torch's ``padding='valid'`` (converted to ``pad_mode='valid'``
    with the explicit zero pair ``padding=(0, 0)``, which MindSpore's Conv1d refuses as a tuple) as 'valid'. The
    convolution itself is MindSpore's, built before the attributes change."""

    def __init__(self, *args, **kwargs):
        valid = kwargs.get("pad_mode") == "valid" and isinstance(kwargs.get("padding"), tuple)
        if valid:
            kwargs["padding"] = 0
        super().__init__(*args, **kwargs)
        for name in _CONV1D_SETTINGS:
            setattr(self, name, _torch_1d(getattr(self, name)))
        if self.pad_mode == "same":  # torch keeps padding='same' as the string (MindSpore: padding 0)
            self.padding = "same"
        if valid:
            self.padding = "valid"


def _torch_pad(padding, dims):
    """A MindSpore convolution's padding (an int, or (begin, end) per spatial axis in axis order) as the F.pad tuple
    (last axis first) that pads the input the same way."""
    pairs = [(padding, padding)] * dims if isinstance(padding, int) else \
        [tuple(padding[i:i + 2]) for i in range(0, len(padding), 2)]
    return tuple(v for pair in reversed(pairs) for v in pair)


def _mode_padded(base, ms_conv, dims, torch_name):
    """``base`` (the Cell torch's convolution maps to) with torch's ``padding_mode`` 'reflect', 'replicate' or
    'circular': the input is padded in that mode and convolved with no padding, which is what torch's
    ``_conv_forward`` does. MindSpore's convolutions only zero-pad, so the converter sends such a layer here (the
    entry's ``switch``); the weights keep their names and shapes, ``padding``/``padding_mode`` read back as torch's.
    ``ms_conv``: the MindSpore class whose arguments the converter wrote."""
    import inspect

    signature = inspect.signature(ms_conv)

    def __init__(self, *args, padding_mode="zeros", **kwargs):
        bound = signature.bind(*args, **kwargs)
        pad_mode = bound.arguments.get("pad_mode", "same")
        padding = bound.arguments.pop("padding", 0)
        if pad_mode == "same":
            raise ValueError(f"mindport: padding='same' with padding_mode={padding_mode!r} has no MindSpore form here; "
                             "give the padding as numbers")
        pads = _torch_pad(padding, dims) if pad_mode == "pad" else (0,) * (2 * dims)
        bound.arguments["pad_mode"] = "valid"
        base.__init__(self, *bound.args, **bound.kwargs)
        self.padding = tuple(pads[::-2][i] for i in range(dims))  # torch's per-axis padding, in axis order
        if pad_mode == "valid" and isinstance(padding, tuple):  # torch's padding='valid' (the converter's zeros)
            self.padding = "valid"
        self.padding_mode = padding_mode
        self._mode_pads = pads
        # ops.pad's reflect mode stops at 4-D inputs: a Conv3d's reflection pads with MirrorPad, as ReflectionPad3d
        self._mp_mirror = padding_mode == "reflect" and dims == 3
        self._mp_pairs = [[pads[2 * i], pads[2 * i + 1]] for i in reversed(range(dims))]
        self._mp_mirror_pad = ops.MirrorPad(mode="REFLECT")

    def construct(self, x):
        # base's construct as a method of self, not base.construct(self, ...): GRAPH_MODE compiles a reparametrised
        # weight (spectral_norm's property) read in a method, and freezes one read from a Cell passed as an argument
        if self._mp_mirror:
            full = [[0, 0]] * (x.ndim - len(self._mp_pairs)) + self._mp_pairs
            return self._mp_padded_base(self._mp_mirror_pad(x, ms.Tensor(full, ms.int64)))
        return self._mp_padded_base(ops.pad(x, self._mode_pads, mode=self.padding_mode))

    return type(f"ModePadded{torch_name}", (base,), {"__init__": __init__, "construct": construct,
                                                      "_mp_padded_base": base.construct, "__doc__": (
        f"torch.nn.{torch_name} with padding_mode 'reflect', 'replicate' or 'circular' (see _mode_padded).")})


ModePaddedConv1d = _mode_padded(Conv1d, nn.Conv1d, 1, "Conv1d")
ModePaddedConv2d = _mode_padded(nn.Conv2d, nn.Conv2d, 2, "Conv2d")
ModePaddedConv3d = _mode_padded(nn.Conv3d, nn.Conv3d, 3, "Conv3d")


class Conv1dTranspose(nn.Conv1dTranspose):
    """torch.nn.ConvTranspose1d: MindSpore's Conv1dTranspose with kernel_size, stride, dilation and padding read back
    as torch's 1-tuples (see :class:`Conv1d`). MindSpore's construct reads its own 2-D settings to size the output;
    they are kept under ``_ms_<name>`` and this construct sizes the output from them. ``output_padding`` is torch's
    (MindSpore's Conv1dTranspose has none): the output ``output_padding`` longer at the end
    (:func:`_transposed_window`)."""

    def __init__(self, *args, output_padding=0, **kwargs):
        super().__init__(*args, **kwargs)
        for name in _CONV1D_SETTINGS:
            setattr(self, "_ms_" + name, getattr(self, name))
            setattr(self, name, _torch_1d(getattr(self, name)))
        self.output_padding = _per_axis(output_padding, 1)
        # MindSpore's 2-D form, as _ms_padding: the output padding past the crop of the padding
        self._geometry = _transpose_geometry(self, (0,) + self.output_padding) if self.output_padding[0] else None

    def construct(self, x):
        if x.ndim == 2:  # torch's unbatched (C, L) input
            return ops.squeeze(self._batched(ops.expand_dims(x, 0)), 0)
        return self._batched(x)

    def _batched(self, x):
        if self.output_padding[0]:
            return _transposed_window(self, self.weight, x, self._geometry)
        x = ops.expand_dims(x, 2)
        n, _, h, w = x.shape
        kernel, stride, dilation, pad = self._ms_kernel_size, self._ms_stride, self._ms_dilation, self._ms_padding
        h_out = _deconv_output_length(self.is_valid, self.is_same, self.is_pad, h, kernel[0], stride[0], dilation[0],
                                      pad[0] + pad[1])
        w_out = _deconv_output_length(self.is_valid, self.is_same, self.is_pad, w, kernel[1], stride[1], dilation[1],
                                      pad[2] + pad[3])
        out = self.conv2d_transpose(x, self.weight, (n, self.out_channels, h_out, w_out))
        if self.has_bias:
            out = self.bias_add(out, self.bias)
        return ops.squeeze(out, 2)


def _per_axis(value, dims):
    """torch's int-or-tuple size argument as a tuple of ``dims`` ints (numpy integers too)."""
    return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),) * dims


def _output_padded(base, dims):
    """``base`` (MindSpore's Conv2dTranspose or Conv3dTranspose) built from torch's ``padding`` and
    ``output_padding`` where MindSpore cannot fold them into its own padding: an output_padding larger than the
    padding (SAC-AE's decoder: padding 0, output_padding 1) reaches past the full transposed result, where torch's
    output holds the bias alone; the converter sends such a layer here, and one whose values are names (decided when
    it is built). The layer is MindSpore's with the padding ``(p, max(p - op, 0))`` per axis, the weights under their
    names; its construct is :func:`_transposed_window`."""

    class OutputPadded(base):
        def __init__(self, *args, padding=0, output_padding=0, **kwargs):
            pads, extra = _per_axis(padding, dims), _per_axis(output_padding, dims)
            kwargs["pad_mode"] = "pad"
            super().__init__(*args, padding=tuple(v for p, o in zip(pads, extra) for v in (p, max(p - o, 0))),
                             **kwargs)
            self.output_padding = extra  # torch's (MindSpore's 2-D construct would pad zeros by it: not called)
            self._geometry = _transpose_geometry(self, tuple(max(o - p, 0) for p, o in zip(pads, extra)))

        def construct(self, x):
            return _transposed_window(self, self.weight, x, self._geometry)

    OutputPadded.__name__ = OutputPadded.__qualname__ = "OutputPadded" + base.__name__
    OutputPadded.__doc__ = (f"torch.nn.ConvTranspose{dims}d with an output_padding larger than its padding "
                            f"(see _output_padded).")
    return OutputPadded


OutputPaddedConv2dTranspose = _output_padded(nn.Conv2dTranspose, 2)
OutputPaddedConv3dTranspose = _output_padded(nn.Conv3dTranspose, 3)


def _transpose_geometry(layer, tail=None):
    """(kernel, stride, dilation, begins, ends, tail) per spatial axis as the layer computes them (a 1-D layer in
    MindSpore's 2-D form): ``begins``/``ends`` the padding taken off the full result at each end, ``tail`` the rows
    past them (torch's output_padding beyond its padding; none by default)."""
    if isinstance(layer, Conv1dTranspose):
        kernel, stride, dilation, pad = layer._ms_kernel_size, layer._ms_stride, layer._ms_dilation, layer._ms_padding
    else:
        kernel, stride, dilation, pad = layer.kernel_size, layer.stride, layer.dilation, layer.padding
    dims = len(kernel)
    if layer.pad_mode == "valid":
        pad = 0
    elif layer.pad_mode != "pad":
        raise ValueError(f"torch's output size needs pad_mode='pad' (the conversion of torch's padding), not "
                         f"{layer.pad_mode!r}")
    pairs = [(pad, pad)] * dims if isinstance(pad, int) else [tuple(pad[i:i + 2]) for i in range(0, 2 * dims, 2)]
    return (tuple(kernel), tuple(stride), tuple(dilation), tuple(b for b, _ in pairs), tuple(e for _, e in pairs),
            tuple(tail) if tail is not None else (0,) * dims)


def _transposed_window(layer, weight, x, geometry, size=None):
    """torch's transposed convolution (ConvTranspose1d/2d/3d) of a MindSpore layer, an output window of the full
    result: the full transposed convolution (no padding taken off), then ``[begin, begin + size)`` per axis, past its
    end zeros, and the bias. ``geometry``: :func:`_transpose_geometry`'s, plus the ``tail`` per axis; ``size``
    (torch's ``output_size``, spatial axes) defaults to the layer's own: the full length less its padding, plus the
    tail (an output_padding larger than the padding). torch's output padding adds those rows at the end, with the
    values the kernel gives there; past the full result, the bias alone. Written for GRAPH_MODE too (one loop per
    axis, no nested comprehension). ``weight``: the layer's, read by the caller (a layer's construct reads
    ``self.weight``: in a method a reparametrised weight, spectral_norm's property, is graph code; read here from a
    Cell given as an argument, GRAPH_MODE would freeze it at compile time: see :mod:`mindport.runtime.unbatched`)."""
    kernel, stride, dilation, begins, ends, tail = geometry
    one_d = len(x.shape) == 3  # a ConvTranspose1d's input, computed in MindSpore's 2-D form
    if one_d:
        x = ops.expand_dims(x, 2)
        if size is not None:
            size = (1,) + tuple(size)
    full = ()
    for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation):
        full += ((n - 1) * s + d * (k - 1) + 1,)
    if size is None:
        size = ()
        for f, b, e, t in zip(full, begins, ends, tail):
            size += (f - b - e + t,)
    else:
        for axis in range(len(full)):
            low = full[axis] - begins[axis] - ends[axis]
            high = low + max(stride[axis], dilation[axis]) - 1
            if size[axis] < low or size[axis] > high:
                raise ValueError(f"requested an output size of {size[one_d:]}, but valid sizes range from {low} to "
                                 f"{high} in dimension {axis - one_d}")
    if len(kernel) == 2:
        conv = ops.Conv2DTranspose(out_channel=layer.in_channels, kernel_size=kernel, mode=1, pad_mode="pad", pad=0,
                                   stride=stride, dilation=dilation, group=layer.group)
        y = conv(x, weight, (x.shape[0], layer.out_channels) + full)
    else:
        conv = ops.Conv3DTranspose(in_channel=layer.in_channels, out_channel=layer.out_channels, kernel_size=kernel,
                                   mode=1, pad_mode="pad", pad=0, stride=stride, dilation=dilation, group=layer.group)
        y = conv(x, weight)
    pads = ()
    past = False
    for b, n, f in zip(begins, size, full):
        pads = (0, max(0, b + n - f)) + pads  # ops.pad's order: the last axis first
        past = past or b + n > f
    if past:
        y = ops.pad(y, pads)
    window = (slice(None), slice(None))
    for b, n in zip(begins, size):
        window += (slice(b, b + n),)
    y = y[window]
    if layer.has_bias:
        y = y + layer.bias.reshape((1, -1) + (1,) * len(kernel))
    if one_d:
        y = ops.squeeze(y, 2)
    return y


class MultiheadAttention(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention: MindSpore's, called with torch's forward arguments. MindSpore 2.10's ``__call__``
    reads ``args[2]`` even when ``value`` is given by keyword (``attn(q, k, value=v, attn_mask=m)``: IndexError), and
    its construct has no ``is_causal`` (in torch a hint that ``attn_mask`` is the causal mask, which it must be given
    with). Building it leaves NumPy's global random stream where it was, as torch does (as every MindSpore layer
    built once ``mindport.runtime.numpy_stream`` is loaded)."""

    def __call__(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                 average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise RuntimeError("mindport: MultiheadAttention(is_causal=True) needs attn_mask, as in torch")
        return super().__call__(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights)


# ------------------------------------------------------------------------------- calls with torch's extra arguments

def call_with_output_size(layer, *args, output_size=None, **kwargs):
    """``layer(x, output_size=...)``: torch's transposed convolutions take the output's size (which picks the
    output padding) at the call; MindSpore's ``Conv2dTranspose`` takes only ``x``. For one of those the size is
    computed here. torch's keyword names of the input (``input=``) are the first argument, as MindSpore's
    ``construct(x, ...)`` takes it (``self.unpool(input=x, indices=i, output_size=s)`` on a MaxUnpool2d); any other
    callable is called as written."""
    if "input" in kwargs and isinstance(layer, nn.Cell):
        args = (kwargs["input"],) + args
        kwargs = _without(kwargs, "input")
    if isinstance(layer, (Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)) and len(args) == 1 \
            and not kwargs:
        if output_size is None:
            return layer(args[0])
        spatial = len(layer.kernel_size) if not isinstance(layer, Conv1dTranspose) else 1
        return _transposed_window(layer, layer.weight, args[0], _transpose_geometry(layer),
                                  tuple(int(v) for v in tuple(output_size)[-spatial:]))
    if isinstance(layer, (nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d)) and "indices" in kwargs:
        args = args + (kwargs["indices"],)
        kwargs = _without(kwargs, "indices")
    if output_size is not None:
        kwargs["output_size"] = tuple(int(v) for v in output_size)
    return layer(*args, **kwargs)


def _without(kwargs, name):
    """``kwargs`` less ``name``, as a new dict: a static graph does not compile ``dict.pop`` ("Cannot iterate over a
    scalar tensor"), and did not drop the key (segnet's ``self.unpool(input=x, indices=i, output_size=s)`` in
    GRAPH_MODE: "Got an unexpected keyword argument 'input'")."""
    return {key: value for key, value in kwargs.items() if key != name}


def reset_running_stats(layer) -> None:
    """``bn.reset_running_stats()`` (a method MindSpore's norms lack): the running mean back to zeros and the
    running variance to ones, found under the names the object's class keeps them (a BatchNorm's moving_mean and
    moving_variance); nothing when the layer tracks none (torch holds None then). MindSpore keeps no
    num_batches_tracked counter to reset."""
    from mindport.runtime.adapt import layer_attribute

    mean, var = layer_attribute(layer, "running_mean"), layer_attribute(layer, "running_var")
    if mean is None or var is None:
        return
    mean.set_data(ops.zeros_like(mean))
    var.set_data(ops.ones_like(var))


def reset_parameters(layer, base: bool = False) -> None:
    """``layer.reset_parameters()`` / ``nn.Linear.reset_parameters(self)``: the layer's own parameters drawn again
    as torch's ``reset_parameters`` draws them, decided by the object's class (MindSpore Cells draw theirs in
    ``__init__`` and have no such method): Dense and the convolutions kaiming-uniform with a=sqrt(5) and a bias
    uniform in +-1/sqrt(fan_in); Bilinear (BiDense) uniform in +-1/sqrt(in1_features); RNN/LSTM/GRU uniform in
    +-1/sqrt(hidden_size) (MindSpore's cells have this draw as their own reset_parameters); Embedding and
    EmbeddingBag N(0, 1) with the padding row zero; the norms (BatchNorm, SyncBatchNorm, InstanceNorm, LayerNorm,
    GroupNorm, RMSNorm) ones and zeros, their running statistics too. A class with a reset_parameters of its own runs it; any other Cell raises TypeError
    naming it. ``layer`` may be ``super()`` (``super().reset_parameters()`` in an override): the next class's own
    method where one has it, else the layer's draw."""
    import math

    from mindspore.common.initializer import HeUniform, One, Uniform, Zero

    own = None if base else getattr(layer, "reset_parameters", None)
    if callable(own):  # a class of the model's with its own reset_parameters (base: the layer's own draw, as
        # nn.Linear.reset_parameters(self) in that method asks); super().reset_parameters(): the next class's own
        own()
        return
    if isinstance(layer, super):  # super().reset_parameters() in a subclass of a layer: no class after it has its
        layer = layer.__self__  # own, so the layer's own draw, as torch's base class's reset_parameters

    def fill(param, init):
        param.set_data(initializer(init, param.shape, param.dtype))

    convolutions = (nn.Dense, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose,
                    nn.Conv3dTranspose)
    if isinstance(layer, convolutions):
        fill(layer.weight, HeUniform(negative_slope=math.sqrt(5)))
        if getattr(layer, "bias", None) is not None:
            shape = layer.weight.shape
            # torch's fan_in is the weight's size(1) times its kernel, a transposed convolution's (in, out/groups,
            # k...) weight too (out/groups * k, as its kaiming draw of the weight)
            fan_in = shape[1] * math.prod(shape[2:]) if len(shape) > 2 else shape[1]
            fill(layer.bias, Uniform(scale=1 / math.sqrt(fan_in)) if fan_in else Zero())
    elif isinstance(layer, nn.Embedding):
        fill(layer.embedding_table, Normal(sigma=1.0))
        if layer.padding_idx is not None:
            table = layer.embedding_table.asnumpy()
            table[layer.padding_idx] = 0
            layer.embedding_table.set_data(ms.Tensor(table))
    elif isinstance(layer, nn.BiDense):  # torch's Bilinear: weight and bias uniform in +-1/sqrt(in1_features)
        bound = 1 / math.sqrt(layer.weight.shape[1])
        for param in layer.get_parameters():
            fill(param, Uniform(scale=bound))
    elif isinstance(layer, (nn.RNN, nn.LSTM, nn.GRU)):  # torch's RNNBase: every weight uniform in +-1/sqrt(hidden)
        bound = 1 / math.sqrt(layer.hidden_size) if layer.hidden_size > 0 else 0
        for param in layer.get_parameters():
            fill(param, Uniform(scale=bound) if bound else Zero())
    elif isinstance(layer, EmbeddingBag):  # N(0, 1), the padding row zero
        table = initializer(Normal(sigma=1.0), layer.weight.shape, layer.weight.dtype).init_data().asnumpy()
        if layer.padding_idx is not None:
            table[layer.padding_idx] = 0
        layer.weight.set_data(ms.Tensor(table))
    elif isinstance(layer, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm, nn.LayerNorm,
                            nn.GroupNorm, LayerNorm, RMSNorm, _InstanceNorm, TorchBatchNorm)):
        # the weight and the running variance ones, the bias, the running mean and num_batches_tracked zeros
        for name, param in layer.parameters_and_names():
            leaf = name.rsplit(".", 1)[-1]
            fill(param, One() if leaf in ("gamma", "moving_variance", "weight", "running_var") else Zero())
    else:
        raise TypeError(f"mindport: reset_parameters() of a {type(layer).__name__}: torch's way of drawing its "
                        f"weights has no MindSpore counterpart here; re-initialise each Parameter with set_data")


def conv_forward(layer, x, weight, bias=None):
    """torch's ``conv._conv_forward(x, weight, bias)``: the layer's convolution (its stride, padding, dilation and
    groups) with another weight and bias (LoRA's merged kernel; a causal Conv1d subclass's
    ``self._conv_forward(F.pad(x, [k - 1, 0]), self.weight, self.bias)``). A Conv2d's or a Conv1d's; any other layer
    raises TypeError."""
    if isinstance(layer, nn.Conv1d):
        return _conv1d_forward(layer, x, weight, bias)
    if not isinstance(layer, nn.Conv2d):
        raise TypeError(f"mindport: _conv_forward of a {type(layer).__name__}: only a Conv2d's or a Conv1d's converts")
    mode, padding = layer.pad_mode, layer.padding
    if mode == "pad":
        pads = (padding,) * 4 if isinstance(padding, int) else tuple(padding)
        if pads[0] == pads[1] and pads[2] == pads[3]:
            padding = (pads[0], pads[2])
        else:  # asymmetric: ops.pad takes (left, right, top, bottom)
            x = ops.pad(x, (pads[2], pads[3], pads[0], pads[1]))
            mode, padding = "valid", 0
    return ops.conv2d(x, weight, bias, stride=layer.stride, pad_mode=mode, padding=padding, dilation=layer.dilation,
                      groups=layer.group)


def _conv1d_forward(layer, x, weight, bias):
    """A MindSpore Conv1d keeps its settings as a Conv2d's over a height of 1 (stride ``(1, s)``, dilation
    ``(1, d)``, padding ``(0, 0, left, right)``) and its weight 4-D ``(out, in/groups, 1, k)``: the 1-D convolution
    with them, a 4-D weight taken as its own (torch's 3-D one as it is)."""
    last = lambda v: v[-1] if isinstance(v, (tuple, list)) else v  # noqa: E731
    mode, padding = layer.pad_mode, layer.padding
    if mode == "pad":
        pads = (padding,) if isinstance(padding, int) else tuple(padding)  # (p,), (left, right) or (0, 0, l, r)
        left, right = (pads * 2)[-2:] if len(pads) == 1 else pads[-2:]
        if left == right:
            padding = left
        else:
            x = ops.pad(x, (left, right))
            mode, padding = "valid", 0
    if weight.ndim == 4 and weight.shape[2] == 1:
        weight = weight.squeeze(2)
    return ops.conv1d(x, weight, bias, stride=last(layer.stride), pad_mode=mode, padding=padding,
                      dilation=last(layer.dilation), groups=layer.group)


# ------------------------------------------------------------------------- torch's private layer base classes

class _CumulativeBatchNorm(nn.BatchNorm2d):
    """torch's ``BatchNorm*d(momentum=None)``: the running statistics are the cumulative (equal-weight) average of
    every training batch's statistics, ``running = running * (1 - 1/n) + batch * 1/n`` with ``n`` the batches seen
    (``num_batches_tracked``, counted in training as torch counts it); MindSpore's BatchNorm takes a fixed momentum
    only. MindSpore's constructor and parameter names (``gamma``, ``beta``, ``moving_mean``, ``moving_variance``: the
    converter maps the other arguments as it does for MindSpore's own BatchNorm, and checkpoints map the same way),
    torch's forward: batch statistics in training (and always with ``use_batch_statistics=True``, torch's
    ``track_running_stats=False``, which updates nothing), the unbiased variance into the running one, the running
    statistics in eval."""

    _RANKS = (2, 3, 4, 5)

    def __init__(self, num_features, eps=1e-5, momentum=None, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, data_format="NCHW",
                 dtype=ms.float32):
        # MindSpore's checks take a momentum in [0, 1]; this layer reads its own (None: the factor is 1/n)
        super().__init__(num_features, eps=eps, momentum=0.9, affine=affine, gamma_init=gamma_init,
                         beta_init=beta_init, moving_mean_init=moving_mean_init, moving_var_init=moving_var_init,
                         use_batch_statistics=use_batch_statistics, data_format=data_format, dtype=dtype)
        self.momentum = momentum
        self.num_batches_tracked = Parameter(ms.Tensor(0, ms.int64), name="num_batches_tracked", requires_grad=False)

    def construct(self, x):
        if x.ndim not in self._RANKS:
            raise ValueError(f"expected {' or '.join(f'{r}D' for r in self._RANKS)} input (got {x.ndim}D input)")
        tracked = self.use_batch_statistics is None  # True: torch's track_running_stats=False (no running update)
        batch_stats = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if batch_stats:
            mean = x.mean(axes, keep_dims=True)
            var = ((x - mean) ** 2).mean(axes, keep_dims=True)
        else:
            mean, var = self.moving_mean.reshape(shape), self.moving_variance.reshape(shape)
        out = (x - mean) / ops.sqrt(var + self.eps) * self.gamma.reshape(shape) + self.beta.reshape(shape)
        if self.training and tracked:
            ops.assign_add(self.num_batches_tracked, ms.Tensor(1, ms.int64))
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.astype(ms.float32)
            else:  # a number written after construction (MindSpore's convention, set_layer_attribute: 1 - torch's)
                factor = 1.0 - self.momentum
            count = x.size // x.shape[1]
            unbiased = var.reshape(-1) * (count / max(count - 1, 1))
            ops.assign(self.moving_mean, self.moving_mean * (1 - factor) + mean.reshape(-1) * factor)
            ops.assign(self.moving_variance, self.moving_variance * (1 - factor) + unbiased * factor)
        return out


class CumulativeBatchNorm1d(_CumulativeBatchNorm):
    """``nn.BatchNorm1d(n, momentum=None)`` (see :class:`_CumulativeBatchNorm`): 2-D or 3-D inputs."""

    _RANKS = (2, 3)


class CumulativeBatchNorm2d(_CumulativeBatchNorm):
    """``nn.BatchNorm2d(n, momentum=None)`` (see :class:`_CumulativeBatchNorm`): 4-D inputs."""

    _RANKS = (4,)


class _CumulativeBatchNorm5d(_CumulativeBatchNorm):
    _RANKS = (5,)


class CumulativeBatchNorm3d(nn.BatchNorm3d):
    """``nn.BatchNorm3d(n, momentum=None)`` (see :class:`_CumulativeBatchNorm`): 5-D inputs; its parameters in a
    child ``bn2d`` as MindSpore's BatchNorm3d holds them (checkpoints map the same way), the batch count on it as
    on torch's layer (the child's own, one Parameter)."""

    def __init__(self, num_features, eps=1e-5, momentum=None, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, dtype=ms.float32):
        super().__init__(num_features, eps=eps, momentum=0.9, affine=affine, gamma_init=gamma_init,
                         beta_init=beta_init, moving_mean_init=moving_mean_init, moving_var_init=moving_var_init,
                         use_batch_statistics=use_batch_statistics, dtype=dtype)
        self.bn2d = _CumulativeBatchNorm5d(num_features, eps, momentum, affine, gamma_init, beta_init,
                                           moving_mean_init, moving_var_init, use_batch_statistics, dtype=dtype)
        self.momentum = momentum
        self.num_batches_tracked = self.bn2d.num_batches_tracked

    def construct(self, x):
        return self.bn2d(x)


class TorchBatchNorm(nn.Cell):
    """torch's ``_BatchNorm`` as the base a project class derives from (asteroid: ``class BatchNorm(_BatchNorm)``
    overriding ``_check_input_dim`` to take 3-D and 4-D inputs): torch's constructor and forward (the subclass's
    ``_check_input_dim``, then batch normalisation over every axis but the channels, running statistics updated in
    training with the unbiased variance, ``momentum=None`` as the cumulative average), its parameters and buffers
    under torch's names (``weight``, ``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``), so a
    torch state_dict lands on it by name. MindSpore's own BatchNorm Cells fix the rank and name their parameters
    their own way."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ops.ones(num_features, ms.float32), name="weight") if affine else None
        self.bias = Parameter(ops.zeros(num_features, ms.float32), name="bias") if affine else None
        if track_running_stats:
            self.running_mean = Parameter(ops.zeros(num_features, ms.float32), name="running_mean",
                                          requires_grad=False)
            self.running_var = Parameter(ops.ones(num_features, ms.float32), name="running_var", requires_grad=False)
            self.num_batches_tracked = Parameter(ms.Tensor(0, ms.int64), name="num_batches_tracked",
                                                 requires_grad=False)
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def _check_input_dim(self, input):
        raise NotImplementedError  # torch's _BatchNorm leaves it to the subclass

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.set_data(ops.zeros(self.num_features, ms.float32))
            self.running_var.set_data(ops.ones(self.num_features, ms.float32))
            self.num_batches_tracked.set_data(ms.Tensor(0, ms.int64))

    def construct(self, input):
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            ops.assign_add(self.num_batches_tracked, ms.Tensor(1, ms.int64))
            if self.momentum is None:
                momentum = 1.0 / self.num_batches_tracked.astype(ms.float32)
        batch_stats = self.training or not self.track_running_stats
        axes = (0,) + tuple(range(2, input.ndim))
        shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
        if batch_stats:
            mean = input.mean(axes, keep_dims=True)
            var = ((input - mean) ** 2).mean(axes, keep_dims=True)
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
        out = (input - mean) / ops.sqrt(var + self.eps)
        if self.affine:
            out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        if self.training and self.track_running_stats:
            count = input.size // input.shape[1]
            unbiased = var.reshape(-1) * (count / max(count - 1, 1))
            ops.assign(self.running_mean, self.running_mean * (1 - momentum) + mean.reshape(-1) * momentum)
            ops.assign(self.running_var, self.running_var * (1 - momentum) + unbiased * momentum)
        return out


class TorchLoss(nn.Cell):
    """torch's ``_Loss`` as the base a project class derives from (``class DiceLoss(_Loss)``, segmentation and audio
    losses): torch's constructor, ``reduction`` kept, the legacy ``size_average``/``reduce`` folded into it as torch
    does (``reduce=False``: "none"; else ``size_average=False``: "sum"; else "mean"). The subclass's ``forward`` is
    its ``construct``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = "none" if reduce is False else "sum" if size_average is False else "mean"
        self.reduction = reduction


class TorchWeightedLoss(TorchLoss):
    """torch's ``_WeightedLoss`` as a base: :class:`TorchLoss` with the class weights registered as torch registers
    its ``weight`` buffer (a non-trainable Parameter under that name, None when not given), so a checkpoint's
    ``criterion.weight`` lands on it."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.weight = None if weight is None else Parameter(weight, name="weight", requires_grad=False)


class _Family(type):
    """A torch private base class model code tests objects against (``isinstance(m, nn.modules.conv._ConvNd)``,
    ``isinstance(m, _BatchNorm)`` in init and freezing loops): true for the classes its torch subclasses convert to
    (``members``). A class derived from it derives from ``base`` instead, the Cell with the private base's torch
    behaviour (``_BatchNorm``: :class:`TorchBatchNorm`); a family without one (torch's ``__init__`` of it builds
    weights a MindSpore class lays out its own way) gives a Cell whose construction raises with the reason: the
    module that defines the class still imports (its other classes convert), only building the class fails."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        families = [b for b in bases if isinstance(b, _Family)]
        if not families:
            return super().__new__(mcs, name, bases, namespace, **kwargs)
        family = families[0]
        if family.base is None:
            reason = (f"mindport: {family.torch_name} is torch's private base of its layers: model code may test "
                      f"objects against it, not derive from it; derive {name} from the public layer it specialises")

            def __init__(self, *args, **kw):  # noqa: N807 - the refusal, when the class is built
                raise TypeError(reason)

            namespace = {**namespace, "__init__": __init__}
        real = tuple((b.base or nn.Cell) if isinstance(b, _Family) else b for b in bases)
        return type(real[0])(name, real, namespace, **kwargs)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls.members)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls.members)

    def __call__(cls, *args, **kwargs):
        raise RuntimeError(f"mindport: {cls.torch_name} is torch's private base of its layers, a type for "
                           "isinstance tests: build the public layer instead")


def _family(name: str, torch_name: str, members: tuple, base: type | None = None) -> type:
    return _Family(name, (), {"members": members + ((base,) if base is not None else ()), "base": base,
                              "torch_name": torch_name,
                              "__doc__": f"``{torch_name}`` in isinstance/issubclass tests (see _Family)."})


ConvNd = _family("ConvNd", "torch.nn.modules.conv._ConvNd", (nn.layer.conv._Conv,))  # noqa: SLF001
BatchNormNd = _family("BatchNormNd", "torch.nn.modules.batchnorm._BatchNorm",
                      (nn.layer.normalization._BatchNorm, nn.BatchNorm3d), base=TorchBatchNorm)  # noqa: SLF001
InstanceNormNd = _family("InstanceNormNd", "torch.nn.modules.instancenorm._InstanceNorm",
                         (_InstanceNorm, nn.layer.normalization._InstanceNorm))  # noqa: SLF001
Loss = _family("Loss", "torch.nn.modules.loss._Loss", (nn.LossBase, _Loss), base=TorchLoss)
WeightedLoss = _family("WeightedLoss", "torch.nn.modules.loss._WeightedLoss", (), base=TorchWeightedLoss)
NormBase = _family("NormBase", "torch.nn.modules.batchnorm._NormBase",
                   BatchNormNd.members + InstanceNormNd.members)


# ------------------------------------------------------------------------------------------------------ lazy layers

_LAZY_IN_GRAPH = ("a lazy layer (torch's nn.Lazy*: its sizes are read from the first input) has not seen an input "
                  "yet, which a static graph cannot do: run the model once in PyNative mode first (a dry run, "
                  "model(dummy_input)), then switch to GRAPH_MODE or ms.jit")


class _LazyLayer(nn.Cell):
    """torch's ``nn.Lazy*`` layers: torch infers ``in_features`` / ``in_channels`` / ``num_features`` from the first
    input. The converter emits this Cell with the MindSpore keyword arguments of the layer it stands for (the same
    table entry's renames and transforms as the eager layer's, minus the inferred size); the first call builds that
    layer with the size read from the input (:meth:`_build`) and runs it from then on.

    Each Lazy* Cell derives from the layer it builds (``isinstance(m, nn.Dense)``, as torch's LazyLinear is a
    Linear). The parameters exist from the start, under the layer's own leaf names (``weight``, ``gamma``, ...), so they take
    their full names when the Cell is set on its parent and an optimizer built before the first call holds them:
    made with a placeholder size, they are resized in place at the first call (the same Parameter objects, as
    torch's ``UninitializedParameter`` becomes a Parameter in place). A static graph (GRAPH_MODE, ``ms.jit``) cannot
    build a layer, so there the first call must already have happened in PyNative (a dry run ``model(dummy)``)."""

    _dims = 0  # spatial dimensions of the input (Linear: 0, the size is the last axis)
    _size = "in_channels"  # the keyword the inferred size is passed as

    def __init__(self, **kwargs):
        nn.Cell.__init__(self)  # not the layer class's (each Lazy* Cell derives from it, as torch's from its eager one)
        self.__dict__["_mp_kwargs"] = kwargs
        self.__dict__["_mp_layer"] = None
        placeholder = self._build(self._placeholder_size())
        for leaf, param in placeholder._params.items():  # noqa: SLF001 - the layer's own parameters, by leaf name
            if param is not None:
                setattr(self, leaf, param)
        for name, child in placeholder._cells.items():  # noqa: SLF001 - a layer built of cells (BatchNorm3d's bn2d)
            if child is not None:
                setattr(self, name, child)

    def _placeholder_size(self) -> int:
        return int(self._mp_kwargs.get("group", 1) or 1)  # a convolution's in_channels must divide by its groups

    def _layer_class(self):
        raise NotImplementedError

    def _build(self, size: int):
        return self._layer_class()(**{self._size: size}, **self._mp_kwargs)

    def _inferred_size(self, x) -> int:
        if self._size == "num_features":  # torch's _LazyNormBase: input.shape[1]
            return int(x.shape[1])
        if self._dims == 0:
            return int(x.shape[-1])
        return int(x.shape[0] if x.ndim == self._dims + 1 else x.shape[1])  # an unbatched input: (C, *spatial)

    def has_uninitialized_params(self) -> bool:
        """torch's LazyModuleMixin.has_uninitialized_params: True until the first call (or a weight load)."""
        return self._mp_layer is None

    def _size_of(self, shapes: dict) -> int | None:
        """The inferred size a torch state_dict's tensors of this layer give (leaf name -> shape): torch's lazy
        layers take their sizes from the weights loaded into them before any call (``load_state_dict``)."""
        shape = shapes.get("weight")
        if shape is None or len(shape) < 2:
            return None
        return int(shape[1]) * int(self._mp_kwargs.get("group", 1) or 1)  # (out, in/groups, *kernel)

    def materialize(self, size: int) -> None:
        """Build the layer for the inferred size ``size`` (the first call does it from the input)."""
        layer = self._build(size)
        mine = dict(self.parameters_and_names())  # the placeholders, by their path in this Cell
        for path, cell in layer.cells_and_names():
            for leaf, param in list(cell._params.items()):  # noqa: SLF001
                held = mine.get(f"{path}.{leaf}" if path else leaf)
                if param is None or held is None:
                    continue
                held.set_data(param.data.copy(), slice_shape=True)
                held._mp_lazy = True  # an optimizer built before resizes its state slots (runtime.frozen) at its step
                cell._params[leaf] = held  # noqa: SLF001 - the layer runs on the Parameters the model (and optimizer) hold
        # the settings of the built layer's own cells on this Cell's placeholders of them (BatchNorm3d's bn2d: its
        # num_features, which torch_members' BatchNorm3d.num_features reads, was the placeholder's 1)
        placeholders = dict(self.cells_and_names())
        for path, cell in layer.cells_and_names():
            held = placeholders.get(path) if path else None
            if held is not None and held is not cell:
                held.__dict__.update({k: v for k, v in vars(cell).items() if not k.startswith("_")
                                      and isinstance(v, (bool, int, float, str, tuple))})
        layer.set_train(self.training)
        self.__dict__["_mp_layer"] = layer

    def __call__(self, *args, **kwargs):
        if self._mp_layer is None and ms.get_context("mode") != ms.GRAPH_MODE and not _in_graph():
            self.materialize(self._inferred_size(args[0]))
        return super().__call__(*args, **kwargs)

    def extend_repr(self):
        return self._mp_layer.extend_repr() if self._mp_layer is not None else "uninitialized"

    def add_flags_recursive(self, **flags):
        super().add_flags_recursive(**flags)  # set_train(mode) comes this way: the built layer is not a sub-cell
        if self._mp_layer is not None:
            self._mp_layer.add_flags_recursive(**flags)
        return self

    def construct(self, *args, **kwargs):
        if self._mp_layer is None:
            raise RuntimeError(_LAZY_IN_GRAPH)
        return self._mp_layer(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            layer = self.__dict__.get("_mp_layer")
            if layer is None:
                raise
            return getattr(layer, name)  # the built layer's settings (out_channels, kernel_size, eps, ...)


class LazyLinear(_LazyLayer, nn.Dense):
    """torch.nn.LazyLinear: nn.Dense with in_channels read from the first input's last axis."""

    def _layer_class(self):
        return nn.Dense


def _transposed_size(self, shapes: dict) -> int | None:
    """A lazy transposed convolution's in_channels from a state_dict's weight shape (see _LazyLayer._size_of)."""
    shape = shapes.get("weight")
    return int(shape[0]) if shape is not None and len(shape) > 2 else None  # (in, out/groups, *kernel)


def _norm_size(self, shapes: dict) -> int | None:
    """A lazy norm layer's num_features from a state_dict's 1-d tensors (see _LazyLayer._size_of)."""
    for leaf in ("running_mean", "running_var", "weight", "bias"):
        if shapes.get(leaf) is not None and len(shapes[leaf]) == 1:
            return int(shapes[leaf][0])
    return None


def _lazy_conv(name: str, dims: int, plain, mode_padded=None, output_padded=None):
    """A lazy convolution: ``plain`` (MindSpore's own, or mindport's), or the layer the eager entry would switch to
    for torch's other padding modes (``padding_mode`` given) or an output_padding past the padding."""

    def _layer_class(self):
        if mode_padded is not None and "padding_mode" in self._mp_kwargs:
            return mode_padded
        if output_padded is not None and "output_padding" in self._mp_kwargs:
            return output_padded
        return plain

    size_of = _transposed_size if "Transpose" in name else _LazyLayer._size_of
    return type(name, (_LazyLayer, plain), {
        "_dims": dims, "_layer_class": _layer_class, "__module__": __name__, "_size_of": size_of,
        "__doc__": f"torch.nn.{name}: {plain.__name__} with in_channels read from the first input (see _LazyLayer)."})


LazyConv1d = _lazy_conv("LazyConv1d", 1, Conv1d, ModePaddedConv1d)
LazyConv2d = _lazy_conv("LazyConv2d", 2, nn.Conv2d, ModePaddedConv2d)
LazyConv3d = _lazy_conv("LazyConv3d", 3, nn.Conv3d, ModePaddedConv3d)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", 1, Conv1dTranspose)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", 2, nn.Conv2dTranspose, None, OutputPaddedConv2dTranspose)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", 3, nn.Conv3dTranspose, None, OutputPaddedConv3dTranspose)


def _lazy_norm(name: str, dims: int, layer):
    def _layer_class(self):
        return layer

    return type(name, (_LazyLayer, layer), {
        "_dims": dims, "_size": "num_features", "_layer_class": _layer_class, "_placeholder_size": lambda self: 1,
        "_size_of": _norm_size, "__module__": __name__,
        "__doc__": f"torch.nn.{name}: {layer.__name__} with num_features read from the first input (see _LazyLayer)."})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", 1, nn.BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", 2, nn.BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", 3, nn.BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", 1, InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", 2, InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", 3, InstanceNorm3d)
