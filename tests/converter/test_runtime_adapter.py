"""Calls whose arguments are only known at run time (``**kwargs``/``*args`` at the call site, ``functools.partial``,
torch APIs passed as values, helper factories) go to the runtime adapter (mindport/runtime/adapt.py), which maps them
through the same entry when the call happens. Checked on the converted text and by running both frameworks."""
from __future__ import annotations

import functools
import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.migrator.weights import transfer_weights
from mindport.runtime import adapt
from tests.source_module import load_source

MODEL = textwrap.dedent('''\
    from functools import partial

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def make_conv(*args, **kwargs):
        return nn.Conv2d(*args, **kwargs)


    def linear(*a, **k):
        return nn.Linear(*a, **k)


    _ACTS = dict(gelu=nn.GELU, relu=nn.ReLU, silu=nn.SiLU)


    class Block(nn.Module):
        def __init__(self, dim, norm_layer=nn.LayerNorm, act_layer="gelu", device=None, dtype=None):
            super().__init__()
            dd = {"device": device, "dtype": dtype}
            conv_args = (dim, dim)
            self.conv = nn.Conv2d(*conv_args, kernel_size=3, padding=1, bias=False, **dd)
            self.bn = nn.BatchNorm2d(dim, momentum=0.2, **dd)
            self.proj = make_conv(dim, dim, 1, padding=0)
            self.norm = norm_layer(dim)
            self.norm2 = partial(nn.LayerNorm, eps=1e-3)(dim)
            self.act = _ACTS[act_layer]()
            self.fc = linear(dim, dim, bias=True)
            self.join = partial(torch.cat, dim=1)
            self.pool = partial(F.avg_pool2d, kernel_size=2)
            if self.norm is not None and isinstance(self.norm, norm_layer) and norm_layer is nn.LayerNorm:
                self.tag = type(self.bn) in (nn.BatchNorm2d, nn.BatchNorm1d)

        def forward(self, x):
            y = self.bn(self.conv(x))
            y = self.proj(self.act(y))
            z = y.permute(0, 2, 3, 1)
            z = self.fc(self.norm2(self.norm(z))).permute(0, 3, 1, 2)
            shape = (z.shape[0], -1)
            return self.pool(self.join([x, z])).reshape(*shape)
''')


