"""Complex input, entry by entry: every mapping entry whose example torch also computes on complex64 (the example's
float tensors made complex, as the differential sweep's ``complex64`` variant makes them) is run on that input, in every call
form of its example, in both frameworks. Complex tensors are everyday data in modern model code (S4/Mamba scans, FNO spectral layers, STFT
audio models, rotary embeddings via torch.polar/view_as_complex), and MindSpore 2.10 refuses complex64 in many
kernels.

The coverage is data: an entry whose complex64 case MindSpore cannot compute says so in ``sweep.known.complex64``
(the reason: which kernel refuses it). This test fails
* when an entry without that mark gives anything but torch's result on complex64 (raises, or other values, dtypes,
  shapes): mark it with the reason, or make the mapping compute it (mindport.runtime.math.logcumsumexp);
* when a marked entry now computes torch's result: the mark is stale, remove it.
Entries whose example is already complex (the FFT family, ``real``/``imag``/``angle`` on ``torch.polar(r, t)``) are
proven on complex by their example and reject the complex64 variant (torch refuses a complex ``polar`` argument).

``benchmarks/differential_sweep.py --variant complex64 --label example/`` prints the same figures."""
from __future__ import annotations

import pytest

from mindport.mappings import load_registry
from mindport.proofs.differential import MISMATCH_KINDS, cases, run_case

_REGISTRY = load_registry()


def _complex_cases() -> dict[str, list]:
    """entry -> its example's complex64 cases (every call form: positional, keyword, method, in-place, out=)."""
    seen, out = set(), {}
    for entry in _REGISTRY:
        if id(entry) in seen:
            continue
        seen.add(id(entry))
        found = [c for c in cases(entry, _REGISTRY) if c.variant == "complex64" and c.label.startswith("example/")]
        if found:
            out[entry.torch] = found
    return out


_CASES = _complex_cases()


def test_complex_variant_is_generated_for_the_float_examples():
    # every entry whose example has a float tensor input gets complex64 cases (1251 in MindSpore 2.10's tables)
    assert len(_CASES) > 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_CASES))
def test_entry_on_complex64_matches_torch_or_is_marked(name):
    memo: dict = {}
    outcomes = [(case, run_case(case, seed=0, memo=memo)) for case in _CASES[name]]
    ran = [(case, o) for case, o in outcomes if o.kind != "rejected"]  # rejected: torch computes no complex64 here
    marked = _CASES[name][0].known
    if marked:
        assert not ran or any(o.kind in MISMATCH_KINDS for _, o in ran), (
            f"{name} is marked sweep.known.complex64 ({marked!r}) but every form now matches torch on complex64: "
            f"remove the mark")
        return
    for case, outcome in ran:
        assert outcome.kind in ("pass", "flagged"), (
            f"{name} [{case.label}] on complex64: {outcome.kind}: {outcome.detail}\n--- torch\n{case.torch_code}"
            f"--- mindspore\n{outcome.ms_code}\nmark it with sweep.known.complex64 = \"<why>\" or convert it")
