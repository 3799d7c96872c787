"""A Conv1d is MindSpore's own ``nn.Conv1d`` in a project where no code touches a layer's kernel_size, stride,
dilation or padding (issue 30: native ports; ``mindport.migrator.project.conv1d_settings_unread``). The runtime's
``mindport.runtime.layers.Conv1d`` is MindSpore's Conv1d that reads those settings back as torch's 1-tuples (MindSpore
keeps them 2-D, ``(1, k)``) and takes the explicit (0, 0) the conversion writes for torch's ``padding='valid'``; where
nothing reads them, MindSpore's own class computes the same convolution, with 0 for 'valid' (it refuses a tuple).
Type checks (``isinstance(m, nn.Conv1d)``) name the same class the builds are, and a star-arg factory
(``nn.Conv1d(*args, **kwargs)``, guided-diffusion's ``conv_nd``) gets a native factory instead of the runtime adapter.
A read of one of the settings on anything but ``self`` (in any file of the project), a subclass of Conv1d, a
``getattr`` by a computed name (of anything but ``self`` or a module) keep the runtime class; a called ``.stride()``
(a tensor's method), ``getattr(self, name)``, ``getattr(nn, activation)`` and ``vars(args)`` do not. Expected values come from torch;
the fixtures are written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_path, convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def conv_nd(dims, *args, **kwargs):
        if dims == 1:
            return nn.Conv1d(*args, **kwargs)
        return nn.Conv2d(*args, **kwargs)


    class Net(nn.Module):
        def __init__(self, c=4, p='valid', q=2, r=(1,)):
            super().__init__()
            self.stride = 1  # the class's own attribute, read through self
            self.a = nn.Conv1d(c, 6, 3, padding='valid')
            self.b = nn.Conv1d(6, 6, 3, padding=p)
            self.c = nn.Conv1d(6, 6, 5, padding=q, dilation=2, groups=2)
            self.d = conv_nd(1, 6, 5, 3, padding='same', bias=False)
            self.e = nn.Conv1d(5, 5, 1, stride=self.stride)
            self.f = conv_nd(1, 5, 5, 3, padding=p)
            self.g = nn.Conv1d(5, 4, 3, stride=2, padding=(1,))
            self.convs = sum(isinstance(m, nn.Conv1d) for m in self.modules())

        def forward(self, x):
            h = self.c(F.relu(self.b(self.a(x))))
            return self.g(self.f(self.e(self.d(h)))) * self.convs
""")


def test_a_conv1d_no_code_reads_the_settings_of_is_mindspores():
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    code = result.code
    # MindSpore's own Conv1d, never the adapter; the factory of conv_nd's *args call normalises its run-time sizes
    # (a list or numpy ints, which MindSpore's Conv1d refuses) with the adapter's own mp_adapt.layer_sizes
    assert "mp_nn.Conv1d" not in code and "mp_adapt.api(" not in code, code
    assert "self.a = nn.Conv1d(in_channels=c, out_channels=6, kernel_size=3, padding=0, has_bias=True, " \
           "pad_mode='valid')" in code, code
    assert "self.b = nn.Conv1d(in_channels=6, out_channels=6, kernel_size=3, padding=(0 if p == 'valid' else " in code
    assert "return make_conv1d(*args, **kwargs)" in code, code
    assert "isinstance(m, nn.Conv1d)" in code, code


def test_reads_of_no_layers_setting_keep_the_native_conv1d():
    code = convert_source(SOURCE + textwrap.dedent("""


        def inspect(x, net, args):
            layer = getattr(net, 'a')  # a literal name that is none of the settings
            act = getattr(nn, args.act)  # a module's namespace
            return x.stride(), layer, act, vars(args)  # a tensor's method; a namespace read whole
    """)).code
    assert "self.a = nn.Conv1d(" in code and "isinstance(m, nn.Conv1d)" in code, code


@pytest.mark.parametrize("read", [
    "print(Net().a.kernel_size[0])",  # a read on another object
    "n = getattr(Net().b, name)",  # a name known at run time
    "n = getattr(Net().b, 'padding')",  # the setting by its name
    "print(Net().modules())\nprint(getattr(Net().c, 'dilation'))",  # by its name, any receiver but self
    "class Causal(nn.Conv1d):\n    def forward(self, x):\n        return super().forward(F.pad(x, (self.padding[0], 0)))",
    "from torch.nn import Conv1d as C\n\n\nclass Causal(C):\n    pass",  # a subclass through another name
    "C = nn.Conv1d\n\n\nclass Causal(C):\n    pass",
])
def test_a_read_of_the_settings_keeps_the_runtime_conv1d(read):
    code = convert_source(SOURCE + "\n\n" + read + "\n").code
    assert "self.a = mp_nn.Conv1d(in_channels=c, out_channels=6, kernel_size=3, padding=(0, 0)" in code, code
    assert "isinstance(m, mp_nn.Conv1d)" in code, code  # the class the builds are
    # conv_nd's star-arg call: a factory over the same runtime class (timm53: a layer class whose every build is the
    # runtime's Cell is written out, never bound by name through the adapter)
    assert "mp_adapt.api(" not in code and "return mp_nn.Conv1d(in_channels=in_channels" in code, code
    assert "nn.Conv1d(in_channels=in_channels" not in code.replace("mp_nn.Conv1d(in_channels=in_channels", ""), code


def test_a_read_in_another_file_of_the_project_keeps_the_runtime_conv1d(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "net.py").write_text(SOURCE)
    for reader in ("", "import net\n\nprint(net.Net().g.stride[0])\n"):
        (src / "use.py").write_text(reader or "import net\n\nmodel = net.Net()\n")
        out = tmp_path / ("out_read" if reader else "out")
        report = convert_path(src, out, jobs=1, use_cache=False)
        assert all(f.status != "failed" for f in report.files), report.files
        code = (out / "net.py").read_text()
        if reader:
            assert "self.g = mp_nn.Conv1d(" in code and "isinstance(m, mp_nn.Conv1d)" in code, code
        else:
            assert "self.g = nn.Conv1d(" in code and "isinstance(m, nn.Conv1d)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_native_conv1d_matches_torch(mode, tmp_path):
    result = convert_source(SOURCE)
    assert "mp_nn.Conv1d(" not in result.code, result.code
    x = np.random.default_rng(0).standard_normal((2, 4, 17)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "conv1d", mode, rtol=1e-5, atol=1e-5)
