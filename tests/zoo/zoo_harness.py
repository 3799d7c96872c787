"""The model zoo, reusable: read MANIFEST.toml, convert a model file, build both sides, compare them.

Other suites (lint, parity, weights) import this file by path or put ``tests/zoo`` on ``sys.path``::

    from zoo_harness import MODELS_DIR, load_manifest, convert_model, build_pair, run_pair
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MODELS_DIR = Path(__file__).parent / "models"
MANIFEST = MODELS_DIR / "MANIFEST.toml"


@dataclass(frozen=True)
class ZooModel:
    file: str
    cls: str
    ctor: str
    inputs: tuple[str, ...]
    kind: str = ""
    tolerance: float = 1e-5

    @property
    def path(self) -> Path:
        return MODELS_DIR / self.file

    @property
    def name(self) -> str:
        return Path(self.file).stem


def load_manifest() -> list[ZooModel]:
    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    return [ZooModel(m["file"], m["class"], m.get("ctor", ""), tuple(m["inputs"]), m.get("kind", ""),
                     m.get("tolerance", 1e-5)) for m in data["model"]]


def convert_model(model: ZooModel, out_dir: Path):
    """Convert the model file with ``convert_source``; write it as ``out_dir/<file>``. Returns (path, result)."""
    from mindport import convert_source

    result = convert_source(model.path.read_text(encoding="utf-8"), str(model.path))
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / model.file
    out.write_text(result.code, encoding="utf-8")
    return out, result


def randomize_torch(module, seed: int = 0) -> None:
    """Non-default weights everywhere, and BatchNorm running statistics that are not 0/1."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
        for name, b in module.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=gen) * 0.1)
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=gen) + 0.5)


def make_inputs(model: ZooModel, seed: int = 0) -> list[np.ndarray]:
    from mindport.validators.parity.loading import make_inputs as _make, parse_input_spec

    return _make([parse_input_spec(s) for s in model.inputs], seed=seed)


def build_pair(model: ZooModel, converted: Path, seed: int = 0):
    """(torch module in eval mode with random weights, MindSpore cell in inference mode with the same weights)."""
    import torch

    from mindport import transfer_weights
    from mindport.validators.parity.loading import build_model

    torch.manual_seed(seed)
    tmodel = build_model(f"{model.path}:{model.cls}", model.ctor)
    randomize_torch(tmodel, seed)
    tmodel.eval()
    msmodel = build_model(f"{converted}:{model.cls}", model.ctor)
    report = transfer_weights(tmodel.state_dict(), msmodel)
    msmodel.set_train(False)
    return tmodel, msmodel, report


def _flatten(value) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _flatten(v)]
    if hasattr(value, "asnumpy"):
        return [value.asnumpy()]
    return [value.detach().numpy()]


def run_pair(tmodel, msmodel, arrays: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    import mindspore as ms
    import torch

    with torch.no_grad():
        t_out = tmodel(*[torch.from_numpy(a) for a in arrays])
    m_out = msmodel(*[ms.Tensor(a) for a in arrays])
    return _flatten(t_out), _flatten(m_out)


def max_diff(t_outs, m_outs) -> tuple[float, float]:
    """(max |torch - mindspore|, allowed bound = 1e-5 * max(1, max |torch|)) over all outputs."""
    diff = max(float(np.max(np.abs(t.astype(np.float64) - m.astype(np.float64)))) for t, m in zip(t_outs, m_outs))
    scale = max(1.0, max(float(np.max(np.abs(t))) for t in t_outs))
    return diff, scale
