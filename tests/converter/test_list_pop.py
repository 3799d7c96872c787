"""Skip connections kept in a list and taken back with ``pop()``, as U-Nets do: a static graph gives a pop inside an
expression as a (list, item) pair, and popping in a loop over sub-Cells can give other numbers; the converter reads the
end of the list and re-binds it shorter, and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)])
            self.up = nn.ModuleList([nn.Linear(8, 4), nn.Linear(8, 4), nn.Linear(8, 4)])

        def forward(self, x):
            skips = []
            for block in self.down:
                x = torch.tanh(block(x))
                skips.append(x)
            first = skips.pop(0)
            skips.append(first * 2)
            for block in self.up:
                x = block(torch.cat([x, skips.pop()], dim=-1))
            return x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_skip_connections_taken_back_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "first = skips[0]\n        skips = skips[1:]" in code
    # x and the popped skip have no dtype facts: the join promotes them as torch does (mp_tensor.promoted)
    assert "_mp_popped = skips[-1]\n            skips = skips[:-1]\n            x = block(ops.cat(mp_tensor.promoted([x, _mp_popped])" \
        in code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "pop", mode, atol=1e-5)


def test_a_list_handed_over_is_left_and_a_conditional_pop_becomes_an_if():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                kept = []
                self.cache = kept
                kept.append(x)
                y = kept.pop()
                more = [x, x]
                z = more.pop() if len(more) > 1 else x
                return y + z + more.pop(1)
    """)
    code = convert_source(source).code
    assert "y = kept.pop()" in code  # self.cache holds the list: popping changes what the model keeps
    assert "z = more.pop() if" not in code and "if len(more) > 1:" in code  # ListPopTransform's conditional form
    assert "more.pop(1)" in code


HANDED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x):
            skips = []
            for block in self.blocks:
                x = torch.tanh(block(x))
                skips.append(x)
            return x, skips


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(8, 4), nn.Linear(8, 4), nn.Linear(8, 4)])
            self.norms = nn.ModuleList([nn.LayerNorm(4), nn.LayerNorm(4), nn.LayerNorm(4)])

        def forward(self, x, skips):
            for block, norm in zip(self.blocks, self.norms):
                x = norm(block(torch.cat([x, skips.pop()], dim=1)))
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.decoder = Decoder()

        def forward(self, x):
            x, skips = self.encoder(x)
            return self.decoder(x, skips)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_list_handed_to_the_method_is_popped_by_rebinding(tmp_path, mode):
    # mini-stable-diffusion's U-Net: the decoder pops the encoder's skips inside torch.cat, in a zip loop over its
    # sub-Cells; GRAPH_MODE failed ("Failed calling Concat with tensors=List[Tensor, Tuple[List[...], Tensor]]")
    code = convert_source(HANDED).code
    assert "_mp_popped = skips[-1]\n            skips = skips[:-1]" in code
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(HANDED, code, "Net", [x], tmp_path, "handed", mode, atol=1e-5)
