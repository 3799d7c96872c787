"""Training-loop causes of branch train3, one test each, on real torch and real MindSpore: the converted loop's speed
setting on the CPU, higher-order gradients, and corpus causes (benchmarks/training/)."""
from __future__ import annotations

import numpy as np

from _harness import convert, load_module


def test_converted_training_loop_runs_synchronously_on_the_cpu():
    # MindSpore's asynchronous operator pipeline cost a converted PyNative training loop 3x its time on the CPU
    # (NNLM: 2.2 -> 6.5 steps/s measured, same losses); the region's value_and_grad turns synchronous launch on
    from mindspore._c_expression import RuntimeConf

    _, code = convert("step_manual_net.py")
    module = load_module(code, "ms_step_manual_net_speed")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((16, 8), (16, 2), (8, 12), (12, 2))]
    losses = module.train(*arrays, steps=3)
    assert len(losses) == 3 and all(np.isfinite(losses))
    assert RuntimeConf.get_instance().is_launch_blocking()
