"""Named transforms for the optim mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

from mindport.mappings.transforms import (  # noqa: F401
    UNKNOWN,
    Arg,
    Unsupported,
    call_transform,
    new,
    value_transform,
    weight_transform,
)
