"""The knowledge of mindport: one entry per torch API, as data (TOML files in ``data/``).

One entry drives four things: the rewrite (``migrator``), the weight-name rule (``validators.weights``), a
generated parity test (``tests/mappings``) and its row in ``docs/mappings.md``. The schema is documented in
``docs/mappings-schema.md`` and enforced here on load: unknown keys, missing targets, unknown transform names and
duplicate entries are load errors naming the entry.

Nothing in the data is evaluated: signatures and defaults are parsed with :mod:`ast`, transforms are referred to by
registered name (``mindport.mappings.transforms``).
"""
from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mindport.names import torch_package

DATA_DIR = Path(__file__).parent / "data"
PROFILES = ("nn", "mint")
DEVICES = ("CPU", "GPU", "Ascend")
KINDS = ("function", "layer", "method", "attribute")

_ENTRY_KEYS = {
    "torch", "kind", "signature", "nn", "mint", "rename", "values", "emit", "drop", "unsupported",
    "transforms", "positional", "weights", "weight_transforms", "runs", "reason", "notes", "example",
    "aliases", "doc_status", "mint_mapped", "switch", "graph", "starts_training", "called", "attributes",
    "keeps_dtype", "metadata_only",
}
_EXAMPLE_KEYS = {"args", "inputs", "self", "call", "rtol", "atol", "styles", "train", "compare", "grad_free", "proof",
                 "program", "sweep"}
# example.sweep: hints for the differential tests (mindport/proofs/differential/)
_SWEEP_KEYS = {"args", "inputs", "variants", "fixed", "half_rtol", "half_atol", "known"}


class MappingError(ValueError):
    """A mapping file is invalid; the message names the file and the entry."""


@dataclass(frozen=True)
class Param:
    name: str
    default: str | None  # source text of the default, None when required
    kind: str  # "positional" | "keyword_only" | "var_positional" | "var_keyword"

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("positional", "keyword_only")


@dataclass(frozen=True)
class Example:
    """A small executable example the parity-test generator turns into a torch snippet."""

    args: str = ""  # the torch call's arguments as source, e.g. "x, 1, keepdim=True"
    inputs: dict = field(default_factory=dict)  # variable -> input spec, e.g. {"x": "randn(3, 4)"}
    self: str = ""  # for methods: the receiver's input spec
    call: str = ""  # for layers: the forward call's arguments as source (names from inputs), default "x"
    rtol: float = 1e-5
    atol: float = 1e-6
    styles: tuple[str, ...] = ()  # call styles to generate; empty = all that apply
    train: bool = False  # run layers in training mode (deterministic layers only)
    compare: str = "values"  # "values" | "shape" (random ops: compare shape and dtype only)
    proof: str = ""  # "" = the generic proof; "optimizer" = tests/training/test_optimizer_entries.py
    program: str = ""  # a whole torch program (``run(...)``, optional ``build()``), for APIs a single call can't show
    sweep: dict = field(default_factory=dict)  # hints for the differential tests (mindport/proofs/differential/)


