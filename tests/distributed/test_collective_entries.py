"""The torch.distributed entries (``example.proof = "distributed"``), proven in real processes: every example runs
in 2 workers under torchrun (gloo) and, converted, in 2 CPU workers under msrun; each rank's results must match
(mindport/proofs/distributed.py). One job for all entries: two launches, about a minute on 2 cores."""
from __future__ import annotations

import pytest

from mindport.mappings import load_registry
from mindport.proofs.distributed import EPILOGUE, PRELUDE, prove_entries

ENTRIES = sorted({id(e): e for e in load_registry() if e.example is not None and e.example.proof == "distributed"}
                 .values(), key=lambda e: e.torch)


_JOB: dict = {}  # one job per test process: a module-scoped fixture would launch it before the launcher lock is held


@pytest.fixture
def job_results(one_launcher_job_at_a_time, tmp_path_factory):
    if not _JOB:
        _JOB.update(prove_entries(ENTRIES, tmp_path_factory.mktemp("distributed-proof")))
    return _JOB


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.torch)
def test_entry_matches_torch_on_every_rank(entry, job_results):
    assert job_results[entry.torch] is None, job_results[entry.torch]


def test_the_job_starts_and_ends_the_process_group_through_the_converter():
    """init_process_group's and destroy_process_group's examples lean on the prelude and epilogue every job runs."""
    assert "dist.init_process_group(" in PRELUDE and "dist.destroy_process_group()" in EPILOGUE
    names = {e.torch for e in ENTRIES}
    assert {"torch.distributed.init_process_group", "torch.distributed.destroy_process_group"} <= names


def test_every_official_distributed_row_is_proven_or_says_why():
    from mindport.mappings.coverage import coverage

    assert not [n for n in coverage()["master"]["supported_not_proven"] if n.startswith("torch.distributed.")]
