"""Module idioms of real models (failure class 5): each converts and the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches


def test_next_of_parameters_reads_the_first_parameter(tmp_path):
    """``next(self.parameters()).dtype`` (diffusion UNets cast their input to the weights' dtype): torch's
    parameters() is a generator; trainable_params() is a list, which next() refuses."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.full((4,), 2.0), requires_grad=False)
                self.fc = nn.Linear(4, 3)

            @property
            def inner_dtype(self):
                return next(self.parameters()).dtype

            def forward(self, x):
                first = next(self.parameters(), None)
                return self.fc(x.type(self.inner_dtype) * first)
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    # in a model's method: the class attribute GRAPH_MODE compiles (test_first_parameter_in_graph.py); with a
    # default, the generator
    assert "return self._mp_first_parameter.dtype" in result.code
    assert "next(self.get_parameters(), None)" in result.code
    assert_port_matches(source, result.code, "Net", (2, 4), tmp_path, "nextparam", atol=1e-6)


def test_an_empty_buffer_is_none(tmp_path):
    """``register_buffer('scale', None)`` on one branch (rotary embeddings without xpos): the attribute reads None
    (ms.Parameter(None) raised), the other branch's buffer is a frozen Parameter; a non-persistent empty buffer (a
    cache PaLM fills in forward) stays a buffer, which a later register_buffer may fill; the port matches."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Scaled(nn.Module):
            def __init__(self, dim, use_scale):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.register_buffer('cache', None, persistent=False)
                if not use_scale:
                    self.register_buffer('scale', None)
                    return
                self.register_buffer('scale', torch.linspace(0.5, 1.5, dim))

            def cached(self, n):
                if self.cache is None or self.cache.shape[0] < n:
                    self.register_buffer('cache', torch.arange(n) * 0.5, persistent=False)
                return self.cache[:n]

            def forward(self, x):
                y = self.fc(x) + self.cached(x.shape[-1])
                return y if self.scale is None else y * self.scale


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Scaled(4, False)
                self.b = Scaled(4, True)

            def forward(self, x):
                return self.b(self.a(x))
    """)
    result = convert_source(source)
    # the cache re-registered in forward: keep_buffer, with the MP107 that a graph builds it on each call
    assert [(d.code, "caches self.cache in a buffer" in d.message) for d in result.diagnostics] == [("MP107", True)], \
        [d.format() for d in result.diagnostics]
    assert "self.scale = None" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 4), tmp_path, "nonebuf", atol=1e-6)
    assert not report.missing and not report.unexpected, report


WEIGHT_NORM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils import weight_norm, remove_weight_norm


    def norm_conv(conv, norm='weight_norm'):
        return weight_norm(conv) if norm == 'weight_norm' else conv


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([norm_conv(nn.Conv1d(3 if i == 0 else 6, 6, 3, padding=1)) for i in range(2)])
            self.up = weight_norm(nn.ConvTranspose1d(6, 4, 4, 2, 1))
            self.last = weight_norm(nn.Linear(4 * 16, 5, bias=False))
            self.last.weight_g.data.fill_(1)
            self.last.weight_g.requires_grad = False

        def remove_weight_norm(self):
            for conv in self.convs:
                remove_weight_norm(conv)

        def forward(self, x):
            for conv in self.convs:
                x = torch.tanh(conv(x))
            return self.last(self.up(x).flatten(1))
