"""Python-2-era indentation mixing spaces and tabs in one block (``8 spaces + tab + 4 spaces`` under an ``if`` of 12
spaces, DBPN's dbpn.py): valid Python 3 (a tab runs to the next multiple of 8), but LibCST's tokenizer refused it ("no
matching outer block for dedent") and the file was copied unconverted (MP201; the port then failed on ``nn.Module``).
Converted now, with the leading tabs expanded as Python reads them; a tab inside a multi-line string is data and kept.
The port builds and matches torch."""
from __future__ import annotations

import importlib

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source

SOURCE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "\n"
    "class Net(nn.Module):\n"
    "    '''Doc with a\n"
    "\ttab that is data.'''\n"
    "    def __init__(self, scale_factor=4):\n"
    "        super(Net, self).__init__()\n"
    "        if scale_factor == 2:\n"
    "        \tkernel = 6\n"
    "        \tstride = 2\n"
    "        elif scale_factor == 4:\n"
    "        \tkernel = 8\n"
    "        \tstride = 4\n"
    "        self.up = nn.ConvTranspose2d(3, 3, kernel, stride, 2)\n"
    "        for m in self.modules():\n"
    "            if isinstance(m, nn.Conv2d):\n"
    "        \t    torch.nn.init.constant_(m.bias, 0.25)\n"
    "            elif isinstance(m, nn.ConvTranspose2d):\n"
    "        \t    if m.bias is not None:\n"
    "        \t\t    torch.nn.init.constant_(m.bias, 0.5)\n"
    "\n"
    "    def forward(self, x):\n"
    "    \treturn torch.relu(self.up(x))\n"
)


def test_mixed_tab_indentation_converts_and_matches_torch(tmp_path, monkeypatch):
    compile(SOURCE, "net.py", "exec")  # Python 3 itself accepts the file
    result = convert_source(SOURCE, "net.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "nn.Module" not in result.code and "nn.Conv2dTranspose(" in result.code, result.code
    assert "'''Doc with a\n\ttab that is data.'''" in result.code
    t_ns: dict = {}
    exec(compile(SOURCE, "net_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / "tabs_ms.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    m_cls = vars(importlib.import_module("tabs_ms"))["Net"]
    assert m_cls.__doc__ == t_ns["Net"].__doc__
    t_model, m_model = t_ns["Net"]().eval(), m_cls()
    from mindport.migrator.weights import transfer_weights

    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.tensor(x)).numpy()
    got = m_model(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (1, 3, 20, 20)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
