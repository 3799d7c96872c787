"""The unbatched handling's facts through a loop over a list of lists of the file's own cells (issue 30: native
ports; vit-pytorch's NesT).

NesT keeps its stages as ``layers.append(nn.ModuleList([Transformer(...), Aggregate(...) if not is_last else
nn.Identity()]))`` and walks them with ``for level, (transformer, aggregate) in zip(reversed(range(n)),
self.layers)``; each Transformer keeps ``nn.ModuleList([Attention(...), FeedForward(...)])`` pairs walked by ``for
attn, ff in self.layers``. On main the batch facts stopped at such a list (a cell built there was taken as called on
anything) and at an own cell inside a Sequential (``Sequential(Rearrange(...), LayerNorm(...), nn.Conv2d(...))``), so
the port loaded ``mindport.runtime.unbatched``; and ``zip(reversed(range(n)), self.layers)``, which a graph does not
compile over a CellList, loaded ``mindport.runtime.graph_order``. Now (native_facts ``_OwnCells.loop_member_batched``,
``looped_sequences_shown``, ``before_member``; ReversedCellsTransform's reversed range) the NESTED model below
converts with no mindport import, matches torch in PyNative and GRAPH_MODE, and refuses the unbatched image torch
refuses. Each HANDLED variant can meet an unbatched input (or is not followed) and keeps the handling.
"""
from __future__ import annotations

import pytest

from tests.converter.port_check import assert_port_matches_in_mode
from tests.converter.test_unbatched_own_cells import HEAD, LINE, _converted, _run

NESTED = """
    class ChanNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
            self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

        def forward(self, x):
            var = torch.var(x, dim=1, unbiased=False, keepdim=True)
            mean = torch.mean(x, dim=1, keepdim=True)
            return (x - mean) / (var + 1e-5).sqrt() * self.g + self.b


    class Patchify(nn.Module):
        def forward(self, x):
            x = x.reshape(x.shape[0], x.shape[1], x.shape[2] // 2, 2, x.shape[3] // 2, 2)
            return x.permute(0, 3, 5, 1, 2, 4).reshape(x.shape[0], x.shape[1] * 4, x.shape[2], x.shape[4])


    class FeedForward(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.net = nn.Sequential(ChanNorm(dim), nn.Conv2d(dim, dim * 2, 1), nn.GELU(), nn.Conv2d(dim * 2, dim, 1))

        def forward(self, x):
            return self.net(x)


    class Mixer(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = ChanNorm(dim)
            self.to_v = nn.Conv2d(dim, dim, 1, bias=False)
            self.to_out = nn.Conv2d(dim, dim, 3, padding=1)

        def forward(self, x):
            x = self.norm(x)
            v = torch.sigmoid(self.to_v(x))
            return self.to_out(v * x)


    def Aggregate(dim, dim_out):
        return nn.Sequential(nn.Conv2d(dim, dim_out, 3, padding=1), ChanNorm(dim_out),
                             nn.MaxPool2d(3, stride=2, padding=1))


    class Transformer(nn.Module):
        def __init__(self, dim, depth):
            super().__init__()
            layers = nn.ModuleList([])
            for _ in range(depth):
                layers.append(nn.ModuleList([Mixer(dim), FeedForward(dim)]))
            self.layers = layers

        def forward(self, x):
            for mix, ff in self.layers:
                x = mix(x) + x
                x = ff(x) + x
            return x


    class Net(nn.Module):
        def __init__(self, dim=8, levels=2):
            super().__init__()
            self.to_patches = nn.Sequential(Patchify(), ChanNorm(12), nn.Conv2d(12, dim, 1), ChanNorm(dim))
            layers = nn.ModuleList([])
            for level in range(levels):
                layers.append(nn.ModuleList([Transformer(dim, 2), Aggregate(dim, dim) if level else nn.Identity()]))
            self.layers = layers

        def forward(self, img):
            x = self.to_patches(img)
            n = len(self.layers)
            for level, (transformer, aggregate) in zip(reversed(range(n)), self.layers):
                s = 2 ** level
                x = x.reshape(x.shape[0], x.shape[1], s, x.shape[2] // s, s, x.shape[3] // s)
                x = x.permute(0, 2, 4, 1, 3, 5)
                x = x.reshape(x.shape[0] * s * s, x.shape[3], x.shape[4], x.shape[5])
                x = transformer(x)
                x = x.reshape(x.shape[0] // (s * s), s, s, x.shape[1], x.shape[2], x.shape[3])
                x = x.permute(0, 3, 1, 4, 2, 5)
                x = x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3], x.shape[4] * x.shape[5])
                x = aggregate(x)
            return x.flatten(1)
    """

