"""torch.nn.functional compositions for what MindSpore 2.10 lacks or runs differently on CPU, and the ``torch.*``
aliases of functional APIs (``torch.layer_norm``, ``torch.conv_transpose2d``, ``torch.kl_div`` ...).

Converted code imports this module as ``mp_F`` (and :mod:`mindport.runtime.layers` builds its Cells on it). Every
function keeps torch's semantics and is built from ``mindspore.ops`` operations that have CPU kernels in 2.10; each
docstring names the torch API and the gap. Loss functions accept torch's ``reduction`` both as a string
(``torch.nn.functional``) and as the enum integer the ``torch.*`` aliases take (0 none, 1 mean, 2 sum).
"""
from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import ops

from mindport.runtime import unbatched as _unbatched  # ops that take only a batch, taking torch's unbatched input
from mindport.runtime import math as _math
from mindport.runtime.math import _linear  # x @ w.T + b: the recurrent cells' projection
from mindport.runtime.math import integral_scalar

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
_SIGNED_INTS = (ms.int8, ms.int16, ms.int32, ms.int64)


@ms.constexpr
def _finfo(dtype, field):
    """``numpy.finfo(dtype).<field>`` of a MindSpore float dtype, as a Python float (a constexpr: graph mode can't call
    ``ms.dtype_to_nptype``)."""
    return float(getattr(np.finfo(ms.dtype_to_nptype(dtype)), field))


def _reduce(loss, reduction):
    reduction = _REDUCTIONS.get(reduction, reduction)
    if reduction == "mean":
        return _math.mean(loss)  # NaN for an empty batch, as torch (MindSpore's kernel gives inf)
    if reduction == "sum":
        return _math.sum(loss)  # 0 for an empty batch (MindSpore's kernel gives uninitialised memory)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduction_name(reduction):
    return _REDUCTIONS.get(reduction, reduction)


def _tuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value) if len(value) == n else tuple(value) * n if len(value) == 1 else tuple(value)
    return (value,) * n


def _int64(indices):
    return indices.astype(ms.int64) if indices.dtype != ms.int64 else indices


