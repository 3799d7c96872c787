"""Runs one training script of the corpus under a fixed seed, optionally made deterministic across frameworks.

Usage: python boot.py SIDE MODE STATE_DIR SCRIPT [ARGS...]

SIDE is ``torch`` or ``mindspore``; MODE is ``plain``, ``track`` or ``control``. The script runs as ``__main__`` with its own
folder first on ``sys.path`` and as the working directory, exactly as ``python SCRIPT ARGS`` would run it.

``track`` makes a script deterministic across the two frameworks without touching its code:
- every random draw the script makes through the framework (``randn``, ``rand``, ``randint``, ``normal``,
  ``randn_like``, ``rand_like``, ``randperm``) comes from one numpy stream seeded alike on both sides, so the data
  and the noise are the same numbers;
- each optimizer records (torch) or receives (MindSpore) its parameters' initial values when it is built, in the
  order of its parameter list, so both sides start from the same weights (a MindSpore parameter whose layout only
  adds unit axes, as Conv1d's (out, in, 1, k) weight for torch's (out, in, k), receives the same values reshaped;
  the parameters of one MindSpore RNN/LSTM/GRU layer, listed by kind, are paired in torch's order: see torch_order);
  a lazy layer's (nn.LazyLinear...) parameters, which have no values yet when an optimizer is built before its first
  input, are recorded/received when that input makes them (``lazyN.npz``, in the order the layers meet an input).
``nudge`` (torch only) is ``track`` with each optimizer's initial weights moved by one unit in the last place (up or
down, seeded): how far a last-bit difference alone carries the script's losses, where training crosses a kink (a
ReLU whose input is within rounding of zero flips, a max picks another element) and the float64 control happens not
to (the runner's second noise control).
``control`` (torch only) is ``track`` in float64: the default dtype is float64, float32 tensors made from data are
float64, the random stream is the same numbers in float64, and each optimizer receives the float32 run's initial
weights. Its losses measure how far float32 rounding alone moves the script's losses (the runner's noise control).
Nothing here is imported by the converted code; it only wraps the run.
"""
import os
import random
import re
import runpy
import sys
import weakref

import numpy as np

SEED = 0
_stream = np.random.RandomState(1234)
_nudges = np.random.RandomState(4321)  # the nudge control's directions, apart from the data stream


def _size(args, kwargs):
    size = kwargs.pop("size", None)
    if size is None:
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            size = tuple(args[0])
        else:
            size = tuple(int(a) for a in args)
    elif not isinstance(size, (tuple, list)):
        size = (int(size),)
    return tuple(int(s) for s in size)


def _value(x):
    """A tensor's values (either framework) or a number, as numpy."""
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x.asnumpy() if hasattr(x, "asnumpy") else x)


def _normal(mean, std, size):
    """normal(mean, std[, size]) from the shared stream: standard draws of the broadcast (or given) shape, scaled and
    shifted in float64, rounded to float32, the same numbers on both sides."""
    shape = size if size is not None else np.broadcast_shapes(np.shape(mean), np.shape(std))
    return (mean + std * _stream.standard_normal(shape)).astype(np.float32)


def _randint(*args, size=None, low=None, high=None, **_):
    """torch.randint's forms ``(high, size)``, ``(low, high, size)`` (and keywords); ops.randint's ``(low, high,
    size)``: int64 draws from the shared stream."""
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)) or size is None and len(args) == 3:
        size = args.pop()
    if high is None:
        high = args.pop() if args else None
    if low is None:
        low = args.pop() if args else 0
    size = tuple(int(n) for n in (size if isinstance(size, (tuple, list)) else (size,)))
    return _stream.randint(int(_value(low)), int(_value(high)), size).astype(np.int64)


def _multinomial(weights, num_samples, replacement=False):
    """multinomial(weights, n, replacement) from the shared stream: each sample one uniform draw, the category whose
    cumulative weight (float64) first exceeds draw * total (without replacement a drawn category's weight is then
    zero), int64 of torch's shape ((n,) for 1-d weights, (rows, n) for 2-d). The same categories on both sides from
    the same weights: torch's Categorical.sample (torch.multinomial) and mindport's (ops.multinomial) drew their
    frameworks' own generators, so a policy-gradient script sampled other actions on each side from its first step
    (ghj0504520/RL-LIB: episode lengths 32, 25, 21 in torch, 18, 29, 12 in MindSpore, from the same weights)."""
    w = np.asarray(weights, dtype=np.float64)
    rows = w.reshape(-1, w.shape[-1]).copy()
    out = np.empty((rows.shape[0], int(num_samples)), dtype=np.int64)
    for r, row in enumerate(rows):
        for k in range(int(num_samples)):
            cum = np.cumsum(row)
            out[r, k] = min(int(np.searchsorted(cum, _stream.random_sample() * cum[-1], side="right")), len(row) - 1)
            if not replacement:
                row[out[r, k]] = 0.0
    return out.reshape(w.shape[:-1] + (int(num_samples),))


