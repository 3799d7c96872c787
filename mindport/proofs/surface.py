"""The proof of torch's object surface (``mindport/mappings/data/surface/object_surface.toml``, :mod:`mindport.mappings.surface`).

* :func:`torch_members`: a mapped layer class's members beyond nn.Module's, enumerated from the installed torch on
  an instance built from the entry's example (constructor settings kept as attributes, parameters, buffers,
  sub-layers, the class's methods down to nn.Module, private ones such as ``_conv_forward`` included);
* :func:`classify`: each member on the converted layer (the entry's example converted by the real converter): the
  same name with torch's value, the entry's renamed path with torch's value, the data's ``derived`` expression
  giving torch's value (``1 - {layer}.keep_prob``), or missing;
* :func:`prove_layer_member`: a torch program that holds the layer and reads the member (``self.layer.<member>``,
  where the converter knows the class), converted and run, the value compared with torch's; and the same read
  through the run-time accessor (``mindport.runtime.adapt.layer_attribute``, for receivers of unknown class);
* ``python -m mindport.proofs.surface --write``: enumerates and classifies every layer entry and rewrites the layer
  tables of object_surface.toml (hand-written reasons kept).
"""
from __future__ import annotations

import re
import sys

import numpy as np

from mindport.mappings import Entry, load_registry
from mindport.mappings.surface import SURFACE_FILE, load_surface
from mindport.proofs.function import ProofError, _build_pair, _load, _to_numpy, torch_snippet

_STYLE = "keyword"


def layer_entries() -> list[Entry]:
    """Every layer entry of a torch.nn class (supported or not)."""
    seen, found = set(), []
    for entry in load_registry():
        if entry.kind == "layer" and entry.torch.startswith("torch.nn.") and id(entry) not in seen:
            seen.add(id(entry))
            found.append(entry)
    return found


def build_source(entry: Entry) -> str | None:
    """A torch snippet whose ``build()`` makes the entry's layer: the entry's example, or the surface data's
    ``[build]`` call for a layer whose example is a whole program (or that has none); None when neither builds it."""
    call = load_surface().builds.get(entry.torch)
    if call is not None:
        return f"import torch\n\n\ndef build():\n    return {call}\n"
    if entry.example is None or entry.example.program:
        return None
    return torch_snippet(entry, _STYLE)


def torch_layer(entry: Entry):
    """The torch layer the entry's example (or the ``[build]`` call) builds, None when there is none."""
    import warnings

    code = build_source(entry)
    if code is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated layers (NLLLoss2d) say so on every build
        layer = _load(code, "surface_torch").build()
    t_args, _ = _dry_run_inputs(entry)
    if t_args and _uninitialized(layer):
        import torch

        with torch.no_grad():
            layer(*t_args)  # a lazy layer's members as model code reads them: after its dry run
    return layer


def _uninitialized(layer) -> bool:
    """A torch lazy layer (nn.LazyLinear...) that has not seen an input."""
    from torch.nn.parameter import UninitializedTensorMixin

    return hasattr(layer, "parameters") and any(
        isinstance(p, UninitializedTensorMixin) for p in [*layer.parameters(), *layer.buffers()])


def _dry_run_inputs(entry: Entry) -> tuple[list, list]:
    """The example's inputs for both sides (a lazy layer's dry run): (torch tensors, MindSpore tensors)."""
    from mindport.proofs.function import make_input

    example = entry.example
    if example is None or example.program or not example.inputs:
        return [], []
    import mindspore as ms
    import torch

    rng = np.random.default_rng(0)
    arrays = [make_input(spec, rng) for spec in example.inputs.values()]
    return ([torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays],
            [ms.Tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])


