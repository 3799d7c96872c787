"""Causes session 53 (train54) met re-measuring a sample of the whole training corpus, each a class with a fixture
of our own, converted and run under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from _harness import boot_losses

# andrecosta90/transformer (fresh39, the Annotated-Transformer copy task) calls ``torch.set_default_device("cpu")``
# and prints ``torch.get_default_device()`` at import: both were "unsupported" entries (MP101), left as torch calls,
# so the conversion exited 1 and the port imported torch. Class: the process-wide default device. MindSpore's
# placement is global (mindspore.set_device), which is how the device rule already writes ``.to(d)``/``.cuda()``
# (nothing to move), so setting it changes no value; the device is kept and given back by get_default_device as a
# string, as converted code names devices (mappings/data/framework.toml, mindport.runtime.framework). The fixture:
# both calls at import, the printed device, and a loop whose tensors are made after the setting.
DEFAULT_DEVICE = '''
import torch
import torch.nn as nn

torch.set_default_device("cpu")
print("device", torch.get_default_device())


def main():
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 60).reshape(15, 4)
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.25 * x[:, 2:3] * x[:, 3:4])
    net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    for epoch in range(10):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        optimizer.step()
        print("step", loss.item())


if __name__ == "__main__":
    main()
'''


def test_default_device_calls_convert_and_the_port_tracks(tmp_path):
    import subprocess
    import sys

    from _harness import child_env
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(DEFAULT_DEVICE)
    report = convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert "MP101" not in code and "import torch" not in code and "set_default_device" in code, code
    assert report.ok, report
    state = tmp_path / "state"
    state.mkdir()
    torch_losses = boot_losses("torch", "track", state, src / "main.py")[0]
    port = boot_losses("mindspore", "track", state, out / "main.py")[0]
    assert len(torch_losses) == len(port) == 10
    np.testing.assert_allclose(port, torch_losses, rtol=1e-4)
    assert torch_losses[-1] < 0.5 * torch_losses[0]
    # the printed device is torch's text
    printed = [subprocess.run([sys.executable, str(d / "main.py")], capture_output=True, text=True, cwd=d,
                              env=child_env(OMP_NUM_THREADS="1"), timeout=600).stdout.splitlines()[0]
               for d in (src, out)]
    assert printed[0] == printed[1] == "device cpu", printed


# JarvisLee0423/Pytorch_Practice (fresh33, TorchNN.py) picks its device with ``if torch.cuda.is_available(): device =
# 'cuda'; torch.cuda.set_device(0)``: torch.cuda.set_device had no entry (MP103, the conversion exiting 1, the port
# importing torch for a branch the CPU never takes). Same class: the process-wide device choice, now
# mindport.runtime.framework.cuda_set_device, chosen as torch.device('cuda', i) is (select_device). The fixture: the
# guarded choice before a training loop.
CUDA_SET_DEVICE = '''
import torch
import torch.nn as nn

if torch.cuda.is_available():
    device = "cuda"
    torch.cuda.set_device(0)
else:
    device = "cpu"


def main():
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 48).reshape(12, 4).to(device)
    y = (x.sum(1) > 0).long()
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    for epoch in range(8):
        optimizer.zero_grad()
        loss = nn.CrossEntropyLoss()(net(x), y)
        loss.backward()
        optimizer.step()
        print("step", loss.item())


if __name__ == "__main__":
    main()
'''


def test_cuda_set_device_converts_and_the_port_tracks(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(CUDA_SET_DEVICE)
    report = convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    assert "MP103" not in code and "import torch" not in code and "cuda_set_device(0)" in code, code
    assert report.ok, report
    state = tmp_path / "state"
    state.mkdir()
    torch_losses = boot_losses("torch", "track", state, src / "main.py")[0]
    port = boot_losses("mindspore", "track", state, out / "main.py")[0]
    assert len(torch_losses) == len(port) == 8
    np.testing.assert_allclose(port, torch_losses, rtol=1e-4)
    assert torch_losses[-1] < 0.5 * torch_losses[0]