def _dropout_mask(shape, p, kind="element"):
    """The keep-and-scale mask of a dropout in training from the shared stream: one uniform draw per dropped unit
    (an element, or a whole feature map of torch's dropout1d/2d/3d: one per (N, C), per C of an unbatched input),
    kept where the draw is >= p, kept units scaled by 1/(1-p) (float32); shaped to broadcast over the input. The
    same units on both sides from the same stream (torch's bernoulli and MindSpore's kernels drew their own)."""
    shape, p = tuple(int(n) for n in shape), float(p)
    ndim = len(shape)
    lead = {"element": ndim, "1d": 2 if ndim == 3 else 1, "2d": min(2, ndim),
            "3d": 2 if ndim == 5 else 1}[kind]
    mshape = shape[:lead] + (1,) * (ndim - lead)
    if p >= 1.0:
        return np.zeros(mshape, np.float32)
    keep = _stream.random_sample(mshape) >= p
    return keep.astype(np.float32) * np.float32(1.0 / (1.0 - p))


def _shared_sdpa(torch, sdpa):
    """torch's scaled_dot_product_attention with its attention-weight dropout from the shared stream (see
    _dropout_mask): with ``dropout_p`` > 0 it drew torch's own generator inside the kernel, bypassing F.dropout.
    nn.MultiheadAttention (need_weights=False, as nn.TransformerEncoderLayer/DecoderLayer and so nn.Transformer call
    it) and a model's own F.scaled_dot_product_attention(..., dropout_p=p) call it; mindport's side (its
    scaled_dot_product_attention, MindSpore's nn.MultiheadAttention) drops the same (B, heads, L, S) weights, in the
    same order, from the same stream. Without dropout it is torch's own kernel."""
    import math

    def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
        if dropout_p == 0.0:
            return sdpa(query, key, value, attn_mask=attn_mask, dropout_p=0.0, is_causal=is_causal, scale=scale, **kw)
        length, source = query.size(-2), key.size(-2)
        scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(query.size(-1)) if scale is None else scale)
        if is_causal:
            scores = scores.masked_fill(~torch.ones(length, source, dtype=torch.bool).tril(), float("-inf"))
        if attn_mask is not None:
            scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool \
                else scores + attn_mask
        weights = torch.softmax(scores, dim=-1)
        weights = weights * torch.from_numpy(_dropout_mask(weights.shape, dropout_p)).to(weights.dtype)
        return weights @ value
    return attention


def _shape_of(t):
    return tuple(int(s) for s in t.shape)


def fit_layout(array, shape):
    """torch's array for a parameter of ``shape``: as is, or reshaped when the two layouts differ only by unit axes
    (MindSpore's Conv1d keeps a 4-d (out, in, 1, k) weight); None when they do not fit."""
    shape = tuple(shape)
    if array.shape == shape:
        return array
    if tuple(d for d in array.shape if d != 1) == tuple(d for d in shape if d != 1):
        return array.reshape(shape)
    return None


_RNN_PARAMETER = re.compile(r"^(.*?)(weight|bias)_(ih|hh)_l(\d+)(_reverse)?$")
_RNN_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _rnn_key(name):
    m = _RNN_PARAMETER.match(name)
    return int(m.group(4)), bool(m.group(5)), _RNN_KINDS.index(m.group(2) + "_" + m.group(3))


