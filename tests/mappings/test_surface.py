"""torch's object surface (mindport/mappings/data/surface/object_surface.toml, mindport/proofs/surface.py), proven
like the function entries:

* every member of every mapped torch.nn layer class, enumerated from the installed torch, is accounted for (the test
  fails when torch has a member the data does not list);
* the data is what the converted layers hold (a seeded sample of layers re-classified);
* each converted layer member read in a torch program and in its conversion (where the converter knows the class)
  and through the run-time accessor, values compared: a seeded sample in PyNative and a smaller one in GRAPH_MODE
  (every member in ``benchmarks/surface_sweep.py``);
* each Module / Parameter / Tensor member's program run in both frameworks.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from mindport.mappings.surface import load_surface
from mindport.proofs import surface as proofs

SAMPLE = 40  # PyNative reads per run (all ~400 in the sweep)
GRAPH_SAMPLE = 6  # GRAPH_MODE reads per run: a compile each


def _sample(items, size, seed):
    items = list(items)
    random.Random(seed).shuffle(items)
    return items[:size]


def test_every_member_of_every_mapped_layer_is_accounted_for():
    assert proofs.unaccounted() == {}
    counts = proofs.counts()
    assert counts["unaccounted"] == 0 and counts["members"] == sum(
        counts[k] for k in ("proven", "converted", "flagged", "unsupported", "unaccounted"))
    assert counts["proven"] > 500 and counts["unsupported"] > 0  # every class counted, the unsupported ones too


@pytest.mark.parametrize("torch_name", _sample(
    sorted(name for name, layer in load_surface().layers.items() if layer.same or layer.flagged), 6, 26))
def test_the_data_is_what_the_converted_layer_holds(torch_name):
    entry = next(e for e in proofs.layer_entries() if e.torch == torch_name)
    layer = load_surface().layer(torch_name)
    found = proofs.classify(entry)
    surface = load_surface()
    for name, kind in found.items():
        if name in surface.methods:
            continue
        want = "same" if name in layer.same else "missing" if name in layer.flagged \
            else "derived" if name in layer.derived \
            else "entry" if layer.outcome(name)[1].startswith("the table entry") else "renamed"
        assert kind == want, f"{torch_name}.{name}: the converted layer gives {kind}, the data says {want}"


_MEMBERS = proofs.proven_members()


@pytest.mark.parametrize("entry,name", _sample(_MEMBERS, SAMPLE, 26),
                         ids=lambda v: v.torch if hasattr(v, "torch") else v)
def test_a_layer_member_reads_as_in_torch(entry, name):
    proofs.prove_layer_member(entry, name)


@pytest.mark.parametrize("entry,name", [case for case in _sample(
    [(e, n) for e, n in _MEMBERS if (e.torch, n) not in proofs.pynative_only()], GRAPH_SAMPLE * 4, 26)
    if proofs.graph_readable(*case)][:GRAPH_SAMPLE], ids=lambda v: v.torch if hasattr(v, "torch") else v)
def test_a_layer_member_read_in_construct_compiles_and_reads_as_in_torch(entry, name):
    proofs.prove_layer_member(entry, name, graph=True)


_DERIVED = [(e, n) for e, n in _MEMBERS if n in load_surface().layer(e.torch).derived]


@pytest.mark.parametrize("entry,name", _DERIVED, ids=lambda v: v.torch if hasattr(v, "torch") else v)
def test_every_derived_setting_reads_as_in_torch(entry, name):
    """A setting MindSpore keeps under another form (Dropout2d.p = 1 - keep_prob): every one, not a sample."""
    proofs.prove_layer_member(entry, name)


@pytest.mark.parametrize("entry,name", [c for c in _DERIVED if (c[0].torch, c[1]) in (
    ("torch.nn.Dropout2d", "p"), ("torch.nn.Conv2d", "padding"))], ids=lambda v: v.torch if hasattr(v, "torch") else v)
def test_a_derived_setting_read_in_construct_compiles(entry, name):
    proofs.prove_layer_member(entry, name, graph=True)


@pytest.mark.parametrize("program", sorted(load_surface().programs))
def test_a_module_parameter_or_tensor_member_program(program):
    proofs.prove_program(program)


@pytest.mark.parametrize("method", ["update", "clear"])
def test_a_module_dict_changed_inside_a_graph_raises_mindports_error(method):
    """ModuleDict.update/clear are proven where model code calls them (__init__, the module_dict program); inside
    construct under GRAPH_MODE the members are compiled once: update ran once at compile time (silently) and clear
    failed with MindSpore's "Unsupported statement 'Delete'" on main; both raise mindport's error now."""
    import mindspore as ms
    from mindspore import Tensor, nn

    from mindport.runtime.containers import ModuleDict

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d = ModuleDict({"fc": nn.Dense(2, 2)})

        def construct(self, x):
            if method == "update":
                self.d.update({"act": nn.ReLU()})
            else:
                self.d.clear()
            return x * len(self.d)

    net = Net()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(RuntimeError, match=f"mindport: {method}\\(\\) changes the container's members"):
            net(Tensor(np.ones((1, 2), np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert list(net.d.keys()) == ["fc"]


def test_every_converted_member_names_its_program_and_every_program_proves_a_member():
    surface = load_surface()
    used = {m.proof for m in surface.members if m.ends == "converted"} | {p for proofs in surface.method_proofs.values() for p in proofs}
    assert used == set(surface.programs)
    assert all(m.how for m in surface.members)


def test_no_tensor_attribute_a_mindspore_tensor_lacks_is_left_on_one():
    """Issue 28: every public attribute of torch.Tensor read on a tensor converts to something the installed
    MindSpore Tensor has, or the read is flagged; none is left to fail when it runs."""
    import numpy as np
    import mindspore as ms
    import torch

    from mindport import convert_source

    ms_tensor = ms.Tensor(np.ones((2, 2), np.float32))
    left = []
    for name in dir(torch.Tensor):
        member = getattr(torch.Tensor, name)
        if name.startswith("_") or (callable(member) and type(member).__name__ not in ("getset_descriptor",
                                                                                        "property")):
            continue
        result = convert_source(f"import torch\n\n\ndef f(x: torch.Tensor):\n    return x.{name}\n", "f.py")
        if result.diagnostics or f"x.{name}" not in result.code.split("def f", 1)[1]:
            continue  # flagged, or converted
        try:
            present = hasattr(ms_tensor, name)
        except Exception:  # noqa: BLE001 - a property MindSpore has that refuses this tensor (H of a 1-D one)
            present = True
        if not present:
            left.append(name)
    assert left == []