@dataclass(frozen=True)
class Entry:
    torch: str
    kind: str
    signature: tuple[Param, ...] | None
    targets: dict  # profile -> MindSpore API ("mindspore.ops.sum"; ".method" for a method on the receiver)
    rename: dict
    values: dict  # torch arg -> value transform name
    emit: tuple[str, ...]
    drop: tuple[str, ...]
    unsupported: dict  # torch arg -> reason (unsupported when given with a non-default value)
    transforms: tuple[str, ...]
    positional: tuple[str, ...]  # MindSpore argument names emitted positionally, in this order
    weights: dict  # torch parameter leaf -> MindSpore leaf ("" = dropped)
    weight_transforms: dict  # torch parameter leaf -> weight transform name
    runs: dict  # profile -> tuple of devices verified
    reason: str  # set when the API itself is unsupported
    notes: str
    example: Example | None
    aliases: tuple[str, ...]
    doc_status: str  # the official table's status ("consistent" / "diff"), for the docs
    source: str  # file the entry came from
    mint_mapped: bool = False  # mint takes torch's arguments as written unless this is set
    switch: dict = field(default_factory=dict)  # torch arg -> {literal source: target}: that value calls another target
    graph: str = ""  # set = the target can't be compiled in a static graph (GRAPH_MODE, @jit): why, and what to write
    starts_training: bool = False  # a layer whose output depends on train/eval: built outside a class, .set_train()
    called: str = ""  # an attribute entry: what a call of it becomes (torch.Tensor(...) is not ms.Tensor(...))
    attributes: dict = field(default_factory=dict)  # a layer's torch attribute -> the Cell's attribute path (same value)
    # an in-place method whose out-of-place form always gives the receiver's dtype (triu_, masked_fill_; not add_):
    # on a receiver nothing else holds the converter writes the out-of-place entry (TableCallTransform._fresh_out_of_place)
    keeps_dtype: bool = False
    # an in-place method that changes only the tensor object's shape, never data (unsqueeze_, t_, transpose_): on any
    # receiver that is a new tensor object (a call's or an operator's result, an index) the out-of-place entry is
    # written, as no one else can see the change (TableCallTransform._fresh_out_of_place)
    metadata_only: bool = False

    @property
    def supported(self) -> bool:
        return not self.reason

    def target(self, profile: str = "nn") -> str | None:
        return self.targets.get(profile)

    def resolve(self, profile: str = "nn") -> tuple[str | None, str]:
        """(target, profile whose argument rules apply). The mint profile falls back to the nn mapping for an API
        mint has no counterpart for: mindspore.nn/ops run on Ascend too, so a mint user gets working code, not MP101."""
        target = self.targets.get(profile)
        if target is None and profile == "mint" and self.targets.get("nn"):
            return self.targets["nn"], "nn"
        return target, profile

    def param(self, name: str) -> Param | None:
        for p in self.signature or ():
            if p.name == name:
                return p
        return None

    def layer_attributes(self) -> dict[str, str]:
        """torch attribute -> MindSpore attribute path of a layer: its parameters (the weight rule: a BatchNorm3d's
        ``weight`` is ``bn2d.gamma``), and the constructor arguments it renames without changing their value
        (``groups`` -> ``group``; ``momentum`` becomes 1 - torch's, so it is not an attribute of the same meaning)."""
        attributes = {k: v for k, v in self.rename.items()
                      if v and v != k and self.values.get(k, SAME_VALUE_TRANSFORM) == SAME_VALUE_TRANSFORM}
        attributes = {k: v for k, v in attributes.items() if k not in self.weights}
        attributes.update({k: v for k, v in self.weights.items() if v and v != k})
        attributes.update(self.attributes)  # what the entry says the Cell keeps under another name
        return attributes


# the value transform that keeps the value (an int given where MindSpore wants a float: 1 -> 1.0): a renamed argument
# with it is still an attribute of the same meaning (LayerNorm's eps, kept as epsilon)
SAME_VALUE_TRANSFORM = "layers_float_value"


def parse_signature(text: str, where: str) -> tuple[Param, ...]:
    """Parse ``"(input, dim=None, *, keepdim=False)"`` with ast; defaults stay source text."""
    try:
        fn = ast.parse(f"def _f{text}: pass").body[0]
    except SyntaxError as exc:
        raise MappingError(f"{where}: signature {text!r} does not parse: {exc.msg}") from None
    a = fn.args
    params: list[Param] = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, default in zip(positional, defaults):
        params.append(Param(arg.arg, None if default is None else ast.unparse(default), "positional"))
    if a.vararg:
        params.append(Param(a.vararg.arg, None, "var_positional"))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Param(arg.arg, None if default is None else ast.unparse(default), "keyword_only"))
    if a.kwarg:
        params.append(Param(a.kwarg.arg, None, "var_keyword"))
    return tuple(params)


def _default_kind(torch_name: str) -> str:
    if torch_name.startswith("torch.Tensor."):
        return "method"
    leaf = torch_name.rsplit(".", 1)[-1]
    if torch_name.startswith("torch.nn.") and leaf[:1].isupper() and ".functional." not in torch_name \
            and ".init." not in torch_name and ".utils." not in torch_name:
        return "layer"
    return "function"


