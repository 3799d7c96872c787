"""mindport.runtime.framework in PyNative and in a graph, for what the mapping proofs can't show: a proof program
compiles as one graph, so it can't catch an exception (no ``try`` in a graph), and a graph holds Python floats as
float32, so float64's limits can't be graph values."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport.runtime import framework as mp_framework


@pytest.fixture(autouse=True)
def _own_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a failed compile writes rank_0/om/analyze_fail.ir into the working folder


def _columns(x):
    mp_framework._assert(x.shape[1] == 5, "five columns")
    return x * 2


def _negative(x):
    mp_framework._assert((x < 0).all(), "all negative")
    return x * 2


@pytest.mark.parametrize("check", [_columns, _negative])
def test_assert_raises_like_torch_in_pynative_and_in_a_graph(check):
    x = np.abs(np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32))
    message = "five columns" if check is _columns else "all negative"
    with pytest.raises(AssertionError, match=message):
        torch._assert(x.shape[1] == 5 if check is _columns else bool((torch.tensor(x) < 0).all()), message)
    with pytest.raises(AssertionError, match=message):
        check(ms.Tensor(x))
    with pytest.raises(AssertionError, match=message):  # shapes: at compile time; values: when the graph runs
        ms.jit(check)(ms.Tensor(x))


def test_finfo_float64_matches_torch_in_pynative_and_raises_in_a_graph():
    t, m = torch.finfo(torch.float64), mp_framework.finfo(ms.float64)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(m, name) == getattr(t, name), name

    def limit(x):
        return x.clamp(min=mp_framework.finfo(ms.float64).min)

    with pytest.raises(RuntimeError, match="mindport: torch.finfo"):
        ms.jit(limit)(ms.Tensor(np.ones(3)))


def test_finfo_float32_in_a_graph():
    def masked(x):
        return ms.ops.where(x > 0, x, mp_framework.finfo(x.dtype).min)

    x = np.array([-1.0, 2.0, 0.5], np.float32)
    out = ms.jit(masked)(ms.Tensor(x)).asnumpy()
    expected = torch.where(torch.tensor(x) > 0, torch.tensor(x), torch.finfo(torch.float32).min).numpy()
    np.testing.assert_array_equal(out, expected)


def test_synchronize_runs_in_pynative_and_compiles_in_a_graph():
    def step(x):
        y = x * 2
        mp_framework.synchronize()
        return y

    x = ms.Tensor(np.arange(3, dtype=np.float32))
    assert mp_framework.synchronize() is None
    np.testing.assert_array_equal(ms.jit(step)(x).asnumpy(), [0.0, 2.0, 4.0])


def test_torch_version_is_the_release_the_tables_reproduce():
    """Informer's TokenEmbedding picks its padding by ``torch.__version__ >= '1.5.0'``: the line kept torch (MP104).
    The converted name is the version of the torch the proofs run against, so such a branch takes that release's
    path; the code compares like torch's string and the converted line names no torch."""
    from mindport import convert_source

    assert mp_framework.torch_version == torch.__version__.split("+")[0]
    result = convert_source("import torch\npadding = 1 if torch.__version__ >= '1.5.0' else 2\n")
    assert not result.diagnostics and "torch" not in result.code.replace("torch_version", "")
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    assert namespace["padding"] == (1 if torch.__version__ >= "1.5.0" else 2)
