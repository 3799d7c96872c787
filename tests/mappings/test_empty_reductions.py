"""Reductions over an empty extent: MindSpore 2.10's CPU reduction kernels return uninitialised memory when the reduced
dimension has no elements (``ops.sum`` of a (0,) tensor gave 9.2e13, ``ops.mean`` inf, ``ops.any`` True, ``ops.amax``
garbage where torch raises); torch gives the reduction's identity (sum 0, prod 1, any False, all True, mean/std/var
NaN, count_nonzero 0). Each call below is a torch snippet converted by the real converter (through the mapping
tables) and run in both frameworks on empty inputs: (0,), (2, 0) and (0, 3) reduced over every axis, over each one,
with and without keepdim, as float32, float64, int64 and bool. Values, NaN positions, shapes and dtypes must agree;
a call torch rejects (the mean of an int64 tensor) is not a case. The max-like reductions raise as torch does."""
from __future__ import annotations

import numpy as np
import pytest

from mindport.proofs.differential import run_case
from mindport.proofs.differential.generation import Case

SHAPES = ((0,), (2, 0), (0, 3))
DTYPES = ("float32", "float64", "int64", "bool")
# each reduction as a torch function and a Tensor method: {d}/{d0} the dim argument (after x / first), {dn}/{dn0} the
# same as a keyword, {k} keepdim
CALLS = {
    "sum": ("torch.sum(x{d}{k})", "x.sum({d0}{k})"),
    "mean": ("torch.mean(x{d}{k})", "x.mean({d0}{k})"),
    "prod": ("torch.prod(x{d}{k})", "x.prod({d0}{k})"),
    "nansum": ("torch.nansum(x{d}{k})", "x.nansum({d0}{k})"),
    "nanmean": ("torch.nanmean(x{d}{k})", "x.nanmean({d0}{k})"),
    "any": ("torch.any(x{d}{k})", "x.any({d0}{k})"),
    "all": ("torch.all(x{d}{k})", "x.all({d0}{k})"),
    "std": ("torch.std(x{d}{k})", "x.std({d0}{k})"),
    "var": ("torch.var(x{d}{k})", "x.var({d0}{k})"),
    "std_mean": ("torch.std_mean(x{d}{k})",),
    "var_mean": ("torch.var_mean(x{d}{k})",),
    "count_nonzero": ("torch.count_nonzero(x{d})", "x.count_nonzero({d0})"),
    "norm": ("torch.norm(x{dn}{k})", "x.norm({dn0}{k})"),
}


def _render(template: str, dim, keepdim: bool) -> str:
    """The call with ``dim`` (None: not written) and ``keepdim=True`` (only with a dim)."""
    written = dim is not None
    return template.format(d=f", {dim}" if written else "", d0=f"{dim}" if written else "",
                           dn=f", dim={dim}" if written else "", dn0=f"dim={dim}" if written else "",
                           k=", keepdim=True" if keepdim else "")


def _cases():
    out = []
    for name, templates in CALLS.items():
        for shape in SHAPES:
            for dim in [None, *range(len(shape)), -1]:
                for keepdim in (False, True) if dim is not None and name != "count_nonzero" else (False,):
                    for template in templates:
                        call = _render(template, dim, keepdim)
                        out.append(pytest.param(shape, call, id=f"{call}-{shape}"))
    return out


def _case(call: str, shape: tuple, dtype: str) -> Case:
    spec = f"randn({', '.join(map(str, shape))})"
    code = f"import torch\n\n\ndef run(x):\n    return {call}\n"
    return Case(entry=call, label=call, torch_code=code, specs=(("x", spec),), call=(), variant=dtype)


@pytest.mark.parametrize("shape,call", _cases())
def test_empty_extent_matches_torch(shape, call):
    results = {}
    for dtype in DTYPES:
        outcome = run_case(_case(call, shape, dtype), 0, {})
        results[dtype] = outcome.kind
        assert outcome.kind in ("pass", "rejected"), (
            f"{call} on {shape} {dtype}: {outcome.kind}: {outcome.detail}\n{outcome.ms_code}")
    assert results["float32"] == "pass", results  # torch computes every one of these on float32


@pytest.mark.parametrize("call", ["torch.amax(x, 1)", "x.amin(dim=1, keepdim=True)", "torch.max(x, 1)",
                                  "x.min(1)", "torch.amax(x)", "x.max()"])
def test_max_like_reductions_raise_on_an_empty_extent(call):
    """torch raises (IndexError/RuntimeError) where MindSpore's kernel returns uninitialised memory: the converted
    call raises too."""
    import mindspore as ms
    import torch

    from mindport.proofs.function import _load
    from mindport.proofs.differential.running import convert

    code = f"import torch\n\n\ndef run(x):\n    return {call}\n"
    with pytest.raises((IndexError, RuntimeError)):
        _load(code, "torch_snippet").run(torch.zeros(2, 0))
    ms_code, diagnostics = convert(code)
    assert not diagnostics, diagnostics
    with pytest.raises((IndexError, ValueError, RuntimeError)):
        out = _load(ms_code, "ms_snippet").run(ms.Tensor(np.zeros((2, 0), np.float32)))
        for leaf in out if isinstance(out, tuple) else (out,):
            leaf.asnumpy()  # MindSpore reports some kernel errors when the value is read


def test_non_empty_reductions_are_unchanged():
    """The guard only reads the shape: on non-empty inputs the converted calls give torch's values."""
    for call in ("torch.sum(x, 1, keepdim=True)", "x.mean()", "torch.prod(x, 0)", "torch.amax(x, -1)",
                 "torch.std(x, 0)", "x.var(1, keepdim=True)", "torch.count_nonzero(x)", "x.any(1)"):
        outcome = run_case(_case(call, (3, 4), "float32"), 0, {})
        assert outcome.kind == "pass", (call, outcome.kind, outcome.detail, outcome.ms_code)
