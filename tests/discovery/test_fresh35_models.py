"""Causes met on first contact with new repositories (session 35: `mindport migrate REPO` with no settings over
gau-nernst/pytorch-models, Keith-Dao/PyTorch-Models, kaniblu/pytorch-models, Fanziyang-v/PyTorch-Models,
minemile/pytorch-models, srpkdyy/pytorch-models), each a class with a fixture of our own. One repository of all the
fixtures is converted and proven once (real torch, real MindSpore, GRAPH_MODE included); cheaper checks of the pieces
follow. Expected values come from torch."""
from __future__ import annotations

import pytest

from mindport.discovery.build import small_value
from mindport.discovery.scan import discover
from tests.discovery._prove import prove_files

# ResNet takes its block class as an argument annotated type[...] and says how to build it only in its docstring;
# LabelSmoothing checks its epsilon; Sampler's forward calls a method its subclasses implement; TiedEmbedding is a
# torch layer subclass with no __init__ of its own; a Whisper-style encoder computes its head count as d_model // 64
MODELS = '''
import torch
import torch.nn as nn


class Basic(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class ResNet(nn.Module):
    def __init__(self, num_channels: int, num_classes: int, widths: list[int], block: type[Basic]):
        """A small ResNet.

        >>> model = ResNet(3, 10, [8, 16], Basic)
        """
        super().__init__()
        layers, cin = [], num_channels
        for w in widths:
            layers.append(self.make(cin, w, block))
            cin = w
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    @staticmethod
    def make(cin, cout, block):
        return block(cin, cout, 2)

    def forward(self, x):
        return self.fc(self.body(x).mean((2, 3)))


class LabelSmoothing(nn.Module):
    def __init__(self, classes: int, epsilon: float):
        super().__init__()
        if not 0 <= epsilon < 1:
            raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
        self.fc = nn.Linear(classes, classes)
        self.epsilon = epsilon

    def forward(self, x):
        return (1 - self.epsilon) * self.fc(x) + self.epsilon / x.shape[-1]


class Sampler(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim)

    def sample(self, x):
        raise NotImplementedError()

    def forward(self, x):
        return self.sample(self.fc(x))


class TiedEmbedding(nn.Embedding):
    def reset_parameters(self):
        nn.init.uniform_(self.weight, -0.5, 0.5)


def make_arch(kind):
    widths = [8]
    if kind == "wide":
        widths.append(16)
    return widths


class Configured(nn.Module):
    def __init__(self, kind: str, n_classes: int):
        super().__init__()
        widths = make_arch(kind)
        self.convs = nn.Sequential(*[nn.Conv2d(3 if i == 0 else widths[i - 1], w, 3) for i, w in enumerate(widths)])
        self.fc = nn.Linear(widths[-1], n_classes)

    def forward(self, x):
        return self.fc(self.convs(x).mean((2, 3)))


class Downsampler(nn.Module):
    """Strides 4 x 4 x 4, then a reflection pad: the input must be long enough for the pad after them."""

    def __init__(self, channels=4):
        super().__init__()
        self.convs = nn.Sequential(*[nn.Conv1d(channels, channels, 4, 4) for _ in range(3)])

    def forward(self, x):
        return torch.nn.functional.pad(self.convs(x), (2, 2), mode="reflect")


class SeriesEmbedding(nn.Module):
    """A (B, L, C) series moved channels-first before its convolution, as time-series embeddings do."""

    def __init__(self, c_in: int, d_model: int):
        super().__init__()
        self.conv = nn.Conv1d(c_in, d_model, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        return self.conv(x.permute(0, 2, 1)).transpose(1, 2)


class HeadsOf64(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        heads = d_model // 64
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]
'''

