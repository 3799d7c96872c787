"""A field of torch's named-tuple result read on the call (Koopa's ``torch.linalg.lstsq(x, y).solution``,
``torch.max(h, 1).values``). The runtime returns torch's named tuple in PyNative but a plain tuple in a compiled
graph (``'Tuple' object has no attribute 'solution'``), and ``torch.max`` with a dim gives MindSpore's plain pair in
both modes; the converter reads the field by position (mindport/migrator/named_results.py)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.named_results import named_fields
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Koopman(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, y):
            h = self.fc(x)
            k = torch.linalg.lstsq(h, y).solution
            best = torch.max(h, -1).values + torch.min(h, -1).indices
            return k, best, torch.sort(y, 1).values
""")


def test_fields_are_read_by_position():
    code = convert_source(SOURCE).code
    for text in ("mp_linalg.lstsq(h, y)[0]", "mp_tensor.max(h, -1)[0]", "mp_tensor.min(h, -1)[1]",
                 "mp_math.sort(y, dim=1)[0]"):
        assert text in code, (text, code)


def test_the_fields_come_from_the_runtime_named_tuples():
    fields = named_fields()
    assert fields["mp_linalg.lstsq"] == ("solution", "residuals", "rank", "singular_values")
    assert fields["mp_linalg.svd"] == ("U", "S", "Vh") and fields["mp_math.topk"] == ("values", "indices")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_named_result_fields_match_torch_in_both_modes(tmp_path, mode):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((2, 6, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Koopman", [x, y], tmp_path, "koopman", mode,
                                rtol=1e-4, atol=1e-4)


def test_named_results_data_is_torch_return_types():
    """mappings/data/surface/named_results.toml lists every named tuple torch.return_types has, with its fields."""
    import re

    import torch

    from mindport.migrator.named_results import torch_named_results

    expected = {}
    for name in dir(torch.return_types):
        cls = getattr(torch.return_types, name)
        if name.startswith("_") or name.endswith("_out") or not isinstance(cls, type) or not hasattr(cls, "n_fields"):
            continue
        expected[name] = tuple(re.findall(r"(\w+)=\d+", repr(cls(tuple(range(cls.n_fields))))))
    assert torch_named_results() == expected


NATIVE_FIELDS = [
    "v.cummax(0).values", "v.cummax(0).indices", "torch.cummin(v, 0).values", "v.nanmedian(0).values",
    "v.median(0).indices", "torch.linalg.qr(m).Q", "torch.geqrf(m).tau", "torch.linalg.slogdet(m).logabsdet",
    "torch.aminmax(v).max", "v.kthvalue(2, 0).values",
]


@pytest.mark.parametrize("read", NATIVE_FIELDS)
def test_a_field_of_a_named_result_converted_to_mindspore_own_is_read_by_position(read):
    """``v.cummax(0).values``: MindSpore's own cummax (and qr, geqrf, nanmedian...) returns a plain tuple in torch's
    order, so ``.values`` raised ('tuple' object has no attribute 'values'); read by position, values as torch's."""
    import mindspore as ms
    import torch

    source = f"import torch\n\n\ndef f(v, m):\n    return {read}\n"
    result = convert_source(source, "fields.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    v = np.array([3.0, 1.0, 2.0, 5.0, 4.0], dtype=np.float32)
    m = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], dtype=np.float32)
    want = t_ns["f"](torch.from_numpy(v), torch.from_numpy(m)).numpy()
    got = m_ns["f"](ms.Tensor(v), ms.Tensor(m)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
