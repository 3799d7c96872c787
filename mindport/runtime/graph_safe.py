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
