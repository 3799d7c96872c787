"""Every torch draw that takes ``generator=`` (enumerated from the installed torch: the signatures with a
``generator`` parameter), given a seeded ``torch.Generator``, which the converter makes a ``mindspore.Generator``:
the draw comes from that generator's own stream (as torch.rand/randn/randint/randperm already did) instead of a
torch call kept on a MindSpore generator (TypeError) or MP102. One test per family, on real torch and real
MindSpore: the MindSpore numbers are not torch's, so each side's shapes, dtypes, ranges and moments are compared
with torch's, and determinism on each side (two generators seeded alike draw the same values)."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from test_fresh_causes import _convert

HEADER = '''
import torch

N = 20000


def report(draw):
    a, b = draw(0), draw(0)
    for name, t in a.items():
        u = b[name].float() if t.dtype != torch.float32 else b[name]
        print("stat", name, "same", float(torch.equal(t, b[name])))
        print("stat", name, "numel", float(t.numel()))
        print("stat", name, "float32", float(t.dtype == torch.float32))
        print("stat", name, "int64", float(t.dtype == torch.int64))
        f = t.float()
        print("stat", name, "mean", float(f.mean()))
        print("stat", name, "std", float(f.std()))
        print("stat", name, "min", float(f.min()))
        print("stat", name, "max", float(f.max()))
'''

LIKE_FORMS = HEADER + '''

def draw(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.zeros(200, 100)
    return {"rand_like": torch.rand_like(x, generator=g), "randn_like": torch.randn_like(x, generator=g),
            "randint_like": torch.randint_like(x, 3, 10, generator=g)}


report(draw)
'''

DISTRIBUTIONS = HEADER + '''

def draw(seed):
    g = torch.Generator().manual_seed(seed)
    ones, twos, p = torch.ones(200, 100), torch.full((200, 100), 2.0), torch.full((200, 100), 0.3)
    w = torch.tensor([[1.0, 2.0, 3.0, 4.0]]).repeat(N // 2, 1)
    return {"normal_tensors": torch.normal(ones, twos, generator=g),
            "normal_floats": torch.normal(0.5, 2.0, size=(200, 100), generator=g),
            "bernoulli": torch.bernoulli(p, generator=g),
            "multinomial": torch.multinomial(w, 2, generator=g),
            "multinomial_first": torch.multinomial(w, 2, generator=g)[:, 0],
            "multinomial_replaced": torch.multinomial(w[0], N, replacement=True, generator=g),
            "poisson": torch.poisson(torch.full((200, 100), 3.0), generator=g),
            "rrelu": torch.rrelu(-ones, 0.1, 0.3, True, generator=g),
            "rrelu_": torch.rrelu_(-torch.ones(200, 100), 0.1, 0.3, True, generator=g)}


report(draw)
'''

TENSOR_METHODS = HEADER + '''

def draw(seed):
    g = torch.Generator().manual_seed(seed)
    p = torch.full((200, 100), 0.3)
    w = torch.tensor([[1.0, 2.0, 3.0, 4.0]]).repeat(N // 2, 1)
    return {"uniform_": torch.zeros(200, 100).uniform_(-2.0, 3.0, generator=g),
            "normal_": torch.zeros(200, 100).normal_(1.0, 2.0, generator=g),
            "random_": torch.zeros(200, 100).random_(0, 10, generator=g),
            "bernoulli_": torch.zeros(200, 100).bernoulli_(0.3, generator=g),
            "exponential_": torch.zeros(200, 100).exponential_(2.0, generator=g),
            "geometric_": torch.zeros(200, 100).geometric_(0.3, generator=g),
            "log_normal_": torch.zeros(200, 100).log_normal_(0.5, 0.25, generator=g),
            "cauchy_in_2": (torch.zeros(200, 100).cauchy_(0.0, 2.0, generator=g).abs() < 2.0).float(),
            "bernoulli": p.bernoulli(generator=g),
            "multinomial": w.multinomial(2, generator=g)}


report(draw)
'''


def _stats(code: str, name: str) -> dict[tuple[str, str], float]:
    from _harness import load_module

    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    stats = {}
    for line in out.getvalue().splitlines():
        if line.startswith("stat "):
            _, draw, stat, value = line.split()
            stats[draw, stat] = float(value)
    return stats


# how far apart two independent samples' statistics may be (N = 20000 draws: a mean's standard error is
# sigma / 141, so these are several standard errors for the largest sigma drawn here, geometric's 2.8)
TOLERANCE = {"mean": 0.12, "std": 0.15, "same": 0.0, "numel": 0.0, "float32": 0.0, "int64": 0.0}


@pytest.mark.parametrize("family, program", [("like", LIKE_FORMS), ("distributions", DISTRIBUTIONS),
                                             ("tensor_methods", TENSOR_METHODS)])
def test_draws_from_a_seeded_generator(family, program):
    code = _convert(program)
    assert "torch" not in code.replace("mindport", ""), code  # no torch call left on a MindSpore generator
    t, m = _stats(program, f"torch_gen_{family}"), _stats(code, f"ms_gen_{family}")
    assert t and t.keys() == m.keys(), (t, m)
    for (draw, stat), expected in t.items():
        got = m[draw, stat]
        if stat == "same":
            assert expected == got == 1.0, (draw, "not deterministic")
        elif stat in ("min", "max"):  # ranges: integers and bounded laws hit the same ends; unbounded ones are free
            if draw in ("rand_like", "randint_like", "bernoulli", "bernoulli_", "random_", "uniform_", "cauchy_in_2",
                        "multinomial", "multinomial_first", "multinomial_replaced"):
                assert got == pytest.approx(expected, abs=2e-3), (draw, stat, expected, got)
            elif stat == "min" and expected >= 0:  # non-negative laws stay non-negative
                assert got >= 0, (draw, stat, got)
        else:
            assert got == pytest.approx(expected, abs=TOLERANCE[stat]), (draw, stat, expected, got)


DATA = '''
import torch
from torch.utils.data import DataLoader, RandomSampler, SubsetRandomSampler, TensorDataset, WeightedRandomSampler
from torch.utils.data import random_split

ds = TensorDataset(torch.arange(40.0))


def draw(seed):
    g = torch.Generator().manual_seed(seed)
    a, b = random_split(ds, [30, 10], generator=g)
    return {"random_split": list(a.indices) + list(b.indices),
            "RandomSampler": list(RandomSampler(ds, generator=g)),
            "RandomSampler_replaced": list(RandomSampler(ds, replacement=True, num_samples=4000, generator=g)),
            "SubsetRandomSampler": list(SubsetRandomSampler(list(range(5, 25)), generator=g)),
            "WeightedRandomSampler": list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4000, generator=g)),
            "WeightedRandomSampler_distinct": list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 3, replacement=False,
                                                                         generator=g)),
            "DataLoader": [int(v) for (batch,) in DataLoader(ds, batch_size=8, shuffle=True, generator=g)
                           for v in batch.tolist()]}


a, b = draw(0), draw(0)
for name, got in a.items():
    print("stat", name, "same", float(got == b[name]))
    print("stat", name, "count", float(len(got)))
    print("stat", name, "distinct", float(len(set(got))))
    print("stat", name, "min", float(min(got)))
    print("stat", name, "max", float(max(got)))
    print("stat", name, "mean", sum(got) / len(got))
    print("stat", name, "moved", float(got != sorted(got)))
'''


def test_data_samplers_draw_from_a_seeded_generator():
    """random_split, RandomSampler, SubsetRandomSampler, WeightedRandomSampler and DataLoader(shuffle=True) with
    ``generator=g``: the runtime samplers dropped the generator and drew from mindport's global stream (so two
    generators seeded alike gave different splits and orders); they draw from its own stream now. Counts, ranges,
    coverage and means are torch's (the orders are not torch's numbers)."""
    code = _convert(DATA)
    assert "torch" not in code.replace("mindport", ""), code
    t, m = _stats(DATA, "torch_gen_data"), _stats(code, "ms_gen_data")
    assert t and t.keys() == m.keys(), (t, m)
    for (draw, stat), expected in t.items():
        got = m[draw, stat]
        if stat == "same":
            assert expected == got == 1.0, (draw, "not deterministic")
        elif stat == "mean" and "replaced" in draw or draw == "WeightedRandomSampler":
            assert got == pytest.approx(expected, abs=0.6 if "replaced" in draw else 0.08), (draw, stat, expected, got)
        elif draw == "WeightedRandomSampler_distinct" and stat in ("mean", "moved", "min", "max"):
            assert 0 <= got <= 3, (draw, stat, got)  # 3 of 4 categories: which, and in what order, is the draw's
        else:
            assert got == pytest.approx(expected, abs=1e-6), (draw, stat, expected, got)


INIT = HEADER + '''
from torch import nn


def draw(seed):
    g = torch.Generator().manual_seed(seed)
    big = nn.Linear(200, 100)
    out = {}
    for name, fill in [("uniform_", lambda w: nn.init.uniform_(w, -0.5, 0.5, generator=g)),
                       ("normal_", lambda w: nn.init.normal_(w, 0.0, 0.02, generator=g)),
                       ("trunc_normal_", lambda w: nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04, generator=g)),
                       ("xavier_uniform_", lambda w: nn.init.xavier_uniform_(w, generator=g)),
                       ("xavier_normal_", lambda w: nn.init.xavier_normal_(w, generator=g)),
                       ("kaiming_uniform_", lambda w: nn.init.kaiming_uniform_(w, a=0.0, generator=g)),
                       ("kaiming_normal_", lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu", generator=g)),
                       ("orthogonal_", lambda w: nn.init.orthogonal_(w, generator=g))]:
        fill(big.weight)
        out[name] = big.weight.detach().clone()
    nn.init.normal_(big.weight, 0.5, 0.1, generator=g)  # a direct call on a Parameter (the init rule's own form)
    out["direct_normal_"] = big.weight.detach().clone()
    return out


report(draw)
'''


def test_init_fills_draw_from_a_seeded_generator():
    """torch.nn.init.*_(..., generator=g): the init rule dropped the generator (MindSpore's initializers seed their
    draws from NumPy's global stream), so two generators seeded alike filled differently; the fills draw from the
    generator's own stream now. Shapes, dtypes, bounds and moments are torch's."""
    code = _convert(INIT)
    assert "torch" not in code.replace("mindport", ""), code
    t, m = _stats(INIT, "torch_gen_init"), _stats(code, "ms_gen_init")
    assert t and t.keys() == m.keys(), (t, m)
    for (draw, stat), expected in t.items():
        got = m[draw, stat]
        if stat == "same":
            assert expected == got == 1.0, (draw, "not deterministic")
        elif stat in ("min", "max"):
            if draw in ("uniform_", "trunc_normal_", "xavier_uniform_", "kaiming_uniform_"):  # bounded: the same ends
                assert got == pytest.approx(expected, rel=0.02, abs=1e-3), (draw, stat, expected, got)
        else:
            assert got == pytest.approx(expected, rel=0.05, abs=2e-3), (draw, stat, expected, got)
