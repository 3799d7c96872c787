"""The parity report's data: per output, per layer, per parameter gradient, the training run, the graph-mode check
and the whole report (JSON schema in docs/parity-report.md)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from mindport.errors import Diagnostic

SCHEMA_VERSION = 3


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
    ratio_1e3: float | None = None  # msprobe "One Thousandth Err Ratio": share of elements within 0.1 % relative
    ratio_5e3: float | None = None  # msprobe "Five Thousandths Err Ratio": share within 0.5 %
    grade: str = ""  # msprobe's verdict on this tensor: pass | warning | error
    constant: bool = False  # the reference output is constant (all elements equal): comparing it proves little
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
    status: str  # match | diverged | shape_mismatch | missing_in_mindspore | type_mismatch | not_compared
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    cosine: float | None = None
    ref_scale: float | None = None  # max |torch output|
    ratio_1e3: float | None = None
    ratio_5e3: float | None = None
    input_max_rel: float | None = None  # the layer's inputs: max abs error / max |torch input|
    input_cosine: float | None = None
    input_ratio_1e3: float | None = None
    grade: str = ""  # pass | warning | error, by msprobe's rules on this layer's inputs and outputs
    grade_reasons: list = field(default_factory=list)
    role: str = ""  # cause | propagated | contains | "" (matched): who introduced the error
    constant: bool = False  # the torch output is constant
    torch_config: dict = field(default_factory=dict)
    ms_config: dict = field(default_factory=dict)
    causes: list = field(default_factory=list)  # [{"trap", "cause", "training_only"}]
    note: str = ""
    torch_site: str = ""  # file:line of the statement that called this layer in the torch source
    ms_site: str = ""  # the same statement in the converted source
    torch_def: str = ""  # file:line of the layer's forward (user-defined classes)
    ms_def: str = ""  # file:line of its construct
    ms_diagnostics: list = field(default_factory=list)  # "# mindport: ..." comments on the converted statement

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
    note: str = ""  # how it compiled when it needed more than the defaults (a raised recursion limit)


@dataclass
class TensorComparison:
    """One parameter (its gradient, or its value after training), matched through the weight map."""

    name: str  # torch name
    ms_name: str
    layer: str  # module path owning the parameter
    shape: list
    status: str  # match | drift (trained weights only) | diverged | shape_mismatch | missing_in_mindspore | not_compared
    max_abs: float | None = None
    max_rel: float | None = None  # max abs / max |torch value|
    cosine: float | None = None
    sign_similarity: float | None = None  # msprobe grad_probe: share of elements whose sign (> 0) agrees
    update: float | None = None  # after training: max |torch's final - initial value| (how far training moved it)
    grade: str = ""
    note: str = ""

    @property
    def diverged(self) -> bool:
        return self.status in ("diverged", "shape_mismatch", "missing_in_mindspore")


@dataclass
class GradReport:
    ok: bool = False
    loss: dict = field(default_factory=dict)  # {"torch": float, "mindspore": float}: the seeded projection loss
    params: list[TensorComparison] = field(default_factory=list)  # in backward order (nearest the output first)
    sign_similarity: float | None = None  # over all compared elements (msprobe weights by element count)
    first_divergent: TensorComparison | None = None
    layer: dict = field(default_factory=dict)  # the first divergent parameter's layer: path, types, sites
    weights: str = ""  # "perturbed" when gradients ran on the perturbed weights (see vacuous)
    note: str = ""
    seconds: float | None = None


@dataclass
class TrainReport:
    ok: bool = False
    steps: int = 0
    optimizer: dict = field(default_factory=dict)  # torch class, MindSpore class, arguments
    loss: dict = field(default_factory=dict)  # torch loss, MindSpore loss
    losses: dict = field(default_factory=dict)  # {"torch": [...], "mindspore": [...]} per step
    rel_diff: list = field(default_factory=list)  # per step |ms - torch| / |torch|
    max_rel_diff: float | None = None
    rtol: float = 1e-4
    first_divergent_step: int | None = None
    weights: list[TensorComparison] = field(default_factory=list)  # final values
    # the float64 noise control (noise.py), run when a loss or weight is beyond rtol: torch's float64 losses and
    # their relative distance to its float32 ones
    control: dict = field(default_factory=dict)
    note: str = ""
    seconds: float | None = None


@dataclass
class ParityReport:
    ok: bool = False  # outcome == "pass"
    outcome: str = "diverged"  # pass | diverged | inconclusive (verdict.py decides)
    reason: str = ""  # why, in a phrase (printed beside the verdict)
    reference: dict = field(default_factory=dict)
    candidate: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    structure: dict = field(default_factory=lambda: {"ok": True, "problems": []})
    outputs: list[OutputResult] = field(default_factory=list)
    layers: list[LayerResult] = field(default_factory=list)
    first_divergent: LayerResult | None = None
    drift: str = ""  # outputs diverge but no layer introduced the error: accumulated rounding drift
    config_findings: list[dict] = field(default_factory=list)
    vacuous: dict = field(default_factory=dict)  # constant reference outputs/layers and what was perturbed
    perturbed: ParityReport | None = None  # the same comparison on the perturbed weights
    grad: GradReport | None = None
    train: TrainReport | None = None
    graph: GraphResult = field(default_factory=GraphResult)
    ms_error: str = ""
    ms_error_site: str = ""  # file:line of the converted statement that raised
    localization: str = ""  # why localisation did not run, when it did not
    logs: dict = field(default_factory=dict)  # side -> log file of its process
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    export: dict | None = None  # validate(export_to=...): the proven Cell's MindIR export (ExportReport.to_json())

    @property
    def verdict(self) -> str:
        return self.outcome

    @property
    def exit_code(self) -> int:
        """0 pass, 1 diverged, 3 inconclusive (a proof that proves nothing is neither success nor a divergence)."""
        return {"pass": 0, "inconclusive": 3}.get(self.outcome, 1)

    def forward_json(self) -> dict:
        """The forward comparison alone (also the shape of ``perturbed``)."""
        return {
            "ok": self.ok,
            "structure": self.structure,
            "outputs": [dataclasses.asdict(o) for o in self.outputs],
            "layers": [dataclasses.asdict(lr) for lr in self.layers],
            "first_divergent": _asdict(self.first_divergent),
            "drift": self.drift,
            "ms_error": self.ms_error,
            "ms_error_site": self.ms_error_site,
        }

    def to_json(self) -> dict:
        from mindport import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "mindport", "version": __version__},
            "ok": self.ok,
            "verdict": self.verdict,
            "reason": self.reason,
            "reference": self.reference,
            "candidate": self.candidate,
            "settings": self.settings,
            "weights": self.weights,
            **{k: v for k, v in self.forward_json().items() if k != "ok"},
            "config_findings": self.config_findings,
            "vacuous": self.vacuous,
            "perturbed": self.perturbed.forward_json() if self.perturbed is not None else None,
            "grad": _asdict(self.grad),
            "train": _asdict(self.train),
            "graph": dataclasses.asdict(self.graph),
            "localization": self.localization,
            "logs": self.logs,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "timings": self.timings,
        }


def _asdict(obj):
    return None if obj is None else dataclasses.asdict(obj)
