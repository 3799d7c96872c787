"""Tensor methods as real models call them, converted and run compiled (GRAPH_MODE) as well as in PyNative. In a
static graph MindSpore resolves a Tensor method's keywords against other overloads than PyNative does: ``x.split(2,
dim=1)`` and ``x.chunk(2, dim=1)`` reach kernels a CPU graph lacks, ``x.amax(axis=1, keepdims=True)`` is refused,
``x.transpose(1, 2)`` permutes, ``x.expand(n, -1, -1)`` does not compile, and ``x.max(1)`` silently gives the values
without the indices. A loop variable over ``(q, k)`` is a tensor as they are. The converter writes each so that both modes give torch's numbers."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 12)
            self.cls = nn.Parameter(torch.randn(1, 1, 4))

        def forward(self, x):
            q, k, v = self.proj(x).split(4, dim=-1)
            a, b = q.chunk(2, dim=-1)
            qa, ka = [t.chunk(2, dim=-1)[0] for t in (q, k)]
            k2, v2 = k, v
            scores = q @ k2.transpose(1, 2)
            best, where = scores.max(-1)
            top = torch.max(scores)
            both = torch.max(a, b) + qa * ka
            spread = v.std(keepdim=True) + v.amax(dim=1, keepdim=True)
            cls = self.cls.expand(x.shape[0], -1, -1)
            return torch.cat([cls, v * spread + both.sum()], dim=1), best * top, where
""")


def test_the_methods_are_written_so_a_graph_compiles_them():
    code = convert_source(SOURCE).code
    for text in (".split(4, -1)", ".chunk(2, -1)", "k2.swapaxes(", "mp_tensor.max(scores, -1)", "mp_tensor.max(scores)",
                 "mp_tensor.max(a, b)",
                 "[t.chunk(2, -1)[0] for t in (q, k)]", "mp_math.std(v, None, 1, True)", "ops.amax(v, axis=1, keepdims=True)",
                 ".broadcast_to((x.shape[0], -1, -1))"):
        assert text in code, (text, code)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches_torch_in_both_modes(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "gm", mode, atol=1e-5)


HELPER = textwrap.dedent("""\
    import torch.nn as nn


    class Updater(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def check(self):
            if not self.training:
                return

        def forward(self, x):
            raise NotImplemented


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.updater = Updater()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            self.updater.check()
            return self.fc(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_helper_module_raising_notimplemented_compiles(tmp_path, mode):
    """GRAPH_MODE parses the construct of a sub-Cell whose method is called, and refused ``raise NotImplemented``."""
    code = convert_source(HELPER).code
    assert "raise NotImplementedError" in code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(HELPER, code, "Net", [x], tmp_path, "ni", mode)


GATES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 8)
            self.norms = nn.ModuleList([nn.LayerNorm(2) for _ in range(4)])

        def forward(self, x):
            ifgo = self.lin(x) + x.repeat(1, 2)
            ifgo = ifgo.chunk(4, dim=-1)
            ifgo = [self.norms[i](ifgo[i]) for i in range(4)]
            i, f, g, o = ifgo
            return i.sigmoid() * g.tanh() + f * o
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_name_is_what_it_holds_where_it_is_read(tmp_path, mode):
    """``ifgo`` is a tensor, then its chunks, then a list: read in source order, ``ifgo.chunk(4, dim=-1)`` is a tensor
    method (converted, positional: a CPU graph has no kernel for the keyword overload), though the name ends up a list
    (labml's LSTM cell)."""
    code = convert_source(GATES).code
    assert "ifgo = ifgo.chunk(4, -1)" in code and "x.tile((1, 2))" in code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(GATES, code, "Net", [x], tmp_path, "gates", mode, atol=1e-5)


BUILT_AND_CALLED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Scores(nn.Module):
        def forward(self, q, k):
            return torch.softmax(q @ k.transpose(-1, -2), dim=-1), q


    class Net(nn.Module):
        def forward(self, q, k):
            attn, kept = Scores()(q, k)
            return (attn @ kept).transpose(1, 2), kept.transpose(1, 2)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_output_of_a_layer_built_and_called_at_once_is_a_tensor(tmp_path, mode):
    """``attn, kept = Scores()(q, k)`` (a layer of the file built and called in one expression) gives tensors: their
    ``transpose(1, 2)`` swaps two axes (left as written, a graph reads it as a permutation and refuses it)."""
    code = convert_source(BUILT_AND_CALLED).code
    assert "kept.swapaxes(" in code
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 3, 4, 5)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(BUILT_AND_CALLED, code, "Net", [q, k], tmp_path, "built", mode, atol=1e-5)


DEVICE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Embedding(9, 4)

        def forward(self, x):
            n, device, h = x.shape[-2], x.device, 2
            seq = torch.arange(n, device=device)
            dist = (seq[:, None] - seq[None, :]).clamp(-4, 4) + 4
            return x @ self.pos(dist)[0].transpose(-1, -2) * h
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_tensor_device_read_with_other_values_compiles(tmp_path, mode):
    """``n, device = x.shape[-2], x.device``: a graph does not compile ``Tensor.device``, and ran the whole line
    interpreted, so ``n`` failed in ``arange`` later (conformer: "__len__() should return >= 0" in einsum); the
    converted ``mp_tensor.device(x)`` is a constant there; a device no converted line reads is not bound at all
    (tests/converter/test_native_ports.py has the one read afterwards)."""
    code = convert_source(DEVICE).code
    assert "n, h = x.shape[-2], 2" in code and "mindport" not in code
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(DEVICE, code, "Net", [x], tmp_path, "device", mode, atol=1e-5)
