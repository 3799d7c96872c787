"""torch's object surface as data (``data/surface/object_surface.toml``): what model code reads and calls on layers, Modules,
Parameters and Tensors beyond the functions the other tables map, and how each member ends.

Every member ends one of three ways:

* ``converted``: the MindSpore object has it under the same name with torch's value (a layer's ``same`` list), or
  under another name (the layer entry's ``attributes`` and weight rules, :meth:`Entry.layer_attributes`), or the
  converter rewrites it (a ``[[member]]``'s ``how``); where the receiver's class is known the converter writes the
  MindSpore name, elsewhere ``mindport.runtime.adapt.layer_attribute`` decides by the object's class at run time;
  a constructor setting MindSpore keeps under another form is ``derived``: an expression over the converted layer
  (``p = "1 - {layer}.keep_prob"`` of a Dropout2d; or a constant a torch class always holds, a Conv2d's
  ``transposed = "False"``), written in place of the read where the class is known and
  evaluated on the object by the run-time accessor elsewhere (:func:`derive`); a weight or buffer torch holds as
  None in some configurations has a ``none_when`` condition over the converted layer (a BatchNorm's ``running_mean``
  with track_running_stats=False: ``{layer}.use_batch_statistics is True``), decided when the read runs;
  a constructor setting the Cell does not keep at all (a ReLU's ``inplace``, a BatchNorm's ``affine``, a MaxPool2d's
  ``ceil_mode``) is ``kept``: its torch default is data (``inplace = "False"``); the converter records a value passed
  to the constructor as a plain attribute of the Cell under torch's name, right after the construction, where the
  file uses that name (``self.act = nn.ReLU()`` then ``self.act.inplace = True``), and a read is the derived
  ``getattr({layer}, 'inplace', False)``: the recorded value, else torch's default; a write (``m.inplace = True``)
  sets the plain attribute as written;
* ``flagged``: no MindSpore counterpart; the converter flags a use it can place, the run-time accessor raises with
  the reason;
* ``unsupported``: the member's layer has no supported entry (its entry says why).

The layer lists are enumerated from the installed torch and checked on the converted layer by
``python -m mindport.proofs.surface --write``; a layer member torch has and this data does not list is
"unaccounted" (``mindport mappings coverage``, ``tests/mappings/test_surface.py``).
"""
from __future__ import annotations

import ast
import functools
import tomllib
from dataclasses import dataclass, field

from mindport.mappings import DATA_DIR, MappingError, load_registry

SURFACE_FILE = DATA_DIR / "surface" / "object_surface.toml"
WRITES_FILE = DATA_DIR / "surface" / "layer_writes.toml"  # writing a setting after construction, measured  # beside the tables, not a table of [[api]] entries
SHADOWED_FILE = DATA_DIR / "surface" / "shadowed_members.toml"  # torch names MindSpore's class holds with another value
MEMBERS_FILE = DATA_DIR / "surface" / "module_members.toml"  # every public nn.Module member: call, value, how
INIT_CALLS_FILE = DATA_DIR / "surface" / "init_calls.toml"  # the methods a torch layer's __init__ calls on self
ENDS = ("converted", "flagged", "unsupported")


@dataclass(frozen=True)
class Member:
    """One Module / Parameter / Tensor member model code uses (``torch.nn.Module.double``)."""

    torch: str
    ends: str  # one of ENDS
    how: str  # converted: what it becomes; flagged/unsupported: why
    proof: str = ""  # the generated test that proves it (tests/mappings/test_surface.py): a program, or empty
    value: str = ""  # a read becomes this: a Python constant, a dotted name, or ``dotted.function(x)`` called on x
    ambiguous: bool = False  # the name is common elsewhere (a config's layout): converted on known tensors only