def test_run_time_arguments_convert_and_match_torch(tmp_path):
    result = convert_source(MODEL)
    assert result.diagnostics == []
    code = result.code
    assert 'return make_conv2d(*args, **kwargs)' in code  # helper factory: the file's native factory (issue 30)
    # the local dict's keywords written out (mindport/migrator/keyword_dicts.py)
    assert 'make_conv2d(*conv_args, kernel_size=3, padding=1, bias=False, device=device, dtype=dtype)' in code
    assert 'norm_layer=TorchLayerNorm' in code  # passed as a value: the file's value class (native19)
    assert 'partial(torch_cat, dim=1)' in code  # bound by name: a definition of the file (native26)
    assert '.reshape(*shape)' in code  # a method whose signature takes *shape binds statically
    assert "import torch" not in code
    t_mod, m_mod = load_source(MODEL, tmp_path, "torch_block"), load_source(code, tmp_path, "ms_block")
    for act in ("gelu", "relu", "silu"):
        torch.manual_seed(0)
        t_net, m_net = t_mod.Block(4, act_layer=act), m_mod.Block(4, act_layer=act)
        assert m_net.tag is True  # isinstance / `is` / `type(m) in (...)` on adapters
        t_net.eval()
        m_net.set_train(False)
        transfer_weights(t_net.state_dict(), m_net)
        x = np.random.default_rng(1).standard_normal((2, 4, 6, 6)).astype(np.float32)
        with torch.no_grad():
            expected = t_net(torch.tensor(x)).numpy()
        got = m_net(ms.Tensor(x)).asnumpy()
        assert got.shape == expected.shape == (2, 8 * 3 * 3)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_an_adapter_stands_for_its_target_class():
    layer_norm = adapt.api("torch.nn.LayerNorm")
    assert layer_norm is adapt.api("torch.nn.LayerNorm")
    norm = functools.partial(layer_norm, eps=1e-6)(8)
    assert isinstance(norm, ms.nn.LayerNorm) and isinstance(norm, layer_norm)
    assert not isinstance(norm, adapt.api("torch.nn.BatchNorm2d"))
    assert layer_norm == ms.nn.LayerNorm and hash(layer_norm) == hash(ms.nn.LayerNorm)
    assert {ms.nn.LayerNorm: "ln"}[layer_norm] == "ln" and type(norm) in (layer_norm,)
    assert issubclass(ms.nn.LayerNorm, layer_norm) and layer_norm.__name__ == "LayerNorm"
    # a class adapter is a class: code that checks what it was given (a type, a Cell subclass) accepts it
    assert isinstance(layer_norm, type) and issubclass(layer_norm, ms.nn.Cell)
    assert not isinstance(adapt.api("torch.cat"), type) and callable(adapt.api("torch.cat"))

    class Wider(layer_norm):  # an adapter as a base class (converted `class Wider(nn.LayerNorm)`): a subclass of
        pass                  # the MindSpore class whose construction takes torch's arguments, as the source did

    wider = Wider(8, eps=1e-3)
    assert wider.epsilon == pytest.approx(1e-3) and tuple(wider.normalized_shape) == (8,)
    assert type(wider) is Wider and isinstance(wider, ms.nn.LayerNorm) and Wider != layer_norm
    assert adapt.api("torch.float32") is ms.float32  # an attribute entry is its target


def test_run_time_values_take_the_same_transforms_as_source():
    bn = adapt.api("torch.nn.BatchNorm2d")(3, **{"momentum": 0.25, "eps": 1e-3})
    assert bn.momentum == pytest.approx(0.25) and bn.eps == pytest.approx(1e-3)  # momentum went through one_minus
    padding = 2
    conv = adapt.api("torch.nn.Conv2d")(1, 1, 5, **{"padding": padding})
    assert (conv.pad_mode, conv.padding) == ("pad", 2)
    assert adapt.api("torch.nn.Conv2d")(1, 1, 3, padding="same").pad_mode == "same"
    x = ms.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert adapt.api("torch.Tensor.view")(x, 6, 4).shape == (6, 4)  # a method: the receiver goes first
    assert adapt.api("torch.transpose")(x, 0, 2).shape == (4, 3, 2)  # a function whose target is a method
    assert adapt.api("torch.zeros")(*(2, 3)).shape == (2, 3)  # *size


def test_run_time_values_with_no_equivalent_raise_naming_the_entry():
    with pytest.raises(adapt.Unsupported, match="torch.nn.Embedding.*max_norm"):
        adapt.api("torch.nn.Embedding")(4, 2, **{"max_norm": 1.0})
    # a value with an equivalent goes through (reflect padding: the mode-padded conv)
    assert adapt.api("torch.nn.Conv2d")(1, 1, 3, **{"padding_mode": "reflect"}).padding_mode == "reflect"
    with pytest.raises(TypeError, match="torch.nn.Linear: unexpected keyword argument 'bogus'"):
        adapt.api("torch.nn.Linear")(2, 2, bogus=1)
    with pytest.raises(LookupError, match="no mapping entry"):
        adapt.api("torch.not_an_api")


def test_mint_profile_names_its_adapter():
    code = convert_source("import torch.nn as nn\n\n\ndef conv(**kw):\n    return nn.Conv2d(1, 2, 3, **kw)\n",
                          target="mint").code
    assert 'mp_adapt.api("torch.nn.Conv2d", "mint")(1, 2, 3, **kw)' in code