""")


def test_weight_norm_reparametrises_like_torch(tmp_path):
    """``weight_norm(conv)`` (HiFi-GAN, EnCodec, DINO's head) kept torch's hook, which a Cell lacks
    (``_forward_pre_hooks``): the runtime splits the weight into weight_g and weight_v with torch's names and shapes
    (Conv1d's 3-D too), so the checkpoint lands by name, ``weight_g.data.fill_(1)`` works, and after
    ``remove_weight_norm`` the plain weight holds g * v / ||v||."""
    result = convert_source(WEIGHT_NORM)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_nn.weight_norm(" in result.code and "mp_nn.remove_weight_norm(conv)" in result.code
    report = assert_port_matches(WEIGHT_NORM, result.code, "Net", (2, 3, 8), tmp_path, "wnorm", atol=1e-5)
    assert not report.missing and not report.unexpected, report
    assert "convs.0.weight_v" in report.mapping and "last.weight_g" in report.mapping


def test_remove_weight_norm_keeps_the_weight(tmp_path):
    import mindspore as ms
    import numpy as np
    import torch

    from mindport import transfer_weights
    from port_check import load_module

    code = convert_source(WEIGHT_NORM).code
    torch_net = load_module(WEIGHT_NORM, tmp_path / "t_rwn.py", "t_rwn").Net().eval()
    ms_net = load_module(code, tmp_path / "m_rwn.py", "m_rwn").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    torch_net.remove_weight_norm()
    ms_net.remove_weight_norm()
    names = [n for n, _ in ms_net.parameters_and_names()]
    assert "convs.0.weight" in names and "convs.0.weight_g" not in names
    x = np.random.default_rng(1).standard_normal((2, 3, 8)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


CHOSEN_NORM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils import weight_norm, spectral_norm


    class Net(nn.Module):
        def __init__(self, use_spectral_norm=False):
            super().__init__()
            norm_f = weight_norm if use_spectral_norm == False else spectral_norm
            self.convs = nn.ModuleList([norm_f(nn.Conv2d(1, 4, (3, 1), (2, 1), padding=(1, 0))),
                                        norm_f(nn.Conv2d(4, 4, (3, 1), 1, padding=(1, 0)))])
            self.post = norm_f(nn.Conv1d(4, 1, 3, padding=1))

        def forward(self, x):
            b, c, t = x.shape
            x = x.view(b, c, t // 2, 2)
            for conv in self.convs:
                x = torch.tanh(conv(x))
            return self.post(x.flatten(2))
""")


def test_norm_chosen_between_weight_norm_and_spectral_norm(tmp_path):
    """``norm_f = weight_norm if use_spectral_norm == False else spectral_norm`` (GAN discriminators): spectral_norm
    had no mapping, so the line kept torch's functions and torch's hook code ran on a Cell (``_forward_pre_hooks``).
    Both are runtime reparametrisations now, with torch's parameter names (weight_orig, weight_u, weight_v), so a
    checkpoint lands by name and the stored power-iteration vectors give torch's weight in eval mode."""
    result = convert_source(CHOSEN_NORM)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_nn.weight_norm if use_spectral_norm == False else mp_nn.spectral_norm" in result.code
    report = assert_port_matches(CHOSEN_NORM, result.code, "Net", (2, 1, 16), tmp_path, "wnorm_f", atol=1e-5)
    assert not report.missing and not report.unexpected and "post.weight_v" in report.mapping, report

    import mindspore as ms
    import numpy as np
    import torch

    from mindport import transfer_weights
    from port_check import load_module

    torch.manual_seed(0)
    torch_net = load_module(CHOSEN_NORM, tmp_path / "t_snorm.py", "t_snorm").Net(True)
    ms_net = load_module(result.code, tmp_path / "m_snorm.py", "m_snorm").Net(True)
    report = transfer_weights(torch_net.state_dict(), ms_net)
    assert not report.missing and not report.unexpected and "convs.1.weight_u" in report.mapping, report
    x = np.random.default_rng(0).standard_normal((2, 1, 16)).astype(np.float32)
    ms_net.set_train(True)  # a training forward: one power-iteration step on each side
    for train in (True, False):
        torch_net.train(train)
        ms_net.set_train(train)
        with torch.no_grad():
            want = torch_net(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_spectral_norm_power_iteration_in_training_mode():
    """In training mode each forward runs a power-iteration step and stores u and v (torch's pre-hook); the weight
    then divides by the new sigma. The stepped vectors and the output match torch's; remove_spectral_norm leaves a
    plain parameter holding the normalised weight."""
    import mindspore as ms
    import numpy as np
    import torch
    from mindspore import nn as ms_nn

    from mindport import transfer_weights
    from mindport.runtime import layers as mp_nn

    torch.manual_seed(0)
    t = torch.nn.utils.spectral_norm(torch.nn.Linear(6, 4), n_power_iterations=2)
    m = mp_nn.spectral_norm(ms_nn.Dense(6, 4), n_power_iterations=2)
    transfer_weights(t.state_dict(), m)
    m.set_train(True)
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    for _ in range(3):
        want = t(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.weight_u.asnumpy(), t.weight_u.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.weight_v.asnumpy(), t.weight_v.numpy(), rtol=1e-5, atol=1e-6)
    t.eval()
    torch.nn.utils.remove_spectral_norm(t)
    mp_nn.remove_spectral_norm(m)
    assert sorted(n for n, _ in m.parameters_and_names()) == ["bias", "weight"]
    np.testing.assert_allclose(m.weight.asnumpy(), t.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_attention_called_with_torch_keywords(tmp_path):
    """``self.attn(q, k, value=src, attn_mask=m, key_padding_mask=None)[0]`` (DETR): MindSpore 2.10's
    MultiheadAttention.__call__ read args[2] though value came by keyword (IndexError); the runtime subclass takes
    torch's forward arguments."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, d=8):
                super().__init__()
                self.attn = nn.MultiheadAttention(d, 2)
                self.register_buffer('mask', torch.triu(torch.full((5, 5), float('-inf')), 1))

            def forward(self, src):
                src = src.transpose(0, 1)
                q = k = src + 1.0
                out = self.attn(q, k, value=src, attn_mask=self.mask, key_padding_mask=None, need_weights=False)[0]
                return out.transpose(0, 1)
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_nn.MultiheadAttention(" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 5, 8), tmp_path, "mhakw", atol=1e-5)
    assert not report.missing and not report.unexpected, report


SCRIPT_MODULE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(torch.jit.ScriptModule):
        def __init__(self, d=4):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.bn = nn.BatchNorm1d(d)

        @torch.jit.script_method
        def forward(self, x):
            return torch.relu(self.bn(self.fc(x))) + x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Block(), Block())

        def forward(self, x):
            return self.blocks(x)
""")


def test_a_script_module_subclass_is_a_cell(tmp_path):
    """``class Block(torch.jit.ScriptModule)`` with ``@torch.jit.script_method`` (stochastic-depth ResNets): an
    nn.Module whose methods TorchScript compiles; converted, a Cell whose forward is construct, matching torch."""
    from port_check import assert_port_matches_in_mode

    code = convert_source(SCRIPT_MODULE).code
    assert "class Block(nn.Cell):" in code and "def construct(self, x):" in code, code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SCRIPT_MODULE, code, "Net", [x], tmp_path, "script", "pynative", atol=1e-5)


SCRIPTED_SCALAR_MATH = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import jit


class Actor(jit.ScriptModule):
    def __init__(self, init_std=5, min_std=1e-4):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self._init_std = init_std
        self._min_std = min_std

    @jit.script_method
    def forward(self, x):
        raw_init_std = torch.log(torch.exp(self._init_std) - 1)
        mean, std = torch.chunk(self.fc(x), 2, dim=1)
        return torch.tanh(mean) + F.softplus(std + raw_init_std) + self._min_std
"""


def test_torch_math_of_a_python_number_in_a_scripted_method(tmp_path):
    """TorchScript's math functions take Python numbers (``torch.exp(self._init_std)`` with an int attribute, the
    Dreamer actor), which eager torch refuses: the port computes them as float32 0-d tensors and matches."""
    from port_check import assert_port_matches_in_mode

    code = convert_source(SCRIPTED_SCALAR_MATH).code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SCRIPTED_SCALAR_MATH, code, "Actor", [x], tmp_path, "scalarmath", "pynative",
                                atol=1e-5)