@dataclass(frozen=True)
class LayerSurface:
    """The members of one mapped torch layer class beyond nn.Module's."""

    torch: str
    same: tuple[str, ...]  # the MindSpore Cell has it under torch's name, with torch's value
    renamed: dict  # member -> MindSpore attribute path (the entry's layer_attributes), with torch's value
    flagged: dict = field(default_factory=dict)  # member -> why it has no MindSpore counterpart
    pynative_only: dict = field(default_factory=dict)  # converted member -> why a static graph cannot read it
    derived: dict = field(default_factory=dict)  # member -> expression template over the Cell (``{layer}``)
    none_when: dict = field(default_factory=dict)  # member -> condition over the Cell under which torch holds None
    kept: dict = field(default_factory=dict)  # constructor setting the Cell lacks -> torch's default (a literal;
    # None: a ``recorded`` setting, required by torch, which the Cell keeps only normalised)

    def outcome(self, member: str) -> tuple[str, str] | None:
        """(ends, how) of one member, None when the data does not account for it. The checked data wins over the
        entry's renames: a member the converted layer holds under torch's name, or under no name with torch's
        value, is not renamed."""
        if member in self.same:
            return "converted", member
        if member in self.derived:
            return "converted", self.derived[member]
        if member in self.flagged:
            return "flagged", self.flagged[member]
        if member in self.renamed:
            return "converted", self.renamed[member]
        entry = load_registry().lookup(f"{self.torch}.{member}")
        if entry is not None and entry.supported:  # a classmethod with its own table entry (Embedding.from_pretrained)
            return "converted", f"the table entry {entry.torch}"
        return None

    def paths(self) -> dict[str, str]:
        """torch member -> the converted layer's attribute path, for the members it holds under another name."""
        return {k: v for k, v in self.renamed.items()
                if k not in self.same and k not in self.flagged and k not in self.derived}


@dataclass(frozen=True)
class Surface:
    members: tuple[Member, ...]
    layers: dict  # torch layer class -> LayerSurface
    methods: dict  # a method shared by layer classes -> (ends, how): the default for every layer that has it
    builds: dict = field(default_factory=dict)  # torch layer -> the constructor call its example does not give
    programs: dict = field(default_factory=dict)  # proof name -> {"program": torch source, "inputs": {name: spec}}
    constructors: dict = field(default_factory=dict)  # torch function building a layer -> that layer class
    common_names: frozenset = frozenset()  # kept settings named as other objects' attributes often are (k, alpha)
    method_proofs: dict = field(default_factory=dict)  # a converted [methods] member -> the programs proving it

    def layer(self, torch_name: str) -> LayerSurface | None:
        return self.layers.get(torch_name)

    def member(self, torch_name: str) -> Member | None:
        return next((m for m in self.members if m.torch == torch_name), None)

    def tensor_reads(self) -> dict[str, Member]:
        """Tensor attributes a MindSpore Tensor lacks, read -> the member saying what the read becomes (``value``)
        or why it is flagged."""
        return {m.torch.rsplit(".", 1)[1]: m for m in self.members if m.torch.startswith("torch.Tensor.")
                and (m.value or m.ends == "flagged")}

    def flagged_reason(self, torch_layer: str, name: str) -> str | None:
        """Why ``name`` of a ``torch_layer`` instance has no MindSpore counterpart, or None."""
        layer = self.layers.get(torch_layer)
        outcome = layer.outcome(name) if layer is not None else None
        return outcome[1] if outcome is not None and outcome[0] == "flagged" else None


