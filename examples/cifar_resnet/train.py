"""Train SmallResNet on synthetic data (generated here, no downloads) and save a state_dict checkpoint."""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from model import SmallResNet


def make_data(n=256, num_classes=10, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, num_classes, size=n).astype(np.int64)
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))


def train(steps, save_path, lr=0.05, batch_size=32):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallResNet(num_classes=10).to(device)
    loader = DataLoader(make_data(), batch_size=batch_size, shuffle=True)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    model.train()
    step = 0
    while step < steps:
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            logits = model(images)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            step += 1
            if step % 5 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
            if step >= steps:
                break

    Path(save_path).parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), save_path)
    print(f"saved {save_path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save", default="checkpoints/model.pt")
    args = parser.parse_args()
    train(args.steps, args.save)