def _entry_from_table(raw: dict, source: str) -> Entry:
    torch_name = raw.get("torch")
    if not isinstance(torch_name, str) or not (torch_name.startswith("torch") or torch_package(torch_name)):
        raise MappingError(f"{source}: an entry has no valid 'torch' name (torch's, or a torch-based package's such "
                           f"as timm's): {raw!r:.120}")
    where = f"{source}: entry {torch_name}"
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise MappingError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_ENTRY_KEYS)}")
    kind = raw.get("kind", _default_kind(torch_name))
    if kind not in KINDS:
        raise MappingError(f"{where}: kind {kind!r} is not one of {KINDS}")
    targets = {p: raw[p] for p in PROFILES if p in raw}
    reason = raw.get("reason", "")
    if not targets and not reason:
        raise MappingError(f"{where}: no target ('nn' or 'mint') and no 'reason' saying why it is unsupported")
    for profile, target in targets.items():
        if not isinstance(target, str) or not target.startswith(("mindspore", ".", "mindport.runtime.")):
            raise MappingError(f"{where}: target {profile}={target!r} must be 'mindspore.…', '.method' or "
                               "'mindport.runtime.…' (the small compatibility layer converted code may import)")
    signature = parse_signature(raw["signature"], where) if "signature" in raw else None
    if signature is None and kind != "attribute" and targets and not reason:
        raise MappingError(f"{where}: a callable entry needs a 'signature' (the torch one) to normalise arguments")
    names = {p.name for p in signature or ()}

    def _names_exist(key: str, keys) -> None:
        missing = [k for k in keys if k not in names]
        if missing:
            raise MappingError(f"{where}: '{key}' names argument(s) {missing} that are not in the signature")

    for key in ("rename", "values", "unsupported"):
        _names_exist(key, raw.get(key, {}))
    for key in ("emit", "drop"):
        _names_exist(key, raw.get(key, []))
    _names_exist("switch", raw.get("switch", {}))
    for arg, choices in raw.get("switch", {}).items():
        if not isinstance(choices, dict) or not all(isinstance(t, str) and t.startswith(("mindspore", "mindport.runtime."))
                                                    for t in choices.values()):
            raise MappingError(f"{where}: switch.{arg} must map literal values to 'mindspore.…'/'mindport.runtime.…' targets")
    rests = [p.name for p in signature or () if p.kind == "var_positional" and p.name.endswith("_rest")]
    if rests and (rests[0][: -len("_rest")] not in names or "int_list_varargs" not in raw.get("transforms", ())
                  or ("mint" in targets and not raw.get("mint_mapped"))):
        raise MappingError(f"{where}: *{rests[0]} (an int list torch also takes spread out) needs the keyword "
                           f"{rests[0][: -len('_rest')]!r}, transforms = [\"int_list_varargs\"] and, with a mint "
                           "target, mint_mapped = true")

    from mindport.mappings import transforms as registry

    for name in raw.get("transforms", []):
        if name not in registry.CALL_TRANSFORMS:
            raise MappingError(f"{where}: unknown call transform {name!r}; registered: {sorted(registry.CALL_TRANSFORMS)}")
    for arg, name in raw.get("values", {}).items():
        if name not in registry.VALUE_TRANSFORMS:
            raise MappingError(f"{where}: unknown value transform {name!r} for {arg!r}; registered: {sorted(registry.VALUE_TRANSFORMS)}")
    for leaf, name in raw.get("weight_transforms", {}).items():
        if name not in registry.WEIGHT_TRANSFORMS:
            raise MappingError(f"{where}: unknown weight transform {name!r} for {leaf!r}; registered: {sorted(registry.WEIGHT_TRANSFORMS)}")
    runs = {}
    for profile, devices in raw.get("runs", {}).items():
        if profile not in PROFILES or any(d not in DEVICES for d in devices):
            raise MappingError(f"{where}: runs must map {PROFILES} to devices among {DEVICES}, got {profile}={devices}")
        runs[profile] = tuple(devices)
    example = None
    if "example" in raw:
        ex = dict(raw["example"])
        bad = set(ex) - _EXAMPLE_KEYS
        if bad:
            raise MappingError(f"{where}: unknown example key(s) {sorted(bad)}; allowed: {sorted(_EXAMPLE_KEYS)}")
        bad_sweep = set(ex.get("sweep", {})) - _SWEEP_KEYS
        if bad_sweep:
            raise MappingError(f"{where}: unknown example.sweep key(s) {sorted(bad_sweep)}; allowed: {sorted(_SWEEP_KEYS)}")
        ex["styles"] = tuple(ex.get("styles", ()))
        ex.pop("grad_free", None)
        if ex.get("program"):
            try:
                tree = ast.parse(ex["program"])
            except SyntaxError as exc:
                raise MappingError(f"{where}: example program does not parse: {exc.msg} (line {exc.lineno})") from None
            if not any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body):
                raise MappingError(f"{where}: example program defines no run(...) function")
        example = Example(**ex)
    return Entry(
        torch=torch_name, kind=kind, signature=signature, targets=targets,
        rename=dict(raw.get("rename", {})), values=dict(raw.get("values", {})),
        emit=tuple(raw.get("emit", ())), drop=tuple(raw.get("drop", ())),
        unsupported=dict(raw.get("unsupported", {})), transforms=tuple(raw.get("transforms", ())),
        positional=tuple(raw.get("positional", ())), weights=dict(raw.get("weights", {})),
        weight_transforms=dict(raw.get("weight_transforms", {})), runs=runs, reason=reason,
        notes=raw.get("notes", ""), example=example, aliases=tuple(raw.get("aliases", ())),
        doc_status=raw.get("doc_status", ""), source=source, mint_mapped=bool(raw.get("mint_mapped", False)),
        switch={k: dict(v) for k, v in raw.get("switch", {}).items()},
        graph=raw.get("graph", ""), starts_training=_flag(raw, "starts_training", where),
        called=_called(raw, kind, where), attributes=_attributes(raw, kind, where),
        keeps_dtype=_in_place_flag(raw, "keeps_dtype", kind, torch_name, where),
        metadata_only=_in_place_flag(raw, "metadata_only", kind, torch_name, where),
    )


