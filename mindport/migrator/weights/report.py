"""What a transfer plans and reports: the ``WeightMap`` (every torch key -> its MindSpore parameter, JSON for
audit) and the ``TransferReport`` of a Cell filled from it."""
from __future__ import annotations

from dataclasses import dataclass, field

from mindport.errors import Diagnostic, InputError


@dataclass
class TransferReport:
    mapping: dict[str, str] = field(default_factory=dict)  # torch key -> MindSpore parameter name
    dropped: list[str] = field(default_factory=list)  # torch keys with no MindSpore counterpart by design
    missing: list[str] = field(default_factory=list)  # MindSpore parameters left unfilled
    unexpected: list[str] = field(default_factory=list)  # torch keys that matched nothing
    diagnostics: list[Diagnostic] = field(default_factory=list)
    weight_map: WeightMap | None = field(default=None, repr=False)  # the plan that was applied

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected and not any(d.severity == "error" for d in self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def notices(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity != "error"]


@dataclass
class MapItem:
    """One MindSpore tensor of the output and where it comes from."""

    name: str  # MindSpore parameter name (the checkpoint key)
    sources: tuple[str, ...]  # torch keys (two for a folded weight_norm: g, v)
    shape: tuple[int, ...]  # MindSpore shape
    transform: str = ""  # weight transform name ("" none, "weight_norm" for the g/v fold)
    dtype: str = ""  # cast to this numpy dtype name ("" = keep the source dtype)
    param: object = field(default=None, repr=False, compare=False)  # the Parameter (Cell path only)
    buffer: tuple | None = field(default=None, repr=False, compare=False)  # (cell, buffer name) for buffers


@dataclass
class WeightMap:
    """The plan: every output tensor, plus what was dropped. ``to_json`` is the ``--emit-map`` audit file."""

    items: list[MapItem] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "format": "mindport-weight-map/1",
            "map": {src: item.name for item in self.items if item.buffer is None for src in item.sources},
            "dropped": sorted(self.dropped),
            "tensors": [{"name": item.name, "sources": list(item.sources), "shape": list(item.shape),
                         "transform": item.transform, "dtype": item.dtype}
                        for item in self.items if item.buffer is None],
        }

    @classmethod
    def from_json(cls, data: dict) -> WeightMap:
        if data.get("format") != "mindport-weight-map/1" or not isinstance(data.get("tensors"), list):
            raise InputError("not a mindport weight map (expected the JSON written by --emit-map)")
        items = [MapItem(t["name"], tuple(t["sources"]), tuple(t["shape"]), t.get("transform", ""), t.get("dtype", ""))
                 for t in data["tensors"]]
        return cls(items, list(data.get("dropped", [])))
