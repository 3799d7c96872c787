"""``format(t, spec)`` of a 0-d tensor, as torch gives it: the tensor's Python number formatted with the spec.

torch's ``Tensor.__format__`` formats a 0-d tensor as ``self.item().__format__(spec)``, so training scripts hand
tensors to format specs wherever they please: ``f"{loss:.4f}"``, but also fields that read into a value,
``"Loss {loss.val:.4f} ({loss.avg:.4f})".format(loss=meter)`` with a meter that stored ``loss`` or ``acc1[0]``
(HobbitLong/RepDistiller's ``AverageMeter`` of ``accuracy(...)[0]``), ``"{0[1]:.2f}".format(row)``, ``"%"``-free
``format(v, ".3e")`` in a helper of another file. MindSpore's Tensor has no ``__format__`` of its own
(``object.__format__`` refuses every non-empty spec: "unsupported format string passed to Tensor.__format__"), and
the converter can only wrap the values it sees (``mp_tensor.formattable``, the rule FormatSpecTransform), not a
value read through an attribute or an item at format time. Importing this module (``mindport.runtime._graph`` does,
so every runtime module) gives MindSpore's Tensor torch's ``__format__`` for 0-d tensors, once; a tensor of more
dimensions keeps MindSpore's (a spec is refused in both frameworks; no spec gives its ``str``). No converted line
changes. A static graph does not format strings.
"""
from __future__ import annotations

from mindspore import Tensor

_MINDSPORE_FORMAT = Tensor.__format__


def __format__(self, format_spec):
    """torch's: a 0-d tensor formats as its Python number (``item()``), with or without a spec."""
    if self.ndim == 0:
        return format(self.item(), format_spec)
    return _MINDSPORE_FORMAT(self, format_spec)


if not hasattr(Tensor, "_mindport_format"):
    Tensor.__format__ = __format__
    Tensor._mindport_format = True
