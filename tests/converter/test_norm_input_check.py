"""``self._check_input_dim(x)`` in a torch norm layer's subclass: torch's rank check, which MindSpore's layer makes in
its construct (MindSpore's own ``_check_input_dim`` takes a shape and a class name: called as torch's it raised).
The converted subclass runs on MindSpore and matches torch; a class with its own ``_check_input_dim`` keeps it."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import torch

from mindport.migrator import convert_source

SOURCE = '''
import torch.nn as nn
import torch.nn.functional as F


class ScaledBatchNorm(nn.BatchNorm2d):
    def forward(self, x):
        self._check_input_dim(x)
        return super().forward(x) * 2


class PlainBN(nn.BatchNorm1d):
    def forward(self, x):
        super(PlainBN, self)._check_input_dim(x)
        return F.relu(super().forward(x))


class OwnCheck(nn.Module):
    def _check_input_dim(self, x):
        if x.dim() != 2:
            raise ValueError("expected 2D input")

    def forward(self, x):
        self._check_input_dim(x)
        return x * 3
'''


def test_norm_subclass_checks_run_on_mindspore_and_match_torch():
    result = convert_source(SOURCE, "norms.py")
    assert "_check_input_dim(x)" in result.code  # OwnCheck's own method stays, with its call
    assert result.code.count("_check_input_dim") == 2
    ns_t: dict = {}
    exec(compile(SOURCE, "norms_torch", "exec"), ns_t)
    ns_m: dict = {}
    exec(compile(result.code, "norms_ms", "exec"), ns_m)
    rng = np.random.default_rng(0)
    for name, shape, ctor in (("ScaledBatchNorm", (2, 3, 4, 4), (3,)), ("PlainBN", (4, 5), (5,))):
        x = rng.standard_normal(shape).astype(np.float32)
        t, m = ns_t[name](*ctor), ns_m[name](*ctor)
        t.train()
        m.set_train(True)
        expected = t(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    own = ns_m["OwnCheck"]()
    np.testing.assert_allclose(own(ms.Tensor(np.ones((2, 2), np.float32))).asnumpy(), 3.0)
