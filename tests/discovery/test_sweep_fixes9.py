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
