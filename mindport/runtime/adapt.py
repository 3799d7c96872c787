"""Torch APIs whose arguments are only known at run time, mapped when the call happens.

The converter maps a torch call through its entry (``mindport/mappings/data``) by reading the arguments written at
the call site. Some calls show no arguments to read: ``nn.Conv2d(c, c, 3, **dd)``, ``conv(*args, **kwargs)`` in a
helper factory, ``functools.partial(nn.LayerNorm, eps=1e-6)``, ``norm_layer=nn.LayerNorm`` then ``norm_layer(dim)``.
For those, converted code holds an adapter made from the same entry:

    mp_adapt.api("torch.nn.Conv2d")(c, c, 3, **dd)
    norm_layer = mp_adapt.api("torch.nn.LayerNorm")

Called, the adapter binds the values to torch's signature and runs the entry's steps (unsupported checks, drops,
value transforms, renames, call transforms, ``emit``) with :mod:`mindport.mappings.arguments`, the code the converter
runs on source text: each value goes in as source text too (a literal's ``repr``, otherwise a name bound to the
value), so a transform takes the same branch it takes for the same argument written in the source, and the MindSpore
arguments it writes are evaluated with those names bound. Then it calls the MindSpore target. An argument with no
MindSpore equivalent raises :class:`Unsupported` (a ``TypeError``) at the call, naming the entry and the reason.

An adapter stands for its target where code treats the API as a value. The adapter of a class (a layer, an
optimizer) is itself a class, a subclass of the MindSpore class whose metaclass maps the arguments when it is called:
``isinstance(norm_layer, type)`` and ``issubclass(norm_layer, nn.Cell)`` hold, ``isinstance(m, norm_layer)`` tests the
MindSpore class, ``functools.partial(norm_layer, eps=1e-6)`` and ``class Norm(norm_layer)`` work. Any adapter compares
equal to its target and hashes like it (``type(m) in (nn.BatchNorm2d, ...)``), and ``api()`` returns one adapter per
name, so ``norm_layer is nn.LayerNorm`` holds too.
"""
from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
import types
from typing import Any

import mindspore as _ms

from mindport.mappings import Entry, load_registry
from mindport.mappings.settings_layers import SETTINGS_LAYERS
from mindport.mappings.arguments import (
    VARARGS,
    CallBindError,
    Extra,
    bind,
    implicit_source,
    map_arguments,
    ordered_arguments,
    receiver_name,
    switched_target,
)
from mindport.mappings.transforms import Arg
from mindport.mappings.transforms import Unsupported as _MappingUnsupported
from mindport.runtime._graph import in_graph

__all__ = ["Adapter", "Unsupported", "api", "attribute", "class_name", "has", "layer_attribute", "set_layer_attribute",
           "layer_sizes"]

_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None))


class Unsupported(TypeError):
    """A run-time argument has no MindSpore equivalent (the entry's reason is in the message)."""


@functools.lru_cache(maxsize=None)
def api(name: str, profile: str = "nn") -> "Adapter | Any":
    """The adapter of the torch API ``name`` under a conversion profile ("nn" or "mint"); an attribute entry (a
    dtype, a class with no argument mapping) is its target itself."""
    entry = load_registry().lookup(name)
    if entry is None:
        raise LookupError(f"{name} has no mapping entry")
    target, rules = entry.resolve(profile)
    if not entry.supported or target is None:
        raise LookupError(f"{name} is not supported: {entry.reason or f'no {profile!r} target'}")
    if entry.kind == "attribute":
        return _resolve(target)
    adapter = Adapter(entry, rules)
    if isinstance(adapter.target, type):
        return _adapter_class(adapter)
    return adapter


def attribute(module: str, name: str, *default: Any) -> Any:
    """``getattr(torch.nn, name[, default])`` with ``name`` known only at run time (``act = getattr(torch.nn,
    activation)`` with ``activation='ELU'``): the adapter of ``module.name``'s entry, as :func:`api`; a name with no
    supported entry gives ``default``, or raises AttributeError saying so."""
    try:
        return api(f"{module}.{name}")
    except LookupError as exc:
        if default:
            return default[0]
        raise AttributeError(f"mindport: {module}.{name}: {exc}") from None


def has(module: str, name: str) -> bool:
    """``hasattr(torch.nn.functional, "scaled_dot_product_attention")``, the feature test of code written for several
    torch versions: whether ``module.name`` has a supported entry, so the converted code takes the branch whose
    calls mindport maps (and needs no torch to ask)."""
    return attribute(module, name, _MISSING) is not _MISSING


_MISSING = object()


class namespace:  # noqa: N801 - named as the converted call reads: mp_adapt.namespace("torch.nn.functional")
    """A torch namespace bound to a name (``F = nn.functional``, ``F = torch.nn.functional``): the converter maps
    each ``F.relu(x)`` where it is written, so only reads it cannot see (``getattr(F, name)``, ``F`` passed on) reach
    this object, whose attributes are the runtime adapters of the namespace's entries (:func:`attribute`). Without it
    the alias stayed ``torch.nn.functional`` and the port imported torch."""

    def __init__(self, module: str) -> None:
        self.__name__ = module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return attribute(self.__name__, name)

    def __repr__(self) -> str:
        return f"<mindport namespace {self.__name__}>"


