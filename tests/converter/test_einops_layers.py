"""Issue 30: einops' ``Rearrange``/``Reduce`` layers of a literal pattern are Cells the converted file defines
(``construct`` is the compiled pattern: reshape/transpose/reduction ops), and an einops name every use of which was
written out is no longer imported, nor ``mindport.runtime.einops_backend`` when nothing of einops is left. Proven
against torch + einops on several patterns, PyNative and GRAPH_MODE; the cases the converter cannot write out keep
the run-time layer."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

MODES = ("pynative", "graph")

LAYERS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from einops.layers.torch import Rearrange, Reduce
    from einops import rearrange, reduce


    class Net(nn.Module):
        def __init__(self, p=2, heads=2, dim=12):
            super().__init__()
            self.to_patches = nn.Sequential(
                Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p),
                nn.Linear(p * p * 3, dim))
            self.heads = Rearrange("b n (h d) -> b h n d", h=heads)
            self.merge = Rearrange("b h n d -> b n (h d)")
            self.pool = Reduce("b n d -> b d", "mean")
            self.maxpool = Reduce("b c (h h2) (w w2) -> b c h w", "max", h2=2, w2=2)
            self.sum_rows = Reduce("b ... d -> b d", reduction="sum")
            self.same = Rearrange(pattern="b n d -> b n d")

        def forward(self, img):
            x = self.to_patches(img)
            y = self.merge(self.heads(x))
            pooled = self.pool(y)
            m = self.maxpool(img)
            s = self.sum_rows(rearrange(img, "b c h w -> b h w c"))
            r = reduce(x, "b n d -> b d", "max")
            return self.same(x), pooled, m, s, r
""")


def _x(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("mode", MODES)
def test_layers_are_native_cells_and_match_torch(mode, tmp_path):
    code = convert_source(LAYERS).code
    imports = [line for line in code.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in imports if "mindport" in line or "einops" in line], code  # none is left
    assert "class Rearrange1(nn.Cell)" in code and "class Reduce1(nn.Cell)" in code, code
    assert_port_matches_in_mode(LAYERS, code, "Net", [_x(2, 3, 4, 6)], tmp_path, "layers", mode, atol=1e-5)


def test_one_class_per_pattern_and_names_the_file_uses_are_skipped():
    source = textwrap.dedent("""
        import torch.nn as nn
        from einops.layers.torch import Rearrange

        Rearrange1 = 3


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Rearrange("b c h w -> b h w c")
                self.b = Rearrange("b c h w -> b h w c")
                self.c = Rearrange("b (h d) -> b h d", h=2)
                self.d = Rearrange("b (h d) -> b h d", h=4)

            def forward(self, x):
                return self.a(x)
    """)
    code = convert_source(source).code
    assert code.count("class Rearrange2(nn.Cell)") == 1 and code.count("class Rearrange3(nn.Cell)") == 1, code
    assert "class Rearrange1(" not in code and "Rearrange4" not in code, code
    assert "self.a = Rearrange2()" in code and "self.b = Rearrange2()" in code, code
    assert "self.c = Rearrange3(h=2)" in code and "self.d = Rearrange3(h=4)" in code, code


def test_layers_the_converter_cannot_write_out_keep_the_runtime_layer():
    source = textwrap.dedent("""
        import torch.nn as nn
        from einops.layers.torch import Rearrange, Reduce


        class Net(nn.Module):
            def __init__(self, pattern, kind=Rearrange, **axes):
                super().__init__()
                self.a = Rearrange(pattern)  # not a literal
                self.b = Rearrange("b c h w -> b (h w) c", **axes)  # lengths known at run time
                self.c = Reduce("b n d -> b d", "mean")  # written out
                self.d = Rearrange("b n (h training) -> b h n training", training=2)  # a Cell's name

            def forward(self, x):
                return self.c(x)
    """)
    code = convert_source(source).code
    assert "from mindport.runtime.einops_layers import Rearrange" in code, code  # Rearrange still used
    assert "Reduce," not in code and ", Reduce" not in code, code  # Reduce's only use written out
    assert "self.a = Rearrange(pattern)" in code and "Rearrange(\"b c h w -> b (h w) c\", **axes)" in code
    assert "self.c = Reduce1()" in code
    assert 'Rearrange("b n (h training) -> b h n training", training=2)' in code
    assert "from einops" not in code  # the runtime layers module loads the backend itself


def test_einops_function_import_stays_while_a_use_remains():
    source = textwrap.dedent("""
        from einops import rearrange, repeat


        def f(x, pattern):
            return rearrange(x, "b n d -> b d n"), rearrange(x, pattern), repeat
    """)
    code = convert_source(source).code
    # rearrange(x, pattern) is mindport's graph-safe einops function; repeat, handed on as a value, stays einops'
    assert "from einops import repeat" in code and "mp_einops.rearrange(x, pattern)" in code, code
    assert "mindport.runtime import einops_backend as mp_einops" in code, code
    only = convert_source("from einops import rearrange, repeat\n\n\ndef f(x):\n"
                          "    return rearrange(x, 'b n d -> b d n')\n").code
    # repeat was never used by the source: it is not the converter's to drop
    assert "from einops import repeat" in only and "rearrange" not in only.split("def f")[0], only


def test_cell_names_are_mindspores():
    from mindspore import nn

    from mindport.migrator.rules.einops_calls import CELL_NAMES
    cell = nn.Cell()
    names = {n for n in set(dir(cell)) | set(vars(cell)) if not n.startswith("_")}
    assert names <= CELL_NAMES, sorted(names - CELL_NAMES)
