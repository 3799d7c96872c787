"""mindport.runtime.data's samplers: iterable like torch's (mindspore.dataset's are not), torch's counts and laws,
and usable as GeneratorDataset(sampler=...)."""
from __future__ import annotations

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
import pytest
import torch
from torch.utils import data as torch_data

from mindport.runtime import data as mp_data


@pytest.mark.parametrize("n", [1, 6])
@pytest.mark.parametrize("num_samples", [None, 3, 6, 13])
def test_random_sampler_counts_as_torch(n, num_samples):
    source = list(range(n))
    for replacement in (False, True):
        t = list(torch_data.RandomSampler(source, replacement, num_samples))
        m = list(mp_data.RandomSampler(source, replacement, num_samples))
        assert len(m) == len(t) == len(mp_data.RandomSampler(source, replacement, num_samples))
        assert all(isinstance(i, int) and 0 <= i < n for i in m)
        if not replacement:  # whole permutations first, as torch
            full = (len(t) // n) * n
            assert sorted(m[:full]) == sorted(t[:full])
            assert len(set(m[full:])) == len(m[full:])


def test_random_sampler_rejects_what_torch_rejects():
    for kwargs in ({"num_samples": 0}, {"num_samples": -2}):
        with pytest.raises(ValueError):
            torch_data.RandomSampler(range(3), **kwargs)
        with pytest.raises(ValueError):
            mp_data.RandomSampler(range(3), **kwargs)
    with pytest.raises(TypeError):
        mp_data.RandomSampler(range(3), replacement=1)


def test_sequential_and_subset_samplers():
    assert list(mp_data.SequentialSampler(range(5))) == list(torch_data.SequentialSampler(range(5)))
    subset = [7, 2, 9, 4]
    drawn = list(mp_data.SubsetRandomSampler(subset))
    assert sorted(drawn) == sorted(torch_data.SubsetRandomSampler(subset)) and len(drawn) == 4


@pytest.mark.parametrize("weights", [[0.0, 1.0, 0.0, 2.0, 0.5], torch.tensor([1.0, 3.0, 0.0]), np.array([2.0, 2.0])])
def test_weighted_sampler_law_and_counts(weights):
    w = np.asarray(weights, np.float64)
    ms.set_seed(3)
    draws = list(mp_data.WeightedRandomSampler(weights, 4000))
    assert len(draws) == 4000 and all(w[i] > 0 for i in draws)
    freq = np.bincount(draws, minlength=w.size) / 4000
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.03)
    nonzero = int((w > 0).sum())
    once = list(mp_data.WeightedRandomSampler(weights, nonzero, replacement=False))
    assert sorted(once) == sorted(np.flatnonzero(w).tolist())
    every = list(mp_data.WeightedRandomSampler(weights, w.size, replacement=False))  # zero weights last, as torch
    assert sorted(every) == sorted(torch_data.WeightedRandomSampler(weights, w.size, replacement=False))
    assert sorted(every[:nonzero]) == sorted(once)
    with pytest.raises(RuntimeError):
        list(torch_data.WeightedRandomSampler(weights, w.size + 1, replacement=False))
    with pytest.raises(RuntimeError):
        list(mp_data.WeightedRandomSampler(weights, w.size + 1, replacement=False))


@pytest.mark.parametrize(("size", "drop_last"), [(3, False), (3, True), (5, False), (20, True)])
def test_batch_sampler_as_torch(size, drop_last):
    t = torch_data.BatchSampler(torch_data.SequentialSampler(range(10)), size, drop_last)
    m = mp_data.BatchSampler(mp_data.SequentialSampler(range(10)), size, drop_last)
    assert list(m) == list(t) and len(m) == len(t)


def test_samplers_drive_a_generator_dataset():
    rows = [(np.array(i, np.int64),) for i in range(8)]
    for sampler, expected in ((mp_data.SequentialSampler(rows), list(range(8))),
                              (mp_data.RandomSampler(rows, num_samples=11), None)):
        dataset = ds.GeneratorDataset(rows, column_names=["i"], sampler=sampler)
        got = [int(r[0]) for r in dataset.create_tuple_iterator(output_numpy=True)]
        if expected is not None:
            assert got == expected
        else:  # torch draws all 11 (a permutation and 3 more); mindspore.dataset's sampler stops at 8
            assert len(got) == 11 and sorted(got[:8]) == list(range(8))
