"""A torch DDP training script of our own (torchrun, gloo): each rank trains on its own shard of the same data;
DDP keeps the replicas equal. Writes losses-rank{R}.json on every rank and, from rank 0 only, net.pt."""
import json
import os

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


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
    inputs = rng.standard_normal((20, 2, 4, 8)).astype(np.float32)  # step, rank, batch, feature
    targets = inputs.sum(axis=3, keepdims=True) * 0.5
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
    batches = [(torch.from_numpy(inputs[step, rank]), torch.from_numpy(targets[step, rank])) for step in range(20)]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    with open(f"losses-rank{rank}.json", "w") as handle:
        json.dump({"rank": rank, "world": world, "local_rank": local_rank, "losses": losses}, handle)
    dist.barrier()
    if rank == 0:
        torch.save(model.module.state_dict(), "net.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
