"""``torch.nn.init`` with torch's signatures, for the calls the converter's init rule does not rewrite in place.

A direct ``nn.init.kaiming_normal_(m.weight, ...)`` becomes ``m.weight.set_data(initializer(HeNormal(...), ...))``
(the rule in ``mindport/migrator/rules/init_calls.py``). These functions cover the rest: an initialiser passed by reference
(``init_fn = nn.init.xavier_uniform_``, ``partial(nn.init.normal_, std=0.02)``), asymmetric ``uniform_`` bounds,
``dirac_``, ``sparse_``, ``kaiming_*`` with ``'selu'`` (MindSpore's gain table has no selu) and ``calculate_gain``
(MindSpore has no public one). MindSpore 2.10 has no CPU kernel for the in-place Tensor init methods
(``InplaceUniform``, ``InplaceFillScalar``), so each function builds the data with ``mindspore.common.initializer``
and replaces the Parameter's data (``set_data``; ``assign_value`` for a plain Tensor). With ``generator=``
(a torch.Generator, converted to mindspore.Generator) the fill draws from that generator's own stream (``_fill``):
not torch's numbers, but two generators seeded alike fill alike.

Not in a static graph: the initialisers compute their data on the host (numpy, ``mindspore.common.initializer``) and
replace a Parameter's data, which graph code cannot do; inside ``construct``/``@jit`` (compiled, or run as Python
through MindSpore's JIT Fallback) they raise a RuntimeError saying so (their mapping entries carry ``graph``, and lint MS414 flags the call). Initialise in ``__init__``.
"""
from __future__ import annotations

import math

from mindspore.common import initializer as _init

from mindport.mappings.gains import torch_gain
from mindport.runtime._graph import host_only


# the guard's words (``_graph.host_only``: raised while compiled in a graph or run for one through the JIT Fallback,
# where a fill would run once at compile time and the graph keep reading the value it found: measured on 2.10)
_HOST = ("torch.nn.init functions fill a Parameter on the host and can't run in a static graph (construct under "
         "GRAPH_MODE, @jit): initialise in __init__")


def _fill(tensor, init, shift=0.0, generator=None):
    """The initializer's data into ``tensor``. With ``generator=`` (torch's, converted to mindspore.Generator) the
    initializer draws from that generator's own stream: MindSpore's initializers seed their draws from the weights'
    stream (mindport.runtime.numpy_stream), seeded here from the generator for this one fill and given back after (two
    generators seeded alike fill alike; the weights' and NumPy's streams do not move)."""
    if generator is None:
        data = _init.initializer(init, tensor.shape, tensor.dtype).init_data()
    else:
        from mindport.runtime.math import _generator_stream
        from mindport.runtime.numpy_stream import seeded_by

        with seeded_by(int(_generator_stream(generator, 1).integers(0, 2 ** 32))):
            data = _init.initializer(init, tensor.shape, tensor.dtype).init_data()
    if shift:
        data = data + shift
    if hasattr(tensor, "set_data"):
        tensor.set_data(data)
    else:
        tensor.assign_value(data)
    return tensor


def _fans(tensor):
    if len(tensor.shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_fan_in_and_fan_out(tensor):
    """torch.nn.init._calculate_fan_in_and_fan_out (private in torch, called by model code that bounds a bias the way
    torch's layers do): (fan_in, fan_out) from the shape. Weights keep torch's layout in MindSpore (a Conv1d weight is
    4-D there, with the same receptive field), so the fans are torch's."""
    return _fans(tensor)


def calculate_correct_fan(tensor, mode):
    """torch.nn.init._calculate_correct_fan: the fan ``mode`` names, 'fan_in' or 'fan_out' (any case)."""
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def calculate_gain(nonlinearity, param=None):
    """torch.nn.init.calculate_gain: torch's gain table (MindSpore's is private and has no 'selu'); the converter
    writes the number itself where the arguments are literals (``mindport.mappings.gains``)."""
    return torch_gain(nonlinearity, param)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """torch.nn.init.uniform_: U(a, b) as Uniform((b - a) / 2) shifted by (a + b) / 2 (Uniform is symmetric)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Uniform(scale=(b - a) / 2), shift=(a + b) / 2, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """torch.nn.init.normal_ (MindSpore's Normal defaults to sigma=0.01, so both are always passed)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Normal(sigma=std, mean=mean), generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """torch.nn.init.trunc_normal_: a and b are absolute bounds in both frameworks."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.TruncatedNormal(sigma=std, mean=mean, a=a, b=b), generator=generator)


def constant_(tensor, val):
    """torch.nn.init.constant_."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Constant(val))


def ones_(tensor):
    """torch.nn.init.ones_."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.One())


def zeros_(tensor):
    """torch.nn.init.zeros_."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Zero())


def eye_(tensor):
    """torch.nn.init.eye_ (2-D only, as in torch)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Identity())


def dirac_(tensor, groups=1):
    """torch.nn.init.dirac_ (3-, 4- or 5-D; the same centre index size // 2 as torch)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Dirac(groups=groups))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """torch.nn.init.xavier_uniform_: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.XavierUniform(gain=gain), generator=generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """torch.nn.init.xavier_normal_: N(0, gain * sqrt(2 / (fan_in + fan_out)))."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.XavierNormal(gain=gain), generator=generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """torch.nn.init.kaiming_uniform_: U(-b, b), b = sqrt(3) * gain / sqrt(fan), with torch's gain table."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    scale = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return _fill(tensor, _init.Uniform(scale=scale), generator=generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """torch.nn.init.kaiming_normal_: N(0, gain / sqrt(fan)), with torch's gain table."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Normal(sigma=_kaiming_std(tensor, a, mode, nonlinearity), mean=0.0), generator=generator)


def orthogonal_(tensor, gain=1, generator=None):
    """torch.nn.init.orthogonal_ (QR of a normal matrix, signs fixed by diag(R), scaled by gain; as torch)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Orthogonal(gain=gain), generator=generator)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """torch.nn.init.sparse_: N(0, std) with ceil(sparsity * rows) zeros in every column (2-D only)."""
    host_only(_HOST)  # before any initializer object is built (graph mode rejects those)
    return _fill(tensor, _init.Sparse(sparsity=sparsity, sigma=std), generator=generator)
