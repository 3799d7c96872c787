"""CUDA device queries of training scripts (disc50): funcwj/conv-tasnet's trainer runs its epochs inside
``with th.cuda.device(self.gpuid[0]):`` and the notebooks of omniscientoctopus/Physics-Informed-Neural-Networks print
``torch.cuda.get_device_name()`` on a GPU; both were MP103 (no mapping entry), the line kept torch's, the migration
"partial". The class: device selection and naming, where MindSpore's placement is global: the block runs as written,
the name is mindspore.hal's. torch without CUDA refuses both, so the torch side is the same code without them."""
from __future__ import annotations

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = '''
import torch


def epoch(x, gpuid=(0,)):
    with torch.cuda.device(gpuid[0]):
        y = torch.tanh(x) * 2 + 1
    return y


def describe(device="cuda:0"):
    return torch.cuda.get_device_name(device)
'''


def test_device_selection_runs_the_block_and_names_the_device(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE, "trainer.py")
    assert not [d for d in result.diagnostics if d.code in ("MP102", "MP103")], [d.format() for d in result.diagnostics]
    assert "torch" not in result.code.replace("import torch\n", ""), result.code
    ms_side = load_module(result.code, tmp_path / "m_cuda50.py", "m_cuda50")
    plain = SOURCE.replace("    with torch.cuda.device(gpuid[0]):\n        y =", "    y =")
    torch_side = load_module(plain, tmp_path / "t_cuda50.py", "t_cuda50")
    x = np.linspace(-2.0, 2.0, 12, dtype=np.float32).reshape(3, 4)
    want = torch_side.epoch(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_side.epoch(ms.Tensor(x)).asnumpy(), want, rtol=1e-6, atol=1e-6)
    assert ms_side.describe() == ms_side.describe(0) == ms.hal.get_device_name(0)
