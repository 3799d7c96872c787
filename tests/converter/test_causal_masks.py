"""Issue 30 (native ports): a softmax after a causal mask is MindSpore's own ``ops.softmax`` (native_facts.
UnmaskedFacts with native_facts.causal_buffers).

MindSpore 2.10's CPU softmax kernel gives the other rows wrong values where a row is all ``-inf``; the runtime's
``mp_F.softmax`` writes it out, and the converter keeps it wherever a ``-inf`` is written in the function. A causal
mask writes ``-inf`` but never a whole row: each query keeps its own key (the diagonal). On main, nanoGPT's and
minGPT's ``att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))`` and llama2.c's ``scores +
self.mask[:, :, :seqlen, :seqlen]`` kept the runtime softmax. Now a buffer registered once in ``__init__`` as
``torch.tril(torch.ones(n, n))`` (then ``.view(1, 1, n, n)``), ``torch.triu(torch.ones(n, n, dtype=bool),
diagonal=1)`` or ``torch.triu(torch.full(.., -inf), diagonal=1)``, read as its top-left square (``[:T, :T]``), is
known to keep the diagonal; the filled scores are followed, and a product or negation of them keeps the runtime
softmax (a product can make a row of -inf, a negation +inf).

Each positive is compared with torch in PyNative and GRAPH_MODE over sequence lengths up to the buffer's size; the
negatives (a row window other than the square, a negated fill, a product of the filled scores, a buffer the class
replaces) keep the runtime softmax and match torch in PyNative."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import math
    import torch
    from torch import nn
    import torch.nn.functional as F


    class Config:
        bias = True


    class NanoAttn(nn.Module):
        def __init__(self, n_embd=8, n_head=2, block_size=6, config=Config()):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=config.bias)
            self.n_head = n_head
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            y = att @ v
            return y.transpose(1, 2).contiguous().view(B, T, C)


    class LlamaAttn(nn.Module):
        def __init__(self, dim=8, max_seq_len=6):
            super().__init__()
            self.wq = nn.Linear(dim, dim)
            self.wk = nn.Linear(dim, dim)
            mask = torch.full((1, 1, max_seq_len, max_seq_len), float("-inf"))
            mask = torch.triu(mask, diagonal=1)
            self.register_buffer("mask", mask)

        def forward(self, x):
            seqlen = x.shape[1]
            q, k = self.wq(x)[:, None], self.wk(x)[:, None]
            scores = torch.matmul(q, k.transpose(2, 3)) / 4.0
            scores = scores + self.mask[:, :, :seqlen, :seqlen]
            return F.softmax(scores.float(), dim=-1).type_as(q)


    class UpperAttn(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("causal", torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1),
                                 persistent=False)

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            sim = q @ k.transpose(-1, -2)
            mask = self.causal[:n, :n]
            sim = sim.masked_fill(mask, -math.inf)
            return sim.softmax(dim=-1)


    class WhisperMask(nn.Module):
        def __init__(self, dim=8, n_ctx=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            mask = torch.empty(n_ctx, n_ctx).fill_(-math.inf).triu_(1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            qk = q @ k.transpose(-1, -2)
            qk = qk + self.mask[:n, :n]
            return F.softmax(qk, dim=-1)


    class Negated(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("bias", torch.tril(torch.ones(n, n)))

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.bias[:n, :n] == 0, float('-inf'))
            return F.softmax(-att, dim=-1)


    class Offset(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("bias", torch.tril(torch.ones(n, n)))

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.bias[2:2 + n, :n] == 0, float('-inf'))
            return F.softmax(att, dim=-1)


    class Product(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("bias", torch.tril(torch.ones(n, n)))

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.bias[:n, :n] == 0, float('-inf'))
            w = att @ torch.ones(n, n)
            return F.softmax(w, dim=-1)


    def reset_masks(model):
        model.other.tri.fill_(0.)
        model.other.low = torch.zeros(6, 6)


    class Written(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("tri", torch.tril(torch.ones(n, n)))

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.tri[:n, :n] == 0, float('-inf'))
            return F.softmax(att, dim=-1)


    class Assigned(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("low", torch.tril(torch.ones(n, n)))

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.low[:n, :n] == 0, float('-inf'))
            return F.softmax(att, dim=-1)


    class Rewritten(nn.Module):
        def __init__(self, dim=8, n=6):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.register_buffer("bias", torch.tril(torch.ones(n, n)))

        def reset(self, n):
            self.bias = torch.zeros(n, n)

        def forward(self, x):
            n = x.shape[1]
            q, k = self.qk(x).chunk(2, dim=-1)
            att = (q @ k.transpose(-1, -2)).masked_fill(self.bias[:n, :n] == 0, float('-inf'))
            return F.softmax(att, dim=-1)
""")

NATIVE = ("NanoAttn", "LlamaAttn", "UpperAttn", "WhisperMask")
RUNTIME = ("Negated", "Offset", "Product", "Rewritten", "Written", "Assigned")


def _class_code(code: str, name: str) -> str:
    return code.split(f"class {name}")[1].split("\nclass ")[0]


def test_causal_masks_give_native_softmax():
    code = convert_source(SOURCE).code
    for name in NATIVE:
        body = _class_code(code, name)
        assert "ops.softmax(" in body and "mp_F.softmax" not in body, body
    for name in RUNTIME:
        assert "mp_F.softmax(" in _class_code(code, name), _class_code(code, name)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_native_causal_softmax_matches_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(23)
    for length in (1, 4, 6):  # up to the buffer's size (6): the top-left square of the causal buffer
        x = (3 * rng.standard_normal((2, length, 8))).astype(np.float32)
        for name in NATIVE:
            assert_port_matches_in_mode(SOURCE, code, name, [x], tmp_path, f"{name}_{length}_{mode}", mode,
                                        rtol=1e-4, atol=1e-6)


def test_runtime_softmax_kept_forms_match_torch(tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(24).standard_normal((2, 4, 8)).astype(np.float32)
    for name in RUNTIME:
        assert_port_matches_in_mode(SOURCE, code, name, [x], tmp_path, f"{name}_kept", "pynative",
                                    rtol=1e-4, atol=1e-6)
