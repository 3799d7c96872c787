"""First contact, batch 10 (session 40): classes of failure met on repositories no corpus of ours named, each as a
fixture of our own proven by ``prove_models`` with real torch and real MindSpore (PyNative and GRAPH_MODE)."""
from __future__ import annotations

from tests.discovery._prove import prove_files

ATTEND = '''
from collections import namedtuple
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend

Config = namedtuple("Config", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self, flash=True):
        super().__init__()
        self.flash = flash
        self.cpu_config = Config(True, True, True)

    def forward(self, q, k, v):
        config = self.cpu_config
        to_backend = dict(enable_flash=SDPBackend.FLASH_ATTENTION, enable_mem_efficient=SDPBackend.EFFICIENT_ATTENTION,
                          enable_math=SDPBackend.MATH)
        backends = [to_backend[name] for name, on in config._asdict().items() if on]
        with torch.nn.attention.sdpa_kernel(backends):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=False, dropout_p=0.0)
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            return out + F.scaled_dot_product_attention(q, k, v, is_causal=True)


if __name__ == "__main__":
    q = torch.randn(2, 4, 16, 8)
    Attend()(q, q, q)
'''


def test_attention_kernel_choice_and_a_namedtuple_config_compile_in_a_graph(tmp_path):
    # lucidrains/iTransformer's Attend: ``with sdpa_kernel(backends)`` built from ``config._asdict()``; the port
    # matched in PyNative but GRAPH_MODE failed ("'NamedTuple' object has no attribute '_asdict'", then torch's
    # context manager in a graph): ms-failed. InertContextTransform, NamedTupleDictTransform, the sdpa entries.
    result = prove_files(tmp_path, {"attend.py": ATTEND}, None)["attend.py:Attend"]
    assert result["status"] == "proven", result
    assert [d["graph"] for d in result["draws"]][0] == "ok", result["draws"]
    port = (tmp_path / "out" / "attend.py").read_text()
    assert "import torch" not in port and "_asdict" not in port and "with " not in port


HANDED_TENSORS = '''
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self, user_ids: torch.Tensor, num_users: int, name: str, **kwargs):
        super().__init__()
        self.user_ids = user_ids
        self.name = name
        self.embed = nn.Embedding(num_users, 8)


class Scored(Base):
    def __init__(self, user_ids: torch.Tensor, num_users: int, scale: torch.Tensor, **kwargs):
        super().__init__(user_ids=user_ids, num_users=num_users, **kwargs)
        self.scale = scale
        self.out = nn.Linear(8, scale.shape[0])

    def forward(self, user_idx: torch.Tensor):
        return self.out(self.embed(user_idx)) * self.scale
'''


def test_tensors_and_a_stored_string_handed_to_the_constructor(tmp_path):
    # bohyunshin/recommender's Model(user_ids: torch.Tensor, item_ids: torch.Tensor, num_users: int, ...), the base
    # class's ``loss_name: str`` through **kwargs: "no constructor arguments could be chosen" (8 of 8 classes). A
    # tensor annotation gets the same values on both sides (ids as 0..n-1, others as distinct floats); a required
    # string nothing names, its own name as a last resort.
    results = prove_files(tmp_path, {"rec.py": HANDED_TENSORS}, None)
    scored = results["rec.py:Scored"]
    assert scored["status"] == "proven", scored
    assert "user_ids=torch.arange(" in scored["ctor"] and "scale=(1024 + torch.arange(" in scored["ctor"], scored["ctor"]


FULL_PRECISION = '''
from contextlib import nullcontext
from functools import partial

import torch
from torch import nn
from torch.amp import autocast


class Quantize(nn.Module):
    def __init__(self, dim=8, levels=5, force_f32=True):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.levels = levels
        self.force_f32 = force_f32

    def forward(self, z):
        z = self.proj(z)
        context = partial(autocast, "cuda", enabled=False) if self.force_f32 else nullcontext
        with context():
            half = (self.levels - 1) / 2
            codes = torch.tanh(z) * half
        with nullcontext():
            return codes / half
'''


