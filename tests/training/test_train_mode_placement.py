"""Where a converted script switches its model to training mode: a torch Module trains from birth, a MindSpore Cell
does not, so a file that never calls train() gets ``model.set_train(True)`` once, before the outermost training loop
of the scope (not once per iteration), also when it calls eval() later: torch trains in training mode until then."""
from __future__ import annotations

from tests.training._harness import assert_losses_match, convert, load_module, regression_data, twin_models


def test_set_train_once_before_the_loop_and_eval_inside_it_tracks_torch():
    source, converted = convert("step_eval_each_epoch.py")
    lines = [l.strip() for l in converted.splitlines()]
    assert lines.count("model.set_train(True)") == 1, converted
    assert lines.index("model.set_train(True)") < lines.index("for epoch in range(epochs):"), converted
    t_mod, m_mod = load_module(source, "torch_eval_each"), load_module(converted, "ms_eval_each")
    t_model, m_model = twin_models(t_mod, m_mod, "Net")
    X, Y = regression_data()
    t_losses, m_losses = t_mod.fit(t_model, X, Y), m_mod.fit(m_model, X, Y)
    # first epoch in training mode (batch statistics), then inference mode (running statistics), in both
    assert_losses_match(t_losses, m_losses, n=len(t_losses))
