"""Session track30 (issue 27): causes met re-running the training corpus' deterministic entries that did not track
(/work/notes/track30.md). One test each, on real torch and real MindSpore; the expected values are torch's, run here."""
from __future__ import annotations

from test_track29_causes import _track

# A lazy layer (nn.LazyLinear) built before its optimizer: the harness recorded each optimizer's weights when it was
# built, when the lazy layer has none yet (torch's UninitializedParameter), so a deterministic entry with a lazy head
# could not be given the same initial weights (jasonkchow/simclr_ntxent_lazylinear). Now the lazy layer's weights
# are recorded (torch) and given (MindSpore) when it meets its first input, and the optimizer's record marks them.
LAZY = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.randn(16, 5)
y = torch.randint(0, 3, (16,))
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.LazyLinear(3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("loss %.7f" % loss.item())
'''


def test_the_harness_gives_a_lazy_layer_built_before_its_optimizer_torch_weights(tmp_path):
    printed = _track(tmp_path, LAZY, "loss")
    t = [float(line.split()[1]) for line in printed["torch"]]
    m = [float(line.split()[1]) for line in printed["mindspore"]]
    assert len(t) == len(m) == 4
    assert all(abs(a - b) <= 1e-5 * abs(a) for a, b in zip(t, m)), (t, m)
