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
    ("F.pixel_shuffle(x, 2)", {"x": _r(8, 3, 3)}),
    ("F.pad(x, (1, 1, 2, 2), mode='reflect')", {"x": _r(3, 5, 5)}),
    ("F.local_response_norm(x, 2)", {"x": _r(4, 5, 5)}),
    ("F.cross_entropy(x, t)", {"x": _r(5), "t": np.array(2)}),
    ("F.instance_norm(x)", {"x": _r(3, 6, 6)}),
    ("F.fold(x, (4, 4), 2)", {"x": _r(12, 9)}),
]

# MindSpore refuses these unbatched and the converted call does not add the axis yet: what it says today
OPEN = [
    ("F.avg_pool2d(x, 2)", {"x": _r(4, 8, 8)}, "x_rank must be equal to 5"),
    ("F.max_pool2d(x, 2)", {"x": _r(4, 8, 8)}, "rank must be equal to 4"),
    ("F.lp_pool2d(x, 2, 2)", {"x": _r(4, 8, 8)}, "x_rank must be equal to 5"),
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
