"""mindport.runtime.distributed.DistributedSampler against torch's, in one process (ranks given explicitly; the
2-process proof of the defaults taken from the process group is the entry's, tests/distributed/
test_collective_entries.py): every rank's indices, over dataset lengths, world sizes, shuffle, seeds, drop_last and
epochs, and through a converted DataLoader."""
from __future__ import annotations

import itertools

import pytest
import torch
from torch.utils.data.distributed import DistributedSampler as TorchSampler

from mindport.runtime.distributed import DistributedSampler, torch_randperm


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 10, 64, 1000, 100_003])
def test_randperm_is_torchs(n):
    for seed in (0, 1, 42, 2 ** 31 - 1, 2 ** 32 + 5, 12_345_678_901):
        generator = torch.Generator()
        generator.manual_seed(seed)
        assert torch_randperm(n, seed) == torch.randperm(n, generator=generator).tolist(), (n, seed)


@pytest.mark.parametrize(("length", "world"), [(1, 2), (7, 2), (8, 2), (10, 3), (2, 5), (13, 4)])
def test_every_rank_sees_torchs_indices(length, world):
    data = list(range(length))
    for rank, shuffle, seed, drop_last in itertools.product(range(world), (True, False), (0, 9), (False, True)):
        ours = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=shuffle, seed=seed,
                                  drop_last=drop_last)
        theirs = TorchSampler(data, num_replicas=world, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
        for epoch in (0, 3):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            case = (rank, shuffle, seed, drop_last, epoch)
            assert list(ours) == list(theirs), case
            assert len(ours) == len(theirs) and ours.total_size == theirs.total_size, case


def test_bad_rank_is_torchs_error():
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(list(range(4)), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank 2"):
        TorchSampler(list(range(4)), num_replicas=2, rank=2)