def _in_place_flag(raw: dict, key: str, kind: str, torch_name: str, where: str) -> bool:
    value = _flag(raw, key, where)
    if value and (kind != "method" or not torch_name.endswith("_") or torch_name.endswith("__")):
        raise MappingError(f"{where}: {key} is for in-place method entries (torch.Tensor.triu_)")
    return value


def _attributes(raw: dict, kind: str, where: str) -> dict:
    value = raw.get("attributes", {})
    if value and (kind != "layer" or not all(isinstance(k, str) and isinstance(v, str)
                                             and all(part.isidentifier() for part in v.split("."))
                                             for k, v in value.items())):
        raise MappingError(f"{where}: attributes is for layer entries: {{torch attribute = \"MindSpore attribute "
                           f"path\"}}")
    return dict(value)


def _called(raw: dict, kind: str, where: str) -> str:
    value = raw.get("called", "")
    if value and (kind != "attribute" or not isinstance(value, str)
                  or not value.startswith(("mindspore.", "mindport.runtime."))):
        raise MappingError(f"{where}: called is for attribute entries: a mindspore.* or mindport.runtime.* name")
    return value


def _flag(raw: dict, key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise MappingError(f"{where}: {key} must be true or false")
    return value


# (prefix of a private defining module, the public package that re-exports its names)
_DEFINING_MODULES = (
    ("torch.nn.modules.", "torch.nn."), ("torch.optim.", "torch.optim."), ("torch.utils.data.", "torch.utils.data."),
    ("torch.nn.parallel.", "torch.nn.parallel."), ("torch.optim.lr_scheduler.", "torch.optim.lr_scheduler."),
    ("torch.functional.", "torch."), ("torch.distributions.", "torch.distributions."),
    ("torch.autograd.", "torch.autograd."),  # torch.autograd.variable.Variable, torch.autograd.grad_mode.no_grad
)


@dataclass
class Registry:
    entries: dict[str, Entry]

    def lookup(self, torch_name: str) -> Entry | None:
        """The entry of a torch name, also under the module that defines it: ``torch.nn.modules.batchnorm.BatchNorm2d``
        and ``torch.optim.optimizer.Optimizer`` are the public ``torch.nn.BatchNorm2d`` and ``torch.optim.Optimizer``
        (torch's packages re-export what their private submodules define); ``torch.torch.tril`` is ``torch.tril``."""
        while torch_name.startswith("torch.torch."):  # the torch module is also its own attribute
            torch_name = torch_name[len("torch."):]
        entry = self.entries.get(torch_name)
        if entry is None:
            for private, public in _DEFINING_MODULES:
                if torch_name.startswith(private) and torch_name.count(".") - private.count(".") in (0, 1):
                    return self.entries.get(public + torch_name.rsplit(".", 1)[1])
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries.values())

    @functools.cached_property
    def _star_names(self) -> dict[str, tuple[str, ...]]:
        """module -> the public names the tables list directly under it (see :func:`star_names`)."""
        found: dict[str, list[str]] = {}
        for key in self.entries:
            module, _, name = key.rpartition(".")
            if module and not name.startswith("_"):
                found.setdefault(module, []).append(name)
        return {module: tuple(sorted(set(names))) for module, names in found.items()}

    @functools.cached_property
    def _by_target(self) -> dict[tuple[str, str], Entry]:
        index: dict[tuple[str, str], Entry] = {}
        for entry in self.entries.values():
            if entry.kind != "layer":
                continue
            for profile, target in entry.targets.items():
                index.setdefault((profile, target), entry)
        from mindport.mappings.settings_layers import SETTINGS_LAYERS

        for runtime, native in SETTINGS_LAYERS.items():  # the class a project that reads no setting back builds
            if ("nn", runtime) in index:
                index.setdefault(("nn", native), index[("nn", runtime)])
        return index

    def layer_for_target(self, ms_class_path: str, profile: str = "nn") -> Entry | None:
        """The layer entry whose MindSpore target is ``ms_class_path`` (used by the weight transfer)."""
        return self._by_target.get((profile, ms_class_path))


