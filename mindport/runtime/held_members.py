"""Modules a model holds in a plain Python list, tuple or dict attribute (``self.blocks = [Block(c) for _ in
range(n)]``, not an ``nn.ModuleList``): torch does not register them (no state_dict entry, not in ``parameters()``,
not switched by ``eval()``), yet its forward runs them, and so does the port's (``mindport.runtime.layers.own_names``
keeps them unregistered on the Cell too). The one rule that finds them, for both frameworks (no torch or MindSpore
import here: the torch side of a proof and the MindSpore side each pass their own module class): the weights a
proof moves (``validators.parity.side_torch`` hands their tensors, ``migrator.weights.plan`` fills them) and the
names the runtime gives their Parameters."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def held_members(owner, kind: type, registered: set[int]) -> Iterator[tuple[str, object, object]]:
    """(attribute, key, member) of each ``kind`` instance ``owner`` holds in a plain list, tuple or dict attribute,
    in attribute order then container order, whose id is not in ``registered``."""
    for attr, value in list(vars(owner).items()):
        if not isinstance(value, (list, tuple, dict)):
            continue
        for key, member in (list(value.items()) if isinstance(value, dict) else enumerate(value)):
            if isinstance(member, kind) and id(member) not in registered:
                yield attr, key, member


def unregistered_members(root, kind: type, named_modules: Callable[[object], Iterable[tuple[str, object]]]) -> dict:
    """path -> member for every unregistered module reachable from ``root``: held by a registered module of its tree
    (``named_modules(m)`` lists ``m``'s registered tree with paths, ``m`` itself as ``''``) or, in turn, by such a
    member. The path is torch's attribute path (``stack.blocks.0``), the names the proof's weights travel under; a
    member held twice keeps its first path."""
    found: dict = {}
    seen: set[int] = set()
    todo = [("", root)]
    while todo:
        base, top = todo.pop(0)
        tree = list(named_modules(top))
        registered = {id(sub) for _, sub in tree} | seen
        for path, sub in tree:
            for attr, key, member in held_members(sub, kind, registered):
                if id(member) in seen:
                    continue
                seen.add(id(member))
                where = ".".join(part for part in (base, path, f"{attr}.{key}") if part)
                found[where] = member
                todo.append((where, member))
    return found
