"""The proof of the entries of torch-based packages (``example.proof = "package"``: timm.layers, torchvision.ops):
the generic proof (mindport/proofs/function.py: convert the torch snippet, run both frameworks, compare) in every call style,
against the package when it is installed and otherwise against the torch references in
``mindport/discovery/package_references/``
(written from the packages' documented behaviour). Also: the converter flags other symbols of such packages MP106
and leaves a project's own package of the same name alone."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from mindport import convert_source
from mindport.mappings import load_registry
from mindport.proofs.function import applicable_styles, prove

REFERENCES = Path(__file__).parents[2] / "mindport" / "discovery" / "package_references"
ENTRIES = sorted({id(e): e for e in load_registry() if e.example is not None and e.example.proof == "package"}
                 .values(), key=lambda e: e.torch)
CASES = [pytest.param(e, style, id=f"{e.torch}[{style}]") for e in ENTRIES for style in applicable_styles(e)]


@pytest.fixture
def packages(monkeypatch):
    """The real packages when importable, otherwise the references (removed from sys.modules afterwards)."""
    missing = [name for name in ("timm", "torchvision") if importlib.util.find_spec(name) is None]
    if missing:
        monkeypatch.syspath_prepend(str(REFERENCES))
    yield
    for name in list(sys.modules):
        if name.split(".")[0] in missing:
            del sys.modules[name]


def test_the_packages_pieces_have_proven_entries():
    assert {"timm.layers.DropPath", "timm.layers.Mlp", "timm.layers.trunc_normal_", "timm.layers.to_2tuple",
            "torchvision.ops.StochasticDepth"} <= {e.torch for e in ENTRIES}
    assert len(CASES) >= len(ENTRIES) + 2  # layers and functions with call arguments get every call style


@pytest.mark.parametrize(("entry", "style"), CASES)
def test_package_entry_matches_its_torch_reference(entry, style, packages):
    result = prove(entry, style)
    assert result.max_abs <= max(1e-3, entry.example.atol * 1e3)


def test_other_symbols_of_torch_based_packages_are_flagged_and_kept():
    source = ("import torch\nimport einx\nfrom timm.layers import DropPath, create_act_layer\n\n\n"
              "def block(x, p):\n    act = create_act_layer('gelu')\n    drop = DropPath(0.1)\n"
              "    return einx.add('b c, c', x, p), drop, act\n")
    result = convert_source(source)
    assert [(d.code, d.api) for d in result.diagnostics] == [("MP106", "timm.layers.create_act_layer"),
                                                            ("MP106", "einx.add")]
    timm, einx = result.diagnostics
    assert "timm is a torch-based package" in timm.message and "needs timm and torch at run time" in timm.message
    # einx is not built on torch (issue 28): it is backend-agnostic, and MindSpore is not one of its backends
    assert "einx is backend-agnostic (numpy, torch, jax ...) but has no MindSpore backend" in einx.message
    assert "torch" not in einx.message.split("backend")[-1]
    code = result.code
    assert "from timm.layers import create_act_layer\n" in code and "import einx\n" in code  # imports still needed
    assert "mp_ecosystem.DropPath(drop_prob=0.1)" in code


def test_a_project_of_the_same_name_is_its_own_code():
    source = "from timm.layers import Mlp, helper\n\n\ndef f():\n    return Mlp(4), helper()\n"
    result = convert_source(source, local_packages={"timm"})
    assert result.diagnostics == [] and result.code == source
