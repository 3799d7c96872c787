"""einops on MindSpore, proven against einops on torch: the calls compiled at conversion time
(mindport/migrator/einops_patterns.py) and the run-time path (mindport/runtime/einops_backend.py: the functions and
the Rearrange/Reduce layers), on the same cases.

Each case is written into a module (the compiled source, or a call of the runtime function), run on a random input
whose shape satisfies the pattern, in PyNative and compiled as a static graph (``ms.jit``, one graph for all cases),
and compared with ``einops.<function>`` on the same input as a torch tensor: shape, dtype and values. The cases are a
hand-written list (grouping, ellipsis, unit axes, every reduction, repeat with new axes, lengths as keywords of
every kind, tensor expressions that must be evaluated once) and seeded random patterns."""
from __future__ import annotations

import importlib
import random
import sys

import einops
import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import nn

from mindport.migrator.einops_patterns import compile_einops

# (function, pattern, keywords as source, input shape, reduction, input dtype)
CASES = [
    ("rearrange", "b c h w -> b h w c", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "b (h w) c -> b c h w", {"h": "h"}, (2, 6, 4), None, "float32"),
    ("rearrange", "b c h w -> b (h w) c", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "b h n d -> b n (h d)", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "b n (h d) -> b h n d", {"h": "heads"}, (2, 3, 8), None, "float32"),
    ("rearrange", "b n (h d) -> (b h) n d", {"h": "self.heads"}, (2, 3, 8), None, "float32"),
    ("rearrange", "(b1 b2) h w c -> (b1 h) (b2 w) c", {"b1": "2"}, (4, 3, 5, 2), None, "float32"),
    ("rearrange", "b (h p1) (w p2) c -> b (h w) (p1 p2 c)", {"p1": "p", "p2": "p"}, (2, 4, 6, 3), None, "float32"),
    ("rearrange", "b (h w) -> b h w", {"h": "h", "w": "w"}, (2, 6), None, "float32"),
    ("rearrange", "b ... c -> c ... b", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "b ... c -> b (...) c", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "... (h d) -> ... h d", {"h": "2"}, (2, 3, 8), None, "float32"),
    ("rearrange", "... h w -> ... (h w)", {}, (2, 3, 4, 5), None, "float32"),
    ("rearrange", "b ... -> ... b", {}, (2, 3, 4), None, "float32"),
    ("rearrange", "b ... -> b ...", {}, (2, 3), None, "float32"),
    ("rearrange", "... -> (...)", {}, (2, 3, 4), None, "float32"),
    ("rearrange", "b 1 c -> b c", {}, (2, 1, 5), None, "float32"),
    ("rearrange", "b () c -> c b", {}, (2, 1, 5), None, "float32"),
    ("rearrange", "b c -> b 1 c ()", {}, (2, 5), None, "float32"),
    ("rearrange", "b (c 1) -> (1 b) c", {}, (2, 5), None, "float32"),
    ("rearrange", "b c -> c b", {}, (3, 4), None, "int32"),
    ("rearrange", "b n (qkv h d) -> qkv b h n d", {"qkv": "3", "h": "n_heads"}, (2, 4, 12), None, "float32"),
    ("rearrange", "b n (h d) -> b h n d", {"h": "len(xs)"}, (2, 3, 8), None, "float32"),
    ("rearrange", "b n (h d) -> b h n d", {"h": "int(heads)"}, (2, 3, 8), None, "float32"),
    ("reduce", "b c (h1 2) (w1 2) -> b c h1 w1", {}, (2, 3, 4, 6), "max", "float32"),
    ("reduce", "b c (h1 h2) (w1 w2) -> b c h1 w1", {"h2": "2", "w2": "3"}, (2, 3, 4, 6), "mean", "float32"),
    ("reduce", "b n c -> b 1 c", {}, (2, 3, 4), "mean", "float32"),
    ("reduce", "b n c -> b () c", {}, (2, 3, 4), "sum", "float32"),
    ("reduce", "b c h w -> b c", {}, (2, 3, 4, 5), "sum", "float32"),
    ("reduce", "b c h w -> b c", {}, (2, 3, 4, 5), "sum", "int32"),
    ("reduce", "b c -> ", {}, (2, 3), "max", "float32"),
    ("reduce", "b ... c -> b c", {}, (2, 3, 4, 5), "min", "float32"),
    ("reduce", "b ... c -> b ...", {}, (2, 3, 4, 5), "max", "float32"),
    ("reduce", "... c -> c", {}, (2, 3, 4), "mean", "float32"),
    ("reduce", "t b c -> b c", {}, (3, 2, 4), "prod", "float32"),
    ("reduce", "t b c -> b c", {}, (3, 2, 4), "prod", "int32"),
    ("reduce", "b (n k) c -> c n b", {"k": "2"}, (2, 6, 3), "mean", "float32"),
    ("reduce", "b h w -> h b", {}, (2, 3, 4), "any", "bool"),
    ("reduce", "b h w -> b", {}, (2, 3, 4), "all", "bool"),
    ("reduce", "b h w c -> b c h", {}, (2, 3, 4, 5), "max", "float32"),
    ("repeat", "b n c -> b k n c", {"k": "3"}, (2, 3, 4), None, "float32"),
    ("repeat", "h w -> (w r) h", {"r": "r"}, (3, 4), None, "float32"),
    ("repeat", "h w -> h (w 2)", {}, (3, 4), None, "float32"),
    ("repeat", "b c -> b c 3", {}, (2, 3), None, "float32"),
    ("repeat", "d -> b d", {"b": "n // 2"}, (5,), None, "float32"),
    ("repeat", "d -> b 1 d", {"b": "2"}, (5,), None, "int32"),
    ("repeat", "b ... c -> b ... k c", {"k": "2"}, (2, 3, 4, 5), None, "float32"),
    ("repeat", "b ... -> (b 2) ...", {}, (2, 3, 4), None, "float32"),
    ("repeat", "... -> k ...", {"k": "2"}, (3, 4), None, "float32"),
    ("repeat", "h w -> (r1 h) (w r2) c", {"r1": "2", "r2": "2", "c": "3"}, (2, 3), None, "float32"),
    ("repeat", "b (h w) -> b h w k", {"h": "2", "k": "2"}, (3, 4), None, "float32"),
]
# keyword sources read these names
ENV = {"h": 2, "w": 3, "heads": 4, "p": 2, "n_heads": 2, "n": 4, "r": 2, "xs": [1, 2, 3, 4],
       "self": type("Self", (), {"heads": 4})()}
