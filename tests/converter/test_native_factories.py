"""Native factories (mindport/migrator/factories.py): a torch class called with ``*args``/``**kwargs`` (the diffusion
UNets' ``linear(*args, **kwargs)``, ``avg_pool_nd(dims, *args, **kwargs)``) is built by a function written into the
converted file, torch's parameters and MindSpore's class with each bound statically, where the entry allows it for
every value; the port then needs no mindport. Real torch, real MindSpore, PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

HELPERS = """
import torch
import torch.nn as nn


def linear(*args, **kwargs):
    return nn.Linear(*args, **kwargs)


def avg_pool_nd(dims, *args, **kwargs):
    if dims == 1:
        return nn.AvgPool1d(*args, **kwargs)
    elif dims == 2:
        return nn.AvgPool2d(*args, **kwargs)
    raise ValueError(f"unsupported dimensions: {dims}")


def normalization(channels, **kwargs):
    return nn.GroupNorm(2, channels, **kwargs)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = normalization(4, eps=1e-3)
        self.pool = avg_pool_nd(2, kernel_size=2, stride=2)
        self.pool_pad = avg_pool_nd(2, 3, 1, 1, count_include_pad=False)
        self.fc = linear(36, 3, bias=False)
        self.out = linear(3, 2)

    def forward(self, x):
        y = self.pool(self.norm(x)) + self.pool_pad(x)[:, :, :3, :3]
        return self.out(self.fc(torch.flatten(y, 1)))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_classes_called_with_star_arguments_are_built_by_native_factories(mode, tmp_path):
    result = convert_source(textwrap.dedent(HELPERS))
    assert not result.diagnostics, result.diagnostics
    code = result.code
    assert "mp_adapt.api(" not in code  # was mp_adapt.api("torch.nn.Linear")(*args, **kwargs)
    # the pooling sizes arrive at run time: read as the adapter reads them (a list, a numpy integer), by its code
    assert "mindport" not in code.replace("from mindport.runtime import adapt as mp_adapt", "").replace(
        "kernel_size, stride, padding = mp_adapt.layer_sizes(kernel_size=kernel_size, stride=stride, padding=padding)",
        ""), code
    assert "def make_linear(in_features, out_features, bias=True, device=None, dtype=None):" in code
    assert "return make_linear(*args, **kwargs)" in code and "return make_avgpool2d(*args, **kwargs)" in code
    assert "nn.GroupNorm(num_groups=num_groups, num_channels=num_channels, eps=float(eps), affine=affine, dtype=dtype or ms.float32)" in code
    assert code.index("def make_linear(") < code.index("def linear(")  # defined before the helper that calls it
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(HELPERS), code, "Net", [x], tmp_path, "factories", mode,
                                rtol=1e-5, atol=1e-5)


def test_a_factory_name_never_shadows_a_name_of_the_file():
    code = convert_source(textwrap.dedent("""
        import torch.nn as nn

        make_linear = 3


        def linear(*args, **kwargs):
            return nn.Linear(*args, **kwargs)
    """)).code
    assert "def make_linear_(in_features," in code and "return make_linear_(*args, **kwargs)" in code
    assert "make_linear = 3" in code


def test_a_class_whose_conversion_needs_a_run_time_decision_is_decided_by_its_factory_or_keeps_the_adapter():
    # LayerNorm's elementwise_affine and bias choose the MindSpore class by their values: the factory decides when it
    # is called (native19: several bool switches); Dropout starts in training mode and is built outside a class: the
    # adapter (a factory there would need .set_train() on what it builds)
    code = convert_source(textwrap.dedent("""
        import torch.nn as nn


        def norm(*args, **kwargs):
            return nn.LayerNorm(*args, **kwargs)


        def drop(*args, **kwargs):
            return nn.Dropout(*args, **kwargs)
    """)).code
    assert 'return make_layernorm(*args, **kwargs)' in code
    assert "    if not elementwise_affine and bias:\n        return mp_nn.OptionalAffineLayerNorm(" in code
    assert 'mp_adapt.api("torch.nn.Dropout")(*args, **kwargs)' in code and "def make_dropout" not in code


CONV3D_MODE = """
import torch.nn as nn


def conv(c, mode):
    return nn.Conv3d(c, c, 3, padding=1, padding_mode=mode)
"""


