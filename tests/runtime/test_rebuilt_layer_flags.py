"""A layer built again after a setting is written (mindport.runtime.adapt.set_layer_attribute's ``rebuilt``) keeps
the constructor flags the write table does not list: a conv built with ``bias=False`` and then given another stride,
dilation or padding (DeepLabV3+'s ``_nostride_dilate``: ``m.stride = (1, 1); m.dilation = (2, 2); m.padding = (2, 2)``
on a backbone's depthwise convs) stays bias-free. Before, the rebuild took the constructor's default ``bias=True``:
its BiasAdd primitive met the layer's ``bias`` None and MindSpore raised (first contact, session 30:
bubbliiiing/deeplabv3-plus-pytorch, DeepLab and its MobileNetV2 backbone ms-failed).

Every converted layer whose writes are rebuilt and whose constructor has a ``bias`` flag is enumerated from the data,
built in torch and in MindSpore with ``bias=False``, written, and run against torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.mappings.surface import load_writes
from tests.source_module import load_source

DILATE = """\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.pw = nn.Conv2d(4, 8, 1, bias=False)
            self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.apply(self._nostride_dilate)

        def _nostride_dilate(self, m):
            if m.__class__.__name__.find('Conv') != -1:
                if m.stride == (2, 2):
                    m.stride = (1, 1)
                    if m.kernel_size == (3, 3):
                        m.dilation = (2, 2)
                        m.padding = (2, 2)

        def forward(self, x):
            return self.bn(self.dw(self.pw(x)))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_bias_free_conv_dilated_after_construction_runs_as_in_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    source = textwrap.dedent(DILATE)
    result = convert_source(source, "dilate.py")
    assert "set_layer_attribute(m, 'stride', (1, 1))" in result.code
    torch.manual_seed(0)
    t_model = load_source(source, tmp_path, f"t_dilate_{mode}").Net().eval()
    m_model = load_source(result.code, tmp_path, f"m_dilate_{mode}").Net()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(1).standard_normal((2, 4, 9, 9)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.tensor(x)).numpy()
    assert want.shape == (2, 8, 9, 9)  # the dilated conv keeps the size (stride 1, dilation 2, padding 2)
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = m_model(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _rebuilt_with_bias_flag():
    from mindport.proofs import writes

    names = []
    for entry in writes.mapped_layers():
        table = load_writes().get(entry.torch, {})
        rebuilt = sorted(k for k, (end, _) in table.items() if end == "converted")
        flag = any(p.name == "bias" and p.default in ("True", "False") for p in entry.signature or ())
        if rebuilt and flag and "Lazy" not in entry.torch:
            names.append(entry.torch)
    return sorted(names)


# Conv1d and ConvTranspose2d are enumerated too, but their rebuild fails with bias=True as well (a Conv1d's
# kernel_size read back as a tuple, a ConvTranspose2d's new kernel_size): loud, open (notes/fresh30.md)
_ARGS = {"Conv2d": (3, 5, 3), "Conv3d": (3, 5, 3)}
_SHAPES = {"1d": (2, 3, 9), "2d": (2, 3, 7, 7), "3d": (1, 3, 5, 5, 5)}


def test_the_enumeration_covers_the_convolutions():
    found = _rebuilt_with_bias_flag()
    assert {f"torch.nn.{n}" for n in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d")} <= set(found), found


@pytest.mark.parametrize("torch_name", [f"torch.nn.{n}" for n in _ARGS])
def test_every_rebuilt_layer_with_a_bias_flag_stays_bias_free(torch_name):
    import mindspore as ms
    import torch

    from mindport import transfer_weights
    from mindport.runtime.adapt import set_layer_attribute

    short = torch_name.rsplit(".", 1)[1]
    dims = short[-2:]
    t_layer = getattr(torch.nn, short)(*_ARGS[short], bias=False)
    source = f"import torch.nn as nn\nlayer = nn.{short}({', '.join(map(str, _ARGS[short]))}, bias=False)\n"
    ns = {}
    exec(convert_source(source, "layer.py").code, ns)
    m_layer = ns["layer"]
    transfer_weights(t_layer.state_dict(), m_layer)
    n = int(dims[0])
    table = load_writes()[torch_name]
    writes = [(k, v) for k, v in (("stride", (2,) * n), ("dilation", (2,) * n), ("padding", (1,) * n),
                                  ("kernel_size", (2,) * n)) if table.get(k, ("",))[0] == "converted"]
    assert writes, table
    for name, value in writes:
        setattr(t_layer, name, value)
        set_layer_attribute(m_layer, name, value)
    x = np.random.default_rng(2).standard_normal(_SHAPES[dims]).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.tensor(x)).numpy()
    got = m_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_the_settings_check_reads_the_rebuilt_layer(tmp_path):
    """A parity run compares each layer's settings on the two sides (validators/parity/configs.py, traps.py) from the
    MindSpore Cells' recorded constructor arguments. A layer rebuilt after a write kept the record of its first
    construction: the dilated MobileNetV2 above was "diverged: known trap in the settings: stride differs: torch
    stride=(1, 1), MindSpore stride=2" with its outputs equal to torch's (first contact after the bias fix)."""
    import torch

    from mindport.validators.parity.configs import ms_config, record_constructor_args, torch_config
    from mindport.validators.parity.traps import find_traps

    source = textwrap.dedent(DILATE)
    result = convert_source(source, "dilate.py")
    t_model = load_source(source, tmp_path, "t_dilate_cfg").Net()
    with record_constructor_args():
        m_model = load_source(result.code, tmp_path, "m_dilate_cfg").Net()
    assert isinstance(t_model.dw, torch.nn.Conv2d)
    for name in ("pw", "dw"):
        tcfg, mcfg = torch_config(getattr(t_model, name)), ms_config(getattr(m_model, name))
        assert find_traps("Conv2d", tcfg, mcfg) == [], (name, tcfg, mcfg)
    assert ms_config(m_model.dw)["stride"] in ((1, 1), 1)
