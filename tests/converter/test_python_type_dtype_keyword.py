"""``torch.ones((n, n), dtype=bool)`` (Spijkervet/SimCLR's NT_Xent mask, batch 26): torch takes Python's types as
dtypes (bool -> torch.bool, float -> float64, int -> int64); the converted call passed ``bool`` itself and MindSpore
refused it while the Cell was built ("For 'Ones', the input 'dtype' should be mindspore dtype, but got <class
'bool'>"). Class: a Python type given as a table call's ``dtype`` becomes the MindSpore dtype torch reads it as
(names.PYTHON_TYPE_DTYPES), unless the file binds the name itself."""
from __future__ import annotations

import textwrap

import numpy as np
import torch

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Masked(nn.Module):
        def __init__(self, n=4):
            super().__init__()
            mask = torch.ones((n, n), dtype=bool)
            mask = mask.fill_diagonal_(0)
            self.mask = mask
            self.scale = torch.full((n,), 3, dtype=float)
            self.index = torch.zeros(n, dtype=int)

        def forward(self, x):
            picked = x[self.mask].view(x.shape[0], -1)
            return picked * self.scale[self.index].float().sum() + torch.arange(picked.shape[1], dtype=float).float()
""")


def test_python_types_as_dtypes(tmp_path):
    result = convert_source(SOURCE)
    port = load_module(result.code, tmp_path / "masked_ms.py", "masked_ms").Masked()
    reference = load_module(SOURCE, tmp_path / "masked_torch.py", "masked_torch").Masked()
    import mindspore as ms
    assert port.mask.dtype == ms.bool_ and port.scale.dtype == ms.float64 and port.index.dtype == ms.int64
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    want = reference(torch.from_numpy(x)).numpy()
    got = port(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_name_the_file_binds_is_left_alone():
    source = textwrap.dedent("""\
        import torch


        def make(n, int=torch.int32):
            return torch.zeros(n, dtype=int)
    """)
    code = convert_source(source).code
    assert "dtype=int)" in code and "int64" not in code, code