# ------------------------------------------------------------------------------------------------------ attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention: softmax(q @ k^T * scale + mask) @ v.

    MindSpore 2.10 has no CPU op for it (the fused flash-attention ops are Ascend-only). A bool ``attn_mask`` keeps
    the True positions, a float mask is added; ``is_causal`` keeps the lower triangle; ``enable_gqa`` repeats the
    key/value heads to the query heads. ``dropout_p`` drops attention weights like torch (random, always applied
    when > 0, as in torch). Half-precision inputs are computed in float32 and the result cast back, as torch's CPU
    kernel accumulates them in float32 (in float16 throughout, the scores lose ~1e-2 relative)."""
    if query.dtype in (ms.float16, ms.bfloat16):
        half = query.dtype
        mask = attn_mask.astype(ms.float32) if attn_mask is not None and attn_mask.dtype == half else attn_mask
        out = _attention(query.astype(ms.float32), key.astype(ms.float32), value.astype(ms.float32), mask, dropout_p,
                         is_causal, scale, enable_gqa)
        return out.astype(half)
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = ops.repeat_interleave(key, repeat, key.ndim - 3)
        value = ops.repeat_interleave(value, repeat, value.ndim - 3)
    scores = ops.matmul(query, key.swapaxes(-2, -1)) * scale
    if is_causal:
        causal = ops.tril(ops.ones((length, source), ms.bool_))
        scores = ops.masked_fill(scores, ~causal, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == ms.bool_:
            scores = ops.masked_fill(scores, ~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, p=dropout_p, training=True)
    return ops.matmul(weights, value)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward (CLIP's attention pooling calls it with separate q/k/v
    weights): sequence-first ``(L, N, E)`` inputs (or unbatched ``(L, E)``), torch's steps in torch's order — input
    projections (packed or separate), ``bias_k``/``bias_v`` and ``add_zero_attn`` columns, bool masks as ``-inf``
    (key_padding_mask merged into attn_mask), softmax(q k^T / sqrt(d) + mask) v per head, the output projection;
    weights (averaged over heads by default) when ``need_weights``, else None. A fully masked row is NaN with
    ``need_weights`` and 0 without, as in torch."""
    if query.dtype in (ms.float16, ms.bfloat16):  # torch's CPU kernels accumulate half precision in float32
        half = query.dtype
        arguments = {name: value.astype(ms.float32) if isinstance(value, ms.Tensor) and value.dtype == half else value
                     for name, value in locals().items() if name != "half"}
        out, weights = multi_head_attention_forward(**arguments)
        return out.astype(half), (None if weights is None else weights.astype(half))
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.expand_dims(1), key.expand_dims(1), value.expand_dims(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.expand_dims(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint")
    w_q, w_k, w_v = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight \
        else _thirds(in_proj_weight, embed_dim)
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else _thirds(in_proj_bias, embed_dim)
    q, k, v = _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)
    attn_mask = _additive_mask(attn_mask, q.dtype)
    key_padding_mask = _additive_mask(key_padding_mask, q.dtype)
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.expand_dims(0)
    if bias_k is not None and bias_v is not None:
        k = ops.cat([k, ops.tile(bias_k.reshape(1, 1, embed_dim), (1, bsz, 1))])
        v = ops.cat([v, ops.tile(bias_v.reshape(1, 1, embed_dim), (1, bsz, 1))])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).swapaxes(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).swapaxes(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).swapaxes(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k = ops.cat([k, ops.zeros((bsz * num_heads, 1, head_dim), k.dtype)], axis=1)
        v = ops.cat([v, ops.zeros((bsz * num_heads, 1, head_dim), v.dtype)], axis=1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        padding = ops.tile(key_padding_mask.reshape(bsz, 1, 1, src_len), (1, num_heads, 1, 1))
        padding = padding.reshape(bsz * num_heads, 1, src_len)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    scores = ops.bmm(q * (1.0 / math.sqrt(head_dim)), k.swapaxes(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    # torch: softmax when the weights are returned (a fully masked row is NaN), its attention kernel (0) otherwise
    weights = softmax(scores, -1) if need_weights else _safe_softmax(scores)
    if training and dropout_p > 0.0:
        weights = ops.dropout(weights, p=dropout_p, training=True)
    out = ops.bmm(weights, v).swapaxes(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])  # its width
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(axis=1)
    return out, (weights if batched else weights.squeeze(0))


def _thirds(packed, size):
    """torch's packed q/k/v projection (weight or bias): its three blocks of ``size`` rows."""
    return packed[:size], packed[size:2 * size], packed[2 * size:]


def _additive_mask(mask, dtype):
    """A bool mask (True = masked) as 0/-inf of ``dtype``; a float mask as it is."""
    if mask is None or mask.dtype != ms.bool_:
        return mask
    return ops.masked_fill(ops.zeros(mask.shape, dtype), mask, float("-inf"))


def _pad_last(mask):
    return None if mask is None else ops.pad(mask, (0, 1))


# -------------------------------------------------------------------------------------------------- normalization

def elu(input, alpha=1.0):
    """torch.nn.functional.elu with any alpha: x if x > 0 else alpha * (exp(x) - 1). MindSpore 2.10's Elu kernel takes
    alpha=1.0 only; expm1 is taken of x where x <= 0 (0 elsewhere): a large positive x gives no inf whose gradient
    would be NaN, and the gradient at 0 is alpha, as torch's."""
    return ops.where(input > 0, input, ops.expm1(ops.where(input > 0, 0.0, input)) * alpha)


_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_NEGATIVE = 1.6732632423543772848170429916717 * _SELU_SCALE  # alpha * scale, as torch's kernel multiplies


def selu(input):
    """torch.nn.functional.selu / torch.selu: scale * x if x > 0 else alpha * scale * (exp(x) - 1). MindSpore 2.10's
    SeLU computes the value, but its gradient on the CPU is wrong where x < 0, silently (measured: -0.705 at x = -3
    where torch's is alpha * scale * exp(-3) = 0.0875; a GAN's SELU generator stepped off torch's from its first
    update). This one is differentiated as written: expm1 of x where x <= 0 (0 elsewhere: no inf whose gradient would
    be NaN), the gradient at 0 alpha * scale, as torch's."""
    return ops.where(input > 0, input * _SELU_SCALE, ops.expm1(ops.where(input > 0, 0.0, input)) * _SELU_NEGATIVE)


def one_hot(indices, depth=-1):
    """torch.nn.functional.one_hot with ``num_classes=-1`` (torch's default): the depth is the largest index plus
    one, read from the data when the call happens (torch reads it too), then ops.one_hot; int64 as torch's. An empty
    tensor raises torch's error (nothing to infer the depth from). A depth given as a tensor (``max(index.max() + 1,
    n)``) is that depth as it is: no test of its value, which in GRAPH_MODE would make a run-time branch whose two
    depths join into a value of unknown type and shape for everything after it."""
    if depth is None or (not isinstance(depth, ms.Tensor) and depth < 0):
        if indices.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        depth = int(indices.max()) + 1
    return ops.one_hot(indices, depth, ms.Tensor(1, ms.int64), ms.Tensor(0, ms.int64))


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """torch.nn.functional.normalize: input / max(||input||_p over dim, eps). No ops.normalize in 2.10 and
    mint.nn.functional.normalize has no CPU kernel (LinalgVectorNorm)."""
    norm = ops.norm(input, p, dim, keepdim=True)
    return input / ops.clamp(norm, min=eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm: ``weight`` and ``bias`` are optional in torch (None: no affine step) but
    required by ops.batch_norm, so ones and zeros stand in for an absent one (the same normalisation). ops.batch_norm
    takes ranks 2 to 4 ("the rank of images must be in [2,4]"); torch any rank from 2: a 5-d or larger input (a 3-d
    U-Net's BatchNorm3d written functionally) is normalised as (N, C, D, rest) and shaped back, the same statistics
    per channel over every other axis."""
    channels = input.shape[1]
    if weight is None:
        weight = ops.ones(channels, input.dtype)
    if bias is None:
        bias = ops.zeros(channels, input.dtype)
    if input.ndim > 4:
        shape = input.shape
        out = ops.batch_norm(input.reshape(shape[0], channels, shape[2], -1), running_mean, running_var, weight, bias,
                             training, momentum, eps)
        return out.reshape(shape)
    return ops.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """torch.nn.functional.instance_norm (also torch.instance_norm): per-sample, per-channel normalisation over the
    spatial dims. mindspore.ops has no instance norm with a CPU kernel in 2.10 (Unsupported op [InstanceNorm] on
    CPU), so it is computed from the mean and biased variance; with ``use_input_stats`` and running stats given,
    these are updated in place like torch (momentum, unbiased variance, averaged over the batch)."""
    axes = tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * len(axes)
    if use_input_stats:
        mean = input.mean(axes, keep_dims=True)
        var = ((input - mean) ** 2).mean(axes, keep_dims=True)
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (input - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    if use_input_stats and running_mean is not None and running_var is not None:
        # after the output, as torch: the running stats may be the very tensors passed as weight or bias
        count = int(np.prod([input.shape[a] for a in axes]))
        unbiased = var * (count / max(count - 1, 1))
        ops.assign(running_mean, running_mean * (1 - momentum) + mean.mean(0).reshape(-1) * momentum)
        ops.assign(running_var, running_var * (1 - momentum) + unbiased.mean(0).reshape(-1) * momentum)
    return out


def implicit_dim(input, dim):
    """torch's deprecated implicit softmax axis (``nn.Softmax()``, ``F.softmax(x)``: ``_get_softmax_dim``), decided by
    the input's rank at run time: 0 for a 0-, 1- or 3-d input, else 1. An explicit dim is returned as it is."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):
    """torch.softmax (torch.nn.functional.softmax, Tensor.softmax, torch.special.softmax, nn.Softmax):
    ``exp(x - max) / sum(exp(x - max))``, written out. MindSpore 2.10's CPU Softmax kernel (ops.softmax, nn.Softmax,
    Tensor.softmax and mint's alike) gives **other rows wrong values, silently**, when a row is all ``-inf`` (a fully
    masked query in padded attention: 0.58 off on a 16x24 input with one such row); written out, that row is NaN as in
    torch and the others are right. ``dtype`` casts the input first, as torch does; ``dim=None`` is torch's implicit
    dim (:func:`implicit_dim`)."""
    dim = implicit_dim(input, dim)
    if dtype is not None:
        input = input.astype(dtype)
    if input.size == 0:
        return input.copy()  # an empty input (max() refuses one)
    shifted = ops.exp(input - ops.stop_gradient(input.max(dim, keepdims=True)))
    return shifted / shifted.sum(dim, keepdims=True)


def _safe_softmax(scores):
    """Softmax over the last axis with fully masked rows (all ``-inf``) giving 0, as torch's attention does
    (``_safe_softmax``), written out for the kernel defect :func:`softmax` describes."""
    if scores.size == 0:
        return scores.copy()
    peak = ops.stop_gradient(scores.max(-1, keepdims=True))
    peak = ops.where(ops.isinf(peak), ops.zeros_like(peak), peak)
    shifted = ops.exp(scores - peak)
    total = shifted.sum(-1, keepdims=True)
    return shifted / ops.where(total == 0, ops.ones_like(total), total)


def log_softmax(input, dim=None, dtype=None):
    """torch.nn.functional.log_softmax (torch.log_softmax, Tensor.log_softmax, torch.special.log_softmax):
    ``x - max - log(sum(exp(x - max)))``. ``ops.log_softmax`` in 2.10 is 2-3e-6 off in float32 (on -0.0486, 7e-5
    relative) and gives float64 only float32's precision; ``dtype`` casts the input first, as torch does; ``dim=None``
    is torch's implicit dim (:func:`implicit_dim`)."""
    dim = implicit_dim(input, dim)
    if dtype is not None:
        input = input.astype(dtype)
    shifted = input - ops.stop_gradient(input.max(dim, keepdims=True))
    return shifted - ops.log(ops.exp(shifted).sum(dim, keepdims=True))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.layer_norm / torch.nn.functional.layer_norm: ops.layer_norm has no CPU kernel in 2.10 (LayerNormExt),
    so the mean and biased variance over the trailing ``normalized_shape`` dims are computed directly."""
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    axes = tuple(range(input.ndim - n, input.ndim))
    mean = input.mean(axes, keep_dims=True)
    var = ((input - mean) ** 2).mean(axes, keep_dims=True)
    out = (input - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm / torch.rms_norm: x / sqrt(mean(x^2 over normalized_shape) + eps) * weight.
    ops.rms_norm has no CPU kernel in 2.10 (The kernel RmsNorm unregistered); eps=None is the dtype's machine
    epsilon, as in torch."""
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    axes = tuple(range(input.ndim - n, input.ndim))
    if eps is None:
        eps = _finfo(input.dtype, "eps")
    out = input * ops.rsqrt((input * input).mean(axes, keep_dims=True) + eps)
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch.nn.functional.local_response_norm: x / (k + alpha * mean of x^2 over a window of ``size`` channels)^beta,
    the window padded with zeros (size // 2 before, (size - 1) // 2 after) like torch; mindspore.ops.lrn takes
    other arguments (depth_radius, bias, sum instead of mean) and only 4-D inputs."""
    channels = input.shape[1]
    square = input * input
    # ops.pad takes (before, after) pairs from the last axis back: zeros, then the channel axis (axis 1)
    padded = ops.pad(square, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    total = padded[:, 0:channels]
    for i in range(1, size):
        total = total + padded[:, i:i + channels]
    div = ops.pow(total / size * alpha + k, beta)
    return input / div


# --------------------------------------------------------------------------------------------------------- losses

def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.soft_margin_loss: log(1 + exp(-target * input)); the SoftMarginLoss kernel is not
    registered on CPU in 2.10."""
    return _reduce(ops.log1p(ops.exp(-target * input)), reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.nn.functional.pairwise_distance / torch.pairwise_distance: the p-norm of x1 - x2 + eps over the last
    dim. No mindspore.ops.pairwise_distance in 2.10."""
    diff = x1 - x2 + eps
    diff = ops.ComplexAbs()(diff) if diff.dtype in (ms.complex64, ms.complex128) else ops.abs(diff)
    if p == float("inf"):
        return diff.max(-1, keepdims=keepdim)
    if p == 0:
        return (diff != 0).astype(diff.dtype).sum(-1, keepdims=keepdim)
    return ops.pow(ops.pow(diff, p).sum(-1, keepdims=keepdim), 1.0 / p)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """torch.nn.functional.triplet_margin_loss: max(d(a, p) - d(a, n) + margin, 0) with the pairwise p-norm
    distance; the TripletMarginLoss kernel is not registered on CPU in 2.10."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.relu(margin + d_pos - d_neg), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """torch.nn.functional.triplet_margin_with_distance_loss: max(d(a, p) - d(a, n) + margin, 0) with any distance
    callable (default: pairwise_distance). mindspore.ops has no functional form in 2.10."""
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, distance(positive, negative))
    return _reduce(ops.relu(margin + d_pos - d_neg), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.multilabel_margin_loss: sum over target classes j (up to the first -1) and non-target
    classes i of max(0, 1 - (x[j] - x[i])) / C. The MultilabelMarginLoss kernel is not registered on CPU in 2.10
    (and wants int32 targets where torch passes int64)."""
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    classes = input.shape[-1]
    target = target.astype(ms.int32)
    valid = ops.cumprod((target >= 0).astype(ms.int32), 1).astype(input.dtype)  # targets before the first -1
    safe = ops.maximum(target, ops.zeros_like(target))
    is_target = ops.minimum((ops.one_hot(safe, classes, ms.Tensor(1.0, input.dtype), ms.Tensor(0.0, input.dtype))
                             * valid.unsqueeze(-1)).sum(1), ms.Tensor(1.0, input.dtype))  # (N, C)
    picked = ops.gather_elements(input, 1, safe)  # x[j] for every target slot
    margins = ops.relu(1 - picked.unsqueeze(-1) + input.unsqueeze(1))  # (N, slots, C)
    loss = (margins * valid.unsqueeze(-1) * (1 - is_target).unsqueeze(1)).sum((1, 2)) / classes
    if unbatched:
        loss = loss[0]
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """torch.nn.functional.poisson_nll_loss / torch.poisson_nll_loss: exp(x) - t*x (log_input) or x - t*log(x+eps),
    plus the Stirling term for t > 1 when ``full``. mindspore.ops has no poisson_nll_loss in 2.10."""
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        loss = loss + ops.masked_fill(stirling, target <= 1, 0.0)
    return _reduce(loss, reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    """torch.kl_div (reduction as the enum integer, log_target keyword): target * (log target - input), with
    0 where target is 0; mindspore.ops.kl_div takes neither an integer reduction nor log_target."""
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        loss = ops.xlogy(target, target) - target * input
    return _reduce(loss, reduction)


def _empty_batch(loss, input, reduction):
    """A MindSpore loss kernel's reduced result, or torch's over an empty batch: NaN for 'mean', 0 for 'sum'
    (MindSpore's kernels reduce an empty batch to uninitialised memory, as its reductions do)."""
    if reduction != "none" and _math._empty_extent(input.shape, None):
        return ops.full((), 0 if reduction == "sum" else float("nan"), dtype=loss.dtype)
    return loss


def _finite_below(input):
    """``-inf`` entries (masked logits: NT-Xent's ``sim.fill_diagonal_(float('-inf'))``, attention-style masks) as
    a large finite negative, one ``maximum``: MindSpore's cross_entropy/nll_loss weigh every class's log-probability
    by its one-hot target (0 * -inf = NaN: the loss was NaN, its gradient right), torch's pick the target's. -1e30
    in float32 (-1e300 in float64, -1e4 in float16): far enough that softmax there is 0 exactly, near enough that
    the kernel's sums over the classes do not overflow back to -inf (half float32's lowest still gave NaN, measured
    on MindSpore 2.10). The value at a non-target class is then 0, as in torch, and the gradient to the masked
    entries 0. (A target class at -inf, or a row all -inf, is torch's inf/NaN, a large finite here.) Graph-safe."""
    dtype = input.dtype
    if dtype == ms.float16:
        lowest = -1e4
    elif dtype == ms.float64:
        lowest = -1e300
    elif dtype in (ms.float32, ms.bfloat16):
        lowest = -1e30
    else:
        return input
    return ops.maximum(input, ms.Tensor(lowest, dtype))


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch.nn.functional.cross_entropy: ops.cross_entropy on logits whose -inf entries are the lowest finite value
    (``_finite_below``: MindSpore's kernel made masked logits a NaN loss), and torch's answer for an empty batch."""
    loss = ops.cross_entropy(_finite_below(input), target, weight, ignore_index, reduction, float(label_smoothing))
    return _empty_batch(loss, input, reduction)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch.nn.functional.nll_loss: ops.nll_loss on log-probabilities whose -inf entries are the lowest finite value
    (``_finite_below``), and torch's answer for an empty batch."""
    return _empty_batch(ops.nll_loss(_finite_below(input), target, weight, ignore_index, reduction), input, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """torch.nn.functional.gaussian_nll_loss: ops.gaussian_nll_loss, and torch's answer for an empty batch."""
    return _empty_batch(ops.gaussian_nll_loss(input, target, var, full, eps, reduction), input, reduction)


def mse_loss(input, target, reduction="mean", weight=None):
    """torch.nn.functional.mse_loss: ops.mse_loss, and torch's answer for an empty batch. With torch 2.x's
    ``weight`` (the input's shape): each squared error weighted, 'mean' divided by the weights' sum, as torch's."""
    if weight is not None:
        return _math.weighted_losses(ops.square(input - target), weight, input, reduction, by_weight=True)
    return _empty_batch(ops.mse_loss(input, target, reduction), input, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """torch.nn.functional.huber_loss: ops.huber_loss, and torch's answer for an empty batch. With ``weight``: each
    element's loss weighted, 'mean' the plain mean of the weighted losses (torch's, unlike mse_loss/l1_loss)."""
    if weight is not None:
        return _math.weighted_losses(ops.huber_loss(input, target, "none", delta), weight, input, reduction,
                                     by_weight=False)
    return _empty_batch(ops.huber_loss(input, target, reduction, delta), input, reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """torch.nn.functional.smooth_l1_loss: ops.smooth_l1_loss, and torch's answer for an empty batch."""
    return _empty_batch(ops.smooth_l1_loss(input, target, beta, reduction), input, reduction)


def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):
    """torch.nn.functional.multi_margin_loss: ops.multi_margin_loss, and torch's answer for an empty batch."""
    return _empty_batch(ops.multi_margin_loss(input, target, p, margin, weight, reduction), input, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.multilabel_soft_margin_loss: ops.multilabel_soft_margin_loss, and torch's answer for an
    empty batch."""
    return _empty_batch(ops.multilabel_soft_margin_loss(input, target, weight, reduction), input, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """torch.margin_ranking_loss: reduction is the enum integer there; computed as max(0, -y * (x1 - x2) + margin)."""
    return _reduce(ops.relu(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    """torch.hinge_embedding_loss: reduction is the enum integer there; x where y == 1, max(0, margin - x) where
    y == -1 (summed, as torch does for other labels). On integer tensors torch fills the margin into the input's
    dtype (truncated: 0.5 -> 0) and the loss keeps that dtype (its sum is int64); MindSpore's float margin made it
    float32."""
    margin = integral_scalar(input, margin)
    zeros = ops.zeros_like(input)
    positive = ops.where(target != -1, input, zeros)
    negative = ops.where(target != 1, ops.maximum(margin - input, zeros), zeros)
    loss = _reduce(positive + negative, reduction)
    if input.dtype in _SIGNED_INTS and _REDUCTIONS.get(reduction, reduction) == "sum":
        loss = loss.astype(ms.int64)  # torch sums integers in int64
    return loss


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """torch.cosine_embedding_loss: reduction is the enum integer there; 1 - cos where y == 1, max(0, cos - margin)
    where y == -1, with torch's eps of 1e-12 on the squared norms."""
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    mag = ops.sqrt(((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps))
    cos = prod / mag
    zeros = ops.zeros_like(cos)
    loss = ops.where(target == 1, 1 - cos, zeros) + ops.where(target == -1, ops.relu(cos - margin), zeros)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """torch.binary_cross_entropy_with_logits: reduction is the enum integer there. Calls
    mindspore.ops.binary_cross_entropy_with_logits, which wants explicit weight/pos_weight tensors."""
    weight = ops.ones_like(input) if weight is None else weight
    pos_weight = ops.ones_like(input) if pos_weight is None else pos_weight
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, _reduction_name(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """torch.nn.functional.ctc_loss / torch.ctc_loss: mindspore.ops.ctc_loss returns (loss, log_alpha); torch returns
    the loss alone (and torch.ctc_loss takes the reduction as the enum integer)."""
    return ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction_name(reduction),
                        zero_infinity)[0]


# -------------------------------------------------------------------------------------------------------- dropout

_SELU_ALPHA = 1.7580993408473766  # scale * alpha of SELU: the value alpha dropout drops to (negated)


def _alpha_dropout(input, p, training, feature):
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (ops.rand(shape, dtype=input.dtype) < (1 - p)).astype(input.dtype)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    return input * keep * a + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch.nn.functional.alpha_dropout (and torch.alpha_dropout): drops to SELU's negative saturation and rescales
    to keep mean and variance; identity when not training. No MindSpore op in 2.10."""
    return _alpha_dropout(input, p, training, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch.nn.functional.feature_alpha_dropout (and torch.feature_alpha_dropout): alpha dropout of whole
    channels; identity when not training. No MindSpore op in 2.10."""
    return _alpha_dropout(input, p, training, feature=True)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout2d at every rank torch takes: torch drops whole features, one draw per (N, C) of
    an input of rank >= 2 (a 2-D (N, C) input element by element, with a warning; a 3-D one as (N, C, L)); MindSpore's
    Dropout2D kernel takes rank 4 only. Any other rank is laid out as (N, C, rest, 1) for that kernel and back."""
    if input.ndim == 4 or input.ndim < 2:
        return ops.dropout2d(input, p, training)
    shape = input.shape
    return ops.dropout2d(input.reshape(shape[0], shape[1], -1, 1), p, training).reshape(shape)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout3d at every rank torch takes: a 5-D input drops whole (N, C) features; any other
    rank is unbatched for torch (unsqueeze(0): one draw per index of its first axis, a 4-D (C, D, H, W) one as
    documented). MindSpore's Dropout3D kernel takes rank 5 only: the input is laid out as (1, C, rest, 1, 1) for it
    and back."""
    if input.ndim == 5 or input.ndim < 1:
        return ops.dropout3d(input, p, training)
    shape = input.shape
    return ops.dropout3d(input.reshape(1, shape[0], -1, 1, 1), p, training).reshape(shape)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, generator=None):
    """torch.nn.functional.rrelu / torch.rrelu: leaky ReLU with a slope drawn from U(lower, upper) per element in
    training and the fixed slope (lower + upper) / 2 otherwise; mindspore.ops.rrelu always samples. torch.rrelu's
    ``generator=`` (a torch.Generator, converted to mindspore.Generator): the slopes come from its own stream."""
    if training:
        slope = _math.uniform_draws(input.shape, generator, input.dtype) * (upper - lower) + lower
        return ops.where(input >= 0, input, input * slope)
    return ops.leaky_relu(input, (lower + upper) / 2)


# -------------------------------------------------------------------------------------------------------- padding

def pad(input_x, padding, mode="constant", value=None):
    """torch.nn.functional.pad where an amount may be negative (torch crops by it, in every mode): MindSpore 2.10's
    ``ops.pad`` gives wrong values for a negative amount from its second call in a process on (measured: after one
    call, ``ops.pad(x, (0, 0, 2, -2))`` returns zeros where the kept rows are; PyNative and GRAPH_MODE, the
    ConstantPadNd/ZeroPad2d Cells too). A negative amount crops by slicing, and the non-negative remainder is
    ``ops.pad``'s in ``mode`` (torch's reflect/replicate/circular pad the cropped tensor: checked numerically)."""
    padding = tuple(padding)
    if all(p >= 0 for p in padding):
        return ops.pad(input_x, padding, mode, value)
    for i in range(0, len(padding), 2):
        axis = input_x.ndim - 1 - i // 2
        before, after = max(-padding[i], 0), max(-padding[i + 1], 0)
        if before or after:
            input_x = ops.narrow(input_x, axis, before, input_x.shape[axis] - before - after)
    grow = tuple(max(p, 0) for p in padding)
    return ops.pad(input_x, grow, mode, value) if any(grow) else input_x


# -------------------------------------------------------------------------------------------------------- pooling

def _pool1d_as_2d(fn, input, kernel_size, stride, padding, dilation, ceil_mode):
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    k, = _tuple(kernel_size, 1)
    s, = _tuple(stride if stride not in (None, (), []) else kernel_size, 1)
    p, = _tuple(padding, 1)
    d, = _tuple(dilation, 1)
    out, idx = fn(x.unsqueeze(2), (1, k), (1, s), (0, p), (1, d), ceil_mode=ceil_mode, return_indices=True)
    out, idx = out.squeeze(2), idx.squeeze(2)
    if unbatched:
        out, idx = out[0], idx[0]
    return out, _int64(idx)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """torch.nn.functional.max_pool1d_with_indices / torch.max_pool1d_with_indices: (values, int64 indices).
    mindspore.ops has no max_pool1d in 2.10: ops.max_pool2d over a (N, C, 1, L) view."""
    return _pool1d_as_2d(ops.max_pool2d, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.max_pool1d / torch.nn.functional.max_pool1d: no mindspore.ops.max_pool1d in 2.10 (ops.max_pool2d over a
    (N, C, 1, L) view); the indices, when asked for, are int64 like torch's."""
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """torch.nn.functional.max_pool2d_with_indices: always returns (values, int64 indices); torch's ``stride=()``
    (the aten default) means kernel_size; an unbatched (C, H, W) input as torch pools it (mindport.runtime.unbatched)."""
    stride = None if stride in ((), []) else stride
    out, idx = _unbatched.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                                     return_indices=True)
    return out, _int64(idx)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """torch.nn.functional.max_pool3d_with_indices: always returns (values, int64 indices).

    MindSpore 2.10's CPU kernel behind ops.max_pool3d (MaxPool3DWithArgmax) starts each window's running maximum at
    0 on integer tensors: a window whose values are all negative gives 0 (torch: their maximum). Signed integer
    tensors are therefore pooled as ``input - min(input) + 1`` in int64 (every value >= 1, so neither the 0 start nor
    a padded position can win) and shifted back: the same order, so the same maxima and indices. Exact whenever
    max(input) - min(input) + 1 fits in int64: always for int8/int16/int32, and for int64 unless the values span
    more than 2**63 - 1. An unbatched (C, D, H, W) input is pooled as a batch of one (ops.max_pool3d wants 5-D)."""
    stride = None if stride in ((), []) else stride
    unbatched = input.ndim == 4
    x = input.unsqueeze(0) if unbatched else input
    dtype = x.dtype
    shifted = dtype in _SIGNED_INTS and x.size > 0
    shift = x.min().astype(ms.int64) - 1 if shifted else 0
    if shifted:
        x = x.astype(ms.int64) - shift
    out, idx = ops.max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)
    if shifted:
        out = (out + shift).astype(dtype)
    if unbatched:
        out, idx = out[0], idx[0]
    return out, _int64(idx)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool3d / torch.max_pool3d: ops.max_pool3d, integer tensors as torch pools them (see
    :func:`max_pool3d_with_indices`); the indices, when asked for, are int64 like torch's."""
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def adaptive_avg_pool1d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool1d (nn.AdaptiveAvgPool1d) on a length ``output_size`` does not divide:
    MindSpore 2.10's ops.adaptive_avg_pool1d and nn.AdaptiveAvgPool1d refuse it (ValueError: "must be divisible by
    output size"), torch pools bins ``[floor(i * L / n), ceil((i + 1) * L / n))``: ops.adaptive_avg_pool2d's bins over
    a (N, C, 1, L) view. The converter writes MindSpore's own where the size is 1 (every length divides)."""
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    size, = _tuple(output_size, 1)
    out = ops.adaptive_avg_pool2d(x.unsqueeze(2), (1, size)).squeeze(2)
    return out[0] if unbatched else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool1d (nn.AdaptiveMaxPool1d) on a length ``output_size`` does not divide
    (MindSpore 2.10 refuses it), or with ``return_indices`` (MindSpore's has none): :func:`adaptive_max_pool1d_with_indices`."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool1d_with_indices / torch.adaptive_max_pool1d: always (values, int64
    indices); mindspore.ops.adaptive_max_pool1d has no indices in 2.10, so ops.adaptive_max_pool2d runs on a
    (N, C, 1, L) view."""
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    size, = _tuple(output_size, 1)
    out, idx = ops.adaptive_max_pool2d(x.unsqueeze(2), (1, size), True)
    out, idx = out.squeeze(2), idx.squeeze(2)
    if unbatched:
        out, idx = out[0], idx[0]
    return out, _int64(idx)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool2d_with_indices: always (values, int64 indices)."""
    out, idx = ops.adaptive_max_pool2d(input, output_size, True)
    return out, _int64(idx)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool3d_with_indices: always (values, indices); mindspore returns int32
    indices in 2.10, cast to torch's int64."""
    out, idx = ops.adaptive_max_pool3d(input, output_size, True)
    return out, _int64(idx)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool3d: mindspore.ops.adaptive_max_pool3d returns int32 indices in 2.10
    (cast to int64 here, as torch)."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """torch.nn.functional.lp_pool3d: (sum over the window of x^p)^(1/p), as torch computes it (avg_pool3d of x^p
    times the window volume, sign kept); mindspore.ops has lp_pool1d/2d only."""
    kd, kh, kw = _tuple(kernel_size, 3)
    stride = kernel_size if stride is None else stride
    unbatched = input.ndim == 4
    x = input.unsqueeze(0) if unbatched else input
    if norm_type == float("inf"):
        out = ops.max_pool3d(x, (kd, kh, kw), stride, 0, 1, ceil_mode=ceil_mode)
    else:
        pooled = ops.avg_pool3d(ops.pow(x, norm_type), (kd, kh, kw), _tuple(stride, 3), 0, ceil_mode)
        out = ops.pow(ops.sign(pooled) * ops.relu(ops.abs(pooled)) * (kd * kh * kw), 1.0 / norm_type)
    return out[0] if unbatched else out


# ---------------------------------------------------------------------------------------------- convolution, fold

def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, dims):
    unbatched = input.ndim == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    stride, padding = _tuple(stride, dims), _tuple(padding, dims)
    output_padding, dilation = _tuple(output_padding, dims), _tuple(dilation, dims)
    if dims == 1:  # as 2-D with a unit height
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        stride, padding, output_padding, dilation = ((1,) + stride, (0,) + padding, (0,) + output_padding,
                                                     (1,) + dilation)
    kernel = weight.shape[2:]
    out_channels = weight.shape[1] * groups
    size = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + output_padding[i] + 1
            for i in range(len(kernel))]
    if len(kernel) == 2:
        pad = (padding[0], padding[0], padding[1], padding[1])
        op = ops.Conv2DTranspose(out_channels, kernel, pad_mode="pad", pad=pad, stride=stride, dilation=dilation,
                                 group=groups)
        out = op(x, weight, (x.shape[0], out_channels, *size))
    else:
        pad = (padding[0], padding[0], padding[1], padding[1], padding[2], padding[2])
        op = ops.Conv3DTranspose(x.shape[1], out_channels, kernel, pad_mode="pad", pad=pad, stride=stride,
                                 dilation=dilation, group=groups, output_padding=output_padding)
        out = op(x, weight)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    if dims == 1:
        out = out.squeeze(2)
    return out[0] if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose1d: ops.conv_transpose* have no CPU kernel in 2.10 (ConvTranspose2D
    unregistered); the Conv2DTranspose primitive (the gradient of conv2d, which has one) runs on a unit-height
    view, with torch's output size (N, C_out, (L-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose2d / torch.conv_transpose2d: the Conv2DTranspose primitive with torch's
    output size (ops.conv_transpose2d has no CPU kernel in 2.10)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose3d: the Conv3DTranspose primitive with torch's padding/output_padding
    (no functional conv_transpose3d with a CPU kernel in 2.10)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: mindspore.ops.fold wants output_size as an int32 Tensor and a batched input."""
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    if x.shape[0] == 0:  # ops.fold gives an empty batch 0 channels; torch C / (kernel height * width)
        kh, kw = _tuple(kernel_size, 2)
        return ops.zeros((0, x.shape[1] // (kh * kw), *_tuple(output_size, 2)), x.dtype)
    out = ops.fold(x, ms.Tensor(list(_tuple(output_size, 2)), ms.int32), kernel_size, dilation, padding, stride)
    return out[0] if unbatched else out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold on batched or unbatched (C, H, W) input (mindspore.ops.unfold wants 4-D)."""
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    out = ops.unfold(x, kernel_size, dilation, padding, stride)
    return out[0] if unbatched else out


# ----------------------------------------------------------------------------------------------------- upsampling

def upsample_bilinear(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_bilinear (and nn.UpsamplingBilinear2d): bilinear with align_corners=True."""
    return interpolate(input, size, scale_factor, "bilinear", True)


def upsample_nearest(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_nearest (and nn.UpsamplingNearest2d): nearest, source index floor(dst * in/out),
    or floor(dst / scale_factor) when a scale factor is given (MindSpore 2.10 rejects scale_factor for 4-D nearest)."""
    return interpolate(input, size, scale_factor, "nearest")


# ------------------------------------------------------------------------------------------------------ embedding

def embedding(input_params, input_indices, axis=0, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False):
    """torch.nn.functional.embedding whose ``padding_idx``, ``max_norm`` or ``scale_grad_by_freq`` is given (LoRA's
    Embedding passes its own attributes, names known only when it runs; ``ops.gather(weight, input, 0)`` is the call
    otherwise, in the argument names that form takes). The rows are the weight's; ``padding_idx``'s row receives no
    gradient, as in torch. ``max_norm`` (renormalising the weight's rows in place) and ``scale_grad_by_freq``
    (gradients scaled by the inverse frequency) are refused when they are set: not supported."""
    if max_norm is not None:
        raise ValueError("embedding: max_norm (in-place renormalisation of the weight's rows) is not supported")
    if scale_grad_by_freq:
        raise ValueError("embedding: scale_grad_by_freq=True (gradients scaled by frequency) is not supported")
    weight = input_params
    if padding_idx is not None:
        rows = weight.shape[0]
        row = padding_idx + rows if padding_idx < 0 else padding_idx
        frozen = (ops.arange(rows) == row).reshape(rows, 1)
        weight = ops.where(frozen, ops.stop_gradient(weight), weight)
    return ops.gather(weight, input_indices, axis)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.nn.functional.embedding_bag: sums, means or maxes of embedding rows per bag, bags given as the rows of
    a 2-D input or by ``offsets`` into a 1-D input; ``padding_idx`` entries are left out (an empty bag gives
    zeros). No MindSpore op in 2.10: gather + unsorted_segment_sum/max. ``max_norm`` (renormalising the weight
    in place) is not supported."""
    if max_norm is not None:
        raise ValueError("embedding_bag: max_norm (in-place renormalisation of the weight) is not supported")
    if input.ndim == 2:
        bags, length = input.shape
        ids = input.reshape(-1)
        segments = ops.arange(bags * length, dtype=ms.int32) // length
    else:
        ids = input
        bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
        segments = ops.searchsorted(offsets.astype(ms.int64), ops.arange(ids.shape[0], dtype=ms.int64),
                                    right=True).astype(ms.int32) - 1
    rows = ops.gather(weight, ids, 0)
    keep = ops.ones(ids.shape, weight.dtype) if padding_idx is None else (ids != padding_idx).astype(weight.dtype)
    if input.ndim != 2:
        # ids past the last bag (include_last_offset=True with offsets[-1] < len(input)) belong to no bag in torch;
        # an out-of-range segment id would crash the segment kernels (SIGSEGV), so they go to bag 0 with weight 0
        inside = (segments >= 0) & (segments < bags)
        keep = keep * inside.astype(weight.dtype)
        segments = ops.where(inside, segments, ops.zeros_like(segments))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    counts = ops.unsorted_segment_sum(keep, segments, bags).reshape(-1, 1)
    if mode == "max":
        rows = ops.where(keep.reshape(-1, 1) > 0, rows, ops.full_like(rows, _finfo(weight.dtype, "min")))
        out = ops.unsorted_segment_max(rows, segments, bags)
        return ops.where(counts > 0, out, ops.zeros_like(out))
    total = ops.unsorted_segment_sum(rows * keep.reshape(-1, 1), segments, bags)
    if mode == "sum":
        return total
    return total / ops.maximum(counts, ops.ones_like(counts))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """torch.nn.functional.fractional_max_pool2d_with_indices: always (values, int64 indices), regions random."""
    return ops.fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """torch.nn.functional.fractional_max_pool3d_with_indices: always (values, int64 indices), regions random."""
    return ops.fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


_CONV_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


def _conv(op, input, weight, bias, stride, pad_mode, padding, dilation, groups):
    """torch convolves integer tensors on the CPU (the result in the input's dtype: a board game's win check by a
    convolution of int8 boards with an int8 kernel); MindSpore 2.10's CPU Conv kernels take float32 only. Integer
    inputs are convolved in float32 and cast back: exact while every sum stays within 2**24 (float64 inputs, which
    the CPU kernels lack too, are left to raise: float32 would not give torch's float64 values). An unbatched input
    (one axis fewer than the weight: torch's (C, *spatial)) gets its batch axis for MindSpore's kernel, which takes
    only a batch, and loses it again."""
    unbatched = input.ndim == weight.ndim - 1  # (not by calling itself: a graph refuses a recursive function)
    x = input.expand_dims(0) if unbatched else input
    if x.dtype in _CONV_INTS:
        out = op(x.astype(ms.float32), weight.astype(ms.float32),
                 None if bias is None else bias.astype(ms.float32), stride, pad_mode, padding, dilation, groups)
        out = out.astype(x.dtype)
    else:
        out = op(x, weight, bias, stride, pad_mode, padding, dilation, groups)
    return out[0] if unbatched else out


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d / torch.conv1d: ops.conv1d (its pad_mode/padding), integer inputs too (see _conv).
    A 4-D weight (out, in/groups, 1, k) is a MindSpore Conv1d's own (a subclass of torch's Conv1d that convolves
    with ``self.weight`` in its forward: weight noise, standardisation): torch's (out, in/groups, k) is its axis 2
    dropped. torch refuses a 4-D weight here, so no torch program means anything else by one."""
    if weight.ndim == 4 and weight.shape[2] == 1:
        weight = weight.squeeze(2)
    return _conv(ops.conv1d, input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d / torch.conv2d: ops.conv2d (its pad_mode/padding), integer inputs too (see _conv)."""
    return _conv(ops.conv2d, input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv3d / torch.conv3d: ops.conv3d (its pad_mode/padding), integer inputs too (see _conv)."""
    return _conv(ops.conv3d, input, weight, bias, stride, pad_mode, padding, dilation, groups)


def bilinear(input1, input2, weight, bias=None):
    """torch.nn.functional.bilinear / torch.bilinear: ops.bidense, in the inputs' dtype: MindSpore 2.10's bidense
    returns int64 for int32 inputs without a bias (torch keeps int32; both wrap an int32 overflow the same way)."""
    out = ops.bidense(input1, input2, weight, bias)
    return out.astype(input1.dtype) if input1.dtype in _SIGNED_INTS and out.dtype != input1.dtype else out


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.nn.functional.cosine_similarity / torch.cosine_similarity, written out as torch computes it: each input
    divided by its own norm clamped to ``eps``, then the dot product. ops.cosine_similarity clamps the product of the
    norms instead (the same only while both norms exceed eps: at eps=1 with small vectors -0.90 against torch's -0.32),
    takes eps as a float only, and gave wrong values for x1 (3, 5) with x2 (5,) on 2.10: the inputs are broadcast
    first."""
    if x1.shape != x2.shape:
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        x1, x2 = ops.broadcast_to(x1, shape), ops.broadcast_to(x2, shape)
    eps = float(eps)
    n1 = ops.clamp(ops.sqrt(ops.sum(x1 * x1, dim, keepdim=True)), min=eps)
    n2 = ops.clamp(ops.sqrt(ops.sum(x2 * x2, dim, keepdim=True)), min=eps)
    return _math._or_empty(ops.sum((x1 / n1) * (x2 / n2), dim), x1, dim, False, 0)  # torch: 0 over no elements


# ------------------------------------------------------------------------------------------------------ resampling

_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """torch.nn.functional.interpolate (F.upsample, nn.Upsample): MindSpore's ops.interpolate where it gives torch's
    values, and torch's sampling written out where it does not: ``bicubic`` (MindSpore 2.10 is 0.115 off with
    ``align_corners=False`` on a 3x4 -> 5x7 resize: DINO/ViT position-embedding resizes; 1e-3 to 2.2e-3 off with
    ``align_corners=True`` wherever the source step is not a multiple of 1/2: 6 -> 5, 6 -> 12) and a non-integral
    ``scale_factor`` without ``recompute_scale_factor`` (MindSpore refuses it; torch samples at 1/scale_factor).
    Written out, (bi/tri)linear and bicubic are one interpolation matrix per spatial axis (torch's source indices,
    its cubic coefficients A=-0.75 and border clamping) and nearest/nearest-exact a gather, so they match torch to
    float32 rounding."""
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"mindport: interpolate(antialias=True) is defined for 'bilinear' and 'bicubic' "
                         f"(as in torch), not mode={mode!r}")
    spatial = input.ndim - 2
    sizes_in = tuple(input.shape[2:])
    scales = None
    if size is not None:
        sizes_out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial
        sizes_out = tuple(int(s) for s in sizes_out)
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * spatial
        scales = tuple(float(s) for s in scales)
        sizes_out = tuple(int(math.floor(n * s)) for n, s in zip(sizes_in, scales))
        if recompute_scale_factor:
            scales = None  # sampled as if the output size had been given
    integral = scales is None or all(s.is_integer() for s in scales)
    exact = mode == "bicubic" or not integral or antialias
    if not exact:
        if mode == "area":
            return ops.adaptive_avg_pool2d(input, sizes_out) if spatial == 2 else \
                ops.interpolate(input, size=sizes_out, mode=mode)
        return ops.interpolate(input, size=sizes_out, mode=mode, align_corners=align_corners)
    if mode == "area":
        return ops.interpolate(input, size=sizes_out, mode=mode)
    if mode in ("nearest", "nearest-exact"):
        out = input
        for axis in range(spatial):
            index = _nearest_index(sizes_in[axis], sizes_out[axis], None if scales is None else scales[axis],
                                   exact=mode == "nearest-exact")
            out = ops.gather(out, ms.Tensor(index, ms.int32), 2 + axis)
        return out
    if _INTERP_DIMS.get(mode) != spatial:
        raise ValueError(f"mindport: interpolate mode={mode!r} needs {_INTERP_DIMS.get(mode, '?')} spatial dims, "
                         f"got input of rank {input.ndim}")
    out = input
    for axis in range(spatial):
        build = _antialias_matrix if antialias else _interp_matrix
        matrix = build(sizes_in[axis], sizes_out[axis], None if scales is None else scales[axis],
                       bool(align_corners), cubic=mode == "bicubic")
        moved = ops.moveaxis(out, 2 + axis, -1)
        moved = ops.matmul(moved, ms.Tensor(matrix.T, out.dtype))
        out = ops.moveaxis(moved, -1, 2 + axis)
    return out


def _source_scale(n_in, n_out, scale, align_corners):
    """torch's area_pixel_compute_scale: the step between source samples."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest_index(n_in, n_out, scale, exact):
    """torch's nearest source indices, computed in float32 as torch does: floor(dst * step) (nearest-exact:
    floor((dst + 0.5) * step)), step 1/scale_factor when one is given, else in/out."""
    step = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * step) if exact else np.floor(dst * step)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _cubic_weights(t, a=-0.75):
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _interp_matrix(n_in, n_out, scale, align_corners, cubic):
    """(n_out, n_in): row i holds the weights torch's (bi/tri)linear or bicubic kernel gives the source samples of
    output i along one axis."""
    step = _source_scale(n_in, n_out, scale, align_corners)
    matrix = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        src = step * i if align_corners else step * (i + 0.5) - 0.5
        if cubic:
            base = math.floor(src)
            for tap, weight in zip(range(base - 1, base + 3), _cubic_weights(src - base)):
                matrix[i, min(max(tap, 0), n_in - 1)] += weight
        else:
            src = max(src, 0.0)
            base = min(int(math.floor(src)), n_in - 1)
            frac = src - base
            upper = min(base + 1, n_in - 1)
            matrix[i, base] += 1.0 - frac
            matrix[i, upper] += frac
    return matrix


def _antialias_filter(x, cubic):
    """torch's antialiasing kernels: the triangle (bilinear), Keys' cubic with a = -0.5 as PIL's (bicubic; the
    plain bicubic resize uses a = -0.75)."""
    x = abs(x)
    if not cubic:
        return max(0.0, 1.0 - x)
    a = -0.5
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _antialias_matrix(n_in, n_out, scale, align_corners, cubic):
    """(n_out, n_in): torch's antialiased resize along one axis (``interpolate(..., antialias=True)``, as PIL
    resizes): downscaling widens the kernel by the scale, so every source sample under an output pixel counts;
    each row's weights are normalised to sum 1 (torch's _compute_indices_weights_aa, float path)."""
    step = _source_scale(n_in, n_out, scale, align_corners)
    support = (2.0 if cubic else 1.0) * (step if step >= 1.0 else 1.0)
    inverse = 1.0 / step if step >= 1.0 else 1.0
    matrix = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        center = step * (i + 0.5)
        low = max(int(center - support + 0.5), 0)  # C's truncation toward zero, as torch's cast
        high = min(int(center + support + 0.5), n_in)
        weights = [_antialias_filter((j - center + 0.5) * inverse, cubic) for j in range(low, high)]
        total = sum(weights)
        if total != 0.0:
            matrix[i, low:high] = np.asarray(weights) / total
    return matrix