HANDLED = {
    # a loop name read but not called: the cells put there are not followed
    "a loop name handed on": ("x = transformer(x)\n",
                              "x = transformer(x)\n                last = transformer\n"),
    # the container indexed: its members reachable another way
    "the container indexed": ("self.layers = layers\n",
                              "self.layers = layers\n            self.first = self.layers[0]\n"),
    # the stage's input the output of a cell called by a loop name: not shown a batch
    "a stage's input not shown": ("x = transformer(x)\n", "x = aggregate(x)\n                x = transformer(x)\n"),
    # no layer that refuses an unbatched image first: the first conv takes torch's (C, H, W)
    "no patchify first": ("nn.Sequential(Patchify(), ChanNorm(12),",
                          "nn.Sequential(ChanNorm(3), nn.Conv2d(3, 12, 1), ChanNorm(12),"),
    # the pair not unpacked: pair[0](x) is not followed
    "the pair not unpacked": ("for mix, ff in self.layers:\n                x = mix(x) + x\n"
                              "                x = ff(x) + x",
                              "for pair in self.layers:\n                x = pair[0](x) + x\n"
                              "                x = pair[1](x) + x"),
}


def test_a_nested_loop_port_needs_no_mindport_and_refuses_what_torch_refuses(tmp_path):
    """Real torch and MindSpore in a fresh process (nothing else loads the handling): the batch matches; the
    unbatched image torch refuses (Patchify's ``x.shape[3]``) the port refuses too."""
    code = _converted(NESTED)
    assert "mindport" not in code, code
    assert "zip(range(n - 1, -1, -1), self.layers)" in code, code
    result = _run(tmp_path, NESTED, "Net")
    assert result["loaded"] is False
    assert result["batched"] < 1e-5, result
    assert result["unbatched"] == ["raises", "raises"], result


def test_a_nested_loop_port_matches_torch_in_graph_mode(tmp_path):
    """GRAPH_MODE compiles the loops over the CellLists (the reversed range, the unpacked pairs) and matches torch."""
    import numpy as np

    source = HEAD + __import__("textwrap").dedent(NESTED)
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(source, _converted(NESTED), "Net", [x], tmp_path, "nested29", "graph",
                                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("change", [pytest.param(v, id=k) for k, v in HANDLED.items()])
def test_a_loop_the_facts_do_not_follow_keeps_the_handling(change):
    source = NESTED.replace(*change)
    assert source != NESTED
    assert LINE in _converted(source)


def test_a_list_stored_again_where_torch_registers_it_is_still_followed():
    """A Parameter registered while ``self.layers`` is filled makes the converter hoist the list to a local and store
    it twice (``self.layers = layers`` before the Parameter and after the loop, so the Cell lists its parameters in
    torch's order: NesT's Transformer with ``pos_emb``); the same local stored again under the same name is the same list,
    and the port stays free of the handling (it loaded it again after that ordering fix, on NesT itself)."""
    source = NESTED.replace(
        "            layers = nn.ModuleList([])\n            for _ in range(depth):\n"
        "                layers.append(nn.ModuleList([Mixer(dim), FeedForward(dim)]))\n"
        "            self.layers = layers\n",
        "            self.layers = nn.ModuleList([])\n            self.pos = nn.Parameter(torch.zeros(1))\n"
        "            for _ in range(depth):\n"
        "                self.layers.append(nn.ModuleList([Mixer(dim), FeedForward(dim)]))\n")
    assert source != NESTED
    code = _converted(source)
    assert code.count("self.layers = layers") >= 3, code  # the Transformer's list stored twice
    assert LINE not in code and "mindport" not in code, code