def test_a_full_precision_block_chosen_at_run_time_compiles_in_a_graph(tmp_path):
    # lucidrains/vector-quantize-pytorch's FSQ/LFQ: ``partial(autocast, 'cuda', enabled=False) if force_f32 else
    # nullcontext`` then ``with quantization_context():`` in forward: GRAPH_MODE failed ("For 'partial', input[0]
    # should be Function, but got TypeType"), 5 classes ms-failed. InertContextTransform.
    result = prove_files(tmp_path, {"fsq.py": FULL_PRECISION}, None)["fsq.py:Quantize"]
    assert result["status"] == "proven", result
    assert [d["graph"] for d in result["draws"]][0] == "ok", result["draws"]
    port = (tmp_path / "out" / "fsq.py").read_text()
    assert "partial(" not in port and "with " not in port


UNBATCHED_SEQUENCE = '''
import math

import numpy as np
import torch
from torch import nn


class PriorAttention(nn.Module):
    def __init__(self, N, d_model):
        super().__init__()
        self.N = N
        self.Wq = nn.Linear(d_model, d_model, bias=False)
        self.Ws = nn.Linear(d_model, 1, bias=False)

    def forward(self, x):
        sigma = self.Ws(x)
        p = torch.from_numpy(np.abs(np.indices((self.N, self.N))[0] - np.indices((self.N, self.N))[1])).float()
        gaussian = torch.exp(-0.5 * (p / sigma) ** 2) / (math.sqrt(2 * math.pi) * sigma)
        gaussian /= gaussian.sum(dim=-1).view(-1, 1)
        return gaussian @ self.Wq(x)
'''

SPLIT_STATE = '''
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, in_dim, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(in_dim, hidden_size=hidden_size, num_layers=1, batch_first=True)
        self.linear = nn.Sequential(nn.Linear(hidden_size, 1), nn.Sigmoid())

    def forward(self, x, h_0, c_0):
        batch_size, window_size = x.size(0), x.size(1)
        out, _ = self.lstm(x, (h_0, c_0))
        return self.linear(out.reshape(batch_size * window_size, self.hidden_size)).reshape(batch_size, window_size, 1)
'''


def test_an_unbatched_sequence_at_the_length_the_constructor_fixed(tmp_path):
    # spencerbraun/anomaly_transformer_pytorch's AnomalyAttention(N, d_model) takes x of N x d_model (no batch): an
    # (N, N) prior against the 2 rows drawn ("The size of tensor a (16) must match the size of tensor b (2) at
    # non-singleton dimension 0"; in place: "Attempting to broadcast a dimension of length 2"): not-built, 6 classes.
    # build._fixed_length_hint sets a rank-2 input's leading axis too.
    result = prove_files(tmp_path, {"prior.py": UNBATCHED_SEQUENCE}, None)["prior.py:PriorAttention"]
    assert result["status"] == "proven", result
    assert result["inputs"] == ["16x16:float32"], result["inputs"]


def test_an_lstm_state_handed_as_two_arguments(tmp_path):
    # SeungHunHan11/Time-Implementations' TAnoGAN: ``forward(x, h_0, c_0)`` hands ``(h_0, c_0)`` to its LSTM: the
    # builder gave h_0 the pair ("'tuple' object has no attribute 'dim'"): not-built. Each half alone now
    # (build._state_forms, _CELL_STATE_NAMES).
    result = prove_files(tmp_path, {"tanogan.py": SPLIT_STATE}, None)["tanogan.py:Discriminator"]
    assert result["status"] == "proven", result
    assert len(result["inputs"]) == 3 and not any(i.startswith("(") for i in result["inputs"]), result["inputs"]


