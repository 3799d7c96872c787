"""Layer attribute reads give torch's value or are loud, never MindSpore's form of it, and float64 runs through the
activations whose MindSpore kernels take float16/32 only (the open items of tests/mappings/test_layer_settings.py
after layers12, /work/notes/promo13.md):

* ``padding='valid'`` of a Conv1d/2d/3d reads 'valid' (torch keeps the string; MindSpore's ``pad_mode='valid'`` was
  also what ``padding=0`` gives, so the read gave zeros): the converter writes MindSpore's explicit zero padding for
  the string (``conv_padding``), which the surface data's derived ``padding`` reads back as 'valid';
* an AdaptiveAvgPool2d's ``output_size`` reads what was passed (1, not MindSpore's (1, 1); None, not -1): the
  surface data's ``recorded`` setting, written on the Cell where the file reads the name; a layer built in a file
  that never reads it has no record and the read raises (loud), never MindSpore's pair;
* ReLU6 / Hardshrink / Softshrink on float64: mindport.runtime.layers' subclasses of MindSpore's Cells compute it by
  torch's formula (MindSpore 2.10's kernels raise TypeError).

Expected values are torch's, computed here; MindSpore runs in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from mindport import convert_source  # noqa: E402
from tests.converter.port_check import load_module  # noqa: E402

READS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Reads(nn.Module):
        def __init__(self, pad="valid"):
            super().__init__()
            self.c1 = nn.Conv1d(2, 3, 3, padding='valid')
            self.c2 = nn.Conv2d(2, 3, 3, padding='valid')
            self.c3 = nn.Conv3d(2, 3, 3, padding="valid")
            self.z2 = nn.Conv2d(2, 3, 3, padding=0)
            self.d2 = nn.Conv2d(2, 3, 3)
            self.n2 = nn.Conv2d(2, 3, 3, padding=pad)
            self.r2 = nn.Conv2d(2, 3, 3, padding='valid', padding_mode='reflect')
            self.p1 = nn.AdaptiveAvgPool2d(1)
            self.pn = nn.AdaptiveAvgPool2d((None, 2))
            self.pt = nn.AdaptiveAvgPool2d((3, 2))

        def reads(self):
            return (self.c1.padding, self.c2.padding, self.c3.padding, self.z2.padding, self.d2.padding,
                    self.n2.padding, self.r2.padding, self.p1.output_size, self.pn.output_size, self.pt.output_size)

        def forward(self, x):
            y = self.c2(x) + self.n2(x) + self.r2(x)
            scale = 2.0 if self.c2.padding == 'valid' and self.c3.padding == 'valid' else 1.0
            scale = scale * (3.0 if self.p1.output_size == 1 else 1.0)
            scale = scale * (5.0 if self.z2.padding == (0, 0) else 1.0)
            return y * scale, self.p1(x), self.pn(x)
""")


def _pair():
    import torch

    result = convert_source(READS, "reads.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    ns_t: dict = {}
    exec(compile(READS, "reads_torch.py", "exec"), ns_t)  # noqa: S102 - the test's own program
    torch.manual_seed(0)
    return ns_t["Reads"]().eval(), result.code


def test_reads_are_torch_values(tmp_path):
    t_net, code = _pair()
    m_net = load_module(code, tmp_path / "reads_ms_p.py", "reads_ms_p").Reads()
    assert m_net.reads() == t_net.reads()
    assert "padding=(0, 0, 0, 0)" in code and "pad_mode='valid'" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_reads_in_forward(tmp_path, mode):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    t_net, code = _pair()
    m_net = load_module(code, tmp_path / f"reads_ms_{mode}.py", f"reads_ms_{mode}").Reads()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 2, 7, 9)).astype(np.float32)
    with torch.no_grad():
        want = [t.numpy() for t in t_net(torch.from_numpy(x))]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [t.asnumpy() for t in m_net(ms.Tensor(x))]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_output_size_unrecorded_is_loud(tmp_path):
    """A pool built in a file that never reads ``output_size`` and read in another (class unknown there): the
    run-time accessor raises rather than give MindSpore's (1, 1)."""
    builder = convert_source("import torch.nn as nn\n\n\ndef build():\n    return nn.AdaptiveAvgPool2d(1)\n").code
    reader = convert_source("def size(m):\n    return m.output_size\n").code
    assert "layer_attribute" in reader
    layer = load_module(builder, tmp_path / "pool_builder.py", "pool_builder").build()
    with pytest.raises(AttributeError):
        load_module(reader, tmp_path / "pool_reader.py", "pool_reader").size(layer)


