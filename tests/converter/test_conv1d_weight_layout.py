"""A Conv1d's (ConvTranspose1d's) weight in torch's layout (objsurf sweep, session 33). MindSpore's own Conv1d keeps
its weight 4-D, ``(out, in/groups, 1, k)``, where torch's is ``(out, in/groups, k)``: converted code reading the
weight's shape, ``dim()``, ``[..., 0]``, a fan from ``size(2)``, or listing ``named_parameters()``/``state_dict()``
shapes got other numbers, with no diagnostic. ``mindport.runtime.layers.Conv1d`` and ``Conv1dTranspose`` now hold
torch's 3-D weight (the construct gives the kernel its size-1 axis back), and a project that shows a Conv1d's weight
(a ``.weight`` read on anything but ``self``, a parameter list taken apart) builds that class instead of MindSpore's
own (``project.conv1d_settings_unread``). Expected values come from torch; the fixtures are written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def _program(layer: str, run: str) -> str:
    return HEAD + textwrap.dedent(f"""\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = {layer}

            def forward(self, x):
                return self.conv(x)


        def run(model, x):
        """) + textwrap.indent(textwrap.dedent(run).strip("\n"), "    ") + "\n"


READS = {
    "shape": "return tuple(model.conv.weight.shape), model(x)",
    "shape[2]": "return model.conv.weight.shape[2]",
    "dim": "return model.conv.weight.dim()",
    "index": "return model.conv.weight[:, :, 0]",
    "view": "return model.conv.weight.view(6, -1).sum(1)",
    "fan": "w = model.conv.weight\nreturn w.size(1) * w.size(2)",
    "named_parameters": "return [(n, tuple(p.shape)) for n, p in model.named_parameters()]",
    "state_dict": "return [tuple(v.shape) for v in model.state_dict().values()]",
    "numel": "return sum(p.numel() for p in model.parameters())",
}
LAYERS = {"conv1d": "nn.Conv1d(4, 6, 3, padding=1, groups=2)", "transposed": "nn.ConvTranspose1d(4, 6, 3, stride=2)"}


def _plain(value):
    """torch's and MindSpore's results as numpy arrays, tuples and lists (shapes as tuples of ints)."""
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if hasattr(value, "detach"):
        return value.detach().numpy()
    if isinstance(value, (tuple, list)) and not (value and all(isinstance(v, int) for v in value)):
        return type(value)(_plain(v) for v in value)
    return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else value


def _assert_same(got, want):
    if isinstance(want, np.ndarray):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    elif isinstance(want, list) or isinstance(want, tuple) and want and not isinstance(want[0], int):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _assert_same(g, w)
    else:
        assert got == want


@pytest.mark.parametrize("layer", sorted(LAYERS))
@pytest.mark.parametrize("read", sorted(READS))
def test_a_read_of_the_weight_gives_torchs_answer(layer, read, tmp_path):
    import mindspore as ms
    import torch

    from mindport.proofs.function import _build_pair, _load

    if layer == "transposed" and read == "view":
        pytest.skip("(in, out/groups, k) = (4, 6, 3): view(6, -1) is another program")
    source = _program(LAYERS[layer], READS[read]) + "\n\ndef build():\n    return Net()\n"
    result = convert_source(source, f"{layer}_{read}.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "mp_nn.Conv1d" in result.code, result.code  # the runtime layer: the weight is read
    torch.manual_seed(0)
    t_mod, m_mod = _load(source, f"w33_t_{layer}_{read}"), _load(result.code, f"w33_m_{layer}_{read}")
    t_model, m_model = _build_pair(t_mod, m_mod, False)  # torch's weights moved by the weight rules
    x = np.random.default_rng(0).standard_normal((2, 4, 9)).astype(np.float32)
    with torch.no_grad():
        want = _plain(t_mod.run(t_model, torch.tensor(x)))
    got = _plain(m_mod.run(m_model, ms.Tensor(x)))
    if read == "named_parameters":  # the names are the Cell's own paths: torch's here (conv.weight, conv.bias)
        assert [n for n, _ in got] == [n for n, _ in want]
        got, want = [s for _, s in got], [s for _, s in want]
    _assert_same(got, want)


GRAPH_SOURCE = HEAD + textwrap.dedent("""\
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv1d(4, 6, 3, padding=1)
            self.b = nn.Conv1d(6, 6, 5, padding=2, dilation=1, groups=3, bias=False)
            self.up = nn.ConvTranspose1d(6, 4, 4, stride=2, padding=1)
            self.k = self.a.weight.shape[-1]  # shows the weight: the runtime layers

        def forward(self, x):
            h = F.relu(self.b(self.a(x)))
            h = h + F.conv1d(h, self.b.weight, None, padding=2, groups=3)  # the layer's 3-D weight, as torch's
            return self.up(h) * self.k
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_runtime_conv1d_layers_match_torch_in_both_modes(mode, tmp_path):
    result = convert_source(GRAPH_SOURCE, "graph33.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "self.a = mp_nn.Conv1d(" in result.code and "self.up = mp_nn.Conv1dTranspose(" in result.code
    x = np.random.default_rng(1).standard_normal((2, 4, 11)).astype(np.float32)
    assert_port_matches_in_mode(GRAPH_SOURCE, result.code, "Net", [x], tmp_path, "conv1d_w33", mode,
                                rtol=1e-5, atol=1e-5)


def test_the_runtime_layers_hold_torchs_shape_and_take_an_unbatched_input():
    import mindspore as ms
    import torch

    from mindport.runtime.layers import Conv1d, Conv1dTranspose

    conv = Conv1d(4, 6, 3, pad_mode="pad", padding=1, group=2, has_bias=True)
    up = Conv1dTranspose(4, 6, 3, stride=2, pad_mode="valid", has_bias=True)
    t_conv, t_up = torch.nn.Conv1d(4, 6, 3, padding=1, groups=2), torch.nn.ConvTranspose1d(4, 6, 3, stride=2)
    assert conv.weight.shape == tuple(t_conv.weight.shape) == (6, 2, 3)
    assert up.weight.shape == tuple(t_up.weight.shape) == (4, 6, 3)
    assert [p.name for p in conv.get_parameters()] == ["weight", "bias"]
    # the value MindSpore loads is the 3-D one too (a Parameter resized in place with set_data still loaded 4-D)
    assert conv.weight.value().shape == (6, 2, 3) and conv.weight.ndimension() == 3
    conv.weight.set_data(ms.Tensor(np.zeros((6, 2, 3), np.float32)))
    assert conv.weight.value().shape == (6, 2, 3)
    for ms_layer, t_layer in ((conv, t_conv), (up, t_up)):
        ms_layer.weight.set_data(ms.Tensor(t_layer.weight.detach().numpy()))
        ms_layer.bias.set_data(ms.Tensor(t_layer.bias.detach().numpy()))
        x = np.random.default_rng(2).standard_normal((4, 7)).astype(np.float32)  # torch's unbatched (C, L)
        with torch.no_grad():
            want = t_layer(torch.tensor(x)).numpy()
        np.testing.assert_allclose(ms_layer(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


NATIVE = HEAD + textwrap.dedent("""\
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 6, 3)

        def forward(self, x):
            return self.conv(x)


    def train(model, x):
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        groups = [{'params': model.parameters(), 'lr': 1e-3}]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        torch.save({'model': model.state_dict()}, 'ckpt.pt')
        torch.save(model.state_dict(), 'last.pt')
        return opt, groups
""")


def test_parameters_handed_whole_to_a_function_keep_mindspores_own_conv1d():
    code = convert_source(NATIVE, "native33.py").code
    assert "self.conv = nn.Conv1d(" in code, code


@pytest.mark.parametrize("shows", [
    "print(Net().conv.weight.shape)",
    "nn.init.zeros_(Net().conv.weight)",
    "w = getattr(Net().conv, 'weight')",
    "print(Net().conv._parameters)",
    "print([p.shape for p in Net().parameters()])",
    "print(list(Net().named_parameters()))",
    "sd = Net().state_dict()",
    "for k, v in Net().state_dict().items():\n    print(k, v.shape)",
])
def test_a_program_showing_the_weight_builds_the_runtime_conv1d(shows):
    code = convert_source(NATIVE + "\n\n" + shows + "\n", "shows33.py").code
    assert "self.conv = mp_nn.Conv1d(" in code, code