def torch_members(entry: Entry) -> list[str]:
    """The public members of the entry's torch layer beyond nn.Module's (and the Module methods a layer
    overrides: ``forward``, ``extra_repr``, ``reset_parameters``), private methods of its own classes included;
    the class's members only when nothing builds an instance."""
    import importlib

    from torch import nn

    layer = torch_layer(entry)
    if layer is not None and not isinstance(layer, nn.Module):
        return []  # torch.nn.Buffer: a tensor marker, not a layer
    base_instance = set(vars(nn.Module()))
    base_class = set(dir(nn.Module))
    names = set()
    if layer is not None:
        names = {k for k in vars(layer) if not k.startswith("_") and k not in base_instance}
        names |= set(layer._parameters) | set(layer._buffers)
        names |= {k for k in layer._modules if k.isidentifier()}  # a container's items ("0") are indices
        cls = type(layer)
    else:
        module, _, leaf = entry.torch.rpartition(".")
        cls = getattr(importlib.import_module(module), leaf)
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
            return []
    for cls in cls.__mro__:
        if cls is nn.Module:
            break
        for key, value in vars(cls).items():
            if key.startswith("__") or (key.startswith("_") and not callable(value)):
                continue
            if key in base_class and key not in ("forward", "extra_repr", "reset_parameters"):
                continue
            names.add(key)
    return sorted(names)


def _ms_layer(entry: Entry):
    """(torch layer, converted MindSpore layer, converted source) with torch's weights moved over."""
    from mindport.migrator import convert_source

    code = build_source(entry)
    result = convert_source(code, f"<surface {entry.torch}>")
    if result.diagnostics:
        raise ProofError(f"{entry.torch}: the example's conversion is flagged")
    t_args, m_args = _dry_run_inputs(entry)
    t_layer, m_layer = _build_pair(_load(code, "surface_torch"), _load(result.code, "surface_ms"), False, t_args,
                                   m_args)
    return t_layer, m_layer


def _walk(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def values_equal(torch_value, ms_value) -> bool:
    """torch's value and MindSpore's, as model code would use them: tensors by shape and values, sequences item by
    item (a tuple and a list of the same items agree), numbers and strings by value, dtypes by name."""
    if isinstance(torch_value, np.ndarray) or isinstance(ms_value, np.ndarray):
        if not (isinstance(torch_value, np.ndarray) and isinstance(ms_value, np.ndarray)):
            return False
        return torch_value.shape == ms_value.shape and np.allclose(torch_value, ms_value, rtol=1e-5, atol=1e-6)
    if hasattr(torch_value, "detach") or hasattr(ms_value, "asnumpy"):
        if not (hasattr(torch_value, "detach") and hasattr(ms_value, "asnumpy")):
            return False
        a, b = _to_numpy(torch_value), _to_numpy(ms_value)
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(torch_value, (tuple, list)) or isinstance(ms_value, (tuple, list)):
        if not (isinstance(torch_value, (tuple, list)) and isinstance(ms_value, (tuple, list))):
            return False
        return len(torch_value) == len(ms_value) and all(map(values_equal, torch_value, ms_value))
    if isinstance(torch_value, bool) or isinstance(ms_value, bool):
        return torch_value is ms_value
    if isinstance(torch_value, (int, float)) and isinstance(ms_value, (int, float)):
        return bool(np.isclose(torch_value, ms_value, rtol=1e-6, atol=1e-9))
    if torch_value is None or ms_value is None or isinstance(torch_value, str):
        return torch_value == ms_value
    if type(torch_value).__module__.startswith("torch") and "dtype" in type(torch_value).__name__:
        return str(torch_value).rsplit(".", 1)[-1] == str(ms_value).rsplit(".", 1)[-1].lower()
    return False


def classify(entry: Entry) -> dict[str, str]:
    """member -> "same" | "renamed" | "missing" on the converted layer (values compared; a method counts as the
    same when the Cell has a method of that name and it is a container's list method)."""
    from mindport.mappings.surface import derive

    t_layer, m_layer = _ms_layer(entry)
    renamed = entry.layer_attributes()  # what the entry claims; checked here
    surface = load_surface().layer(entry.torch)
    derived = surface.derived if surface is not None else {}
    found = {}
    registry = load_registry()
    for name in torch_members(entry):
        t_value = getattr(t_layer, name, None)
        own = registry.lookup(f"{entry.torch}.{name}")
        if own is not None and own.supported:  # Embedding.from_pretrained: its own entry, proven as entries are
            found[name] = "entry"
            continue
        if surface is not None and name in surface.kept:  # recorded where the file uses it: read in a program
            try:
                prove_layer_member(entry, name)
                found[name] = "derived"
            except (ProofError, AttributeError):
                found[name] = "missing"
            continue
        if name in derived:  # a setting kept under another form: the data's expression gives torch's value
            try:
                found[name] = "derived" if _agree(t_value, derive(m_layer, derived[name])) else "missing"
            except AttributeError:
                found[name] = "missing"
            continue
        if callable(t_value) and not hasattr(t_value, "detach") and not hasattr(t_value, "forward"):
            same = name in _LIST_METHODS and callable(getattr(m_layer, name, None))
            found[name] = "same" if same else "missing"
            continue
        for kind, path in (("renamed", renamed.get(name)), ("same", name)):
            if path is None:
                continue
            try:
                m_value = _walk(m_layer, path)
            except AttributeError:
                continue
            if values_equal(t_value, m_value) or (hasattr(t_value, "forward") and hasattr(m_value, "construct")):
                found[name] = kind
                break
        else:
            found[name] = "missing"
    return found


# a container's methods its entry's example calls (ModuleDict's keys/values/update/clear: [methods], proven by a program)
_LIST_METHODS = {"append", "extend", "insert", "pop", "items", "keys", "values", "update", "clear"}


def _agree(t_value, m_value) -> bool:
    return values_equal(t_value, m_value) or (hasattr(t_value, "forward") and hasattr(m_value, "construct"))


def prove_layer_member(entry: Entry, name: str, graph: bool = False) -> None:
    """Read ``name`` of the entry's layer in a torch program (``self.layer.<name>`` in a model method, where the
    converter knows the class) and in its conversion, and through the run-time accessor on the converted layer;
    raise ProofError when a value differs from torch's. ``graph``: the read sits in ``forward`` and the converted
    Cell runs under GRAPH_MODE (a sub-layer cannot be a graph's output: those are proven in PyNative only). A kept
    setting (recorded on the Cell by the converter) is read as the example builds the layer and again passed a value
    other than torch's default (``inplace=True``), where one is plain (a bool, a number)."""
    build = build_source(entry).split("def build():\n", 1)[1].strip().removeprefix("return ")
    layer = load_surface().layer(entry.torch)
    _prove_read(entry, name, build, graph)
    other = _other_value(layer.kept[name]) if layer is not None and name in layer.kept else None
    if other is not None:
        from mindport.migrator import convert_source

        build = _with_argument(build, name, other, entry)
        if not convert_source(f"import torch\n\n\ndef build():\n    return {build}\n", "<kept>").diagnostics:
            _prove_read(entry, name, build, graph)  # (a value the layer's conversion flags is never reached)


def _other_value(default: str) -> str | None:
    """A value other than torch's default literal for a kept setting's proof (None: no plain one to try)."""
    import ast

    if default is None:  # a recorded setting: torch has no default; the entry's example passes one
        return None
    value = ast.literal_eval(default)
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int):
        return repr(value + 1)
    if isinstance(value, float):
        return repr(value / 2 if value else 0.5)
    return None


