"""Ids where a layer of float weights takes an argument that was indexed before it (``encoder_out =
encoder_out[sort_ind]``, then ``self.init_hidden_state(encoder_out)``, a method applying a Linear): Image-Captioning's decoders, batch 23, whose image
features were drawn as ids beside the caption ids after the decoder's first layer (an Embedding); no layer is seen
taking the argument as given, so the retry of "mat1 and mat2 must have the same dtype, but got Long and Float" made
every argument after the first float (the captions too) and the features stayed ids. The class: with the refused
argument unknown, each integer argument alone is also tried as floats. Fixture of our own; the expected status comes
from torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

DECODER = '''
import torch
from torch import nn


class Captioner(nn.Module):
    def __init__(self, vocab_size, embed_dim, feat_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.init_h = nn.Linear(feat_dim, embed_dim)
        self.fc = nn.Linear(embed_dim, vocab_size)

    def forward(self, encoder_out, encoded_captions):
        order = torch.argsort(encoded_captions[:, 0], descending=True)
        encoder_out = encoder_out[order]
        encoded_captions = encoded_captions[order]
        e = self.embedding(encoded_captions)
        h = self.init_state(encoder_out)
        return self.fc(e + h.unsqueeze(1))

    def init_state(self, encoder_out):
        return torch.tanh(self.init_h(encoder_out))
'''


PAIRED = '''
import torch
from torch import nn


class PairedCaptioner(nn.Module):
    def __init__(self, vocab_size, embed_dim, feat_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.init_h = nn.Linear(feat_dim, embed_dim)
        self.fc = nn.Linear(embed_dim, vocab_size)

    def forward(self, encoder_out, encoded_captions):
        spatial, global_feature = encoder_out
        order = torch.argsort(encoded_captions[:, 0], descending=True)
        global_feature = global_feature[order]
        spatial = spatial[order]
        encoded_captions = encoded_captions[order]
        e = self.embedding(encoded_captions)
        h = self.init_state(global_feature + spatial)
        return self.fc(e + h.unsqueeze(1))

    def init_state(self, feature):
        return torch.tanh(self.init_h(feature))
'''


def test_features_indexed_before_their_linear_are_floats_beside_ids(tmp_path):
    found = prove_files(tmp_path, {"captioner.py": DECODER}, "captioner.py:*")
    entry = found["captioner.py:Captioner"]
    assert entry["status"] == "proven", entry
    first, second = entry["inputs"]
    assert ":float" in first and ":int" in second, entry["inputs"]


def test_a_list_of_features_beside_ids_is_floats_too(tmp_path):
    """adaptive_att's Decoder: ``spatial_feature, global_image = encoder_out``, a list of two feature tensors."""
    found = prove_files(tmp_path, {"paired.py": PAIRED}, "paired.py:*")
    entry = found["paired.py:PairedCaptioner"]
    assert entry["status"] == "proven", entry
    assert entry["inputs"][0].startswith("[") and ":int" not in entry["inputs"][0], entry["inputs"]