def test_a_padding_mode_given_by_a_name_is_decided_when_the_layer_is_built(tmp_path):
    # A padding_mode held by a name was once converted as if it were 'zeros' (conv(2, "reflect") built a zero-padded
    # convolution silently); it is decided when the layer is built: 'reflect' is the mode-padded Conv3d (layers12),
    # 'zeros' MindSpore's own, and both match torch
    import mindspore as ms
    import torch

    code = convert_source(textwrap.dedent(CONV3D_MODE)).code
    # the file's own factory (native12b: a layer built with run-time settings) or the adapter
    assert ('make_conv3d(c, c, 3, padding=1, padding_mode=mode)' in code
            or 'mp_adapt.api("torch.nn.Conv3d")(c, c, 3, padding=1, padding_mode=mode)' in code), code
    module = load_module(code, tmp_path / "m_conv3d_mode.py", "m_conv3d_mode")
    torch_module = load_module(textwrap.dedent(CONV3D_MODE), tmp_path / "t_conv3d_mode.py", "t_conv3d_mode")
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5, 5)).astype(np.float32)
    for mode in ("zeros", "reflect"):
        torch_conv, ms_conv = torch_module.conv(2, mode), module.conv(2, mode)
        ms_conv.weight.set_data(ms.Tensor(torch_conv.weight.detach().numpy()))
        ms_conv.bias.set_data(ms.Tensor(torch_conv.bias.detach().numpy()))
        with torch.no_grad():
            want = torch_conv(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(ms_conv(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5, err_msg=mode)


BASES = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupNorm32(nn.GroupNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class Linear(nn.Linear):
    \"\"\"Weights cast to the input's dtype.\"\"\"
    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype), None if self.bias is None else self.bias.to(x.dtype))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = GroupNorm32(2, 4, eps=1e-3)
        self.fc = Linear(4, 3, bias=False)
        self.out = Linear(3, 2)

    def forward(self, x):
        return self.out(self.fc(self.norm(x).mean(-1)))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_torch_layer_base_of_a_class_without_init_is_mindspores_class_with_torchs_parameters(mode, tmp_path):
    code = convert_source(textwrap.dedent(BASES)).code
    assert "mp_adapt" not in code  # was class GroupNorm32(mp_adapt.api("torch.nn.GroupNorm"))
    assert "class GroupNorm32(nn.GroupNorm):\n    def __init__(self, num_groups, num_channels, eps=1e-05" in code
    assert "super().__init__(in_channels=in_features, out_channels=out_features, has_bias=bias, dtype=dtype or ms.float32)" in code
    assert code.index('"""Weights cast') < code.index("def __init__(self, in_features")  # after the docstring
    x = np.random.default_rng(0).standard_normal((2, 4, 5)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(BASES), code, "Net", [x], tmp_path, "bases", mode,
                                rtol=1e-5, atol=1e-5)


def test_a_base_whose_class_has_an_init_or_needs_a_run_time_choice_is_the_files_value_class():
    code = convert_source(textwrap.dedent("""
        import torch.nn as nn


        class Own(nn.Linear):
            def __init__(self, n):
                super().__init__(n, n)


        class Norm(nn.LayerNorm):
            pass
    """)).code
    # native19: the class of the file standing for torch's (factories.value_class_def), was mp_adapt.api(...)
    assert 'class Own(TorchLinear):' in code and "class TorchLinear(nn.Dense, metaclass=TorchLayerType):" in code
    assert 'class Norm(TorchLayerNorm):' in code and "mp_adapt" not in code


PARTIAL = """
from functools import partial

import torch
import torch.nn as nn

LinearNoBias = partial(nn.Linear, bias=False)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = LinearNoBias(4, 3)
        self.out = partial(nn.Linear, 3)(2)

    def forward(self, x):
        return self.out(self.fc(x))
"""


def test_a_torch_class_given_to_partial_is_its_native_factory(tmp_path):
    code = convert_source(textwrap.dedent(PARTIAL)).code
    assert "LinearNoBias = partial(make_linear, bias=False)" in code and "partial(make_linear, 3)(2)" in code
    assert "mindport" not in code.replace("MindSpore's", "")  # was partial(mp_adapt.api("torch.nn.Linear"), ...)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(PARTIAL), code, "Net", [x], tmp_path, "partial", "pynative",
                                rtol=1e-5, atol=1e-5)


TYPE_TESTS = """
import torch.nn as nn


def kind(m):
    whitelist = (nn.Linear, )
    blacklist = (nn.LayerNorm, nn.Embedding)
    if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
        return 1
    if isinstance(m, whitelist):
        return 2
    return 3 if type(m) in blacklist else 4
"""


