"""mindport.runtime.rnn against torch.nn.utils.rnn: padding sides, batch_first, sorted and unsorted batches,
total_length, integer sequences, and unpad_sequence's in-place transpose of the caller's tensor."""
from __future__ import annotations

import itertools

import mindspore as ms
import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as torch_rnn

from mindport.runtime import rnn as mp_rnn


def _ms(t):
    return ms.Tensor(t.detach().numpy())


def _same(t, m):
    assert tuple(t.shape) == tuple(m.shape)
    assert str(t.dtype).split(".")[-1] == str(m.dtype).lower(), (t.dtype, m.dtype)
    np.testing.assert_allclose(t.detach().numpy(), m.asnumpy(), rtol=0, atol=0)


def _sequences(lengths, dtype=torch.float32, feature=(3,)):
    gen = torch.Generator().manual_seed(sum(lengths))
    if dtype.is_floating_point:
        return [torch.randn((n,) + feature, generator=gen, dtype=dtype) for n in lengths]
    return [torch.randint(0, 9, (n,) + feature, generator=gen, dtype=dtype) for n in lengths]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
@pytest.mark.parametrize(("batch_first", "side"), list(itertools.product([False, True], ["right", "left"])))
def test_pad_sequence(dtype, batch_first, side):
    seqs = _sequences([4, 1, 3], dtype)
    for value in (0.0, -2.5, 7):
        expected = torch_rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=value, padding_side=side)
        _same(expected, mp_rnn.pad_sequence([_ms(s) for s in seqs], batch_first, value, side))


@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 4], [3]])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length", [None, 7])
def test_pack_and_pad_round_trip(lengths, batch_first, total_length):
    sorted_ = lengths == sorted(lengths, reverse=True)
    padded = torch_rnn.pad_sequence(_sequences(lengths, feature=(2,)), batch_first=batch_first)
    for as_tensor in (True, False):
        given = torch.tensor(lengths) if as_tensor else lengths
        t = torch_rnn.pack_padded_sequence(padded, given, batch_first=batch_first, enforce_sorted=sorted_)
        m = mp_rnn.pack_padded_sequence(_ms(padded), _ms(given) if as_tensor else given, batch_first, sorted_)
        _same(t.data, m.data)
        _same(t.batch_sizes, m.batch_sizes)
        assert (t.sorted_indices is None) == (m.sorted_indices is None)
        if t.sorted_indices is not None:
            _same(t.sorted_indices, m.sorted_indices)
            _same(t.unsorted_indices, m.unsorted_indices)
        t_out, t_len = torch_rnn.pad_packed_sequence(t, batch_first, -1.0, total_length)
        m_out, m_len = mp_rnn.pad_packed_sequence(m, batch_first, -1.0, total_length)
        _same(t_out, m_out)
        _same(t_len, m_len)


def test_pack_sequence_and_unpack_sequence_keep_the_order():
    for seqs, enforce in ((_sequences([4, 2, 1]), True), (_sequences([2, 4, 3], torch.int64), False)):
        t = torch_rnn.pack_sequence(seqs, enforce_sorted=enforce)
        m = mp_rnn.pack_sequence([_ms(s) for s in seqs], enforce_sorted=enforce)
        _same(t.data, m.data)
        _same(t.batch_sizes, m.batch_sizes)
        for a, b in zip(torch_rnn.unpack_sequence(t), mp_rnn.unpack_sequence(m), strict=True):
            _same(a, b)


def test_unsorted_lengths_with_enforce_sorted_raise_as_in_torch():
    padded = torch.zeros(3, 2)
    with pytest.raises(RuntimeError):
        torch_rnn.pack_padded_sequence(padded, [1, 3])
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        mp_rnn.pack_padded_sequence(_ms(padded), [1, 3])


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_and_its_in_place_transpose(batch_first):
    padded = torch.randn(3, 5, 2) if batch_first else torch.randn(5, 3, 2)
    mine = _ms(padded)
    lengths = torch.tensor([5, 2, 4])
    expected = torch_rnn.unpad_sequence(padded, lengths, batch_first=batch_first)
    got = mp_rnn.unpad_sequence(mine, _ms(lengths), batch_first=batch_first)
    for a, b in zip(expected, got, strict=True):
        _same(a, b)
    _same(padded, mine)  # torch leaves the caller's tensor transposed without batch_first


def test_invert_permutation_and_packed_sequence_defaults():
    perm = torch.tensor([3, 0, 2, 1])
    _same(torch_rnn.invert_permutation(perm), mp_rnn.invert_permutation(_ms(perm)))
    assert mp_rnn.invert_permutation(None) is None
    t = torch_rnn.PackedSequence(torch.arange(6.0), torch.tensor([3, 2, 1]), torch.tensor([1, 2, 0]))
    m = mp_rnn.PackedSequence(_ms(t.data), [3, 2, 1], _ms(t.sorted_indices))
    _same(t.unsorted_indices, m.unsorted_indices)
    _same(t.batch_sizes, m.batch_sizes)
    assert m.data is m[0] and len(m) == 4


def test_packed_sequence_casts_change_its_data_only():
    import mindport

    source = """
import torch
packed = torch.nn.utils.rnn.PackedSequence(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2, 1]))
wide = packed.double()
result = (wide.data, wide.batch_sizes)
"""
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)  # noqa: S102 - our own snippet
    converted = mindport.convert_source(source)
    assert not converted.diagnostics
    ms_ns: dict = {}
    exec(compile(converted.code, "<ms>", "exec"), ms_ns)  # noqa: S102 - the converter's output of our snippet
    for expected, got in zip(torch_ns["result"], ms_ns["result"], strict=True):
        _same(expected, got)
