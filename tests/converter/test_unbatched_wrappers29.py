"""The unbatched handling's facts through a wrapper cell, a starred list of Sequentials and loop members that are
wrappers (issue 30: native ports; vit-pytorch's Twins-SVT).

Twins-SVT wraps its layers in ``Residual(fn)`` (``self.fn = fn``; ``return self.fn(x, **kwargs) + x``): PEG's
``Residual(nn.Conv2d(...))`` and the Transformer's ``nn.ModuleList([Residual(LocalAttention(...)) if has_local else
nn.Identity(), Residual(FeedForward(...)), ...])`` walked by ``for local_attn, ff1, global_attn, ff2 in self.layers:
x = local_attn(x)``. Its stages are ``layers.append(nn.Sequential(PatchEmbedding(...), Transformer(...), PEG(...),
Transformer(...)))`` then ``self.layers = nn.Sequential(*layers, pool, ...)``. On native29 the batch facts stopped at
each of these (a layer handed to a wrapper, a member of an appended Sequential, a loop name's output), so the port
loaded ``mindport.runtime.unbatched``. Now (native_facts ``_OwnCells.wrapped_batched``, ``appended_sequence``,
``loop_call_output``) the TWINS model below converts with no mindport import, matches torch in PyNative and
GRAPH_MODE, and refuses the unbatched image torch refuses (PatchEmbed's ``x.shape[3]``). Each HANDLED variant can
meet an unbatched input, or is not followed, and keeps the handling; the first one torch runs unbatched, and so does
the port (checked in a fresh process).
"""
from __future__ import annotations

import pytest

from tests.converter.port_check import assert_port_matches_in_mode
from tests.converter.test_unbatched_own_cells import HEAD, LINE, _converted, _run

TWINS = """
    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x, **kwargs):
            return self.fn(x, **kwargs) + x


    class ChanNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
            self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

        def forward(self, x):
            var = torch.var(x, dim=1, unbiased=False, keepdim=True)
            mean = torch.mean(x, dim=1, keepdim=True)
            return (x - mean) / (var + 1e-5).sqrt() * self.g + self.b


    class PatchEmbed(nn.Module):
        def __init__(self, dim, dim_out):
            super().__init__()
            self.proj = nn.Sequential(ChanNorm(dim * 4), nn.Conv2d(dim * 4, dim_out, 1), ChanNorm(dim_out))

        def forward(self, x):
            x = x.reshape(x.shape[0], x.shape[1], x.shape[2] // 2, 2, x.shape[3] // 2, 2)
            x = x.permute(0, 1, 3, 5, 2, 4).reshape(x.shape[0], x.shape[1] * 4, x.shape[2], x.shape[4])
            return self.proj(x)


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


    class PEG(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = Residual(nn.Conv2d(dim, dim, 3, padding=1, groups=dim))

        def forward(self, x):
            return self.proj(x)


    class Transformer(nn.Module):
        def __init__(self, dim, depth, has_local=True):
            super().__init__()
            layers = nn.ModuleList([])
            for _ in range(depth):
                layers.append(nn.ModuleList([
                    Residual(Mixer(dim)) if has_local else nn.Identity(),
                    Residual(FeedForward(dim)),
                ]))
            self.layers = layers

        def forward(self, x):
            for mix, ff in self.layers:
                x = mix(x)
                x = ff(x)
            return x


    class Net(nn.Module):
        def __init__(self, dims=(8, 12)):
            super().__init__()
            dim = 3
            layers = []
            for index, dim_next in enumerate(dims):
                is_last = index == len(dims) - 1
                layers.append(nn.Sequential(
                    PatchEmbed(dim, dim_next),
                    nn.Conv2d(dim_next, dim_next, 1),
                    Transformer(dim_next, 1, has_local=not is_last),
                    PEG(dim_next),
                    Transformer(dim_next, 2, has_local=not is_last),
                ))
                dim = dim_next
            self.layers = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, 5))

        def forward(self, x):
            return self.layers(x)
    """

HANDLED = {
    # no layer that refuses an unbatched image first: torch's ChanNorm (1, C, 1, 1) gain makes (C, H, W) 4-D
    "no patchify first": ("x = x.reshape(x.shape[0], x.shape[1], x.shape[2] // 2, 2, x.shape[3] // 2, 2)\n"
                          "            x = x.permute(0, 1, 3, 5, 2, 4).reshape(x.shape[0], x.shape[1] * 4, "
                          "x.shape[2], x.shape[4])\n",
                          "x = torch.cat([x, x, x, x], -3)\n"),
    # the wrapper stores its layer twice: the layer may be called another way
    "the wrapper stores fn twice": ("self.fn = fn\n", "self.fn = fn\n            self.other = fn\n"),
    # the wrapper calls its layer on a value not shown a batch
    "the wrapper's layer on another value": ("return self.fn(x, **kwargs) + x",
                                             "return self.fn(x[0], **kwargs) + x"),
    # the starred sequence indexed: a stage reachable alone
    "the starred sequence indexed": ("nn.Linear(dim, 5))\n",
                                     "nn.Linear(dim, 5))\n            self.stem = self.layers[0]\n"),
    # the list starred twice
    "the list starred twice": ("*layers, nn.AdaptiveAvgPool2d(1)", "*layers, *layers, nn.AdaptiveAvgPool2d(1)"),
    # a member at the loop name's place that does not keep the rank: the next call's input is not shown a batch
    "a loop member not keeping the rank": ("if has_local else nn.Identity()", "if has_local else nn.Flatten()"),
    # the loop name rebound: other values reach the call
    "a loop name rebound": ("x = mix(x)\n", "mix = ff\n                x = mix(x)\n"),
}


def test_a_wrapped_port_needs_no_mindport_and_refuses_what_torch_refuses(tmp_path):
    """Real torch and MindSpore in a fresh process (nothing else loads the handling): the batch matches; the
    unbatched image torch refuses (PatchEmbed's ``x.shape[3]``) the port refuses too."""
    code = _converted(TWINS)
    assert "mindport" not in code, code
    result = _run(tmp_path, TWINS, "Net")
    assert result["loaded"] is False
    assert result["batched"] < 1e-5, result
    assert result["unbatched"] == ["raises", "raises"], result


def test_a_wrapped_port_matches_torch_in_graph_mode(tmp_path):
    """GRAPH_MODE compiles the wrappers, the starred stages and the loops over the CellLists, and matches torch."""
    import numpy as np

    source = HEAD + __import__("textwrap").dedent(TWINS)
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(source, _converted(TWINS), "Net", [x], tmp_path, "twins29", "graph",
                                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("change", [pytest.param(v, id=k) for k, v in HANDLED.items()])
def test_a_wrapper_the_facts_do_not_follow_keeps_the_handling(change):
    source = TWINS.replace(*change)
    assert source != TWINS
    assert LINE in _converted(source)


def test_a_handled_wrapped_port_takes_the_unbatched_image_torch_takes(tmp_path):
    """With no patchify first torch runs the (C, H, W) image (its ChanNorm broadcasts it to 4-D); the port loads the
    handling and matches torch on it too."""
    result = _run(tmp_path, TWINS.replace(*HANDLED["no patchify first"]), "Net")
    assert result["loaded"] is True
    assert result["batched"] < 1e-5 and result["unbatched"] < 1e-5, result