def test_the_adapter_follows_the_entrys_switch():
    """nn.ReLU(**kw) with inplace=True known only at run time: the entry's switch sends it to the in-place cell, which
    writes its result into its input as torch's does."""
    import numpy as np
    import torch

    import mindspore as ms
    from mindport.runtime import adapt

    kw = {"inplace": True}
    data = np.array([[-1.0, 2.0, -3.0]], np.float32)
    x_torch, x_ms = torch.tensor(data), ms.Tensor(data)
    y_torch = torch.nn.ReLU(**kw)(x_torch)
    y_ms = adapt.api("torch.nn.ReLU")(**kw)(x_ms)
    np.testing.assert_array_equal(y_ms.asnumpy(), y_torch.numpy())
    np.testing.assert_array_equal(x_ms.asnumpy(), x_torch.numpy())  # the input changed, in both


def test_a_torch_namespace_read_by_a_run_time_name(tmp_path):
    """``act = getattr(torch.nn, activation)`` (EnCodec's SEANet builds its activation from a string): the runtime
    adapter of the entry named when the call happens; a name with no entry gives getattr's default."""
    from port_check import assert_port_matches

    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, activation='ELU', params={'alpha': 1.0}):
                super().__init__()
                act = getattr(torch.nn, activation)
                self.missing = getattr(nn, 'No' + activation, None)
                self.body = nn.Sequential(nn.Linear(4, 4), act(**params), nn.Linear(4, 2), getattr(nn, 'Tanh')())

            def forward(self, x):
                assert self.missing is None
                return self.body(x)
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_adapt.attribute('torch.nn', activation)" in result.code
    assert_port_matches(source, result.code, "Net", (3, 4), tmp_path, "nsattr", atol=1e-6)


def test_a_feature_test_of_a_torch_namespace(tmp_path):
    """``hasattr(F, 'scaled_dot_product_attention')`` (nanoGPT's flash switch), ``hasattr(torch.nn, 'SiLU')``
    (EfficientNet-PyTorch's Swish): converted code asks mindport whether it maps the API, needs no torch to run, and
    takes the branch torch takes where mindport maps it; an API mindport does not map reads False."""
    from port_check import assert_port_matches

    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
                self.act = nn.SiLU() if hasattr(torch.nn, 'SiLU') else nn.Sigmoid()
                self.fallback = not hasattr(nn, 'NoSuchLayer')
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                assert self.flash and self.fallback
                return self.act(self.proj(x))
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "import torch" not in result.code and "mp_adapt.has('torch.nn', 'SiLU')" in result.code, result.code
    assert (adapt.has("torch.nn.functional", "scaled_dot_product_attention"), adapt.has("torch.nn", "NoSuchLayer"),
            adapt.has("torch.nn", "Sequential")) == (True, False, True)
    assert_port_matches(source, result.code, "Net", (3, 4), tmp_path, "nshas", atol=1e-6)


ACTIVATION_VALUE = textwrap.dedent('''\
    import torch.nn as nn
    import torch.nn.functional as F


    def _get_activation_fn(activation):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        if activation == "leaky":
            return F.leaky_relu
        raise RuntimeError(activation)


    class FeedForward(nn.Module):  # torch's TransformerEncoderLayer keeps its activation this way
        def __init__(self, dim, activation="relu"):
            super().__init__()
            self.linear1 = nn.Linear(dim, 2 * dim)
            self.linear2 = nn.Linear(2 * dim, dim)
            self.activation = _get_activation_fn(activation)

        def forward(self, x):
            return self.linear2(self.activation(self.linear1(x)))
''')


