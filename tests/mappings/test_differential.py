"""Differential tests of every mapping entry beyond its one example (mindport/proofs/differential/): a bounded,
seeded sample of each entry's generated calls (argument sets, call forms, dtypes, shapes), converted by the real
converter and run in both frameworks. A silent difference (value, dtype, shape, number of outputs, in-place effect)
or a converter crash fails; a call the converter flags is the honest outcome for what has no equivalent, and a call
torch itself rejects is not a case. MindSpore-only exceptions are loud, not silent: the full sweep
(benchmarks/differential_sweep.py) counts them. Input variants an entry lists in ``sweep.known`` (a MindSpore
behaviour no mapping can change, with the reason) are left to the sweep, which counts them apart. Empty inputs are
cases like any other: MindSpore 2.10's reductions over an empty extent return uninitialised memory, and the entries
that reduce go through mindport's guard (mindport.runtime.math: sum, mean, ...; tests/mappings/test_empty_reductions.py),
so their empty cases are reproducible; an entry whose empty inputs still differ lists the variant in sweep.known.

The sample is drawn by hypothesis (derandomized: the same cases on every run)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindport.mappings import load_registry
from mindport.proofs.differential import SILENT_KINDS, cases, run_case

SAMPLE = 6  # cases per entry: about 4 minutes of CPU for the whole table

_REGISTRY = load_registry()
_ENTRIES, _SEEN = [], set()
for _entry in _REGISTRY:
    if id(_entry) not in _SEEN:
        _SEEN.add(id(_entry))
        if any(not c.known for c in cases(_entry, _REGISTRY)):
            _ENTRIES.append(pytest.param(_entry.torch, id=_entry.torch))


@pytest.mark.slow
@pytest.mark.parametrize("name", _ENTRIES)
def test_entry_differential_sample(name):
    entry = _REGISTRY.lookup(name)
    all_cases = [c for c in cases(entry, _REGISTRY) if not c.known]
    memo: dict = {}

    @settings(max_examples=SAMPLE, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(case=st.sampled_from(all_cases), seed=st.integers(0, 3))
    def check(case, seed):
        outcome = run_case(case, seed, memo)
        assert outcome.kind not in SILENT_KINDS, (
            f"{name} [{case.label} {case.variant} seed={seed}]: {outcome.kind}: {outcome.detail}\n"
            f"--- torch\n{case.torch_code}--- mindspore\n{outcome.ms_code}")

    check()
