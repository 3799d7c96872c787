"""torch's int-to-float promotion for the floating-only functions (``torch.log(torch.arange(1, n + 1))`` in Mamba's
A_log init): torch computes them on an integer or bool tensor in float32; MindSpore 2.10's kernels refuse integers
("Select CPU operator[Log] fail! Unsupported data type"). Every mapping entry of the family (mindport.runtime.math.
INT_TO_FLOAT: the function, the Tensor method and their aliases) is converted by the real converter and run on
int64, int32 and bool inputs in both frameworks: values and dtypes must agree."""
from __future__ import annotations

import pytest

from mindport.mappings import load_registry
from mindport.proofs.differential import cases, run_case
from mindport.runtime.math import INT_TO_FLOAT

_REGISTRY = load_registry()
_FAMILY = {f"mindport.runtime.math.{name}" for name in INT_TO_FLOAT}
_ENTRIES = sorted({e.torch for e in _REGISTRY if e.target("nn") in _FAMILY})


def test_the_family_is_mapped_through_the_promoting_functions():
    names = {e.rsplit(".", 1)[-1] for e in _ENTRIES}
    assert set(INT_TO_FLOAT) <= names
    assert {"torch.log", "torch.Tensor.log", "torch.special.expit", "torch.nn.functional.tanh"} <= set(_ENTRIES)


@pytest.mark.parametrize("name", _ENTRIES)
def test_integer_and_bool_inputs_compute_in_float32(name):
    entry = _REGISTRY.lookup(name)
    chosen = {}
    for case in cases(entry, _REGISTRY):
        if case.label.startswith("example/") and case.variant in ("int64", "int32", "bool"):
            chosen.setdefault(case.variant, case)
    assert chosen, name  # an example drawn as integers (acosh's domain) sweeps int32 only
    for variant, case in chosen.items():
        outcome = run_case(case, 0, {})
        assert outcome.kind == "pass", f"{name} [{variant}]: {outcome.kind}: {outcome.detail}\n{outcome.ms_code}"
