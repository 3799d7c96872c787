"""Fixes from the discovery sweep's eighth pass (issue 29): forwards of recurrent models that take their state
(``forward(input, hidden)``), a recurrent layer registered before the embedding that feeds it, and an encoder's
output beside integer tokens."""
from __future__ import annotations

from pathlib import Path

LM = '''
import torch.nn as nn


class RNNModel(nn.Module):  # salesforce/awd-lstm-lm's layout: one LSTM per layer, the state a list of (h, c)
    def __init__(self, ntoken=50, ninp=8, nhid=12, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnns = nn.ModuleList([nn.LSTM(ninp if l == 0 else nhid, nhid if l != nlayers - 1 else ninp, 1)
                                   for l in range(nlayers)])
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp, self.nhid, self.nlayers = ninp, nhid, nlayers

    def forward(self, input, hidden):
        out = self.encoder(input)
        new = []
        for l, rnn in enumerate(self.rnns):
            out, h = rnn(out, hidden[l])
            new.append(h)
        return self.decoder(out), new

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return [(weight.new(1, bsz, self.nhid if l != self.nlayers - 1 else self.ninp).zero_(),
                 weight.new(1, bsz, self.nhid if l != self.nlayers - 1 else self.ninp).zero_())
                for l in range(self.nlayers)]
'''

OTHERS = '''
import torch.nn as nn


class CharGRU(nn.Module):  # no method makes the state: the GRU's own sizes tell it
    def __init__(self, n_chars=30, hidden_size=16, n_layers=2):
        super().__init__()
        self.encoder = nn.Embedding(n_chars, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers, batch_first=True)
        self.decoder = nn.Linear(hidden_size, n_chars)

    def forward(self, input, hidden):
        output, hidden = self.gru(self.encoder(input), hidden)
        return self.decoder(output), hidden


class DecoderRNN(nn.Module):  # IBM/pytorch-seq2seq: the rnn registered before the embedding that feeds it
    def __init__(self, vocab_size=40, hidden_size=16):
        super().__init__()
        self.rnn = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, inputs):
        output, _ = self.rnn(self.embedding(inputs))
        return self.out(output)


class Decoder(nn.Module):  # attention-is-all-you-need-pytorch: tokens, their mask, the encoder's output, its mask
    def __init__(self, n_vocab=60, d_model=16):
        super().__init__()
        self.emb = nn.Embedding(n_vocab, d_model)
        self.attn = nn.MultiheadAttention(d_model, 2, batch_first=True)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, trg_seq, trg_mask, enc_output, src_mask):
        q = self.emb(trg_seq) * trg_mask.unsqueeze(-1)
        a, _ = self.attn(q, enc_output, enc_output)
        return self.out(a) * src_mask.mean()
'''


def _build(root: Path, name: str) -> dict:
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    cand = next(c for c in discover(root) if c.name == name)
    return build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(root), 30)


def test_a_language_model_gets_the_state_its_init_hidden_makes_and_is_proven(tmp_path):
    """awd-lstm-lm's ``RNNModel.forward(input, hidden)``: the state was drawn like the tokens and every input failed
    ("For batched 3-D input, hx and cx should also be 3-D but got (0-D, 0-D) tensors"). The state is now what the
    model's own ``init_hidden(bsz)`` makes for the tokens' batch (sequence first: the second axis), a list of
    (h, c) per layer, written as a nested input spec both sides draw alike; proven on both sides."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path
    from mindport.validators.parity.loading import parse_input_spec

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "model.py").write_text(LM)
    state = "[(1x16x12:float32, 1x16x12:float32), (1x16x8:float32, 1x16x8:float32)]"
    assert str(parse_input_spec(state)) == state  # items split outside brackets only
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="model.py:RNNModel", cache=False)
    assert [m["status"] for m in models] == ["proven"], models
    assert models[0]["inputs"] == ["2x16:int64:0:50", state], models[0]


def test_a_recurrent_state_without_an_init_method_takes_the_layers_sizes(tmp_path):
    """No ``init_hidden``: the state is the first recurrent layer's (``num_layers x batch x hidden``, batch first
    here: the tokens' first axis)."""
    (tmp_path / "models.py").write_text(OTHERS)
    result = _build(tmp_path, "CharGRU")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:int64:0:30", "2x2x16:float32"], result


def test_tokens_first_for_a_recurrent_layer_fed_by_an_embedding(tmp_path):
    """IBM/pytorch-seq2seq's DecoderRNN registers its rnn before its embedding: the first input was the rnn's
    floats, which the embedding refuses ("Expected tensor for argument #1 'indices' to have one of the following
    scalar types: Long, Int"). An embedding whose width is the recurrent layer's input size feeds it: tokens."""
    (tmp_path / "models.py").write_text(OTHERS)
    result = _build(tmp_path, "DecoderRNN")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:int64:0:40"], result


def test_an_encoder_output_beside_tokens_is_floats_of_the_embedding_width(tmp_path):
    """attention-is-all-you-need's ``Decoder.forward(trg_seq, trg_mask, enc_output, src_mask)``: ``enc_output`` was
    drawn like the tokens ("expected m1 and m2 to have the same dtype, but got: long int != float"). An argument named
    like an encoder's output beside integer tokens is now ``batch x length x embedding width`` floats."""
    (tmp_path / "models.py").write_text(OTHERS)
    result = _build(tmp_path, "Decoder")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:int64:0:60", "2x16:float32:1:1", "2x16x16:float32", "2x16:float32:1:1"], result


