"""The runtime layer in a static graph (``ms.jit``, what ``GRAPH_MODE`` does to ``construct``).

Every runtime target is proven against torch in a graph by tests/mappings/test_proofs.py; this file checks the two
things that proof does not: targets that can't be compiled (``graph = "..."`` in their entry) fail with mindport's
own message instead of a MindSpore internal error or a silent difference, and results torch gives as named tuples
are plain tuples in a graph whose items later MindSpore functions accept."""
from __future__ import annotations

import importlib

import mindspore as ms
import numpy as np
import pytest
from mindspore import ops

from mindport.mappings import load_registry
from mindport.proofs.function import applicable_styles, prepare
from mindport.runtime import math as mp_math

# entries that compile in a graph on a graph form of their value (``graph = "In a graph ..."`` says which form): the
# packed batch of torch.nn.utils.rnn, proven against torch in GRAPH_MODE by tests/converter/test_packed_in_graph.py
GRAPH_FORM = {"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pad_packed_sequence"}
FLAGGED = [pytest.param(e, id=e.torch) for e in load_registry()
           if e.graph and e.example is not None and e.torch not in GRAPH_FORM]
_EXTRA = {"val": 0.5, "sparsity": 0.5, "lengths": [4, 4, 4, 4], "num_samples": 2, "batch_size": 2, "drop_last": False,
          "rate": 1.0, "concentration0": 1.0, "q": None, "type_q": object, "indices": [0],
          "a": -1.0, "b": 1.0, "mean": 0.0, "std": 1.0, "scale": 1.0,
          "df2": 3.0, "f": "w.ckpt", "from_value": None}  # required arguments after the tensor, for entries proven by a program


@pytest.fixture(autouse=True)
def _own_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a failed compile writes rank_0/om/analyze_fail.ir into the working folder


def test_flagged_entries_are_few_and_explained():
    # about 6 % of the rows (aliases counted); most are Python-side objects: torch.nn.utils.rnn (value-dependent
    # shapes), the data pipeline (samplers, collation, dataset combinators), distributions drawn with NumPy (and
    # LogisticNormal's stick-breaking), the initialisers (and torch's private _no_grad_* forms of them), torch's
    # private layer bases as type tests, torch._six.raise_from (exception chaining); each says why
    assert 0 < len(FLAGGED) < 130
    for param in FLAGGED:
        entry = param.values[0]
        assert "construct" in entry.graph or "graph" in entry.graph, entry.torch
        assert entry.target("nn").startswith("mindport.runtime."), entry.torch


def test_graph_form_entries_say_so():
    entries = {e.torch: e for e in load_registry() if e.torch in GRAPH_FORM}
    assert set(entries) == GRAPH_FORM
    for entry in entries.values():
        assert entry.graph.startswith("In a graph"), entry.torch


@pytest.mark.parametrize("entry", FLAGGED)
def test_flagged_target_raises_mindports_error_in_a_graph(entry):
    if entry.example.program:
        module_name, name = entry.target("nn").rsplit(".", 1)
        fn = getattr(importlib.import_module(module_name), name)
        extra = [_EXTRA[p.name] for p in (entry.signature or [])[1:] if p.required]  # attribute entries: none
        tensor = ms.Parameter(ms.Tensor(np.ones((4, 4), np.float32)), name="w")

        def call(w):
            return fn(w, *extra)

        args = [tensor]
        if isinstance(fn, type) and issubclass(fn, ms.nn.Cell):
            # a Cell built over a model (swa_utils.AveragedModel(model)): a graph refuses to build a Cell from a
            # variable itself, loudly, before any of its code runs; its entry's graph note is about its methods
            with pytest.raises(TypeError, match="all arguments are required to be constants"):
                ms.jit(call)(*args)
            return
    else:
        case = prepare(entry, applicable_styles(entry)[0], importable=True)
        call, args = case.call, case.args
    with pytest.raises(RuntimeError, match="mindport: "):
        ms.jit(call)(*args)


def _sorted_swapped(x):
    values, indices = mp_math.sort(x, 1)
    first = mp_math.topk(x, 2)[0]
    return ops.swapaxes(values, -2, -1), indices, first


def test_named_tuples_are_plain_tuples_in_a_graph():
    x = ms.Tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    eager = mp_math.sort(x, 1)
    assert type(eager).__name__ == "sort" and eager.values.shape == (3, 4)  # torch's field names in PyNative
    swapped, indices, first = ms.jit(_sorted_swapped)(x)
    expected = np.sort(x.asnumpy(), 1)
    np.testing.assert_array_equal(swapped.asnumpy(), expected.T)
    assert indices.dtype == ms.int64
    np.testing.assert_array_equal(first.asnumpy(), -np.sort(-x.asnumpy(), 1)[:, :2])
