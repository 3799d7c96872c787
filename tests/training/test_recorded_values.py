"""Losses built from values collected across several forward calls (REINFORCE episodes: log-probabilities appended
while acting in one helper, the loss built and stepped in another): the collected values are recorded with the code
that computed them and computed again inside the differentiation (mindport.runtime.training.record). Both scripts
draw actions with numpy from the policy's probabilities, so torch and MindSpore take the same actions; the losses
and the trained weights must track torch."""
from __future__ import annotations

import numpy as np

from tests.training._harness import assert_losses_match, convert, load_module, twin_models
from tests.training.test_backward_region import _imports_torch


def _pair(script):
    source, converted = convert(script)
    assert not _imports_torch(converted), converted
    assert "mp_train.record(" in converted, converted
    return load_module(source, "torch_" + script), load_module(converted, "ms_" + script)


def _weights_match(t_model, m_model, rtol=1e-4):
    t = sorted((k, v.detach().numpy()) for k, v in t_model.state_dict().items())
    m = sorted((p.name, p.asnumpy()) for p in m_model.trainable_params())
    assert len(t) == len(m)
    for (tk, tv), (mk, mv) in zip(t, m):
        np.testing.assert_allclose(mv.reshape(tv.shape), tv, rtol=rtol, atol=1e-6, err_msg=f"{tk} / {mk}")


def test_log_probs_saved_on_the_model_in_one_helper_and_stepped_in_another():
    t_mod, m_mod = _pair("step_saved_log_probs.py")
    t_model, m_model = twin_models(t_mod, m_mod, "Policy")
    start = t_model.fc.weight.detach().numpy().copy()
    t_losses, m_losses = t_mod.train(t_model), m_mod.train(m_model)
    assert not np.allclose(t_model.fc.weight.detach().numpy(), start)  # torch trained
    assert_losses_match(t_losses, m_losses, n=8)
    _weights_match(t_model, m_model)


def test_log_probs_collected_in_an_episode_stacked_and_handed_to_an_update_helper():
    t_mod, m_mod = _pair("step_episode_helpers.py")
    t_model, m_model = twin_models(t_mod, m_mod, "PolicyNet")
    t_losses, m_losses = t_mod.train(t_model), m_mod.train(m_model)
    assert_losses_match(t_losses, m_losses, n=10)
    _weights_match(t_model, m_model)


def test_loss_summed_over_steps_with_one_backward_every_four():
    # each step's forward_fn takes the running sum as its argument; the sum a later step reads is computed again
    # inside its differentiation (no backward consumed it yet), so the gradient is the whole sum's, as in torch
    from tests.training._harness import regression_data

    source, converted = convert("step_summed_over_steps.py")
    t_mod, m_mod = load_module(source, "torch_summed"), load_module(converted, "ms_summed")
    t_model, m_model = twin_models(t_mod, m_mod, "Net")
    X, Y = regression_data()
    t_losses, m_losses = t_mod.fit(t_model, X, Y), m_mod.fit(m_model, X, Y)
    assert t_losses[-1] < t_losses[0]
    assert_losses_match(t_losses, m_losses, n=len(t_losses))
    _weights_match(t_model, m_model)
