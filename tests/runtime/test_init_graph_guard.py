"""torch.nn.init's fills (mindport.runtime.init) refuse to run for a static graph, compiled or through the JIT Fallback.

The fills replace a Parameter's data on the host. Compiled in a graph they raised mindport's error already (their
own guard checked ``in_graph``); but a Python object the graph calls (a class instantiated in ``construct``) runs as
Python through MindSpore's JIT Fallback, where ``in_graph`` is False: the fill ran once, at compile time, and the
graph kept reading the value it had found (measured on main 3fafb6b: a Parameter of zeros refilled with ones in every
forward gave 0, then 5 after set_data(5); torch gives 1 both times): silently wrong. Now the fills use the runtime's
one guard, ``_graph.host_only`` (compiled or Fallback): mindport's error, and PyNative unchanged.
"""
from __future__ import annotations

import numpy as np
import pytest


def _net(through_fallback: bool):
    from mindspore import Parameter, Tensor, nn

    from mindport.runtime import init as mp_init

    class Refill:
        """A Python class called in construct: MindSpore runs it through its JIT Fallback."""

        def __init__(self, p):
            mp_init.constant_(p, 1.0)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.zeros(3, np.float32)), name="w")

        def construct(self, x):
            if through_fallback:
                Refill(self.w)
            else:
                mp_init.constant_(self.w, 1.0)
            return x * self.w

    return Net()


@pytest.mark.parametrize("through_fallback", [True, False], ids=["jit-fallback", "compiled"])
def test_a_fill_refuses_a_graph(through_fallback):
    import mindspore as ms
    from mindspore import Tensor

    net = _net(through_fallback)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(RuntimeError, match="mindport: torch.nn.init functions fill a Parameter on the host"):
            net(Tensor(np.ones(3, np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("through_fallback", [True, False], ids=["python-class", "direct"])
def test_a_fill_runs_in_pynative_like_torch(through_fallback):
    import torch
    from mindspore import Tensor

    net = _net(through_fallback)
    t_w = torch.zeros(3)
    for value in (0.0, 5.0):  # torch refills in every forward: 1 whatever the weight held
        net.w.set_data(Tensor(np.full(3, value, np.float32)))
        t_w.fill_(value)
        torch.nn.init.constant_(t_w, 1.0)
        np.testing.assert_array_equal(net(Tensor(np.ones(3, np.float32))).asnumpy(), (torch.ones(3) * t_w).numpy())


def test_one_guard():
    """runtime/init.py has no guard of its own: the fills call _graph.host_only."""
    import inspect

    from mindport.runtime import init as mp_init

    source = inspect.getsource(mp_init)
    assert "def _host_only" not in source and "in_graph" not in source
    assert source.count("host_only(_HOST)") == 14