DIFFUSION = '''
import numpy as np
import torch


class Linear(torch.nn.Module):  # NVlabs/edm's own layers: no torch layer of a known kind
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features) / np.sqrt(in_features))

    def forward(self, x):
        return x @ self.weight.t()


class Conv2d(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(out_channels, in_channels, kernel, kernel) / kernel)

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.weight, padding=self.weight.shape[-1] // 2)


class UNetBlock(torch.nn.Module):
    def __init__(self, in_channels, out_channels, emb_channels=12):
        super().__init__()
        self.emb_channels = emb_channels
        self.conv0 = Conv2d(in_channels, out_channels, 3)
        self.affine = Linear(emb_channels, out_channels)

    def forward(self, x, emb):
        return torch.nn.functional.silu(self.conv0(x) + self.affine(emb).unsqueeze(2).unsqueeze(3))


class NoiseEmbedding(torch.nn.Module):  # edm's PositionalEmbedding in its UNets: x.ger(freqs.to(x.dtype))
    def __init__(self, num_channels=8):
        super().__init__()
        self.num_channels = num_channels
        self.map = Linear(num_channels, num_channels)

    def forward(self, x, noise_labels):
        freqs = torch.arange(self.num_channels // 2, dtype=torch.float32) / self.num_channels
        emb = noise_labels.ger(freqs.to(noise_labels.dtype))
        emb = torch.cat([emb.cos(), emb.sin()], dim=1)
        return x * self.map(emb).unsqueeze(2).unsqueeze(3).mean()
'''


def test_an_embedding_argument_takes_the_width_the_model_keeps_under_its_name(tmp_path):
    """NVlabs/edm's ``UNetBlock.forward(x, emb)`` (own Linear/Conv2d classes): ``emb`` was drawn like ``x`` and every
    form failed ("mat1 and mat2 shapes cannot be multiplied (1024x32 and 16x32)"). The model keeps
    ``self.emb_channels``: ``emb`` is now batch x that width."""
    (tmp_path / "networks.py").write_text(DIFFUSION)
    result = _build(tmp_path, "UNetBlock")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16x32x32:float32", "2x12:float32"], result


def test_a_noise_label_argument_is_a_float_per_sample(tmp_path):
    """edm's UNets: ``forward(x, noise_labels, class_labels)`` feeds ``noise_labels.ger(freqs)``: drawn like ``x``
    it failed ("outer: Expected 1-D argument self, but got 2-D"); integer steps fail the cos. Now floats, one per
    sample."""
    (tmp_path / "networks.py").write_text(DIFFUSION)
    result = _build(tmp_path, "NoiseEmbedding")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x16:float32", "2:float32:0.1:1"], result


def test_a_model_overriding_parameters_without_recurse_is_built(tmp_path):
    """torchdiffeq's EventFn overrides ``parameters(self)`` (no ``recurse``): the builder itself failed on it
    ("EventFn.parameters() got an unexpected keyword argument 'recurse'") while reading a layer's sizes; it reads the
    module's own parameters now."""
    (tmp_path / "events.py").write_text('''
import torch
import torch.nn as nn


class EventFn(nn.Module):
    def __init__(self):
        super().__init__()
        self.radius = nn.Parameter(torch.rand(6, 6))

    def parameters(self):
        return [self.radius]

    def forward(self, pos):
        return pos @ self.radius - 1.0
''')
    result = _build(tmp_path, "EventFn")
    assert result["status"] == "built", result
    assert result["inputs"] == ["2x6:float32"], result


def test_torchscript_helpers_calling_tensor_factories_compile_under_the_cuda_patch(tmp_path):
    """schnetpack's ``@torch.jit.script def scatter_add(...): torch.zeros(...)``: under the builder's CUDA-as-CPU patch
    (``cuda_cpu``) every model importing it failed to build ("module, class, method, function, traceback, frame, or
    code object was expected, got builtin_function_or_method"): TorchScript met our Python wrapper of
    ``torch.zeros``. The wrappers are registered as the aten ops they stand for. (In a process of its own: the patch
    stays for the life of the process.)"""
    import os
    import subprocess
    import sys

    script = tmp_path / "scatter.py"
    script.write_text('''
import torch
from mindport.discovery import cuda_cpu

cuda_cpu.install()


@torch.jit.script
def scatter_add(x: torch.Tensor, idx: torch.Tensor, dim_size: int) -> torch.Tensor:
    out = torch.zeros(dim_size, x.shape[1], dtype=x.dtype)
    return out.index_add(0, idx, x) + torch.arange(dim_size, dtype=x.dtype)[:, None]


print(scatter_add(torch.ones(4, 2), torch.tensor([0, 1, 1, 2]), 3).tolist())
print(torch.zeros(2, device="cuda").device)
''')
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["[[1.0, 1.0], [3.0, 3.0], [3.0, 3.0]]", "cpu"], proc.stdout
