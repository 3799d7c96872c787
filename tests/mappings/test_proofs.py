"""The generated parity suite: one test per (mapping entry, profile, call style), each converting a torch snippet
with the real converter and comparing torch and MindSpore on the same inputs. An entry without an example is not
proven (and `mindport mappings coverage` says so); there are no skips here."""
from __future__ import annotations

import pytest

from mindport.mappings import load_registry
from mindport.proofs import applicable_styles, prove

_SEEN: set[int] = set()
CASES = []
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


@pytest.mark.parametrize(("entry", "profile", "style"), CASES)
def test_entry_matches_torch(entry, profile, style):
    result = prove(entry, style, profile=profile)
    assert result.max_abs <= max(1e-3, entry.example.atol * 1e3)  # prove() already applied the entry's tolerance
