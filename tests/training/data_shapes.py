"""Data loading as people write it (written for tests/training/test_data_loading.py): map-style and iterable
datasets returning tuples of any length, dicts and single values; collate_fn; samplers; TensorDataset, random_split
and Subset. Each function returns the batches a loop would see."""
import numpy as np
import torch
from torch.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, RandomSampler, SequentialSampler,
                              Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler, random_split)


class Triples(Dataset):
    """Three arrays per item, as a two-input model with an index would want them."""

    def __init__(self, n=10):
        self.x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.x[i] * 2, i


class Records(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, idx):
        return {"features": torch.full((2,), float(idx)), "target": idx % 3, "weight": 0.5 * idx}


class Singles(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, idx):
        return torch.tensor([idx, idx + 1], dtype=torch.float32)


class Counter(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor(float(i)), i * 2


def pad_collate(batch):
    longest = max(len(seq) for seq, _ in batch)
    padded = torch.zeros(len(batch), longest)
    for row, (seq, _) in enumerate(batch):
        padded[row, :len(seq)] = seq
    return padded, torch.tensor([label for _, label in batch])


class Sequences(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.arange(1, i + 2, dtype=torch.float32), i % 2


def triples():
    loader = DataLoader(Triples(10), batch_size=4, drop_last=True)
    return [batch for batch in loader] + [len(loader), len(loader.dataset)]


def records():
    return list(DataLoader(Records(), batch_size=3))


def singles():
    return list(DataLoader(Singles(), batch_size=2)) + list(DataLoader(Singles(), batch_size=None))


def iterable():
    return list(DataLoader(Counter(5), batch_size=2))


def collate():
    return list(DataLoader(Sequences(), batch_size=4, collate_fn=pad_collate, num_workers=2))


def batch_sampler():
    sampler = BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)
    return list(DataLoader(Triples(7), batch_sampler=sampler))


def tensors_split_subset():
    data = TensorDataset(torch.arange(12.0).view(6, 2), torch.arange(6))
    first, second = random_split(data, [4, 2])
    picked = Subset(data, [5, 0, 3])
    return [len(first), len(second), *list(DataLoader(picked, batch_size=2))]


def huge_sampler():
    data = Triples(10)
    sampler = RandomSampler(data, replacement=True, num_samples=int(1e10))
    loader = DataLoader(data, batch_size=3, sampler=sampler)
    batches = []
    for i, batch in enumerate(loader):
        batches.append(batch)
        if i == 2:
            break
    return batches, len(loader)


def weighted(num_samples=400):
    weights = [0.0, 1.0, 3.0, 0.0]
    sampler = WeightedRandomSampler(weights, num_samples=num_samples, replacement=True)
    return [int(i) for batch in DataLoader(list(range(4)), batch_size=8, sampler=sampler) for i in batch]


def subset_random():
    sampler = SubsetRandomSampler([1, 4, 6])
    return [int(i) for batch in DataLoader(list(range(8)), batch_size=2, sampler=sampler) for i in batch]


def shuffled():
    return sorted(int(i) for batch in DataLoader(list(range(9)), batch_size=4, shuffle=True) for i in batch)
