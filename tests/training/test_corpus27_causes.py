"""Session corpus27/28 (issue 27): the open classes of /work/notes/closing_note_s25.md ("27") and of the corpus run
on main (/work/notes/corpus27.md). One test each, on real torch and real MindSpore, each failing without its fix; the
expected values (and refusals) are torch's, run here."""
from __future__ import annotations

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert

# torch's typed constructors of a tensor: ``torch.LongTensor(float_tensor)`` raises ("expected TensorOptions(dtype=
# long int ...)"), and so does ``LongTensor([float_tensor, ...])`` ("only integer tensors of a single element can be
# converted to an index"); the port cast both to int64 (silently truncating). Measured in torch over 7 constructors
# (Long, Int, Byte, Bool, Float, Double, Half) x 7 elements (float32/float64/int64/int32/bool/uint8 (1,) tensors and a
# 0-d float) as the data and as items of a list: a floating item is refused by every integer/bool constructor, every
# item is taken by the floating ones; a tensor as the data must have the constructor's dtype. The port refuses as torch
# does, except between two integer widths (cast: MindSpore may give int32 where torch has int64).
# The slice kept: Long/Bool/Float of each kind of item, as data and in a list, plus Python floats (truncated).
TYPED = '''
import torch


def direct(ctor, x):
    return getattr(torch, ctor)(x)


def listed(ctor, x):
    return getattr(torch, ctor)([x, x])


def floats():
    return torch.LongTensor([1.7, -1.7])
'''


def _outcome(call):
    try:
        value = call()
    except (TypeError, ValueError, RuntimeError):
        return "refused"
    return np.asarray(value.numpy() if hasattr(value, "numpy") and not hasattr(value, "asnumpy") else value.asnumpy())


def test_typed_constructors_refuse_another_kinds_tensor_as_torch_does():
    import mindspore as ms
    import torch

    code = _convert(TYPED)
    t_mod, m_mod = load_module(TYPED, "torch_typed"), load_module(code, "ms_typed")
    items = {"float32": (torch.tensor([1.5]), ms.Tensor([1.5])),
             "float64": (torch.tensor([2.0], dtype=torch.float64), ms.Tensor([2.0], ms.float64)),
             "int64": (torch.tensor([3]), ms.Tensor([3])),
             "bool": (torch.tensor([True]), ms.Tensor([True])),
             "0-d float": (torch.tensor(1.5), ms.Tensor(1.5))}
    refusals = 0
    for ctor in ("LongTensor", "BoolTensor", "FloatTensor"):
        for name, (t_item, m_item) in items.items():
            for form in ("direct", "listed"):
                expected = _outcome(lambda: getattr(t_mod, form)(ctor, t_item))
                got = _outcome(lambda: getattr(m_mod, form)(ctor, m_item))
                where = (ctor, name, form)
                if isinstance(expected, str):
                    refusals += 1
                    assert isinstance(got, str), (where, got)
                    continue
                assert not isinstance(got, str), where
                assert got.dtype == expected.dtype and got.shape == expected.shape, (where, got, expected)
                np.testing.assert_array_equal(got, expected, err_msg=str(where))
    assert refusals >= 10  # torch refuses a good share of the slice: the test measures both sides of the line
    np.testing.assert_array_equal(m_mod.floats().asnumpy(), t_mod.floats().numpy())


# A file's own ``class E(nn.Embedding)`` calling ``super().__init__(..., padding_idx=0)`` (trainfresh26's open
# class): the base is the adapter class of torch.nn.Embedding, whose entry's switch sends a padding_idx to
# mindport's PaddedEmbedding (the subclass is rebuilt over it): the padding row receives no gradient, as in torch.
# Found closed on main 6963d184 (this guards it): losses and the padding rows after 3 SGD steps vs torch.
OWN_EMBEDDING = '''
import torch
import torch.nn as nn


class E(nn.Embedding):
    def __init__(self, n, d):
        super().__init__(n, d, padding_idx=0)

    def forward(self, x):
        return super().forward(x) * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = E(6, 3)
        self.plain = nn.Embedding(6, 3, padding_idx=2)

    def forward(self, x):
        return (self.emb(x) * self.plain(x)).sum()


def train(net, x, steps=3):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    out = []
    for _ in range(steps):
        loss = net(x) ** 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out
'''


def test_a_files_own_embedding_subclass_keeps_its_padding_row_as_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(OWN_EMBEDDING)
    t_mod, m_mod = load_module(OWN_EMBEDDING, "torch_own_embedding"), load_module(code, "ms_own_embedding")
    torch.manual_seed(0)
    t_net, m_net = t_mod.Net(), m_mod.Net()
    assert not m_net.emb.embedding_table.asnumpy()[0].any()  # built with its padding row zero, as torch builds it
    transfer_weights({k: v.detach().clone() for k, v in t_net.state_dict().items()}, m_net)
    x = np.array([[0, 1, 2, 0, 5, 2]])
    expected, got = t_mod.train(t_net, torch.tensor(x)), m_mod.train(m_net, ms.Tensor(x))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    np.testing.assert_allclose(m_net.emb.embedding_table.asnumpy(), t_net.emb.weight.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(m_net.plain.embedding_table.asnumpy(), t_net.plain.weight.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


# --- the corpus harness ----------------------------------------------------------------------------------------
# bzapf/pinn_inverse_g (L-BFGS, strong Wolfe, closure losses printed): the port printed 75 losses, torch 76, and the
# entry failed `runs` before any noise control ran. Measured (/work/notes/corpus27.md): torch's own float64 control
# of the same script departs from torch's float32 losses by up to 2.8 (relative) over the first 75, the port by 0.3:
# the curve is chaotic and the count is a tolerance test's decision on it. The runner now runs the control for a
# deterministic single-curve entry whose count is off by at most one in 50, and judges the losses both printed
# against it; the nudge control crashed on a 0-d parameter (g), mended.

def test_a_loss_count_off_by_one_is_judged_on_the_common_losses_within_noise():
    import numpy as np

    from test_corpus_causes import _boot

    boot, run = _boot()
    entry = {"deterministic": True}
    t = [1.0 - 0.01 * i for i in range(76)]
    m = {"rc": 0}
    res = run.judge_losses(entry, [str(v) for v in t], [str(v) for v in t[:75]], 0)
    assert not res["runs"] and run.count_within_noise_candidate(entry, res, m)
    assert not run.count_within_noise_candidate(dict(entry, segments=2), res, m)  # curves would misalign
    assert not run.count_within_noise_candidate({}, res, m)                        # not deterministic: no control
    short = run.judge_losses(entry, [str(v) for v in t], [str(v) for v in t[:70]], 0)
    assert not run.count_within_noise_candidate(entry, short, m)                   # 6 of 76 missing: not a count flip
    prefix = run.judge_losses(entry, [str(v) for v in t[:75]], [str(v) for v in t[:75]], 0)
    assert prefix["runs"] and prefix["learns"] and prefix["tracks"]
    g = np.float32(7.0).reshape(())                                                # a 0-d parameter's array
    assert isinstance(boot.nudged(np.asarray(g), np.random.RandomState(0)), np.ndarray)
