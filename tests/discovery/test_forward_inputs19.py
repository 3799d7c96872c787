"""A block's forward inputs taken from its container's own call (issue 29, migrate19: forward_inputs.py). Fixture
written for this test: an Anomaly-Transformer-shaped attention (its width ``sigma`` and its mask handed in by the
layer that calls it, the mask by keyword) and a U-Net up-block whose skip is twice its input's resolution."""
from __future__ import annotations

import numpy as np

SERIES = {"series.py": '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class WindowAttention(nn.Module):
    """Attention over a window with a learned Gaussian prior: the width ``sigma`` (B x L x H) and the mask come from
    the layer that calls it."""

    def __init__(self, win_size, scale=None):
        super().__init__()
        self.scale = scale
        pos = torch.arange(win_size, dtype=torch.float32)
        self.register_buffer("distances", (pos[:, None] - pos[None, :]).abs())

    def forward(self, queries, keys, values, sigma, attn_mask):
        B, L, H, E = queries.shape
        scores = torch.einsum("blhe,bshe->bhls", queries, keys) * (self.scale or 1.0 / math.sqrt(E))
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, -1e9)
        sigma = torch.sigmoid(sigma.transpose(1, 2) * 5) + 1e-2
        sigma = sigma.unsqueeze(-1).repeat(1, 1, 1, L)
        prior = torch.exp(-self.distances ** 2 / 2 / sigma ** 2) / (math.sqrt(2 * math.pi) * sigma)
        series = torch.softmax(scores, dim=-1)
        return torch.einsum("bhls,bshd->blhd", series, values), prior


class WindowLayer(nn.Module):
    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        self.inner = attention
        self.heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, n_heads)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, attn_mask=None):
        B, L, _ = x.shape
        H = self.heads
        out, prior = self.inner(self.q(x).view(B, L, H, -1), self.k(x).view(B, L, H, -1),
                                self.v(x).view(B, L, H, -1), self.sigma(x), attn_mask)
        return self.out(out.reshape(B, L, -1)), prior


class UpBlock(nn.Module):
    """Upsamples its input and joins the skip connection its container keeps (twice the input's resolution)."""

    def __init__(self, d_in, d_skip, d_out):
        super().__init__()
        self.up = nn.ConvTranspose2d(d_in, d_out, kernel_size=4, stride=2, padding=1)
        self.conv = nn.Conv2d(d_out + d_skip, d_out, 3, padding=1)

    def forward(self, x, skip):
        return F.relu(self.conv(torch.cat([self.up(x), skip], dim=1)))


class SeriesNet(nn.Module):
    def __init__(self, win_size=16, d_model=24, n_heads=3):
        super().__init__()
        self.embed = nn.Linear(5, d_model)
        self.layer = WindowLayer(WindowAttention(win_size), d_model, n_heads)
        self.down = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.bottom = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.up = UpBlock(16, 8, 8)

    def forward(self, x):
        L = x.shape[1]
        mask = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
        h, prior = self.layer(self.embed(x), attn_mask=mask)
        skip = F.relu(self.down(h.unsqueeze(1)))
        y = self.up(F.relu(self.bottom(skip)), skip)
        return h, prior, y
'''}


def _prove(tmp_path):
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in SERIES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="series.py", cache=False, settings=ProveSettings(stub_missing=True),
                             log_dir=tmp_path / "logs")
    return {m["class"].split(":")[1]: m for m in models}


def _load(spec):
    assert spec.endswith(".npy"), spec
    return np.load(spec)


def test_a_block_runs_on_what_its_container_hands_it(tmp_path):
    """On main WindowAttention and UpBlock were not built (``sigma`` drawn as a time step, ``2:int64:0:10``; the skip
    at the input's own resolution: "Expected size 64 but got size 32") and WindowLayer ran without its mask. Now each
    runs on its container's call, built as the container built it, and is proven."""
    models = _prove(tmp_path)
    assert all(m["status"] == "proven" for m in models.values()), models
    attention, layer, up = models["WindowAttention"], models["WindowLayer"], models["UpBlock"]
    for m in (attention, layer, up):
        assert m["input_source"] == "container call", m
    assert attention["ctor"] == "win_size=16" and up["ctor"] == "d_in=16, d_skip=8, d_out=8", models
    # the attention's five positional inputs: queries, keys, values (B x L x H x E), sigma (B x L x H), the mask
    q, k, v, sigma, mask = (_load(s) for s in attention["inputs"])
    assert q.shape == k.shape == v.shape == (2, 16, 3, 8) and q.dtype == np.float32, attention
    assert sigma.shape == (2, 16, 3) and sigma.dtype == np.float32, attention
    assert mask.dtype == np.bool_ and np.array_equal(mask, np.triu(np.ones((16, 16), bool), 1)), attention
    # the layer got its mask by keyword: put in its place after x
    x, layer_mask = (_load(s) for s in layer["inputs"])
    assert x.shape == (2, 16, 24) and np.array_equal(layer_mask, mask), layer
    # the up-block's skip is twice its input's resolution
    low, skip = (_load(s) for s in up["inputs"])
    assert low.shape[1] == 16 and skip.shape[1] == 8 and skip.shape[2:] == tuple(2 * n for n in low.shape[2:]), up


def test_keyword_arguments_take_their_places_in_the_forward(tmp_path):
    """forward_inputs.positional: a keyword argument goes to its positional place, a parameter skipped before it
    takes its default, a keyword-only parameter or **kwargs has no positional form."""
    import pytest
    import torch

    from mindport.discovery.forward_inputs import _NoForm, positional

    class Block(torch.nn.Module):
        def forward(self, x, mask=None, scale=2.0, *, extra=None):
            return x

    b, t = Block(), torch.zeros(2)
    assert positional(b.forward, (t,), {}) == [t]
    got = positional(b.forward, (t,), {"scale": 3.0})
    assert got[0] is t and got[1:] == [None, 3.0]
    with pytest.raises(_NoForm):
        positional(b.forward, (t,), {"extra": t})