def test_tuples_of_classes_only_read_by_type_tests_hold_mindspores_classes(tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(textwrap.dedent(TYPE_TESTS)).code
    assert "whitelist = (nn.Dense, )" in code and "blacklist = (nn.LayerNorm, nn.Embedding)" in code
    assert "mindport" not in code  # was (mp_adapt.api("torch.nn.Linear"), ): the adapters test these classes
    converted = load_module(code, tmp_path / "m_type_tests.py", "m_type_tests").kind
    original = load_module(textwrap.dedent(TYPE_TESTS), tmp_path / "t_type_tests.py", "t_type_tests").kind
    pairs = [(torch.nn.Linear(2, 2), ms.nn.Dense(2, 2)), (torch.nn.LayerNorm(2), ms.nn.LayerNorm((2,))),
             (torch.nn.Embedding(3, 2), ms.nn.Embedding(3, 2)), (torch.nn.Conv2d(1, 1, 1), ms.nn.Conv2d(1, 1, 1)),
             (torch.nn.ReLU(), ms.nn.ReLU())]
    assert [converted(b) for _, b in pairs] == [original(a) for a, _ in pairs] == [2, 3, 3, 1, 4]


def test_a_tuple_of_classes_also_used_otherwise_is_the_files_value_classes():
    code = convert_source(textwrap.dedent("""
        import torch.nn as nn


        def build(m, c):
            norms = (nn.LayerNorm, nn.GroupNorm)
            if isinstance(m, norms):
                return m
            return norms[0](c)
    """)).code
    assert 'norms = (TorchLayerNorm, TorchGroupNorm)' in code and "mp_adapt" not in code  # was the adapters


CONV_MODES = """
import torch
import torch.nn as nn


def conv(c, mode, **kwargs):
    return nn.Conv2d(c, c, 3, padding=1, padding_mode=mode, **kwargs)
"""


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_a_conv2d_whose_padding_mode_is_known_at_run_time_is_built_by_a_factory_deciding_the_class(mode, tmp_path):
    """issue 30: ``nn.Conv2d(..., padding_mode=mode, **kwargs)`` was ``mp_adapt.api("torch.nn.Conv2d")(...)``; now a
    factory with torch's parameters builds MindSpore's nn.Conv2d for 'zeros' and the runtime's ModePaddedConv2d for
    the other modes (the entry's switch), each matching torch; a mode torch refuses raises as torch does."""
    import mindspore as ms
    import torch

    code = convert_source(textwrap.dedent(CONV_MODES)).code
    assert "mp_adapt.api(" not in code and "return make_conv2d(c, c, 3, padding=1, padding_mode=mode, **kwargs)" in code
    assert "    if padding_mode in ('reflect', 'replicate', 'circular'):\n        return mp_nn.ModePaddedConv2d(" in code
    module = load_module(code, tmp_path / f"m_conv_{mode}.py", f"m_conv_{mode}")
    torch_module = load_module(textwrap.dedent(CONV_MODES), tmp_path / f"t_conv_{mode}.py", f"t_conv_{mode}")
    torch_conv, ms_conv = torch_module.conv(2, mode, bias=False), module.conv(2, mode, bias=False)
    assert type(ms_conv).__name__ == ("Conv2d" if mode == "zeros" else "ModePaddedConv2d")
    ms_conv.weight.set_data(ms.Tensor(torch_conv.weight.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
    with torch.no_grad():
        want = torch_conv(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_conv(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        torch_module.conv(2, "mirror")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        module.conv(2, "mirror")


LAYER_VALUES = """
import torch
import torch.nn as nn


def conv_bn(c, o, conv_layer=nn.Conv2d, norm_layer=nn.BatchNorm2d, **kwargs):
    return nn.Sequential(conv_layer(c, o, 3, padding=1, **kwargs), norm_layer(o))


class Block(nn.Module):
    def __init__(self, c, act_layer=nn.ReLU, conv_layer=nn.Conv2d, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.body = conv_bn(c, c, conv_layer=conv_layer, norm_layer=norm_layer, **kwargs)
        self.act = act_layer(inplace=True) if act_layer is not None else nn.Identity()

    def forward(self, x):
        return self.act(self.body(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block(3, bias=False)
        self.b = Block(3, act_layer=nn.SiLU, padding_mode="reflect")

    def forward(self, x):
        return self.b(self.a(x))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_classes_passed_as_values_only_ever_called_are_native_factories(mode, tmp_path):
    """issue 30 (timm's ``conv_layer=nn.Conv2d``, ``norm_layer=nn.BatchNorm2d``, ``act_layer=nn.ReLU``): a layer class
    passed as a value whose every use is a call (with ``**kwargs``: no one call shape) or a test against None was the
    runtime adapter bound by a torch name in a string; now the file's native factory, which takes torch's parameters."""
    result = convert_source(textwrap.dedent(LAYER_VALUES))
    assert not result.diagnostics, result.diagnostics
    code = result.code
    assert "mp_adapt.api(" not in code, code
    assert "conv_layer=make_conv2d" in code and "act_layer=make_relu" in code and "act_layer=make_silu" in code
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(LAYER_VALUES), code, "Net", [x], tmp_path, f"values_{mode}", mode,
                                rtol=1e-4, atol=1e-5)


def test_a_layer_class_value_also_used_otherwise_is_the_files_value_class():
    code = convert_source(textwrap.dedent("""
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self, c, norm_layer=nn.BatchNorm2d, act_layer=nn.ReLU, **kwargs):
                super().__init__()
                self.norm = norm_layer(c, **kwargs)
                self.act = act_layer(**kwargs)
                self.fused = isinstance(self.norm, norm_layer) and act_layer == nn.ReLU
    """)).code
    assert 'norm_layer=TorchBatchNorm2d' in code and 'act_layer=TorchReLU' in code and "mp_adapt" not in code
    assert "isinstance(self.norm, norm_layer) and act_layer == TorchReLU" in code