@pytest.mark.parametrize("activation", ["relu", "gelu", "leaky"])
def test_a_function_adapter_compiles_in_graph_mode(tmp_path, monkeypatch, activation):
    """A torch function held as a value and called in forward (``self.activation = F.relu``): its adapter's mapping
    (a ``try``, ``eval``) can't be compiled; in a graph the call takes the form mapped once in Python for one
    positional argument, and matches torch."""
    monkeypatch.chdir(tmp_path)  # a failed compile writes its .ir files into the working folder
    code = convert_source(ACTIVATION_VALUE).code
    # the functions a helper returns are known: MindSpore's own, bound statically (native12b's function values); the
    # adapter's own graph form is checked below (test_a_function_adapter_in_a_graph_says_what_it_cannot_map)
    assert "ops.relu" in code and "mp_adapt.api" not in code, code
    t_mod, m_mod = load_source(ACTIVATION_VALUE, tmp_path, "torch_ffn"), load_source(code, tmp_path, f"ms_ffn_{activation}")
    t_net, m_net = t_mod.FeedForward(8, activation), m_mod.FeedForward(8, activation)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = m_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_a_function_adapter_in_a_graph_says_what_it_cannot_map(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    softmin = adapt.api("torch.nn.functional.softmin")
    assert softmin.graph_form is None  # dim is required: no form for one argument (softmax takes torch's implicit dim)
    relu = adapt.api("torch.nn.functional.relu")
    x = ms.Tensor(np.ones((2, 2), np.float32))

    def relu_keyword(t):
        return relu(t, inplace=True)

    def softmin_no_dim(t):
        return softmin(t)

    with pytest.raises(TypeError, match="mindport: in GRAPH_MODE"):
        ms.jit(relu_keyword)(x)
    with pytest.raises(TypeError, match="mindport: this torch function"):
        ms.jit(softmin_no_dim)(x)


FUNCTION_VALUES = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def create_conv_func(op_type):
        if op_type == "cv":
            return F.conv2d
        if op_type == "cd":
            def func(x, weights, bias=None, stride=1, padding=0, dilation=1, groups=1):
                return F.conv2d(x, weights, bias, stride, padding, dilation, groups) - x.mean()
            return func
        raise ValueError(op_type)


    def create_resize(kind):
        return F.interpolate if kind == "interp" else F.avg_pool2d


    class PixelDiff(nn.Module):  # PiDiNet keeps its convolution this way: self.pdc(input, self.weight, ...)
        def __init__(self, op_type="cv"):
            super().__init__()
            self.pdc = create_conv_func(op_type)
            self.resize = create_resize("interp")
            self.weight = nn.Parameter(torch.randn(4, 3, 3, 3))
            self.bias = nn.Parameter(torch.randn(4))
            self.stride, self.padding, self.dilation, self.groups = 1, 1, 1, 1

        def forward(self, x):
            a = self.pdc(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
            b = self.pdc(x, self.weight, padding="same", dilation=2)
            c = self.resize(a + b, size=(5, 7), mode="bilinear", align_corners=False)
            return c, self.resize(b, scale_factor=2)
''')


@pytest.mark.parametrize("op_type", ["cv", "cd"])
def test_a_function_adapter_with_torch_arguments_compiles_in_graph_mode(tmp_path, monkeypatch, op_type):
    """A torch function held as a value and called with several arguments and keywords in forward (PiDiNet's
    ``self.pdc = F.conv2d`` ... ``self.pdc(input, self.weight, self.bias, self.stride, self.padding, ...)``, batch
    13): in a graph the adapter calls its entry's mapping written out as a function with torch's signature
    (``Adapter.graph_function``), which compiles, and matches torch in PyNative and GRAPH_MODE."""
    monkeypatch.chdir(tmp_path)
    code = convert_source(FUNCTION_VALUES).code
    assert 'mp_adapt.api("torch.nn.functional.conv2d")' in code, code
    torch.manual_seed(0)
    t_mod, m_mod = load_source(FUNCTION_VALUES, tmp_path, "torch_pdc"), load_source(code, tmp_path, f"ms_pdc_{op_type}")
    t_net, m_net = t_mod.PixelDiff(op_type), m_mod.PixelDiff(op_type)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with torch.no_grad():
        expected = [t.numpy() for t in t_net(torch.tensor(x))]
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        try:
            got = [t.asnumpy() for t in m_net(ms.Tensor(x))]
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
