"""A layer whose class the converter cannot see where it is read answers torch's member names, in PyNative and GRAPH.

``Scale(norm)``, ``self.norm = norm_layer(dim)``, a factory's return: the converter cannot tell the layer's class at
``self.norm.weight``, so the read stays as written, and MindSpore's LayerNorm had no ``weight`` ("'LayerNorm' object
has no attribute 'weight'", both modes; ``mp_adapt.layer_attribute`` in ``construct`` does not compile in a graph).
``mindport.runtime.torch_members`` gives every mapped MindSpore class a property under each torch name the surface
data renames or derives. The slice here (the enumeration over every mapped layer is
/work/notes/objsurf27.md's script): the renamed parameters and buffers of the norms (LayerNorm, BatchNorm2d/3d with
running statistics, GroupNorm), Embedding's and PReLU's weight, renamed settings (eps, in/out_features,
num_embeddings, embedding_dim, negative_slope, groups), derived ones (a Dropout2d's p, track_running_stats), read in
``forward`` under both modes; and writes on a layer of unknown class (``m.weight = nn.Parameter(w)``,
``m.bias.data.copy_(b)``, ``nn.init.constant_(m.weight, v)``), which must reach the weight MindSpore's construct uses.
Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import torch_and_converted

READS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Reads(nn.Module):
        def __init__(self, ln, bn, bn3, emb, fc, gn, prelu, act, conv, drop):
            super().__init__()
            self.ln, self.bn, self.bn3, self.emb, self.fc = ln, bn, bn3, emb, fc
            self.gn, self.prelu, self.act, self.conv, self.drop = gn, prelu, act, conv, drop

        def forward(self, x):
            y = self.ln(x) * self.ln.weight + self.ln.bias + self.ln.eps * 1000
            y = y + self.bn.running_mean.sum() + self.bn.running_var.sum() + self.bn.weight.sum() + self.bn.bias.sum()
            y = y + self.bn3.weight.sum() + self.bn3.running_var.sum() + self.bn3.bias.sum()
            y = y + self.emb.weight[1] * self.emb.num_embeddings + self.emb.embedding_dim
            y = y + self.fc.in_features * self.fc.out_features + self.fc.weight.sum()
            y = y + self.gn.weight.sum() + self.gn.bias.sum() + self.prelu.weight.sum() + self.act.negative_slope
            y = y + self.conv.groups + (1 - self.drop.p)
            if self.bn.track_running_stats:
                y = y * 2
            return y


    class Net(nn.Module):
        def __init__(self, norm_layer=nn.LayerNorm):
            super().__init__()
            self.reads = Reads(norm_layer(4), nn.BatchNorm2d(3), nn.BatchNorm3d(2), nn.Embedding(5, 4),
                               nn.Linear(3, 2), nn.GroupNorm(2, 4), nn.PReLU(4), nn.LeakyReLU(0.3),
                               nn.Conv2d(4, 4, 1, groups=2), nn.Dropout2d(0.25))

        def forward(self, x):
            return self.reads(x)
""")


def _fill_random(torch_net):
    """Every parameter and buffer of the torch model drawn (norm weights are ones, running statistics 0/1 else)."""
    import torch

    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for t in [*torch_net.parameters(), *torch_net.buffers()]:
            if t.is_floating_point():
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_members_read_in_forward_match_torch(tmp_path, monkeypatch, mode):
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    t_ns, m_ns = torch_and_converted(READS, f"reads_{mode}", tmp_path, monkeypatch)
    torch_net = t_ns["Net"]().eval()
    _fill_random(torch_net)
    ms_net = m_ns["Net"]()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    params = len(list(ms_net.get_parameters()))
    assert params == len(list(torch_net.parameters())) + 4  # + BatchNorm2d/3d's moving statistics (Parameters)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = ms_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert len(list(ms_net.get_parameters())) == params  # no parameter duplicated by the reads


