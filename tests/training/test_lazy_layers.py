"""torch's lazy layers (nn.LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*): sizes read
from the first input. Converted to mindport.runtime.layers.Lazy*, built at the first call (PyNative) or from the
weights loaded first, their Parameters resized in place: the converted model gives torch's outputs with torch's
weights and trains like torch with the optimizer built after a dry run or before any call."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from tests.training._harness import convert, load_module

X = np.random.default_rng(0).standard_normal((6, 3, 4, 4)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((6, 1)).astype(np.float32)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    source, code = convert("lazy_layers.py")
    folder = tmp_path_factory.mktemp("lazy")  # importable: ms.jit reads the converted source
    (folder / "lazy_layers_ms.py").write_text(code)
    sys.path.insert(0, str(folder))
    try:
        return load_module(source, "lazy_layers_torch"), importlib.import_module("lazy_layers_ms"), code
    finally:
        sys.path.remove(str(folder))


def _torch_state(tm, seed=0):
    """torch's initial weights: a seeded model after its dry run."""
    import torch

    torch.manual_seed(seed)
    model = tm.LazyNet()
    model(torch.as_tensor(X[:2]))
    return model, {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_converted_to_runtime_lazy_cells(pair):
    code = pair[2]
    for name in ("LazyConv2d", "LazyBatchNorm2d", "LazyConvTranspose2d", "LazyConv1d", "LazyBatchNorm1d",
                 "LazyLinear"):
        assert f"mp_nn.{name}(" in code, code
    assert "MP1" not in code, code


@pytest.mark.parametrize("train", [False, True])
def test_outputs_match_torch_after_the_first_call(pair, train):
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    tm, mm, _ = pair
    t_model, state = _torch_state(tm)
    m_model = mm.LazyNet()
    m_model(ms.Tensor(X[:2]))  # the dry run builds the layers
    transfer_weights(state, m_model)
    t_model.train(train)
    m_model.set_train(train)
    with torch.no_grad():
        expected = t_model(torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(m_model(ms.Tensor(X)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ms.jit(m_model)(ms.Tensor(X)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["momentum", "adam"])
def test_trains_like_torch_with_the_optimizer_built_after_a_dry_run(pair, kind):
    import mindspore as ms

    from mindport.migrator.weights import transfer_weights

    tm, mm, _ = pair
    t_model, state = _torch_state(tm)
    t_model.load_state_dict(state)
    m_model = mm.LazyNet()
    m_model(ms.Tensor(X[:2]))
    transfer_weights(state, m_model)  # the same weights (and running statistics) as torch's after its dry run
    m_model.set_train(True)
    t_losses = tm.train_steps(t_model, tm.make_optimizer(t_model, kind), X, Y)
    m_losses = mm.train_steps(m_model, mm.make_optimizer(m_model, kind), X, Y)
    np.testing.assert_allclose(m_losses, t_losses, rtol=2e-5)


@pytest.mark.parametrize("sizes_from", ["first call", "loaded weights"])
@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
def test_trains_like_torch_with_the_optimizer_built_before_any_call(pair, kind, sizes_from):
    """torch allows an optimizer over the uninitialised parameters: they become parameters in place, and its state
    is made at the first step. Without the slot resize (runtime.frozen) MindSpore's optimizer kept state slots of the placeholder shape (the
    step failed: 'the shape of parameters must be the same as the shape of accum')."""
    import mindspore as ms

    from mindport.migrator.weights import transfer_weights

    tm, mm, _ = pair
    _, state = _torch_state(tm)
    t_model, m_model = tm.LazyNet(), mm.LazyNet()
    t_opt, m_opt = tm.make_optimizer(t_model, kind), mm.make_optimizer(m_model, kind)
    if sizes_from == "first call":
        m_model(ms.Tensor(X[:2]))
    t_model.load_state_dict(state)  # torch's lazy layers take their sizes from loaded weights too
    transfer_weights(state, m_model)
    m_model.set_train(True)
    t_losses = tm.train_steps(t_model, t_opt, X, Y)
    m_losses = mm.train_steps(m_model, m_opt, X, Y)
    np.testing.assert_allclose(m_losses, t_losses, rtol=2e-5)


def test_a_graph_before_the_first_call_asks_for_a_dry_run(pair):
    import mindspore as ms

    model = pair[1].LazyNet()
    with pytest.raises(RuntimeError, match="dry run"):
        ms.jit(model)(ms.Tensor(X))
    assert model.conv.has_uninitialized_params()


def test_every_torch_lazy_layer_has_a_runtime_cell():
    """The surface, from torch itself: each nn.Lazy* maps to mindport.runtime.layers' Cell of the same name."""
    import torch

    from mindport.mappings import load_registry
    from mindport.runtime import layers

    registry = load_registry()
    names = [n for n in dir(torch.nn) if n.startswith("Lazy")]
    assert len(names) == 13, names
    for name in names:
        entry = registry.lookup(f"torch.nn.{name}")
        assert entry is not None and entry.targets.get("nn") == f"mindport.runtime.layers.{name}", (name, entry)
        assert issubclass(getattr(layers, name), layers._LazyLayer)  # noqa: SLF001


def test_a_built_lazy_layer_is_an_instance_of_its_eager_layer(pair):
    """torch's lazy layer is an instance of its eager class (LazyLinear derives from Linear, and becomes a Linear at
    the first call): an init loop's ``isinstance(m, nn.Linear)`` reaches it. The converted check is
    ``isinstance(m, nn.Dense)``."""
    import mindspore as ms
    import torch

    from mindport.runtime import layers

    tm, mm, _ = pair
    t_model, m_model = tm.LazyNet(), mm.LazyNet()
    assert isinstance(m_model.head, ms.nn.Dense) and isinstance(t_model.head, torch.nn.Linear)
    assert "uninitialized" in repr(m_model)
    t_model(torch.as_tensor(X[:2]))
    m_model(ms.Tensor(X[:2]))
    pairs = [("head", torch.nn.Linear, ms.nn.Dense), ("conv", torch.nn.Conv2d, ms.nn.Conv2d),
             ("bn", torch.nn.BatchNorm2d, ms.nn.BatchNorm2d), ("up", torch.nn.ConvTranspose2d, ms.nn.Conv2dTranspose),
             ("conv1", torch.nn.Conv1d, ms.nn.Conv1d), ("norm1", torch.nn.BatchNorm1d, ms.nn.BatchNorm1d)]
    for name, t_cls, m_cls in pairs:
        assert isinstance(getattr(t_model, name), t_cls)
        assert isinstance(getattr(m_model, name), m_cls) and isinstance(getattr(m_model, name), layers._LazyLayer)  # noqa: SLF001
    assert m_model.head.in_channels == t_model.head.in_features == 124
