"""SliceGuardTransform and torch's views (trainfix21, issue 27). A basic slice is a VIEW in torch: a stepped read
that code then writes in place changes the tensor it was read from (a parallel scan's strided piece
``Xa = X[:, :, 1::2]; Xa[:, :, 1:] += ...``; ``y = x[:, :, ::3]; y[0] = -1``; a reshape of the piece written item by
item). MindSpore 2.10's PyNative subscript keeps those writes (measured: the unguarded port matches torch), while
``mp_tensor.sliced`` gathers a copy: with the guard of trainfix20 these ports returned ``X`` unchanged, silently.
The guard now leaves a read whose view is written (or whose base is written while the view is bound) as written,
and a read an in-place call writes straight away (``x[i].mul_(2)``: the converter's own write-back,
``x[i] = mp_inplace.mul_(x[i], ...)``, handles it); a read nobody writes stays guarded. Each form runs in torch and, converted, on MindSpore; values of the written
tensor compared."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch


    def base(shape=(2, 3, 8)):
        return torch.arange(float(shape[0] * shape[1] * shape[2])).reshape(*shape)


    def scan_piece():
        X = base()
        Xa = X[:, :, 1::2]
        Xa[:, :, 1:] += Xa[:, :, :-1] * 2
        return X


    def scan_levels():
        X = base((2, 2, 8))
        for k in range(1, 3):
            Xa = X[:, :, 2**k - 1::2**k]
            Xa[:, :, 1:].add_(Xa[:, :, :-1].mul(0.5))
        return X


    def item_write():
        x = base()
        y = x[:, :, ::3]
        y[0] = -1
        return x


    def reshaped_piece():
        X = base()
        Xa = X[:, :, 1::2]
        Xv = Xa.reshape(2, 3, 2, 2)
        Xv[:, :, :, 1].add_(Xv[:, :, :, 0])
        return X


    def viewed_read():
        X = base()
        Xv = X[:, :, ::2].view(2, 3, 2, 2)
        Xv[..., 0] = 0
        return X


    def method_on_read():
        x = base()
        x[..., 1::2, ::2].mul_(2)
        return x


    def copy_into_read():
        x = base()
        x[:, 1::2, ::2].copy_(torch.zeros(2, 1, 4))
        return x


    def read_only():
        x = base()
        return x[:, :, 1::2] * 2 + x[..., 1::2, ::2].sum()
""")

CASES = ("scan_piece", "scan_levels", "item_write", "reshaped_piece", "viewed_read", "method_on_read",
         "copy_into_read", "read_only")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    result = convert_source(SOURCE, "views.py")
    assert not [d for d in result.diagnostics if d.severity == "error"], result.code
    tmp = tmp_path_factory.mktemp("views")
    return (load_module(SOURCE, tmp / "t_views.py", "t_slice_guard_views"),
            load_module(result.code, tmp / "m_views.py", "m_slice_guard_views"), result.code)


@pytest.mark.parametrize("case", CASES)
def test_a_stepped_read_written_through_keeps_torchs_view(ported, case):
    torch_module, ms_module, code = ported
    want = getattr(torch_module, case)().numpy()
    got = getattr(ms_module, case)().asnumpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=0, err_msg=code)


def test_only_reads_nobody_writes_stay_guarded(ported):
    """A guarded stepped axis is taken as ``[..., ::step]`` in the last place (native51: the stepped reads of
    read_only, literal bounds and steps, are MindSpore's own subscripts, three stepped axes); no read goes through
    the runtime's ``sliced``."""
    code = ported[2]
    bodies = {name: code.split(f"def {name}(")[1].split("\ndef ")[0] for name in CASES}
    guarded = {name: body.count("[..., ::") + body.count("mp_tensor.sliced(") for name, body in bodies.items()}
    assert guarded == {"scan_piece": 0, "scan_levels": 0, "item_write": 0, "reshaped_piece": 0, "viewed_read": 0,
                       "method_on_read": 0, "copy_into_read": 0, "read_only": 3}, code
    assert "mp_tensor.sliced(" not in code, code
