"""Issue 30 (native ports): a pad amount checked non-negative before the pad is MindSpore's own ``ops.pad``
(native_facts.NonNegativeFacts: ``_checked``, ``_unpacked_checked``).

MindSpore 2.10's ``ops.pad`` is wrong for a negative amount from its second call in a process on, so the converter
keeps the runtime pad (which crops by slicing) wherever an amount may be negative. On main, encodec's ``pad1d``
(``padding_left, padding_right = paddings`` then ``assert padding_left >= 0 and padding_right >= 0`` then
``F.pad(x, paddings, mode, value)``) and whisper's ``if padding > 0: audio = F.pad(audio, (0, padding))`` kept it.
Now a name bound once and checked by a top-level ``assert`` before the pad's statement, or by an enclosing ``if
n > 0:`` (the pad in its body), is non-negative, and so is a sequence unpacked into names all checked so. An assert
after the pad, a name rebound inside the guarded body and the else branch keep the runtime pad.

The converted functions are run against torch over amounts, modes, tuples and lists, several calls in one process
(the kernel's defect shows from the second call on)."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport.migrator import convert_source

SOURCE = textwrap.dedent('''
    import torch
    import torch.nn.functional as F


    def pad1d(x, paddings, mode='constant', value=0.):
        length = x.shape[-1]
        padding_left, padding_right = paddings
        assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
        if mode == 'reflect':
            return F.pad(x, paddings, mode, value)
        return F.pad(x, paddings, mode, value)


    def guarded(audio, padding):
        if padding > 0:
            audio = F.pad(audio, (0, padding))
        return audio


    def late_assert(x, p):
        y = F.pad(x, (p, 0))
        assert p >= 0
        return y


    def rebound(x, p):
        if p > 0:
            p = p - 5
            x = F.pad(x, (0, p))
        return x


    def else_branch(x, p):
        if p > 0:
            return x
        else:
            return F.pad(x, (0, p))
''')


def _function(code: str, name: str) -> str:
    return code.split(f"def {name}")[1].split("\ndef ")[0]


def _run(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<fixture>", "exec"), namespace)  # noqa: S102 - the fixture and its conversion
    return namespace


def test_checked_amounts_are_native_pads():
    code = convert_source(SOURCE).code
    for name in ("pad1d", "guarded"):
        body = _function(code, name)
        assert "ops.pad(" in body and "mp_F.pad" not in body, body
    for name in ("late_assert", "rebound", "else_branch"):
        assert "mp_F.pad(" in _function(code, name), _function(code, name)


def test_checked_pads_match_torch():
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    want, got = _run(SOURCE), _run(code)
    x = np.random.default_rng(23).standard_normal((2, 3, 7)).astype(np.float32)
    for paddings in ((0, 0), (2, 3), (1, 0), [3, 1], [0, 6]):
        for mode, value in (("constant", 0.0), ("constant", 1.5), ("reflect", 0.0)):
            w = want["pad1d"](torch.from_numpy(x), paddings, mode, value).numpy()
            g = got["pad1d"](ms.Tensor(x), paddings, mode, value).asnumpy()
            np.testing.assert_array_equal(g, w, err_msg=f"{paddings} {mode} {value}")
    for padding in (0, 3, -2, 1):
        w = want["guarded"](torch.from_numpy(x), padding).numpy()
        g = got["guarded"](ms.Tensor(x), padding).asnumpy()
        np.testing.assert_array_equal(g, w, err_msg=str(padding))
    for name, p in (("rebound", 2), ("rebound", 7), ("else_branch", -2), ("else_branch", -1)):
        w = want[name](torch.from_numpy(x), p).numpy()
        g = got[name](ms.Tensor(x), p).asnumpy()
        np.testing.assert_array_equal(g, w, err_msg=f"{name} {p}")