def tensor_data(value: Any) -> Any:
    """``t.data`` taken as a value outside ``forward`` where the converter could not tell what ``t`` is
    (``def scale_(t): w = t.data; w.mul_(2)``): a MindSpore Parameter itself, since MindSpore's ``Parameter.data``
    is a Tensor whose in-place updates (``assign_value``, ``mul_``) leave the Parameter as it was where torch's shares
    its storage (measured on MindSpore 2.10); a plain Tensor itself too (``d = x.data; d.mul_(4)``: MindSpore's
    ``Tensor.data`` is another Tensor, which the update fills, leaving ``x`` as it was; outside ``forward`` nothing is
    differentiated, so torch's detaching changes nothing there); anything else's ``.data`` as written (a sparse
    matrix's, a PackedSequence's). Compiles in a static graph (MindSpore imported by the module: an ``import``
    statement in the function failed there, "Unsupported statement 'Import'", when such a helper is reached from
    ``forward``: video-classification-3d-cnn's type-A shortcut)."""
    return value if isinstance(value, _ms.Tensor) else value.data


def layer_attribute(layer: Any, name: str, refuse_shadowed: bool = True) -> Any:
    """``m.weight`` read under torch's name where the converter could not tell the layer's class (``if
    isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d):`` — MindSpore's BatchNorm3d keeps it at
    ``bn2d.gamma``, BatchNorm2d at ``gamma``): the attribute the entry of the object's class names, else ``name``.
    A member MindSpore keeps under another form (object_surface.toml's ``derived``) is computed from the layer
    (a Dropout2d's ``p`` is ``1 - keep_prob``); one torch holds as None in the layer's configuration (``none_when``)
    reads None. A member torch's class has and MindSpore's lacks (``flagged``)
    raises AttributeError with the reason."""
    if not isinstance(layer, _cell_class()):
        return getattr(layer, name)  # a plain object (a config, a numpy array): its own attribute, as written
    path = name
    entry = layer_entry(layer)
    if entry is not None:
        layer_surface = _surface().layer(entry.torch)
        template = layer_surface.derived.get(name) if layer_surface is not None else None
        if template is not None:  # a setting MindSpore keeps under another form: 1 - keep_prob
            from mindport.mappings.surface import derive

            return derive(layer, template)
        when = layer_surface.none_when.get(name) if layer_surface is not None else None
        if when is not None:  # torch holds None in this configuration (running_mean untracked)
            from mindport.mappings.surface import derive

            if derive(layer, when):
                return None
        path = _surface_paths(entry).get(name, name)
        reason = _surface().flagged_reason(entry.torch, name)
        if reason is not None and path == name and not hasattr(layer, name):
            raise AttributeError(f"mindport: {entry.torch}.{name}: {reason}")
        rows = _shadowed().get(entry.torch, {})
        shadowed = rows.get(name) if refuse_shadowed and path == name and name != "class" \
            and _measured_class(layer, rows) else None
        if shadowed is not None and name not in _WEIGHTS_AND_BUFFERS:
            # a setting MindSpore's class holds under torch's name with another value (measured): loud, not wrong
            # (an AdaptiveMaxPool3d's output_size is a Tensor there); a Conv1d's 4-D weight stays (init calls convert)
            raise AttributeError(f"mindport: {entry.torch}.{name}: {shadowed}; keep the value you passed to the layer")
    for part in path.split("."):
        layer = getattr(layer, part)
    return layer


def _shadowed() -> dict[str, dict[str, str]]:
    from mindport.mappings.surface import load_shadowed

    return load_shadowed()


