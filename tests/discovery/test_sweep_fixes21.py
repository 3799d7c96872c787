"""Fixes from disc21's first contact with manifest rows 143 onwards (issue 29): constructor guesses."""
from __future__ import annotations

from _prove import prove_files


COUNTS = '''
import torch
import torch.nn as nn


class Stretch(nn.Module):
    def __init__(self, x_scale, y_scale):
        super().__init__()
        self.x_scale = x_scale
        self.y_scale = y_scale

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.unsqueeze(-1).unsqueeze(3)
        x = x.repeat(1, 1, 1, self.y_scale, 1, self.x_scale)
        return x.view(b, c, h * self.y_scale, w * self.x_scale)


class Tiled(nn.Module):
    def __init__(self, width, time_scale):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.steps = time_scale

    def forward(self, x):
        return torch.cat([self.proj(x) for _ in range(self.steps)], dim=1)


class Gain(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.scale = scale

    def forward(self, x):
        return self.proj(x) * self.scale
'''


_prove = prove_files  # tests/discovery/_prove.py


def test_a_constructor_number_used_as_a_count_is_an_int(tmp_path):
    """(disc21) A scale the forward hands to ``repeat`` / ``view`` (WaveRNN's Stretch2d upsampler) or to ``range``:
    its name guessed 1.0, ``repeat`` refused a float; such a number is an int now. A scale only multiplied stays a
    float (1.0)."""
    models = _prove(tmp_path, {"counts.py": COUNTS}, "counts.py:*")
    stretch, tiled, gain = (models[f"counts.py:{n}"] for n in ("Stretch", "Tiled", "Gain"))
    assert stretch["status"] == "proven", stretch
    assert "x_scale=1," in stretch["ctor"] + ",", stretch["ctor"]
    assert tiled["status"] == "proven", tiled
    assert "time_scale=1" in tiled["ctor"], tiled["ctor"]
    assert gain["status"] == "proven", gain
    assert "scale=1.0" in gain["ctor"], gain["ctor"]