# tensor expressions besides a plain name: evaluated once (a lambda binds them), a list display stacked first
TENSOR_FORM_CASES = [
    ("rearrange", "b n (h d) -> b h n d", {"h": "heads"}, (2, 3, 8), None, "float32", "x * 1"),
    ("rearrange", "b n (h d) -> b h n d", {"h": "heads"}, (2, 3, 8), None, "float32", "ops.abs(x)"),
    ("rearrange", "b (h d) -> b h d", {"h": "len(xs)"}, (2, 8), None, "float32", "ops.abs(x)"),
    ("reduce", "b c h w -> b c", {}, (2, 3, 4, 5), "mean", "float32", "ops.abs(x)"),
    ("reduce", "(t k) b c -> b c", {"k": "2"}, (4, 2, 3), "prod", "float32", "ops.abs(x)"),
    ("repeat", "b n -> b n k", {"k": "2"}, (2, 3), None, "float32", "ops.abs(x)"),
    ("rearrange", "s b c -> b s c", {}, (2, 3), None, "float32", "[x, x]"),
    ("reduce", "s b c -> b c", {}, (2, 3), "max", "float32", "[x, x * 2]"),
]

def _random_case(rng: random.Random):
    """A random rearrange/reduce/repeat over 2-5 named axes with random groupings, orders and known lengths."""
    function = rng.choice(FUNCTIONS_WEIGHTED)
    names = rng.sample("abcdefg", rng.randint(2, 5))
    lengths = {n: rng.randint(1, 3) for n in names}
    left = _random_groups(rng, rng.sample(names, len(names)))
    kept = list(names)
    reduction = None
    new: list[str] = []
    if function == "reduce":
        kept = [n for n in names if rng.random() < 0.6]
        reduction = rng.choice(["sum", "mean", "max", "min", "prod"])
    elif function == "repeat":
        new = rng.sample([c for c in "pqrs"], rng.randint(1, 2))
        lengths.update({c: rng.randint(2, 3) for c in new})
    right = _random_groups(rng, rng.sample(kept + new, len(kept + new)))
    keywords = {c: str(lengths[c]) for c in new}
    for group in left:  # a composite group needs all lengths but one; sometimes give all
        given = group if rng.random() < 0.3 else group[1:] if len(group) > 1 else []
        keywords.update({a: str(lengths[a]) for a in given})
    shape = tuple(int(np.prod([lengths[a] for a in g])) for g in left)
    pattern = f"{_side(left)} -> {_side(right)}"
    return function, pattern, keywords, shape, reduction, "float32"


