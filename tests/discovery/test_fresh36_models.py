"""Causes met on first contact with new repositories (session 36: `mindport migrate REPO` with no settings), each a
class with a fixture of our own. One repository of all the fixtures is converted and proven once (real torch, real
MindSpore, GRAPH_MODE included). Expected values come from torch."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# Informer/Autoformer's forward(x_enc, x_mark_enc, x_dec, x_mark_dec): a (B, L, C) series moved channels-first into
# its token convolution, beside its time-feature marks (B, L, 4 for an hourly frequency) into a Linear; graph layers
# given a sparse graph (edge_index) or a dense one per head (adj_mat, N x N x 1); a diffusion model's time-step
# tables indexed by an integer tensor; its self-attention viewing an image as (-1, C, size * size); a conditional
# critic whose five stride-2 convolutions need 64 x 64 images, the size its constructor fixes; a BERT-style
# configuration read for its activation's key, its experts and its initialiser's std; an Inception-ResNet block of
# 1792 channels; a video network whose last pooling needs 224 x 224 frames; a conditional DCGAN generator; a head
# reading the last of a configuration's sizes; a diffusion UNet's up block joining its skip at twice the size; an
# MLP-Mixer sized by its patch and image; a BERT prediction head given its bias after construction
MODELS = '''
import math

import torch
import torch.nn as nn


class TimeFeatureEmbedding(nn.Module):
    def __init__(self, d_model, freq='h'):
        super().__init__()
        freq_map = {'h': 4, 't': 5, 's': 6, 'm': 1, 'a': 1, 'w': 2, 'd': 3, 'b': 3}
        self.embed = nn.Linear(freq_map[freq], d_model, bias=False)

    def forward(self, x):
        return self.embed(x)


class DataEmbedding(nn.Module):
    def __init__(self, c_in, d_model, freq='h'):
        super().__init__()
        self.token = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode='circular', bias=False)
        self.temporal = TimeFeatureEmbedding(d_model, freq)

    def forward(self, x, x_mark):
        return self.token(x.permute(0, 2, 1)).transpose(1, 2) + self.temporal(x_mark)


class Forecaster(nn.Module):
    def __init__(self, enc_in=7, dec_in=7, c_out=7, d_model=16, freq='h'):
        super().__init__()
        self.enc_embedding = DataEmbedding(enc_in, d_model, freq)
        self.dec_embedding = DataEmbedding(dec_in, d_model, freq)
        self.mix = nn.Linear(d_model, d_model)
        self.projection = nn.Linear(d_model, c_out)

    def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec):
        enc = torch.tanh(self.mix(self.enc_embedding(x_enc, x_mark_enc)))
        dec = self.dec_embedding(x_dec, x_mark_dec) + enc.mean(dim=1, keepdim=True)
        return self.projection(torch.relu(dec))


class EdgeConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.root = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        messages = self.lin(x)[src]
        summed = torch.zeros(x.size(0), messages.size(1)).index_add_(0, dst, messages)
        return torch.relu(summed + self.root(x))


class GATv2Like(nn.Module):
    def __init__(self, in_features, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.proj = nn.Linear(in_features, in_features * n_heads)
        self.attn = nn.Linear(in_features, 1)

    def forward(self, h, adj_mat):
        n = h.shape[0]
        assert adj_mat.shape[0] == 1 or adj_mat.shape[0] == n
        assert adj_mat.shape[2] == 1 or adj_mat.shape[2] == self.n_heads
        g = self.proj(h).view(n, self.n_heads, -1)
        e = self.attn(torch.tanh(g.unsqueeze(0) + g.unsqueeze(1))).squeeze(-1)
        e = e.masked_fill(adj_mat == 0, float('-inf'))
        a = torch.softmax(e, dim=1)
        return torch.einsum('ijh,jhf->ihf', a, g).reshape(n, -1)


class StepTable(nn.Module):
    def __init__(self, embedding_dim, max_len=1000):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(-math.log(10000.0) * torch.arange(0, embedding_dim, 2).float() / embedding_dim)
        table = torch.zeros(max_len, embedding_dim)
        table[:, 0::2] = torch.sin(position * div)
        table[:, 1::2] = torch.cos(position * div)
        self.register_buffer('table', table, persistent=False)
        self.proj = nn.Linear(embedding_dim, embedding_dim)

    def forward(self, t: torch.LongTensor) -> torch.Tensor:
        return self.proj(self.table[t])


class TimeIndexed(nn.Module):
    def __init__(self, steps=50, dim=16):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, steps))
        self.out = nn.Linear(1, dim)

    def forward(self, timesteps):
        return self.out(self.scale[timesteps].unsqueeze(-1))


class SelfAttention2d(nn.Module):
    def __init__(self, channels, size):
        super().__init__()
        self.channels, self.size = channels, size
        self.mha = nn.MultiheadAttention(channels, 4, batch_first=True)
        self.ln = nn.LayerNorm([channels])

    def forward(self, x):
        x = x.view(-1, self.channels, self.size * self.size).swapaxes(1, 2)
        x_ln = self.ln(x)
        attention_value, _ = self.mha(x_ln, x_ln, x_ln)
        return (attention_value + x).swapaxes(2, 1).view(-1, self.channels, self.size, self.size)


def make_attention():
    return SelfAttention2d(16, 8)


class Critic(nn.Module):
    def __init__(self, img_channels: int, features: int, num_classes: int, img_size: int):
        super().__init__()
        layers, c = [nn.Conv2d(img_channels + 1, features, 4, 2, 1), nn.LeakyReLU(0.2)], features
        for _ in range(3):
            layers += [nn.Conv2d(c, c * 2, 4, 2, 1, bias=False), nn.InstanceNorm2d(c * 2, affine=True),
                       nn.LeakyReLU(0.2)]
            c *= 2
        self.body = nn.Sequential(*layers, nn.Conv2d(c, 1, 4, 2, 0))
        self.img_size = img_size
        self.embed = nn.Embedding(num_classes, img_size * img_size)

    def forward(self, x, labels):
        label_plane = self.embed(labels).view(labels.shape[0], 1, self.img_size, self.img_size)
        return self.body(torch.cat([x, label_plane], dim=1))


ACT2FN = {"gelu": nn.functional.gelu, "relu": nn.functional.relu}


class MixtureFF(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.hidden_size // config.n_experts
        self.experts = nn.ModuleList([nn.Linear(width, width) for _ in range(config.n_experts)])
        for expert in self.experts:
            nn.init.normal_(expert.weight, std=config.initializer_range)
        self.act = ACT2FN[config.act_fn]
        self.out = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        parts = torch.split(x, x.shape[-1] // len(self.experts), dim=-1)
        return self.out(torch.cat([self.act(e(p)) for e, p in zip(self.experts, parts)], dim=-1))


class WideResidual(nn.Module):
    def __init__(self, in_channels: int = 1792):
        super().__init__()
        self.reduce = nn.Conv2d(in_channels, 64, kernel_size=1)
        self.expand = nn.Conv2d(64, in_channels, kernel_size=1)

    def forward(self, x):
        return torch.relu(x + 0.1 * self.expand(torch.relu(self.reduce(x))))


class Clip3D(nn.Module):
    def __init__(self, num_class: int = 10):
        super().__init__()
        self.stem = nn.Conv3d(3, 8, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3))
        self.pool = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
        self.stages = nn.Sequential(*[nn.Conv3d(8 if i == 0 else 16, 16, 3, stride=2, padding=1) for i in range(3)])
        self.avg = nn.AvgPool3d((1, 7, 7))
        self.fc = nn.Linear(32, num_class)

    def forward(self, x):
        x = self.avg(torch.relu(self.stages(self.pool(torch.relu(self.stem(x))))))
        return self.fc(x.flatten(1))


class CondGenerator(nn.Module):
    def __init__(self, z_dim: int, img_channels: int, features: int, num_classes: int, embed_size: int):
        super().__init__()
        self.G = nn.Sequential(
            nn.ConvTranspose2d(z_dim + embed_size, features * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(features * 4),
            nn.ReLU(), nn.ConvTranspose2d(features * 4, features * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(features * 2), nn.ReLU(), nn.ConvTranspose2d(features * 2, img_channels, 4, 2, 1),
            nn.Tanh())
        self.embed = nn.Embedding(num_classes, embed_size)

    def forward(self, z, labels):
        return self.G(torch.cat([z, self.embed(labels).unsqueeze(2).unsqueeze(3)], dim=1))


class BoxHead(nn.Module):
    def __init__(self, resnet_config, output_dim):
        super().__init__()
        self.lin1 = nn.Linear(resnet_config.hidden_sizes[-1], 32)
        self.lin2 = nn.Linear(32, output_dim)

    def forward(self, x):
        return self.lin2(torch.relu(self.lin1(x)))


class Up(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x, skip_x):
        x = torch.cat([skip_x, self.up(x)], dim=1)
        return torch.relu(self.conv(x))


def make_up():
    return Up(16, 8)


class Mixer(nn.Module):
    def __init__(self, hidden_dim, patch_size, height, width, num_classes):
        super().__init__()
        self.patch = nn.Conv2d(3, hidden_dim, patch_size, patch_size)
        tokens = (height // patch_size) * (width // patch_size)
        self.token_mix = nn.Linear(tokens, tokens)
        self.head = nn.Linear(hidden_dim, num_classes)

    def forward(self, x):
        x = self.patch(x).flatten(2)
        x = x + self.token_mix(x)
        return self.head(x.mean(-1))


class PredictionHead(nn.Module):
    def __init__(self, hidden_size=16, vocab_size=40):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.decoder = nn.Linear(hidden_size, vocab_size, bias=False)
        self.decoder.bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, hidden_states):
        return self.decoder(torch.tanh(self.dense(hidden_states)))
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh36"), {"models.py": MODELS}, "*")


def test_time_feature_marks_beside_a_series(proven):
    """The layer that refused an input tells which argument it was (a forward pre-hook on every layer, storage
    shared with an argument): the marks' Linear(4, d_model) given 7 columns ("mat1 and mat2 shapes cannot be
    multiplied (64x7 and 4x512)") reshapes ``x_mark_enc``, then ``x_mark_dec``, not the series (KaigeZheng/LTSF-model's
    Autoformer, Informer and Transformer: not built before)."""
    model = proven["models.py:Forecaster"]
    assert model["status"] == "proven", model
    series, marks, dec, dec_marks = model["inputs"]
    assert series.split(":")[0].split("x")[2] == "7" and dec.split(":")[0].split("x")[2] == "7", model["inputs"]
    assert marks.split(":")[0].split("x")[2] == "4" and dec_marks.split(":")[0].split("x")[2] == "4", model["inputs"]
    assert proven["models.py:DataEmbedding"]["status"] == "proven", proven["models.py:DataEmbedding"]


def test_graph_layers_get_a_graph_by_the_arguments_name(proven):
    """``edge_index`` is 2 x E node indices (PyG's convention: random floats are no index), ``adj_mat`` an N x N x 1
    mask (YeonwooSung/PyTorch_GNN_Implementation's GATv2 asserts it: not built before)."""
    edge = proven["models.py:EdgeConv"]
    assert edge["status"] == "proven", edge
    nodes, edges = edge["inputs"]
    n = nodes.split("x")[0]
    assert edges == f"2x{4 * int(n)}:int64:0:{n}", edge["inputs"]
    gat = proven["models.py:GATv2Like"]
    assert gat["status"] == "proven", gat
    assert gat["inputs"][1].startswith(f"{gat['inputs'][0].split('x')[0]}x{gat['inputs'][0].split('x')[0]}x1:"), gat


def test_integer_time_steps_by_annotation_or_name(proven):
    """``forward(self, t: torch.LongTensor)`` indexing a table (quickgrid/paper-implementations' diffusion
    PositionalEncoding: every float form refused, "tensors used as indices must be long") and ``forward(self,
    timesteps)``: integer steps."""
    for name in ("StepTable", "TimeIndexed"):
        model = proven[f"models.py:{name}"]
        assert model["status"] == "proven", model
        assert model["inputs"][0].split(":")[1] == "int64", model["inputs"]


def test_a_view_with_the_batch_left_free_takes_the_image_it_names(proven):
    """``x.view(-1, C, size * size)`` (a diffusion UNet's self-attention): an image of size x size."""
    model = proven["models.py:SelfAttention2d"]
    assert model["status"] == "proven", model
    assert model["inputs"][0].split(":")[0].split("x")[1:] == ["16", "8", "8"], model["inputs"]


def test_an_image_size_argument_grows_when_every_input_is_too_small(proven):
    """The constructor's ``img_size`` fixes the image (the label plane is img_size x img_size) and 32 is too small
    for the strides ("Kernel size can't be greater than actual input size"): tried again at 64."""
    model = proven["models.py:Critic"]
    assert model["status"] == "proven", model
    assert "img_size=64" in model["ctor"] and model["inputs"][0].endswith("x64x64:float32"), model


def test_a_configuration_key_of_a_table_experts_and_an_initialiser_std(proven):
    """insight88/NLP-Models-PyTorch's mixture BERT: ``ACT2FN[config.act_fn]`` takes a key of the table (16 raised
    KeyError), ``config.n_experts`` is a count (16 experts of a 16 width left 1 channel each), and
    ``config.initializer_range`` a std (0.02, not 16)."""
    model = proven["models.py:MixtureFF"]
    assert model["status"] == "proven", model
    for part in ("act_fn='gelu'", "n_experts=2", "initializer_range=0.02"):
        assert part in model["ctor"], model["ctor"]


def test_an_input_over_the_size_cap_is_tried_smaller(proven):
    """1792 channels at 32 x 32 (and every larger image) is over the input cap (3 M elements): the same form at
    16 x 16 (0xMukesh/paper-implementations' InceptionResNetC was tried channels-last only, and not built)."""
    model = proven["models.py:WideResidual"]
    assert model["status"] == "proven", model
    assert model["inputs"] == ["2x1792x16x16:float32"], model["inputs"]


def test_a_video_input_grown_to_the_kernel_its_strides_leave(proven):
    """MRzzm/action-recognition-models-pytorch's Res3D/P3D/R(2+1)D at 16 x 112 x 112 frames: "input image (T: 2 H: 4
    W: 4) smaller than kernel size (kT: 1 kH: 7 kW: 7)": the frames grown by the factor named (224 x 224)."""
    model = proven["models.py:Clip3D"]
    assert model["status"] == "proven", model
    assert model["inputs"] == ["1x3x16x224x224:float32"], model["inputs"]


def test_a_generator_takes_a_latent_code(proven):
    """A first ConvTranspose2d of stride 1 and no padding projects a 1 x 1 latent (quickgrid/paper-implementations'
    conditional WGAN generator: its label embedding joined at 1 x 1 refused every 32 x 32 code)."""
    model = proven["models.py:CondGenerator"]
    assert model["status"] == "proven", model
    assert model["inputs"][0].endswith("x1x1:float32"), model["inputs"]


def test_a_configuration_sequence_read_by_position_is_a_list(proven):
    """``nn.Linear(resnet_config.hidden_sizes[-1], ...)`` (michal-boguslawski/Vision-models-pytorch's anchor heads):
    the attribute is a sequence whose last item is the size; it was taken for a count (16: "'int' object is not
    subscriptable")."""
    model = proven["models.py:BoxHead"]
    assert model["status"] == "proven", model
    assert "hidden_sizes=[16, 16]" in model["ctor"], model["ctor"]


def test_a_skip_joined_at_twice_the_resolution(proven):
    """quickgrid/paper-implementations' DDPM ``Up(x, skip_x, t)`` (here without its time embedding, still open):
    ``cat([skip_x, upsample(x)])`` refused a skip of the input's size ("Expected size 32 but got size 64 for tensor
    number 1"): the skip at 64, then both at the channels the join's convolution takes."""
    model = proven["models.py:Up"]
    assert model["status"] == "proven", model
    x, skip = model["inputs"]
    assert x.split(":")[0].split("x")[2:] == ["32", "32"] and skip.split(":")[0].split("x")[2:] == ["64", "64"], \
        model["inputs"]


def test_a_patch_size_is_a_patch_not_an_image(proven):
    """Cheol-Will/paper-implementations' MLPMixer(hidden_dim, patch_size, height, width, ...): patch_size was given an
    image's 32, height and width 16: no patch ("a layer of width 0")."""
    model = proven["models.py:Mixer"]
    assert model["status"] == "proven", model
    assert "patch_size=4" in model["ctor"], model["ctor"]


def test_a_bias_given_after_construction_is_proven(proven):
    """insight88/NLP-Models-PyTorch's PreTrainingHeads: ``Linear(h, vocab, bias=False)`` then ``.bias =
    nn.Parameter(...)``: the port switches has_bias on (test_bias_writes.py), and the validator's settings check reads
    the switch as it is now, not as the constructor had it ("bias differs: torch bias=True, MindSpore has_bias=False"
    made the proof 'diverged'); the random draw gives the bias values."""
    model = proven["models.py:PredictionHead"]
    assert model["status"] == "proven", model
