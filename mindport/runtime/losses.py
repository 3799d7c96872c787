"""Losses that accept torch's int64 class labels.

MindSpore 2.10's ``nn.CrossEntropyLoss``/``nn.NLLLoss`` require int32 class indices (int64 raises TypeError) while
torch requires int64, so converted training code would feed them int64 labels. These subclasses cast integer
labels to int32 and are otherwise the MindSpore losses (same arguments, same results); the cast is a no-op for
class-probability targets.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import nn, ops

_INT_LABELS = (ms.int64, ms.int16, ms.int8, ms.uint8)


def _int32(labels):
    return labels.astype(ms.int32) if labels.dtype in _INT_LABELS else labels


class CrossEntropyLoss(nn.CrossEntropyLoss):
    def construct(self, logits, labels):
        return super().construct(logits, _int32(labels))


class NLLLoss(nn.NLLLoss):
    def construct(self, logits, labels):
        return super().construct(logits, _int32(labels))


def _broadcast_weight(weight, logits):
    return weight if weight is None or weight.shape == logits.shape else ops.broadcast_to(weight, logits.shape)


class BCELoss(nn.Cell):
    """torch.nn.BCELoss: mindspore.nn.BCELoss applies a ``weight`` whose shape differs from the input's wrongly
    (torch broadcasts weight (3,) over input (2, 3); MindSpore 2.10 gives another number, silently): the weight is
    broadcast to the input's shape first."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def construct(self, logits, labels):
        return ops.binary_cross_entropy(logits, labels, _broadcast_weight(self.weight, logits), self.reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy: ops.binary_cross_entropy with the weight broadcast to the input's
    shape (see BCELoss)."""
    return ops.binary_cross_entropy(input, target, _broadcast_weight(weight, input), reduction)
