"""Fixes from the discovery sweep's ninth pass (issue 29, rows 55 onwards of the manifest): constructor arguments
that are tensors (pretrained embeddings handed to ``nn.Parameter``) and a batch size the model builds its state
with."""
from __future__ import annotations

from pathlib import Path

TEXT = '''
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):  # a text classifier given its pretrained word vectors and its batch size
    def __init__(self, batch_size, output_size, hidden_size, vocab_size, embedding_length, weights):
        super().__init__()
        self.batch_size = batch_size
        self.hidden_size = hidden_size
        self.word_embeddings = nn.Embedding(vocab_size, embedding_length)
        self.word_embeddings.weight = nn.Parameter(weights, requires_grad=False)
        self.lstm = nn.LSTM(embedding_length, hidden_size)
        self.label = nn.Linear(hidden_size, output_size)

    def forward(self, tokens):
        x = self.word_embeddings(tokens).permute(1, 0, 2)
        h0 = torch.zeros(1, self.batch_size, self.hidden_size)
        c0 = torch.zeros(1, self.batch_size, self.hidden_size)
        out, (h, c) = self.lstm(x, (h0, c0))
        return self.label(h[-1])


class FrozenTable(nn.Module):  # from_pretrained: any table shape serves
    def __init__(self, vectors, n_out):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors.clone())
        self.out = nn.Linear(vectors.shape[1], n_out)

    def forward(self, tokens):
        return self.out(self.emb(tokens).mean(1))
'''


def _candidate(root: Path, name: str) -> dict:
    from mindport.discovery.scan import discover

    cand = next(c for c in discover(root) if c.name == name)
    return cand.to_json() | {"rel": cand.rel, "name": cand.name}


def test_a_tensor_constructor_argument_gets_a_table_of_the_layer_shape_it_replaces(tmp_path):
    """prakashpandey9/Text-Classification-Pytorch's classifiers take ``weights`` (GloVe vectors) and assign
    ``nn.Parameter(weights)`` to an ``nn.Embedding(vocab_size, embedding_length)``; the builder gave ``weights=16``
    ("'int' object has no attribute 'detach'") and ``batch_size=16`` where the inputs have a batch of 2. scan marks
    a parameter handed to ``nn.Parameter`` / ``from_pretrained`` / ``copy_`` (or whose tensor methods are called)
    as a tensor and records the shape of the layer it replaces; the builder gives a vocab_size x embedding_length
    table (the same values on both sides) and batch_size 2; proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "models.py").write_text(TEXT)
    cand = _candidate(src, "LSTMClassifier")
    weights = next(p for p in cand["params"] if p["name"] == "weights")
    assert weights["use"] == "tensor" and weights["attrs"]["shape"] == ["vocab_size", "embedding_length"], weights
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    lstm = by_name["models.py:LSTMClassifier"]
    assert lstm["status"] == "proven", lstm
    assert "batch_size=2" in lstm["ctor"] and "table(100, 16)" in lstm["ctor"], lstm["ctor"]
    frozen = by_name["models.py:FrozenTable"]
    assert frozen["status"] == "proven", frozen
    assert "table(16, 16)" in frozen["ctor"], frozen["ctor"]


CONFIGURED = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:  # builds only beside its dataset: it reads the label file and the vectors
    def __init__(self, data_dir, vectors):
        self.labels = [line.strip() for line in open(data_dir + "/labels.txt")]
        self.pretrained = torch.load(data_dir + "/" + vectors) if vectors != "none" else None
        self.vocab = 0
        self.width = self.pretrained.size(1) if self.pretrained is not None else 300
        self.kernels = (2, 3)
        self.maps = 64
        self.n_labels = len(self.labels)


class TextConv(nn.Module):
    def __init__(self, config):
        super().__init__()
        if config.pretrained is not None:
            self.emb = nn.Embedding.from_pretrained(config.pretrained)
        else:
            self.emb = nn.Embedding(config.vocab, config.width)
        self.convs = nn.ModuleList([nn.Conv2d(1, config.maps, (k, config.width)) for k in config.kernels])
        self.fc = nn.Linear(config.maps * len(config.kernels), config.n_labels)

    def forward(self, tokens):
        x = self.emb(tokens).unsqueeze(1)
        pooled = [F.relu(conv(x)).squeeze(3).amax(2) for conv in self.convs]
        return self.fc(torch.cat(pooled, 1))
'''


def test_a_configuration_class_that_needs_its_dataset_gives_way_to_the_attributes_read(tmp_path):
    """649453932/Chinese-Text-Classification-Pytorch's models take ``Config(dataset, embedding)``, which opens the
    dataset's files: every attempt was that class ("unsupported operand type(s) for +: 'int' and 'str'"). After
    them the builder now tries a namespace of the attributes the model reads; one an ``if`` tests against None
    (``if config.pretrained is not None``) is None there (the model's own path without vectors), the kernel list a
    list; proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "models.py").write_text(CONFIGURED)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:TextConv", cache=False)
    assert [m["status"] for m in models] == ["proven"], models
    assert "pretrained=None" in models[0]["ctor"] and "SimpleNamespace" in models[0]["ctor"], models[0]["ctor"]


