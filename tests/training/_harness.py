"""Run one torch training script and its conversion on the same data and initial weights; return both loss lists."""
from __future__ import annotations

import os
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
ROOT = HERE.parents[1]  # the checkout: the folder holding mindport/ and benchmarks/


def child_env(**extra: str) -> dict:
    """The environment of a child Python the test starts: this checkout's mindport first on PYTHONPATH, then the
    caller's entries, never an empty one (an empty entry is the child's working directory: a ``torch.py`` written
    there shadowed torch where PYTHONPATH was unset, CI's case)."""
    path = os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH", "")] if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def boot_losses(side: str, mode: str, state, script) -> tuple[list[float], str]:
    """Run ``script`` under the corpus tracker (benchmarks/training/boot.py ``side mode state script``, in the
    script's folder): the losses of its ``step <loss>`` lines, and the tracker's stderr."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "training" / "boot.py"), side, mode, str(state),
                           str(script)], capture_output=True, text=True, cwd=script.parent,
                          env=child_env(OMP_NUM_THREADS="1"), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("step")], done.stderr


def load_module(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(code, name, "exec"), module.__dict__)  # noqa: S102 - the test's own scripts
    return module


def convert(script: str):
    from mindport import convert_source

    source = (HERE / script).read_text()
    result = convert_source(source, script)
    errors = [d.format() for d in result.diagnostics if d.severity == "error"]
    assert not errors, "\n".join(errors) + "\n" + result.code
    compile(result.code, script, "exec")
    return source, result.code


def regression_data(seed: int = 0, n: int = 64, features: int = 8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, features)).astype(np.float32)
    w = rng.standard_normal((features, 1)).astype(np.float32)
    Y = (np.tanh(X @ w) + 0.1 * rng.standard_normal((n, 1))).astype(np.float32)
    return X, Y


def twin_models(torch_mod, ms_mod, cls: str, seed: int = 0, **kwargs):
    """The torch model (seeded init) and the converted MindSpore model with the same weights."""
    import torch

    from mindport.migrator.weights import transfer_weights

    torch.manual_seed(seed)
    t_model = getattr(torch_mod, cls)(**kwargs)
    m_model = getattr(ms_mod, cls)(**kwargs)
    transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
    return t_model, m_model


def assert_losses_match(t_losses, m_losses, n: int = 20, rtol: float = 1e-4) -> float:
    t = np.asarray(t_losses[:n], dtype=np.float64)
    m = np.asarray(m_losses[:n], dtype=np.float64)
    assert len(t) == n and len(m) == n, (len(t_losses), len(m_losses))
    rel = np.abs(t - m) / np.maximum(np.abs(t), 1e-12)
    assert rel.max() <= rtol, f"max relative loss difference {rel.max():.3g}\ntorch {t}\nms    {m}"
    return float(rel.max())


def beyond_noise(torch32: dict[str, list[float]], got: dict[str, list[float]], control, rtol: float = 1e-4,
                 floor: float = 1e-12) -> list[str]:
    """The curves of ``got`` (MindSpore's values per curve) that do not track ``torch32`` (torch's, same data and
    initial weights): a value beyond ``rtol`` (relative to ``max(|torch|, floor)``) is still tracking when it is
    within the float32 noise of its curve (mindport.validators.parity.noise.within_noise: ten times torch's own
    float32-to-float64 distance so far), the project's definition of "tracks" (benchmarks/training/README.md).
    ``control()`` runs torch's float64 control (boot.py ``control``) and returns its values per curve; it runs only
    when a value misses ``rtol``. Measured: on an AMD EPYC machine a BatchNorm1d + Adam evaluation loss was 1.04e-4
    from torch's and a dropout CNN's fifth loss 1.46e-4, each within its noise; the defects these tests guard were
    1e-2 and more apart. Returns one line per failing curve (empty: every curve tracks)."""
    from mindport.validators.parity.noise import within_noise

    missed = {}
    for key, tv in torch32.items():
        a, b = np.asarray(tv, dtype=np.float64), np.asarray(got[key], dtype=np.float64)
        assert a.shape == b.shape, (key, tv, got[key])
        rel = np.abs(a - b) / np.maximum(np.abs(a), floor)
        if rel.max() > rtol:
            missed[key] = (rel.max(), a, b)
    if not missed:
        return []
    torch64 = control()
    bad = []
    for key, (worst, a, b) in missed.items():
        if key in torch64 and len(torch64[key]) == len(a) and all(within_noise(list(a), torch64[key], list(b))):
            continue
        bad.append(f"{key}: {worst:.3g}\n  torch   {a.tolist()}\n  ms      {b.tolist()}\n"
                   f"  float64 {torch64.get(key)}")
    return bad
