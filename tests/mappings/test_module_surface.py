"""torch's Module / container / Parameter / nn.init surface as model code writes it (tests/mappings/module_surface.py
generates the forms): each family's forms are one source converted once by mindport, every form built and run on
both frameworks, compared with torch's at run time (values; statistics for random inits).

A form must pass unless KNOWN gives it another outcome with the reason; the test fails when an outcome changes either
way (a listed form that passes, or a pass that turns loud/silent/crash), so a fix updates this table. The members
torch has (enumerated from the installed torch) are each exercised by a form or listed in NOT_EXERCISED with where
they are covered instead.

The first run (before any fix) and the after figures: ``python -m tests.mappings.module_surface`` (see
/work/notes/idioms13.md)."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from tests.mappings.module_surface import FAMILIES, FORMS, INIT_CALLS, run_forms  # noqa: E402

# (regular expression over "family::form id", the outcome, why): the forms that do not pass, on purpose or open
KNOWN = [
    (r"module::state_dict keys$", "silent",
     "Cell.state_dict() keys name a MindSpore layer's members as MindSpore does (a LayerNorm's gamma/beta); torch "
     "checkpoints go through mindport.transfer_weights (open)"),
]

# nn.Module / container members torch has that no form here exercises, and where they are covered instead
NOT_EXERCISED = {
    # hooks: tests/converter/test_module_hooks.py enumerates and runs them
    "register_backward_hook": "hooks", "register_forward_hook": "hooks", "register_forward_pre_hook": "hooks",
    "register_full_backward_hook": "hooks", "register_full_backward_pre_hook": "hooks",
    "register_load_state_dict_post_hook": "hooks", "register_load_state_dict_pre_hook": "hooks",
    "register_state_dict_post_hook": "hooks", "register_state_dict_pre_hook": "hooks",
    # devices and casts: placement is global in MindSpore (DeviceTransform; test_layer_settings runs .double())
    "cpu": "device", "cuda": "device", "ipu": "device", "xpu": "device", "mtia": "device",
    "to_empty": "device", "share_memory": "device", "bfloat16": "cast (object_surface.toml: Module.double)",
    "double": "cast (object_surface.toml)", "half": "cast (object_surface.toml)", "type": "cast",
    "compile": "torch.compile: the table", "call_super_init": "a class flag", "dump_patches": "a class flag",
    "T_destination": "a type variable", "get_extra_state": "checkpoint protocol", "set_extra_state": "checkpoint "
    "protocol", "set_submodule": "rare; get_submodule is here", "get_buffer": "named_buffers is here",
    "register_module": "the same rule as add_module", "forward": "every form",
    "extra_repr": "what repr(module) prints: a form calls repr(self)",
    "clear": "ModuleDict/ParameterDict.clear: the runtime ModuleDict's", "copy": "ParameterDict.copy",
    "fromkeys": "ParameterDict.fromkeys", "get": "ParameterDict.get", "popitem": "ParameterDict.popitem",
    "setdefault": "ParameterDict.setdefault",
}


def _expected(key: str) -> tuple[str, str]:
    for pattern, status, why in KNOWN:
        if re.match(pattern, key):
            return status, why
    return "pass", ""


@pytest.mark.parametrize("family", FAMILIES)
def test_family(family):
    forms = [f for f in FORMS if f.family == family]
    run = run_forms(forms)
    wrong = []
    cases = 0
    for form in forms:
        outcome = run.outcomes[form.id]
        if outcome.status == "rejected":  # torch itself refuses the form: not a case
            continue
        cases += 1
        key = f"{family}::{form.id}"
        want, _ = _expected(key)
        if outcome.status != want:
            wrong.append(f"{key}: {outcome.status} (expected {want}): {outcome.detail}")
    assert cases >= len(forms) // 2, f"torch rejected most forms of {family}"
    assert not wrong, "\n".join(wrong)


def test_every_init_function_is_generated():
    import torch.nn.init as init

    inplace = {n for n in dir(init) if n.endswith("_") and not n.startswith("_") and callable(getattr(init, n))}
    assert inplace == set(INIT_CALLS), f"nn.init has {sorted(inplace - set(INIT_CALLS))}, the battery " \
        f"{sorted(set(INIT_CALLS) - inplace)}"


def test_every_module_and_container_member_is_accounted_for():
    import torch.nn as nn

    members = {n for n in dir(nn.Module) if not n.startswith("_")}
    for cls in (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict):
        members |= {n for n in vars(cls) if not n.startswith("_")}
    text = "\n".join(f.body + f.prelude for f in FORMS)
    used = {m for m in members if re.search(rf"\.{m}\b", text)}
    missing = sorted(members - used - set(NOT_EXERCISED))
    assert not missing, f"torch members neither exercised nor listed: {missing}"
    stale = sorted(set(NOT_EXERCISED) & used)
    assert not stale, f"NOT_EXERCISED lists members a form exercises: {stale}"
