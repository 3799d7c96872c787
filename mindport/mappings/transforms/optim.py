"""Named transforms for the optim mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

from mindport.mappings.transforms.base import UNKNOWN, Arg, Unsupported, call_transform, value_transform


@value_transform("integral")
def integral(arg: Arg) -> str:
    """DynamicLossScaler(scale_factor=) must be an int (torch GradScaler's growth_factor is a float, 2.0)."""
    value = arg.literal(default=UNKNOWN)
    if value is UNKNOWN:
        return f"int({arg.source})"
    if isinstance(value, (int, float)) and float(value).is_integer():
        return str(int(value))
    raise Unsupported(f"growth_factor={arg.source}: MindSpore's loss-scale factor is an integer")


@call_transform("cyclic_momentum")
def cyclic_momentum(args: dict[str, Arg]) -> None:
    """CyclicLR cycles the optimizer's momentum too unless cycle_momentum=False (torch's default is True, and SGD/Adam
    always have a momentum or betas to cycle); MindSpore's CyclicLR cycles the learning rate only."""
    cycle = args.pop("cycle_momentum", None)
    if cycle is None or cycle.literal(default=UNKNOWN) is not False:
        raise Unsupported("cycle_momentum=True (torch's default) also cycles the optimizer's momentum between "
                          "base_momentum and max_momentum; MindSpore's CyclicLR cycles the learning rate only: pass "
                          "cycle_momentum=False if the momentum should stay fixed")
    args.pop("base_momentum", None)
    args.pop("max_momentum", None)