def load_entries(paths, parsed: dict[str, dict] | None = None, source: str | None = None) -> Registry:
    """Entries from TOML files (``parsed``: their contents already parsed, by file name; ``source``: the name the
    messages and ``Entry.source`` use, default the file name)."""
    entries: dict[str, Entry] = {}
    for path in paths:
        path = Path(path)
        name = source or path.name
        if parsed is not None and path.name in parsed:
            data = parsed[path.name]
        else:
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise MappingError(f"{name}: not valid TOML: {exc}") from None
        unknown = set(data) - {"api"}
        if unknown:
            raise MappingError(f"{name}: unknown top-level key(s) {sorted(unknown)}; entries go in [[api]] tables")
        tables = data.get("api", [])
        if not isinstance(tables, list) or not all(isinstance(raw, dict) for raw in tables):
            raise MappingError(f"{name}: entries go in [[api]] tables (an array of tables)")
        for raw in tables:
            try:
                entry = _entry_from_table(raw, name)
            except MappingError:
                raise
            except (TypeError, ValueError, AttributeError) as exc:  # a value of the wrong type
                raise MappingError(f"{name}: entry {raw.get('torch', '?')}: a value has the wrong type ({exc}); "
                                   "see docs/mappings-schema.md") from None
            for torch_name in (entry.torch, *entry.aliases):
                if torch_name in entries:
                    raise MappingError(f"{name}: duplicate entry {torch_name} (first in {entries[torch_name].source})")
                entries[torch_name] = entry
    return Registry(entries)


def load_registry() -> Registry:
    """The mapping tables in use: the bundled ones, with the user's overlays on top while :func:`overlays` is
    active. Every reader of the tables (converter, weights, proofs, ``mappings list``) goes through here."""
    return _ACTIVE[1] if _ACTIVE is not None else bundled_registry()


@functools.lru_cache(maxsize=1)
def bundled_registry() -> Registry:
    """All bundled tables, validated. Cached: the tables are read once per process, and their parsed form is
    kept as JSON in the user's cache folder (TOML parsing is most of the load time, paid by every worker process
    of a conversion)."""
    paths = sorted(DATA_DIR.glob("*.toml"))
    return load_entries(paths, _parsed_tables(paths))


# torch modules whose star import the tables list entirely: their ``__all__`` is every name star_names gives
# (tests/converter/test_torch_star_import.py checks it against torch): a file importing one of them with ``*`` binds
# no name the converter cannot see (UnboundNameTransform reads such a file; any other star import stops it)
COMPLETE_STARS = frozenset({"torch.nn.init"})


def star_names(module: str) -> tuple[str, ...]:
    """The names ``from <module> import *`` binds, for a torch module, as far as the tables know them: every entry
    named ``<module>.<name>`` with a public ``name`` (Python's star gives the module's ``__all__``, or its names
    without a leading underscore; torch.nn.init's ``__all__`` is its public functions). A name the tables do not
    know stays unresolved, as it was before: the star then brings nothing the converter could map anyway."""
    return load_registry()._star_names.get(module, ())