@functools.lru_cache(maxsize=1)
def load_surface() -> Surface:
    """The surface data, validated against the layer entries (a listed layer must have one)."""
    where = SURFACE_FILE.name
    raw = tomllib.loads(SURFACE_FILE.read_text(encoding="utf-8"))
    registry = load_registry()
    members = []
    for item in raw.get("member", []):
        if item.get("ends") not in ENDS or not item.get("how") or not item.get("torch"):
            raise MappingError(f"{where}: member {item.get('torch')!r}: needs torch, ends ({'/'.join(ENDS)}), how")
        members.append(Member(item["torch"], item["ends"], item["how"], item.get("proof", ""), item.get("value", ""),
                              bool(item.get("ambiguous", False))))
    methods = {}
    for name, item in raw.get("methods", {}).items():
        if item.get("ends") not in ENDS or not item.get("how"):
            raise MappingError(f"{where}: methods.{name}: needs ends ({'/'.join(ENDS)}) and how")
        methods[name] = (item["ends"], item["how"])
    method_proofs = {name: (item["proof"],) if isinstance(item["proof"], str) else tuple(item["proof"])
                     for name, item in raw.get("methods", {}).items() if item.get("proof")}
    layers = {}
    for torch_name, item in raw.get("layer", {}).items():
        entry = registry.lookup(torch_name)
        if entry is None or entry.kind != "layer":
            raise MappingError(f"{where}: layer {torch_name!r} has no layer entry")
        flagged = dict(item.get("flagged", {}))
        derived = dict(item.get("derived", {}))
        kept = dict(item.get("kept", {}))
        for name in item.get("recorded", ()):  # a required setting: no torch default to fall back on
            if name in kept:
                raise MappingError(f"{where}: layer {torch_name!r}: {name!r} is both kept and recorded")
            kept[name] = None
        for name, default in kept.items():
            if default is not None and not _literal(default):
                raise MappingError(f"{where}: layer {torch_name!r}: kept {name!r}: torch's default is a Python "
                                   f"literal, not {default!r}")
            if name in derived or name in flagged:
                raise MappingError(f"{where}: layer {torch_name!r}: kept {name!r} is also derived or flagged")
            derived[name] = kept_template(name, default)
        none_when = dict(item.get("none_when", {}))
        if any("{layer}" not in template for template in none_when.values()):
            raise MappingError(f"{where}: layer {torch_name!r}: a none_when condition is a template over {{layer}}")
        for name, template in derived.items():
            if "{layer}" not in template and not _literal(template) or name in flagged:
                raise MappingError(f"{where}: layer {torch_name!r}: derived {name!r} needs a template over {{layer}}"
                                   " (or a constant: torch's class always holds it) and no flagged reason")
        for name in item.get("methods", ()):
            if name not in methods:
                raise MappingError(f"{where}: layer {torch_name!r}: method {name!r} has no [methods] decision")
            if methods[name][0] == "flagged":
                flagged.setdefault(name, methods[name][1])  # the layer's own reason first
        same = tuple(item.get("same", ())) + tuple(n for n in item.get("methods", ())
                                                    if methods[n][0] == "converted" and n not in flagged)
        layers[torch_name] = LayerSurface(torch_name, same, entry.layer_attributes(), flagged,
                                          dict(item.get("pynative_only", {})), derived, none_when, kept)
    programs = dict(raw.get("programs", {}))
    for member in members:
        if member.ends == "converted" and member.proof not in programs:
            raise MappingError(f"{where}: member {member.torch}: a converted member needs a proof in [programs]")
    for name, proofs in method_proofs.items():
        for proof in proofs:
            if proof not in programs or methods[name][0] != "converted":
                raise MappingError(f"{where}: methods.{name}: its proof {proof!r} needs a [programs] entry and a "
                                   "converted method")
    constructors = dict(raw.get("constructors", {}))
    for function, layer in constructors.items():
        if layer not in layers or registry.lookup(function) is None:
            raise MappingError(f"{where}: constructors.{function}: needs an entry, and {layer!r} a [layer] table")
    return Surface(tuple(members), layers, methods, dict(raw.get("build", {})), programs, constructors,
                   frozenset(raw.get("common_names", ())), method_proofs)


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