README = '''
# models

```python
import torch
from models import HeadsOf64

m = HeadsOf64(128)
y = m(torch.randn(2, 5, 128))
```
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh35"), {"models.py": MODELS}, "*")


def test_a_block_class_argument_named_by_its_annotation_and_docstring(proven):
    """ResNet(num_channels, num_classes, widths, block: type[Basic]) hands ``block`` to a method that calls it: the
    annotation names the class; the docstring's ``>>>`` example gives the whole call."""
    result = proven["models.py:ResNet"]
    assert result["status"] == "proven", result
    assert result["ctor"] == "3, 10, [8, 16], Basic", result


def test_an_epsilon_is_small(proven):
    result = proven["models.py:LabelSmoothing"]
    assert result["status"] == "proven", result
    assert "epsilon=0.1" in result["ctor"]
    assert small_value("eps", "", 16) == small_value("label_smoothing", "float", 16) == "0.1"


def test_a_class_whose_forward_raises_not_implemented_is_left_out(proven):
    """Sampler's forward calls ``self.sample``, which only raises NotImplementedError: an abstract base, left out as
    the bases discover() leaves out are (it was "not built")."""
    assert "models.py:Sampler" not in proven


def test_a_torch_layer_subclass_takes_the_layers_signature(proven):
    """TiedEmbedding(nn.Embedding) defines no __init__: it is built as torch's Embedding is (num_embeddings,
    embedding_dim), not with no arguments ("missing 2 required positional arguments")."""
    result = proven["models.py:TiedEmbedding"]
    assert result["status"] == "proven", result
    assert result["ctor"].startswith("num_embeddings="), result


def test_a_string_compared_by_a_module_function(proven):
    """Configured(kind: str, ...) hands ``kind`` to ``make_arch``, which compares it with "wide": that value."""
    result = proven["models.py:Configured"]
    assert result["status"] == "proven", result
    assert "kind='wide'" in result["ctor"], result


def test_an_input_long_enough_for_the_pad_after_the_strides(proven):
    """"padding (2, 2) at dimension 2 of input [2, 4, 1]" for a 2 x 4 x 128 input: the pad is the model's own, after
    a 64-fold downsampling: the input long enough for the window at that ratio."""
    result = proven["models.py:Downsampler"]
    assert result["status"] == "proven", result


def test_a_series_moved_channels_first(proven):
    """2 x 16 x 32 for c_in=16 met "expected input[2, 32, 34] to have 16 channels, but got 32": the series is
    (B, L, C), so 2 x 32 x 16."""
    result = proven["models.py:SeriesEmbedding"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].split(":")[0].split("x")[-1] == result["ctor"].split("c_in=")[1].split(",")[0], result


def test_a_head_count_of_d_model_over_64(proven):
    """A width at which d_model // 64 is 0 builds a layer of width 0: the small values go up to 64."""
    result = proven["models.py:HeadsOf64"]
    assert result["status"] == "proven", result


def test_readme_usage_gives_constructor_and_inputs(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "README.md").write_text(README)
    found = {c.key: c for c in discover(tmp_path)}
    heads = found["models.py:HeadsOf64"]
    assert "128" in heads.ctors and ["2x5x128:float32"] in heads.inputs, (heads.ctors, heads.inputs)
    assert "3, 10, [8, 16], Basic" in found["models.py:ResNet"].ctors


SCRIPT = '''
import numpy as np
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
width = 8


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=width):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(torch.tanh(self.emb(ids)))


model = TinyLM().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    ids = torch.from_numpy(np.load("train_ids.npy"))  # the script's data: absent here
    loss = model(ids).logsumexp(-1).mean()
    loss.backward()
    opt.step()
'''


def test_a_script_that_trains_on_import_is_built_from_its_definitions(tmp_path):
    """A file that trains its model at module level (no __main__ guard) is imported as its definitions only, by the
    builder and by both proof sides: before, its import ran the training (here it failed at once: no data)."""
    from mindport.discovery.scripts import definitions_code

    code = definitions_code(SCRIPT.encode())
    assert code is not None and len(code.split("\n")) == len(SCRIPT.split("\n"))  # line for line
    assert "class TinyLM" in code and "width = 8" in code and "loss.backward()" not in code and "model = " not in code
    assert definitions_code(SCRIPT.replace("loss.backward()", "pass").encode()) is None  # no training: as it is
    result = prove_files(tmp_path, {"train_lm.py": SCRIPT}, "*")["train_lm.py:TinyLM"]
    assert result["status"] == "proven", result


DATA_AT_IMPORT = '''
import torch
import torch.nn as nn

text = open("tiny_corpus.txt").read()  # the script's data, read at import: absent here
chars = sorted(set(text))


class CharModel(nn.Module):
    def __init__(self, vocab=30, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(self.rnn(self.emb(ids))[0])


if __name__ == "__main__":
    print(CharModel(len(chars)))
'''


def test_a_file_whose_module_level_code_fails_is_built_from_its_definitions(tmp_path):
    """Module-level code that raises on import (a dataset this machine does not have) stopped every class of the file
    ("importing ... failed: FileNotFoundError"): the file is imported again as its definitions."""
    result = prove_files(tmp_path, {"char_model.py": DATA_AT_IMPORT}, "*")["char_model.py:CharModel"]
    assert result["status"] == "proven", result
