"""The parity report's data: per output, per layer, the graph-mode check and the whole report (JSON schema in
docs/parity-report.md)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from mindport.errors import Diagnostic

SCHEMA_VERSION = 1



# ----------------------------------------------------------------------------------------------------------------
# Report data

@dataclass
class OutputResult:
    key: str
    status: str  # match | mismatch | shape_mismatch | missing_in_mindspore | missing_in_reference
    ref_shape: list | None = None
    ms_shape: list | None = None
    ref_dtype: str = ""
    ms_dtype: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    cosine: float | None = None
    allclose: bool = False
    rtol: float = 0.0
    atol: float = 0.0
    nonfinite: dict = field(default_factory=dict)  # {"ref": {"nan": n, "inf": n}, "ms": {...}, "same_places": bool}
    message: str = ""


@dataclass
class LayerResult:
    index: int  # execution order (completion order of the torch module's forward)
    path: str
    call: int
    torch_type: str
    ms_type: str
    status: str  # match | diverged | shape_mismatch | missing_in_mindspore | type_mismatch
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    cosine: float | None = None
    ref_scale: float | None = None  # max |torch output|
    torch_config: dict = field(default_factory=dict)
    ms_config: dict = field(default_factory=dict)
    causes: list = field(default_factory=list)  # [{"trap", "cause", "training_only"}]
    note: str = ""

    @property
    def diverged(self) -> bool:
        return self.status in ("diverged", "shape_mismatch", "missing_in_mindspore")

    @property
    def cause(self) -> str:
        return self.causes[0]["cause"] if self.causes else self.note


@dataclass
class GraphResult:
    status: str = "skipped"  # skipped | ok | mismatch | failed
    compiled: bool = False
    equal_to_pynative: bool | None = None
    max_abs: float | None = None
    error: str = ""
    location: str = ""
    seconds: float | None = None


@dataclass
class ParityReport:
    ok: bool = False
    reference: dict = field(default_factory=dict)
    candidate: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    structure: dict = field(default_factory=lambda: {"ok": True, "problems": []})
    outputs: list[OutputResult] = field(default_factory=list)
    layers: list[LayerResult] = field(default_factory=list)
    first_divergent: LayerResult | None = None
    config_findings: list[dict] = field(default_factory=list)
    graph: GraphResult = field(default_factory=GraphResult)
    ms_error: str = ""
    localization: str = ""  # why localisation did not run, when it did not
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "parity" if self.ok else "divergence"

    def to_json(self) -> dict:
        from mindport import __version__

        def layer(lr: LayerResult | None):
            return None if lr is None else dataclasses.asdict(lr)

        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "mindport", "version": __version__},
            "ok": self.ok,
            "verdict": self.verdict,
            "reference": self.reference,
            "candidate": self.candidate,
            "settings": self.settings,
            "weights": self.weights,
            "structure": self.structure,
            "outputs": [dataclasses.asdict(o) for o in self.outputs],
            "layers": [layer(lr) for lr in self.layers],
            "first_divergent": layer(self.first_divergent),
            "config_findings": self.config_findings,
            "graph": dataclasses.asdict(self.graph),
            "ms_error": self.ms_error,
            "localization": self.localization,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "timings": self.timings,
        }
