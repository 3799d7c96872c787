"""Losses that accept torch's int64 class labels, and MindSpore's losses with torch's answer for an empty batch.

MindSpore 2.10's ``nn.CrossEntropyLoss``/``nn.NLLLoss`` require int32 class indices (int64 raises TypeError) while
torch requires int64, so converted training code would feed them int64 labels. These subclasses cast integer
labels to int32 and are otherwise the MindSpore losses (same arguments, same results); the cast is a no-op for
class-probability targets.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import nn, ops

from mindport.runtime import math as _math
from mindport.runtime.math import _empty_extent
from mindport.runtime.nn_functional import _finite_below

_INT_LABELS = (ms.int64, ms.int16, ms.int8, ms.uint8)


def _int32(labels):
    return labels.astype(ms.int32) if labels.dtype in _INT_LABELS else labels


_CLASS_WEIGHTS = ("weight", "pos_weight")


def _weights_as_buffers(loss):
    """torch's weighted losses register ``weight`` (and BCEWithLogitsLoss ``pos_weight``) as buffers: a model holding
    ``nn.CrossEntropyLoss(weight=w)`` has ``criterion.weight`` in its state_dict. The MindSpore losses keep a plain
    Tensor, which no checkpoint key reaches (the weight transfer refused the whole model). Each given one becomes a
    non-trainable Parameter under torch's name, as a converted ``register_buffer`` does; None stays None."""
    for name in _CLASS_WEIGHTS:
        value = getattr(loss, name, None)
        if isinstance(value, ms.Tensor) and not isinstance(value, ms.Parameter):
            setattr(loss, name, ms.Parameter(value, name=name, requires_grad=False))


class _WeightedLoss:
    """Mixin: the class weights of :func:`_weights_as_buffers`, after the MindSpore loss's own ``__init__``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _weights_as_buffers(self)


class BCELoss(nn.Cell):
    """torch.nn.BCELoss: mindspore.nn.BCELoss applies a ``weight`` whose shape differs from the input's wrongly
    (torch broadcasts weight (3,) over input (2, 3); MindSpore 2.10 gives another number, silently): torch's formula
    (``binary_cross_entropy`` below)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction
        _weights_as_buffers(self)

    def construct(self, logits, labels):
        return binary_cross_entropy(logits, labels, self.weight, self.reduction)


class _BinaryCrossEntropy(nn.Cell):
    """torch's binary cross-entropy per element, value and gradient. The value -(t log x + (1 - t) log(1 - x)), each
    log clamped at -100; the gradient torch's own kernel gives, not the derivative of that formula:
    (x - t) / max(x (1 - x), 1e-12) for the input and log(1 - x) - log(x) (clamped) for the target. The two part
    where a sigmoid saturates (a GAN's discriminator with N(0, 1) weights, found while looking at togheppi's 1-d
    GAN): for x = sigmoid(-30), t = 1 torch's input gradient is -1/1e-12 and, through the sigmoid, about -1e-2 a
    sample where the formula's derivative gives -1; at x = 1.0 exactly (sigmoid(17) in float32) the formula's
    derivative is 0 * inf = NaN where torch gives 0."""

    def construct(self, x, t):
        log_x = ops.clamp(ops.log(x), min=-100.0)
        log_1mx = ops.clamp(ops.log(1 - x), min=-100.0)
        return -(t * log_x + (1 - t) * log_1mx)

    def bprop(self, x, t, out, dout):
        log_x = ops.clamp(ops.log(x), min=-100.0)
        log_1mx = ops.clamp(ops.log(1 - x), min=-100.0)
        return dout * (x - t) / ops.clamp(x * (1 - x), min=1e-12), dout * (log_1mx - log_x)


_BCE = None


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy, by torch's formula: -w (t log x + (1 - t) log(1 - x)), each log
    clamped at -100 as torch does, with torch's gradient (``_BinaryCrossEntropy``). ops.binary_cross_entropy applies
    a weight of another shape wrongly and gives twice the value for a one-element input (1.73 for x=0.3, t=0.6;
    torch 0.865), silently, on 2.10."""
    global _BCE
    if _BCE is None:
        _BCE = _BinaryCrossEntropy()
    loss = _BCE(input, target.astype(input.dtype) if isinstance(target, ms.Tensor) else target)
    if weight is not None:
        loss = loss * weight
    if reduction == "mean":
        return _math.mean(loss)
    if reduction == "sum":
        return _math.sum(loss)
    return loss


# --- an empty batch ----------------------------------------------------------------------------------------------
# MindSpore's losses reduce with ReduceMean/ReduceSum kernels, which return uninitialised memory for an empty batch
# (nn.MSELoss()(zeros(0, 4), zeros(0, 4)) is not NaN, measured on 2.10). torch gives NaN for reduction='mean' (and
# 'batchmean'), 0 for 'sum'. These subclasses are the MindSpore losses with that answer. Where a loss keeps its
# reduction as ``self.reduction`` that is read; LossBase's average/reduce flags stay at 'mean' in some (2.10).


def _empty_batch(loss, input, reduction):
    if reduction != "none" and _empty_extent(input.shape, None):
        return ops.full((), 0 if reduction == "sum" else float("nan"), dtype=loss.dtype)
    return loss


def _flags(loss):
    """The reduction a LossBase's flags say (for the losses that keep no ``reduction`` attribute)."""
    if not loss.reduce:
        return "none"
    return "mean" if loss.average else "sum"


