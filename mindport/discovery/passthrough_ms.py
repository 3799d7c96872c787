"""The MindSpore twin of ``mindport.discovery.passthrough_torch.Passthrough``: a Cell returning its first argument,
any others accepted (GRAPH_MODE compiles it), with the same unread parameter."""
from __future__ import annotations

import hashlib
import linecache
import sys
import types

from mindspore import nn, ops

from mindport.discovery.stand_in_sizes import SIZE_ATTRIBUTE, WIDTH


class Passthrough(nn.Cell):
    def __init__(self):
        super().__init__()
        import mindspore

        self.anchor = mindspore.Parameter(mindspore.ops.zeros(1, mindspore.float32))

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if SIZE_ATTRIBUTE.fullmatch(name):
                return WIDTH  # the torch stand-in's width (stand_in_sizes)
            raise

    def construct(self, x, *args, **kwargs):
        return x

    def __call__(self, *args, **kwargs):
        if not args or (isinstance(args[0], int) and not isinstance(args[0], bool)):
            # called as the layer class it stands for: ``norm_layer(out_planes)``, ``act_layer(inplace=True)`` (a
            # required ``norm_layer: Callable[..., nn.Module]``, wangji9/classification-models-pytorch's
            # EfficientNet InvertedResidual: its int went into ``nn.Sequential``, "int is not a Module subclass")
            return type(self)()
        return super().__call__(*args, **kwargs)


class Activation(Passthrough):
    """The MindSpore twin of ``passthrough_torch.Activation``: tanh."""

    def construct(self, x, *args, **kwargs):
        return ops.tanh(x)  # no import here: GRAPH_MODE refuses one in construct


def table(rows: int, columns: int):
    """The MindSpore twin of ``passthrough_torch.table``: the same values as a ``mindspore.Tensor``."""
    import mindspore
    import numpy as np

    return mindspore.Tensor(np.linspace(-1.0, 1.0, rows * columns, dtype=np.float32).reshape(rows, columns))


_CALLS: dict = {}


def converted_call(code: str, namespace: dict) -> tuple:
    """(args, kwargs) of a converted constructor call whose conversion defines names of its own (a torch layer class
    handed as a value, ``norm_layer=nn.BatchNorm2d``, becomes a class the conversion writes, ``TorchBatchNorm2d``):
    ``code`` (those definitions, then ``_mindport_ctor = _mindport_call(...)``) run in a copy of the model module's
    namespace (a module of its own). Once per code and namespace: the ``*args`` and ``**kwargs`` halves of the call
    get the same objects. The text is registered with ``linecache`` under a name of its own, as IPython does with a cell: GRAPH_MODE reads
    the source of every function it compiles (``inspect.getsourcelines``), and a function defined by text without a
    source (``f=F.relu`` handed to a model is the conversion's ``def torch_relu``) failed to compile ("Mindspore can
    not compile temporary source code in terminal")."""
    key = (code, id(namespace))
    if key not in _CALLS:
        name = f"_mindport_constructor_{hashlib.sha256(code.encode()).hexdigest()[:12]}"
        filename = f"<{name}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        module = types.ModuleType(name)
        module.__dict__.update({k: v for k, v in namespace.items() if not k.startswith("__")})
        module.__dict__.update(__name__=name, __file__=filename, _mindport_call=lambda *args, **kwargs: (args, kwargs))
        sys.modules[name] = module  # the graph parser resolves a function's globals through its __module__
        exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - our own conversion's text
        _CALLS.clear()
        _CALLS[key] = module.__dict__["_mindport_ctor"]
    return _CALLS[key]
