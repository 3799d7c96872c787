"""A project class its file imports under another name (``from .decoder import Decoder as BasicDecoder`` then
``class Decoder(BasicDecoder)`` and ``super(Decoder, self).__init__(embeddings=embeddings, ...)``: the three decoders
of Image-Captioning, batch 23, not built: the pretrained table the base builds its Embedding's weight from was
guessed as a 1-D ramp, "'weight' must be 2-D"). The class: a base or a callee named by an import alias is the class
the import names, in the file it names (not a class of the alias's name, nor the subclass's own namesake), so the
use the base makes of a handed-on argument (a vocab x dim table) and its sizes, read in the subclass's own parameter
names, reach the subclass. Fixture of our own; the expected status comes from torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

BASE = '''
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, embed_dim, embeddings, fine_tune, vocab_size, dropout=0.5):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fc = nn.Linear(embed_dim, vocab_size)
        self.set_embeddings(embeddings, fine_tune)

    def set_embeddings(self, embeddings, fine_tune=True):
        if embeddings is None:
            self.embedding.weight.data.uniform_(-0.1, 0.1)
        else:
            self.embedding.weight = nn.Parameter(embeddings, requires_grad=fine_tune)
'''

SUB = '''
import torch
from torch import nn

from .decoder import Decoder as BasicDecoder


class Decoder(BasicDecoder):
    def __init__(self, dim, table, fine_tune, words, hidden):
        super(Decoder, self).__init__(embed_dim=dim, embeddings=table, fine_tune=fine_tune, vocab_size=words)
        self.proj = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, dim)

    def forward(self, tokens):
        e = torch.tanh(self.proj(self.embedding(tokens)))
        return self.fc(self.out(e).mean(dim=1))
'''


def test_a_base_imported_under_another_name_hands_its_table_use_on(tmp_path):
    from mindport.discovery.scan import discover

    files = {"caption/__init__.py": "", "caption/decoder.py": BASE, "caption/show.py": SUB}
    found = prove_files(tmp_path, files, "caption/show.py:*")
    entry = found["caption/show.py:Decoder"]
    assert entry["status"] == "proven", entry
    cand = {c.key: c for c in discover(tmp_path / "src")}["caption/show.py:Decoder"]
    table = next(p for p in cand.params if p.name == "table")
    # the base's Embedding(vocab_size, embed_dim) is, in the subclass's names, words x dim
    assert (table.use, table.attrs.get("shape")) == ("tensor", ["words", "dim"]), table