# Each loss calls MindSpore's construct through a class attribute of its own (``self._mp_nn_X_construct``), not
# super(): GRAPH_MODE compiles ``super()`` as ``super(type(self), self)`` (a model's subclass that does not override
# construct called this construct for ever) and ``super(X, self)`` as the first class named X in the MRO (the
# adapter class ``mp_adapt.api("torch.nn.X")`` is one). tests/runtime/test_super_in_graph.py
class CrossEntropyLoss(_WeightedLoss, nn.CrossEntropyLoss):
    _mp_nn_CrossEntropyLoss_construct = nn.CrossEntropyLoss.construct

    def construct(self, logits, labels):
        # -inf logits (masked) as the lowest finite value: MindSpore's kernel made them a NaN loss
        return _empty_batch(self._mp_nn_CrossEntropyLoss_construct(_finite_below(logits), _int32(labels)), logits,
                            self.reduction)


class NLLLoss(_WeightedLoss, nn.NLLLoss):
    _mp_nn_NLLLoss_construct = nn.NLLLoss.construct

    def construct(self, logits, labels):
        # -inf logits (masked) as the lowest finite value: MindSpore's kernel made them a NaN loss
        return _empty_batch(self._mp_nn_NLLLoss_construct(_finite_below(logits), _int32(labels)), logits,
                            self.reduction)


class L1Loss(nn.L1Loss):
    _mp_nn_L1Loss_construct = nn.L1Loss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_L1Loss_construct(logits, labels), logits, self.reduction)


class MSELoss(nn.MSELoss):
    _mp_nn_MSELoss_construct = nn.MSELoss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_MSELoss_construct(logits, labels), logits, _flags(self))


class HuberLoss(nn.HuberLoss):
    _mp_nn_HuberLoss_construct = nn.HuberLoss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_HuberLoss_construct(logits, labels), logits, self.reduction)


class SmoothL1Loss(nn.SmoothL1Loss):
    _mp_nn_SmoothL1Loss_construct = nn.SmoothL1Loss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_SmoothL1Loss_construct(logits, labels), logits, self.reduction)


class HingeEmbeddingLoss(nn.HingeEmbeddingLoss):
    _mp_nn_HingeEmbeddingLoss_construct = nn.HingeEmbeddingLoss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_HingeEmbeddingLoss_construct(logits, labels), logits, self.reduction)


class KLDivLoss(nn.KLDivLoss):
    _mp_nn_KLDivLoss_construct = nn.KLDivLoss.construct

    def construct(self, logits, labels):
        return _empty_batch(self._mp_nn_KLDivLoss_construct(logits, labels), logits, self.reduction)


class BCEWithLogitsLoss(_WeightedLoss, nn.BCEWithLogitsLoss):
    _mp_nn_BCEWithLogitsLoss_construct = nn.BCEWithLogitsLoss.construct

    def construct(self, input, target):
        return _empty_batch(self._mp_nn_BCEWithLogitsLoss_construct(input, target), input, self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss, nn.MultiLabelSoftMarginLoss):
    _mp_nn_MultiLabelSoftMarginLoss_construct = nn.MultiLabelSoftMarginLoss.construct

    def construct(self, x, target):
        return _empty_batch(self._mp_nn_MultiLabelSoftMarginLoss_construct(x, target), x, self.reduction)


class MultiMarginLoss(nn.MultiMarginLoss):
    _mp_nn_MultiMarginLoss_construct = nn.MultiMarginLoss.construct

    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(p, margin, reduction, weight)
        self.reduction = reduction
        _weights_as_buffers(self)

    def construct(self, x, target, weight=None):
        return _empty_batch(self._mp_nn_MultiMarginLoss_construct(x, target, weight), x, self.reduction)


class PoissonNLLLoss(nn.PoissonNLLLoss):
    _mp_nn_PoissonNLLLoss_construct = nn.PoissonNLLLoss.construct

    def construct(self, input, target):
        return _empty_batch(self._mp_nn_PoissonNLLLoss_construct(input, target), input, _flags(self))


class MarginRankingLoss(nn.MarginRankingLoss):
    _mp_nn_MarginRankingLoss_construct = nn.MarginRankingLoss.construct

    def construct(self, input1, input2, target):
        return _empty_batch(self._mp_nn_MarginRankingLoss_construct(input1, input2, target), input1, self.reduction)


class CosineEmbeddingLoss(nn.CosineEmbeddingLoss):
    _mp_nn_CosineEmbeddingLoss_construct = nn.CosineEmbeddingLoss.construct

    def construct(self, logits_x1, logits_x2, labels):
        return _empty_batch(self._mp_nn_CosineEmbeddingLoss_construct(logits_x1, logits_x2, labels), logits_x1, _flags(self))


class GaussianNLLLoss(nn.GaussianNLLLoss):
    _mp_nn_GaussianNLLLoss_construct = nn.GaussianNLLLoss.construct

    def construct(self, logits, labels, var):
        return _empty_batch(self._mp_nn_GaussianNLLLoss_construct(logits, labels, var), logits, self.reduction)


class TripletMarginWithDistanceLoss(nn.TripletMarginWithDistanceLoss):
    """Without a distance_function, torch's pairwise_distance: the norm over the last dim of x - y + 1e-6
    (MindSpore's own default takes it over axis 1: on inputs of more than 2 dims another, silent, number)."""
    _mp_nn_TripletMarginWithDistanceLoss_construct = nn.TripletMarginWithDistanceLoss.construct

    def __init__(self, distance_function=None, swap=False, reduction="mean", margin=1.0):
        if distance_function is None:
            from mindport.runtime.nn_functional import pairwise_distance as distance_function
        super().__init__(distance_function=distance_function, swap=swap, reduction=reduction, margin=margin)

    def construct(self, x, positive, negative):
        return _empty_batch(self._mp_nn_TripletMarginWithDistanceLoss_construct(x, positive, negative), x, self.reduction)
