"""Issue 30: joins whose members are integers by construction (native_facts.IntFacts) stay MindSpore's own join (no
``mp_tensor.promoted``): a generation loop's ``torch.cat((idx, idx_next), dim=1)`` (idx the model's token ids: the
class's forward gives them to an ``nn.Embedding``; idx_next from ``multinomial``/``topk``/``argmax``), ``arange`` of
sizes, ``.long()``, ``argmax``. Each is converted and run against torch (weights moved; dtype and values), and the
joins whose members may differ keep the helper and still match torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module, transfer_weights

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

GPT = HEAD + textwrap.dedent("""
    class GPT(nn.Module):
        def __init__(self, v=11, d=8, block_size=4):
            super().__init__()
            self.block_size = block_size
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(v, d), ln=nn.LayerNorm(d)))
            self.head = nn.Linear(d, v)

        def forward(self, idx):
            x = self.transformer.wte(idx)
            return self.head(self.transformer.ln(x)), None

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx


    class Llama(nn.Module):
        def __init__(self, v=13, d=8):
            super().__init__()
            self.tok_embeddings = nn.Embedding(v, d)
            self.output = nn.Linear(d, v)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            return self.output(h)

        @torch.no_grad()
        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                logits = self(idx[:, -3:])
                idx_next = logits[:, -1, :].argmax(dim=-1, keepdim=True)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx
""")


def _generate(cls, tmp_path, name, tokens, steps):
    import mindspore as ms
    import torch

    torch.manual_seed(0)
    code = convert_source(GPT).code
    torch_net = getattr(load_module(GPT, tmp_path / f"t_{name}.py", f"t_{name}"), cls)().eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_{name}.py", f"m_{name}"), cls)()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    want = torch_net.generate(torch.from_numpy(tokens), steps)
    got = ms_net.generate(ms.Tensor(tokens), steps)
    return code, want.numpy(), got.asnumpy()


@pytest.mark.parametrize("cls", ["GPT", "Llama"])
def test_generation_loop_join_is_native_and_matches_torch(cls, tmp_path):
    tokens = np.array([[1, 5, 2], [7, 3, 9]], dtype=np.int64)
    code, want, got = _generate(cls, tmp_path, cls.lower(), tokens, 5)
    body = code.split(f"class {cls}(")[1].split("\nclass ")[0]
    assert "ops.cat((idx, idx_next), axis=1)" in body and "promoted" not in body, body
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_int32_tokens_still_match_torch_or_fail_loudly(tmp_path):
    """Integer, not which width: int32 token ids joined with multinomial's int64 give int64 in torch; MindSpore's
    own join refuses the mix in PyNative (an error, never a silent value)."""
    tokens = np.array([[1, 5, 2]], dtype=np.int32)
    try:
        _, want, got = _generate("GPT", tmp_path, "gpt32", tokens, 2)
    except (TypeError, RuntimeError, ValueError):
        return
    np.testing.assert_array_equal(got, want)


FACTS = HEAD + textwrap.dedent("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 5)

        def forward(self, x, ids):
            scores = self.fc(x)
            pos = torch.arange(x.shape[1]).unsqueeze(0).expand(x.shape[0], -1)
            best = scores.argmax(dim=-1, keepdim=True)
            _, top = scores.topk(2, dim=-1)
            joined = torch.cat([pos, best, top, torch.argmin(scores, dim=-1, keepdim=True)], dim=1)
            longs = torch.stack([ids.long(), ids.long() * 2], dim=0)
            sized = torch.cat((torch.arange(len(x)), torch.randperm(3)), dim=0) * 0
            mixed = torch.cat([scores, ids], dim=1)   # float and (given) integer: torch promotes
            unknown = torch.cat([ids, best], dim=1)  # ids: nothing says integer
            return joined, longs, sized, mixed, unknown
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_integer_facts_vs_torch_and_negatives_promote(mode, tmp_path):
    code = convert_source(FACTS).code
    lines = {line.strip().split(" = ")[0]: line for line in code.splitlines() if " = " in line}
    for name in ("joined", "longs", "sized"):
        assert "promoted" not in lines[name], lines[name]
    for name in ("mixed", "unknown"):
        assert "mp_tensor.promoted" in lines[name], lines[name]
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    ids = np.array([[1], [4]], dtype=np.int32)
    assert_port_matches_in_mode(FACTS, code, "Net", [x, ids], tmp_path, "facts", mode, atol=1e-5)


def test_float_members_mixed_with_int_still_promote_like_torch(tmp_path):
    source = HEAD + textwrap.dedent("""
        class Net(nn.Module):
            def forward(self, x):
                return torch.cat([x.argmax(dim=-1, keepdim=True), x], dim=-1)
    """)
    code = convert_source(source).code
    assert "mp_tensor.promoted" in code, code
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "mix", "pynative")


def test_parameter_not_given_to_an_embedding_is_unknown():
    source = HEAD + textwrap.dedent("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)

            def forward(self, x):
                return self.fc(x)

            def generate(self, idx, n):
                for _ in range(n):
                    logits = self(idx)
                    idx = torch.cat((idx, logits.argmax(-1, keepdim=True)), dim=1)
                return idx

            def late(self, idx, n):
                for _ in range(n):
                    idx = torch.cat((idx, idx.argmax(-1, keepdim=True)), dim=1)
                    logits = self(idx)
                return idx
    """)
    code = convert_source(source).code
    assert code.count("mp_tensor.promoted") == 2, code


def test_tied_embedding_weights_keep_the_token_ids_fact():
    """nanoGPT/llama2.c tie the embedding's weight to the head's: the layer is still an Embedding (integers only); a
    member replaced (``self.transformer.wte = ...``) is not."""
    tied = GPT.replace("        self.head = nn.Linear(d, v)\n",
                       "        self.head = nn.Linear(d, v)\n        self.transformer.wte.weight = self.head.weight\n", 1)
    tied = tied.replace("        self.output = nn.Linear(d, v)\n",
                        "        self.output = nn.Linear(d, v)\n        self.tok_embeddings.weight = self.output.weight\n")
    assert tied.count(".weight = self.") == 2
    code = convert_source(tied).code
    assert code.count("ops.cat((idx, idx_next), axis=1)") == 2 and "promoted" not in code, code
    replaced = GPT.replace("        self.head = nn.Linear(d, v)\n",
                           "        self.head = nn.Linear(d, v)\n        self.transformer.wte = nn.Linear(d, d)\n", 1)
    body = convert_source(replaced).code.split("class GPT(")[1].split("\nclass ")[0]
    assert "promoted((idx, idx_next))" in body, body