def torch_order(params):
    """``params`` (MindSpore parameters, in an optimizer's order) with each multi-layer or bidirectional RNN/LSTM/GRU
    layer's parameters in torch's order. MindSpore's nn.RNN/LSTM/GRU list them by kind (every layer's and direction's
    weight_ih, then weight_hh, bias_ih, bias_hh), torch's by layer, then direction, then kind; the names are the same
    (``lstm.weight_hh_l0``). Without this a 2-layer LSTM's second parameter (weight_ih_l1) received torch's
    weight_hh_l0 and the third failed on a bias (jessicayung/lstm_ar). A run of consecutive parameters of one layer
    (the same name prefix) is sorted; every other parameter keeps its place."""
    out, i = [], 0
    while i < len(params):
        m = _RNN_PARAMETER.match(params[i].name)
        j = i + 1
        if m:
            while j < len(params):
                n = _RNN_PARAMETER.match(params[j].name)
                if not n or n.group(1) != m.group(1):
                    break
                j += 1
            out.extend(sorted(params[i:j], key=lambda p: _rnn_key(p.name)))
        else:
            out.append(params[i])
        i = j
    return out


# what an optimizer's record holds for a lazy layer's parameter that has no value yet when the optimizer is built
# (an int8 array of no elements: no parameter is one); its value is recorded when the layer meets its first input
LAZY = np.zeros((0,), np.int8)


def _is_lazy(array):
    return array.dtype == np.int8 and array.size == 0


def _load_npz(path):
    if not os.path.exists(path):
        raise RuntimeError("track: the torch run recorded fewer weights (%s missing)" % path)
    with np.load(path) as data:
        return [data["arr_%d" % i] for i in range(len(data.files))]


def _load_arrays(state, index):
    return _load_npz(os.path.join(state, "opt%d.npz" % index))


def nudged(array, rng):
    """``array`` moved by one unit in the last place, each element up or down at random (float arrays only)."""
    if not np.issubdtype(array.dtype, np.floating):
        return array
    toward = np.where(rng.random_sample(array.shape) < 0.5, -np.inf, np.inf).astype(array.dtype)
    return np.asarray(np.nextafter(array, toward))  # a 0-d parameter's array too (nextafter gives a numpy scalar)



