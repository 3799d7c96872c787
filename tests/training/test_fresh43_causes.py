"""Causes found by the training corpus's first contact with three more repositories (benchmarks/training/fresh43.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder

# PitaPitaPiPiPi/pytorch_prac: utils/data_loader.py's ``get_mnist_loaders(batch_size)`` builds both DataLoaders and
# returns them; main.py unpacks ``train_loader, test_loader = get_mnist_loaders(...)`` and reads
# ``len(test_loader.dataset)`` for the accuracy. The rule told a loader whose ``.dataset`` is read (torch's
# DataLoader semantics, mindport.runtime.data) only within one file: the unshuffled test loader became a
# mindspore.dataset pipeline and the port failed after its first epoch (AttributeError: 'BatchDataset' object has no
# attribute 'dataset'). The project's files now say which of its functions' results they read loader fields of
# (project.loader_field_reads), and a loader such a function returns is the runtime DataLoader.
LOADERS = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def get_loaders(batch_size):
    x = torch.tensor(np.random.RandomState(0).randn(40, 3).astype(np.float32))
    y = (x.sum(1) > 0).long()
    train_loader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=batch_size, shuffle=False)
    test_loader = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=batch_size, shuffle=False)
    return train_loader, test_loader
'''

LOADERS_MAIN = '''
import torch
import torch.nn as nn
from data import get_loaders

torch.manual_seed(0)
model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.2, 0.1, 0.05]]))
    model.bias.fill_(0.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
train_loader, test_loader = get_loaders(8)
for epoch in range(3):
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    correct = 0
    with torch.no_grad():
        for x, y in test_loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print("step", total / len(train_loader), correct / len(test_loader.dataset))
'''


def test_a_loader_returned_to_another_module_that_reads_its_dataset(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "data.py").write_text(LOADERS)
    (src / "main.py").write_text(LOADERS_MAIN)
    convert_path(src, out, jobs=1)
    code = (out / "data.py").read_text()
    assert "GeneratorDataset" not in code, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
