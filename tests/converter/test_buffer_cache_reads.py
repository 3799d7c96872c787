"""A cache buffer registered again in a forward-reached method and read back after it compiles in GRAPH_MODE and gives
torch's numbers: Flow-TimesNet's LowRankTemporalContext (trials flowtimesnet/lowrank) tests ``if
self._cached_basis.numel() == 0 or self._cached_length != length``, rebuilds the basis, ``self.register_buffer(
"_cached_basis", basis.detach(), persistent=False)``, then returns ``self._cached_basis.to(dtype)``. A graph refuses
``register_buffer`` in ``construct`` ("is not supported in 'construct'", MindSpore 2.10). SelfCacheTransform writes it
as ``mp_framework.keep_buffer`` (registered in PyNative only) and, because the method reads the buffer again, reads
it through a local bound at the top and re-bound by the ``keep_buffer`` call: a graph reads the basis just built,
not the empty tensor ``__init__`` registered. The slice: that method's shape (a size test, a stale-length test,
a read after the write), the buffer registered or assigned (the entry's form, which BufferTransform writes as
``register_buffer``), once per mode, and the buffer kept and rebuilt in PyNative. Expected values are torch's outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode, load_module

LOWRANK = textwrap.dedent("""\
    import math
    import torch
    import torch.nn as nn


    class LowRankContext(nn.Module):
        def __init__(self, rank=3):
            super().__init__()
            self.rank = rank
            self.scale = nn.Parameter(torch.tensor(0.5))
            self.register_buffer("_cached_basis", torch.zeros(0), persistent=False)
            self._cached_length = 0

        def _compute_basis(self, length, dtype):
            steps = torch.arange(length, dtype=dtype).unsqueeze(1)
            freqs = torch.arange(1, self.rank + 1, dtype=dtype).unsqueeze(0)
            basis = torch.cos(math.pi / float(length) * (steps + 0.5) * freqs)
            return basis - basis.mean(dim=0, keepdim=True)

        def _basis(self, length, reference):
            dtype = reference.dtype
            if self._cached_basis.numel() == 0 or self._cached_length != length:
                basis = self._compute_basis(length, dtype)
                self.register_buffer("_cached_basis", basis.detach(), persistent=False)
                self._cached_length = length
            return self._cached_basis.to(dtype)

        def forward(self, coeff):
            basis = self._basis(coeff.shape[1], coeff)
            return torch.matmul(basis.unsqueeze(0), coeff.transpose(-1, -2)) * self.scale
""")


# the entry's own form: the buffer assigned (torch's assignment replaces a buffer; BufferTransform writes it as
# register_buffer, which a graph refuses in construct)
ASSIGNED = LOWRANK.replace('self.register_buffer("_cached_basis", basis.detach(), persistent=False)',
                           "self._cached_basis = basis.detach()")
SOURCES = {"registered": LOWRANK, "assigned": ASSIGNED}


@pytest.mark.parametrize("form", sorted(SOURCES))
def test_written_through_a_local(form):
    code = convert_source(SOURCES[form]).code
    assert "_mp__cached_basis = self._cached_basis" in code, code
    assert '_mp__cached_basis = mp_framework.keep_buffer(self, "_cached_basis", ' in code, code
    assert "register_buffer" not in code.split("def _basis")[1], code


@pytest.mark.parametrize("form", sorted(SOURCES))
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lowrank_matches_torch(tmp_path, mode, form):
    coeff = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCES[form], convert_source(SOURCES[form]).code, "LowRankContext", [coeff],
                                tmp_path, f"lowrank_{form}", mode, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", sorted(SOURCES))
def test_buffer_kept_in_pynative(tmp_path, form):
    import mindspore as ms

    code = convert_source(SOURCES[form]).code
    net = getattr(load_module(code, tmp_path / f"m_lr_{form}.py", f"m_lr_{form}"), "LowRankContext")()
    net(ms.Tensor(np.ones((2, 4, 3), np.float32)))
    assert tuple(net._cached_basis.shape) == (4, 3)
    net(ms.Tensor(np.ones((2, 5, 3), np.float32)))
    assert tuple(net._cached_basis.shape) == (5, 3)
