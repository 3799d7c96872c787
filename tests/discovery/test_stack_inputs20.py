"""Three classes of a model that `mindport migrate REPO` (no model settings) could not build or run (issue 29,
migrate20; met in satellite time-series repositories: a temporal encoder's positions left at None, a recurrent
stack's per-layer kernel sizes, a pixel-set encoder's ``(pixels, mask)`` input). Fixture package written for this
test; every model is converted and proven against torch (real torch, real MindSpore)."""
from __future__ import annotations

import numpy as np

SERIES = {"series.py": '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Sinusoid(nn.Module):
    """Encodes a position (a day of year, any float) per sample and step: B x T -> B x T x d."""

    def __init__(self, d, period=365.0):
        super().__init__()
        self.register_buffer("freq", torch.exp(torch.arange(0, d, 2).float() * (-math.log(period) / d)))

    def forward(self, positions):
        angles = positions.unsqueeze(-1) * self.freq
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class DateEncoder(nn.Module):
    """Attention pooling over time of B x T x d features; the dates are optional in the signature but used."""

    def __init__(self, d=16):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.pos = Sinusoid(d)
        self.score = nn.Linear(d, 1)

    def forward(self, x, positions=None, pad_mask=None):
        b, t, _ = x.shape
        h = self.inp(x)
        h = h + self.pos(positions)
        scores = self.score(torch.tanh(h)).squeeze(-1)
        if pad_mask is not None:
            scores = scores.masked_fill(pad_mask, -1e4)
        weights = torch.softmax(scores, dim=1)
        return (weights.unsqueeze(-1) * h).sum(dim=1)


class FrameSeries(nn.Module):
    """B x T x C x H x W frames, a convolution per frame, then the date encoder: its dates argument has another
    name than the encoder's (``dates`` -> ``positions``)."""

    def __init__(self, in_ch=4, d=16):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, d, 3, padding=1)
        self.temporal = DateEncoder(d)

    def forward(self, x, dates=None):
        b, t, c, h, w = x.shape
        f = F.relu(self.conv(x.reshape(b * t, c, h, w))).mean(dim=(2, 3)).reshape(b, t, -1)
        return self.temporal(f, positions=dates)


class Tagger(nn.Module):
    """Token ids and optional segment ids that go to an embedding (integers)."""

    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.seg = nn.Embedding(3, d)
        self.out = nn.Linear(d, 5)

    def forward(self, tokens, segments=None):
        return self.out(torch.tanh(self.tok(tokens) + self.seg(segments)))
'''}

STACK = {"stack.py": '''import torch
import torch.nn as nn