GRID = '''
import torch
import torch.nn as nn


class TokenMerge(nn.Module):  # halves a token grid it keeps by size: B x (H * W) x C in
    def __init__(self, input_resolution, dim):
        super().__init__()
        self.input_resolution = input_resolution
        self.dim = dim
        self.norm = nn.LayerNorm(4 * dim)
        self.proj = nn.Linear(4 * dim, 2 * dim)

    def forward(self, x):
        h, w = self.input_resolution
        b, n, c = x.shape
        assert n == h * w, "wrong number of tokens"
        x = x.view(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(b, -1, 4 * c)
        return self.proj(self.norm(x))


class WindowBias(nn.Module):  # one learnt bias per position of its window: B x (Wh * Ww) x C in
    def __init__(self, dim, window_size, heads):
        super().__init__()
        self.window_size = window_size
        self.heads = heads
        self.bias = nn.Parameter(torch.randn(heads, window_size[0] * window_size[1], window_size[0] * window_size[1]))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1) + self.bias).softmax(-1)
        return self.out((attn @ v).transpose(1, 2).reshape(b, n, c))
'''


def test_a_model_keeping_a_token_grid_takes_that_many_tokens(tmp_path):
    """microsoft/Swin-Transformer's PatchMerging / BasicLayer (``input_resolution``) and WindowAttention
    (``window_size``) take ``B x (H * W) x C``: every form had 16 or 8 tokens ("input feature has wrong size", a
    bias of the window's size). A model keeping a grid of two or three sizes now gets ``2 x (H * W) x C`` first, C
    the width it keeps (``self.dim``) or its first layer's; proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "grid.py").write_text(GRID)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="grid.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    assert by_name["grid.py:TokenMerge"]["status"] == "proven", by_name
    assert by_name["grid.py:TokenMerge"]["inputs"] == ["2x128x16:float32"], by_name
    assert by_name["grid.py:WindowBias"]["status"] == "proven", by_name
    assert by_name["grid.py:WindowBias"]["inputs"] == ["2x128x16:float32"], by_name


HANDED = '''
import torch.nn as nn


class DepthConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, H, W)
        return self.conv(x).flatten(2).transpose(1, 2)


class TokenMlp(nn.Module):  # hands H and W on, never uses them itself
    def __init__(self, in_features, hidden_features=32):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.dw = DepthConv(hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x, H, W):
        return self.fc2(self.act(self.dw(self.fc1(x), H, W)))
'''


def test_height_and_width_handed_on_are_the_token_grid(tmp_path):
    """whai362/PVT's ``Mlp.forward(x, H, W)`` only hands H and W to its DWConv (``x.view(B, C, H, W)``): with no
    use of their own they were drawn as tensors ("view(): argument 'size' ... got Tensor"). Arguments named like the
    first input's height and width are now its token grid first (8 tokens, no square: 8 x 1); proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "mlp.py").write_text(HANDED)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="mlp.py:TokenMlp", cache=False)
    assert [m["status"] for m in models] == ["proven"], models
    assert models[0]["inputs"] == ["2x8x16:float32", "value:8", "value:1"], models[0]


KWARGS = '''
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, width=8, pretrained=None):
        super().__init__()
        if isinstance(pretrained, str):
            raise ValueError("weights are loaded from a file")
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        return self.head(self.conv(x).mean((2, 3)))


class WideBackbone(Backbone):  # an mmdet-style registered variant: its settings by key
    def __init__(self, **kwargs):
        super().__init__(width=12, pretrained=kwargs['pretrained'])


def narrow_backbone(**kwargs):
    return Backbone(width=4, pretrained=kwargs['pretrained'])
'''


def test_keys_read_from_kwargs_are_passed_by_name(tmp_path):
    """whai362/PVT's registered backbones ``pvt_large(**kwargs)`` pass ``pretrained=kwargs['pretrained']`` on:
    built with no argument they raised KeyError. A key a constructor (or factory) reads from its ``**kwargs`` by
    subscript is now passed by name (its small value, else None); proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "nets.py").write_text(KWARGS)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="nets.py:*", cache=False)
    by_name = {m["class"]: m for m in models}
    for name in ("nets.py:WideBackbone", "nets.py:narrow_backbone"):
        assert by_name[name]["status"] == "proven", by_name[name]
        assert by_name[name]["ctor"] == "pretrained=None", by_name[name]


SCHEDULE = '''
import torch
import torch.nn as nn


class Diffusion(nn.Module):  # a noise schedule given as a list of betas
    def __init__(self, model, betas):
        super().__init__()
        self.model = model
        self.num_timesteps = len(betas)
        alphas_bar = torch.cumprod(1.0 - torch.tensor(betas, dtype=torch.float32), 0)
        self.register_buffer("signal", alphas_bar.sqrt())
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return self.proj(self.model(x)) * self.signal[-1] + x * self.signal[0]
'''


def test_a_float_named_sequence_gets_floats(tmp_path):
    """abarankab/DDPM's ``GaussianDiffusion(model, img_size, img_channels, num_classes, betas)`` reads
    ``len(betas)``: the sequence use gave way to the float rule of the name ("object of type 'float' has no len()").
    A float-kind name read as a sequence is now a list of floats in (0, 1); proven against torch."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "diffusion.py").write_text(SCHEDULE)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="diffusion.py:Diffusion", cache=False)
    assert [m["status"] for m in models] == ["proven"], models
    assert "betas=[0.1, 0.2]" in models[0]["ctor"], models[0]["ctor"]
