"""A mapped MindSpore layer answers torch's member names (``norm.weight``, ``bn.running_mean``, ``fc.in_features``).

Model code reads a layer's parameters, buffers and settings under torch's names, often on a layer whose class the
converter cannot see where the read is written: one passed in (``Scale(norm)``), built by a class passed in
(``self.norm = norm_layer(dim)``), returned by a factory or looked up in a registry. Where the class is known the
converter writes MindSpore's name (``self.norm.gamma``); elsewhere the read stayed as written and failed on MindSpore's
class (``'LayerNorm' object has no attribute 'weight'``), and ``mp_adapt.layer_attribute`` does not compile in a
static graph.

Importing this module (``mindport.runtime._graph`` loads it, so every runtime module converted code imports does)
arranges that the first Cell built installs (once; reading the tables then, never at import: the runtime modules
the plan resolves are fully loaded by then), per MindSpore class that is the nn target of a torch layer entry (``adapt._layer_entries``), a
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
import functools
import linecache
import re

from mindspore import nn

_PREFIX = "_mp_torch_"  # where a plain value written under a derived torch name is kept


class TorchMember(property):
    """A torch member name on a MindSpore layer class (a property whose getter reads the Cell's own member)."""

    path: tuple[str, ...] = ()  # the renamed member's attribute path; empty for a derived member
    torch_name: str = ""


def _stored_names(cls) -> frozenset[str]:
    """Every attribute name a function of the class (down to its bases) stores on ``self``: the class's instance
    members (MindSpore's ``nn.Dense`` keeps ``in_channels``, a MaxPool1d ``kernel_size``)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is None:
                continue
            for ins in dis.get_instructions(code):
                if ins.opname == "STORE_ATTR":
                    names.add(ins.argval)
    return frozenset(names)


def _members(entry, cls) -> dict[str, tuple[str, tuple[str, ...]]]:
    """torch member -> (getter expression over ``self``, renamed path or ()) for one mapped class."""
    from mindport.mappings.surface import attribute_paths, load_surface

    layer = load_surface().layer(entry.torch)
    same = set(layer.same) if layer is not None else set()
    flagged = set(layer.flagged) if layer is not None else set()
    kept = set(layer.kept) if layer is not None else set()
    none_when = dict(layer.none_when) if layer is not None else {}
    stored = _stored_names(cls)
    found = {}
    candidates = [(name, path) for name, path in attribute_paths(entry).items()]
    if layer is not None:
        candidates += [(name, None) for name in layer.derived if name not in kept]
    for name, path in candidates:
        if name in same or name in flagged or name in found or not name.isidentifier() or hasattr(cls, name) \
                or name in stored:
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


_NAMES: set[str] = set()


@functools.lru_cache(maxsize=1)
def install() -> dict:
    """Install the properties (once); returns {MindSpore class: {torch name: getter expression}}."""
    from mindport.runtime.adapt import _layer_entries

    plan = {}
    for cls, entry in _layer_entries().items():
        if not (isinstance(cls, type) and issubclass(cls, nn.Cell)):
            continue
        members = _members(entry, cls)
        if members:
            plan[cls] = members
    getters = _getters(sorted({expr for members in plan.values() for expr, _ in members.values()}))
    installed = {}
    for cls, members in plan.items():
        for name, (expr, path) in members.items():
            prop = TorchMember(getters[expr], _setter(name, path),
                               doc=f"torch's {name}: {expr.replace('self.', '', 1) if path else expr}")
            prop.path, prop.torch_name = path, name
            setattr(cls, name, prop)
            _NAMES.add(name)
        if not getattr(cls.__setattr__, "_mp_torch_members", False):
            cls.__setattr__ = _member_setattr(cls.__setattr__)
        installed[cls] = {name: expr for name, (expr, _) in members.items()}
    return installed


def _installing_cell_init(init):
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):  # noqa: N807 - the dunder being replaced
        if not install.cache_info().currsize and not _importing():
            install()
        init(self, *args, **kwargs)

    __init__._mp_torch_members = True  # noqa: SLF001
    return __init__


def _importing() -> bool:
    """Is a mindport.runtime module still being imported (a Cell built at import time)? The plan resolves those
    modules' classes, so it waits for the next Cell."""
    import sys

    return any(getattr(getattr(module, "__spec__", None), "_initializing", False)
               for name, module in list(sys.modules.items()) if name.startswith("mindport.runtime"))


if not getattr(nn.Cell.__init__, "_mp_torch_members", False):
    nn.Cell.__init__ = _installing_cell_init(nn.Cell.__init__)
