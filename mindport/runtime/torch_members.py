"""A mapped MindSpore layer answers torch's member names (``norm.weight``, ``bn.running_mean``, ``fc.in_features``).

Model code reads a layer's parameters, buffers and settings under torch's names, often on a layer whose class the
converter cannot see where the read is written: one passed in (``Scale(norm)``), built by a class passed in
(``self.norm = norm_layer(dim)``), returned by a factory or looked up in a registry. Where the class is known the
converter writes MindSpore's name (``self.norm.gamma``); elsewhere the read stayed as written and failed on MindSpore's
class (``'LayerNorm' object has no attribute 'weight'``), and ``mp_adapt.layer_attribute`` does not compile in a
static graph.

Importing this module (``mindport.runtime._graph`` loads it, so every runtime module converted code imports does)
arranges that building a Cell installs on its class (and bases; each class once, before the class's own
``__init__`` runs), from the generated table ``mappings/data/surface/torch_members.toml`` (no mapping tables read
at run time), per MindSpore class that is the nn target of a torch layer entry (``adapt._layer_entries``), a
property under each torch member name the surface data (``mappings/data/surface/object_surface.toml`` with the
entries' weight rules and ``attributes``) says the Cell keeps under another name or form, where MindSpore's class has
no member of that name (no class attribute, and no method of the class stores one on its instances):

* a renamed member (``mindport.mappings.surface.attribute_paths``: LayerNorm ``weight`` -> ``gamma``, BatchNorm3d
  ``running_mean`` -> ``bn2d.moving_mean``, Linear ``in_features`` -> ``in_channels``) reads that path, None where the
  data's ``none_when`` condition holds (an untracked BatchNorm's ``running_mean``);
* a derived one (a Dropout2d's ``p`` is ``1 - keep_prob``, a BatchNorm's ``track_running_stats``) reads the data's
  expression over the layer.

Settings MindSpore does not keep at all (``kept``: a ReLU's ``inplace``) get no property: the converter records
them on the Cell where the file reads them, and an unrecorded one stays a loud AttributeError rather than torch's
default on a layer that may have been built with another value.

The getters are named functions compiled from the data's expressions (a static graph parses a property's getter;
a lambda fails there, "Parse Lambda Function Fail"), so the reads compile in GRAPH_MODE as in PyNative, and no
parameter is duplicated (a property is not a Parameter of the Cell).

Writes keep torch's meaning: assigning a Parameter or Tensor under a renamed torch name (``ln.weight =
Parameter(...)`` in a subclass's ``__init__``, ``m.bias = None``) sets the renamed path (the weight the layer's
construct uses), as assigning ``ln.weight`` in torch replaces the weight forward uses; a plain value under a
derived name is kept on the Cell and read back. A subclass that defines its own attribute of that name in Python
(a class attribute, a method, a property) keeps it: the property is on MindSpore's class, below the subclass.
"""
from __future__ import annotations

import dis
from pathlib import Path
import functools
import linecache
import re

from mindspore import nn

_PREFIX = "_mp_torch_"  # where a plain value written under a derived torch name is kept


class TorchMember(property):
    """A torch member name on a MindSpore layer class (a property whose getter reads the Cell's own member)."""

    path: tuple[str, ...] = ()  # the renamed member's attribute path; empty for a derived member
    torch_name: str = ""


def _stores(cls, names: frozenset[str]) -> frozenset[str]:
    """Which of ``names`` a function of the class (down to its bases) stores on an instance: the class's instance
    members (MindSpore's ``nn.Dense`` keeps ``in_channels``, a MaxPool1d ``kernel_size``)."""
    return frozenset().union(*(_class_stores(klass) & names for klass in cls.__mro__))


@functools.lru_cache(maxsize=None)
def _class_stores(klass) -> frozenset[str]:
    """The attribute names the functions defined in ``klass`` itself store (``STORE_ATTR``); only functions naming
    a torch member at all are disassembled (a Cell has some 200 methods)."""
    names: set[str] = set()
    for value in vars(klass).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if code is None or not _TORCH_NAMES.intersection(code.co_names):
            continue
        names.update(ins.argval for ins in dis.get_instructions(code) if ins.opname == "STORE_ATTR")
    return frozenset(names)


def _candidates(entry) -> list[tuple[str, str | None]]:
    """(torch member, renamed path or None for a derived one) the data gives for an entry's class."""
    from mindport.mappings.surface import attribute_paths, load_surface

    layer = load_surface().layer(entry.torch)
    candidates = [(name, path) for name, path in attribute_paths(entry).items()]
    if layer is not None:
        candidates += [(name, None) for name in layer.derived if name not in layer.kept]
    return candidates


def _members(entry, cls, candidates) -> dict[str, tuple[str, tuple[str, ...]]]:
    """torch member -> (getter expression over ``self``, renamed path or ()) for one mapped class."""
    from mindport.mappings.surface import load_surface

    layer = load_surface().layer(entry.torch)
    same = set(layer.same) if layer is not None else set()
    flagged = set(layer.flagged) if layer is not None else set()
    none_when = dict(layer.none_when) if layer is not None else {}
    found = {}
    stored = _stores(cls, frozenset(name for name, _ in candidates))
    for name, path in candidates:
        if name in same or name in flagged or name in found or not name.isidentifier() or name in stored \
                or hasattr(cls, name) and not isinstance(_static(cls, name), TorchMember):  # (one installed: ours)
            continue
        if path is not None:
            expr = "self." + path
            when = none_when.get(name)
            if when is not None:
                expr = f"None if {when.replace('{layer}', 'self')} else {expr}"
            found[name] = (expr, tuple(path.split(".")))
        else:
            template = layer.derived[name]
            if re.search(r"\{layer\}\." + name + r"\b|'" + name + "'", template):
                continue  # reads MindSpore's own member of that name (a MaxPool1d's kernel_size): not installed
            expr = template.replace("{layer}", "self")
            found[name] = (f"getattr(self, {_PREFIX + name!r}, {expr})", ())
    return found


