"""Every zoo model converts with no diagnostics, imports under MindSpore, takes the torch weights and matches torch
in inference to 1e-5 relative (max |diff| <= 1e-5 * max(1, max |torch output|)), in PyNative and compiled as a
static graph (``ms.jit`` of the Cell, what ``GRAPH_MODE`` does)."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from zoo_harness import build_pair, convert_model, load_manifest, make_inputs, max_diff, run_pair

ZOO = load_manifest()

# Zoo models the converter leaves with torch-style Tensor calls that only PyNative accepts (lint MS416 names each
# statement, tests/zoo/test_zoo_lint_and_parity.py checks that it does): converter work, see docs/static-graph.md.
GRAPH_CONVERTER_GAPS: dict[str, str] = {}  # none left: transpose, split(dim=) and expand are written graph-safe


def _graph_params():
    return [pytest.param(m, id=m.name, marks=[pytest.mark.xfail(strict=True, reason=GRAPH_CONVERTER_GAPS[m.name])]
                         if m.name in GRAPH_CONVERTER_GAPS else []) for m in ZOO]


def test_manifest_covers_every_model_file():
    from zoo_harness import MODELS_DIR

    files = {p.name for p in MODELS_DIR.glob("*.py")}
    assert files == {m.file for m in ZOO}
    assert len(ZOO) >= 20


@pytest.mark.parametrize("model", ZOO, ids=[m.name for m in ZOO])
def test_zoo_model_converts_and_matches_torch(model, tmp_path):
    converted, result = convert_model(model, tmp_path / "ms")
    assert result.diagnostics == [], "\n".join(str(d) for d in result.diagnostics)
    tree = ast.parse(result.code)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | imported
    assert not any(m and m.split(".")[0] == "torch" for m in modules), "a torch import survived"
    assert "forward" not in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    tmodel, msmodel, report = build_pair(model, converted)
    assert report.ok, report
    t_outs, m_outs = run_pair(tmodel, msmodel, make_inputs(model))
    assert len(t_outs) == len(m_outs)
    for t, m in zip(t_outs, m_outs):
        assert t.shape == m.shape
        assert np.isfinite(t).all()
    diff, scale = max_diff(t_outs, m_outs)
    print(f"{model.name}: max|diff|={diff:.3g} (scale {scale:.3g})")
    assert diff <= model.tolerance * scale, f"{model.name}: max|diff| {diff:.3g} > {model.tolerance} * {scale:.3g}"


@pytest.mark.slow
@pytest.mark.parametrize("model", _graph_params())
def test_zoo_model_matches_torch_in_graph_mode(model, tmp_path, monkeypatch):
    import mindspore as ms

    from zoo_harness import _flatten

    converted, result = convert_model(model, tmp_path / "ms")
    tmodel, msmodel, report = build_pair(model, converted)
    assert report.ok, report
    arrays = make_inputs(model)
    t_outs, _ = run_pair(tmodel, msmodel, arrays)
    monkeypatch.chdir(tmp_path)  # a failed compile writes rank_0/ into the working folder
    g_outs = _flatten(ms.jit(msmodel)(*[ms.Tensor(a) for a in arrays]))
    assert len(t_outs) == len(g_outs) and all(t.shape == g.shape for t, g in zip(t_outs, g_outs))
    diff, scale = max_diff(t_outs, g_outs)
    assert diff <= model.tolerance * scale, f"{model.name}: max|diff| {diff:.3g} > {model.tolerance} * {scale:.3g}"