ACTIVATIONS = textwrap.dedent("""\
    import torch.nn as nn


    class Acts(nn.Module):
        def __init__(self):
            super().__init__()
            self.r = nn.ReLU6()
            self.ri = nn.ReLU6(inplace=True)
            self.h = nn.Hardshrink(0.3)
            self.s = nn.Softshrink(0.7)

        def forward(self, x):
            return self.r(x), self.h(x), self.s(x), self.ri(x * 2)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float64_activations(tmp_path, mode, dtype):
    import mindspore as ms
    import torch

    # a project that makes float64 tensors (this test feeds them): the runtime Cells; float32 takes their other branch
    result = convert_source(ACTIVATIONS, "acts.py", float64_free=False)
    assert not result.diagnostics
    assert "mp_nn.ReLU6()" in result.code and "mp_nn.HShrink(" in result.code and "mp_nn.SoftShrink(" in result.code
    ns_t: dict = {}
    exec(compile(ACTIVATIONS, "acts_torch.py", "exec"), ns_t)  # noqa: S102
    m_net = load_module(result.code, tmp_path / f"acts_{mode}_{dtype}.py", f"acts_{mode}_{dtype}").Acts()
    x = np.concatenate([np.linspace(-8, 8, 33), [0.3, -0.3, 0.7, -0.7, 6.0, 0.0]]).astype(dtype).reshape(3, 13)
    want = [t.numpy() for t in ns_t["Acts"]()(torch.from_numpy(x.copy()))]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [t.asnumpy() for t in m_net(ms.Tensor(x.copy()))]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-7 if dtype == "float64" else 1e-6, atol=0)


def test_float64_free_project_keeps_mindspore_layers():
    """Where no float64 tensor can come to be (mindport.migrator.project.float64_free: the file names no float64
    dtype, no .double(), no numpy data), MindSpore's own Cells; a file that does gets the runtime's."""
    code = convert_source(ACTIVATIONS, "acts.py").code
    assert "mindport" not in code and "nn.ReLU6()" in code and "nn.HShrink(" in code and "nn.SoftShrink(" in code
    doubled = convert_source(ACTIVATIONS.replace("return self.r(x)", "x = x.double()\n        return self.r(x)"),
                             "acts.py").code
    assert "mp_nn.ReLU6()" in doubled


def test_float64_shrink_after_a_lambd_write():
    """``m.lambd = 0.2`` after construction rebuilds the layer (layer_writes.toml): the float64 formula takes the new
    value too."""
    import torch

    source = textwrap.dedent("""\
        import torch.nn as nn


        def build():
            h = nn.Hardshrink(0.5)
            s = nn.Softshrink(0.5)
            h.lambd = 0.2
            s.lambd = 0.2
            return h, s
    """)
    result = convert_source(source, "writes.py", float64_free=False)
    assert not result.diagnostics
    ns_t: dict = {}
    ns_m: dict = {}
    exec(compile(source, "w_torch.py", "exec"), ns_t)  # noqa: S102
    exec(compile(result.code, "w_ms.py", "exec"), ns_m)  # noqa: S102
    import mindspore as ms

    x = np.linspace(-1, 1, 21)
    for t_layer, m_layer in zip(ns_t["build"](), ns_m["build"]()):
        np.testing.assert_allclose(m_layer(ms.Tensor(x)).asnumpy(), t_layer(torch.from_numpy(x)).numpy(), rtol=1e-12)
