"""TrainingLoopRule._bound_later with the loop's position unknown (the outer loop is not a statement of the scope's
body): it answers False instead of comparing an index with None (TypeError; the guard was lost in a9aff4d6)."""
from types import SimpleNamespace

import libcst as cst

from mindport.migrator.rules.training_loop import TrainingLoopRule


def test_bound_later_with_loop_outside_the_scope_body_is_false():
    module = cst.parse_module("optimizer = make()\nx = 1\n")
    stray_loop = cst.parse_statement("for i in range(3):\n    pass\n")  # not in module.body
    scope = object()
    fake = SimpleNamespace(scope=scope, _scope_nodes={id(scope): module}, _outer_loops={id(scope): stray_loop})
    assert TrainingLoopRule._bound_later(fake, "optimizer") is False


def test_bound_later_still_sees_an_optimizer_bound_after_the_loop():
    module = cst.parse_module("for i in range(3):\n    pass\noptimizer = make()\n")
    scope = object()
    fake = SimpleNamespace(scope=scope, _scope_nodes={id(scope): module}, _outer_loops={id(scope): module.body[0]})
    assert TrainingLoopRule._bound_later(fake, "optimizer") is True