def _install_torch(mode, state):
    import torch
    torch.manual_seed(SEED)
    if mode not in ("track", "control", "nudge"):
        return
    real = torch.float64 if mode == "control" else torch.float32
    if mode == "control":
        _float64_torch(torch)
    def as_t(a, dt=None, requires_grad=False, **_):  # torch.randn(..., requires_grad=True) makes a leaf
        return torch.from_numpy(np.ascontiguousarray(a)).to(dt or real).requires_grad_(bool(requires_grad))
    torch.randn = lambda *a, dtype=None, **k: as_t(_stream.standard_normal(_size(a, k)).astype(np.float32), dtype, **k)
    torch.rand = lambda *a, dtype=None, **k: as_t(_stream.random_sample(_size(a, k)).astype(np.float32), dtype, **k)
    torch.randn_like = lambda x, dtype=None, **k: as_t(_stream.standard_normal(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    torch.rand_like = lambda x, dtype=None, **k: as_t(_stream.random_sample(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    torch.randperm = lambda n, **k: torch.from_numpy(_stream.permutation(int(n)).astype(np.int64))
    # torch.randint(high, size) / (low, high, size): the shared stream (mindport's ops.randint draws it too); it was
    # named above but drew each framework's own generator (zeroling's batch starts, 2xic's key bits, zhaojun's labels)
    torch.randint = lambda *a, dtype=None, **k: torch.from_numpy(_randint(*a, **k)).to(dtype or torch.int64)
    # random_split calls the `randperm` torch.utils.data.dataset imported by name (`from torch import randperm`), not
    # torch.randperm: without this its split came from torch's own stream while mindport's drew the shared one
    # (kakituken/lenet_bn: other train/test subsets, its first loss 2.6e-3 apart from the same weights)
    import torch.utils.data.dataset as _torch_dataset
    _torch_dataset.randperm = torch.randperm
    # Categorical.sample and torch.multinomial / Tensor.multinomial: the shared stream (see _multinomial)
    torch.multinomial = lambda input, num_samples, replacement=False, **k: torch.from_numpy(
        _multinomial(_value(input), num_samples, replacement))
    torch.Tensor.multinomial = lambda self, num_samples, replacement=False, **k: torch.multinomial(
        self, num_samples, replacement)
    # A DataLoader with workers prefetches its sampler's indices when an epoch's iterator is made (prefetch_factor x
    # num_workers batches): a RandomSampler draws its closing permutation (torch's `randperm(n)[:count % n]`, drawn
    # even when empty) before the epoch's batches, so the shared stream's draws inside the epoch (randn_like of a
    # VAE's reparameterisation) came after one more permutation than mindport's, which reads indices as batches are
    # taken (rwickman/vae_trainer: 7e-6 apart at step 1, 1.5e-2 in epoch 2). The loader reads in this process here,
    # as mindport's does: the same batches, the same order of draws
    import torch.utils.data.dataloader as _torch_loader
    loader_init = _torch_loader.DataLoader.__init__

    def single_process(self, *a, **k):
        k.update(prefetch_factor=None, persistent_workers=False)
        if len(a) > 5:  # num_workers given by position (dataset, batch_size, shuffle, sampler, batch_sampler, nw)
            a = a[:5] + (0,) + a[6:]
        else:
            k["num_workers"] = 0
        loader_init(self, *a, **k)
    _torch_loader.DataLoader.__init__ = single_process
    # dropout in training (F.dropout and dropout1d/2d/3d, which nn.Dropout* and torch's attention/transformer layers
    # call): masks from the shared stream (see _dropout_mask), as mindport's side below. Before, each side drew its
    # own generator: a deterministic entry with dropout parted at its first loss (ethan/angular_softmax_resnet's
    # Dropout2d, 9.4e-2), and every later shared draw came after a different history on each side
    import torch.nn.functional as _tF

    def shared_dropout(kind):
        def dropout(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return input
            mask = torch.from_numpy(_dropout_mask(input.shape, p, kind)).to(input.dtype)
            return input.mul_(mask) if inplace else input * mask
        return dropout
    for name, kind in (("dropout", "element"), ("dropout1d", "1d"), ("dropout2d", "2d"), ("dropout3d", "3d")):
        setattr(_tF, name, shared_dropout(kind))
    _tF.scaled_dot_product_attention = _shared_sdpa(torch, _tF.scaled_dot_product_attention)
    # Tensor.uniform_ called by the program (the script, its model files), not by torch itself (nn.init and the
    # layers' reset_parameters, which mindport's initializers mirror from a stream of their own): the shared stream.
    # The converter writes a draw into a tensor nothing else holds as MindSpore's own ops.rand_like (torch.rand(n)
    # .uniform_(-0.1, 0.1), CaiT's torch.zeros(n).uniform_(0., 1.)), which draws the shared stream below; torch's
    # own generator on this side parted the streams after such a fill. Any other uniform_ of the program reaches
    # mindport.runtime.inplace.uniform_, whose ops.rand draws the shared stream too (not a stream of its own, see
    # _install_mindspore): the same count of draws, and the same values, on both sides
    real_uniform = torch.Tensor.uniform_

    def shared_uniform(self, *a, generator=None, **k):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if generator is not None or caller == "torch" or caller.startswith("torch."):
            return real_uniform(self, *a, generator=generator, **k)
        low, high = (list(a) + [k.get("from", 0.0), k.get("to", 1.0)][len(a):])[:2]
        with torch.no_grad():
            return self.copy_(torch.from_numpy(low + (high - low) * _stream.random_sample(tuple(self.shape))))
    torch.Tensor.uniform_ = shared_uniform
    torch.normal = lambda mean, std=1.0, size=None, *a, dtype=None, **k: as_t(_normal(
        _value(mean), _value(std), None if size is None else _size((size,), {})), dtype, **k)
    # torch.distributions' reparameterised draws (Normal.rsample: loc + eps * scale, eps from `_standard_normal`,
    # an empty tensor's normal_() on torch's own generator; MultivariateNormal, LowRankMultivariateNormal too) and
    # mindport's (ops.standard_normal): the shared stream (jamesborg46/vae's first loss 2e-4 apart from the same
    # weights and data: another reparameterisation noise on each side)
    import torch.distributions.utils as _dist_utils
    from torch.distributions import lowrank_multivariate_normal, multivariate_normal, normal as _dist_normal
    shared_standard_normal = lambda shape, dtype=None, device=None: as_t(  # noqa: E731
        _stream.standard_normal(tuple(int(s) for s in shape)).astype(np.float32), dtype)
    for module in (_dist_utils, _dist_normal, multivariate_normal, lowrank_multivariate_normal):
        module._standard_normal = shared_standard_normal
    from torch.nn.parameter import UninitializedParameter
    original_init = torch.optim.Optimizer.__init__
    count = [0]

    def init(self, params, *a, **k):
        original_init(self, params, *a, **k)
        params = [p for g in self.param_groups for p in g["params"]]
        if mode == "control":  # the float32 run's initial weights, in float64
            with torch.no_grad():
                for p, a in zip(params, _load_arrays(state, count[0])):
                    if not _is_lazy(a):
                        p.copy_(torch.from_numpy(a).to(p.dtype))
        elif mode == "nudge":  # the float32 run's initial weights, each one ulp away (a seeded direction)
            with torch.no_grad():
                for p, a in zip(params, _load_arrays(state, count[0])):
                    if not _is_lazy(a):
                        p.copy_(torch.from_numpy(nudged(a, _nudges)).to(p.dtype))
        else:
            np.savez(os.path.join(state, "opt%d.npz" % count[0]), *[
                LAZY if isinstance(p, UninitializedParameter) else p.detach().cpu().numpy() for p in params])
        held.update(id(p) for p in params)
        count[0] += 1
    held = set()  # the parameters some optimizer holds (given torch's weights when it is built)
    torch.optim.Optimizer.__init__ = init
    # a module no optimizer holds all of (a frozen teacher, an encoder with requires_grad=False): its weights (the
    # whole state_dict) are recorded when it is first called from the program (not from another module's forward),
    # and given to the MindSpore model first called in the same place of that order (see _install_mindspore). Before,
    # only optimizers' parameters were shared, and such a model kept each framework's own initializer
    # (aberhu/train_kd_at: the teacher's first logits 1.389, 1.809 ... in torch, 0.388, -0.676 ... in MindSpore, the
    # student's equal; its attention-transfer loss 0.8928 against 1.1379 from the first step)
    calls = {"depth": 0, "count": 0}
    seen = weakref.WeakSet()
    real_call = torch.nn.Module.__call__

    def first_call(self, *a, **k):
        if calls["depth"] == 0 and self not in seen:
            seen.add(self)
            if next(self.parameters(), None) is not None:
                path = os.path.join(state, "module%d.npz" % calls["count"])
                calls["count"] += 1
                if any(id(p) not in held for p in self.parameters()):
                    if mode in ("control", "nudge"):
                        if os.path.exists(path):
                            with np.load(path) as data:
                                loaded = {key: torch.from_numpy(nudged(data[key], _nudges) if mode == "nudge"
                                                                else data[key]) for key in data.files}
                            self.load_state_dict(loaded, strict=False)
                    else:  # tensors only (a module's extra state, a lazy layer's unmade weights: not recorded)
                        np.savez(path, **{key: v.detach().cpu().numpy() for key, v in self.state_dict().items()
                                          if isinstance(v, torch.Tensor) and not isinstance(v, UninitializedParameter)
                                          and not torch.nn.parameter.is_lazy(v)})
        calls["depth"] += 1
        try:
            return real_call(self, *a, **k)
        finally:
            calls["depth"] -= 1
    torch.nn.Module.__call__ = first_call
    # a lazy layer (nn.LazyLinear...) built before its optimizer has no weights then: they are recorded (or given)
    # when its first input makes them, one file per layer in the order the layers meet their first input
    from torch.nn.modules.lazy import LazyModuleMixin
    original_infer = LazyModuleMixin._infer_parameters
    lazy_count = [0]

    def infer(self, module, args, kwargs=None):
        out = original_infer(self, module, args, kwargs)
        params = list(module.parameters(recurse=False))
        path = os.path.join(state, "lazy%d.npz" % lazy_count[0])
        lazy_count[0] += 1
        if mode in ("control", "nudge"):
            with torch.no_grad():
                for p, a in zip(params, _load_npz(path)):
                    a = nudged(a, _nudges) if mode == "nudge" else a
                    p.copy_(torch.from_numpy(a).to(p.dtype))
        else:
            np.savez(path, *[p.detach().cpu().numpy() for p in params])
        return out
    LazyModuleMixin._infer_parameters = infer


def _float64_torch(torch):
    """The float64 control: float32 data made float64 where tensors are made from it, the default dtype float64."""
    torch.set_default_dtype(torch.float64)
    up = lambda t: t.double() if isinstance(t, torch.Tensor) and t.dtype == torch.float32 else t  # noqa: E731

    def upcast(fn):
        return lambda *a, **k: up(fn(*a, **k))
    names = ("from_numpy", "tensor", "as_tensor", "FloatTensor", "zeros", "ones", "full", "empty", "arange",
             "linspace", "zeros_like", "ones_like", "full_like", "empty_like")
    originals = {name: getattr(torch, name) for name in names}
    for name in names:
        setattr(torch, name, upcast(getattr(torch, name)))
    load = torch.load

    def load_float64(*a, **k):
        """torch.load rebuilds each tensor as torch.empty(0, dtype=its storage's) set to the storage (a float32
        storage refuses a float64 tensor): it runs with torch's own makers; the float32 tensors it gives, data the
        script reads, are made float64 as the rest of the script's data."""
        patched = {name: getattr(torch, name) for name in names}
        for name in names:
            setattr(torch, name, originals[name])
        try:
            obj = load(*a, **k)
        finally:
            for name in names:
                setattr(torch, name, patched[name])
        return _map_tensors(obj, up)
    torch.load = load_float64
    torch.Tensor.float = lambda self, *a, **k: self.double()
    original_to = torch.Tensor.to
    torch.Tensor.to = lambda self, *a, **k: up(original_to(self, *a, **k))


def _map_tensors(obj, fn):
    """``fn`` on every tensor in a loaded object (dicts, lists, tuples kept as they are)."""
    if isinstance(obj, dict):
        return type(obj)((k, _map_tensors(v, fn)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_map_tensors(v, fn) for v in obj)
    return fn(obj)


def _numpy_neutral(init):
    def wrapped(*args, **kwargs):
        saved = np.random.get_state()
        try:
            return init(*args, **kwargs)
        finally:
            np.random.set_state(saved)
    return wrapped


def _install_mindspore(mode, state):
    import mindspore as ms
    from mindspore import ops
    from mindspore.common import initializer
    ms.set_seed(SEED)
    # MindSpore's initializers seed themselves from numpy's global stream (one draw per Parameter built), torch's
    # do not touch it: without this, a script drawing its data from np.random gets other numbers after building
    # its model than torch's run does (devnag/gan's real samples). They draw from a stream of their own here.
    own = np.random.RandomState(SEED + 1)
    initializer._numpy_seed = lambda: own.randint(low=1, high=(1 << 63), dtype=np.int64)
    # MindSpore's RNN/LSTM/GRU layers and cells draw their initial weights from numpy's global stream directly
    # (np.random.uniform / randn in their __init__): ah123666/rnn_sine's sine windows (np.random.randint after
    # building the model) differed. Their draws leave the global stream as it was.
    from mindspore.nn.layer import rnn_cells, rnns
    for base in (rnns._RNNBase, rnn_cells.RNNCellBase):
        base.__init__ = _numpy_neutral(base.__init__)
    if mode != "track":
        return
    as_t = lambda a, dt=None: ms.Tensor(np.ascontiguousarray(a), dtype=dt or ms.float32)
    ops.randn = lambda *a, dtype=None, seed=None, **k: as_t(_stream.standard_normal(_size(a, k)).astype(np.float32), dtype)
    ops.rand = lambda *a, dtype=None, seed=None, **k: as_t(_stream.random_sample(_size(a, k)).astype(np.float32), dtype)
    ops.randn_like = lambda x, dtype=None, seed=None, **k: as_t(_stream.standard_normal(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    ops.rand_like = lambda x, dtype=None, seed=None, **k: as_t(_stream.random_sample(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    ops.randperm = lambda n, seed=0, offset=0, dtype=ms.int64: ms.Tensor(_stream.permutation(int(n)), dtype=dtype)
    ops.randint = lambda low, high, size, seed=None, *, dtype=None: ms.Tensor(_randint(low, high, size),
                                                                            dtype=dtype or ms.int64)
    # mindport's Categorical.sample and multinomial (ops.multinomial): the shared stream (see _multinomial)
    ops.multinomial = lambda input, num_samples, replacement=True, seed=None, offset=None: ms.Tensor(
        _multinomial(_value(input), num_samples, replacement), dtype=ms.int64)
    ops.normal = lambda shape, mean, stddev, seed=None: as_t(_normal(_value(mean), _value(stddev), _size((shape,), {})))
    # dropout in training: masks from the shared stream, as torch's side (see _install_torch and _dropout_mask):
    # MindSpore's layers (nn.Dropout, Dropout1d/2d/3d, mint's DropoutExt/Dropout2dExt) and functions (ops.dropout*,
    # mint.nn.functional.dropout/dropout2d; mindport's dropout2d/3d and its Dropout2d/3d layers call these)
    from mindspore import mint
    from mindspore.nn.layer import basic as ms_basic

    def masked(x, p, kind):
        if p == 0:
            return x
        return x * ms.Tensor(_dropout_mask(x.shape, p, kind), dtype=x.dtype)

    def shared_function(kind):
        def dropout(input, p=0.5, training=True, *a, **k):
            return masked(input, p, kind) if training else input
        return dropout
    # the attention weights' dropout of MindSpore's own nn.MultiheadAttention (mindport's nn.Transformer* layers hold
    # it): its _scaled_dot_product_attention drops through _inner_dropout, a Dropout primitive of its own seed
    from mindspore.ops.function import nn_func as _ms_nn_func
    _ms_nn_func._inner_dropout = lambda x, p, training: masked(x, p, "element") if 0.0 < p <= 1.0 and training else x
    for owner, name, kind in ((ops, "dropout", "element"), (ops, "dropout1d", "1d"), (ops, "dropout2d", "2d"),
                              (ops, "dropout3d", "3d"), (mint.nn.functional, "dropout", "element"),
                              (mint.nn.functional, "dropout2d", "2d")):
        setattr(owner, name, shared_function(kind))

    def shared_cell(kind, rate):
        def construct(self, x):
            return masked(x, rate(self), kind) if self.training else x
        return construct
    for cls, kind, rate in ((ms_basic.Dropout, "element", lambda c: c.p if c.p is not None else 1.0 - c.keep_prob),
                            (ms_basic.Dropout1d, "1d", lambda c: c.prob),
                            (ms_basic.Dropout2d, "2d", lambda c: 1.0 - c.keep_prob),
                            (ms_basic.Dropout3d, "3d", lambda c: 1.0 - c.keep_prob),
                            (ms_basic.DropoutExt, "element", lambda c: c.p),
                            (ms_basic.Dropout2dExt, "2d", lambda c: c.p)):
        cls.construct = shared_cell(kind, rate)
    # mindport.runtime.distributions' rsample draws (see torch's _standard_normal above)
    ops.standard_normal = lambda shape, seed=None, seed2=None: as_t(
        _stream.standard_normal(_size((shape,), {})).astype(np.float32))
    # torch's RandomSampler (a shuffled DataLoader), SubsetRandomSampler and random_split draw torch.randperm (the
    # shared stream above); mindport's draw from mindport.runtime.seed.stream(): the shared stream here too, so a
    # shuffled loader gives both sides the same batches (dvgodoy/sbs_gru_hooks' epochs were other batch orders)
    import types
    from mindport.runtime import data as mp_data
    mp_data._seed = types.SimpleNamespace(stream=lambda: _stream)
    # with generator= (a seeded torch.Generator, converted to mindspore.Generator) mindport's samplers draw that
    # generator's own stream, while torch's RandomSampler draws torch.randperm(n, generator=g): the shared stream
    # above (joyful/vanilla_kd's loaders: every batch differed, its first losses 3e-3 apart from the same weights)
    mp_data._stream = lambda generator, count: _stream
    # torch's in-place fills (Tensor.normal_, uniform_, bernoulli_ ...) draw torch's own generator here, not the shared
    # stream; mindport's (mindport.runtime.inplace, through ops.randn/ops.rand) drew the shared one, so a model whose
    # set-up fills its weights in place (DCGAN's weights_init: m.weight.data.normal_(0.0, 0.02), the weights then
    # loaded from torch's) moved MindSpore's shared stream alone, and every later draw (noise, the loader's
    # permutation) differed (murumura/dcgan_mnist: another first batch, 1.5e-2 at the first loss). They draw a
    # stream of their own here, as torch's do (their values are not torch's on either count). Same cause, found by
    # trainfix21 as well: hao-pt/ssl_methods' init loop (w.data.normal_) took 104 shared draws, step-0 loss 6e-2 apart
    from mindport.runtime import inplace as mp_inplace
    fills = np.random.RandomState(SEED + 2)

    def private(fill):
        def wrapped(*a, generator=None, **k):
            if generator is not None:
                return fill(*a, generator=generator, **k)
            shared = ops.randn, ops.rand
            ops.randn = lambda *s, dtype=None, seed=None, **kk: as_t(fills.standard_normal(_size(s, kk)).astype(np.float32), dtype)
            ops.rand = lambda *s, dtype=None, seed=None, **kk: as_t(fills.random_sample(_size(s, kk)).astype(np.float32), dtype)
            try:
                return fill(*a, **k)
            finally:
                ops.randn, ops.rand = shared
        return wrapped
    # (uniform_ aside: the program's uniform_ draws the shared stream on torch's side, see _install_torch)
    for name in ("normal_", "cauchy_", "log_normal_", "exponential_", "geometric_", "bernoulli_", "random_"):
        if callable(getattr(mp_inplace, name, None)):
            setattr(mp_inplace, name, private(getattr(mp_inplace, name)))
    count = [0]

    def load(params):
        arrays = _load_arrays(state, count[0])
        count[0] += 1
        if len(arrays) != len(params):
            raise RuntimeError("track: optimizer %d has %d parameters in torch, %d in MindSpore"
                               % (count[0] - 1, len(arrays), len(params)))
        for p, a in zip(torch_order(params), arrays):
            if _is_lazy(a):  # given when the lazy layer meets its first input (below)
                continue
            fitted = fit_layout(a, p.shape)
            if fitted is None:
                raise RuntimeError("track: parameter %s is %s in MindSpore, %s in torch" % (p.name, tuple(p.shape), a.shape))
            p.set_data(ms.Tensor(fitted, dtype=p.dtype))

    def wrap(cls, flat_params):
        original_init = cls.__init__

        def init(self, *a, **k):
            original_init(self, *a, **k)
            load(flat_params(self))
        cls.__init__ = init

    # a model first called from the program in the same place of that order as a torch module the torch run recorded
    # (one no optimizer holds all of: see _install_torch) receives its state_dict by name (mindport's weight
    # transfer); one that does not line up keeps its own weights, with a note on stderr
    from mindport.migrator.weights import transfer_weights
    calls = {"depth": 0, "count": 0}
    seen = weakref.WeakSet()
    real_call = ms.nn.Cell.__call__

    def first_call(self, *a, **k):
        if calls["depth"] == 0 and self not in seen:
            seen.add(self)
            if next(iter(self.get_parameters()), None) is not None:
                path = os.path.join(state, "module%d.npz" % calls["count"])
                calls["count"] += 1
                if os.path.exists(path):
                    with np.load(path) as data:
                        loaded = {key: data[key] for key in data.files}
                    try:
                        transfer_weights(loaded, self)
                    except Exception as exc:  # noqa: BLE001 - a harness note, the run goes on
                        print("track: %s (module %d) keeps its own weights: %s" % (type(self).__name__,
                              calls["count"] - 1, str(exc).splitlines()[0]), file=sys.stderr)
        calls["depth"] += 1
        try:
            return real_call(self, *a, **k)
        finally:
            calls["depth"] -= 1
    ms.nn.Cell.__call__ = first_call

    from mindport.runtime import layers as mp_layers
    original_materialize = mp_layers._LazyLayer.materialize
    lazy_count = [0]

    def materialize(self, size):
        original_materialize(self, size)
        arrays = _load_npz(os.path.join(state, "lazy%d.npz" % lazy_count[0]))
        lazy_count[0] += 1
        params = [p for _, p in self.parameters_and_names()]
        if len(arrays) != len(params):
            raise RuntimeError("track: lazy layer %d has %d parameters in torch, %d in MindSpore"
                               % (lazy_count[0] - 1, len(arrays), len(params)))
        for p, a in zip(params, arrays):
            fitted = fit_layout(a, p.shape)
            if fitted is None:
                raise RuntimeError("track: parameter %s is %s in MindSpore, %s in torch" % (p.name, tuple(p.shape), a.shape))
            p.set_data(ms.Tensor(fitted, dtype=p.dtype))
    mp_layers._LazyLayer.materialize = materialize
    from mindspore.experimental import optim as exp_optim
    wrap(exp_optim.Optimizer, lambda self: [p for g in self.param_groups for p in g["params"]])
    wrap(ms.nn.Optimizer, lambda self: list(self.parameters))
    # mindport's LBFGS is a plain class (a closure-driven optimizer): its parameters too, in torch's order, else the
    # next optimizer of the script received LBFGS's weights and LBFGS's nets kept MindSpore's (bzapf/pytorchdemo)
    from mindport.runtime import training as mp_training
    wrap(mp_training.LBFGS, lambda self: list(self.parameters))


def main():
    side, mode, state, script = sys.argv[1:5]
    sys.argv = [script] + sys.argv[5:]
    random.seed(SEED)
    np.random.seed(SEED)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if side == "torch":
        _install_torch(mode, state)
    else:
        _install_mindspore(mode, state)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