# ------------------------------------------------------------------------------------------ user overlays
# A user's own tables (``--mappings FILE.toml``, ``[mappings] extra = [...]`` in mindport.toml) use the schema of the
# bundled ones; their entries add to or replace bundled entries of the same torch name (an entry's aliases too).
# Overlays apply in the order given, a later one replacing an earlier one's entries; within one file a name may
# appear once. The installed package is never edited.

OVERLAY_HINT = ("convert by hand, or map it in a table of your own: `mindport convert --mappings my_maps.toml` "
                "(docs/mappings-schema.md#your-own-tables), proven by `mindport mappings prove my_maps.toml`")

_ACTIVE: tuple[tuple, Registry] | None = None  # (key of the overlay files, the registry with them applied)


def overlay_entries(path) -> list[Entry]:
    """The entries of one overlay file, validated like the bundled tables; errors name the file and the entry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MappingError(f"{path}: cannot read the mapping table: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise MappingError(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MappingError(f"{path}: not valid TOML: {exc}") from None
    return list(load_entries([path], {path.name: data}, source=str(path)).entries.values())


def with_overlays(base: Registry, paths) -> Registry:
    """``base`` with the overlay files' entries added or replacing (see above)."""
    entries = dict(base.entries)
    for path in paths:
        for entry in {id(e): e for e in overlay_entries(path)}.values():
            for name in (entry.torch, *entry.aliases):
                replaced = entries.get(name)
                if replaced is not None and replaced.torch == name:
                    for alias in replaced.aliases:  # a replaced entry takes its aliases with it
                        if entries.get(alias) is replaced:
                            del entries[alias]
                entries[name] = entry
    return Registry(entries)


def _overlay_key(paths) -> tuple:
    key = []
    for path in paths:
        path = Path(path)
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = ""  # overlay_entries reports it
        key.append((str(path.resolve()), digest))
    return tuple(key)


@contextlib.contextmanager
def overlays(paths):
    """Make :func:`load_registry` return the bundled tables with these overlay files applied, for the duration of
    the block (validated first: raises :class:`MappingError` naming the file and the entry)."""
    global _ACTIVE
    previous = _ACTIVE
    use_overlays(paths)
    try:
        yield load_registry()
    finally:
        _ACTIVE = previous


def use_overlays(paths) -> None:
    """Apply overlay files for the rest of the process (conversion workers; the CLI uses :func:`overlays`)."""
    global _ACTIVE
    paths = tuple(paths or ())
    if not paths:
        _ACTIVE = None
        return
    key = _overlay_key(paths)
    if _ACTIVE is None or _ACTIVE[0] != key:
        _ACTIVE = (key, with_overlays(bundled_registry(), paths))


def overlay_fingerprint(paths) -> str:
    """Content digest of the overlay files (for conversion caches)."""
    return hashlib.sha256(repr(_overlay_key(paths)).encode()).hexdigest()


def project_overlays(src) -> list[Path]:
    """``[mappings] extra = ["my_maps.toml", ...]`` in ``mindport.toml`` beside SRC (paths relative to that file)."""
    src = Path(src)
    config = (src if src.is_dir() else src.parent) / "mindport.toml"
    if not config.is_file():
        return []
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MappingError(f"{config}: not readable TOML: {exc}") from None
    table = data.get("mappings", {})
    if not isinstance(table, dict) or set(table) - {"extra"}:
        raise MappingError(f"{config}: [mappings] takes one key, extra = [\"my_maps.toml\", ...]")
    extra = table.get("extra", [])
    if isinstance(extra, str):
        extra = [extra]
    if not isinstance(extra, list) or not all(isinstance(p, str) for p in extra):
        raise MappingError(f"{config}: [mappings] extra must be a list of file names")
    return [config.parent / p for p in extra]


def _parsed_tables(paths: list[Path]) -> dict[str, dict] | None:
    texts = {path.name: path.read_bytes() for path in paths}
    digest = hashlib.sha256(b"".join(name.encode() + b"\0" + data for name, data in texts.items())).hexdigest()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mindport" / f"tables-{digest[:20]}.json"
    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    try:
        parsed = {name: tomllib.loads(data.decode("utf-8")) for name, data in texts.items()}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # load_entries reports the file
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(parsed), encoding="utf-8")
        os.replace(tmp, cache)
    except (OSError, TypeError, ValueError):
        pass  # no writable cache folder: parse every time
    return parsed
