"""An iterator advanced by ``next()`` in straight code and then looped over in a model's method (NCRFpp's CRF:
``seq_iter = enumerate(scores)``, ``_, first = next(seq_iter)``, ``for idx, cur in seq_iter``; its three decoders).
MindSpore 2.10's graph does not let ``next()`` advance the iterator the loop reads (tests/converter/
test_next_then_loop.py measures it), so this was said (MP107) and failed in a graph. The straight form (the binding,
the ``next`` statements and the loop in one block, the name read nowhere else) is now written over a tuple of the
items: ``it = tuple(enumerate(xs))``, the i-th ``next(it)`` is ``it[i]``, the loop is over ``it[k:]``; ``iter(xs)``
is ``tuple(xs)``. Any other use keeps the MP107. The converted model runs against torch in PyNative and GRAPH_MODE
(the graph case failed before: a history one item longer, or the conversion said MP107)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            scores = self.fc(x)
            steps = enumerate(scores)
            _, first = next(steps)
            history = [first]
            for i, v in steps:
                history.append(torch.maximum(history[-1], v) * 0.5 + i)
            rows = iter(x)
            next(rows)
            second = next(rows)
            for r in rows:
                second = second * r
            pairs = zip(scores, x)
            a, b = next(pairs)
            for s, t in pairs:
                a = a + s * t
            return torch.stack(history, 0), second, a + b
""")


def test_the_straight_form_is_written_over_the_items():
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code == "MP107"], [d.format() for d in result.diagnostics]
    code = result.code
    for line in ("steps = tuple(enumerate(scores))", "_, first = steps[0]", "for i, v in steps[1:]:",
                 "rows = tuple(x)", "second = rows[1]", "for r in rows[2:]:", "pairs = tuple(zip(scores, x))",
                 "for s, t in pairs[1:]:"):
        assert line in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_next_then_a_loop_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Decoder", [x], tmp_path, "next_loop56", mode)


@pytest.mark.parametrize("other", [
    "_, first = next(steps) if x.shape[0] > 1 else (0, x[0])",  # a next() not in a statement of its own
    "_, first = next(steps, (0, x[0]))",  # a default
])
def test_any_other_form_is_still_said(other):
    source = SOURCE.replace("_, first = next(steps)", other)
    assert source != SOURCE
    said = [d for d in convert_source(source).diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "'steps'" in said[0].message, [d.format() for d in said]


def test_a_name_read_after_the_loop_is_still_said():
    source = SOURCE.replace("        rows = iter(x)", "        extra = list(steps)\n        rows = iter(x)")
    assert source != SOURCE
    said = [d for d in convert_source(source).diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "'steps'" in said[0].message, [d.format() for d in said]
