"""Tuples, lists, comprehensions, conditional expressions and short-circuit tests kept only for their calls
(``row.append(i), col.append(j)``, ``[parts.append(f(x)) for x in xs]``, ``row.append(i) if i else None``,
``i > 1 and row.append(i)``) are statements, loops and tests in a model's methods (DisplayStatementTransform):
MindSpore's GRAPH_MODE dropped the calls in such a display, silently, until an index read the empty lists (torchfm's
product networks, ChenYang-1996/pytorch_CTR: "The sequence element(tuple/list) in tuple index can't be empty").
Each port matches torch in PyNative and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

PAIRS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class InnerProduct(nn.Module):
        def forward(self, x):
            num_fields = x.shape[1]
            row, col = list(), list()
            for i in range(num_fields - 1):
                for j in range(i + 1, num_fields):
                    row.append(i), col.append(j)
            return torch.sum(x[:, row] * x[:, col], dim=2)
""")

LISTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Scaled(nn.Module):
        def forward(self, x):
            parts, scales = [], []
            [parts.append(x * 2), scales.append(3.0)]
            return parts[0] * scales[0]
""")

COMPREHENDED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Gathered(nn.Module):
        def forward(self, x):
            parts = []
            [parts.append(x[:, k] * (k + 1)) for k in range(x.shape[1]) if k % 2 == 0]
            {parts.append(x[:, a] + x[:, b]) for a in range(2) for b in range(a + 1, 3)}
            return torch.stack(parts, dim=1)
""")


CONDITIONAL = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Picked(nn.Module):
        def forward(self, x):
            row, d = [], {}
            for i in range(3):
                row.append(i) if i > 0 else None
                i > 1 and row.append(i)
                row.append(i) or row.append(i + 1)
                not row.append(i)
                (row.append(0), [row.append(1) for _ in range(2)]) if i == 2 else row.append(2)
            d.update({"a": 2.0}) or row.append(1)
            return x[:, row] * d["a"]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("name, source, cls", [("pairs", PAIRS, "InnerProduct"), ("listed", LISTED, "Scaled"),
                                               ("comprehended", COMPREHENDED, "Gathered"),
                                               ("conditional", CONDITIONAL, "Picked")])
def test_calls_in_a_display_statement_run_in_a_graph(tmp_path, mode, name, source, cls):
    code = convert_source(source).code
    assert "row.append(i), col.append(j)" not in code and "[parts.append" not in code and "{parts" not in code, code
    assert " if i > 0 else None" not in code and "i > 1 and" not in code and "not row.append(i)\n" not in code, code
    x = np.random.default_rng(2).standard_normal((2, 4, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, code, cls, [x], tmp_path, name, mode, atol=1e-6)


def test_a_comprehension_whose_name_the_method_reads_stays():
    # the loop would bind k in the method, where a later read means the method's own k
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Kept(nn.Module):
            def forward(self, x, k):
                parts = []
                [parts.append(x * k) for k in range(2)]
                return parts[0] * k
    """)
    assert "[parts.append(x * k) for k in range(2)]" in convert_source(source).code
