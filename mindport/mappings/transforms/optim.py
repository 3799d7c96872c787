"""Named transforms for the optim mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

from mindport.mappings.transforms.base import UNKNOWN, Arg, Unsupported, value_transform


@value_transform("integral")
def integral(arg: Arg) -> str:
    """DynamicLossScaler(scale_factor=) must be an int (torch GradScaler's growth_factor is a float, 2.0)."""
    value = arg.literal(default=UNKNOWN)
    if value is UNKNOWN:
        return f"int({arg.source})"
    if isinstance(value, (int, float)) and float(value).is_integer():
        return str(int(value))
    raise Unsupported(f"growth_factor={arg.source}: MindSpore's loss-scale factor is an integer")
