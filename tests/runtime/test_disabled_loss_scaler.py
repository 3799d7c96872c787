"""GradScaler(enabled=False) passes values through in torch (scale(loss) is loss); converted, it is
mindport.runtime.framework.DisabledLossScaler (a static scale of 1), also when enabled is known only at run time."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import mindport

SNIPPET = """
import torch
use_amp = {flag}
a = torch.cuda.amp.GradScaler(enabled=False)
b = torch.amp.GradScaler("cpu", init_scale=256.0, enabled=use_amp)
x = torch.tensor([[0.5, -2.0, 3.25]])
loss = torch.mean(x * x)
result = (a.scale(loss), b.scale(loss))
"""


@pytest.mark.parametrize("flag", [False, True])
def test_disabled_scaler_scales_by_one(flag):
    source = SNIPPET.format(flag=flag)
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)  # noqa: S102 - our own snippet
    converted = mindport.convert_source(source)
    assert not converted.diagnostics
    assert "DisabledLossScaler" in converted.code
    ms_ns: dict = {}
    exec(compile(converted.code, "<ms>", "exec"), ms_ns)  # noqa: S102 - the converter's output of our snippet
    for expected, got in zip(torch_ns["result"], ms_ns["result"], strict=True):
        np.testing.assert_allclose(got.asnumpy(), expected.detach().numpy(), rtol=1e-6)
    assert isinstance(torch_ns["result"][0], torch.Tensor)
