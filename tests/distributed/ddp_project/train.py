"""A torch DDP training script of our own (torchrun, gloo): each rank trains on its own shard of the same data,
drawn by a DistributedSampler (shuffled, reshuffled each epoch by set_epoch); DDP keeps the replicas equal.
Writes losses-rank{R}.json on every rank and, from rank 0 only, net.pt."""
import json
import os

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((80, 8)).astype(np.float32)
    targets = inputs.sum(axis=1, keepdims=True) * 0.5
    start = np.random.default_rng(1 + rank)  # ranks start differently: DDP starts them all from rank 0's weights
    model = Net()
    with torch.no_grad():
        model.fc1.weight.copy_(torch.from_numpy(start.standard_normal((16, 8)).astype(np.float32) * 0.3))
        model.fc1.bias.copy_(torch.from_numpy(start.standard_normal(16).astype(np.float32) * 0.1))
        model.fc2.weight.copy_(torch.from_numpy(start.standard_normal((1, 16)).astype(np.float32) * 0.3))
        model.fc2.bias.copy_(torch.from_numpy(start.standard_normal(1).astype(np.float32) * 0.1))
    model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = nn.MSELoss()
    data = TensorDataset(torch.from_numpy(inputs), torch.from_numpy(targets))
    sampler = DistributedSampler(data, seed=3)  # 40 samples per rank, from the process group's world size and rank
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    losses = []
    for epoch in range(2):  # 2 epochs of 10 steps
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
    with open(f"losses-rank{rank}.json", "w") as handle:
        json.dump({"rank": rank, "world": world, "local_rank": local_rank, "losses": losses}, handle)
    dist.barrier()
    if rank == 0:
        to_save = model.module if isinstance(model, DDP) else model  # checkpoint code's unwrapping idiom
        torch.save(to_save.state_dict(), "net.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
