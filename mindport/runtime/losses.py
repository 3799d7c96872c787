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

_INT_LABELS = (ms.int64, ms.int16, ms.int8, ms.uint8)


def _int32(labels):
    return labels.astype(ms.int32) if labels.dtype in _INT_LABELS else labels


class BCELoss(nn.Cell):
    """torch.nn.BCELoss: mindspore.nn.BCELoss applies a ``weight`` whose shape differs from the input's wrongly
    (torch broadcasts weight (3,) over input (2, 3); MindSpore 2.10 gives another number, silently): torch's formula
    (``binary_cross_entropy`` below)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def construct(self, logits, labels):
        return binary_cross_entropy(logits, labels, self.weight, self.reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy, by torch's formula: -w (t log x + (1 - t) log(1 - x)), each log
    clamped at -100 as torch does. ops.binary_cross_entropy applies a weight of another shape wrongly and gives twice
    the value for a one-element input (1.73 for x=0.3, t=0.6; torch 0.865), silently, on 2.10."""
    log_x = ops.clamp(ops.log(input), min=-100.0)
    log_1mx = ops.clamp(ops.log(1 - input), min=-100.0)
    loss = -(target * log_x + (1 - target) * log_1mx)
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


class CrossEntropyLoss(nn.CrossEntropyLoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, _int32(labels)), logits, self.reduction)


class NLLLoss(nn.NLLLoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, _int32(labels)), logits, self.reduction)


class L1Loss(nn.L1Loss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, self.reduction)


class MSELoss(nn.MSELoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, _flags(self))


class HuberLoss(nn.HuberLoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, self.reduction)


class SmoothL1Loss(nn.SmoothL1Loss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, self.reduction)


class HingeEmbeddingLoss(nn.HingeEmbeddingLoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, self.reduction)


class KLDivLoss(nn.KLDivLoss):
    def construct(self, logits, labels):
        return _empty_batch(super().construct(logits, labels), logits, self.reduction)


class BCEWithLogitsLoss(nn.BCEWithLogitsLoss):
    def construct(self, input, target):
        return _empty_batch(super().construct(input, target), input, self.reduction)


class MultiLabelSoftMarginLoss(nn.MultiLabelSoftMarginLoss):
    def construct(self, x, target):
        return _empty_batch(super().construct(x, target), x, self.reduction)


class MultiMarginLoss(nn.MultiMarginLoss):
    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(p, margin, reduction, weight)
        self.reduction = reduction

    def construct(self, x, target, weight=None):
        return _empty_batch(super().construct(x, target, weight), x, self.reduction)


class PoissonNLLLoss(nn.PoissonNLLLoss):
    def construct(self, input, target):
        return _empty_batch(super().construct(input, target), input, _flags(self))


class MarginRankingLoss(nn.MarginRankingLoss):
    def construct(self, input1, input2, target):
        return _empty_batch(super().construct(input1, input2, target), input1, self.reduction)


class CosineEmbeddingLoss(nn.CosineEmbeddingLoss):
    def construct(self, logits_x1, logits_x2, labels):
        return _empty_batch(super().construct(logits_x1, logits_x2, labels), logits_x1, _flags(self))


class GaussianNLLLoss(nn.GaussianNLLLoss):
    def construct(self, logits, labels, var):
        return _empty_batch(super().construct(logits, labels, var), logits, self.reduction)


class TripletMarginWithDistanceLoss(nn.TripletMarginWithDistanceLoss):
    def construct(self, x, positive, negative):
        return _empty_batch(super().construct(x, positive, negative), x, self.reduction)
