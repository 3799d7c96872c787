"""Fixes from disc20's first contact with manifest rows 131 onwards (issue 29): constructor and input guesses."""
from __future__ import annotations

import textwrap

from _prove import prove_files

CHOICES = '''
import torch
import torch.nn as nn


class DilatedBackbone(nn.Module):
    def __init__(self, output_stride, in_channels):
        super().__init__()
        if output_stride == 16:
            strides, dilations = [1, 2, 2, 1], [1, 1, 1, 2]
        elif output_stride == 8:
            strides, dilations = [1, 2, 1, 1], [1, 1, 2, 4]
        else:
            raise NotImplementedError(output_stride)
        layers, ch = [], in_channels
        for s, d in zip(strides, dilations):
            layers += [nn.Conv2d(ch, 8, 3, stride=s, padding=d, dilation=d), nn.ReLU()]
            ch = 8
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


class Upsampler(nn.Module):
    def __init__(self, scale, n_feats):
        super().__init__()
        if scale not in (2, 3, 4):
            raise ValueError(f"scale {scale} is not supported")
        self.conv = nn.Conv2d(n_feats, n_feats * scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        return self.shuffle(self.conv(x))


class Heads(nn.Module):
    def __init__(self, width, n_heads):
        super().__init__()
        assert n_heads in (3, 5), "three or five heads"
        self.heads = nn.ModuleList([nn.Linear(width, 4) for _ in range(n_heads)])

    def forward(self, x):
        return torch.stack([h(x) for h in self.heads], dim=1)
'''

SIZES = '''
import torch
import torch.nn as nn


class PairDistance(nn.Module):
    def __init__(self, in_features, emb_dim):
        super().__init__()
        self.proj = nn.Linear(in_features, emb_dim)

    def forward(self, x):
        assert x.size()[1] == 2
        e = self.proj(x)
        return (e[:, 0] - e[:, 1]).pow(2).sum(-1)


class FiveTokens(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(5, dim))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        assert x.dim() >= 2 and x.shape[1] == 5, "five tokens"
        return self.mix(x + self.pos)


class TokenMixer(nn.Module):
    def __init__(self, n_ctx, width):
        super().__init__()
        self.n_ctx = n_ctx + 4  # a class token and three registers beside the points
        self.proj = nn.Conv1d(width, width, 1)
        self.mix = nn.Linear(self.n_ctx, self.n_ctx)

    def forward(self, x):
        assert x.shape[-1] == self.n_ctx
        return self.mix(self.proj(x))


class FixedWindow(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.out = nn.Linear(100, 4)

    def forward(self, wav):
        if wav.size(-1) != 100:
            raise ValueError("a window of 100 samples")
        return self.out(self.conv(wav))
'''

DTYPES = '''
import torch
import torch.nn as nn


class KeywordMLP(nn.Module):
    def __init__(self, *, device: torch.device, dtype: torch.dtype, width: int, init_scale: float):
        super().__init__()
        self.c_fc = nn.Linear(width, width * 4, device=device, dtype=dtype)
        self.c_proj = nn.Linear(width * 4, width, device=device, dtype=dtype)
        self.gain = nn.Parameter(torch.ones(width, device=device, dtype=dtype) * init_scale)

    def forward(self, x):
        return self.c_proj(torch.relu(self.c_fc(x))) * self.gain


class Positions(nn.Module):
    def __init__(self, n_ctx, width, dtype):
        super().__init__()
        self.pos = nn.Parameter(torch.linspace(-1.0, 1.0, n_ctx * width, dtype=dtype).reshape(n_ctx, width))
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return self.proj(x + self.pos[: x.shape[1]])
'''


_prove = prove_files  # tests/discovery/_prove.py


def test_numbers_a_constructor_accepts_before_it_raises(tmp_path):
    """(disc20) A constructor that accepts a few numbers and raises for any other: DeepLab's backbone
    ``if output_stride == 16: ... elif output_stride == 8: ... else: raise NotImplementedError`` (the name says a
    stride: guessed 1), an upsampler's ``if scale not in (2, 3, 4): raise ValueError`` (a scale: guessed 1.0), and
    ``assert n_heads in (3, 5)`` (heads: 2). Only string choices were read, every attempt raised; the first number
    the constructor accepts is tried first now."""
    models = _prove(tmp_path, {"choices.py": CHOICES}, "choices.py:*")
    backbone, up, heads = (models[f"choices.py:{n}"] for n in ("DilatedBackbone", "Upsampler", "Heads"))
    assert backbone["status"] == "proven", backbone
    assert backbone["ctor"].startswith("output_stride=16,"), backbone["ctor"]
    assert up["status"] == "proven", up
    assert up["ctor"].startswith("scale=2,"), up["ctor"]
    assert heads["status"] == "proven", heads
    assert "n_heads=3" in heads["ctor"], heads["ctor"]


