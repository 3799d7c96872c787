"""A dict's keys in ``sorted``/``reversed``/``min``/``max`` inside ``construct`` match torch in GRAPH_MODE, or the graph
refuses loudly (mindport.runtime.graph_order).

Measured on MindSpore 2.10 before: ``[outs[k] for k in sorted(outs)]`` ran on the dict's values (the JIT Fallback is
handed a dict as its values), ``min(outs)``/``max(outs)`` returned tensors, ``sorted(outs.keys())`` failed ("'tuple'
object has no attribute 'keys'") and ``[v for v in sorted(outs.values())]`` gave one float for three tensors: some
silent, some loud. Expected values come from torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import run_in_mode, torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"box": nn.Linear(4, 3), "cls": nn.Linear(4, 3), "aux": nn.Linear(4, 3)})

        def forward(self, x):
            outs = {}
            for name, head in self.heads.items():
                outs[name] = head(x).sum()
            ordered = [outs[k] for k in sorted(outs)]
            by_keys = [outs[k] * 2 for k in sorted(outs.keys(), reverse=True)]
            pairs = [v - 1 for _, v in sorted(outs.items())]
            by_length = [outs[k] for k in sorted(outs, key=lambda k: (len(k), k[::-1]))]
            return (torch.stack(ordered), torch.stack(by_keys), torch.stack(pairs), torch.stack(by_length),
                    outs[min(outs)], outs[max(outs)])
""")