def _with_argument(build: str, name: str, value: str, entry: Entry) -> str:
    """The constructor call ``build`` with ``name=value`` (replacing the argument where it is given; the positional
    ones from it on are passed by keyword)."""
    import libcst as cst

    call = cst.parse_expression(build)
    positional = [p.name for p in entry.signature or () if p.kind == "positional"]
    args = []
    for i, a in enumerate(call.args):
        key = a.keyword.value if a.keyword is not None else positional[i] if i < len(positional) else None
        if key == name:
            continue
        args.append(a if a.keyword is not None or key is None else a.with_changes(
            keyword=cst.Name(key), equal=cst.AssignEqual()))
    arg = cst.Arg(cst.parse_expression(value), keyword=cst.Name(name))
    return cst.Module([]).code_for_node(call.with_changes(args=[*args, arg]))


def _prove_read(entry: Entry, name: str, build: str, graph: bool) -> None:
    import mindspore as ms

    from mindport.migrator import convert_source
    from mindport.runtime.adapt import layer_attribute

    program = (f"import torch\n\n\nclass Probe(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"        self.layer = {build}\n\n    def read(self):\n        return self.layer.{name}\n\n"
               f"    def forward(self, x):\n        return x, self.layer.{name}\n\n\n"
               f"def build():\n    return Probe()\n")
    result = convert_source(program, f"<surface {entry.torch}.{name}>")
    if result.diagnostics:
        raise ProofError(f"{entry.torch}.{name}: the read is flagged: {[d.format() for d in result.diagnostics]}")
    t_args, m_args = _dry_run_inputs(entry)  # a lazy layer's dry run
    t_model, m_model = _build_pair(_load(program, "surface_torch"), _load(result.code, "surface_ms", importable=graph),
                                   False, t_args, m_args, part=lambda model: model.layer)
    t_value = t_model.read()
    if graph:
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            m_value = m_model(ms.Tensor(np.zeros(1, np.float32)))[1]
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    else:
        m_value = m_model.read()
    if not _agree(t_value, m_value):
        raise ProofError(f"{entry.torch}.{name}: torch {t_value!r} != MindSpore {m_value!r}\n{result.code}")
    if not _agree(t_value, accessed := layer_attribute(m_model.layer, name)):
        raise ProofError(f"{entry.torch}.{name}: the run-time accessor gives {accessed!r}, torch {t_value!r}")


