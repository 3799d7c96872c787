"""Named transforms for the tensor mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

from mindport.mappings.transforms.base import Arg, value_transform


@value_transform("tensor_index_int32")
def tensor_index_int32(arg: Arg) -> str:
    """Index tensors for MindSpore's IndexFill/IndexAdd CPU kernels must be int32 (torch requires int64)."""
    return f"({arg.source}).int()"
