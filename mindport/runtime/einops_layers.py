"""``einops.layers.torch`` for MindSpore: the converter rewrites ``from einops.layers.torch import Rearrange`` to this
module. The layers are defined beside the backend they run on (``einops_backend.py``)."""
from mindport.runtime.einops_backend import Rearrange, Reduce

__all__ = ["Rearrange", "Reduce"]