def prove_program(name: str) -> None:
    """Run one of the surface data's programs (``[programs.<name>]``) in torch and, converted by the real converter,
    on MindSpore; raise ProofError when an output differs (values, shapes, dtypes' names, plain data). A program
    with ``graph = true`` runs again with the MindSpore model's construct compiled (GRAPH_MODE)."""
    import torch

    from mindport.migrator import convert_source
    from mindport.proofs.function import make_input

    spec = load_surface().programs[name]
    source = spec["program"].strip("\n") + "\n"
    result = convert_source(source, f"<surface program {name}>")
    if result.diagnostics:
        raise ProofError(f"{name}: the conversion is flagged: {[d.format() for d in result.diagnostics]}\n{result.code}")
    import mindspore as ms

    graph = bool(spec.get("graph", False))  # the program's model runs again with construct compiled (GRAPH_MODE)
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE) if graph else (ms.PYNATIVE_MODE,):
        rng = np.random.default_rng(0)
        arrays = [make_input(s, rng) for s in spec.get("inputs", {}).values()]
        t_mod, m_mod = _load(source, "surface_torch"), _load(result.code, "surface_ms", importable=graph)
        t_args = [torch.tensor(a) for a in arrays]
        m_args = [ms.Tensor(a) for a in arrays]
        if hasattr(t_mod, "build"):
            torch.manual_seed(0)
            t_model, m_model = _build_pair(t_mod, m_mod, False)
            t_args.insert(0, t_model)
            m_args.insert(0, m_model)
        ms.set_context(mode=mode)
        try:
            t_out, m_out = t_mod.run(*t_args), m_mod.run(*m_args)
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        if not values_equal(_plain_data(t_out), _plain_data(m_out)):
            raise ProofError(f"{name} ({'GRAPH_MODE' if mode == ms.GRAPH_MODE else 'PyNative'}): torch {t_out!r}\n"
                             f"!= MindSpore {m_out!r}\n{result.code}")


def _plain_data(value):
    """Outputs as values_equal compares them: tensors as arrays (the float64/float32 of a cast compared by value)."""
    if isinstance(value, (tuple, list)):
        return [_plain_data(v) for v in value]
    if hasattr(value, "detach") or hasattr(value, "asnumpy"):
        return _to_numpy(value)
    return value


def graph_readable(entry: Entry, name: str) -> bool:
    """Can a graph return the member's value: not a sub-layer (a Cell is no graph output)?"""
    return not hasattr(getattr(torch_layer(entry), name, None), "forward")


def proven_members() -> list[tuple[Entry, str]]:
    """Every (layer entry, member) the data says converts (same name or renamed), attributes only (methods are
    proven by their own programs)."""
    surface = load_surface()
    found = []
    for entry in layer_entries():
        layer = surface.layer(entry.torch)
        if layer is None or not entry.supported or build_source(entry) is None:
            continue  # nothing builds the layer alone (FloatFunctional: its program example calls its members)
        names = [n for n in layer.same if n not in surface.methods and n not in _LIST_METHODS]
        names += [n for n in (*layer.paths(), *layer.derived) if n in torch_members(entry)]
        found.extend((entry, n) for n in sorted(set(names)))
    return found


