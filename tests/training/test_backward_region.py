"""Training scripts as people write them (tests/training/step_*.py, written for these tests): converted by mindport
with zero edits, each runs on MindSpore and its losses track torch's, given the same initial weights and data.
Each script is one shape of the general backward region (training_region.py) or of .grad's readers
(mindport.runtime.training)."""
from __future__ import annotations

import numpy as np
import pytest

from _harness import assert_losses_match, convert, load_module, regression_data, twin_models


def _pair(script):
    source, converted = convert(script)
    assert not _imports_torch(converted), converted  # a converted script imports no torch
    return load_module(source, "torch_" + script), load_module(converted, "ms_" + script), converted


def _imports_torch(code: str) -> bool:
    import ast

    modules = [a.name for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module or "" for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)]
    return any(m.split(".")[0] == "torch" for m in modules)


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((16, 8)).astype(np.float32)
    Y = rng.standard_normal((16, 2)).astype(np.float32)
    W1 = (0.3 * rng.standard_normal((8, 12))).astype(np.float32)
    W2 = (0.3 * rng.standard_normal((12, 2))).astype(np.float32)
    return X, Y, W1, W2


@pytest.mark.parametrize("script", ["step_manual_net.py", "step_custom_function.py"])
def test_hand_written_weights_and_updates(script):
    # requires_grad tensors, no optimizer, updates under no_grad, .grad zeroed or set to None by hand
    t_mod, m_mod, _ = _pair(script)
    arrays = _weights()
    t_losses = t_mod.train(*[a.copy() for a in arrays])
    m_losses = m_mod.train(*[a.copy() for a in arrays])
    assert t_losses[-1] < 0.5 * t_losses[0]
    assert_losses_match(t_losses, m_losses)


@pytest.mark.parametrize(("script", "cls", "rtol"), [
    ("step_rnn_regressor.py", "Regressor", 1e-4),   # hidden state carried across steps (h = h.data)
    ("step_char_lm.py", "CharModel", 1e-4),         # zero_grad before forward, detach, clipping, prints
    ("step_seq2seq.py", "Pair", 1e-4),              # loss = 0; loss += ... over decoder steps, two optimizers
])
def test_recurrent_models_track_torch(script, cls, rtol):
    t_mod, m_mod, _ = _pair(script)
    t_model, m_model = twin_models(t_mod, m_mod, cls)
    t_losses, m_losses = t_mod.train(t_model), m_mod.train(m_model)
    n = min(len(t_losses), 20)
    assert_losses_match(t_losses, m_losses, n=n, rtol=rtol)


def _regression_losses(script, cls, fn="train"):
    """Both sides of a script trained on the same regression data from the same weights: their losses."""
    import warnings

    t_mod, m_mod, _ = _pair(script)
    t_model, m_model = twin_models(t_mod, m_mod, cls)
    X, Y = regression_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch without CUDA: GradScaler/autocast disabled
        t_losses = getattr(t_mod, fn)(t_model, X, Y)
    return t_losses, getattr(m_mod, fn)(m_model, X, Y)


@pytest.mark.parametrize(("script", "cls", "fn", "n", "falls"), [
    ("step_linear_regression.py", "LinearRegression", "run", 20, True),  # train(epoch) over module globals
    ("step_lbfgs.py", "Cubic", "train", 5, True),                        # LBFGS closure
    ("step_two_heads.py", "TwoHeads", "train", 20, False),               # retain_graph, accumulation, .grad reads
    ("step_amp_clip.py", "MLP", "train", 20, False),                     # CPU AMP (full precision), returned norm
])
def test_regression_scripts_track_torch(script, cls, fn, n, falls):
    t_losses, m_losses = _regression_losses(script, cls, fn)
    if falls:
        assert t_losses[-1] < 0.7 * t_losses[0]
    assert_losses_match(t_losses, m_losses, n=n)


def test_gan_step_with_two_optimizers():
    import torch

    t_mod, m_mod, converted = _pair("step_gan.py")
    torch.manual_seed(0)
    t_g, m_g = twin_models(t_mod, m_mod, "Generator")
    t_d, m_d = twin_models(t_mod, m_mod, "Discriminator", seed=1)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 6)) + 2).astype(np.float32) for _ in range(7)]
    noises = [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(7)]
    t_losses, m_losses = t_mod.train(t_g, t_d, batches, noises), m_mod.train(m_g, m_d, batches, noises)
    assert_losses_match(t_losses, m_losses, n=21)


def test_autograd_grad_manual_sgd_and_input_gradient():
    t_mod, m_mod, _ = _pair("step_autograd_grad.py")
    t_model, m_model = twin_models(t_mod, m_mod, "Net")
    X, Y = regression_data()
    np.testing.assert_allclose(m_mod.saliency(m_model, X).asnumpy(), t_mod.saliency(t_model, X).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    t_losses, m_losses = t_mod.train(t_model, X, Y), m_mod.train(m_model, X, Y)
    assert t_losses[-1] < 0.7 * t_losses[0]
    assert_losses_match(t_losses, m_losses)