def test_numbers_read_from_a_chain_that_does_not_raise_are_left_alone():
    """A number compared in a branch that does not end in a raise (``if depth == 18: ... else: ...``) is one of
    several working values, not a requirement: no choice is read from it (the name's guess stays)."""
    import ast

    from mindport.discovery.scan import Param, _choices

    func = ast.parse(textwrap.dedent('''
        def __init__(self, depth, stride):
            if depth == 18:
                blocks = [2, 2]
            else:
                blocks = [3, 3]
            if stride == 3:
                raise ValueError("no odd strides")
    ''')).body[0]
    params = [Param("depth"), Param("stride")]
    _choices(func, params, residues=True)
    assert params[0].choices == [] and params[1].choices == []


def test_sizes_a_forward_asserts_on_its_input(tmp_path):
    """(disc20) A forward that asserts a size of its input before anything else: a pair loss over two embeddings
    ``assert x.size()[1] == 2`` (the voxceleb-style angular prototypical loss), a fixed token count
    ``assert x.shape[1] == 5`` beside a rank test, a window ``if wav.size(-1) != 100: raise``. The first layer's forms
    (2 x 16, 2 x 8 x 16, 2 x C x 32 ...) all met the assert; the asserted size is set on that axis, or inserted
    where the axis is past the form's last (2 x 2 x 16 for a Linear that takes 2 x 16)."""
    models = _prove(tmp_path, {"sizes.py": SIZES}, "sizes.py:*")
    pair, five, window = (models[f"sizes.py:{n}"] for n in ("PairDistance", "FiveTokens", "FixedWindow"))
    assert pair["status"] == "proven", pair
    assert pair["inputs"][0].split(":")[0].split("x")[:2] == ["2", "2"], pair["inputs"]
    assert five["status"] == "proven", five
    assert five["inputs"][0].split(":")[0].split("x")[1] == "5", five["inputs"]
    assert window["status"] == "proven", window
    assert window["inputs"][0].split(":")[0].split("x")[-1] == "100", window["inputs"]


def test_sizes_asserted_after_the_argument_is_rebound_are_not_read():
    """``x = x.flatten(1); assert x.size(1) == 64`` speaks of the new ``x``, not of the input: not read."""
    import ast

    from mindport.discovery.scan import Param, _asserted_sizes

    func = ast.parse(textwrap.dedent('''
        def forward(self, x, y):
            assert y.shape[-1] == 3 and 4 == y.size(1)
            x = x.flatten(1)
            assert x.size(1) == 64
            return x, y
    ''')).body[0]
    params = [Param("x"), Param("y")]
    _asserted_sizes(func, params)
    assert params[0].sizes == [] and params[1].sizes == [[-1, 3], [1, 4]]


def test_a_required_dtype_is_float32_on_both_sides(tmp_path):
    """(disc20) openai/point-e's blocks take ``*, device: torch.device, dtype: torch.dtype, width: int`` with no
    defaults: no rule gave a dtype, so no constructor could be chosen ("required parameters of unknown kind: device,
    dtype, ..."). A required dtype (by name, or annotated ``torch.dtype``) is ``torch.float32``, MindSpore's float32
    for the converted model."""
    models = _prove(tmp_path, {"dtypes.py": DTYPES}, "dtypes.py:*")
    mlp, pos = models["dtypes.py:KeywordMLP"], models["dtypes.py:Positions"]
    assert mlp["status"] == "proven", mlp
    assert "dtype=torch.float32" in mlp["ctor"], mlp["ctor"]
    assert pos["status"] == "proven", pos
    assert "dtype=torch.float32" in pos["ctor"], pos["ctor"]


def test_a_size_asserted_against_what_the_model_keeps(tmp_path):
    """(disc20) openai/point-e's PointDiffusionTransformer.forward asserts ``x.shape[-1] == self.n_ctx``: the
    convolution's forms (2 x C x 32, 2 x C x 256, 2 x 32 x C and its channel hint 2 x C x C) never had the n_ctx
    the model keeps (here n_ctx + 4 = 20). The size is read from the built model."""
    models = _prove(tmp_path, {"sizes.py": SIZES}, "sizes.py:TokenMixer")
    mixer = models["sizes.py:TokenMixer"]
    assert mixer["status"] == "proven", mixer
    n_ctx = int(mixer["ctor"].split("n_ctx=")[1].split(",")[0])
    assert mixer["inputs"][0].split(":")[0].split("x")[-1] == str(n_ctx + 4), mixer["inputs"]
