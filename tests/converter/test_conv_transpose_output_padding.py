"""Transposed convolutions whose output_padding MindSpore cannot fold into its padding, and their output_size.

* ``output_padding > padding`` (SAC-AE's pixel decoder: ``ConvTranspose2d(c, 3, 3, stride=2, output_padding=1)``):
  the output reaches past the full transposed result, where torch has the bias alone. It was flagged (MP102) and kept
  torch, and the ``nn.ModuleList`` it was appended to became MindSpore's CellList, which refused the torch module at
  build time. It now converts (``mindport.runtime.layers.OutputPaddedConv2dTranspose``/``3d``; a ConvTranspose1d's
  output_padding, unsupported before at any value, by ``mindport.runtime.layers.Conv1dTranspose``), as does a
  padding or output_padding given by a name (decided when the layer is built).
* A ModuleList one member of which is flagged keeps the runtime ModuleList (CellList refuses the torch module).
* ``layer(x, output_size=...)`` on a ConvTranspose1d and a ConvTranspose3d (ConvTranspose2d's was already handled).

Compared with torch, values and shapes, PyNative and compiled."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source, transfer_weights
from tests.converter.port_check import build_layer_pair, load_module

CASES = [
    # (layer, arguments after the channels, input shape): output_padding > padding somewhere
    ("ConvTranspose2d", "3, stride=2, output_padding=1", (2, 4, 5, 6)),
    ("ConvTranspose2d", "3, stride=2, padding=(1, 0), output_padding=(1, 1), dilation=2", (2, 4, 5, 6)),
    ("ConvTranspose2d", "k, stride=s, padding=p, output_padding=op", (2, 4, 5, 6)),
    ("ConvTranspose3d", "3, stride=2, padding=(0, 1, 0), output_padding=1", (1, 4, 3, 4, 5)),
    ("ConvTranspose1d", "3, stride=2, output_padding=1", (2, 4, 7)),
    ("ConvTranspose1d", "3, stride=3, padding=2, output_padding=2", (2, 4, 7)),
    ("ConvTranspose1d", "k, s, p, op", (2, 4, 7)),
]


def _build(layer, args, p, op):
    t_layer, m_layer, _ = build_layer_pair(f"{layer}(4, 3, {args})", f"k=3, s=2, p={p}, op={op}")
    return t_layer, m_layer


@pytest.mark.parametrize(("layer", "args", "shape"), CASES)
@pytest.mark.parametrize(("p", "op"), [(0, 1), (1, 1)])
def test_output_padding_past_the_padding_matches_torch(layer, args, shape, p, op):
    t_layer, m_layer = _build(layer, args, p, op)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.tensor(x)).numpy()
    got = m_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert tuple(m_layer.output_padding) == tuple(t_layer.output_padding)


@pytest.mark.parametrize(("layer", "args", "shape"), [CASES[0], CASES[3], CASES[4]])
def test_output_padding_past_the_padding_compiles(layer, args, shape):
    t_layer, m_layer = _build(layer, args, 0, 1)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ms.jit(m_layer.construct)(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


DECODER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Decoder(nn.Module):
        def __init__(self, c=4, layers=2):
            super().__init__()
            self.deconvs = nn.ModuleList()
            for i in range(layers - 1):
                self.deconvs.append(nn.ConvTranspose2d(c, c, 3, stride=1))
            self.deconvs.append(nn.ConvTranspose2d(c, 3, 3, stride=2, output_padding=1))

        def forward(self, h):
            for i in range(len(self.deconvs) - 1):
                h = torch.relu(self.deconvs[i](h))
            return self.deconvs[-1](h)
""")


