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
