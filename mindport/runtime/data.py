"""torch.utils.data's samplers as plain Python iterables of indices, and its collation helpers and dataset
combinators (default_collate/default_convert into MindSpore tensors, ConcatDataset, Subset, random_split).

``mindspore.dataset``'s samplers are not iterable (``list(ds.RandomSampler())`` raises TypeError: they only work
inside a dataset) and cap ``num_samples`` at the dataset's length (measured on 2.10: 10 requested from 6 rows gave 6;
torch draws all 10). ``GeneratorDataset(sampler=...)`` also takes any iterable of indices (measured on 2.10), so these
classes keep torch's constructor arguments, ``__iter__``/``__len__`` and counts, and are what a converted
``DataLoader(sampler=...)`` hands to GeneratorDataset. The random ones draw from mindport.runtime.seed.stream() (a generator
``torch.manual_seed`` seeds; NumPy's global one before it): the indices are not torch's numbers (torch's generator differs), only their law, count
and range are. With ``generator=`` (a torch.Generator, converted to mindspore.Generator) they draw from that
generator's own stream instead (:func:`_stream`): seeded alike, two generators give the same indices.
"""
from __future__ import annotations

import bisect
import collections.abc
import re
import typing

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mindport.runtime import seed as _seed
from mindport.runtime._graph import host_only as _host_only


def _stream(generator, count):
    """The NumPy generator a sampler draws ``count`` numbers from: the ``mindspore.Generator``'s own stream (torch's
    ``generator=``, converted; advanced by ``count``, as mindport.runtime.math's draws advance it), else
    mindport.runtime.seed.stream()."""
    if generator is None:
        return _seed.stream()
    from mindport.runtime.math import _generator_stream

    return _generator_stream(generator, int(count))


_CHUNK = 1 << 16  # indices drawn at a time by the samplers with replacement


def _weights(values) -> np.ndarray:
    if hasattr(values, "asnumpy"):
        values = values.asnumpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


_T_co = typing.TypeVar("_T_co", covariant=True)


