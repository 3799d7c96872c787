"""An iterator advanced by ``next()`` and then looped over in a model's method (NCRFpp's CRF: ``seq_iter =
enumerate(scores)``, ``_, first = next(seq_iter)``, ``for idx, cur in seq_iter``). MindSpore 2.10's static graph does
not let ``next()`` advance the iterator the loop reads: the loop runs over every item again, so what it builds has one
item more than in PyNative, silently. The converter says so (MP107) at the loop, or writes the straight form over a
tuple of the items (test_next_then_loop56.py); the measurement below is why."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            steps = enumerate(self.fc(x))
            _, first = next(steps)
            history = [first]
            for i, v in steps:
                history.append(v * 2.0)
            return torch.stack(history, 0)
""")


def test_next_then_a_loop_over_the_same_iterator_is_said():
    """Where the rewrite of the straight form (tests/converter/test_next_then_loop56.py) does not hold: here the
    name is read once more after the loop."""
    result = convert_source(SOURCE.replace("        return torch.stack", "        rest = list(steps)\n        return torch.stack"))
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "next()" in said[0].message and "'steps'" in said[0].message, \
        [d.format() for d in result.diagnostics]
    assert said[0].line == 14  # the for loop


def test_the_graph_does_not_run_what_pynative_runs(tmp_path):
    """What the diagnostic says, measured: 4 rows in PyNative (as torch); a graph does not give them (MindSpore 2.10:
    ``next`` there yields a pair with the iterator, so ``first`` is not the first row, and the loop sees every item;
    a plain ``@jit`` function doing the same builds 5 items instead of 4)."""
    import mindspore as ms

    net = load_module(convert_source(SOURCE).code, tmp_path / "m_next.py", "m_next").Net()
    x = ms.Tensor(np.ones((4, 3), np.float32))
    assert net(x).shape == (4, 3)

    @ms.jit
    def count(t):
        it = enumerate(t)
        _, first = next(it)
        items = [first]
        for _, v in it:
            items.append(v)
        return len(items)

    assert count(x) == 5  # Python: 4


def test_a_loop_over_an_iterator_next_never_reads_is_not_said():
    source = SOURCE.replace("_, first = next(steps)", "first = x[0]")
    assert not [d for d in convert_source(source).diagnostics if d.code == "MP107"]