_WEIGHTS_AND_BUFFERS = frozenset({"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})


def _measured_class(layer, rows: dict) -> bool:
    """Is the layer's value of a shadowed member the measured class's: that class is in its MRO and no class of
    mindport.runtime comes before it (``mp_nn.Conv1d`` keeps torch's tuples)."""
    for klass in type(layer).__mro__:
        if f"{klass.__module__}.{klass.__qualname__}" == rows.get("class"):
            return True
        if klass.__module__.startswith("mindport.runtime"):
            return False
    return False


def set_layer_attribute(layer: Any, name: str, value: Any) -> None:
    """``m.eps = 1e-3`` written under torch's name on a layer (``for m in model.modules(): if type(m) is
    nn.BatchNorm2d: m.eps = 1e-3``). torch reads most settings when ``forward`` runs; MindSpore bakes many of them into
    primitives in ``__init__`` (a BatchNorm2d's ``bn_infer`` keeps ``epsilon``), so the plain write changes nothing.
    By the object's class at run time (``data/surface/layer_writes.toml``, measured against torch by
    ``python -m mindport.proofs.writes --write``):

    * ``same``: the write as written takes torch's effect (or has none in either framework: ``num_features``);
    * ``converted`` (``rebuilt``): the layer is built again from its torch settings (read through
      :func:`layer_attribute`) with the new value, through the entry's own argument mapping (``momentum`` ->
      ``1 - momentum``), and its primitives and plain settings move onto the existing Cell (its Parameters stay);
    * ``flagged``: raises AttributeError with the reason (the write would be silently lost).

    Every compiled static graph is forgotten after the write, so a Cell already run under GRAPH_MODE compiles again
    with the new setting.

    A bias written on a layer that switches it with ``has_bias`` (a Dense or a convolution built with
    ``bias=False`` and given ``nn.Parameter(torch.zeros(n))`` after: BERT's prediction head ``self.decoder.bias =
    nn.Parameter(...)``; or ``m.bias = None``) switches it as torch's forward does, which reads ``self.bias`` on every
    call: the Parameter is added (``has_bias`` on, a ``BiasAdd`` of the layer's data format made when it has none),
    None removes it.

    A plain object (a config), or a Cell that is no mapped layer, takes the write as written."""
    if name == "bias" and isinstance(layer, _cell_class()) and isinstance(getattr(layer, "has_bias", None), bool):
        _switch_bias(layer, value)
        return
    if not isinstance(layer, _cell_class()) or (entry := layer_entry(layer)) is None:
        setattr(layer, name, value)
        return
    from mindport.mappings.surface import load_writes

    outcome = load_writes().get(entry.torch, {}).get(name)
    if outcome is not None and outcome[0] == "flagged":
        raise AttributeError(f"mindport: writing {entry.torch}.{name} after construction: {outcome[1]}")
    if outcome is None or outcome[0] == "same":
        setattr(layer, name, value)
    else:
        rebuild_layer(layer, entry, name, value)
    _forget_compiled_graphs()


def _switch_bias(layer, value) -> None:
    """``layer.bias = value`` on a Cell with ``has_bias`` (set_layer_attribute's bias clause)."""
    import mindspore as ms
    from mindspore import ops

    if value is None:
        layer.has_bias = False
        if isinstance(getattr(layer, "bias", None), ms.Parameter):
            del layer._params["bias"]  # a Parameter cannot be overwritten with None on a Cell
        object.__setattr__(layer, "bias", None)
    else:
        if not isinstance(getattr(layer, "bias_add", None), (ops.Primitive, ms.nn.Cell)):
            data_format = getattr(layer, "data_format", "NCHW")
            layer.bias_add = ops.BiasAdd(data_format=data_format if data_format in ("NCHW", "NHWC") else "NCHW")
        if "bias" in layer.__dict__ and layer.__dict__["bias"] is None:
            del layer.__dict__["bias"]  # built without one: MindSpore keeps the None as a plain attribute
        layer.bias = value
        layer.has_bias = True
    _forget_compiled_graphs()


def _forget_compiled_graphs() -> None:
    """A static graph compiled before the write keeps the old primitives and settings (measured: a BatchNorm2d's
    eps rebuilt after a GRAPH_MODE call changed nothing until the graph was compiled again): every Cell's record of
    its compiled phases is cleared, so the next call compiles again (a write after construction is rare: an init
    function, a schedule once an epoch)."""
    try:
        from mindspore.graph.api import cells_compile_cache
    except ImportError:  # older layouts
        from mindspore.common.api import cells_compile_cache
    for phases in list(cells_compile_cache.values()):
        phases.clear()


def rebuild_layer(layer: Any, entry: Entry, name: str, value: Any, names: Any = None) -> None:
    """Build ``entry``'s layer again with torch's settings of ``layer`` and ``name=value`` (the entry's argument
    mapping, as the converter maps the constructor call), then move the new Cell's primitives and plain settings onto
    ``layer``, keeping its Parameters, sub-Cells and training mode. Raises :class:`Unsupported` where MindSpore has
    no equivalent of the value (a BatchNorm's ``momentum=None``, torch's cumulative average), AttributeError where a
    setting of the layer cannot be read back in torch's form. ``names``: torch's settings of the class (default:
    the data's)."""
    from mindport.mappings.surface import load_writes

    settings = {}
    for setting in names if names is not None else load_writes().get(entry.torch, {}):
        if setting != name:
            # the layer's own value, given back to its own mapping (a shadowed setting is MindSpore's form there)
            settings[setting] = layer_attribute(layer, setting, refuse_shadowed=False)
    for param in entry.signature or ():
        # a constructor flag that says whether a weight exists (a conv's bias=False) is no setting the write table
        # lists (the weight itself is 'same'): read from the layer, else the rebuild takes the default (bias=True)
        # and its primitives (BiasAdd) meet the layer's missing weight
        if param.name not in settings and param.name != name and param.name in _WEIGHTS_AND_BUFFERS \
                and param.default in ("True", "False"):
            present = layer_attribute(layer, param.name, refuse_shadowed=False)
            settings[param.name] = present if isinstance(present, bool) else present is not None
    settings[name] = value
    adapter = api(entry.torch)
    adapter = vars(adapter).get("_mp_adapter", adapter)  # a class target's adapter class holds the Adapter
    function, _, positional, keywords = adapter.mapped((), settings)
    built = function(*positional, **keywords)
    if type(built) is not type(layer) and not isinstance(layer, type(built)):
        # a setting whose write changes nothing in either framework (inplace=True written after construction on a
        # LeakyReLU) can make the entry choose another Cell (InplaceLeakyReLU): the layer as built, without them
        table = load_writes().get(entry.torch, {})
        optional = {p.name for p in entry.signature or () if p.default is not None}
        settings = {k: v for k, v in settings.items()
                    if k == name or k not in optional or table.get(k, ("",))[0] != "same"}
        function, _, positional, keywords = adapter.mapped((), settings)
        built = function(*positional, **keywords)
    if type(built) is not type(layer) and not isinstance(layer, type(built)):
        raise Unsupported(f"mindport: writing {entry.torch}.{name}={value!r} needs a {type(built).__name__}, "
                          f"the layer is a {type(layer).__name__}: build the layer with {name}={value!r}")
    _move_settings(built, layer)
    # a parity run records each Cell's constructor arguments for its settings check (validators/parity/configs.py):
    # the layer's record is now the rebuilt one's, else the check reads the old value (DeepLabV3+'s dilated
    # MobileNetV2: "known trap in the settings: stride differs: torch stride=(1, 1), MindSpore stride=2", with the
    # outputs equal). Only where that module is loaded already: the run-time never imports the validators
    configs = sys.modules.get("mindport.validators.parity.configs")
    if configs is not None and built in configs._CTOR_ARGS:  # noqa: SLF001
        configs._CTOR_ARGS[layer] = configs._CTOR_ARGS[built]  # noqa: SLF001
    if name not in vars(built):  # a kept setting (inplace): recorded under torch's name, as the converter does
        setattr(layer, name, value)


def _move_settings(built: Any, layer: Any) -> None:
    """The primitives and plain settings of ``built`` onto ``layer``, and those of each sub-Cell onto the sub-Cell
    of the same name and class (MindSpore's BatchNorm3d keeps its BatchNorm2d as ``bn2d``)."""
    base = _cell_base_keys()
    prim = _primitive_class()
    for key, new in vars(built).items():
        if key.startswith("_") or key in base:
            continue
        if isinstance(new, prim) or _plain_setting(new):
            setattr(layer, key, new)
    for key, child in built._cells.items():
        own = layer._cells.get(key)
        if own is not None and child is not None and type(own) is type(child):
            _move_settings(child, own)


@functools.lru_cache(maxsize=1)
def _cell_base_keys() -> frozenset:
    from mindspore.nn import Cell

    return frozenset(vars(Cell()))


@functools.lru_cache(maxsize=1)
def _primitive_class() -> type:
    from mindspore.ops import Primitive

    return Primitive


def layer_entry(layer: Any):
    """The torch layer entry of a MindSpore Cell: the first class along its MRO that is an entry's nn target
    (a reparametrized or user subclass reads as its base), or None."""
    for cls in type(layer).__mro__:
        entry = _layer_entries().get(cls)
        if entry is not None:
            return entry
    return None


@functools.lru_cache(maxsize=1)
def _cell_class() -> type:
    from mindspore.nn import Cell

    return Cell


def class_name(obj: Any) -> str:
    """``type(m).__name__`` / ``m.__class__.__name__``: torch's class name for an object whose class is the
    MindSpore class of a torch layer's entry (a ``Dense`` reads ``"Linear"``, as ``classname.find('Linear')`` in an
    init function expects), else the class's own name (a class of the model's: its name). A layer given
    weight_norm/spectral_norm reads its own class's name (the runtime's subclass keeps it in ``_mp_reparametrized_of``;
    torch's class does not change)."""
    cls = type(obj)
    while "_mp_reparametrized_of" in vars(cls):
        cls = cls._mp_reparametrized_of
    entry = _layer_entries().get(cls)
    return entry.torch.rsplit(".", 1)[1] if entry is not None else cls.__name__


def _surface():
    from mindport.mappings.surface import load_surface

    return load_surface()


def _surface_paths(entry: Entry) -> dict[str, str]:
    from mindport.mappings.surface import attribute_paths

    return attribute_paths(entry)


@functools.lru_cache(maxsize=1)
def _layer_entries() -> dict:
    """MindSpore class -> the torch layer entry it is the nn target of (first entry wins), or the target one of its
    arguments switches to (``ELU(alpha=0.5)`` builds mindport's ELU)."""
    found: dict = {}
    switched: dict = {}
    for entry in load_registry():
        target = entry.target("nn")
        if entry.kind != "layer" or not entry.supported or not target or target.startswith("."):
            continue
        for name, into in ((target, found), *((t, switched) for c in entry.switch.values() for t in c.values())):
            try:
                cls = _resolve(name)
            except (ImportError, AttributeError):
                continue
            if isinstance(cls, type):
                into.setdefault(cls, entry)
            if name in SETTINGS_LAYERS:  # MindSpore's own class, which a project reading no setting back builds
                try:
                    native = _resolve(SETTINGS_LAYERS[name])
                except (ImportError, AttributeError):
                    continue
                into.setdefault(native, entry)
    return {**switched, **found}


class Adapter:
    """One torch API, callable with torch's arguments; calls its MindSpore target with the entry's arguments."""

    def __init__(self, entry: Entry, profile: str = "nn") -> None:
        self.entry = entry
        self.profile = profile
        self.torch_name = entry.torch
        self.__name__ = self.__qualname__ = entry.torch.rsplit(".", 1)[1]
        self.__doc__ = f"{entry.torch}, called with torch's arguments (mindport.runtime.adapt)."

    @functools.cached_property
    def target_name(self) -> str:
        return self.entry.resolve(self.profile)[0]

    @functools.cached_property
    def target(self) -> Any:
        """The MindSpore callable (None for a ``.method`` target, which is looked up on the receiver)."""
        return None if self.target_name.startswith(".") else _resolve(self.target_name)

    def __call__(self, *args, **kwargs):
        if in_graph():  # MindSpore compiles this: the mapping (a try, eval) stays in Python, out of the graph
            return self._graph_call(args, kwargs)
        function, receiver, positional, keywords = self.mapped(args, kwargs)
        if isinstance(function, str):  # a ``.method`` target
            return getattr(receiver, function[1:])(*positional, **keywords)
        if receiver is not None:  # a method entry whose target is a function: the receiver goes first
            return function(receiver, *positional, **keywords)
        return function(*positional, **keywords)

    def _graph_call(self, args, kwargs):
        """The call compiled in a graph (``self.activation = F.relu if ... else F.gelu`` then ``self.activation(x)``
        in ``construct``): one positional argument and no keyword, mapped once in Python (:attr:`graph_form`); any
        other call, through :attr:`graph_function` (torch's signature, the entry's mapping written out)."""
        if kwargs or len(args) != 1:
            if self.graph_function is not None:
                return self.graph_function(*args, **kwargs)
            raise TypeError("mindport: in GRAPH_MODE an adapter of a torch function takes one positional argument "
                            "and no keyword (its mapping runs in Python); call the MindSpore function instead")
        if self.graph_form is None:
            raise TypeError("mindport: this torch function has no MindSpore form for one argument known only at run "
                            "time; call the MindSpore function instead")
        return self.graph_form[0](args[0], **self.graph_form[1])

    @functools.cached_property
    def graph_form(self) -> tuple[Any, dict] | None:
        """(MindSpore function, constant keywords) a call with one positional argument of unknown value maps to, when
        the entry's steps decide it from the source alone (no value-dependent transform, a function target); else
        None. Computed in Python, read as a constant by the graph compiler."""
        if self.entry.kind != "function":
            return None
        try:
            target, _, ordered = self._map_sources([("", None, Arg("_mp_value_0", True), Extra("_mp_value_0"))])
        except TypeError:
            return None
        if target.startswith(".") or not ordered or ordered[0] != (None, "_mp_value_0"):
            return None
        keywords: dict[str, Any] = {}
        for keyword, source in ordered[1:]:
            if keyword is None:
                return None
            try:
                keywords[keyword] = ast.literal_eval(source)
            except (ValueError, SyntaxError):
                return None
        return (self.target if target == self.target_name else _resolve(target)), keywords

    @functools.cached_property
    def graph_function(self):
        """A function with torch's signature whose body is the entry's mapping applied to its parameter names, the
        MindSpore call the converter writes for ``F.conv2d(input, weight, bias=bias, ..., padding=padding)``:
        ``mindport.runtime.nn_functional.conv2d(input, weight, bias=bias, ..., padding=(0 if isinstance(padding,
        str) else padding), pad_mode=(...))``. A graph compiles it (a value-dependent choice stays a conditional
        expression in the graph), so a torch function held as a value (PiDiNet's ``self.pdc = F.conv2d``, called as
        ``self.pdc(x, w, b, stride, padding, dilation, groups)``) compiles with any arguments. None for an entry
        with ``*args``/``**kwargs``, a ``.method`` target, or steps that refuse an argument known only by name."""
        if self.entry.kind != "function" or not self.entry.signature:
            return None
        params = list(self.entry.signature)
        if any(p.kind not in ("positional", "keyword_only") for p in params):
            return None
        items = [("", p.name, Arg(p.name, True), Extra(p.name, keyword=p.name)) for p in params]
        try:
            target, receiver, ordered = self._map_sources(items)
        except (TypeError, ValueError, KeyError):
            return None
        if target.startswith(".") or receiver is not None:
            return None
        return _graph_function(f"{self.torch_name}_{self.profile}", target, params, ordered)  # one per profile

    def _map_sources(self, items) -> tuple[str, str | None, list[tuple[str | None, str]]]:
        """The entry's steps on argument sources: (target name, the receiver's source for a ``.method`` target of a
        function entry or None, [(keyword or None, source)] in MindSpore order, a ``*args`` slot spread out)."""
        entry = self.entry
        try:
            mapped = map_arguments(entry, bind(entry, items), self.profile)
        except CallBindError as exc:
            raise TypeError(f"{entry.torch}: {exc}") from None
        except _MappingUnsupported as exc:
            raise Unsupported(f"{entry.torch}: {exc}") from None
        target = switched_target(mapped, self.target_name)  # the entry's `switch` may send the call elsewhere
        receiver = None  # a method entry's receiver is its first argument, taken before the mapping
        if target.startswith(".") and entry.kind != "method":
            receiver = mapped.pop(receiver_name(entry, mapped)).source
        ordered: list[tuple[str | None, str]] = []
        for keyword, arg in ordered_arguments(entry, mapped, self.profile):
            if arg.source == VARARGS:
                ordered += [(extra.keyword, extra.source) for extra in arg.node]
            else:
                ordered.append((keyword, arg.source))
        return target, receiver, ordered

    def mapped(self, args, kwargs) -> tuple[Any, Any, list, dict]:
        """torch's arguments -> (the MindSpore callable, or ``".name"`` for a method target; the receiver of a method
        entry or None; positional arguments; keyword arguments), through the entry's steps."""
        entry = self.entry
        receiver = None
        if entry.kind == "method":
            if not args:
                raise TypeError(f"{entry.torch} needs the tensor it is called on")
            receiver, args = args[0], args[1:]
        namespace: dict[str, Any] = {}
        items = [("", None, _arg(value, namespace), Extra(_source(value, namespace))) for value in args]
        items += [("", key, _arg(value, namespace), Extra(_source(value, namespace), keyword=key))
                  for key, value in kwargs.items()]
        target, receiver_source, ordered = self._map_sources(items)
        namespace["mindspore"] = _mindspore()
        if receiver_source is not None:
            receiver = _evaluate(receiver_source, namespace)
        positional: list = []
        keywords: dict[str, Any] = {}
        for keyword, source in ordered:
            if keyword is None:
                positional.append(_evaluate(source, namespace))
            else:
                keywords[keyword] = _evaluate(source, namespace)
        if target.startswith("."):
            return target, receiver, positional, keywords
        return (self.target if target == self.target_name else _resolve(target)), receiver, positional, keywords

    # --- standing for the target where code treats the API as a value
    def __instancecheck__(self, obj) -> bool:
        return isinstance(self.target, type) and isinstance(obj, self.target)

    def __subclasscheck__(self, cls) -> bool:
        return isinstance(self.target, type) and isinstance(cls, type) and issubclass(cls, self.target)

    def __mro_entries__(self, bases):
        """``class Norm(norm_layer)``: the MindSpore class is the base."""
        if not isinstance(self.target, type):
            raise TypeError(f"{self.torch_name} is not a class: it cannot be a base class")
        return (self.target,)

    def __eq__(self, other) -> bool:
        if isinstance(other, Adapter):
            return self.entry is other.entry and self.profile == other.profile
        return self.target is not None and other is self.target

    def __hash__(self) -> int:
        return hash(self.target) if self.target is not None else hash((self.torch_name, self.profile))

    def __repr__(self) -> str:
        return f"mp_adapt.api({self.torch_name!r}{'' if self.profile == 'nn' else f', {self.profile!r}'})"


# ------------------------------------------------------------------------------------------- class adapters

@functools.lru_cache(maxsize=None)
def _metaclass(base_meta: type) -> type:
    """The metaclass of the adapter classes whose target's metaclass is ``base_meta``."""

    class AdapterMeta(base_meta):
        def __call__(cls, *args, **kwargs):
            adapter = cls.__dict__.get("_mp_adapter")
            if adapter is None:  # a class the user derived from an adapter: an ordinary class
                return super().__call__(*args, **kwargs)
            return adapter(*args, **kwargs)

        def __instancecheck__(cls, obj) -> bool:
            adapter = cls.__dict__.get("_mp_adapter")
            return isinstance(obj, adapter.target) if adapter is not None else super().__instancecheck__(obj)

        def __subclasscheck__(cls, sub) -> bool:
            adapter = cls.__dict__.get("_mp_adapter")
            if adapter is None:
                return super().__subclasscheck__(sub)
            # by the MRO, not issubclass: an ABC target (mindspore.Parameter) walks its subclasses, this class among
            # them, and issubclass would walk back here
            return adapter.target in getattr(sub, "__mro__", ())

        def __eq__(cls, other) -> bool:
            adapter = cls.__dict__.get("_mp_adapter")
            if adapter is None:
                return cls is other
            return other is cls or other is adapter.target

        def __hash__(cls) -> int:
            adapter = cls.__dict__.get("_mp_adapter")
            return hash(adapter.target) if adapter is not None else id(cls)

        def __repr__(cls) -> str:
            adapter = cls.__dict__.get("_mp_adapter")
            return repr(adapter) if adapter is not None else super().__repr__()

    return AdapterMeta


def _torch_settings(adapter: "Adapter", args, kwargs) -> dict[str, Any]:
    """torch's constructor arguments of a layer subclass's ``Base.__init__(self, ...)`` call, bound to the entry's
    torch signature with its defaults (read with ``ast.literal_eval``), the plain values only (None, numbers, strings,
    tuples of them): what torch's layer keeps as attributes (LoRA's Embedding reads ``self.max_norm``, which
    MindSpore's Embedding does not keep)."""
    bound: dict[str, Any] = {}
    params = [p for p in adapter.entry.signature or () if p.kind in ("positional", "keyword_only")]
    for param, value in zip([p for p in params if p.kind == "positional"], args):
        bound[param.name] = value
    for param in params:
        if param.name in kwargs:
            bound[param.name] = kwargs[param.name]
        elif param.name not in bound and param.default is not None:
            try:
                bound[param.name] = ast.literal_eval(param.default)
            except (ValueError, SyntaxError):
                continue
    return {k: v for k, v in bound.items() if _plain_setting(v)}


def _plain_setting(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_plain_setting(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _adapter_class(adapter: "Adapter") -> type:
    """A class standing for a class target: calling it maps torch's arguments (``adapter``), and it derives from the
    MindSpore class."""
    target = adapter.target

    def __init__(self, *args, **kwargs):
        """A class derived from the adapter class (``class Conv2dSame(nn.Conv2d)``) calls ``super().__init__`` with
        torch's arguments: they are mapped through the same entry before the MindSpore class's ``__init__``."""
        function, _, positional, keywords = adapter.mapped(args, kwargs)
        if function is not target and not (isinstance(function, type) and issubclass(function, target)):
            raise Unsupported(f"{adapter.torch_name}: a subclass can't become {function.__name__} (the entry's switch "
                              f"chose it for these arguments); pass the arguments it takes by default")
        if function is not target:  # CLeakyReLU(0.1, inplace=True): the subclass over InplaceLeakyReLU, before the
            # switched Cell's __init__ runs (its zero-argument super() needs an instance of it: class
            # Fp32LayerNorm(nn.LayerNorm) built with bias=False over OptionalAffineLayerNorm)
            object.__setattr__(self, "__class__", _switched_class(type(self), function))
        function.__init__(self, *positional, **keywords)
        if isinstance(self, _ms.Parameter) and not self.requires_grad:  # made frozen: still one of torch's
            self._mp_frozen = True  # parameters(), never a buffer (mindport.runtime.frozen)
        for name, value in _torch_settings(adapter, args, kwargs).items():
            # torch keeps it, the MindSpore layer does not (device/dtype: torch's factory arguments, not kept)
            if not name.startswith("_") and name not in ("device", "dtype") and not hasattr(self, name):
                setattr(self, name, value)

    namespace = {"_mp_adapter": adapter, "__module__": __name__, "__doc__": adapter.__doc__,
                 "__qualname__": adapter.__name__, "__init__": __init__}
    if issubclass(target, _ms.Parameter):
        namespace["__new__"] = _parameter_new(adapter)
    return _metaclass(type(target))(adapter.__name__, (target,), namespace)


_PARAMETER_CLASSES: dict[tuple[type, type], type] = {}


def _parameter_new(adapter: "Adapter"):
    """``__new__`` of the class standing for torch.nn.Parameter, for a class derived from it (``class
    Parameter(nn.Parameter)`` with methods of its own, built as ``Parameter(data=x, requires_grad=False)``).
    MindSpore's ``Parameter.__new__`` takes no torch argument names and returns an object of its own class whatever
    class it is called for, so the subclass's ``__init__`` never ran ("'Parameter' object has no attribute
    '_param_info'") and its methods were missing: the object is made by ``Parameter.__new__`` from the mapped
    arguments and given a class deriving from both the subclass and that object's class (one per pair)."""

    def __new__(cls, *args, **kwargs):
        _, _, positional, keywords = adapter.mapped(args, kwargs)
        data = positional[0] if positional else keywords.get("default_input")
        obj = _ms.Parameter.__new__(_ms.Parameter, data)
        key = (cls, type(obj))
        if key not in _PARAMETER_CLASSES:
            metas = (type(cls), type(type(obj)))
            meta = metas[0] if issubclass(*metas) else type("ParameterMeta", metas, {})
            _PARAMETER_CLASSES[key] = meta(cls.__name__, key, {"__module__": cls.__module__,
                                                               "__qualname__": cls.__qualname__})
        obj.__class__ = _PARAMETER_CLASSES[key]
        return obj

    return __new__


def _switched_class(cls: type, function: type) -> type:
    """``cls`` over the Cell the entry's switch chose (:func:`mindport.runtime.layers.switched_class`)."""
    from mindport.runtime.layers import switched_class

    return switched_class(cls, function)


# ------------------------------------------------------------------------------------------------ the values

def _literal(value: Any) -> bool:
    """A value whose ``repr`` reads back as the same literal (what a transform can reason about, as in source)."""
    if isinstance(value, (tuple, list)):
        return type(value) in (tuple, list) and all(_literal(v) for v in value)
    if type(value) not in _LITERAL_TYPES:
        return False
    if isinstance(value, (float, complex)):
        try:
            return ast.literal_eval(repr(value)) == value
        except (ValueError, SyntaxError):
            return False  # nan, inf
    return True


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, also inside a list or tuple (``stride=[np.int64(2)] * 2``, sizes read from a
    numpy array); torch accepts both, a transform reads the Python literal."""
    if type(value) in (tuple, list):
        plain = [_plain(v) for v in value]
        return value if all(p is v for p, v in zip(plain, value)) else type(value)(plain)
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        return item()
    return value


def layer_sizes(**values: Any) -> tuple:
    """torch's size arguments, given by name and known only at run time, as MindSpore takes them, in the order given:
    a value class's ``__init__`` and factory (``TorchConv2d``, the converter's native form of ``nn.Conv2d`` used as a
    value or a base) start with ``kernel_size, stride, padding, dilation = mp_adapt.layer_sizes(kernel_size=
    kernel_size, ...)``. Each value takes the adapter's own path: the value as source (:func:`_source`: a numpy number
    as its int, a literal as its ``repr``), the entry mapping's reading of that name
    (:func:`mindport.mappings.arguments.implicit_source`: ``stride=[1]`` -> ``1``, ``[2, 2]`` -> ``(2, 2)``), evaluated."""
    out = []
    for name, value in values.items():
        namespace: dict[str, Any] = {}
        source = _source(value, namespace)
        mapped = implicit_source(name, Arg(source, True))
        out.append(_evaluate(mapped, namespace))
    return tuple(out)


def _source(value: Any, namespace: dict[str, Any]) -> str:
    value = _plain(value)
    if _literal(value):
        return repr(value)
    name = f"_mp_value_{len(namespace)}"
    namespace[name] = value
    return name


def _arg(value: Any, namespace: dict[str, Any]) -> Arg:
    return Arg(_source(value, namespace), True)


@functools.lru_cache(maxsize=4096)
def _compiled(source: str):
    return compile(source, "<mindport.runtime.adapt>", "eval")


def _evaluate(source: str, namespace: dict[str, Any]) -> Any:
    if "mindport.runtime." in source:  # a transform's runtime helper (mindport.runtime.optim.distinct_names)
        namespace.setdefault("mindport", _runtime_root(source))
    return eval(_compiled(source), {"__builtins__": __builtins__}, namespace)  # noqa: S307 - the entry's own source


@functools.lru_cache(maxsize=256)
def _runtime_root(source: str):
    """The ``mindport`` package with the runtime modules ``source`` names imported."""
    for module in set(re.findall(r"mindport\.runtime\.\w+", source)):
        importlib.import_module(module)
    return importlib.import_module("mindport")


@functools.lru_cache(maxsize=1)
def _mindspore():
    import mindspore

    return mindspore


_GRAPH_FUNCTIONS: dict[str, str] = {}  # file name -> source of the functions graph_function wrote


def _graph_function(key: str, target: str, params, ordered):
    """The function :attr:`Adapter.graph_function` describes, compiled from generated source registered with
    ``linecache`` under a file name of its own, so MindSpore's graph parser (``inspect.getsource``) reads it."""
    import linecache

    signature = []
    for p in params:
        if p.kind == "keyword_only" and "*" not in signature:
            signature.append("*")
        signature.append(p.name if p.default is None else f"{p.name}={p.default}")
    arguments = ", ".join(source if keyword is None else f"{keyword}={source}" for keyword, source in ordered)
    modules = sorted({m for m in re.findall(r"(?:mindport\.runtime|mindspore)(?:\.\w+)*", f"{target} {arguments}")})
    name = re.sub(r"\W", "_", key)
    lines = ["import mindspore", "import mindport.runtime"]
    lines += [f"import {_module_of(m)}" for m in modules if _module_of(m) not in ("mindspore", "mindport.runtime")]
    lines += ["", "", f"def {name}({', '.join(signature)}):", f"    return {target}({arguments})", ""]
    source = "\n".join(lines)
    filename = f"{__file__[:-3]}_graph/{name}.py"  # not on disk: linecache holds it
    _GRAPH_FUNCTIONS[filename] = source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"mindport.runtime._adapt_graph_{name}")  # MindSpore imports a function's __module__
    module.__file__ = filename
    module.__loader__ = _SourceLoader(source)  # linecache reads it again after a clearcache()
    sys.modules[module.__name__] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the entry's own mapping, written out
    return getattr(module, name)


class _SourceLoader:
    """The loader of a generated module: ``get_source`` only (what linecache and inspect ask)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def get_source(self, name: str) -> str:
        return self.source


def _module_of(dotted: str) -> str:
    """The longest importable module of a dotted name (``mindport.runtime.nn_functional.conv2d`` ->
    ``mindport.runtime.nn_functional``)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        return ".".join(parts[:i])
    return parts[0]


@functools.lru_cache(maxsize=None)
def _resolve(dotted: str) -> Any:
    """``mindspore.nn.Conv2d`` -> the object: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import {dotted}")