LOUD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Losses(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = self.fc(x)
            losses = {"b": y.sum(), "a": y.mean(), "c": y.max()}
            return torch.stack([v for v in sorted(losses.values())])
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sorted_keys_of_a_dict_of_tensors_match_torch(tmp_path, monkeypatch, mode):
    t_ns, m_ns = torch_and_converted(SOURCE, f"graph_order_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Heads"]().eval()
    m_model = m_ns["Heads"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_a_sort_of_tensor_values_is_refused_in_a_graph(tmp_path, monkeypatch):
    """Sorting tensors by value in a graph is a run-time order the Fallback computes and the graph then misreads: the
    graph refuses it with mindport's error; PyNative sorts as torch does."""
    t_ns, m_ns = torch_and_converted(LOUD, "graph_order_loud", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Losses"]().eval()
    m_model = m_ns["Losses"]()
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    np.testing.assert_allclose(run_in_mode(m_model, [ms.Tensor(x)], "pynative").asnumpy(), want.numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(TypeError, match="mindport: sorted"):
        run_in_mode(m_model, [ms.Tensor(x)], "graph")


ZIPPED = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Boxes(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Linear(4, 4)
            self.loc = nn.Sequential(nn.Linear(4, 2), nn.Linear(4, 3))
            self.conf = nn.Sequential(nn.Linear(4, 5), nn.Linear(4, 1))

        def forward(self, x):
            sources = [self.stem(x), self.stem(x) * 2]
            loc, conf = [], []
            for (s, l, c) in zip(sources, self.loc, self.conf):
                loc.append(l(s))
                conf.append(c(s))
            return torch.cat(loc, 1), torch.cat(conf, 1), torch.cat([l(s) for s, l in zip(sources, self.loc)], 1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_zip_over_a_sequential_matches_torch(tmp_path, monkeypatch, mode):
    """FaceBoxes' ``zip(detection_sources, self.loc, self.conf)`` over two ``nn.Sequential``: torch iterates their
    layers; MindSpore's graph zip built nothing ("For primitive[Concat], the elements size must be greater than 0")
    or failed ("Invalid funcgraph node ... PolyNode")."""
    t_ns, m_ns = torch_and_converted(ZIPPED, f"graph_zip_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Boxes"]().eval()
    m_model = m_ns["Boxes"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)


PLAIN = textwrap.dedent("""
    import torch.nn as nn


    class Pick(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 3)
            self.b = nn.Linear(4, 3)

        def forward(self, x):
            outs = {"b": self.b(x), "a": self.a(x)}
            return outs[min(outs)] - outs[max(outs)]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_port_with_no_other_runtime_import_loads_the_graph_order(tmp_path, monkeypatch, mode):
    """A converted file that needs nothing else of mindport still loads ``mindport.runtime.graph_order`` when its
    ``construct`` calls ``min``/``max``/``sorted``/``reversed``/``zip``: without it, ``outs[min(outs)]`` in a graph
    indexed the dict by a tensor (MindSpore's min of a dict is over its values)."""
    from mindport import convert_source

    assert "import mindport.runtime.graph_order" in convert_source(PLAIN, "plain.py").code
    t_ns, m_ns = torch_and_converted(PLAIN, f"graph_order_plain_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Pick"]().eval()
    m_model = m_ns["Pick"]()
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    np.testing.assert_allclose(run_in_mode(m_model, [ms.Tensor(x)], mode).asnumpy(), want.numpy(), rtol=1e-5, atol=1e-6)


LEVELS = textwrap.dedent("""
    import torch
    from torch import nn


    class Levels(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x):
            for level, layer in zip(reversed(range(len(self.layers))), self.layers):
                x = layer(x) * (level + 1)
            return x
""")

_LEVELS_RUN = textwrap.dedent("""
    import sys
    import numpy as np
    import mindspore as ms
    sys.path.insert(0, sys.argv[1])
    ms.set_context(mode=ms.GRAPH_MODE)
    import levels_port
    data = np.load(sys.argv[2])
    net = levels_port.Levels()
    for i, layer in enumerate(net.layers):
        layer.weight.set_data(ms.Tensor(data[f"w{i}"]))
        layer.bias.set_data(ms.Tensor(data[f"b{i}"]))
    np.save(sys.argv[3], net(ms.Tensor(data["x"])).asnumpy())
""")


def test_zip_of_reversed_range_with_a_cell_list_is_a_native_range(tmp_path):
    """``zip(reversed(range(n)), self.layers)`` over a CellList (vit-pytorch NesT) fails to compile in a graph
    (RuntimeError: Unsupported element type[unknown], or "Cast-op0 does not support this kernel data type") unless
    graph_order is loaded. ReversedCellsTransform writes the reversed range as a range
    (``range(len(self.layers) - 1, -1, -1)``: the same integers in the same order), which a graph compiles, so the
    file needs no mindport import (native29; before, it loaded graph_order). Run in a fresh interpreter (this process
    may have loaded the runtime already), in GRAPH_MODE, against torch."""
    import subprocess
    import sys

    from mindport import convert_source

    code = convert_source(LEVELS, "levels.py").code
    assert "mindport" not in code, code
    assert "zip(range(len(self.layers) - 1, -1, -1), self.layers)" in code, code
    (tmp_path / "levels_port.py").write_text(code)
    torch.manual_seed(0)
    t_ns: dict = {}
    exec(compile(LEVELS, "levels.py", "exec"), t_ns)  # noqa: S102 - test snippet
    model = t_ns["Levels"]().eval()
    x = np.random.default_rng(7).standard_normal((2, 4)).astype(np.float32)
    arrays = {"x": x}
    for i, layer in enumerate(model.layers):
        arrays[f"w{i}"] = layer.weight.detach().numpy()
        arrays[f"b{i}"] = layer.bias.detach().numpy()
    np.savez(tmp_path / "data.npz", **arrays)
    (tmp_path / "run.py").write_text(_LEVELS_RUN)
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path), str(tmp_path / "data.npz"),
                           str(tmp_path / "out.npy")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), want, rtol=1e-5, atol=1e-6)


LIST_METHODS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 3), "aux": nn.Linear(4, 3)})

        def forward(self, x):
            outs = {}
            for name, head in self.heads.items():
                outs[name] = head(x)
            names = list(outs)
            names.sort()
            ordered = torch.cat([outs[k] for k in names], 1)
            longest = list(outs)
            longest.sort(key=lambda k: (k[1], k), reverse=True)
            rest = list(outs)
            rest.remove("box")
            scales = [3, 1, 2]
            scales.sort()
            weighted = [outs[k] * (i + 1) for i, k in enumerate(outs)]
            paired = [outs[k] * w for k, w in zip(outs, [0.5, 2.0, -1.0])]
            has_cls = 1.0 if "cls" in set(outs) else 0.0
            return (ordered, torch.cat([outs[k] for k in longest], 1), torch.cat([outs[k] for k in rest], 1),
                    ordered * scales[0] - scales[-1], torch.cat(weighted, 1), torch.cat(paired, 1), x * has_cls)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_list_sort_remove_and_a_dict_in_enumerate_zip_set_match_torch(tmp_path, monkeypatch, mode):
    """``names = list(outs); names.sort()`` and ``names.remove(k)`` left the list as it was in a graph (MindSpore
    compiles neither method; the Fallback works on a copy), silently; ``enumerate(outs)``/``zip(outs, ...)`` paired
    the dict's values and ``set(outs)`` held them. The converter re-binds the list (ListSortTransform) and the graph's
    enumerate/zip/set read a dict's keys (graph_order)."""
    t_ns, m_ns = torch_and_converted(LIST_METHODS, f"graph_list_methods_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Heads"]().eval()
    m_model = m_ns["Heads"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)


REDUCED = textwrap.dedent("""
    import functools
    from functools import reduce

    import torch
    import torch.nn as nn


    class SelectiveKernel(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(2, 2, 3, padding=1), nn.Conv2d(2, 2, 1)])

        def forward(self, x):
            outs = [conv(x) for conv in self.convs]
            u = reduce(lambda a, b: a + b, outs)
            v = functools.reduce(lambda a, b: a * 0.5 + b, outs, x)
            return u + v


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sk = SelectiveKernel()
            self.conv = nn.Conv2d(2, 2, 1)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.conv(self.sk(x))
            out = out + x
            y = self.relu(out)
            return y + out  # out is relu'd in place too
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_functools_reduce_then_an_in_place_relu_match_torch(tmp_path, monkeypatch, mode):
    """SKNet's ``U = reduce(lambda x, y: x + y, output)``: MindSpore ran ``reduce`` through the JIT Fallback, whose
    result had a dtype guessed while compiling (Float64); the in-place ReLU after it cast to that guess and the graph
    failed ("Data type conversion is not supported ... Float32 ... Float64"). graph_order's ``reduce`` is a loop."""
    t_ns, m_ns = torch_and_converted(REDUCED, f"graph_reduce_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Block"]().eval()
    m_model = m_ns["Block"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(8).standard_normal((1, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_a_port_with_no_other_runtime_import_loads_the_graph_order_for_reduce():
    """A mindport-free port whose ``construct`` calls ``functools.reduce`` imports graph_order (the loop)."""
    from mindport import convert_source

    for call in ("reduce(lambda a, b: a + b, outs)", "functools.reduce(lambda a, b: a + b, outs)"):
        source = textwrap.dedent(f"""
            import functools
            from functools import reduce

            import torch.nn as nn


            class Sum(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = nn.Linear(4, 3)
                    self.b = nn.Linear(4, 3)

                def forward(self, x):
                    outs = [self.a(x), self.b(x)]
                    return {call}
        """)
        assert "import mindport.runtime.graph_order" in convert_source(source, "plain.py").code
