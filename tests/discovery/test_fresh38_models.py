"""Causes met on first contact with new repositories (session 38: `mindport migrate REPO` with no settings), each a
class with a fixture of our own. The repository of the fixtures is converted and proven once (real torch, real
MindSpore, GRAPH_MODE included). Expected values come from torch."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.discovery._prove import prove_files

# a tree ensemble layer initialised from its first batch (NODE's data-aware initialisation: thresholds at
# percentiles numpy's global generator draws, a flag parameter set once, through a base class overriding __call__)
TABULAR = (Path(__file__).parents[1] / "parity" / "models" / "datainit.py").read_text()  # the validate test's too

# a diffusion U-Net's stage: its own residual blocks first take the image (GroupNorm(32, C), then a convolution), the
# time embedding's Linear registered before them; 32 groups need a channel count they divide
UNET = '''
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, ch_in, ch_out, time_dim):
        super().__init__()
        self.act = nn.SiLU()
        self.time_proj = nn.Sequential(self.act, nn.Linear(time_dim * 4, ch_out))
        self.norm_1 = nn.GroupNorm(num_groups=32, num_channels=ch_in)
        self.conv_1 = nn.Conv2d(ch_in, ch_out, kernel_size=3, padding=1)
        self.norm_2 = nn.GroupNorm(num_groups=32, num_channels=ch_out)
        self.conv_2 = nn.Conv2d(ch_out, ch_out, kernel_size=3, padding=1)

    def forward(self, x, time_emb):
        h = self.conv_1(self.act(self.norm_1(x)))
        h = h + self.time_proj(time_emb).reshape((*h.shape[:2], 1, 1))
        return x + self.conv_2(self.act(self.norm_2(h)))


class DownStage(nn.Module):
    def __init__(self, ch_in, ch_out, time_dim):
        super().__init__()
        self.block_1 = ResBlock(ch_in, ch_out, time_dim)
        self.block_2 = ResBlock(ch_out, ch_out, time_dim)
        self.down = nn.Conv2d(ch_out, ch_out, kernel_size=3, stride=2, padding=1)

    def forward(self, x, time_emb):
        x = self.block_1(x, time_emb)
        skip = x
        x = self.block_2(x, time_emb)
        return self.down(x), skip
'''

# a graph filter network: one feature width per layer and one more (the class asserts the lengths), the graph's shift
# operator a numpy matrix read through .shape and .reshape
GRAPH = '''
import torch
import torch.nn as nn


class GraphFilterNet(nn.Module):
    def __init__(self, dimNodeSignals, nFilterTaps, GSO):
        super().__init__()
        assert len(dimNodeSignals) == len(nFilterTaps) + 1
        assert len(GSO.shape) == 2 and GSO.shape[0] == GSO.shape[1]
        n = GSO.shape[0]
        self.register_buffer("S", torch.tensor(GSO.reshape([1, n, n])))
        self.layers = nn.ModuleList(nn.Linear(dimNodeSignals[k], dimNodeSignals[k + 1])
                                    for k in range(len(nFilterTaps)))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x * self.S.sum()
'''

# a convolutional LSTM cell: its state a pair at the hidden width, joined with the input before one convolution
CONVLSTM = '''
import torch
import torch.nn as nn


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size, bias):
        super().__init__()
        self.input_dim, self.hidden_dim = input_dim, hidden_dim
        self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size, padding=kernel_size // 2,
                              bias=bias)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state
        cc = self.conv(torch.cat([input_tensor, h_cur], dim=1))
        i, f, o, g = torch.split(cc, self.hidden_dim, dim=1)
        c_next = torch.sigmoid(f) * c_cur + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_next), c_next

    def init_hidden(self, batch_size, image_size):
        height, width = image_size
        return (torch.zeros(batch_size, self.hidden_dim, height, width),
                torch.zeros(batch_size, self.hidden_dim, height, width))


cell = ConvLSTMCell(input_dim=5, hidden_dim=12, kernel_size=3, bias=True)
'''

# a one-hot encoder of category ids (its forward gives torch's one_hot float ids: refused)
ONEHOT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OneHotEncoder(nn.Module):
    def __init__(self, num_categories):
        super().__init__()
        self.num_categories = num_categories

    def forward(self, x):
        return F.one_hot(x, num_classes=self.num_categories).float()
'''

# a projection helper the forward calls with each of its Linear layers, reading their weight and bias (a batch
# ensemble's per-member scaling around a shared weight)
ENSEMBLE = '''
import torch
import torch.nn as nn


class EnsembleProjection(nn.Module):
    def __init__(self, dim, ensemble_size):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.r = nn.Parameter(torch.randn(ensemble_size, dim))
        self.s = nn.Parameter(torch.randn(ensemble_size, dim))

    def forward(self, x):
        return self.scaled(x, self.q_proj) + self.scaled(x, self.v_proj)

    def scaled(self, x, linear_layer):
        w, b = linear_layer.weight, linear_layer.bias
        return ((x * self.r) @ w.t()) * self.s + b
'''

# a character-aware word encoder: ids embedded, then viewed at the batch and sequence sizes its constructor was given
CHARS = '''
import torch
import torch.nn as nn


class CharWordEncoder(nn.Module):
    def __init__(self, char_vocab, emb, max_len, batch_size, seq_len):
        super().__init__()
        self.emb, self.max_len, self.batch_size, self.seq_len = emb, max_len, batch_size, seq_len
        self.embeddings = nn.Embedding(char_vocab, emb)
        self.conv = nn.Conv2d(1, 6, kernel_size=(3, emb))

    def forward(self, chars):
        x = self.embeddings(chars).view(self.batch_size * self.seq_len, 1, self.max_len, self.emb)
        return torch.tanh(self.conv(x)).amax(dim=2).view(self.batch_size, self.seq_len, -1)


encoder = CharWordEncoder(char_vocab=30, emb=5, max_len=8, batch_size=4, seq_len=3)
'''

# an actor-critic core: a helper function builds the MLP, calling the activation it is handed once per layer; a
# siamese encoder reading its data configuration at a key it computes from another configuration's value
CORES = '''
import torch
import torch.nn as nn


def mlp(sizes, activation, output_activation=nn.Identity):
    layers = []
    for j in range(len(sizes) - 1):
        act = activation if j < len(sizes) - 2 else output_activation
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


class MLPCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1], activation)

    def forward(self, obs, act):
        return torch.squeeze(self.q(torch.cat([obs, act], dim=-1)), -1)


class SiameseEncoder(nn.Module):
    level = "word"

    def __init__(self, config, data_config):
        super().__init__()
        self.embed = nn.Embedding(data_config[self.level + "_size"], config["embed_size"])
        self.proj = nn.Linear(config["embed_size"], 4)

    def forward(self, tokens):
        return self.proj(self.embed(tokens)).mean(dim=1)
'''

# a model that is its own trainer: ``train(self, data, max_iterations)`` shadows torch's train(mode)
TRAINER = '''
import torch
import torch.nn as nn


class SelfTrainingTagger(nn.Module):
    def __init__(self, vocab, dim, labels):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(dim, labels)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens)))

    def train(self, data, max_iterations):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        for _ in range(max_iterations):
            for tokens, tags in data:
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self(tokens).flatten(0, 1), tags.flatten())
                loss.backward()
                optimizer.step()
'''

# an option-critic head sized by the body it is handed (``body.latent_dim``)
HEADS = '''
import torch
import torch.nn as nn


class OptionCriticHead(nn.Module):
    def __init__(self, body, num_options):
        super().__init__()
        self.body = body
        self.q_option = nn.Linear(body.latent_dim, num_options)
        self.pi = nn.Linear(body.latent_dim, num_options * 2)

    def forward(self, x):
        phi = self.body(x)
        return self.q_option(phi), torch.softmax(self.pi(phi), dim=-1)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh38"), {"tabular.py": TABULAR, "unet.py": UNET, "graph.py": GRAPH, "convlstm.py": CONVLSTM, "onehot.py": ONEHOT, "ensemble.py": ENSEMBLE, "chars.py": CHARS, "cores.py": CORES, "trainer.py": TRAINER, "heads.py": HEADS}, "*")


def test_a_model_initialised_by_its_first_forward_is_proven_from_the_state_it_left(proven):
    """Before: each side initialised on its first forward with its own numpy draws (the MindSpore side had torch's
    weights from before that forward): "outputs differ, max rel 371" for a correct port."""
    m = proven["tabular.py:ThresholdLayer"]
    assert m["status"] == "proven", m
    assert m["max_rel"] < 1e-4


def test_an_argument_handed_through_the_projects_own_blocks_takes_the_form_of_the_layer_it_reaches(proven):
    """Before: the stage's first input was formed for the time embedding's Linear (registered first: 2x128), and
    GroupNorm refused it ("Expected weight to be a vector of size equal to the number of channels in input")."""
    m = proven["unet.py:DownStage"]
    assert m["status"] == "proven", m
    assert m["inputs"][0].startswith("2x32x") and m["inputs"][0].count("x") == 3, m["inputs"]


def test_lists_whose_lengths_the_class_relates_and_a_matrix_read_through_shape(proven):
    """Before: both lists two long ("AssertionError" at ``len(dimNodeSignals) == len(nFilterTaps) + 1``), and the
    matrix a SimpleNamespace whose ``reshape`` was an int."""
    m = proven["graph.py:GraphFilterNet"]
    assert m["status"] == "proven", m
    assert "dimNodeSignals=[8, 16, 16], nFilterTaps=[8, 16]" in m["ctor"] and "RandomState(0).rand(16, 16)" in m["ctor"]


def test_a_tools_settings_file_is_no_configuration_a_model_reads(tmp_path):
    """Before: ``EmbeddingLayer(config)`` was given the repository's .pre-commit-config.yaml."""
    from mindport.discovery.build import _architecture_files, repository_files

    for rel, text in {".pre-commit-config.yaml": "repos: []\n", "mkdocs.yml": "site_name: x\n",
                      "configs/model.yaml": "hidden: 8\n", "setup.cfg": "[metadata]\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert [rel for rel, _ in _architecture_files(repository_files(str(tmp_path)), "config")] == ["configs/model.yaml"]


def test_a_convolutional_recurrent_cells_state_is_at_its_hidden_width(proven):
    """Before: the state was formed like the input (its 17 channels each), and the convolution over their join got
    34 ("expected input[2, 34, 32, 32] to have 17 channels")."""
    m = proven["convlstm.py:ConvLSTMCell"]
    assert m["status"] == "proven", m
    assert m["inputs"][0].startswith("2x5x"), m["inputs"]


def test_an_input_the_forward_uses_as_indices_is_integer(proven):
    """Before: float forms only ("one_hot is only applicable to index tensor of type LongTensor")."""
    m = proven["onehot.py:OneHotEncoder"]
    assert m["status"] == "proven", m
    assert ":int64:0:" in m["inputs"][0], m["inputs"]


def test_a_layers_weight_read_in_a_method_the_forward_calls_compiles_in_graph_mode(proven):
    """Before: ``mp_adapt.layer_attribute(linear_layer, 'weight')`` there, which GRAPH_MODE refuses ("Unsupported
    statement 'ImportFrom'"): ms-failed."""
    m = proven["ensemble.py:EnsembleProjection"]
    assert m["status"] == "proven", m
    assert m["draws"][0]["graph"] == "ok"


def test_ids_viewed_at_the_batch_the_constructor_fixed_get_that_many_samples(proven):
    """Before: 2 x 8 ids only ("shape '[12, 1, 8, 5]' is invalid for input of size 80")."""
    m = proven["chars.py:CharWordEncoder"]
    assert m["status"] == "proven", m
    shape = m["inputs"][0].split(":")[0]  # as many ids as the view takes: 12 words of 8 characters
    assert ":int64:" in m["inputs"][0] and eval(shape.replace("x", "*")) == 12 * 8, m["inputs"]


def test_an_activation_handed_to_a_helper_that_calls_it_gets_a_non_linear_stand_in(proven):
    """Before: ``activation=16`` ("'int' object is not callable" in the helper); the stand-in is tanh on both sides
    (GRAPH_MODE included), so the proof stays non-linear."""
    m = proven["cores.py:MLPCritic"]
    assert m["status"] == "proven", m
    assert "Activation()" in m["ctor"] and m["draws"][0]["graph"] == "ok"


def test_a_configuration_read_at_a_key_it_computes_reads_a_small_size_at_every_key(proven):
    """Before: ``data_config`` was a list ("list indices must be integers or slices, not str")."""
    m = proven["cores.py:SiameseEncoder"]
    assert m["status"] == "proven", m
    assert "AnyKeys" in m["ctor"]


def test_a_model_defining_its_own_train_method_is_put_in_eval_mode_by_its_flags(proven):
    """Before: the builder's ``model.eval()`` called the class's ``train(False)``: "missing 1 required positional
    argument: 'max_iterations'" (not built). The dropout is off in the proof, as torch's eval() would set it."""
    m = proven["trainer.py:SelfTrainingTagger"]
    assert m["status"] == "proven", m


def test_a_size_read_off_a_handed_sub_module_is_the_stand_ins_width(proven):
    """Before: "'Passthrough' object has no attribute 'latent_dim'" (DeepRL-pytorch's option-critic heads)."""
    m = proven["heads.py:OptionCriticHead"]
    assert m["status"] == "proven", m
    assert m["inputs"] == ["2x16:float32"], m["inputs"]