def kept_template(name: str, default: str | None) -> str:
    """The read of a kept setting: the value recorded on the Cell, else torch's default. A ``recorded`` setting
    (``default`` None: torch requires it, the Cell keeps it only in a normalised form, as an AdaptiveAvgPool2d's
    ``output_size`` 1 is MindSpore's (1, 1)) is the recorded value alone: a layer built where the file does not read
    the name has none, and the read raises AttributeError (loud) rather than give MindSpore's form."""
    return f"getattr({{layer}}, {name!r})" if default is None else f"getattr({{layer}}, {name!r}, {default})"


def attribute_paths(entry) -> dict[str, str]:
    """torch member -> MindSpore attribute path of a layer entry's Cell (the entry's renames, less what the surface
    data found the Cell keeps under torch's name or lacks): what the converter and the run-time accessor read."""
    layer = load_surface().layer(entry.torch)
    return layer.paths() if layer is not None else entry.layer_attributes()


_LAYER = "__mp_layer__"


@functools.lru_cache(maxsize=None)
def _compiled(template: str):
    return compile(template.replace("{layer}", _LAYER), f"<derived {template}>", "eval")


def derive(layer, template: str):
    """A derived member's value on a converted layer (``1 - {layer}.keep_prob``): the template evaluated with the
    layer and no builtins beyond the few a template uses."""
    # the layer a global, so a comprehension in a template sees it (RNN's _all_weights)
    return eval(_compiled(template), {"__builtins__": _BUILTINS, _LAYER: layer})  # noqa: S307 - our own data


_BUILTINS = {"getattr": getattr, "tuple": tuple, "int": int, "float": float, "bool": bool, "len": len, "isinstance": isinstance,
             "str": str, "list": list, "range": range, "zip": zip}


WRITE_ENDS = ("same", "converted", "flagged")


@functools.lru_cache(maxsize=1)
def load_writes() -> dict[str, dict[str, tuple[str, str]]]:
    """``data/surface/layer_writes.toml``: torch layer class -> {constructor setting torch keeps as an attribute ->
    (ends, how)}: what writing the setting after construction (``m.eps = 1e-3``) becomes on the converted layer,
    measured against torch by ``python -m mindport.proofs.writes --write``:

    * ``same``: the write as written gives torch's forward (and training-step) behaviour;
    * ``converted``: ``rebuilt``: :func:`mindport.runtime.adapt.set_layer_attribute` builds the layer again with the
      new value through the entry's argument mapping and moves its primitives onto the Cell (MindSpore bakes the
      setting into a primitive in ``__init__``); the converter writes that call;
    * ``flagged``: no conversion gives torch's behaviour; why (the converter flags the write, the accessor raises).
    """
    raw = tomllib.loads(WRITES_FILE.read_text(encoding="utf-8")) if WRITES_FILE.exists() else {}
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for torch_name, item in raw.get("layer", {}).items():
        table: dict[str, tuple[str, str]] = {}
        for name in item.get("same", ()):
            table[name] = ("same", "as written")
        for name in item.get("unchanged", ()):
            table[name] = ("same", "as written (torch's result did not change either on the measured inputs)")
        for name, how in item.get("converted", {}).items():
            table[name] = ("converted", how)
        for name, why in item.get("flagged", {}).items():
            table[name] = ("flagged", why)
        if sum(len(item.get(k, ())) for k in (*WRITE_ENDS, "unchanged")) != len(table):
            raise MappingError(f"{WRITES_FILE.name}: layer {torch_name!r}: a setting is listed under two ends")
        found[torch_name] = table
    return found


@functools.lru_cache(maxsize=1)
def module_members() -> dict[str, dict]:
    """module_members.toml: torch.nn.Module's public member name -> {call, value, how, use}."""
    with MEMBERS_FILE.open("rb") as f:
        members = tomllib.load(f)["member"]
    for name, entry in members.items():
        if entry.get("value") not in ("bound", "same", "rename", "flag") or not entry.get("how"):
            raise MappingError(f"{MEMBERS_FILE.name}: member {name}: value must be bound/same/rename/flag, with a how")
    return members