def outcomes() -> dict[str, dict[str, str]]:
    """torch layer class -> {member: "proven" | "flagged" | "unsupported" | "unaccounted"}, every member of every
    torch.nn layer entry enumerated from the installed torch (a layer torch cannot build from the data: its one
    member "<build>" is unaccounted)."""
    surface = load_surface()
    found: dict[str, dict[str, str]] = {}
    for entry in layer_entries():
        try:
            names = torch_members(entry)
        except Exception as exc:  # noqa: BLE001 - reported as unaccounted, with the error
            found[entry.torch] = {f"<build: {type(exc).__name__}>": "unaccounted"}
            continue
        layer = surface.layer(entry.torch)
        ends = {}
        for name in names:
            outcome = layer.outcome(name) if layer is not None else None
            if outcome is None and name in surface.methods:
                outcome = surface.methods[name]
            if not entry.supported:
                ends[name] = "unsupported"
            elif outcome is None:
                ends[name] = "unaccounted"
            else:
                ends[name] = "proven" if outcome[0] == "converted" else outcome[0]
        found[entry.torch] = ends
    return found


def unaccounted() -> dict[str, list[str]]:
    """torch layer class -> its members the data does not account for."""
    return {layer: missing for layer, ends in outcomes().items()
            if (missing := [name for name, end in ends.items() if end == "unaccounted"])}


def _program_layers(text: str) -> set[str]:
    """The torch.nn classes a program builds or calls by name (``nn.Conv2d(``, ``nn.Linear.__init__``)."""
    return set(re.findall(r"\bnn\.([A-Z]\w*)\b", text))


def proven_by_program(entry: Entry, name: str, attributes: frozenset | None = None) -> bool:
    """Is a converted member of a layer proven by a generated differential program, not only by its data? An
    attribute read by :func:`prove_layer_member` (``attributes``: :func:`proven_members`); ``forward`` by the
    layer entry's own generated proof (its example calls the layer); a method by one of its [methods] proof programs
    where that program uses this layer class (``nn.Conv2d``); a member with its own supported entry
    (``Embedding.from_pretrained``) or a container method the entry's example program calls (``.append(``), by that
    entry's proof."""
    if attributes is None:
        attributes = frozenset((e.torch, n) for e, n in proven_members())
    if (entry.torch, name) in attributes:
        return True
    cls = entry.torch.rpartition(".")[2]
    if name == "forward":
        return entry.example is not None
    surface = load_surface()
    if any(cls in _program_layers(surface.programs[proof]["program"]) for proof in surface.method_proofs.get(name, ())):
        return True
    own = load_registry().lookup(f"{entry.torch}.{name}")
    if own is not None and own.supported and own.example is not None:
        return True
    return entry.example is not None and f".{name}(" in (entry.example.program or "")


def counts() -> dict[str, int]:
    """The coverage line's numbers: members, proven (converted, each with a generated differential test: see
    :func:`proven_by_program`), converted (the data says converted, no generated test proves it: counted apart,
    as converted-unproven), flagged, unsupported, unaccounted; layer members from the installed torch plus the
    Module/Parameter/Tensor members of the data (each converted one names its program: load_surface checks)."""
    total = {"members": 0, "proven": 0, "converted": 0, "flagged": 0, "unsupported": 0, "unaccounted": 0}
    attributes = frozenset((e.torch, n) for e, n in proven_members())
    entries = {e.torch: e for e in layer_entries()}
    for layer, ends in outcomes().items():
        for name, end in ends.items():
            total["members"] += 1
            if end == "proven" and not proven_by_program(entries[layer], name, attributes):
                end = "converted"
            total[end] += 1
    for member in load_surface().members:
        total["members"] += 1
        total["proven" if member.ends == "converted" else member.ends] += 1
    return total


# ---------------------------------------------------------------------------------------------- the generator

_GENERIC = "MindSpore's {cell} has no attribute of this name holding torch's value: keep what you passed to the layer"


def pynative_only() -> set[tuple[str, str]]:
    """(torch layer, member) pairs a static graph cannot read (the data's ``pynative_only``, with the reason)."""
    return {(layer.torch, name) for layer in load_surface().layers.values() for name in layer.pynative_only}


