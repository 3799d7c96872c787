"""A DataLoader handed to a function of another file of the project that reads a field only torch's loader has
(timgaripov/swa's shape, benchmarks/training/fresh49.json garipov/*): real torch and real MindSpore, the expected
values torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder

# train.py builds ``loaders = {'train': DataLoader(...), 'test': DataLoader(ds, batch_size=b, shuffle=False)}`` and
# passes ``loaders['test']`` to ``utils.eval(loader, model, criterion)``, which reads ``len(loader.dataset)``. The
# rule kept torch's loader (mindport.runtime.data.DataLoader) when such a read happened in the loader's own file or
# on what a function returns, not when the loader (or a dict/list holding it) reached a parameter of another file's
# function: the unshuffled loaders became mindspore.dataset pipelines and the port failed at the first
# ``len(loader.dataset)`` (AttributeError: 'BatchDataset' object has no attribute 'dataset'). The class: a loader
# reaching such a parameter -- directly, through a dict/list/tuple subscript, a whole container the callee
# subscripts, a keyword, a helper the callee hands it on to, or a class of another file storing it in __init__ --
# keeps torch's loader (project.loader_param_reads).
UTILS = '''
import torch


def _size(loader):
    return len(loader.dataset)


def train_epoch(loader, model, criterion, optimizer):
    loss_sum = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * x.shape[0]
    return loss_sum / len(loader.dataset)


def eval(model, criterion, loader=None):
    loss_sum, correct = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            loss_sum += criterion(out, y).item() * x.shape[0]
            correct += (out.argmax(1) == y).sum().item()
    return loss_sum / _size(loader), correct / _size(loader)


def first_size(loaders):
    return len(loaders[0].dataset)


class Meter:
    def __init__(self, loader):
        self.loader = loader

    def count(self):
        return len(self.loader.dataset) + self.loader.drop_last
'''

MAIN = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import utils
from utils import Meter

x = torch.tensor(np.random.RandomState(0).randn(60, 3).astype(np.float32))
y = (x.sum(1) > 0).long()
loaders = {
    'train': DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=False),
    'test': DataLoader(TensorDataset(x[32:44], y[32:44]), batch_size=5, shuffle=False),
}
extra = [DataLoader(TensorDataset(x[44:], y[44:]), batch_size=4, shuffle=False)]
holdout = DataLoader(TensorDataset(x[50:], y[50:]), batch_size=3, shuffle=False)
model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [-0.2, 0.1, 0.05]]))
    model.bias.fill_(0.0)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
meter = Meter(holdout)
for epoch in range(3):
    train_loss = utils.train_epoch(loaders['train'], model, criterion, optimizer)
    test_loss, test_acc = utils.eval(model, criterion, loader=loaders['test'])
    print("step", train_loss, test_loss, test_acc, utils.first_size(extra), meter.count())
'''


def test_a_loader_handed_to_another_file_s_function_that_reads_its_dataset(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "utils.py").write_text(UTILS)
    (src / "main.py").write_text(MAIN)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert "GeneratorDataset" not in code, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
    assert [row[3:] for row in t] == [[16.0, 10.0]] * 3  # len(extra[0].dataset), len(holdout.dataset) + False


def test_a_loader_handed_to_another_file_s_function_that_only_iterates_it_stays_a_pipeline(tmp_path):
    """The other side of the rule: a function of another file that never reads a loader-only field of its parameter
    (it only iterates it) leaves the unshuffled loader a mindspore.dataset pipeline, and the port still matches."""
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "utils.py").write_text(UTILS.replace("len(loader.dataset)", "sum(x.shape[0] for x, _ in loader)")
                                  .replace("len(self.loader.dataset) + self.loader.drop_last", "len(self.loader)"))
    (src / "main.py").write_text(MAIN.replace("utils.first_size(extra), meter.count()", "0, 0"))
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert code.count("GeneratorDataset") == 4, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
