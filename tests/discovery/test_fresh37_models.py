"""Causes met on first contact with new repositories (session 37: `mindport migrate REPO` with no settings), each a
class with a fixture of our own. The repository of the fixtures is converted and proven once (real torch, real
MindSpore, GRAPH_MODE included); the import and allocation patches run in a process of their own. Expected values
come from torch."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.discovery._prove import prove_files

# a training file of a world model: a name SciPy removed imported at its top (used by its data code only); an MDN-RNN
# joining latent and action before its LSTM, its hidden state from ``x.data.new(sizes)`` (uninitialised in torch);
# a VQ-VAE codebook whose first layer is an Embedding read as a table; a U-Net's eight stride-2 steps, the six inner ones
# normalised per instance; an EfficientNet block given its norm layer class (required); an LSTM wrapper adding a
# sequence axis to what it is given; an ADM U-Net stage reading ``ds in attention_resolutions``; a conditional critic keeping its image's shape; a
# padding-mask module and a head giving class ids (boolean and integer outputs); a reshape to a stored shape; a
# StemGNN attention sized by its `units` (an int, though plural); DeepSpeech's GRU block given its batch_first; a
# DCGAN generator keeping its input size with the batch in it, unsqueezing its latent code to 1 x 1
WORLD = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.misc import imresize as resize


def preprocess(frame):
    return resize(frame, (64, 64))


class MDNRNN(nn.Module):
    def __init__(self, z_dim=32, action_dim=3, hidden_size=16, n_mixture=5):
        super().__init__()
        self.inpt_size = z_dim + action_dim
        self.hidden_size = hidden_size
        self.rnn = nn.LSTM(input_size=self.inpt_size, hidden_size=hidden_size, batch_first=True)
        self.mdn = nn.Linear(hidden_size, n_mixture * z_dim * 2 + n_mixture)

    def forward(self, inpt, action):
        batch_size, seq_len, _ = inpt.size()
        hidden = (inpt.data.new(1, batch_size, self.hidden_size), inpt.data.new(1, batch_size, self.hidden_size))
        output, _ = self.rnn(torch.cat((inpt, action), dim=-1), hidden)
        return self.mdn(output)


class StepLSTM(nn.Module):
    def __init__(self, input_size=12, hidden_size=8):
        super().__init__()
        self.rnn = nn.LSTM(input_size, hidden_size)

    def forward(self, az):
        out, _ = self.rnn(az[None, :])
        return out
'''

BLOCKS = '''
from typing import Callable

import torch
import torch.nn as nn


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        self.embedding.weight.data.uniform_(-1 / num_embeddings, 1 / num_embeddings)

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        flat = inputs.view(-1, self.embedding_dim)
        distances = (flat ** 2).sum(1, keepdim=True) + (self.embedding.weight ** 2).sum(1) \\
            - 2 * flat @ self.embedding.weight.t()
        return distances.reshape(*inputs.shape[:3], -1).permute(0, 3, 1, 2)


class DeepInstanceNet(nn.Module):
    def __init__(self, in_channels=3, width=4):
        super().__init__()
        self.downs = nn.ModuleList()
        c = in_channels
        for i in range(8):
            norm = [nn.InstanceNorm2d(width)] if 0 < i < 7 else []
            self.downs.append(nn.Sequential(nn.Conv2d(c, width, 4, 2, 1), *norm, nn.LeakyReLU(0.2)))
            c = width
        self.ups = nn.ModuleList([nn.ConvTranspose2d(width if i == 0 else 2 * width, width, 4, 2, 1)
                                  for i in range(7)])

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
        x = skips.pop()
        for up in self.ups:
            x = torch.cat([torch.relu(up(x)), skips.pop()], 1)
        return x


class AttnUNetStage(nn.Module):
    def __init__(self, channels, num_res_blocks, attention_resolutions):
        super().__init__()
        layers, ds = [], 1
        for level in range(2):
            for _ in range(num_res_blocks):
                layers.append(nn.Conv2d(channels, channels, 3, padding=1))
                if ds in attention_resolutions:
                    layers.append(nn.GroupNorm(1, channels))
            ds *= 2
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class ConditionalCritic(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.img_shape = (opt.channels, opt.img_size, opt.img_size)
        self.label_embedding = nn.Embedding(opt.n_classes, opt.n_classes)
        self.model = nn.Sequential(nn.Linear(opt.n_classes + opt.channels * opt.img_size ** 2, 32), nn.LeakyReLU(0.2),
                                   nn.Linear(32, 1))

    def forward(self, img, labels):
        return self.model(torch.cat((img.view(img.size(0), -1), self.label_embedding(labels)), -1))


class PaddingMask(nn.Module):
    def __init__(self, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx

    def forward(self, tokens):
        return (tokens != self.pad_idx).unsqueeze(1).unsqueeze(2)


class ArgmaxHead(nn.Module):
    def __init__(self, d=16, n=5):
        super().__init__()
        self.fc = nn.Linear(d, n)

    def forward(self, x):
        return self.fc(x).argmax(-1)


class LayerReshape(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return torch.reshape(input=x, shape=(-1, *self.shape))


class GraphAttentionHead(nn.Module):
    def __init__(self, units, time_step):
        super().__init__()
        self.units = units
        self.weight_key = nn.Parameter(torch.zeros(size=(units, 1)))
        nn.init.xavier_uniform_(self.weight_key.data, gain=1.414)
        self.GRU = nn.GRU(time_step, units)

    def forward(self, x):
        out, _ = self.GRU(x.permute(2, 0, 1).contiguous())
        return torch.matmul(out, self.weight_key)


class BidirectionalGRU(nn.Module):
    def __init__(self, rnn_dim, hidden_size, dropout, batch_first):
        super().__init__()
        self.BiGRU = nn.GRU(input_size=rnn_dim, hidden_size=hidden_size, num_layers=1, batch_first=batch_first,
                            bidirectional=True)
        self.layer_norm = nn.LayerNorm(rnn_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x, _ = self.BiGRU(torch.relu(self.layer_norm(x)))
        return self.dropout(x)


class LatentGenerator(nn.Module):
    def __init__(self, latent_dim: int, mid_channels: int, out_channels: int):
        super().__init__()
        self.net = nn.Sequential(nn.ConvTranspose2d(latent_dim, mid_channels, 4, 1, 0, bias=False),
                                 nn.BatchNorm2d(mid_channels), nn.ReLU(True),
                                 nn.ConvTranspose2d(mid_channels, out_channels, 4, 2, 1, bias=False), nn.Tanh())
        self.input_size = (1, latent_dim)  # 1 for batch

    def forward(self, z):
        z = z.unsqueeze(-1).unsqueeze(-1)  # N x L -> N x L x 1 x 1
        return self.net(z)


class InvertedResidual(nn.Module):
    def __init__(self, channels, norm_layer: Callable[..., nn.Module]):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), norm_layer(channels), nn.SiLU())

    def forward(self, x):
        return x + self.block(x)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh37"), {"world.py": WORLD, "blocks.py": BLOCKS}, "*")


def test_a_name_an_installed_library_removed_gets_a_stand_in(proven):
    """``from scipy.misc import imresize`` (removed in SciPy 1.3) at the top of a file whose models never call it
    stopped every model of the file at import (humorbeing/world-models-pytorch: 13 of its 15 tried); a stand-in for
    the name, reported as one."""
    model = proven["world.py:MDNRNN"]
    assert model["status"] == "proven", model


def test_inputs_joined_before_a_layer_take_the_widths_their_names_say(proven):
    """``cat((inpt, action), -1)`` before ``LSTM(z_dim + action_dim)``: given alike (35 + 35, "Expected 35, got
    70"), then ``action`` at its constructor's ``action_dim`` = 3 and the latent at the rest; its hidden state from
    ``x.new(sizes)`` is zeros on both sides (uninitialised memory in torch; the port writes zeros)."""
    model = proven["world.py:MDNRNN"]
    assert [s.split(":")[0].split("x")[-1] for s in model["inputs"]] == ["32", "3"], model["inputs"]


def test_a_recurrent_layer_given_an_axis_more_takes_an_input_of_one_fewer(proven):
    """``self.rnn(az[None, :])``: "Expected input to be 2D or 3D, got 4D instead" for a 3-D input -> a 2-D one."""
    model = proven["world.py:StepLSTM"]
    assert model["status"] == "proven", model
    assert len(model["inputs"][0].split(":")[0].split("x")) == 2, model["inputs"]


def test_an_embedding_read_as_a_table_takes_a_float_image(proven):
    """A VQ-VAE codebook: its first layer an Embedding (integer tokens guessed) but its forward permutes a latent
    image ("input.dim() = 2 is not equal to len(dims) = 4"): float forms of rank 4 after the token form."""
    model = proven["blocks.py:VectorQuantizer"]
    assert model["status"] == "proven", model
    assert model["inputs"][0].split(":")[1] == "float32" and len(model["inputs"][0].split(":")[0].split("x")) == 4


def test_instance_norm_at_one_pixel_grows_the_image(proven):
    """Eight stride-2 steps, the six inner ones normalised per instance, and the skips joined on the way up:
    "Expected more than 1 spatial element when training" at every size tried up to 224, 299 joins 148 with 149
    (pix2pix's U-Net, GodWriter/GAN-Pytorch) -> the image x 4 (256)."""
    model = proven["blocks.py:DeepInstanceNet"]
    assert model["status"] == "proven", model
    assert int(model["inputs"][0].split(":")[0].split("x")[-1]) >= 256, model["inputs"]


def test_a_required_norm_layer_class_gets_a_stand_in_class(proven):
    """``norm_layer(channels)`` with ``norm_layer`` required: the stand-in, called with a size, is a module (before,
    its forward returned the int: "int is not a Module subclass", wangji9's EfficientNet InvertedResidual)."""
    model = proven["blocks.py:InvertedResidual"]
    assert model["status"] == "proven", model


SCRIPT = '''
import os, sys
sys.path.insert(0, ROOT)
from mindport.discovery import stubs
stubs.install([ROOT])
import guarded, removed
print(guarded.imresize, type(removed.imresize).__name__, stubs.STUBBED)
try:
    import own_missing
except ImportError as exc:
    print("own:", exc)
'''


def test_the_name_stand_in_keeps_what_the_code_handles_and_its_own_names(tmp_path):
    """A guarded import keeps its own answer (``except ImportError: imresize = None``), a name missing from the
    repository's own package stays an error (as in torch), a removed library name gets a stand-in (labelled
    ``scipy.misc.imresize``)."""
    (tmp_path / "guarded.py").write_text("try:\n    from scipy.misc import imresize\nexcept ImportError:\n"
                                         "    imresize = None\n")
    (tmp_path / "removed.py").write_text("from scipy.misc import imresize\n")
    (tmp_path / "own.py").write_text("x = 1\n")
    (tmp_path / "own_missing.py").write_text("from own import y\n")
    code = "ROOT = " + repr(str(tmp_path)) + "\n" + textwrap.dedent(SCRIPT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "None _StubMeta ['scipy.misc.imresize']", lines
    assert lines[1].startswith("own: cannot import name 'y' from 'own'"), lines


ZEROED = '''
import torch
from mindport.discovery import zeroed_memory
zeroed_memory.install()
zeroed_memory.install()
x = torch.ones(2, 3)
print(float(torch.empty(50, 7).abs().sum()), float(torch.empty_like(x).abs().sum()),
      float(x.new_empty((4, 4)).abs().sum()), float(x.new(3, 5).abs().sum()), float(x.new(torch.Size([2, 2])).abs().sum()),
      x.new([1.5, 2.5]).tolist(), x.new(torch.tensor([7.0])).tolist(), x.new((2, 2)).tolist())
'''


def test_uninitialised_allocations_are_zeros_on_the_reference_side():
    """torch.empty / empty_like / new_empty / new(sizes) give zeros, as the port writes them; new(data) copies (a
    plain tuple is data to torch)."""
    out = subprocess.run([sys.executable, "-c", ZEROED], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.0", "0.0", "0.0", "0.0", "0.0", "[1.5,", "2.5]", "[7.0]", "[2.0,", "2.0]"], out.stdout


def test_a_parameter_tested_with_in_is_a_sequence(proven):
    """``if ds in attention_resolutions`` (OpenAI's ADM U-Net, xyfJASON/diffusion-models-pytorch): a list, where an int
    failed every size ("argument of type 'int' is not iterable")."""
    model = proven["blocks.py:AttnUNetStage"]
    assert model["status"] == "proven", model
    assert "attention_resolutions=[" in model["ctor"], model["ctor"]


def test_a_call_of_a_name_the_calling_file_defines_is_that_files_class(tmp_path):
    """Two classes named DiT: the factories of model.py call their own ``DiT(depth=28, ...)``; dit.py's DiT (built
    from configurations) is not tried with those arguments ("unexpected keyword argument 'depth'")."""
    from mindport.discovery import scan

    (tmp_path / "dit.py").write_text(textwrap.dedent('''
        import torch.nn as nn

        class DiT(nn.Module):
            def __init__(self, vae_config, vit_config):
                super().__init__()

            def forward(self, x):
                return x
    '''))
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        import torch.nn as nn

        class DiT(nn.Module):
            def __init__(self, depth=2, hidden_size=8):
                super().__init__()

            def forward(self, x):
                return x

        def DiT_S_2(**kwargs):
            return DiT(depth=12, hidden_size=384, **kwargs)
    '''))
    ctors = {c.key: c.ctors for c in scan.discover(tmp_path)}
    assert ctors["dit.py:DiT"] == [], ctors
    assert "depth=12, hidden_size=384" in ctors["model.py:DiT"], ctors


def test_an_image_in_the_shape_the_model_keeps(proven):
    """``self.img_shape = (opt.channels, opt.img_size, opt.img_size)`` and ``img.view(img.size(0), -1)`` joined to a
    label embedding (its first layer met: tokens were guessed for both arguments, GodWriter/GAN-Pytorch's cGAN
    critic): the image 2 x img_shape, the labels integer."""
    model = proven["blocks.py:ConditionalCritic"]
    assert model["status"] == "proven", model
    image, labels = model["inputs"]
    assert image.split(":")[1] == "float32" and len(image.split(":")[0].split("x")) == 4, model["inputs"]
    assert labels.split(":")[1] == "int64", model["inputs"]


def test_boolean_and_integer_outputs_are_proven_exactly(proven):
    """A padding mask (``tokens != pad_idx``) and a head returning ``argmax`` ids: "the forward returned no floating
    tensor" before (arnavs04/paper-implementations' two mask modules); the proof compares them exactly."""
    for name in ("PaddingMask", "ArgmaxHead"):
        model = proven[f"blocks.py:{name}"]
        assert model["status"] == "proven", model
        assert model["max_rel"] == 0.0, model


def test_a_parameter_unpacked_in_a_display_is_a_sequence(proven):
    """``torch.reshape(x, shape=(-1, *self.shape))``: the shape a list (an int before: "Value after * must be an
    iterable, not int", tneuer/GAN-pytorch's LayerReshape)."""
    model = proven["blocks.py:LayerReshape"]
    assert model["status"] == "proven", model
    assert model["ctor"].startswith("shape=["), model["ctor"]


def test_a_plural_name_used_as_a_size_is_an_int(proven):
    """``units`` read as a size (``nn.GRU(time_step, units)``, ``torch.zeros(size=(units, 1))``): an int, where its
    plural name gave [16, 16] ("zeros(): argument 'size' must be tuple of ints", Einsturing/StemGNN-pytorch)."""
    model = proven["blocks.py:GraphAttentionHead"]
    assert model["status"] == "proven", model
    assert "units=16" in model["ctor"] or "units=8" in model["ctor"], model["ctor"]


def test_a_layer_flag_by_its_name_is_a_bool(proven):
    """``batch_first`` handed on to nn.GRU: True, as torch's layers take it ("batch_first should be of type bool,
    got: int", jiwidi/DeepSpeech-pytorch's BidirectionalGRU)."""
    model = proven["blocks.py:BidirectionalGRU"]
    assert model["status"] == "proven", model
    assert "batch_first=True" in model["ctor"], model["ctor"]


def test_a_kept_input_size_with_its_batch_and_a_rank_named_by_what_the_layer_got(proven):
    """``self.input_size = (1, latent_dim)  # 1 for batch`` and ``z.unsqueeze(-1).unsqueeze(-1)`` before a transposed
    convolution (thawro/gan-pytorch's DCGANGenerator): the latent as 2 x latent_dim; a rank error that names what the
    layer got ("but got input of size: [2, 1, 16, 1, 1]") gives the input one axis fewer too."""
    model = proven["blocks.py:LatentGenerator"]
    assert model["status"] == "proven", model
    assert len(model["inputs"][0].split(":")[0].split("x")) == 2, model["inputs"]
    from mindport.discovery.build import _rank_hint

    problem = ("RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
               "size: [2, 1, 16, 1, 1]")
    assert _rank_hint(problem, 3) == 2 and _rank_hint(problem, 5) == 4  # given as the layer got it: the rank named
