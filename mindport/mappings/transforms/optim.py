"""Named transforms for the optim mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

import ast

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


_PARAMETER_CALLS = frozenset({"parameters", "trainable_params", "get_parameters"})


@value_transform("optimizer_params")
def optimizer_params(arg: Arg) -> str:
    """An optimizer's ``params`` that may join the parameters of several models (``list(G.parameters()) +
    list(D.parameters())``, ``itertools.chain(...)``, param groups, a variable) go through
    ``mindport.runtime.optim.distinct_names``: a MindSpore optimizer refuses two Parameters of one name, and each
    model names its own from the same paths (``fc.weight``). One model's parameters (``model.parameters()``, also
    filtered or in a comprehension over them) and a list of named tensors (``[w, b]``) stay as written."""
    try:
        tree = ast.parse(arg.source, mode="eval").body
    except SyntaxError:
        return arg.source
    if isinstance(tree, (ast.List, ast.Tuple)) and all(isinstance(e, (ast.Name, ast.Attribute)) for e in tree.elts):
        return arg.source  # leaf tensors: Parameters named by the converter after their variables
    receivers = [node.func.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr in _PARAMETER_CALLS]
    loop_names = {name.id for node in ast.walk(tree) if isinstance(node, ast.comprehension)
                  for name in ast.walk(node.target) if isinstance(name, ast.Name)}
    one_model = len({ast.dump(r) for r in receivers}) == 1 and not any(
        isinstance(name, ast.Name) and name.id in loop_names for name in ast.walk(receivers[0]))
    return arg.source if one_model else f"mindport.runtime.optim.distinct_names({arg.source})"
