"""Python idioms MindSpore's static graph (GRAPH_MODE, ``ms.jit``) compiles to wrong values, written the way it
compiles them right. Converted code imports this module as ``mp_graph_safe``; the converter rule that emits each
call says why (docs/converter/)."""
from __future__ import annotations

from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs


def merged_dict(*parts):
    """``{**a, **b, 'k': v}``: a new dict with each part's items in order, a later key replacing an earlier one.

    A dict display with ``**`` compiles in a graph but reads wrong values (``{**a}['k']`` gives an empty tuple, not
    the tensor stored under 'k': measured on MindSpore 2.10); ``dict.update`` compiles right."""
    out = {}
    for part in parts:
        out.update(part)
    return out


def dict_copy(source):
    """``dict(x)`` of one argument: a dict is copied item by item (``update``), anything else goes to ``dict``.

    In a graph, ``dict(d)`` of a dict holding tensors built a wrong dict, silently (its items iterated as
    ``[e[k] for k in dict(d)]`` gave one tensor where Python gave three: measured on MindSpore 2.10, graph19's
    probe), and a write to the copy failed to compile; ``update`` compiles right. Whether ``x`` is a dict is known only
    when the graph is built, hence a helper (``isinstance`` is decided at compile time there)."""
    if isinstance(source, dict):
        out = {}
        out.update(source)
        return out
    return dict(source)
