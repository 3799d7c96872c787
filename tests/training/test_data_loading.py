"""Data loading as people write it (data_shapes.py), converted by mindport: the same batches as torch (structure,
dtypes, values) where torch's order is deterministic, and the same law, count and range where it is random; the
converted file imports no torch; a sampler of 1e10 indices is drawn lazily."""
from __future__ import annotations

import numpy as np
import pytest

from _harness import convert, load_module


@pytest.fixture(scope="module")
def pair():
    source, converted = convert("data_shapes.py")
    from test_backward_region import _imports_torch

    assert not _imports_torch(converted), converted
    return load_module(source, "torch_data_shapes"), load_module(converted, "ms_data_shapes")


def _plain(value):
    """A batch as nested lists/dicts of (dtype name, numpy array) or Python values, comparable across frameworks."""
    if hasattr(value, "asnumpy"):
        array = value.asnumpy()
        return (str(array.dtype), array.tolist())
    if hasattr(value, "numpy") and hasattr(value, "detach"):
        array = value.detach().numpy()
        return (str(array.dtype), array.tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("name", ["triples", "records", "singles", "iterable", "collate", "batch_sampler"])
def test_same_batches_as_torch(pair, name):
    t_mod, m_mod = pair
    assert _plain(getattr(m_mod, name)()) == _plain(getattr(t_mod, name)())


def test_tensor_dataset_random_split_subset(pair):
    t_mod, m_mod = pair
    t, m = t_mod.tensors_split_subset(), m_mod.tensors_split_subset()
    assert t[:2] == m[:2] == [4, 2]
    assert _plain(m[2:]) == _plain(t[2:])  # Subset's order is the given one


def test_replacement_sampler_of_1e10_is_lazy(pair):
    import resource
    import time

    _, m_mod = pair
    start, before = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    batches, length = m_mod.huge_sampler()
    assert time.monotonic() - start < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: far from 74.5 GiB
    assert length == -(-int(1e10) // 3)
    assert [b[0].shape for b in batches] == [(3, 3)] * 3
    assert all(0 <= int(i) < 10 for b in batches for i in b[2].asnumpy())


def test_weighted_and_subset_samplers_draw_torch_law(pair):
    t_mod, m_mod = pair
    t, m = t_mod.weighted(), m_mod.weighted()
    assert len(t) == len(m) == 400 and set(m) <= {1, 2} and set(t) <= {1, 2}
    assert abs(m.count(2) / 400 - 0.75) < 0.08  # weights 1:3
    assert sorted(m_mod.subset_random()) == sorted(t_mod.subset_random()) == [1, 4, 6]
    assert m_mod.shuffled() == t_mod.shuffled() == list(range(9))
