"""A class's bases are read before the class binds its own name: ``class Dataset(Dataset)`` (denoising-diffusion's
image folder) extends torch's Dataset, although ``Dataset`` names the new class afterwards. Before, the base was not
recognised, its import was removed, and the converted module failed at import with a NameError."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    from torch.utils.data import Dataset


    class Dataset(Dataset):
        def __init__(self, n):
            super().__init__()
            self.values = torch.arange(n, dtype=torch.float32) * 0.5

        def __len__(self):
            return len(self.values)

        def __getitem__(self, i):
            return torch.stack([self.values[i], self.values[i] ** 2])


    class Shifted(Dataset):
        def __getitem__(self, i):
            return super().__getitem__(i) + 1


    def items(n=4):
        return [Shifted(n)[i] for i in range(n)]
""")


def test_a_class_named_like_its_base_extends_the_import(tmp_path):
    result = convert_source(SOURCE)
    assert "class Dataset:" in result.code and "class Shifted(Dataset):" in result.code, result.code
    want = [t.numpy() for t in load_module(SOURCE, tmp_path / "t_cb.py", "t_cb").items()]
    got = [t.asnumpy() for t in load_module(result.code, tmp_path / "m_cb.py", "m_cb").items()]
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
