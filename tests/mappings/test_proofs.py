"""The generated parity suite: one test per (mapping entry, profile, call style), each converting a torch snippet
with the real converter and comparing torch and MindSpore on the same inputs. An entry without an example is not
proven (and `mindport mappings coverage` says so); there are no skips here.

The runtime layer (targets under ``mindport.runtime``) is also proven in a static graph: every such target's proof
runs again with the MindSpore side compiled by ``ms.jit`` (what ``GRAPH_MODE`` does to ``construct``). Compiling is
the cost (0.2-1 s a graph), so each target is proven once (its first entry, first call style) and the cases are
compiled in batches, one graph per batch. Entries whose target can't be compiled (``graph = "..."`` in the table)
are checked to raise mindport's own error there (tests/runtime/test_graph_mode.py)."""
from __future__ import annotations

import pytest

from mindport.mappings import load_registry
from mindport.proofs.function import applicable_styles, prepare, prove, prove_graph_batch

_SEEN: set[int] = set()
CASES = []
GRAPH_TARGETS: dict[str, tuple] = {}  # runtime target -> (entry, style): its graph-mode proof
for _entry in load_registry():
    if id(_entry) in _SEEN or not _entry.supported or _entry.example is None or _entry.example.proof:
        continue
    _SEEN.add(id(_entry))
    _profiles = ["nn"] + (["mint"] if "CPU" in _entry.runs.get("mint", ()) else [])
    for _profile in _profiles:
        if _entry.target(_profile) is None:
            continue
        for _style in applicable_styles(_entry):
            CASES.append(pytest.param(_entry, _profile, _style, id=f"{_entry.torch}[{_profile}-{_style}]"))
    _target = _entry.target("nn") or ""
    if _target.startswith("mindport.runtime.") and not _entry.graph:
        GRAPH_TARGETS.setdefault(_target, (_entry, applicable_styles(_entry)[0]))


@pytest.mark.parametrize(("entry", "profile", "style"), CASES)
def test_entry_matches_torch(entry, profile, style):
    result = prove(entry, style, profile=profile)
    assert result.max_abs <= max(1e-3, entry.example.atol * 1e3)  # prove() already applied the entry's tolerance


GRAPH_BATCH = 16  # cases per compiled graph: larger batches save little more and make a failing batch costlier


def _graph_batches():
    by_module: dict[str, list] = {}
    for target, (entry, style) in sorted(GRAPH_TARGETS.items()):
        by_module.setdefault(target.split(".")[2], []).append((target, entry, style))
    batches = []
    for module, items in by_module.items():
        for i in range(0, len(items), GRAPH_BATCH):
            chunk = items[i:i + GRAPH_BATCH]
            batches.append(pytest.param(chunk, id=f"{module}-{i // GRAPH_BATCH}"))
    return batches


@pytest.mark.slow
@pytest.mark.parametrize("batch", _graph_batches())
def test_runtime_targets_match_in_graph_mode(batch, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a failed compile writes rank_0/om/analyze_fail.ir into the working folder
    failures, cases, targets = [], [], []
    for target, entry, style in batch:
        try:
            cases.append(prepare(entry, style, importable=True))
            targets.append(target)
        except Exception as exc:  # noqa: BLE001 - reported below with the others
            failures.append(f"{target} ({entry.torch}, {style}): {type(exc).__name__}: {str(exc)[:800]}")
    for target, case, result in zip(targets, cases, prove_graph_batch(cases)):
        if isinstance(result, BaseException):
            failures.append(f"{target} ({case.entry.torch}, {case.style}): {type(result).__name__}: "
                            f"{str(result)[:800]}")
        else:
            assert result.max_abs <= max(1e-3, case.entry.example.atol * 1e3)
    assert not failures, f"{len(failures)} runtime target(s) fail in graph mode:\n" + "\n".join(failures)


def test_every_runtime_target_is_proven_in_graph_mode_or_flagged():
    """Each runtime target is in the graph suite above unless all of its entries say why it can't compile."""
    flagged = {e.target("nn") for e in load_registry() if e.graph}
    runtime = {e.target("nn") for e in load_registry() if (e.target("nn") or "").startswith("mindport.runtime.")
               and e.supported and e.example is not None and not e.example.proof}
    assert runtime - flagged <= set(GRAPH_TARGETS)
    assert len(GRAPH_TARGETS) > 300
