"""Session trainfresh20 (issue 27): causes found at first contact with the fresh20 entries
(/work/notes/trainfresh20.md). One test each, on real torch and real MindSpore, each failing without its fix; the
expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# DataLoader calls whose arguments arrive through ``**``: an empty dict literal (mivadi/projectAI18's
# ``DataLoader(train_data, batch_size=batch_size, shuffle=True, **{})``), the pytorch/examples idiom
# ``kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}``, and ``**dict(...)`` holding batch_size
# itself; map-style datasets of (tensor, int) pairs and of dicts, a model trained over each loader
LOADER_KWARGS = '''
import torch
import torch.nn as nn

use_cuda = torch.cuda.is_available()
kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}

xs = torch.linspace(-1.0, 1.0, 40).reshape(10, 4)
pairs = [(xs[i], i % 2) for i in range(10)]
records = [{"x": xs[i], "y": float(xs[i].sum()) * 0.5} for i in range(10)]

model = nn.Linear(4, 2)
reg = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1, 0.05], [-0.1, 0.4, 0.2, -0.3]]))
    model.bias.fill_(0.05)
    reg.weight.copy_(torch.tensor([[0.2, 0.1, -0.3, 0.4]]))
    reg.bias.fill_(0.0)
opt = torch.optim.SGD(list(model.parameters()) + list(reg.parameters()), lr=0.3)
loss_fn = nn.CrossEntropyLoss()

loaders = [
    torch.utils.data.DataLoader(pairs, batch_size=4, shuffle=False, **{}),
    torch.utils.data.DataLoader(pairs, batch_size=3, **kwargs),
]
for loader in loaders:
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        print("step", loss.item(), len(loader))

settings = dict(batch_size=5, shuffle=False, drop_last=True)
for batch in torch.utils.data.DataLoader(records, **settings):
    opt.zero_grad()
    loss = ((reg(batch["x"]).squeeze(1) - batch["y"].float()) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def test_dataloader_arguments_given_through_double_star():
    """mivadi/projectAI18 (all three fresh20 VAE entries): ``DataLoader(..., **{})`` was flagged MP102 ("**kwargs at
    the call site cannot be matched to the signature") and kept as torch's DataLoader, which then collated MindSpore
    tensors. Which arguments a ``**`` brings is known when the call runs: mindport.runtime.data.DataLoader takes
    torch's parameters, so the call keeps its arguments and runs torch's loader semantics."""
    code = _convert(LOADER_KWARGS)
    assert "MP102" not in code and "import torch" not in code, code
    assert code.count("DataLoader(") == 3, code
    t, m = _losses(LOADER_KWARGS, "torch_loader_kwargs"), _losses(code, "ms_loader_kwargs")
    assert len(t) == 9 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert [r[1] for r in t[:7]] == [3, 3, 3, 4, 4, 4, 4]


# methods called on what another library's call returns, through its attributes: pathlib.Path(...).parent.absolute()
# (a checkpoint folder, SimonLembeye/out-of-distribution-detection's Classifier), Path(...).resolve().parent
# .absolute(), numpy's np.arange(...).reshape(...).T.clip(...); a model is trained and checkpointed under that folder
FOREIGN_CALL_ATTRIBUTES = '''
import os
import pathlib
import tempfile
import numpy as np
import torch
import torch.nn as nn

folder = os.path.join(pathlib.Path(os.path.join(tempfile.mkdtemp(), "x")).parent.absolute(), "ckpt")
os.makedirs(folder, exist_ok=True)
root = pathlib.Path(folder).resolve().parent.absolute()
weights = np.arange(6).reshape(2, 3).T.clip(1, 4) / 10.0
x = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)
y = x.abs().sum(1, keepdim=True)
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor(weights[:, 0], dtype=torch.float32).reshape(1, 3))
    model.bias.fill_(0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
path = os.path.join(folder, "model.pth")
for step in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    torch.save(model.state_dict(), path)
    model.load_state_dict(torch.load(path))
    print("step", loss.item(), float(root.is_dir()))
'''


def test_methods_of_another_librarys_call_result_stay_as_written():
    """SimonLembeye/out-of-distribution-detection (fresh20, MindSpore side: "'PosixPath' object has no attribute
    'dtype'"): ``pathlib.Path(__file__).parent.absolute()`` became ``mp_math.abs(pathlib.Path(__file__).parent)``,
    torch.Tensor.absolute on a receiver of unknown kind. An attribute of another library's call result is that
    library's object: its methods stay as written."""
    code = _convert(FOREIGN_CALL_ATTRIBUTES)
    assert ".parent.absolute()" in code and ".T.clip(1, 4)" in code and "import torch" not in code, code
    t, m = _losses(FOREIGN_CALL_ATTRIBUTES, "torch_foreign_attr"), _losses(code, "ms_foreign_attr")
    assert len(t) == 4 and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    assert t[-1][0] < t[0][0] and t[0][1] == 1.0
