"""A torch setting some MindSpore layer class holds under torch's very name with another value (objsurf28): a Conv1d's
``kernel_size`` is ``(1, 3)`` for torch's ``(3,)``, a MaxPool1d's ``stride`` ``(1, 2)`` for torch's ``2``, a
MaxUnpool2d's ``kernel_size`` ``2`` for torch's ``(2, 2)``. On a layer whose class the converter cannot see the read
gave MindSpore's value silently (objsurf27's enumeration: 37 members ``wrong``). Now, from the measured table
``data/surface/shadowed_members.toml``: outside ``forward`` the read goes through ``mp_adapt.layer_attribute``, which
gives torch's value by the object's class (the surface's expression) or raises; in ``forward`` it is flagged MP104.

Slice: the three layers above and a plain config object (the table's measurement over all 155 entries is the
generator's, ``python -m mindport.proofs.shadowed``; here one entry is re-measured to keep the table honest)."""
from __future__ import annotations

import textwrap

import pytest

from mindport import convert_source

SOURCE = textwrap.dedent("""\
    import torch.nn as nn


    class Down(nn.Module):
        def __init__(self, pool, cfg):
            super().__init__()
            self.pool = pool
            self.cfg = cfg
            self.k = self.pool.kernel_size
            self.s = self.pool.stride
            self.p = self.cfg.padding

        def forward(self, x):
            return self.pool(x), self.pool.kernel_size
""")


class Cfg:
    padding = 7


def _converted():
    from mindport.proofs.function import _load

    result = convert_source(SOURCE, "down.py")
    return result, _load(result.code, "shadowed_down", importable=True)


def test_a_read_in_forward_is_flagged_and_one_outside_reads_by_class():
    result, _ = _converted()
    flagged = [d for d in result.diagnostics if d.code == "MP104"]
    assert len(flagged) == 1 and "kernel_size" in flagged[0].message and "MaxPool1d" in flagged[0].message
    assert "mp_adapt.layer_attribute(self.pool, 'kernel_size')" in result.code
    assert "mp_adapt.layer_attribute(self.cfg, 'padding')" in result.code


def test_outside_forward_gives_torch_value_or_raises():
    import torch
    from mindspore import nn as msnn

    _, mod = _converted()
    # MaxPool1d: torch's values through the surface's expression (MindSpore holds (1, 2))
    t = torch.nn.MaxPool1d(2, 3)
    d = mod.Down(msnn.MaxPool1d(kernel_size=2, stride=3), Cfg())
    assert (d.k, d.s, d.p) == (t.kernel_size, t.stride, 7)
    # MaxUnpool2d holds kernel_size 2 for torch's (2, 2): loud, not wrong
    with pytest.raises(AttributeError, match="MaxUnpool2d.kernel_size"):
        mod.Down(msnn.MaxUnpool2d(2, 2), Cfg())


def test_conv1d_settings_by_class():
    import torch
    from mindspore import nn as msnn

    from mindport.runtime import adapt
    from mindport.runtime import layers as mp_nn

    t = torch.nn.Conv1d(2, 3, 5, stride=2, padding=1)
    plain = msnn.Conv1d(2, 3, 5, stride=2, padding=1, pad_mode="pad", has_bias=True)
    with pytest.raises(AttributeError, match="Conv1d.kernel_size"):
        adapt.layer_attribute(plain, "kernel_size")
    # the runtime class a file that reads the setting builds keeps torch's tuples: no raise there
    ours = mp_nn.Conv1d(2, 3, 5, stride=2, padding=1, pad_mode="pad", has_bias=True)
    for name in ("kernel_size", "stride", "padding"):
        assert adapt.layer_attribute(ours, name) == getattr(t, name)
    assert adapt.layer_attribute(plain, "weight").shape == (3, 2, 1, 5)  # a tensor read stays (init calls convert)
    # a setting MindSpore holds as a Tensor (AdaptiveMaxPool3d's output_size (3,) for torch's (2, 3, 2)): loud too
    with pytest.raises(AttributeError, match="AdaptiveMaxPool3d.output_size"):
        adapt.layer_attribute(msnn.AdaptiveMaxPool3d((2, 3, 2)), "output_size")


def test_the_table_is_the_measurement():
    from mindport.mappings.surface import load_shadowed
    from mindport.proofs.shadowed import measure

    assert measure({"torch.nn.MaxPool1d"}) == {"torch.nn.MaxPool1d": load_shadowed()["torch.nn.MaxPool1d"]}