_SOURCE = "<mindport.runtime.torch_members getters>"


def _getters(expressions: list[str]) -> dict[str, object]:
    """One named function per expression, compiled from source registered in ``linecache`` (a static graph reads a
    getter's source to parse it)."""
    lines = []
    for i, expr in enumerate(expressions):
        lines += [f"def torch_member_{i}(self):", f"    return {expr}", ""]
    source = "\n".join(lines) + "\n"
    linecache.cache[_SOURCE] = (len(source), None, source.splitlines(True), _SOURCE)
    namespace = {"__name__": __name__}
    exec(compile(source, _SOURCE, "exec"), namespace)  # noqa: S102 - our own data's expressions
    return {expr: namespace[f"torch_member_{i}"] for i, expr in enumerate(expressions)}


def _setter(name: str, path: tuple[str, ...]):
    def set_torch_member(self, value):
        if not path:
            object.__setattr__(self, _PREFIX + name, value)  # a derived name: the value written, read back
            return
        owner = self
        for part in path[:-1]:
            owner = getattr(owner, part)
        setattr(owner, path[-1], value)  # torch's meaning: the member the layer's construct uses

    return set_torch_member


def _member_setattr(original):
    def __setattr__(self, name, value):  # noqa: N807 - the dunder being replaced
        if name in _NAMES:
            member = _static(type(self), name)
            if isinstance(member, TorchMember):  # not a subclass's own attribute of that name
                member.fset(self, value)
                return
        original(self, name, value)

    __setattr__._mp_torch_members = True  # noqa: SLF001
    return __setattr__


def _static(cls, name):
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


_NAMES: set[str] = set()  # the names installed on some class
_TORCH_NAMES: set[str] = set()  # the names considered (what _class_stores looks for)


# generated by ``python -m mindport.runtime.torch_members``
TABLE_PATH = Path(__file__).resolve().parent.parent / "mappings" / "data" / "surface" / "torch_members.toml"


def plan() -> dict[str, dict[str, list]]:
    """{MindSpore class's dotted name: {torch name: [getter expression, renamed path or ""]}} from the tables and the
    installed MindSpore (what :data:`TABLE_PATH` holds; tests/converter/test_torch_members.py checks it is current)."""
    from mindport.runtime.adapt import _layer_entries

    considered = {cls: (entry, found) for cls, entry in _layer_entries().items()
                  if isinstance(cls, type) and issubclass(cls, nn.Cell) and (found := _candidates(entry))}
    _TORCH_NAMES.update(name for _, found in considered.values() for name, _ in found)
    table = {}
    for cls, (entry, found) in considered.items():
        members = _members(entry, cls, found)
        if members:
            table[f"{cls.__module__}.{cls.__qualname__}"] = {name: [expr, ".".join(path)]
                                                             for name, (expr, path) in sorted(members.items())}
    return dict(sorted(table.items()))


def write() -> str:
    """The table's text (``python -m mindport.runtime.torch_members`` writes it)."""
    lines = ["# torch's member names a mapped MindSpore layer class answers (mindport.runtime.torch_members): generated",
             "# by `python -m mindport.runtime.torch_members` from object_surface.toml, the layer entries and the",
             "# installed MindSpore (a name MindSpore's class has is left out); do not edit.", ""]
    for cls, members in plan().items():
        lines.append(f'["{cls}"]')
        lines += [f"{name} = [{_toml(expr)}, {_toml(path)}]" for name, (expr, path) in members.items()]
        lines.append("")
    return "\n".join(lines)


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, list]]:
    import tomllib

    return tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _getter_functions() -> dict:
    return _getters(sorted({expr for members in _table().values() for expr, _ in members.values()}))


# classes seen by _install_for (their own and their bases' members installed), by identity: a converted file's value
# class (``TorchLeakyReLU``, factories.value_metaclass_def) hashes and compares as MindSpore's class, and in a set it
# stood for nn.LeakyReLU, which then never got its members (test_switched_subclasses before test_torch_members)
_DONE: dict[int, type] = {}


def _install_for(cls) -> None:
    """Install the table's members on ``cls`` and its bases (each class once)."""
    table = _table()
    for klass in cls.__mro__:
        if id(klass) in _DONE:
            continue
        _DONE[id(klass)] = klass
        members = table.get(f"{klass.__module__}.{klass.__qualname__}")
        if not members:
            continue
        getters = _getter_functions()
        for name, (expr, path) in members.items():
            steps = tuple(path.split(".")) if path else ()
            prop = TorchMember(getters[expr], _setter(name, steps), doc=f"torch's {name}: {expr}")
            prop.path, prop.torch_name = steps, name
            setattr(klass, name, prop)
            _NAMES.add(name)
        if not getattr(klass.__setattr__, "_mp_torch_members", False):
            klass.__setattr__ = _member_setattr(klass.__setattr__)


def _installing_cell_init(init):
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):  # noqa: N807 - the dunder being replaced
        if id(type(self)) not in _DONE:
            _install_for(type(self))  # before the class's own __init__ sets anything under a torch name
        init(self, *args, **kwargs)

    __init__._mp_torch_members = True  # noqa: SLF001
    return __init__


if not getattr(nn.Cell.__init__, "_mp_torch_members", False):
    nn.Cell.__init__ = _installing_cell_init(nn.Cell.__init__)


if __name__ == "__main__":
    TABLE_PATH.write_text(write(), encoding="utf-8")
    print(f"{TABLE_PATH}: {sum(map(len, plan().values()))} members on {len(plan())} classes")
