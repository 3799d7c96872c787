"""torch's functional calls on an unbatched input ((C, *spatial), a (C,) score vector): the converted call against
torch, enumerated (issue 29, first contact 39: NNUE's LadderConvLayer builds its kernel in forward and calls
F.conv2d, which torch runs on a (C, H, W) input and ops.conv2d refused). The ones MindSpore still refuses are listed
with their error (OPEN): a fix moves a row from OPEN to MATCHES."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

rng = np.random.default_rng(0)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


MATCHES = [
    ("F.conv1d(x, w)", {"x": _r(4, 9), "w": _r(6, 4, 3)}),
    ("F.conv1d(x, w, b, stride=2, padding=1)", {"x": _r(4, 9), "w": _r(6, 4, 3), "b": _r(6)}),
    ("F.conv2d(x, w, padding=1)", {"x": _r(4, 7, 7), "w": _r(6, 4, 3, 3)}),
    ("F.conv2d(x, w, b, groups=2)", {"x": _r(4, 7, 7), "w": _r(6, 2, 3, 3), "b": _r(6)}),
    ("F.conv3d(x, w)", {"x": _r(2, 5, 5, 5), "w": _r(3, 2, 3, 3, 3)}),
    ("F.conv_transpose2d(x, w, stride=2)", {"x": _r(4, 5, 5), "w": _r(4, 6, 3, 3)}),
    ("F.max_pool1d(x, 2)", {"x": _r(4, 9)}),
    ("F.max_pool3d(x, 2)", {"x": _r(2, 4, 4, 4)}),
    ("F.adaptive_avg_pool2d(x, 3)", {"x": _r(4, 9, 9)}),
    ("F.adaptive_max_pool2d(x, 3)", {"x": _r(4, 9, 9)}),
    ("F.lp_pool1d(x, 2, 3)", {"x": _r(4, 9)}),
    ("F.avg_pool2d(x, 2)", {"x": _r(4, 8, 8)}),
    ("F.max_pool2d(x, 2)", {"x": _r(4, 8, 8)}),
    ("F.lp_pool2d(x, 2, 2)", {"x": _r(4, 8, 8)}),
    ("F.pixel_shuffle(x, 2)", {"x": _r(8, 3, 3)}),
    ("F.pad(x, (1, 1, 2, 2), mode='reflect')", {"x": _r(3, 5, 5)}),
    ("F.local_response_norm(x, 2)", {"x": _r(4, 5, 5)}),
    ("F.cross_entropy(x, t)", {"x": _r(5), "t": np.array(2)}),
    ("F.instance_norm(x)", {"x": _r(3, 6, 6)}),
    ("F.fold(x, (4, 4), 2)", {"x": _r(12, 9)}),
]

# MindSpore refuses these unbatched and the converted call does not add the axis yet: what it says today
OPEN = [
    ("F.unfold(x, 2)", {"x": _r(3, 5, 5)}, "must be equal to 4"),
    ("F.multi_margin_loss(x, t)", {"x": _r(5), "t": np.array(2)}, "rank of input x and target should be 2 and 1"),
]


def _convert(expr, names):
    from mindport.migrator import convert_source

    src = f"import torch\nimport torch.nn.functional as F\n\n\ndef f({', '.join(names)}):\n    return {expr}\n"
    namespace: dict = {}
    exec(convert_source(src).code, namespace)
    return namespace["f"]


def _torch(expr, inputs):
    import torch
    import torch.nn.functional as F

    return eval("lambda " + ", ".join(inputs) + ": " + expr, {"F": F, "torch": torch})(
        *[torch.tensor(v) for v in inputs.values()])


@pytest.mark.parametrize("expr, inputs", MATCHES, ids=[e for e, _ in MATCHES])
def test_unbatched_functional_matches_torch(expr, inputs):
    import mindspore as ms

    got = _convert(expr, list(inputs))(*[ms.Tensor(v) for v in inputs.values()])
    want = _torch(expr, inputs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expr, inputs", MATCHES[:5], ids=[e for e, _ in MATCHES[:5]])
def test_unbatched_convolution_in_graph_mode(expr, inputs, tmp_path, monkeypatch):
    """A module calling the function in its forward, converted and compiled by GRAPH_MODE: the rank comparison folds
    (the batched call keeps its path)."""
    import mindspore as ms

    from mindport.migrator import convert_source

    names = ", ".join(inputs)
    src = (f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Call(nn.Module):\n"
           f"    def forward(self, {names}):\n        return {expr}\n")
    path = tmp_path / "unbatched_call.py"  # GRAPH_MODE reads the class's source from its module
    path.write_text(convert_source(src).code)
    spec = importlib.util.spec_from_file_location(f"unbatched_call_{abs(hash(expr))}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = module.Call()(*[ms.Tensor(v) for v in inputs.values()])
        batched = {k: (v[None] if k == "x" else v) for k, v in inputs.items()}
        got_batched = module.Call()(*[ms.Tensor(v) for v in batched.values()])
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got.asnumpy(), _torch(expr, inputs).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_batched.asnumpy(), _torch(expr, batched).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expr, inputs, error", OPEN, ids=[e for e, _, _ in OPEN])
def test_open_rows_still_refused(expr, inputs, error):
    import mindspore as ms

    _torch(expr, inputs)  # torch runs it
    with pytest.raises(Exception, match=error):
        _convert(expr, list(inputs))(*[ms.Tensor(v) for v in inputs.values()])


# ------------------------------------------------------------------------------------ functional pools, every kind
# torch's functional pools of every kind and rank on an unbatched input (and the same input batched), converted and
# run in PyNative and GRAPH_MODE against torch: batch 25's cnnimageretrieval pools a (C, H, W) map with
# F.max_pool2d(x, (x.size(-2), x.size(-1))) (MAC), F.avg_pool2d of its clamped power (SPoC, GeM). MindSpore's
# max_pool2d, avg_pool1d/2d/3d, lp_pool2d and adaptive_*_pool1d take only a batch: mindport.mappings.unbatched.FUNCTIONS.
POOLS = {
    (4, 9): ["F.avg_pool1d(x, 3)", "F.avg_pool1d(x, 3, 2, 1)", "F.avg_pool1d(x, 2, 2, 1, ceil_mode=True, "
             "count_include_pad=False)", "torch.avg_pool1d(x, 3)", "F.adaptive_avg_pool1d(x, 1)",
             "F.adaptive_avg_pool1d(x, 4)", "torch.adaptive_avg_pool1d(x, 1)", "F.adaptive_max_pool1d(x, 1)",
             "F.adaptive_max_pool1d(x, 4)", "F.max_pool1d(x, 3, 2, 1)", "F.lp_pool1d(x, 2, 3, 2)",
             "F.avg_pool1d(x, x.size(-1))", "F.max_pool1d(x, x.size(-1))"],
    (4, 7, 8): ["F.max_pool2d(x, 2)", "F.max_pool2d(x, 3, 2, 1)", "F.max_pool2d(x, (2, 3), (1, 2))",
                "F.max_pool2d(x, 2, ceil_mode=True)", "F.max_pool2d(x, (x.size(-2), x.size(-1)))",
                "torch.max_pool2d(x, 2, 2)", "F.avg_pool2d(x, 2)", "F.avg_pool2d(x, 3, 2, 1)",
                "F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)", "F.avg_pool2d(x, (x.size(-2), x.size(-1)))",
                "F.avg_pool2d(x.clamp(min=1e-6).pow(3), (x.size(-2), x.size(-1))).pow(1. / 3)",
                "F.lp_pool2d(x, 2, 2)", "F.lp_pool2d(x, 2, (2, 3), 1)", "F.adaptive_avg_pool2d(x, 3)",
                "F.adaptive_max_pool2d(x, (2, 3))", "F.adaptive_max_pool2d(x, 1)"],
    (3, 4, 6, 6): ["F.avg_pool3d(x, 2)", "F.avg_pool3d(x, 3, 2, 1)", "F.avg_pool3d(x, (2, 3, 3), (1, 2, 2))",
                   "F.max_pool3d(x, 2)", "F.max_pool3d(x, 3, 2, 1)", "F.adaptive_avg_pool3d(x, 2)",
                   "F.adaptive_max_pool3d(x, (2, 3, 2))"],
}
POOL_ROWS = [(expr, shape) for shape, exprs in POOLS.items() for expr in exprs]


def _pool_input(shape):
    return np.abs(_r(*shape)) + 0.1  # positive: lp pools and the GeM power are real there as in torch


@pytest.mark.parametrize("expr, shape", POOL_ROWS, ids=[f"{e}-{len(s)}d" for e, s in POOL_ROWS])
def test_functional_pool_unbatched_and_batched_match_torch(expr, shape):
    import mindspore as ms

    fn = _convert(expr, ["x"])
    for x in (_pool_input(shape), _pool_input((2, *shape))):
        got, want = fn(ms.Tensor(x)), _torch(expr, {"x": x})
        assert tuple(got.shape) == tuple(want.shape), (x.shape, got.shape, want.shape)
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5, err_msg=str(x.shape))


@pytest.mark.parametrize("shape", list(POOLS), ids=[f"{len(s)}d" for s in POOLS])
def test_functional_pools_in_graph_mode(shape, tmp_path, monkeypatch):
    """Every pool of a rank in one converted module's forward, compiled by GRAPH_MODE for the unbatched input and for
    the batched one: the rank comparison folds to a constant, and a kernel read off the input's shape is one too."""
    import mindspore as ms

    from mindport.migrator import convert_source

    exprs = POOLS[shape]
    src = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Pools(nn.Module):\n"
           "    def forward(self, x):\n        return (" + ", ".join(exprs) + ",)\n")
    path = tmp_path / "unbatched_pools.py"
    path.write_text(convert_source(src).code)
    spec = importlib.util.spec_from_file_location(f"unbatched_pools_{len(shape)}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    inputs = (_pool_input(shape), _pool_input((2, *shape)))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        outs = [module.Pools()(ms.Tensor(x)) for x in inputs]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for x, got in zip(inputs, outs):
        for expr, g in zip(exprs, got):
            want = _torch(expr, {"x": x})
            assert tuple(g.shape) == tuple(want.shape), (expr, x.shape)
            np.testing.assert_allclose(g.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"{expr} {x.shape}")


def test_no_table_entry_names_a_batch_only_op():
    """The class, kept: a mapping entry (any profile, any switch) or a transform that names MindSpore's op of
    ``FUNCTIONS`` directly would refuse torch's unbatched input again; each names mindport.runtime.unbatched's."""
    from pathlib import Path

    import mindport.mappings.transforms as transforms
    import mindport.runtime.unbatched as runtime
    from mindport.mappings import bundled_registry
    from mindport.mappings.unbatched import FUNCTIONS

    banned = {f"mindspore.ops.{name}" for name in FUNCTIONS}
    named = []
    for entry in bundled_registry().entries.values():
        targets = list(entry.targets.values()) + [t for case in entry.switch.values() for t in case.values()]
        named += [(entry.torch, t) for t in targets if t in banned]
    assert named == []
    for path in Path(transforms.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert not [b for b in banned if f'"{b}"' in text or f"'{b}'" in text], path
    routed = {t for e in bundled_registry().entries.values() for t in e.targets.values()
              if t.startswith("mindport.runtime.unbatched.")}
    assert routed == {f"mindport.runtime.unbatched.{name}" for name in FUNCTIONS}
    assert all(callable(getattr(runtime, name)) for name in FUNCTIONS)


NATIVE_SRC = """import torch
import torch.nn as nn
import torch.nn.functional as F


def mac(x):
    return F.max_pool2d(x, (x.size(-2), x.size(-1)))


class Shown(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        b, c, h, w = x.shape
        return F.avg_pool2d(x, 2), F.max_pool2d(self.bn(x), 2), mac(x)


class Unknown(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, 2), F.lp_pool2d(x, 2, 2)
"""


def test_pool_of_an_input_shown_batched_is_mindspores_own(tmp_path, monkeypatch):
    """Native where the code shows the rank: a batch unpacked into four names, a BatchNorm2d's output (torch refuses
    anything but a 4-D batch there) go to ops.avg_pool2d / ops.max_pool2d; a module-level function's input and a
    forward that shows nothing keep mindport.runtime.unbatched's form. Both run against torch (the batched input)."""
    import mindspore as ms
    import torch

    from mindport.migrator import convert_source

    code = convert_source(NATIVE_SRC).code
    assert "ops.avg_pool2d(x, " in code and "ops.max_pool2d(self.bn(x), " in code, code
    assert "mp_unbatched.max_pool2d(x, kernel_size=(x.shape[-2], x.shape[-1]))" in code, code
    assert "mp_unbatched.avg_pool2d(x, " in code and "mp_unbatched.lp_pool2d(x, " in code, code
    assert "from mindport.runtime import unbatched as mp_unbatched" in code
    only_shown = convert_source(NATIVE_SRC.split("\n\ndef mac")[0] + "\n\n\nclass Shown(nn.Module):\n"
                                "    def forward(self, x):\n        b, c, h, w = x.shape\n"
                                "        return F.max_pool2d(x, 2)\n").code
    assert "ops.max_pool2d(x, " in only_shown and "mp_unbatched" not in only_shown, only_shown
    path = tmp_path / "native_pools.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location("native_pools", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    namespace: dict = {}
    exec(NATIVE_SRC, namespace)
    x = _pool_input((2, 3, 6, 6))
    for name in ("Shown", "Unknown"):
        t_net, m_net = namespace[name]().eval(), getattr(module, name)()
        m_net.set_train(False)
        want = t_net(torch.tensor(x))
        for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
            ms.set_context(mode=mode)
            try:
                got = m_net(ms.Tensor(x))
            finally:
                ms.set_context(mode=ms.PYNATIVE_MODE)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.asnumpy(), w.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=name)
