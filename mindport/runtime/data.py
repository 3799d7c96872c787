"""torch.utils.data's samplers as plain Python iterables of indices.

``mindspore.dataset``'s samplers are not iterable (``list(ds.RandomSampler())`` raises TypeError: they only work
inside a dataset) and cap ``num_samples`` at the dataset's length (measured on 2.10: 10 requested from 6 rows gave 6;
torch draws all 10). ``GeneratorDataset(sampler=...)`` also takes any iterable of indices (measured on 2.10), so these
classes keep torch's constructor arguments, ``__iter__``/``__len__`` and counts, and are what a converted
``DataLoader(sampler=...)`` hands to GeneratorDataset. The random ones draw with NumPy's global generator, which
``mindspore.set_seed`` seeds: the indices are not torch's numbers (torch's generator differs), only their law, count
and range are. ``generator`` is accepted and ignored.
"""
from __future__ import annotations

import numpy as np

from mindport.runtime._graph import in_fallback as _in_fallback
from mindport.runtime._graph import in_graph as _in_graph


def _weights(values) -> np.ndarray:
    if hasattr(values, "asnumpy"):
        values = values.asnumpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


class Sampler:
    """torch.utils.data.Sampler: the base class (subclasses define ``__iter__`` and usually ``__len__``)."""

    def __init__(self, data_source=None):
        if _in_graph() or _in_fallback():  # a class called in a graph runs through its JIT Fallback
            raise RuntimeError(f"mindport: torch.utils.data.{type(self).__name__} is a Python iterable of indices for "
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
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        if self.replacement:
            return iter(int(i) for i in np.random.randint(0, n, size=count))
        order = [int(i) for _ in range(count // n) for i in np.random.permutation(n)]
        order += [int(i) for i in np.random.permutation(n)[:count % n]]
        return iter(order)

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """torch.utils.data.SubsetRandomSampler(indices, generator=None): the indices in a random order."""

    def __init__(self, indices, generator=None):
        super().__init__()
        self.indices = indices

    def __iter__(self):
        return iter([self.indices[int(i)] for i in np.random.permutation(len(self.indices))])

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
        self.num_samples, self.replacement = num_samples, replacement

    def __iter__(self):
        p = self.weights / self.weights.sum()
        if self.replacement:
            drawn = np.random.choice(p.shape[0], size=self.num_samples, replace=True, p=p)
        else:  # torch.multinomial's way: the largest p / Exp(1) keys; zero weights come last, then they too are drawn
            if self.num_samples > p.shape[0]:
                raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
            keys = p / np.random.exponential(size=p.shape[0])
            drawn = np.argsort(-keys, kind="stable")[:self.num_samples]
        return iter([int(i) for i in drawn])

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