class GRUCell2d(nn.Module):
    def __init__(self, in_ch, hid, kernel, bias=True):
        super().__init__()
        self.hid = hid
        pad = (kernel[0] // 2, kernel[1] // 2)
        self.gates = nn.Conv2d(in_ch + hid, 2 * hid, kernel, padding=pad, bias=bias)
        self.cand = nn.Conv2d(in_ch + hid, hid, kernel, padding=pad, bias=bias)

    def forward(self, x, h):
        r, z = torch.split(torch.sigmoid(self.gates(torch.cat([x, h], dim=1))), self.hid, dim=1)
        n = torch.tanh(self.cand(torch.cat([x, r * h], dim=1)))
        return (1 - z) * h + z * n


class BiasCell(nn.Module):
    """A cell whose ``bias`` switch has no default: it goes to its convolutions."""

    def __init__(self, in_ch, hid, kernel, bias):
        super().__init__()
        self.conv = nn.Conv2d(in_ch + hid, hid, kernel, padding=(kernel[0] // 2, kernel[1] // 2), bias=bias)

    def forward(self, x, h):
        return torch.tanh(self.conv(torch.cat([x, h], dim=1)))


class CheckedStack(nn.Module):
    """Checks its kernel sizes the ConvLSTM way: a tuple, or a list of tuples, one per layer."""

    def __init__(self, frame_size, in_ch, hid, kernel, layers=1):
        super().__init__()
        self._check_kernels(kernel)
        kernel = self._per_layer(kernel, layers)
        hid = self._per_layer(hid, layers)
        if not len(kernel) == len(hid) == layers:
            raise ValueError("Inconsistent list length.")
        self.height, self.width = frame_size
        self.hid = hid
        self.cells = nn.ModuleList([GRUCell2d(in_ch if i == 0 else hid[i - 1], hid[i], kernel[i])
                                    for i in range(layers)])

    @staticmethod
    def _check_kernels(kernel):
        if not (isinstance(kernel, tuple) or (isinstance(kernel, list) and all(isinstance(k, tuple) for k in kernel))):
            raise ValueError("`kernel` must be tuple or list of tuples")

    @staticmethod
    def _per_layer(value, layers):
        if not isinstance(value, list):
            value = [value] * layers
        return value

    def forward(self, x):
        """x: (b, t, c, h, w)"""
        b, t = x.shape[:2]
        out = x
        for i, cell in enumerate(self.cells):
            h = torch.zeros(b, self.hid[i], self.height, self.width)
            steps = []
            for s in range(t):
                h = cell(out[:, s], h)
                steps.append(h)
            out = torch.stack(steps, dim=1)
        return out[:, -1]


class RepeatingStack(nn.Module):
    """Checks nothing but repeats a single value per layer; the cell reads each kernel size as a pair."""

    def __init__(self, frame_size, in_ch, hid, kernel, layers):
        super().__init__()
        kernel = self._extend(kernel, layers)
        hid = self._extend(hid, layers)
        self.height, self.width = frame_size
        self.hid = hid
        cells = []
        for i in range(layers):
            cells.append(GRUCell2d(in_ch=in_ch if i == 0 else hid[i - 1], hid=hid[i], kernel=kernel[i]))
        self.cells = nn.ModuleList(cells)

    def _extend(self, value, layers):
        if not isinstance(value, list):
            value = [value] * layers
        return value

    def forward(self, x):
        """x: (b, t, c, h, w)"""
        b, t = x.shape[:2]
        h = [torch.zeros(b, self.hid[i], self.height, self.width) for i in range(len(self.cells))]
        for s in range(t):
            inp = x[:, s]
            for i, cell in enumerate(self.cells):
                h[i] = cell(inp, h[i])
                inp = h[i]
        return h[-1]
'''}

SETS = {"sets.py": '''import torch
import torch.nn as nn


class SetPool(nn.Module):
    """A set of N pixels of C channels per sample (B x N x C) and its mask (B x N): masked mean and max."""

    def __init__(self, in_dim=6, d=16):
        super().__init__()
        self.lin = nn.Linear(in_dim, d)
        self.out = nn.Linear(2 * d, d)

    def forward(self, input):
        pixels, mask = input
        e = torch.relu(self.lin(pixels))
        m = mask.unsqueeze(-1)
        mean = (e * m).sum(dim=1) / m.sum(dim=1)
        top = (e * m - 1e4 * (1 - m)).amax(dim=1)
        return self.out(torch.cat([mean, top], dim=-1))


class ChannelFirstSet(nn.Module):
    """Pixels channel-first (B x C x N), transposed before the Linear; the input may also come nested as
    ((pixels, mask), extra), told apart by ``len(a) == 2``."""

    def __init__(self, in_dim=5, d=12):
        super().__init__()
        self.lin = nn.Linear(in_dim, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, input):
        a, b = input
        if len(a) == 2:
            (pixels, mask), extra = a, b
        else:
            pixels, mask, extra = a, b, None
        e = self.norm(self.lin(pixels.permute(0, 2, 1)))
        m = mask.unsqueeze(-1)
        out = (e * m).sum(dim=1) / m.sum(dim=1)
        if extra is not None:
            out = torch.cat([out, extra], dim=-1)
        return out


class ExtraSet(nn.Module):
    """Takes ((pixels B x C x N, mask B x N), extra B x E) only: the extra features joined after pooling."""

    def __init__(self, in_dim=5, d=12, extra_dim=3):
        super().__init__()
        self.lin = nn.Linear(in_dim, d)
        self.head = nn.Linear(d + extra_dim, 4)

    def forward(self, input):
        a, b = input
        if len(a) != 2:
            raise ValueError("((pixels, mask), extra) expected")
        pixels, mask = a
        extra = b
        e = torch.relu(self.lin(pixels.transpose(1, 2)))
        m = mask.unsqueeze(-1)
        pooled = (e * m).sum(dim=1) / m.sum(dim=1)
        return self.head(torch.cat([pooled, extra], dim=-1))


class SetClassifier(nn.Module):
    """Hands its input whole to the set encoder (it never unpacks it itself)."""

    def __init__(self, n_classes=3):
        super().__init__()
        self.encoder = ExtraSet()
        self.out = nn.Linear(4, n_classes)

    def forward(self, input):
        return self.out(torch.relu(self.encoder(input)))
'''}


def _prove(tmp_path, files, pattern):
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern=pattern, cache=False, settings=ProveSettings(stub_missing=True),
                             log_dir=tmp_path / "logs")
    return {m["class"].split(":")[1]: m for m in models}


def _shape(spec):
    """An input's shape: a drawn one's from its spec, a recorded one's (a container's call) from its file."""
    if spec.endswith(".npy"):
        return tuple(np.load(spec).shape)
    return tuple(int(v) for v in spec.split(":")[0].split("x"))


def test_an_optional_argument_the_forward_uses_gets_a_tensor(tmp_path):
    """On main the three models were not built: each forward left its optional argument at None and then used it
    ("'NoneType' object has no attribute 'unsqueeze'"; "embedding(): argument 'indices' ... must be Tensor, not
    NoneType"). Now the builder gives that argument a tensor: per sample and step (B x T) for the dates, whether the
    error names the forward's own argument (DateEncoder's ``positions``) or a name it is handed on under
    (FrameSeries' ``dates``), integer ids in the embedding's range for the segments; all proven."""
    models = _prove(tmp_path, SERIES, "series.py")
    for name in ("DateEncoder", "FrameSeries", "Tagger"):
        assert models[name]["status"] == "proven", models[name]
    enc, frames, tagger = models["DateEncoder"], models["FrameSeries"], models["Tagger"]
    x, positions = enc["inputs"][:2]
    assert len(_shape(x)) == 3 and _shape(positions) == _shape(x)[:2], enc
    if not positions.endswith(".npy"):
        assert ":float32" in positions, enc
    x, dates = frames["inputs"]
    assert len(_shape(x)) == 5 and _shape(dates) == _shape(x)[:2], frames
    tokens, segments = tagger["inputs"]
    assert segments.endswith(":int64:0:3") and ":int64:" in tokens, tagger


def test_a_recurrent_stack_gets_per_layer_arguments_it_accepts(tmp_path):
    """On main both stacks were not built: the guess gave ``kernel=[8, 16]`` ("`kernel` must be tuple or list of
    tuples"; RepeatingStack: "'int' object is not subscriptable" in its cell) and ``hid=[8, 16]`` (a list of
    another length than ``layers``). Now the constructor's own checks decide: one tuple for the kernel, a single
    width repeated per layer, a square frame size matching the input's; both proven."""
    models = _prove(tmp_path, STACK, "stack.py")
    for name in ("CheckedStack", "RepeatingStack"):
        m = models[name]
        assert m["status"] == "proven", m
        assert "kernel=(3, 3)" in m["ctor"] and "hid=16" in m["ctor"], m
        assert len(_shape(m["inputs"][0])) == 5, m
    # a cell's bias switch: on (main guessed 16, which torch's truth test took and MindSpore's Conv2d refused:
    # "'has_bias' must be a bool, but got int" - happyjin/ConvGRU-pytorch's ConvGRUCell); its kernel a pair
    cell = models["BiasCell"]
    assert cell["status"] == "proven" and "bias=True" in cell["ctor"] and "kernel=(3, 3)" in cell["ctor"], cell


def test_a_tuple_input_gets_a_tensor_and_its_mask(tmp_path):
    """On main both set encoders were not built: their one argument, unpacked into two tensors, got two copies of the
    same tensor (a mask of features, not of positions), and a batch of 2 sent ChannelFirstSet down its nested
    ``((pixels, mask), extra)`` path. Now the elements are the pixels and a mask of ones over their positions
    (channel-last and channel-first), with a batch that is not the tuple's length; both proven."""
    models = _prove(tmp_path, SETS, "sets.py")
    pool, first = models["SetPool"], models["ChannelFirstSet"]
    assert pool["status"] == "proven" and first["status"] == "proven", models
    pixels, mask = (s.strip() for s in pool["inputs"][0].strip("[]").split(","))
    assert _shape(mask) == _shape(pixels)[:-1] and mask.endswith(":1:1"), pool
    pixels, mask = (s.strip() for s in first["inputs"][0].strip("[]").split(","))
    assert _shape(pixels)[1] == 5 and _shape(mask) == (_shape(pixels)[0], _shape(pixels)[2]), first
    assert _shape(pixels)[0] != 2, first


def test_a_nested_tuple_input_and_a_container_that_hands_it_on(tmp_path):
    """On main neither was built (two copies of one tensor; the container's input was drawn as one tensor). Now
    ExtraSet gets ((pixels, mask), extra), the extra features' width read from the Linear's complaint ("mat1 and mat2
    shapes cannot be multiplied (3x28 and 15x4)" with 16 -> 3), and SetClassifier, whose forward hands its input to
    ExtraSet unopened, is tried with the tuple ExtraSet unpacks; both proven."""
    models = _prove(tmp_path, SETS, "sets.py")
    extra_set, classifier = models["ExtraSet"], models["SetClassifier"]
    assert extra_set["status"] == "proven" and classifier["status"] == "proven", models
    for m in (extra_set, classifier):
        spec = m["inputs"][0]
        assert spec.startswith("[[") and spec.endswith("x3:float32]"), m
