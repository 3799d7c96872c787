"""Deploy the port: write the MindSpore model as MindIR (``mindspore.export``), load it back (``mindspore.load`` +
``nn.GraphCell``) and check the reloaded graph gives the Cell's outputs on the same inputs.

Used by ``mindport export`` and as the last step of ``mindport migrate``. Building the model runs the project's
code (its module and ``--ctor``), like ``validate``.
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mindport.errors import InputError


@dataclass
class ExportReport:
    model: str
    path: str
    inputs: list[str]
    checkpoint: str | None = None
    bytes: int = 0
    seconds: float = 0.0
    outputs: list = field(default_factory=list)  # validators.parity.results.OutputResult, reloaded graph vs Cell
    structure_ok: bool = True
    error: str = ""  # export or reload failed: why

    @property
    def ok(self) -> bool:
        return not self.error and self.structure_ok and all(o.allclose for o in self.outputs)

    def to_json(self) -> dict:
        return {"ok": self.ok, "model": self.model, "path": self.path, "inputs": self.inputs,
                "checkpoint": self.checkpoint, "bytes": self.bytes, "seconds": round(self.seconds, 2),
                "error": self.error, "structure_ok": self.structure_ok,
                "outputs": [dataclasses.asdict(o) for o in self.outputs]}

    @classmethod
    def from_json(cls, data: dict) -> "ExportReport":
        from mindport.validators.parity.results import OutputResult

        fields = {k: v for k, v in data.items() if k in {f.name for f in dataclasses.fields(cls)}}
        fields["outputs"] = [OutputResult(**o) for o in data.get("outputs", [])]
        return cls(**fields)

    def summary(self) -> str:
        if self.error:
            return f"MindIR export failed: {self.error}"
        worst = max((o.max_abs for o in self.outputs if o.max_abs is not None), default=0.0)
        verdict = "outputs match the Cell" if self.ok else "outputs DIFFER from the Cell"
        return (f"wrote {self.path} ({self.bytes / 1e6:.2f} MB); reloaded with mindspore.load + nn.GraphCell: "
                f"{verdict} (max abs {worst:.3g}, {len(self.outputs)} output(s))")


def export_mindir(model_ref: str, out, *, ctor: str = "", inputs=(), checkpoint=None, rtol: float = 1e-5,
                  atol: float = 1e-6, seed: int = 0) -> ExportReport:
    """Export, reload, compare. Raises InputError for unusable arguments; export/reload failures are reported."""
    out = Path(out)
    if out.suffix != ".mindir":
        raise InputError(f"-o {out}: the output must end with .mindir")
    if not inputs:
        raise InputError("export needs the model's inputs: --input SHAPE:DTYPE (e.g. 2x3x32x32:float32)")
    from mindport.validators.parity.loading import build_model, make_inputs, parse_input_spec

    specs = [parse_input_spec(s) for s in inputs]
    if checkpoint is not None and not Path(checkpoint).is_file():
        raise InputError(f"checkpoint {checkpoint} does not exist")
    import mindspore as ms

    started = time.perf_counter()
    report = ExportReport(model_ref, str(out), [str(s) for s in specs], str(checkpoint) if checkpoint else None)
    cell = build_model(model_ref, ctor)
    if checkpoint is not None:
        try:
            params = ms.load_checkpoint(str(checkpoint))
        except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is an input error
            raise InputError(f"cannot read the checkpoint {checkpoint}: {type(exc).__name__}: {exc}") from None
        not_loaded, _ = ms.load_param_into_net(cell, params)
        if not_loaded:
            raise InputError(f"checkpoint {checkpoint} leaves {len(not_loaded)} parameter(s) of the model unfilled: "
                             f"{', '.join(not_loaded[:5])}")
    cell.set_train(False)
    return export_cell(cell, out, make_inputs(specs, seed), report, rtol=rtol, atol=atol, started=started)


def export_cell(cell, out, arrays, report: ExportReport, *, rtol: float = 1e-5, atol: float = 1e-6,
                started: float | None = None) -> ExportReport:
    """Export a built Cell (inference mode) on the numpy ``arrays`` as MindIR at ``out`` (written whole or not at
    all), reload it, compare with the Cell; ``report`` gets the outcome. Used by export_mindir and by parity's
    MindSpore side process (``migrate`` exports the Cell it proved instead of building it again)."""
    import mindspore as ms
    from mindspore import nn

    from mindport.validators.parity.metrics import compare_structures

    started = time.perf_counter() if started is None else started
    out = Path(out)
    tensors = [ms.Tensor(a) for a in arrays]
    expected = cell(*tensors)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=".mindir", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            ms.export(cell, *tensors, file_name=str(tmp), file_format="MINDIR")
            graph = nn.GraphCell(ms.load(str(tmp)))
            got = graph(*tensors)
        except Exception as exc:  # noqa: BLE001 - a model MindIR cannot hold is a finding, not a crash
            report.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:400] if str(exc).strip() else ''}"
            report.seconds = time.perf_counter() - started
            return report
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    report.outputs, structure = compare_structures(expected, got, rtol, atol)
    report.structure_ok = bool(structure.get("ok", True))
    report.bytes = out.stat().st_size
    report.seconds = time.perf_counter() - started
    return report
