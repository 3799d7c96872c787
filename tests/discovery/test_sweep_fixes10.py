"""Fixes from the discovery sweep's tenth pass (issue 29, rows 91 onwards of the manifest): the layer a forward
hands each argument to says that argument's form."""
from __future__ import annotations

from pathlib import Path

HANDED = '''
import torch
import torch.nn as nn


class ConditionalConvBlock(nn.Module):  # the label embedding is registered before the convolutions
    def __init__(self, dim, n_classes=10):
        super().__init__()
        self.label_embedding = nn.Embedding(n_classes, 2 * dim)
        self.vertical = nn.Conv2d(dim, 2 * dim, 3, padding=1)
        self.horizontal = nn.Conv2d(dim, 2 * dim, (1, 3), padding=(0, 1))

    def forward(self, x_v, x_h, y):
        cond = self.label_embedding(y)[:, :, None, None]
        v = self.vertical(x_v) + cond
        h = self.horizontal(x_h) + v
        a, b = h.chunk(2, dim=1)
        return torch.tanh(a) * torch.sigmoid(b)


class LabelledRegressor(nn.Module):  # features through a Sequential, labels through a table
    def __init__(self, n_features, n_labels):
        super().__init__()
        self.table = nn.Embedding(n_labels, 8)
        self.body = nn.Sequential(nn.Linear(n_features, 8), nn.ReLU())

    def forward(self, feats, labels):
        return self.body(feats) * self.table(labels)
'''


def _candidate(root: Path, name: str) -> dict:
    from mindport.discovery.scan import discover

    cand = next(c for c in discover(root) if c.name == name)
    return cand.to_json() | {"rel": cand.rel, "name": cand.name}


def test_each_argument_takes_the_form_of_the_layer_it_is_handed_to(tmp_path):
    """ritheshkumar95/pytorch-vqvae's ``GatedMaskedConv2d.forward(x_v, x_h, h)`` registers the class embedding that
    takes ``h`` before the convolutions that take ``x_v`` and ``x_h``: every input was integer tokens for the
    embedding ("Input type (long int) and bias type (float) should be the same"). scan records the attribute of the
    first ``self.X(arg)`` call of each argument; the builder forms each argument for that layer (the convolutions'
    channels, one label per sample for the table); proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "blocks.py").write_text(HANDED)
    cand = _candidate(src, "ConditionalConvBlock")
    assert [p["layer"] for p in cand["forward"]] == ["vertical", "horizontal", "label_embedding"], cand["forward"]
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="blocks.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    block = by_name["blocks.py:ConditionalConvBlock"]
    assert block["status"] == "proven", block
    assert block["inputs"][0].split(":")[1] == "float32" and block["inputs"][2].startswith("2:int64"), block["inputs"]
    regressor = by_name["blocks.py:LabelledRegressor"]
    assert regressor["status"] == "proven", regressor
    assert regressor["inputs"][0].endswith(":float32") and ":int64:" in regressor["inputs"][1], regressor["inputs"]


SIGNALS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class FramePower(nn.Module):  # a spectrogram-like front end: the waveform is padded by half a window each side
    def __init__(self, n_out=8):
        super().__init__()
        self.n_fft = 512  # fixed: no smaller window to build with
        self.frames = nn.Conv1d(1, n_out, self.n_fft, stride=128, bias=False)

    def forward(self, waveform):
        batch, length = waveform.shape
        x = F.pad(waveform[:, None, :], (self.n_fft // 2, self.n_fft // 2), mode="reflect")
        return self.frames(x).pow(2).mean(-1)


class LongKernel(nn.Module):  # a band-pass front end with a kernel longer than the lengths tried first
    def __init__(self, n_out=4):
        super().__init__()
        self.conv = nn.Conv1d(1, n_out, 401, stride=50)

    def forward(self, x):
        x = x.view(x.shape[0], 1, -1)
        return torch.tanh(self.conv(x))
'''


def test_a_signal_shorter_than_the_window_is_retried_long_enough(tmp_path):
    """KinWaiCheuk/nnAudio's CQT pads its waveform by half its longest kernel ("Padding size should be less than the
    corresponding input dimension, but got: padding (2048, 2048) at dimension 2 of input [2, 1, 16]") and a
    band-pass front end's kernel can be longer than every length tried ("Kernel size can't be greater than actual
    input size"): the builder retries the input with its trailing axes the smallest power of two at least twice the
    window the error names; proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "front.py").write_text(SIGNALS)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="front.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    power = by_name["front.py:FramePower"]
    assert power["status"] == "proven", power
    assert power["inputs"] == ["2x1024:float32"], power["inputs"]  # a 512 window: 2 x 512 samples at least
    long_kernel = by_name["front.py:LongKernel"]
    assert long_kernel["status"] == "proven", long_kernel
    assert long_kernel["inputs"][0].split(":")[0].split("x")[-1] in ("1024",), long_kernel["inputs"]


PERMUTED = '''
import torch.nn as nn


class PixelProjection(nn.Module):  # a per-pixel projection of a channels-first map
    def __init__(self, channels, out_channels=8):
        super().__init__()
        self.proj = nn.Linear(channels, out_channels)

    def forward(self, x):
        return self.proj(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
'''


def test_a_permute_of_another_rank_names_the_rank(tmp_path):
    """ritheshkumar95/pytorch-vqvae's VQEmbedding reads its input with ``z_e_x.permute(0, 2, 3, 1)``; its first
    layer's forms have two or three axes and torch says "input.dim() = 2 is not equal to len(dims) = 4": that rank is
    tried next (as a rank hint), channels first and last; proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "pixels.py").write_text(PERMUTED)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="pixels.py:*", cache=False)
    proj = models[0]
    assert proj["status"] == "proven", proj
    assert len(proj["inputs"][0].split(":")[0].split("x")) == 4, proj["inputs"]
