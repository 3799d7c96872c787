"""Every way torch lets a caller spell an argument binds, converts and computes torch's values: the legacy
``unbiased`` flag beside ``correction`` (var/std and their ``_mean`` forms, methods and functions), and int lists given
as one argument, spread out, starred or by keyword (``x.new_zeros(2, 3)``, ``x.new_zeros(*x.shape)``,
``x.flip(0)``, ``x.squeeze(1, 3)``). Each form is converted with no diagnostic and run in both frameworks.

Also: every ``torch.Tensor`` method entry accepts every keyword torch's own schemas give that method, so a call
written with torch's keywords never falls back to MP102 or reaches MindSpore with a torch name."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from mindport.mappings import load_registry
from mindport.migrator import convert_source

# (expression over x (float32, shape (2, 3, 4)) and flag (a Python bool), torch's result as the reference)
FORMS = [
    # var/std: unbiased positional, by keyword, from a variable, as the only (bool) argument; correction; defaults
    "x.var(1, False, True)",
    "x.var(dim=-1, keepdim=True, unbiased=False)",
    "x.var(unbiased=flag)",
    "x.var(False)",
    "x.var()",
    "x.var(1, correction=0)",
    "x.std(1, True, True)",
    "x.std(dim=(0, 2), correction=2)",
    "x.std(unbiased=False)",
    "x.std(True)",
    "torch.var(x, 1, False)",
    "torch.std(x, dim=2, unbiased=flag, keepdim=True)",
    "torch.std_mean(x, 1, unbiased=False)",
    "torch.var_mean(x, dim=2, correction=2, keepdim=True)",
    "torch.var(x)",
    # int lists: spread out, one tuple, starred, starred after others, by keyword, one int
    "x.new_zeros(2, 3)",
    "x.new_zeros((2, 3))",
    "x.new_zeros(*x.shape)",
    "x.new_zeros(x.shape[0], 1, *x.shape[2:])",
    "x.new_ones(size=(2, 3), dtype=torch.float32)",
    "x.new_ones(4)",
    "x.new_empty(2, 3).shape",
    "x.flip(0)",
    "x.flip(0, 2)",
    "x.flip(dims=[1])",
    "x.tile(2, 1)",
    "x.tile((1, 2, 1, 1))",
    "x[:, :1].squeeze(1)",
    "x[:, :1, :1].squeeze(1, 2)",
    "x[:1, :1].squeeze(dim=(0, 1))",
    "x[:1].squeeze()",
    "x[:, :1].broadcast_to(3, 2, 5, 4)",
    "x[:, :1].broadcast_to(size=(2, 2, 4))",
    "(x > 0).count_nonzero(0, 2)",
    "(x > 0).count_nonzero(dim=1)",
    # torch keywords MindSpore lacks or spells otherwise
    "x.scatter(2, (x > 0).long()[:, :, :1], 1.5)",
    "x.scatter(2, (x > 0).long()[:, :, :1], value=1.5)",
    "x.scatter(2, (x > 0).long()[:, :, :1], x[:, :, :1] * 2, reduce='add')",
    "x.scatter(2, (x > 0).long()[:, :, :1], x[:, :, :1] * 2, reduce='multiply')",
    "x.sort(dim=1, stable=True)",
    "x.argsort(dim=2, descending=True, stable=True)",
    "x.gather(1, (x > 0).long(), sparse_grad=False)",
    "x[:, :1].expand(2, 3, 4, implicit=False)",
    "x.new_full((2, 3), 1.5, pin_memory=False)",
    "x.bernoulli(0.5).shape",
    "torch.linspace(0.0, 1.0, 5, dtype=x.dtype, device=x.device)",
    "torch.linspace(-1, 1, steps=x.shape[2], dtype=torch.int64)",
    "torch.gt(x, 0).nonzero()",
    "torch.gt(x, 0).nonzero(as_tuple=True)",
    "torch.nonzero(x[0, 0] > 0, as_tuple=True)",
    "torch.eq((x > 0).long(), 1).nonzero(as_tuple=True)[0]",
    "torch.gt(x[0, 0, 0], 100).nonzero(as_tuple=True)", "torch.gt(x[0, 0, 0], -100).nonzero(as_tuple=True)",
]


def _program(expression: str) -> str:
    return f"import torch\n\n\ndef run(x, flag):\n    return {expression}\n"


def _run(code: str, *args):
    namespace: dict = {}
    exec(compile(code, "<form>", "exec"), namespace)  # noqa: S102 - our own snippets
    return namespace["run"](*args)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)) and not hasattr(value, "shape"):
        return [leaf for item in value for leaf in _leaves(item)]
    if hasattr(value, "detach"):
        return [value.detach().numpy()]
    if hasattr(value, "asnumpy"):
        return [value.asnumpy()]
    return [np.asarray(value)]


@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("expression", FORMS)
def test_call_form_converts_and_matches_torch(expression, flag):
    import mindspore as ms
    import torch

    torch_code = _program(expression)
    result = convert_source(torch_code, "<form>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "unbiased" not in result.code  # MindSpore has no such keyword
    data = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    expected = _leaves(_run(torch_code, torch.tensor(data), flag))
    got = _leaves(_run(result.code, ms.Tensor(data), flag))
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        assert have.shape == want.shape, result.code
        if "new_empty" not in expression:
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=result.code)


# torch schema argument names that need no place in an entry's signature, and why
_NOT_KEYWORDS = {
    "from": "a Python keyword: torch takes it positionally only (the entries call it from_)",
}
# Entry -> torch keywords deliberately left unbound (a call using one stays torch and gets MP102), and why
_LEFT_OUT = {
    "torch.Tensor.max": {"other": "x.max(y) is torch.maximum: write it"},
    "torch.Tensor.min": {"other": "x.min(y) is torch.minimum: write it"},
    "torch.Tensor.view": {"dtype": "x.view(dtype) reinterprets bits: MindSpore has no such view",
                          "size": "the sizes are bound spread out (x.view(2, 3)); size= is torch's keyword form"},
    "torch.Tensor.tensor_split": {"indices": "the list form is passed positionally",
                                  "tensor_indices_or_sections": "the tensor form is passed positionally"},
    "torch.Tensor.hsplit": {"indices": "the list form is passed positionally"},
    "torch.Tensor.vsplit": {"indices": "the list form is passed positionally"},
    "torch.Tensor.dsplit": {"indices": "the list form is passed positionally"},
    "torch.Tensor.copy_": {"src": "bound as other (MindSpore's src): torch's keyword is src"},
}


def _torch_method_keywords(name: str) -> set[str] | None:
    """The argument names of every overload torch's schemas give ``Tensor.<name>`` (out= buffers aside); None for a
    method torch writes in Python (no schema)."""
    import torch

    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
               if s.arguments and s.arguments[0].name == "self" and str(s.arguments[0].type) == "Tensor"]
    if not schemas:
        return None
    names = set()
    for schema in schemas:
        for arg in schema.arguments[1:]:
            if arg.alias_info is not None and arg.alias_info.is_write:
                continue  # out= buffers
            names.add(arg.name)
    return names - set(_NOT_KEYWORDS)


def _method_entries():
    import torch

    seen = set()
    for entry in load_registry():
        if id(entry) in seen or entry.kind != "method" or not entry.supported or entry.signature is None:
            continue
        seen.add(id(entry))
        name = entry.torch.rsplit(".", 1)[1]
        if inspect.isfunction(getattr(torch.Tensor, name, None)):
            continue  # written in Python: its signature is checked below
        yield entry


def test_method_entries_bind_every_torch_keyword():
    checked, missing = 0, []
    for entry in _method_entries():
        keywords = _torch_method_keywords(entry.torch.rsplit(".", 1)[1])
        if keywords is None:
            continue
        checked += 1
        have = {p.name for p in entry.signature}
        left_out = set(_LEFT_OUT.get(entry.torch, {}))
        lacking = sorted(keywords - have - left_out)
        if lacking:
            missing.append(f"{entry.torch}: {lacking} (signature {[p.name for p in entry.signature]})")
    assert checked > 300
    assert not missing, "\n".join(missing)


def test_python_methods_bind_every_torch_keyword():
    import torch

    checked, missing = 0, []
    seen = set()
    for entry in load_registry():
        if id(entry) in seen or entry.kind != "method" or not entry.supported or entry.signature is None:
            continue
        seen.add(id(entry))
        method = getattr(torch.Tensor, entry.torch.rsplit(".", 1)[1], None)
        if not inspect.isfunction(method):
            continue
        checked += 1
        params = inspect.signature(method).parameters
        keywords = {n for n, p in params.items() if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        have = {p.name for p in entry.signature}
        lacking = sorted(keywords - have - set(_LEFT_OUT.get(entry.torch, {})))
        if lacking:
            missing.append(f"{entry.torch}: {lacking}")
    assert checked >= 5
    assert not missing, "\n".join(missing)
