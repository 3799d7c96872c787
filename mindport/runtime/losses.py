"""Losses that accept torch's int64 class labels.

MindSpore 2.10's ``nn.CrossEntropyLoss``/``nn.NLLLoss`` require int32 class indices (int64 raises TypeError) while
torch requires int64, so converted training code would feed them int64 labels. These subclasses cast integer
labels to int32 and are otherwise the MindSpore losses (same arguments, same results); the cast is a no-op for
class-probability targets.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import nn

_INT_LABELS = (ms.int64, ms.int16, ms.int8, ms.uint8)


def _int32(labels):
    return labels.astype(ms.int32) if labels.dtype in _INT_LABELS else labels


class CrossEntropyLoss(nn.CrossEntropyLoss):
    def construct(self, logits, labels):
        return super().construct(logits, _int32(labels))


class NLLLoss(nn.NLLLoss):
    def construct(self, logits, labels):
        return super().construct(logits, _int32(labels))