RETURNS_A_FUNCTION = '''
import torch
from torch import nn


class RevIN(nn.Module):
    def __init__(self, num_variates, eps=1e-5):
        super().__init__()
        self.num_variates = num_variates
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(num_variates, 1))
        self.beta = nn.Parameter(torch.zeros(num_variates, 1))

    def forward(self, x):
        assert x.shape[1] == self.num_variates
        var = torch.var(x, dim=-1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=-1, keepdim=True)
        rescaled = (x - mean) * var.clamp(min=self.eps).rsqrt() * self.gamma + self.beta

        def reverse_fn(scaled_output):
            return (scaled_output - self.beta) / self.gamma * var.sqrt() + mean

        return rescaled, reverse_fn


if __name__ == "__main__":
    RevIN(16)(torch.randn(2, 16, 32))
'''


def test_a_function_returned_beside_the_tensors_is_not_compared(tmp_path):
    # lucidrains/iTransformer's RevIN returns (rescaled, reverse_fn): "cannot compare an output of type function",
    # not-built. The tensors are compared (metrics.flatten_outputs leaves functions out); GRAPH_MODE, which returns no
    # function ("Function in output is not supported"), is not run on it and says why.
    result = prove_files(tmp_path, {"revin.py": RETURNS_A_FUNCTION}, None)["revin.py:RevIN"]
    assert result["status"] == "proven", result
    assert {d["graph"] for d in result["draws"]} == {"skipped"}, result["draws"]


SEQUENCE_FIRST_TEXT_CNN = '''
import torch
import torch.nn.functional as F
from torch import nn


class CNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.convs = nn.ModuleList([nn.Conv2d(1, n_filters, (fs, embedding_dim)) for fs in filter_sizes])
        self.fc = nn.Linear(len(filter_sizes) * n_filters, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text):
        text = text.permute(1, 0)  # [sent len, batch] -> [batch, sent len]
        embedded = self.embedding(text).unsqueeze(1)
        conved = [F.relu(conv(embedded)).squeeze(3) for conv in self.convs]
        pooled = [F.max_pool1d(c, c.shape[2]).squeeze(2) for c in conved]
        return self.fc(self.dropout(torch.cat(pooled, dim=1)))
'''


def test_a_sequence_first_text_cnn_gets_a_sequence_as_long_as_its_widest_filter(tmp_path):
    # luciusssss/text-classification's CNNs take [sent len, batch] tokens: our 2 x 16 ids became 2 tokens of a batch
    # of 16 against filters of 16 ("Calculated padded input size per channel: (2 x 16). Kernel size: (16 x 16)"):
    # not-built, 4 of 9 classes. build._length_hint grows that axis of an integer input too.
    result = prove_files(tmp_path, {"textcnn.py": SEQUENCE_FIRST_TEXT_CNN}, None)["textcnn.py:CNN"]
    assert result["status"] == "proven", result


FROM_PRETRAINED_THROUGH_AN_OBJECT = '''
import torch
from torch import nn


class TwoTables(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        table = torch.linspace(-1.0, 1.0, vocab * dim).reshape(vocab, dim)
        self.embedding = nn.Embedding(vocab, dim)
        self.embedding = self.embedding.from_pretrained(table, freeze=False)
        self.static = nn.Embedding(vocab, dim).from_pretrained(table * 2)
        self.out = nn.Linear(dim, 3)

    def forward(self, tokens):
        return self.out(self.embedding(tokens) + self.static(tokens))
'''


def test_a_layer_classmethod_called_through_an_object_of_the_layer(tmp_path):
    # Doragd/Text-Classification-PyTorch: ``self.embedding = self.embedding.from_pretrained(w, freeze=...)`` and
    # ``nn.Embedding(v, d).from_pretrained(w)``: "The 'Embedding' object has no attribute 'from_pretrained'"
    # (ms-failed). The classmethod's own entry (TableCallTransform._classmethod_through_layer).
    result = prove_files(tmp_path, {"tables.py": FROM_PRETRAINED_THROUGH_AN_OBJECT}, None)["tables.py:TwoTables"]
    assert result["status"] == "proven", result
