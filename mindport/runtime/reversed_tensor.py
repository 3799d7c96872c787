"""``reversed(t)`` of a tensor, as torch gives it: the tensor flipped along its first axis (a 0-d tensor itself).

torch's ``Tensor.__reversed__`` returns ``self.flip(0)``, a tensor; MindSpore's Tensor has none, so Python's
``reversed`` falls back to the sequence protocol and returns a ``reversed`` iterator over the rows. Code that only
iterates it is unchanged either way; code that uses the result as a tensor fails (``reversed(torch.stack(rewards))``
then ``.mean()``: "AttributeError: 'reversed' object has no attribute 'mean'", gillesdami/SimplePytorchActorCritic's
discounted returns). Importing this module (``mindport.runtime._graph`` does, so every runtime module) gives
MindSpore's Tensor torch's ``__reversed__``, once. No converted line changes. A static graph does not call it (the
graph's own ``reversed``, :mod:`mindport.runtime.graph_order`).
"""
from __future__ import annotations

from mindspore import Tensor, ops


def __reversed__(self):
    """torch's: ``self`` when 0-d, else ``self.flip(0)``."""
    return self if self.ndim == 0 else ops.flip(self, (0,))


if getattr(Tensor, "__reversed__", None) is not __reversed__ and not hasattr(Tensor, "_mindport_reversed"):
    Tensor.__reversed__ = __reversed__
    Tensor._mindport_reversed = True