def test_a_decoder_list_of_output_padded_layers_matches_torch(tmp_path):
    result = convert_source(DECODER, "decoder.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_net = load_module(DECODER, tmp_path / "t_decoder.py", "t_decoder").Decoder()
    m_net = load_module(result.code, tmp_path / "m_decoder.py", "m_decoder").Decoder()
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    got = m_net(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (2, 3, 18, 18)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_list_with_a_flagged_member_stays_the_runtime_module_list(tmp_path):
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList()
                self.blocks.append(nn.Linear(3, 3))
                self.blocks.append(nn.Conv1d(3, 3, 3, padding="same", padding_mode="circular"))
                self.kept = nn.ModuleList([nn.Linear(3, 3), nn.Conv1d(3, 3, 3, padding="same",
                                                                       padding_mode="circular")])
    """)
    result = convert_source(source, "net.py")
    assert [d.code for d in result.diagnostics] == ["MP102", "MP102"], [d.format() for d in result.diagnostics]
    # both lists are the runtime ModuleList, which names the flagged line (CellList: "each cell must be subclass
    # of Cell"); the flagged constructions keep torch's meaning
    assert "nn.CellList" not in result.code and result.code.count("mp_containers.ModuleList(") == 1, result.code
    assert "torch.nn.ModuleList([torch.nn.Linear(3, 3), torch.nn.Conv1d(" in result.code, result.code
    module = load_module(result.code, tmp_path / "m_flagged.py", "m_flagged")
    with pytest.raises(TypeError, match="a line mindport flagged kept torch's layer"):
        module.Net()


@pytest.mark.parametrize(("layer", "args", "shape", "size"), [
    ("ConvTranspose1d", "4, 2, 3, stride=2, padding=1", (1, 4, 5), (10,)),
    ("ConvTranspose1d", "4, 2, 3, stride=2, padding=1", (1, 4, 5), (9,)),
    ("ConvTranspose3d", "4, 2, 3, stride=2, padding=1", (1, 4, 3, 4, 5), (6, 8, 10)),
    ("ConvTranspose3d", "4, 2, 3, stride=2, padding=(1, 0, 1)", (1, 4, 3, 4, 5), (5, 10, 9)),
    ("ConvTranspose2d", "4, 2, 3, stride=2, output_padding=1", (1, 4, 5, 5), (11, 12)),
])
def test_transposed_convolution_called_with_its_output_size(tmp_path, layer, args, shape, size):
    source = textwrap.dedent(f"""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.{layer}({args})

            def forward(self, x):
                return self.up(x, output_size=[x.shape[0], 2, *{size!r}])
    """)
    result = convert_source(source, "net.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    name = f"up_{layer}_{'_'.join(map(str, size))}_{len(args)}"
    torch.manual_seed(0)
    t_net = load_module(source, tmp_path / f"t_{name}.py", f"t_{name}").Net()
    m_net = load_module(result.code, tmp_path / f"m_{name}.py", f"m_{name}").Net()
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    got = m_net(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape and got.shape[2:] == size
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


STRIDE_PAST_KERNEL = [
    # (layer call, input shape): no padding, a stride larger than the dilated kernel on some axis
    ("ConvTranspose2d(4, 3, 2, stride=3)", (2, 4, 5, 6)),
    ("ConvTranspose2d(4, 3, (2, 4), stride=(3, 2))", (1, 4, 5, 6)),
    ("ConvTranspose2d(4, 3, 2, stride=4, dilation=2)", (1, 4, 3, 4)),
    ("ConvTranspose1d(4, 3, 1, stride=2)", (2, 4, 7)),
    ("ConvTranspose3d(4, 3, 1, stride=2)", (1, 4, 3, 4, 5)),
    ("ConvTranspose2d(4, 3, 2, stride=s, padding=p)", (1, 4, 5, 6)),
    ("ConvTranspose2d(4, 3, 3, stride=2)", (1, 4, 5, 6)),  # k >= stride: MindSpore's 'valid' is torch's length
]


@pytest.mark.parametrize("call,shape", STRIDE_PAST_KERNEL)
def test_unpadded_transposed_convolution_has_torch_length(call, shape):
    """MindSpore's pad_mode='valid' makes a transposed convolution ``in * stride + max(k - stride, 0)`` long, torch
    ``(in - 1) * stride + k``: the same only where the dilated kernel k reaches the stride. Shorter kernels (a 2x2
    kernel at stride 3, a 1x1 at stride 2) convert with ``pad_mode='pad', padding=0``."""
    t_layer, m_layer, code = build_layer_pair(call, "s=3, p=0")
    if "3, stride=2)" in call:
        assert "pad_mode='valid'" in code, code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.from_numpy(x)).numpy()
    got = m_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