FUNCTIONS_WEIGHTED = ["rearrange", "rearrange", "reduce", "repeat"]


def _random_groups(rng: random.Random, axes: list[str]) -> list[list[str]]:
    groups, i = [], 0
    while i < len(axes):
        size = rng.choice([1, 1, 2, 3])
        groups.append(axes[i:i + size])
        i += size
    return groups


def _side(groups: list[list[str]]) -> str:
    return " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)


_RNG = random.Random(19)
RANDOM_CASES = [_random_case(_RNG) for _ in range(60)]


def _input(shape, dtype, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "int32":
        return rng.integers(-3, 4, size=shape).astype(np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def _reference(function, pattern, keywords, reduction, x_np, tensor_form):
    env = dict(ENV)
    lengths = {k: eval(v, env) for k, v in keywords.items()}  # noqa: S307 - the test's own sources
    x = torch.tensor(x_np)
    tensor = eval(tensor_form, {"x": x, "ops": torch})  # noqa: S307 - "x * 1", "ops.abs(x)", "[x, x]"
    args = (reduction,) if function == "reduce" else ()
    return getattr(einops, function)(tensor, pattern, *args, **lengths).numpy()


def _compiled(function, pattern, keywords, reduction, tensor_form):
    code = compile_einops(function, pattern, keywords, tensor_form, "ops", reduction)
    assert code is not None, (function, pattern, keywords)
    return code


def _runtime_call(function, pattern, keywords, reduction, tensor_form):
    args = [tensor_form, repr(pattern), *([repr(reduction)] if reduction else []),
            *(f"{k}={v}" for k, v in keywords.items())]
    return f"mp_einops.{function}({', '.join(args)})"


def _module(cases, tmp_path, name, render):
    """A module with one function per case (``f0(x, h, ...)``) and ``batch`` calling them all."""
    lines = ["import mindspore as ms", "from mindspore import ops",
             "from mindport.runtime import einops_backend as mp_einops", ""]
    params_all, calls = [], []
    for i, (function, pattern, keywords, _, reduction, _, tensor_form) in enumerate(cases):
        code = render(function, pattern, keywords, reduction, tensor_form)
        lines += [f"def f{i}(x, h, w, heads, p, n_heads, n, r, xs, self):", f"    return {code}", ""]
        params_all.append(f"x{i}")
        calls.append(f"f{i}(x{i}, h, w, heads, p, n_heads, n, r, xs, self)")
    lines += [f"def batch({', '.join(params_all)}, h, w, heads, p, n_heads, n, r, xs, self):",
              f"    return ({', '.join(calls)},)", ""]
    (tmp_path / f"{name}.py").write_text("\n".join(lines), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def _run_all(cases, tmp_path, monkeypatch, name, render=_compiled):
    monkeypatch.chdir(tmp_path)  # a failed graph compile writes rank_0/ into the working folder
    rng = np.random.default_rng(0)
    inputs = [_input(c[3], c[5], rng) for c in cases]
    refs = [_reference(c[0], c[1], c[2], c[4], x, c[6]) for c, x in zip(cases, inputs)]
    module = _module(cases, tmp_path, name, render)
    env = [ENV[k] for k in ("h", "w", "heads", "p", "n_heads", "n", "r")]
    tail = [*env, tuple(ENV["xs"]), ENV["self"]]
    tensors = [ms.Tensor(x) for x in inputs]
    failures = []
    for mode in ("pynative", "graph"):
        if mode == "pynative":
            outs = [getattr(module, f"f{i}")(t, *tail) for i, t in enumerate(tensors)]
        else:
            try:
                outs = list(ms.jit(module.batch)(*tensors, *tail))
            except Exception:  # noqa: BLE001 - one graph per case, to name the failing ones
                outs = []
                for i, t in enumerate(tensors):
                    try:
                        outs.append(ms.jit(getattr(module, f"f{i}"))(t, *tail))
                    except Exception as exc:  # noqa: BLE001
                        outs.append(exc)
        for case, ref, out in zip(cases, refs, outs):
            what = f"{mode}: {case[0]}({case[6]}, {case[1]!r}, {case[4]!r}, {case[2]})"
            if isinstance(out, Exception):
                failures.append(f"{what}: {type(out).__name__}: {str(out)[:300]}")
                continue
            got = out.asnumpy()
            if got.shape != ref.shape or got.dtype != ref.dtype:
                failures.append(f"{what}: {got.shape} {got.dtype} vs einops {ref.shape} {ref.dtype}")
            elif not np.allclose(got, ref, rtol=1e-5, atol=1e-5):
                failures.append(f"{what}: values differ by {np.abs(got - ref).max()}")
    assert not failures, "\n".join(failures)


def test_patterns_match_einops_in_pynative_and_graph_mode(tmp_path, monkeypatch):
    _run_all([(*c, "x") for c in CASES] + TENSOR_FORM_CASES, tmp_path, monkeypatch, "einops_cases_fixed")


def test_random_patterns_match_einops_in_pynative_and_graph_mode(tmp_path, monkeypatch):
    _run_all([(*c, "x") for c in RANDOM_CASES], tmp_path, monkeypatch, "einops_cases_random")


def test_runtime_functions_match_einops_in_pynative_and_graph_mode(tmp_path, monkeypatch):
    cases = [(*c, "x") for c in CASES + RANDOM_CASES[:30]] + TENSOR_FORM_CASES
    _run_all(cases, tmp_path, monkeypatch, "einops_cases_runtime", render=_runtime_call)


class _AllLayers(nn.Cell):
    """Many layers in one Cell: one graph compiles them all."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.CellList(layers)

    def construct(self, xs):
        out = ()
        for layer, x in zip(self.layers, xs):
            out = out + (layer(x),)
        return out


def test_runtime_layers_match_einops_layers_in_pynative_and_graph_mode(tmp_path, monkeypatch):
    from einops.layers import torch as torch_layers

    from mindport.runtime.einops_layers import Rearrange, Reduce

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    layers, inputs, refs = [], [], []
    for function, pattern, keywords, shape, reduction, dtype in CASES + RANDOM_CASES:
        if function == "repeat" or reduction in ("any", "all"):
            continue  # einops has no Repeat layer; its torch layers reduce with sum/mean/max/min/prod only
        lengths = {k: eval(v, dict(ENV)) for k, v in keywords.items()}  # noqa: S307 - the test's own sources
        if any(not isinstance(v, int) for v in lengths.values()):
            continue
        args = (reduction,) if reduction else ()
        x = _input(shape, dtype, rng)
        refs.append((torch_layers.Reduce if reduction else torch_layers.Rearrange)(pattern, *args, **lengths)(
            torch.tensor(x)).numpy())
        layers.append((Reduce if reduction else Rearrange)(pattern, *args, **lengths))
        inputs.append(ms.Tensor(x))
    assert len(layers) > 60
    eager = [layer(x) for layer, x in zip(layers, inputs)]
    graph = ms.jit(_AllLayers(layers))(tuple(inputs))
    failures = []
    for mode, outs in (("pynative", eager), ("graph", graph)):
        for layer, got, ref in zip(layers, outs, refs):
            got = got.asnumpy()
            if got.shape != ref.shape or got.dtype != ref.dtype or not np.allclose(got, ref, rtol=1e-5, atol=1e-5):
                failures.append(f"{mode} {layer}: {got.shape} {got.dtype} vs {ref.shape} {ref.dtype}")
    assert not failures, "\n".join(failures)


def test_runtime_layers_check_their_pattern_when_built():
    from einops import EinopsError

    from mindport.runtime.einops_layers import Rearrange, Reduce

    with pytest.raises(EinopsError, match="Rearrange"):
        Rearrange("b c -> b d")
    with pytest.raises(EinopsError, match="Unknown reduction"):
        Reduce("b c -> b", "median")
    assert "'b c h w -> b (h w) c'" in repr(Rearrange("b c h w -> b (h w) c"))


def test_emitted_code_reads_like_the_pattern():
    assert compile_einops("rearrange", "b (h w) c -> b c h w", {"h": "h"}, "x") == \
        "ops.transpose(ops.reshape(x, (x.shape[0], h, x.shape[1] // h, x.shape[2])), (0, 3, 1, 2))"
    assert compile_einops("rearrange", "b c h w -> b h w c", {}, "self.proj(x)") == \
        "ops.transpose(self.proj(x), (0, 2, 3, 1))"  # used once: no binding needed
    assert compile_einops("rearrange", "b n (h d) -> b h n d", {"h": "self.heads"}, "self.to_q(x)", "mops") == (
        "(lambda t: mops.transpose(mops.reshape(t, (t.shape[0], t.shape[1], self.heads, t.shape[2] // self.heads)), "
        "(0, 2, 1, 3)))(self.to_q(x))")
    assert compile_einops("reduce", "b c h w -> b c", {}, "x", reduction="mean") == "ops.mean(x, (2, 3))"
    assert compile_einops("repeat", "b n c -> b k n c", {"k": "3"}, "x") == \
        "ops.broadcast_to(ops.expand_dims(x, 1), (-1, 3, -1, -1))"


@pytest.mark.parametrize(("function", "pattern", "keywords", "reduction"), [
    ("rearrange", "b c -> b d", {}, None),  # einops rejects: axes differ
    ("rearrange", "b (h w) -> b h w", {}, None),  # two unknown lengths
    ("rearrange", "b ((h) w) -> b h w", {"h": "2"}, None),  # nested parentheses
    ("rearrange", "(b ...) -> b", {}, None),  # ellipsis in parentheses on the left
    ("rearrange", "b c -> b 2 c", {}, None),  # a number in rearrange
    ("rearrange", "b c -> c b", {"d": "2"}, None),  # a keyword naming no axis
    ("rearrange", "b _c -> _c b", {}, None),  # not an einops axis name
    ("repeat", "b -> b k", {}, None),  # new axis without a length
    ("reduce", "b c -> b", {}, None),  # reduction not a string literal (a callable, a variable)
    ("reduce", "b c -> b", {}, "logsumexp"),  # not an einops reduction
    ("einsum", "b c -> b", {}, None),
    ("rearrange", "b c", {}, None),  # no arrow
])
def test_calls_it_does_not_compile_stay_on_the_runtime_path(function, pattern, keywords, reduction):
    assert compile_einops(function, pattern, keywords, "x", reduction=reduction) is None


def test_einops_einsum_runs_on_cpu():
    """``einops.einsum(delta, A, 'b l d_in, d_in n -> b l d_in n')`` (Mamba's selective scan): the backend called
    ops.einsum, which has no CPU kernel in MindSpore 2.10 ("Unsupported op [Einsum] on CPU"); it now contracts with
    torch.einsum's runtime function. Values and shapes match einops on torch."""
    import mindport.runtime.einops_backend  # noqa: F401  (registers the MindSpore backend)

    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5, 3), (3, 4), (2, 5, 4)))
    for pattern, arrays in (("b l d_in, d_in n -> b l d_in n", (a, b)),
                            ("b l d_in, b l n -> b d_in n", (a, c)),
                            ("b l d, d n, b l n -> b", (a, b, c))):
        want = einops.einsum(*(torch.from_numpy(x) for x in arrays), pattern).numpy()
        got = einops.einsum(*(ms.Tensor(x) for x in arrays), pattern).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
