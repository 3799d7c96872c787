"""mindport.runtime.data's default_collate/default_convert, ConcatDataset, Subset, random_split and get_worker_info
against torch.utils.data: structure, types and dtypes of what comes out, sizes of random splits."""
from __future__ import annotations

import collections

import mindspore as ms
import numpy as np
import pytest
import torch
from torch.utils import data as torch_data

from mindport.runtime import data as mp_data

Pair = collections.namedtuple("Pair", "x y")


def _ms(value):
    if isinstance(value, torch.Tensor):
        return ms.Tensor(value.numpy())
    if _is_named(value):
        return type(value)(*map(_ms, value))
    if isinstance(value, (list, tuple)):
        return type(value)(_ms(v) for v in value)
    if isinstance(value, dict):
        return {k: _ms(v) for k, v in value.items()}
    return value


def _is_named(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _same(expected, got):
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, ms.Tensor)
        assert str(expected.dtype).split(".")[-1] == str(got.dtype).lower(), (expected.dtype, got.dtype)
        np.testing.assert_array_equal(got.asnumpy(), expected.numpy())
        return
    assert type(expected) is type(got), (type(expected), type(got))
    if isinstance(expected, (list, tuple)):
        assert len(expected) == len(got)
        for a, b in zip(expected, got):
            _same(a, b)
    elif isinstance(expected, dict):
        assert expected.keys() == got.keys()
        for key in expected:
            _same(expected[key], got[key])
    else:
        assert expected == got


BATCHES = [
    [torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])],
    [(torch.tensor([1.0, 2.0]), torch.tensor([0])), (torch.tensor([3.0, 4.0]), torch.tensor([1]))],
    [0, 1, 2], [1.5, 2.0], [True, False], ["a", "b"],
    [{"a": 1, "b": torch.tensor([1.0])}, {"a": 2, "b": torch.tensor([2.0])}],
    [Pair(1, 2.0), Pair(3, 4.0)], [[1, 2], [3, 4]],
    [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [np.float32(1.5), np.float32(2.0)],
    (torch.tensor([1, 3, 3]), torch.tensor([3, 1, 1])),
]


@pytest.mark.parametrize("batch", BATCHES, ids=[str(i) for i in range(len(BATCHES))])
def test_default_collate_matches_torch(batch):
    _same(torch_data.default_collate(batch), mp_data.default_collate(_ms(batch)))


def test_default_collate_refuses_what_torch_refuses():
    for batch in ([[1, 2], [3]], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises((RuntimeError, TypeError)):
            torch_data.default_collate(batch)
        with pytest.raises((RuntimeError, TypeError)):
            mp_data.default_collate(batch)


@pytest.mark.parametrize("data", [np.array([1, 2]), {"a": np.float64(2.0)}, (np.array([1.0]), "s"),
                                  [np.array([1])], "str", 3, Pair(np.array([1.0]), 2)])
def test_default_convert_matches_torch(data):
    _same(torch_data.default_convert(data), mp_data.default_convert(data))


def test_concat_subset_random_split_and_worker_info():
    parts = [[1.0, 2.0, 3.0], [4.0, 5.0]]
    t, m = torch_data.ConcatDataset(parts), mp_data.ConcatDataset(parts)
    assert len(t) == len(m) and t.cumulative_sizes == m.cumulative_sizes
    assert [t[i] for i in range(-5, 5)] == [m[i] for i in range(-5, 5)]
    sub = mp_data.Subset([10, 11, 12, 13], [3, 1])
    assert (len(sub), sub[0], sub[1]) == (2, 13, 11)
    for lengths in ([3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.33, 0.33, 0.34]):
        expected = [len(s) for s in torch_data.random_split(range(10), lengths)]
        got = mp_data.random_split(range(10), lengths)
        assert [len(s) for s in got] == expected
        assert sorted(i for s in got for i in s) == list(range(10))
    with pytest.raises(ValueError):
        mp_data.random_split(range(10), [3, 3])
    assert mp_data.get_worker_info() is None is torch_data.get_worker_info()


def test_sampler_is_generic_as_torchs():
    """timm's ``class ScheduledBatchSampler(Sampler[List[Tuple[Any, int]]])``: torch's Sampler is Generic, so the
    subscripted base is a class; the converted base (mindport.runtime.data.Sampler) must be one too (timm53: the
    converted timm package failed to import, "type 'Sampler' is not subscriptable")."""
    from typing import List

    import torch.utils.data as tud

    from mindport.runtime import data as mp_data

    class Batches(mp_data.Sampler[List[int]]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter([[i, i + 1] for i in range(0, self.n, 2)])

        def __len__(self):
            return self.n // 2

    class TorchBatches(tud.Sampler[List[int]]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter([[i, i + 1] for i in range(0, self.n, 2)])

        def __len__(self):
            return self.n // 2

    assert list(Batches(6)) == list(TorchBatches(6)) == [[0, 1], [2, 3], [4, 5]]
    assert len(Batches(6)) == len(TorchBatches(6)) == 3
    assert isinstance(Batches(6), mp_data.Sampler)