def _render_layer(entry: Entry, found: dict[str, str], old, methods: dict, cell: str) -> str:
    old_flagged = dict(old.flagged) if old is not None else {}
    pynative_only = {n: r for n, r in (old.pynative_only.items() if old is not None else ()) if found.get(n) in (
        "same", "renamed")}
    same = sorted(n for n, k in found.items() if k == "same" and n not in methods)
    shared = sorted(n for n, k in found.items() if n in methods)
    kept = {n: d for n, d in (old.kept.items() if old is not None else ()) if found.get(n) == "derived"}
    derived = {n: t for n, t in (old.derived.items() if old is not None else ())
               if found.get(n) == "derived" and n not in kept}
    flagged = {n: old_flagged.get(n) or _GENERIC.format(cell=cell)
               for n, k in sorted(found.items()) if k == "missing" and n not in methods}
    flagged.update({n: r for n, r in old_flagged.items() if n in methods and methods[n][0] == "converted"
                    and n in found})  # a shared method converted for other classes, not for this one
    flagged = dict(sorted(flagged.items()))
    lines = [f'[layer."{entry.torch}"]']
    if same:
        lines.append("same = [" + ", ".join(f'"{n}"' for n in same) + "]")
    if shared:
        lines.append("methods = [" + ", ".join(f'"{n}"' for n in shared) + "]")
    if flagged:
        lines.append("flagged = { " + ", ".join(f'{n} = "{r}"' for n, r in flagged.items()) + " }")
    if derived:
        lines.append("derived = { " + ", ".join(f'{n} = "{t}"' for n, t in derived.items()) + " }")
    recorded = [n for n, d in kept.items() if d is None]
    kept = {n: d for n, d in kept.items() if d is not None}
    if kept:
        lines.append("kept = { " + ", ".join(f'{n} = "{d}"' for n, d in kept.items()) + " }")
    if recorded:
        lines.append("recorded = [" + ", ".join(f'"{n}"' for n in recorded) + "]")
    none_when = dict(old.none_when) if old is not None else {}  # hand-written conditions, kept
    if none_when:
        lines.append("none_when = { " + ", ".join(f'{n} = "{c}"' for n, c in none_when.items()) + " }")
    if pynative_only:
        lines.append("pynative_only = { " + ", ".join(f'{n} = "{r}"' for n, r in pynative_only.items()) + " }")
    return "\n".join(lines) + "\n"


def write() -> int:
    """Rewrite the layer tables of object_surface.toml from the installed torch and the converted layers."""
    surface = load_surface()
    text = SURFACE_FILE.read_text(encoding="utf-8")
    head = text.split("\n# --- layers", 1)[0].rstrip("\n")
    blocks = []
    for entry in layer_entries():
        if not entry.supported:
            continue
        try:
            found = classify(entry)
        except Exception as exc:  # noqa: BLE001 - reported, the layer left out (its members stay unaccounted)
            print(f"{entry.torch}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
            continue
        old = surface.layer(entry.torch)
        cell = entry.target("nn").rsplit(".", 1)[-1]
        blocks.append(_render_layer(entry, found, old, surface.methods, cell))
    SURFACE_FILE.write_text(head + "\n\n# --- layers (python -m mindport.proofs.surface --write) ---\n\n"
                            + "\n".join(blocks), encoding="utf-8")
    load_surface.cache_clear()
    return len(blocks)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        print(f"{write()} layer classes written to {SURFACE_FILE}")
    else:
        print(counts())


def member_value_program(name: str) -> str:
    """The program proving torch.nn.Module's ``name`` read as a value (module_members.toml, ``bound``): a model
    whose method returns ``self.<name>`` (``f``) and ``self.fc.<name>`` (``g``), the table's ``use`` of them in
    ``run``. benchmarks/objsurf_sweep.py and tests/mappings/test_module_members.py run it in both frameworks."""
    import textwrap

    from mindport.mappings.surface import module_members

    use = module_members()[name]["use"]
    return textwrap.dedent(f"""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.bn = nn.BatchNorm1d(3)
                self.register_buffer("m", torch.ones(3))

            def forward(self, x):
                return self.bn(self.fc(x)) + self.m

            def member(self):
                return self.{name}

            def sub_member(self):
                return self.fc.{name}


        def build():
            return Net()


        def run(model, x):
            f, g = model.member(), model.sub_member()
        """) + f"    {use}\n"