def member_values(kind: str) -> frozenset[str]:
    """The nn.Module members whose value read is ``kind`` (bound, same, rename, flag)."""
    return frozenset(name for name, entry in module_members().items() if entry["value"] == kind)


@functools.lru_cache(maxsize=1)
def load_init_calls() -> dict[str, tuple[str, ...]]:
    """``data/surface/init_calls.toml``: torch layer class -> the methods its ``__init__`` calls on ``self``
    (``reset_parameters``), read from torch's source by ``python -m mindport.proofs.init_calls --write``. A subclass
    overriding one gets it called after the base ``__init__`` (LayerInitCallTransform): MindSpore's classes call none."""
    return {torch_name: tuple(calls) for torch_name, calls in _init_calls_data().get("layer", {}).items()}


@functools.lru_cache(maxsize=1)
def load_converted_init_calls() -> dict[str, tuple[str, ...]]:
    """The same file's ``[converted]``: torch layer class -> the methods of its list that the converted class's
    own ``__init__`` already calls, with arguments (MindSpore's RNN cells: ``self.reset_parameters(dtype=dtype)``)."""
    return {torch_name: tuple(calls) for torch_name, calls in _init_calls_data().get("converted", {}).items()}


def _init_calls_data() -> dict:
    return tomllib.loads(INIT_CALLS_FILE.read_text(encoding="utf-8")) if INIT_CALLS_FILE.exists() else {}


@functools.lru_cache(maxsize=1)
def load_shadowed() -> dict[str, dict[str, str]]:
    """``data/surface/shadowed_members.toml``: torch layer class -> {"class": the converted layer's class
    (module.qualname), member: why}: the torch member names that class holds under the same name with another value
    (MindSpore's Conv1d's ``kernel_size`` is ``(1, 3)`` for torch's ``(3,)``; mindport.runtime.layers' Conv1d, which a
    file reading it builds, answers torch's), measured by ``python -m mindport.proofs.shadowed --write``. A read of one on a layer of unknown class
    is flagged in ``forward`` (MP104) and read by the object's class elsewhere
    (:func:`mindport.runtime.adapt.layer_attribute`)."""
    raw = tomllib.loads(SHADOWED_FILE.read_text(encoding="utf-8")) if SHADOWED_FILE.exists() else {}
    return {torch_name: dict(item) for torch_name, item in raw.get("layer", {}).items()}


LIGHTNING_FILE = DATA_DIR / "surface" / "lightning_surface.toml"
LIGHTNING_ENDS = ("runtime", "own", "flagged")


@dataclass(frozen=True)
class LightningMember:
    """One member of PyTorch Lightning's LightningModule / LightningDataModule and how converted code has it."""

    owner: str  # pytorch_lightning.LightningModule or pytorch_lightning.LightningDataModule
    name: str
    ends: str  # one of LIGHTNING_ENDS
    how: str


@functools.lru_cache(maxsize=1)
def load_lightning_surface() -> tuple[LightningMember, ...]:
    """``data/surface/lightning_surface.toml``: every public member of Lightning's module classes beyond torch's
    nn.Module (the data module's: beyond object), with how it ends (its header says what each end means)."""
    raw = tomllib.loads(LIGHTNING_FILE.read_text(encoding="utf-8"))
    members = []
    for item in raw.get("member", []):
        if item.get("ends") not in LIGHTNING_ENDS or not item.get("how") or not item.get("name"):
            raise MappingError(f"{LIGHTNING_FILE.name}: member {item!r}: needs class, name, ends "
                               f"({'/'.join(LIGHTNING_ENDS)}) and how")
        members.append(LightningMember(item["class"], item["name"], item["ends"], item["how"]))
    return tuple(members)


def lightning_flagged(name: str) -> str | None:
    """Why a LightningModule member has no MindSpore counterpart (None: it is not flagged)."""
    return next((m.how for m in load_lightning_surface() if m.owner.endswith(".LightningModule")
                 and m.name == name and m.ends == "flagged"), None)