class Sampler(typing.Generic[_T_co]):
    """torch.utils.data.Sampler: the base class (subclasses define ``__iter__`` and usually ``__len__``); generic as
    torch's, so a base written ``Sampler[List[int]]`` (timm's ScheduledBatchSampler) is a class."""

    def __init__(self, data_source=None):
        _host_only(f"torch.utils.data.{type(self).__name__} is a Python iterable of indices for "
                   "the data pipeline: build it outside construct/@jit")

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """torch.utils.data.SequentialSampler(data_source): 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        super().__init__()
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """torch.utils.data.RandomSampler(data_source, replacement=False, num_samples=None, generator=None): without
    replacement, whole permutations (and part of one) up to num_samples; with it, num_samples uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        super().__init__()
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        if self.replacement:  # drawn a chunk at a time: num_samples may be 1e10 (torch draws 32 at a time)
            for start in range(0, count, _CHUNK):
                stream = _stream(self.generator, _CHUNK)  # a RandomState, or a Generator (integers)
                draw = stream.integers if isinstance(stream, np.random.Generator) else stream.randint
                yield from (int(i) for i in draw(0, n, size=min(_CHUNK, count - start)))
            return
        for _ in range(count // n):
            yield from (int(i) for i in _stream(self.generator, n).permutation(n))
        yield from (int(i) for i in _stream(self.generator, n).permutation(n)[:count % n])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """torch.utils.data.SubsetRandomSampler(indices, generator=None): the indices in a random order."""

    def __init__(self, indices, generator=None):
        super().__init__()
        self.indices, self.generator = indices, generator

    def __iter__(self):
        return iter([self.indices[int(i)] for i in _stream(self.generator, len(self.indices)).permutation(len(self.indices))])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """torch.utils.data.WeightedRandomSampler(weights, num_samples, replacement=True, generator=None): num_samples
    indices drawn with probability weight / sum(weights) (torch.multinomial's law)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        super().__init__()
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.weights = _weights(weights)
        if self.weights.ndim != 1:
            raise ValueError("weights should be a 1d sequence")
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        p = self.weights / self.weights.sum()
        if self.replacement:  # a chunk at a time (num_samples may be far larger than memory)
            for start in range(0, self.num_samples, _CHUNK):
                size = min(_CHUNK, self.num_samples - start)
                yield from (int(i) for i in _stream(self.generator, _CHUNK).choice(p.shape[0], size=size, replace=True, p=p))
            return
        else:  # torch.multinomial's way: the largest p / Exp(1) keys; zero weights come last, then they too are drawn
            if self.num_samples > p.shape[0]:
                raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
            keys = p / _stream(self.generator, 2 * p.shape[0]).exponential(size=p.shape[0])
            drawn = np.argsort(-keys, kind="stable")[:self.num_samples]
        yield from (int(i) for i in drawn)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """torch.utils.data.BatchSampler(sampler, batch_size, drop_last): lists of batch_size indices from sampler."""

    def __init__(self, sampler, batch_size, drop_last):
        super().__init__()
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ------------------------------------------------------------------------------------ collation and datasets

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                                  "found {}")
np_str_obj_array_pattern = re.compile(r"[SaUO]")  # torch's: NumPy string and object dtypes


def _pipeline_only(name):
    _host_only(f"torch.utils.data.{name} is part of the Python data pipeline: use it outside "
               "construct/@jit")


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def default_collate(batch):
    """torch.utils.data.default_collate: a batch (list) of samples into MindSpore tensors stacked on a new first
    dimension, recursively through dicts, named tuples and sequences (tuples give lists, as torch); floats become
    float64 tensors and ints int64, strings stay a list."""
    _pipeline_only("default_collate")
    return _collate(batch)


def _collate(batch):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return ops.stack(list(batch), 0)
    if type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_)):
        if isinstance(elem, np.ndarray) and np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(default_collate_err_msg_format.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.shape != ():
            return _collate([Tensor(np.asarray(b)) for b in batch])
        return Tensor(np.asarray(batch))
    if isinstance(elem, float):
        return Tensor(batch, ms.float64)
    if isinstance(elem, bool):
        return Tensor(batch, ms.bool_)
    if isinstance(elem, int):
        return Tensor(batch, ms.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: _collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return type(elem)(*(_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        collated = [_collate(samples) for samples in transposed]
        if isinstance(elem, tuple):
            return collated
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def default_convert(data):
    """torch.utils.data.default_convert: numpy arrays and scalars in data become MindSpore tensors (no batching)."""
    _pipeline_only("default_convert")
    return _convert(data)


def _convert(data):
    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return Tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {key: _convert(data[key]) for key in data}
    if _is_namedtuple(data):
        return type(data)(*(_convert(d) for d in data))
    if isinstance(data, tuple):
        return [_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([_convert(d) for d in data])
        except TypeError:
            return [_convert(d) for d in data]
    return data


def get_worker_info():
    """torch.utils.data.get_worker_info: None in the main process (GeneratorDataset's Python workers are not torch's
    worker processes: nothing here describes them)."""
    return None


class TensorDataset:
    """torch.utils.data.TensorDataset(*tensors): item ``i`` is the tuple of every tensor's row ``i``, as MindSpore
    tensors (torch gives tensors; a list of numpy rows would hand the user's loop ndarrays). ``GeneratorDataset``
    reads it as a random-access source: it passes numpy integers as indices, which a MindSpore Tensor does not take
    (they are made ints here)."""

    def __init__(self, *tensors):
        _pipeline_only("TensorDataset")
        tensors = tuple(t if isinstance(t, Tensor) else Tensor(t) for t in tensors)
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        if isinstance(index, np.integer):
            index = int(index)
        elif isinstance(index, np.ndarray):
            index = index.tolist()
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class ConcatDataset:
    """torch.utils.data.ConcatDataset(datasets): the datasets one after another (negative indices count from the
    end); any object with __getitem__/__len__ is a dataset here."""

    def __init__(self, datasets):
        _pipeline_only("ConcatDataset")
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class Subset:
    """torch.utils.data.Subset(dataset, indices): dataset seen through indices."""

    def __init__(self, dataset, indices):
        _pipeline_only("Subset")
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """torch.utils.data.random_split: Subsets of a random permutation (NumPy's generator, or ``generator``'s own
    stream, not torch's numbers);
    fractions summing to 1 are turned into lengths as torch does (floor, then the remainder one by one)."""
    _pipeline_only("random_split")
    lengths = list(lengths)
    if abs(sum(lengths) - 1) < 1e-9 and sum(lengths) <= 1:
        counts = [int(np.floor(len(dataset) * frac)) for frac in lengths]
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = [int(i) for i in _stream(generator, sum(lengths)).permutation(sum(lengths))]
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[offset:offset + length]))
        offset += length
    return out


class DataLoader:
    """torch.utils.data.DataLoader as a Python iterable of MindSpore batches, with torch's semantics: a map-style
    dataset (``__getitem__`` and ``__len__``) is read through ``sampler`` (``RandomSampler`` when ``shuffle``, else
    ``SequentialSampler``) grouped by ``batch_sampler`` (``BatchSampler(sampler, batch_size, drop_last)``), any other
    iterable dataset is read in order and grouped by ``batch_size``; each batch goes through ``collate_fn``
    (``default_collate``: items of any structure, tuples of any length, dicts, single values, into stacked MindSpore
    tensors), or ``default_convert`` item by item when ``batch_size`` is None. Samplers are drawn lazily. Work is done
    in this process: ``num_workers``, ``pin_memory``, ``timeout``, ``prefetch_factor`` and ``persistent_workers`` change
    nothing but speed in torch, and are accepted; ``worker_init_fn`` is called once with worker id 0 when
    ``num_workers`` > 0 (torch calls it in each worker); ``generator`` is the shuffling RandomSampler's."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        _pipeline_only("DataLoader")
        self.dataset, self.num_workers, self.pin_memory, self.timeout = dataset, num_workers, pin_memory, timeout
        self.worker_init_fn, self.generator, self.prefetch_factor = worker_init_fn, generator, prefetch_factor
        self._map_style = hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__") \
            and not _is_iterable_dataset(dataset)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if self._map_style:
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif shuffle or sampler is not None or batch_sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, sampler and "
                             "batch_sampler options")
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_size is not None or batch_sampler is not None else default_convert)

    def __iter__(self):
        if self.worker_init_fn is not None and self.num_workers > 0:
            self.worker_init_fn(0)
        if self._map_style:
            if self.batch_sampler is not None:
                for indices in self.batch_sampler:
                    yield self.collate_fn([self.dataset[i] for i in indices])
            else:
                for index in self.sampler:
                    yield self.collate_fn(self.dataset[index])
            return
        if self.batch_size is None:
            for item in self.dataset:
                yield self.collate_fn(item)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._map_style:
            return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
        length = len(self.dataset)
        if self.batch_size is None:
            return length
        return length // self.batch_size if self.drop_last else -(-length // self.batch_size)


def _is_iterable_dataset(dataset) -> bool:
    """A converted ``IterableDataset`` subclass lost its base: it defines ``__iter__`` itself."""
    return any("__iter__" in vars(cls) for cls in type(dataset).__mro__ if cls is not object) \
        and not any("__getitem__" in vars(cls) for cls in type(dataset).__mro__ if cls is not object)
