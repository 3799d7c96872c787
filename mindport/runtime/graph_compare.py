"""Python's ``==`` and ``!=`` of a list with a number, a string or a tuple, in a static graph.

In Python (and so in torch code) a list never equals a number, a string or a tuple: ``[1] == 1`` is False and
``[1] != 1`` True, whatever the items. Model code compares configuration values this way in ``forward``: an
EfficientNet block keeps ``stride=[1]`` (a list) in its block arguments and tests ``if self._block_args.stride == 1
and input_filters == output_filters: x = x + inputs``, a residual torch never adds on that block.

MindSpore 2.10 registers no graph ``==``/``!=`` for these type pairs (``mindspore.ops.composite.multitype_ops``'s
``equal``/``not_equal`` have List/List and List/None only): the default goes through the JIT Fallback and gives a
bool known only at run time (measured: a constant Tuple/Number comparison folds, a List one does not). The graph then
compiles both branches of the ``if``, and the branch torch never takes fails to compile when its shapes do not agree
("For 'Add', input1.shape and input2.shape need to broadcast"); when it compiles, the run-time bool is right.

Importing this module (``mindport.runtime._graph`` does, so every runtime module loads it) registers, once, the
graph's ``==`` and ``!=`` for List with Number, String and Tuple (both orders) as Python's constant answers, so the
graph folds the ``if`` and compiles only the branch taken. PyNative does not use these tables.
"""
from __future__ import annotations

from mindspore.ops.composite.multitype_ops import equal_impl as _equal_impl
from mindspore.ops.composite.multitype_ops import not_equal_impl as _not_equal_impl

_INSTALLED = getattr(_equal_impl, "_mindport_list_compare", False)

_PAIRS = (("List", "Number"), ("Number", "List"), ("List", "String"), ("String", "List"), ("List", "Tuple"),
          ("Tuple", "List"))


def _never_equal(x, y):
    """A list and a number, string or tuple: never equal in Python."""
    return False


def _always_unequal(x, y):
    """A list and a number, string or tuple: always unequal in Python."""
    return True


if not _INSTALLED:
    for _left, _right in _PAIRS:
        _equal_impl.equal.register(_left, _right)(_never_equal)
        _not_equal_impl.not_equal.register(_left, _right)(_always_unequal)
    _equal_impl._mindport_list_compare = True
