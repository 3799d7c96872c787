"""A packed sequence's fields read in a model's methods (``packed.data`` fed to a Linear, ``batch_sizes``/
``sorted_indices``/``unsorted_indices`` handed to a new ``PackedSequence(...)``) compile in GRAPH_MODE and give
torch's values (sgrvinod's HAN and its word attention, batch 13: "'Tuple' object has no attribute 'data'"). In a
graph the packed batch is the tuple of torch's four fields; ``data`` has torch's rows (sum(lengths), a dynamic
shape). Expected values are torch's; each case runs in PyNative and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

# pack -> GRU -> .data through a Linear -> re-packed with the GRU output's fields -> pad (batch_first, unsorted
# lengths); the packed data itself, a reduction over it (torch's max over the valid rows only) and the fields
UNSORTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 3, batch_first=True, bidirectional=True)
            self.score = nn.Linear(6, 1)

        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, h = self.rnn(packed)
            scores = torch.tanh(self.score(out.data)).squeeze(1)
            scores = torch.exp(scores - torch.max(scores))
            scores, n = pad_packed_sequence(PackedSequence(scores, batch_sizes=out.batch_sizes,
                                                           sorted_indices=out.sorted_indices,
                                                           unsorted_indices=out.unsorted_indices),
                                            batch_first=True)
            alphas = scores / torch.sum(scores, dim=1, keepdim=True)
            padded, _ = pad_packed_sequence(out, batch_first=True)
            return ((padded * alphas.unsqueeze(2)).sum(1), alphas, n, out.data, packed.data, packed.batch_sizes,
                    packed.sorted_indices, packed.unsorted_indices, h)
""")

# HAN's shape: documents packed as sentences, the sentences' .data (a batch of sum(lengths) rows) given to a
# word-level module that packs them again with the packed lengths' .data; the sentence vectors re-packed with the
# first packing's fields for a sentence-level LSTM (sorted_indices only: unsorted_indices computed)
NESTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


    class Words(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(2, 3, batch_first=True)
            self.score = nn.Linear(3, 1)

        def forward(self, sentences, lengths):
            packed = pack_padded_sequence(sentences, lengths.tolist(), batch_first=True, enforce_sorted=False)
            packed, _ = self.rnn(packed)
            att = torch.exp(self.score(packed.data).squeeze(1))
            att, _ = pad_packed_sequence(PackedSequence(att, packed.batch_sizes, packed.sorted_indices,
                                                        packed.unsorted_indices), batch_first=True)
            alphas = att / att.sum(1, keepdim=True)
            words, _ = pad_packed_sequence(packed, batch_first=True)
            return (words * alphas.unsqueeze(2)).sum(1), alphas


    class Documents(nn.Module):
        def __init__(self):
            super().__init__()
            self.words = Words()
            self.rnn = nn.LSTM(3, 2)

        def forward(self, documents, sentences_per_document, words_per_sentence):
            packed_sentences = pack_padded_sequence(documents, sentences_per_document.tolist(), batch_first=True,
                                                    enforce_sorted=False)
            packed_words = pack_padded_sequence(words_per_sentence, sentences_per_document, batch_first=True,
                                                enforce_sorted=False)
            sentences, word_alphas = self.words(packed_sentences.data, packed_words.data)
            out = self.rnn(PackedSequence(sentences, batch_sizes=packed_sentences.batch_sizes,
                                          sorted_indices=packed_sentences.sorted_indices))[0]
            padded, lengths = pad_packed_sequence(out, total_length=5)
            word_alphas, _ = pad_packed_sequence(PackedSequence(word_alphas, packed_sentences.batch_sizes,
                                                                packed_sentences.sorted_indices,
                                                                packed_sentences.unsorted_indices),
                                                 batch_first=True)
            return padded, lengths, word_alphas
""")

# time-major, lengths already sorted (enforce_sorted, no sorted_indices), an LSTM, .data through a Linear and back
SORTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 5)
            self.tags = nn.Linear(5, 3)

        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths)
            out, (h, c) = self.rnn(packed)
            tags = self.tags(out.data).log_softmax(-1)
            padded, n = pad_packed_sequence(PackedSequence(tags, out.batch_sizes), padding_value=-1.0)
            return padded, n, h, c
""")


def test_the_fields_are_read_by_position():
    code = convert_source(UNSORTED).code
    assert "self.score(out[0])" in code and "batch_sizes=out[1]" in code and "packed[3]" in code
    assert "mp_rnn.packed_sequence(scores, batch_sizes=out[1]" in code
    nested = convert_source(NESTED).code
    assert "self.words(packed_sentences[0], packed_words[0])" in nested


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_packed_data_through_a_linear_and_back_matches(tmp_path, mode):
    code = convert_source(UNSORTED).code
    x = np.random.default_rng(0).standard_normal((3, 5, 4)).astype(np.float32)
    lengths = np.array([3, 5, 2], np.int64)
    assert_port_matches_in_mode(UNSORTED, code, "Attention", [x, lengths], tmp_path, "packed_fields", mode,
                                atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_packed_data_of_packed_data_matches(tmp_path, mode):
    code = convert_source(NESTED).code
    rng = np.random.default_rng(1)
    documents = rng.standard_normal((3, 4, 5, 2)).astype(np.float32)
    sentences = np.array([4, 2, 3], np.int64)
    words = np.array([[5, 3, 2, 4], [4, 5, 0, 0], [1, 3, 5, 0]], np.int64)
    assert_port_matches_in_mode(NESTED, code, "Documents", [documents, sentences, words], tmp_path, "packed_nested",
                                mode, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sorted_time_major_packed_data_matches(tmp_path, mode):
    code = convert_source(SORTED).code
    x = np.random.default_rng(2).standard_normal((4, 3, 4)).astype(np.float32)
    lengths = np.array([4, 3, 1], np.int64)
    assert_port_matches_in_mode(SORTED, code, "Tagger", [x, lengths], tmp_path, "packed_sorted_tm", mode,
                                atol=1e-5)
