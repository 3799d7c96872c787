"""A layer's configuration on each side, as plain data for the trap rules: torch modules' attributes, and MindSpore
cells' recorded constructor arguments (cells keep only some of them as attributes), read inside each side."""
from __future__ import annotations

import contextlib
import enum
import weakref

_CTOR_ARGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def record_constructor_args():
    """While active, every new MindSpore Cell remembers its constructor arguments (for the config comparison).

    ``mindspore.nn.Cell.__new__`` receives the same arguments as ``__init__``; it is wrapped for the duration and
    restored afterwards.
    """
    from mindspore import nn

    original = vars(nn.Cell)["__new__"]
    inner = original.__func__

    def recording_new(class_, *args, **kwargs):
        cell = inner(class_, *args, **kwargs)
        if args or kwargs:  # copy.deepcopy (TransformerEncoder's layer copies) calls __new__ with nothing
            with contextlib.suppress(TypeError):
                _CTOR_ARGS[cell] = (args, kwargs)
        return cell

    nn.Cell.__new__ = staticmethod(recording_new)
    try:
        yield
    finally:
        nn.Cell.__new__ = original


_SCALARS = (bool, int, float, str, type(None))


def _builtin(value):
    """``value`` (an instance of one of ``_SCALARS``, maybe of a subclass such as a str Enum) as that builtin type."""
    if type(value) in _SCALARS:
        return value
    value = value.value if isinstance(value, enum.Enum) else value
    for kind in _SCALARS[:-1]:  # bool before int: a bool is an int
        if isinstance(value, kind):
            return kind(value)
    return str(value)


def _plain(value):
    """A JSON-friendly rendering of a configuration value, or None-marker ``...`` when it is not a plain value.
    Always of builtin types: a project's ``class Format(str, Enum)`` member (timm's ``fmt``) is its value's builtin
    form, since the record travels to a parent process that cannot import the project's classes."""
    if isinstance(value, _SCALARS):
        return _builtin(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, _SCALARS) for v in value):
        return tuple(_builtin(v) for v in value)
    if hasattr(value, "dtype") and not hasattr(value, "shape"):  # a dtype object
        return str(value)
    return ...


_TORCH_SKIP = {"training", "inplace"}
_MS_SKIP = {
    "training", "requires_grad", "is_top_cell", "arguments_key", "mixed_precision_type", "cell_type",
    "grad_ops_label", "has_bprop", "parallel_mode", "data_format", "format", "ascend_910b_target", "is_expand",
    "is_expand_3d", "activation_flag", "use_pad", "is_valid", "is_same", "is_pad", "shp_flat", "dtype",
    "weight_init", "bias_init", "gamma_init", "beta_init", "moving_mean_init", "moving_var_init",
}
# Attributes of internal primitives that the Cell does not keep itself.
_PRIM_KEYS = {"count_include_pad", "axis", "ceil_mode", "output_size", "divisor_override"}


def torch_config(module) -> dict:
    cfg = {}
    for key, value in vars(module).items():
        if key.startswith("_") or key in _TORCH_SKIP:
            continue
        plain = _plain(value)
        if plain is not ...:
            cfg[key] = plain
    params = getattr(module, "_parameters", {})
    if "bias" in params:
        cfg["bias"] = params["bias"] is not None
    return cfg


def ms_config(cell) -> dict:
    """Constructor arguments (with defaults) when recorded, else the cell's plain attributes; a mindport.runtime
    Cell's plain attributes besides its constructor arguments."""
    import inspect

    cfg = {}
    recorded = _CTOR_ARGS.get(cell)
    if recorded is not None:
        args, kwargs = recorded
        try:
            bound = inspect.signature(type(cell).__init__).bind(None, *args, **kwargs)
            bound.apply_defaults()
            for key, value in list(bound.arguments.items())[1:]:
                if key in _MS_SKIP:
                    continue
                plain = _plain(value)
                if plain is not ...:
                    cfg[key] = plain
        except TypeError:
            recorded = None
        if recorded is not None and isinstance(vars(cell).get("has_bias"), bool):
            # a switch construct reads on every call, changed after construction (a bias given to a layer built
            # without one: mp_adapt.set_layer_attribute): its value now, not the constructor's
            cfg["has_bias"] = vars(cell)["has_bias"]
    if recorded is not None and type(cell).__module__.startswith("mindport.runtime"):
        # mindport's own layers keep torch's attribute names: what the constructor does not take is read there
        # (UpsamplingBilinear2d's align_corners=True, fixed by the class as torch's is)
        for key, value in vars(cell).items():
            if not key.startswith("_") and key not in _MS_SKIP and key not in cfg and _plain(value) is not ...:
                cfg[key] = _plain(value)
    if recorded is None:
        for key, value in vars(cell).items():
            if key.startswith("_") or key in _MS_SKIP:
                continue
            plain = _plain(value)
            if plain is not ...:
                cfg[key] = plain
        if "momentum" in cfg and "BatchNorm" in type(cell).__name__ and isinstance(cfg["momentum"], float):
            # nn.BatchNorm stores torch's convention internally (1 - the constructor's momentum)
            cfg["momentum"] = round(1.0 - cfg["momentum"], 12)
        for value in vars(cell).values():
            attrs = getattr(value, "attrs", None)
            if isinstance(attrs, dict) and type(value).__module__.startswith("mindspore.ops"):
                for key in _PRIM_KEYS & attrs.keys():
                    plain = _plain(attrs[key])
                    if plain is not ... and key not in cfg:
                        cfg[key] = plain[0] if key == "axis" and isinstance(plain, tuple) and len(plain) == 1 else plain
    return cfg