WRITES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def replace(m, w):
        m.weight = nn.Parameter(w)


    def copy_bias(m, b):
        m.bias.data.copy_(b)


    def constant(m, value):
        nn.init.constant_(m.weight, value)


    def build(kind):
        return {"ln": lambda: nn.LayerNorm(4), "bn": lambda: nn.BatchNorm1d(4), "gn": lambda: nn.GroupNorm(2, 4)}[kind]()
""")


@pytest.mark.parametrize("kind", ["ln", "bn", "gn"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_writes_on_a_layer_of_unknown_class_reach_its_forward(tmp_path, monkeypatch, kind, mode):
    import mindspore as ms
    import torch

    t_ns, m_ns = torch_and_converted(WRITES, f"writes_{kind}_{mode}", tmp_path, monkeypatch)
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    t_layer, m_layer = t_ns["build"](kind).eval(), m_ns["build"](kind)
    m_layer.set_train(False)
    names = [p.name for p in m_layer.get_parameters()]
    for ns, layer, tensor in ((t_ns, t_layer, torch.from_numpy), (m_ns, m_layer, ms.Tensor)):
        ns["constant"](layer, 0.5)
        ns["copy_bias"](layer, tensor(b))
    with torch.no_grad():
        first = t_layer(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_layer(ms.Tensor(x)).asnumpy(), first, rtol=1e-5, atol=1e-5)
    t_ns["replace"](t_layer, torch.from_numpy(w))
    m_ns["replace"](m_layer, ms.Tensor(w))
    assert [p.name for p in m_layer.get_parameters()] == names  # replaced in place: no second weight
    with torch.no_grad():
        want = t_layer(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = m_layer(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_subclass_keeps_its_own_member_and_its_parameter_replaces_the_weight():
    """A subclass's own ``weight`` (a class attribute) wins over the installed property; one assigning
    ``self.weight = Parameter(...)`` replaces the weight MindSpore's construct uses (torch's meaning), instead of
    failing ("the weight parameter already exists")."""
    import mindspore as ms
    from mindspore import nn

    import mindport.runtime.torch_members  # noqa: F401

    class Own(nn.LayerNorm):
        weight = "own"

    class Replacing(nn.LayerNorm):
        def __init__(self):
            super().__init__((4,))
            self.weight = ms.Parameter(ms.Tensor(np.full(4, 7, np.float32)))

    assert Own((4,)).weight == "own"
    layer = Replacing()
    assert sorted(p.name for p in layer.get_parameters()) == ["beta", "gamma"]
    assert layer.weight is layer.gamma
    out = layer(ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4))).asnumpy()
    normed = (np.arange(4) - 1.5) / np.sqrt(1.25 + 1e-7)
    np.testing.assert_allclose(out[0], normed * 7, rtol=1e-4, atol=1e-4)


def test_the_converted_file_loads_torch_members_only_where_a_read_needs_it():
    """A file importing no other runtime module imports ``mindport.runtime.torch_members`` when it reads a torch
    member on a layer of unknown class; a file reading a known layer's member does not."""
    unknown = textwrap.dedent("""\
        import torch.nn as nn


        class Scale(nn.Module):
            def __init__(self, norm):
                super().__init__()
                self.norm = norm

            def forward(self, x):
                return self.norm(x) * self.norm.weight
    """)
    known = unknown.replace("self.norm = norm", "self.norm = nn.Linear(4, 4)")
    assert "import mindport.runtime.torch_members" in convert_source(unknown).code
    assert "mindport" not in convert_source(known).code


def test_the_generated_table_is_current():
    """``mappings/data/surface/torch_members.toml`` is what the tables and the installed MindSpore give (regenerate:
    ``python -m mindport.runtime.torch_members``)."""
    from mindport.runtime import torch_members

    assert torch_members.TABLE_PATH.read_text(encoding="utf-8") == torch_members.write()
