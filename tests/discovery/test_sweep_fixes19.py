"""Fixes from disc19's first contact with manifest rows 115 onwards (issue 29): input and constructor guesses."""
from __future__ import annotations

from _prove import prove_files


TIME_BLOCKS = '''
import torch
import torch.nn as nn


class TemporalBlock(nn.Module):
    def __init__(self, inp_channels, out_channels, embed_dim):
        super().__init__()
        self.conv = nn.Conv1d(inp_channels, out_channels, 5, padding=2)
        self.time_mlp = nn.Sequential(nn.Mish(), nn.Linear(embed_dim, out_channels))

    def forward(self, x, t):
        return self.conv(x) + self.time_mlp(t)[:, :, None]


class Modulated(nn.Module):
    def __init__(self, hidden_size, cond_size):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size, elementwise_affine=False)
        self.modulation = nn.Sequential(nn.SiLU(), nn.Dropout(0.0), nn.Linear(cond_size, 2 * hidden_size))
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, x, c):
        shift, scale = self.modulation(c).chunk(2, dim=1)
        return self.proj(self.norm(x) * (1 + scale[:, None]) + shift[:, None])
'''

COUNTS = '''
import torch.nn as nn


class Projection(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.linear = nn.Linear(hp.embedder.lstm_hidden, hp.embedder.emb_dim)

    def forward(self, x):
        return self.linear(x)


class Embedder(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.lstm = nn.LSTM(hp.embedder.num_mels, hp.embedder.lstm_hidden, num_layers=hp.embedder.lstm_layers,
                            batch_first=True)
        self.proj = Projection(hp)

    def forward(self, mel):
        x, _ = self.lstm(mel)
        return self.proj(x[:, -1])


class Stacked(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(opts["width"], opts["width"]) for _ in range(opts["hidden_layers"])])

    def forward(self, x):
        for block in self.blocks:
            x = block(x).tanh()
        return x
'''

SCALES = '''
import torch
import torch.nn as nn

WIDTHS = (8, 12, 16)


class MultiScale(nn.Module):
    def __init__(self, scale_idx, num_scales, in_channels, mid_channels):
        super().__init__()
        self.is_last = scale_idx == num_scales - 1
        self.body = nn.Sequential(nn.Conv2d(in_channels, mid_channels, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(mid_channels, in_channels, 3, padding=1))
        if not self.is_last:
            self.next = MultiScale(scale_idx + 1, num_scales, 4 * in_channels, 2 * mid_channels)

    def forward(self, x):
        x = x + self.body(x)
        if not self.is_last:
            b, c, h, w = x.shape
            y = x.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, 4 * c, h // 2, w // 2)
            x = self.next(y).reshape(b, c, 2, 2, h // 2, w // 2).permute(0, 1, 4, 2, 5, 3).reshape(b, c, h, w)
        return x


class Stage(nn.Module):
    def __init__(self, stage_idx, in_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, WIDTHS[stage_idx], 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu()
'''


_prove = prove_files  # tests/discovery/_prove.py


def test_an_argument_handed_to_a_sequential_that_starts_with_an_activation(tmp_path):
    """(disc19) jannerm/diffuser's ResidualTemporalBlock.forward(x, t) hands ``t`` to
    ``time_mlp = Sequential(Mish(), Linear(embed_dim, out), ...)``: the builder saw Mish as the layer ``t`` meets
    (no known form), guessed ``t`` by its name as integer time steps, and every input raised ('"mish_cpu" not
    implemented for Long'). The layer past the weightless activation (and dropout) gives the form: batch x
    embed_dim floats (here for ``t`` and for a DiT-style condition ``c``)."""
    models = _prove(tmp_path, {"blocks.py": TIME_BLOCKS}, "blocks.py:*")
    block, modulated = models["blocks.py:TemporalBlock"], models["blocks.py:Modulated"]
    assert block["status"] == "proven", block
    assert block["inputs"][1].endswith(":float32") and block["inputs"][1].startswith("2x"), block["inputs"]
    assert int(block["inputs"][1].split(":")[0].split("x")[1]) == int(block["ctor"].split("embed_dim=")[1]), block
    assert modulated["status"] == "proven", modulated
    assert modulated["inputs"][1].split(":")[1] == "float32", modulated["inputs"]


def test_a_configuration_entry_handed_on_as_a_count_is_a_number(tmp_path):
    """(disc19) maum-ai/voicefilter's SpeechEmbedder(hp) builds ``nn.LSTM(..., num_layers=hp.embedder.lstm_layers)``:
    the attribute's name ends in ``layers``, so the builder guessed a list ([2, 2]) and every attempt raised ("'<='
    not supported between instances of 'list' and 'int'"). An entry handed on by a count keyword (``num_layers=``)
    or to ``range()`` is a number (a namespace attribute, and a mapping key)."""
    models = _prove(tmp_path, {"counts.py": COUNTS}, "counts.py:*")
    embedder, stacked = models["counts.py:Embedder"], models["counts.py:Stacked"]
    assert embedder["status"] == "proven", embedder
    assert "lstm_layers=2" in embedder["ctor"], embedder["ctor"]
    assert stacked["status"] == "proven", stacked
    assert "'hidden_layers': 2" in stacked["ctor"], stacked["ctor"]


def test_an_index_among_siblings_is_the_first_and_a_count_of_scales_is_small(tmp_path):
    """(disc19) chrischute/real-nvp's _RealNVP(scale_idx, num_scales, in_channels, mid_channels, num_blocks) builds
    itself again until ``scale_idx == num_scales - 1``: both guessed 16, it recursed to the builder's time limit. An
    index among siblings (..._idx, ..._index, ..._id) is 0, a count of scales, levels or stages is 2 (as one of
    layers or blocks); an index into a module table (``WIDTHS[stage_idx]``: 16 raised IndexError) is 0 too."""
    models = _prove(tmp_path, {"scales.py": SCALES}, "scales.py:*")
    multi, stage = models["scales.py:MultiScale"], models["scales.py:Stage"]
    assert multi["status"] == "proven", multi
    assert multi["ctor"].startswith("scale_idx=0, num_scales=2,"), multi["ctor"]
    assert stage["status"] == "proven", stage
    assert stage["ctor"].startswith("stage_idx=0,"), stage["ctor"]


def test_a_namespace_handed_on_gets_the_nested_attributes_the_other_class_reads(tmp_path):
    """(disc19) maum-ai/voicefilter's SpeechEmbedder(hp) reads ``hp.embedder.num_mels`` and hands ``hp`` to
    LinearNorm(hp), which reads ``hp.embedder.emb_dim``: the hand-on merged the other class's attributes at the top
    level only, ``embedder`` was there already, and the built namespace had no ``emb_dim`` (AttributeError)."""
    models = _prove(tmp_path, {"counts.py": COUNTS}, "counts.py:Embedder")
    embedder = models["counts.py:Embedder"]
    assert embedder["status"] == "proven", embedder
    assert "emb_dim=" in embedder["ctor"] and "num_mels=" in embedder["ctor"], embedder["ctor"]
