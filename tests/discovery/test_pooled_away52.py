"""A channels-last image (B x H x W x C) the forward permutes to channels-first before a deep stack of halvings
(princeton-vl/pytorch_stacked_hourglass's PoseNet: ``imgs.permute(0, 3, 1, 2)``, a stride-4 stem, then hourglasses
of four max-pool halvings; its own channel assertion refuses every channels-first image), a trials entry `migrate`
did not build in the session-52 hand-entry comparison: the channels-last form guessed, 2 x 16 x 32 x 3, was pooled
away ("Given input size: (16x1x2). Calculated output size: (16x0x1). Output size is too small") and no larger form
followed. The class: a pooling's "Output size is too small" grows the input's spatial axes (all but the batch and
the channels, first or last) x 4. Fixture of our own; the expected status comes from torch and MindSpore run by
the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

DEEP = '''
import torch
from torch import nn


class Checked(nn.Module):
    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.c_in = c_in
        self.conv = nn.Conv2d(c_in, c_out, 3, stride, 1)

    def forward(self, x):
        assert x.size(1) == self.c_in, "{} {}".format(x.size(1), self.c_in)
        return torch.relu(self.conv(x))


class Funnel(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.stem = Checked(3, width, stride=2)
        self.pools = nn.Sequential(*[nn.MaxPool2d(2) for _ in range(4)])
        self.head = Checked(width, 4)

    def forward(self, imgs):
        x = imgs.permute(0, 3, 1, 2)
        return self.head(self.pools(self.stem(x)))
'''


def test_a_pooled_away_channels_last_image_is_grown(tmp_path):
    found = prove_files(tmp_path, {"funnel.py": DEEP}, "funnel.py:Funnel")
    entry = found["funnel.py:Funnel"]
    assert entry["status"] == "proven", entry
    dims = [int(v) for v in entry["inputs"][0].split(":")[0].split("x")]
    assert dims[-1] == 3 and min(dims[1:3]) >= 32, entry
