"""A layer's settings written in one unpacking assignment after construction (a segmentation backbone made dilated
in a loop over ``named_modules()``: ``m.dilation, m.padding, m.stride = (d, d), (d, d), (s, s)``). Each element
became the run-time *reader* ``mp_adapt.layer_attribute(m, 'dilation')``, a tuple of calls is no assignment target,
the converted file did not parse (MP299) and was copied unchanged: every model of the file then ran torch code on the
MindSpore side. Now the statement is one accessor write per converted setting, in order (the value a display of
plain items), and the port matches torch; a value that cannot be split is flagged, never half-converted."""
from __future__ import annotations

import textwrap

import pytest

from mindport import convert_source
from port_check import assert_port_matches

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Body(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
            self.down = nn.Sequential(nn.Conv2d(4, 4, 1, stride=2))
            self.bn = nn.BatchNorm2d(4)

        def forward(self, x):
            return self.bn(self.down(self.conv2(self.conv1(x))))


    class Dilated(nn.Module):
        def __init__(self, d, s):
            super().__init__()
            self.body = Body()
            for n, m in self.body.named_modules():
                if 'conv2' in n:
                    m.dilation, m.padding, m.stride = (d, d), (d, d), (s, s)
                elif 'down.0' in n:
                    [m.stride, m.tag] = [(1, 1), 'kept']
                elif isinstance(m, nn.BatchNorm2d):
                    m.eps, m.momentum = 0.5, 0.2

        def forward(self, x):
            return self.body(x)
""")


def test_unpacking_writes_convert_to_one_write_each():
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code == "MP299"], result.diagnostics
    code = result.code
    assert "set_layer_attribute(m, 'dilation', (d, d))" in code, code
    assert "set_layer_attribute(m, 'stride', (1, 1))" in code, code
    assert "m.tag = 'kept'" in code, code
    assert "layer_attribute(m, 'dilation')," not in code, code


@pytest.mark.parametrize("d, s", [(2, 1), (3, 2)])
def test_unpacking_writes_match_torch(tmp_path, d, s):
    code = convert_source(SOURCE).code
    assert_port_matches(SOURCE, code, "Dilated", (2, 3, 13, 11), tmp_path, f"unpacked_{d}_{s}", atol=1e-5,
                        args=(d, s))


def test_an_unpacking_write_that_cannot_be_split_is_flagged():
    source = textwrap.dedent("""\
        import torch.nn as nn


        def swap(model):
            for m in model.modules():
                m.padding, m.dilation = m.dilation, m.padding
    """)
    result = convert_source(source)
    assert [d for d in result.diagnostics if d.code == "MP104" and "unpacking" in d.message], result.diagnostics
    assert "m.padding, m.dilation = m.dilation, m.padding" in result.code, result.code
