"""torch's in-place tensor operations (``x.sin_()``, ``torch.relu_(x)``, ``F.elu_(x)``, ``x.uniform_(-a, a)``, …).

MindSpore 2.10 has a few in-place Tensor methods, but most have no CPU kernel (``The kernel InplaceZero
unregistered``) and many torch ones do not exist. Each function here computes the out-of-place result with CPU
operations and writes it back into the receiver, which keeps its identity (other names for the tensor, a
Parameter, see the update) and its dtype (torch's rule: ``x.eq_(y)`` on float ``x`` stores 0./1. floats), and
returns the receiver, like torch.

How the update is written (measured on MindSpore 2.10, CPU):

* PyNative mode: ``Tensor.assign_value``. It also moves the autograd history onto the receiver, so gradients
  through ``h.sin_(); loss(h)`` match torch, provided the operation reads a copy of the receiver (``_src``): without
  the copy its backward would read the overwritten values. MindSpore's own in-place methods (``x.add_``,
  ``x.mul_``, ``x.remainder_``) do not do this: after ``h = 3 * x; h.add_(1)`` the gradient of ``(h * h).sum()``
  is 18x where torch gives 6(3x + 1).
* Graph mode (``ms.jit``, ``GRAPH_MODE`` Cells): ``assign_value`` can't be compiled ("the 'Tensor' object's method
  'assign_value' is not supported in 'construct'"), so ``ops.assign`` is used instead (Parameters and tensors, same
  shape). Values match torch there, but graph-mode autodiff passes gradients through the update as if it were the
  identity (``h = 3 * x; h.sin_()`` then ``(h * h).sum() + h.sum()``: 3(2 sin 3x + 1) instead of
  3 cos 3x (2 sin 3x + 1)): code that is differentiated in graph mode should use the out-of-place operation.
  The update returns the value it wrote, not the receiver: code that uses the result (``y = relu(x)`` through
  ``ReLU(inplace=True)``, a ResNet's ``out = self.relu(out)`` after ``out += identity``) then depends on the value
  itself. A MindIR export (``mindspore.export``) keeps no order between in-place updates of tensors that are not
  Parameters: returning the receiver made an exported ResNet read its pre-update values (measured: 0.28 off on
  logits of about 1.1); an update whose result is never used (``x.relu_()`` as a statement, then ``x``) is still
  lost in MindIR, which ``mindport export`` reports at its layer. The shape-changing operations
  (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``, ``swapaxes_``, ``swapdims_``) can't be compiled in graph mode
  (``ops.assign`` needs equal shapes) and raise there; so do ``apply_``/``map_`` (a Python function per element
  needs the values on the host).

torch views: ``x[0].zero_()``, ``x.narrow(1, 0, 2).copy_(y)``, ``w.diagonal().fill_(1)`` update ``x``/``w`` in torch
(a view shares its base's storage); in MindSpore ``x[0]``, ``narrow`` and ``diagonal`` are copies, so the update is
lost (MindSpore's own in-place methods behave the same way). The converter writes an indexed view back
(``x[0] = mp_inplace.zero_(x[0])``) and any other chain of views through :func:`view_update`, which finds where each
element of the view lives in the base by taking the same views of the base's element positions, and writes the
updated view there.
"""
from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import ops

from mindport.mappings.views import CONJUGATE_ATTRIBUTES, PIECE_METHODS, VIEW_ATTRIBUTES, VIEW_METHODS
from mindport.runtime import math as mp_math
from mindport.runtime import nn_functional as mp_F
from mindport.runtime import special as mp_special
from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime.framework import set_data as _set_data
from mindport.runtime.containers import is_parameter

_FLOATS = (ms.float16, ms.float32, ms.float64, ms.bfloat16)


# --- writing the result back --------------------------------------------------------------------------------------

def _hooked_outside_a_differentiation(input) -> bool:
    """PyNative only: whether ``input`` has backward hooks (``register_hook``) while no differentiation is being
    recorded (not inside ``value_and_grad``'s forward)."""
    hooks = getattr(input, "hooks", None)
    if not callable(hooks) or not hooks():
        return False
    try:
        from mindspore.graph.api import _pynative_executor
    except ImportError:  # another MindSpore layout: take it as recording (assign_value, the general path)
        return False
    return not _pynative_executor.requires_grad()


def _store(input, value):
    """Write ``value`` (cast to the receiver's dtype) into ``input`` and return ``input``."""
    if value.dtype != input.dtype:
        value = value.astype(input.dtype)
    if value.shape != input.shape and value.size == input.size:
        value = value.reshape(input.shape)  # ops.rand(*()) of a 0-d receiver has shape (1,)
    if _in_graph():
        ops.assign(input, value)
        return value  # what follows reads the value, never the update's order (see the module docstring)
    if isinstance(input, ms.Parameter):
        # in place: assign_value gives a Parameter new storage, and an optimizer that has already stepped keeps
        # updating the old one (weight clipping after opt.step() froze the model: the loss repeated itself)
        _assign_parameter(input, value)
        return input
    if _hooked_outside_a_differentiation(input):
        # a tensor with backward hooks updated outside a differentiation (w.register_hook(fn) on a requires_grad
        # leaf updated by hand under no_grad, w -= lr * w.grad): assign_value drops the hooks (MindSpore 2.10),
        # torch's in-place update keeps them; ops.assign keeps them (no autograd history to move there)
        ops.assign(input, value)
        return input
    input.assign_value(value)
    return input


def _assign_parameter(param, value):
    """``ops.assign`` into a Parameter; one whose data was set to a view (RCAN's MeanShift:
    ``self.weight.data = torch.eye(3).view(3, 3, 1, 1)`` then ``self.weight.data.div_(std)``) is refused by MindSpore
    2.10's in-place check ("Not support view input for inplace op Assign"): it takes the value as new storage
    (assign_value), after which its in-place updates work again."""
    try:
        ops.assign(param, value)
    except RuntimeError as exc:
        if "view input for inplace op" not in str(exc):
            raise
        param.assign_value(value)


def _store_reshaped(input, value):
    """``_store`` for results with a different shape (PyNative only: graph mode can't change a tensor's shape)."""
    if _in_graph():
        raise RuntimeError("mindport: torch's shape-changing in-place operations (unsqueeze_, squeeze_, t_, "
                           "transpose_, swapaxes_, swapdims_) can't be compiled in graph mode; "
                           "write x = x.unsqueeze(dim) etc.")
    input.assign_value(value)
    return input


_KINDS = ((ms.bool_,), (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint16, ms.uint32, ms.uint64),
          _FLOATS, (ms.complex64, ms.complex128))


def _kind(dtype):
    return next((i for i, kinds in enumerate(_KINDS) if dtype in kinds), 2)


def write_out(out, value):
    """torch's ``out=`` argument (``torch.add(a, b, out=c)``, ``torch.max(x, 1, out=(v, i))``): the result written
    into ``out``, which keeps its identity and dtype (resized to the result's shape, as torch does), and ``out``
    returned. As in torch, a result of a higher kind (float into an integer ``out``, complex into a real one) is
    refused. ``out=None`` (torch's default) returns the result."""
    if out is None:
        return value
    if isinstance(out, (tuple, list)):
        values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if len(values) != len(out):
            raise TypeError(f"out= holds {len(out)} tensors, the result {len(values)}")
        return type(out)(write_out(o, v) for o, v in zip(out, values))
    if not isinstance(value, ms.Tensor):
        value = ms.Tensor(value)
    if _kind(value.dtype) > _kind(out.dtype):
        raise RuntimeError(f"result type {value.dtype} can't be cast to the desired output type {out.dtype}")
    if value.dtype != out.dtype:
        value = value.astype(out.dtype)
    if value.shape != out.shape:
        return _store_reshaped(out, value)
    return _store(out, value)


def _src(input):
    """The receiver as the operation's input: a copy, so the operation's backward never reads overwritten values."""
    return input.copy()


def _unary(op, name, torch_names):
    def fn(input):
        return _store(input, op(_src(input)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{torch_names}: ``{name.rstrip('_')}`` written into the receiver (see the module docstring)."
    return fn


def _binary(op, name, torch_names):
    def fn(input, other):
        return _store(input, op(_src(input), other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{torch_names}: ``{name.rstrip('_')}(input, other)`` written into the receiver (see the module " \
                 f"docstring)."
    return fn


def _compare(op, name):
    def fn(input, other):
        return _store(input, op(input, other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.Tensor.{name}: the comparison stored in the receiver's dtype (1/0 for a float receiver, " \
                 f"as in torch)."
    return fn


# --- element-wise, one argument -----------------------------------------------------------------------------------

abs_ = _unary(ops.abs, "abs_", "torch.Tensor.abs_ / torch.abs_")
absolute_ = _unary(ops.abs, "absolute_", "torch.Tensor.absolute_")
acos_ = _unary(ops.acos, "acos_", "torch.Tensor.acos_ / torch.acos_")
arccos_ = _unary(ops.acos, "arccos_", "torch.Tensor.arccos_ / torch.arccos_")
acosh_ = _unary(ops.acosh, "acosh_", "torch.Tensor.acosh_ / torch.acosh_")
arccosh_ = _unary(ops.acosh, "arccosh_", "torch.Tensor.arccosh_ / torch.arccosh_")
asin_ = _unary(ops.asin, "asin_", "torch.Tensor.asin_ / torch.asin_")
arcsin_ = _unary(ops.asin, "arcsin_", "torch.Tensor.arcsin_ / torch.arcsin_")
asinh_ = _unary(ops.asinh, "asinh_", "torch.Tensor.asinh_ / torch.asinh_")
arcsinh_ = _unary(ops.asinh, "arcsinh_", "torch.Tensor.arcsinh_ / torch.arcsinh_")
atan_ = _unary(ops.atan, "atan_", "torch.Tensor.atan_ / torch.atan_")
arctan_ = _unary(ops.atan, "arctan_", "torch.Tensor.arctan_ / torch.arctan_")
atanh_ = _unary(ops.atanh, "atanh_", "torch.Tensor.atanh_ / torch.atanh_")
arctanh_ = _unary(ops.atanh, "arctanh_", "torch.Tensor.arctanh_ / torch.arctanh_")
ceil_ = _unary(mp_math.ceil, "ceil_", "torch.Tensor.ceil_ / torch.ceil_ (an integer receiver: unchanged)")
floor_ = _unary(mp_math.floor, "floor_", "torch.Tensor.floor_ / torch.floor_ (an integer receiver: unchanged)")
trunc_ = _unary(ops.trunc, "trunc_", "torch.Tensor.trunc_ / torch.trunc_")
fix_ = _unary(ops.trunc, "fix_", "torch.Tensor.fix_ / torch.fix_")
frac_ = _unary(ops.frac, "frac_", "torch.Tensor.frac_ / torch.frac_")
cos_ = _unary(ops.cos, "cos_", "torch.Tensor.cos_ / torch.cos_")
cosh_ = _unary(ops.cosh, "cosh_", "torch.Tensor.cosh_ / torch.cosh_")
sin_ = _unary(ops.sin, "sin_", "torch.Tensor.sin_ / torch.sin_")
sinh_ = _unary(ops.sinh, "sinh_", "torch.Tensor.sinh_ / torch.sinh_")
tan_ = _unary(ops.tan, "tan_", "torch.Tensor.tan_ / torch.tan_")
tanh_ = _unary(mp_math.tanh, "tanh_", "torch.Tensor.tanh_ / torch.tanh_ (mindport.runtime.math.tanh: torch's precision)")
sigmoid_ = _unary(ops.sigmoid, "sigmoid_", "torch.Tensor.sigmoid_ / torch.sigmoid_")
relu_ = _unary(ops.relu, "relu_", "torch.Tensor.relu_ / torch.relu_ / torch.nn.functional.relu_")
selu_ = _unary(mp_F.selu, "selu_", "torch.selu_ / torch.nn.functional.selu_ (mindport.runtime.nn_functional.selu: torch's gradient)")
exp_ = _unary(ops.exp, "exp_", "torch.exp_")
exp2_ = _unary(ops.exp2, "exp2_", "torch.Tensor.exp2_ / torch.exp2_")
expm1_ = _unary(ops.expm1, "expm1_", "torch.Tensor.expm1_ / torch.expm1_")
log_ = _unary(ops.log, "log_", "torch.Tensor.log_ / torch.log_")
log10_ = _unary(ops.log10, "log10_", "torch.Tensor.log10_ / torch.log10_")
log1p_ = _unary(ops.log1p, "log1p_", "torch.Tensor.log1p_ / torch.log1p_")
log2_ = _unary(ops.log2, "log2_", "torch.Tensor.log2_ / torch.log2_")
sqrt_ = _unary(ops.sqrt, "sqrt_", "torch.Tensor.sqrt_ / torch.sqrt_")
rsqrt_ = _unary(ops.rsqrt, "rsqrt_", "torch.Tensor.rsqrt_ / torch.rsqrt_")
square_ = _unary(ops.square, "square_", "torch.Tensor.square_ / torch.square_")
reciprocal_ = _unary(ops.reciprocal, "reciprocal_", "torch.Tensor.reciprocal_ / torch.reciprocal_")
neg_ = _unary(ops.neg, "neg_", "torch.Tensor.neg_ / torch.neg_")
negative_ = _unary(ops.neg, "negative_", "torch.Tensor.negative_ / torch.negative_")
sign_ = _unary(ops.sign, "sign_", "torch.Tensor.sign_")
sgn_ = _unary(ops.sgn, "sgn_", "torch.Tensor.sgn_")
sinc_ = _unary(ops.sinc, "sinc_", "torch.Tensor.sinc_ / torch.sinc_")
erf_ = _unary(ops.erf, "erf_", "torch.Tensor.erf_ / torch.erf_")
erfc_ = _unary(ops.erfc, "erfc_", "torch.Tensor.erfc_ / torch.erfc_")
erfinv_ = _unary(mp_special.erfinv, "erfinv_", "torch.Tensor.erfinv_")
digamma_ = _unary(ops.digamma, "digamma_", "torch.Tensor.digamma_")
lgamma_ = _unary(ops.lgamma, "lgamma_", "torch.Tensor.lgamma_")
i0_ = _unary(ops.i0, "i0_", "torch.Tensor.i0_ / torch.i0_")
deg2rad_ = _unary(ops.deg2rad, "deg2rad_", "torch.Tensor.deg2rad_ / torch.deg2rad_")
rad2deg_ = _unary(ops.rad2deg, "rad2deg_", "torch.Tensor.rad2deg_ / torch.rad2deg_")
conj_physical_ = _unary(ops.conj, "conj_physical_", "torch.Tensor.conj_physical_ / torch.conj_physical_")
logical_not_ = _unary(ops.logical_not, "logical_not_", "torch.Tensor.logical_not_ (stored in the receiver's dtype)")


def bitwise_not_(input):
    """torch.Tensor.bitwise_not_ (integers; logical not for bool, which the CPU Invert kernel rejects)."""
    if input.dtype == ms.bool_:
        return _store(input, ops.logical_not(input))
    return _store(input, ops.invert(_src(input)))


def round_(input, *, decimals=0):
    """torch.Tensor.round_ / torch.round_: half to even, like torch; MindSpore's CPU Round takes decimals=0 only
    ("For Round only support decimals equal 0"), so other decimals scale by 10**decimals as torch does."""
    if decimals == 0:
        return _store(input, ops.round(_src(input)))
    scale = 10.0 ** decimals
    return _store(input, ops.round(_src(input) * scale) / scale)


def _float_or_none(eps):
    """ops.logit takes eps as a float (torch any number, or None)."""
    return None if eps is None else float(eps)


def logit_(input, eps=None):
    """torch.Tensor.logit_ / torch.logit_."""
    return _store(input, ops.logit(_src(input), _float_or_none(eps)))


def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    """torch.Tensor.nan_to_num_ / torch.nan_to_num_ (infinities become the dtype's largest finite values by default)."""
    return _store(input, mp_math.nan_to_num(_src(input), nan, posinf, neginf))  # complex: per part; int/bool: as it is


def zero_(input):
    """torch.Tensor.zero_ / torch.zero_: MindSpore's Tensor.zero_ has no CPU kernel (InplaceZero)."""
    return _store(input, ops.zeros_like(input))


def fill_(input, value):
    """torch.Tensor.fill_ / torch.fill_ (a number or a one-element tensor); no CPU kernel for InplaceFillScalar."""
    if isinstance(value, ms.Tensor):
        return _store(input, ops.broadcast_to(value.astype(input.dtype).reshape(()), input.shape))
    return _store(input, ops.full_like(input, value))


def detach_(input):
    """torch.Tensor.detach_ / torch.detach_: cut the receiver from the autograd graph (PyNative: the stop_gradient
    result's empty history is moved onto the receiver)."""
    return _store(input, ops.stop_gradient(input))


def requires_grad_(input, requires_grad=True):
    """torch.Tensor.requires_grad_: MindSpore's Tensor.requires_grad_ returns None where torch returns the tensor,
    and keeps no flag a plain tensor can be asked for: the flag is kept on the tensor, as
    ``mindport.runtime.tensor.requires_grad`` reads it. A Cell (``model.requires_grad_(False)`` where the
    converter could not tell a Module from a tensor) sets the flag of each of its Parameters, as torch's Module.
    In a graph (GRAPH_MODE, ``ms.jit``) only the tensor's ``requires_grad_`` runs: a compiled tensor takes no
    attribute, and a Cell is no graph value."""
    if _in_graph():
        input.requires_grad_(requires_grad)
        return input
    if isinstance(input, ms.nn.Cell):
        for param in input.get_parameters():
            if not is_parameter(param):
                continue  # a buffer (running statistics, register_buffer): torch's sets the parameters' flags only
            param.requires_grad = bool(requires_grad)
            param._mp_frozen = not requires_grad  # still one of its parameters() (mindport.runtime.containers)
        return input
    if isinstance(input, ms.Parameter):
        input._mp_frozen = not requires_grad
    input.requires_grad_(requires_grad)
    if not isinstance(input, ms.Parameter):
        input.requires_grad = bool(requires_grad)
    return input


# --- activations ----------------------------------------------------------------------------------------------------

def celu_(input, alpha=1.0):
    """torch.celu_ / torch.nn.functional.celu_."""
    return _store(input, ops.celu(_src(input), float(alpha)))


def elu_(input, alpha=1.0):
    """torch.nn.functional.elu_: x if x > 0 else alpha * (exp(x) - 1); the CPU Elu kernel takes alpha=1.0 only."""
    return _store(input, mp_F.elu(_src(input), alpha))


def leaky_relu_(input, negative_slope=0.01):
    """torch.nn.functional.leaky_relu_ (torch's default slope 0.01; ops.leaky_relu's default is 0.2)."""
    return _store(input, ops.leaky_relu(_src(input), negative_slope))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """torch.nn.functional.hardtanh_."""
    return _store(input, ops.hardtanh(_src(input), min_val, max_val))


def threshold_(input, threshold, value):
    """torch.threshold_ / torch.nn.functional.threshold_: x if x > threshold else value."""
    return _store(input, ops.threshold(_src(input), threshold, value))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu_ / torch.nn.functional.rrelu_: torch.nn.functional.rrelu written into the receiver (torch.rrelu_'s
    ``generator=``: the slopes from that generator's own stream)."""
    return _store(input, mp_F.rrelu(_src(input), lower, upper, training, generator=generator))


def dropout_(input, p=0.5, train=True):
    """torch.dropout_: zero each element with probability p and scale the rest by 1/(1-p) when train."""
    if not train:
        return input
    if p >= 1:
        return _store(input, ops.zeros_like(input))
    x = _src(input)
    keep = (_rand_like(x) >= p).astype(x.dtype)
    return _store(input, x * keep / (1 - p))


# --- element-wise, two or more arguments --------------------------------------------------------------------------

atan2_ = _binary(ops.atan2, "atan2_", "torch.Tensor.atan2_")
arctan2_ = _binary(ops.atan2, "arctan2_", "torch.Tensor.arctan2_")
bitwise_and_ = _binary(ops.bitwise_and, "bitwise_and_", "torch.Tensor.bitwise_and_")
bitwise_or_ = _binary(ops.bitwise_or, "bitwise_or_", "torch.Tensor.bitwise_or_")
bitwise_xor_ = _binary(ops.bitwise_xor, "bitwise_xor_", "torch.Tensor.bitwise_xor_")
bitwise_left_shift_ = _binary(ops.bitwise_left_shift, "bitwise_left_shift_", "torch.Tensor.bitwise_left_shift_")
bitwise_right_shift_ = _binary(ops.bitwise_right_shift, "bitwise_right_shift_", "torch.Tensor.bitwise_right_shift_")
copysign_ = _binary(mp_math.copysign, "copysign_", "torch.Tensor.copysign_")
true_divide_ = _binary(ops.div, "true_divide_", "torch.Tensor.true_divide_")
multiply_ = _binary(ops.mul, "multiply_", "torch.Tensor.multiply_")
floor_divide_ = _binary(ops.floor_divide, "floor_divide_", "torch.Tensor.floor_divide_")
fmod_ = _binary(ops.fmod, "fmod_", "torch.Tensor.fmod_")
remainder_ = _binary(ops.remainder, "remainder_", "torch.Tensor.remainder_")
gcd_ = _binary(ops.gcd, "gcd_", "torch.Tensor.gcd_ / torch.gcd_")
lcm_ = _binary(ops.lcm, "lcm_", "torch.Tensor.lcm_ / torch.lcm_")
hypot_ = _binary(ops.hypot, "hypot_", "torch.Tensor.hypot_")
igamma_ = _binary(ops.igamma, "igamma_", "torch.Tensor.igamma_")
igammac_ = _binary(ops.igammac, "igammac_", "torch.Tensor.igammac_")
ldexp_ = _binary(mp_math.ldexp, "ldexp_", "torch.Tensor.ldexp_ / torch.ldexp_")
logical_and_ = _binary(ops.logical_and, "logical_and_", "torch.Tensor.logical_and_")
logical_or_ = _binary(ops.logical_or, "logical_or_", "torch.Tensor.logical_or_")
logical_xor_ = _binary(ops.logical_xor, "logical_xor_", "torch.Tensor.logical_xor_")
nextafter_ = _binary(ops.nextafter, "nextafter_", "torch.Tensor.nextafter_")

eq_ = _compare(ops.equal, "eq_")
ne_ = _compare(ops.not_equal, "ne_")
not_equal_ = _compare(ops.not_equal, "not_equal_")
ge_ = _compare(ops.greater_equal, "ge_")
greater_equal_ = _compare(ops.greater_equal, "greater_equal_")
gt_ = _compare(ops.greater, "gt_")
greater_ = _compare(ops.greater, "greater_")
le_ = _compare(ops.less_equal, "le_")
less_equal_ = _compare(ops.less_equal, "less_equal_")
lt_ = _compare(ops.less, "lt_")
less_ = _compare(ops.less, "less_")


def float_power_(input, exponent):
    """torch.Tensor.float_power_ (torch requires a float64 receiver)."""
    return _store(input, ops.float_power(_src(input), exponent))


def pow_(input, exponent):
    """torch.Tensor.pow_."""
    return _store(input, ops.pow(_src(input), exponent))


def clamp_min_(input, min):
    """torch.Tensor.clamp_min_ / torch.clamp_min_."""
    return _store(input, ops.maximum(_src(input), min))


def clamp_max_(input, max):
    """torch.Tensor.clamp_max_ / torch.clamp_max_."""
    return _store(input, ops.minimum(_src(input), max))


def xlogy_(input, other):
    """torch.Tensor.xlogy_ / torch.xlogy_: torch's xlogy (0 where input == 0; ops.xlogy gives NaN at (0, 0))."""
    return _store(input, mp_special.xlogy(_src(input), other))


def heaviside_(input, values):
    """torch.Tensor.heaviside_."""
    return _store(input, ops.heaviside(_src(input), values))


def add_(input, other, *, alpha=1):
    """torch.Tensor.add_: input + alpha * other. MindSpore's own x.add_ gives wrong gradients when the receiver is
    used afterwards (see the module docstring)."""
    if alpha != 1:
        other = other * alpha
    return _store(input, ops.add(_src(input), other))


def sub_(input, other, *, alpha=1):
    """torch.Tensor.sub_: input - alpha * other (see add_)."""
    return subtract_(input, other, alpha=alpha)


mul_ = _binary(ops.mul, "mul_", "torch.Tensor.mul_")


def div_(input, other, *, rounding_mode=None):
    """torch.Tensor.div_ (see add_)."""
    return divide_(input, other, rounding_mode=rounding_mode)


def copy_(input, src, non_blocking=False):
    """torch.Tensor.copy_: src (broadcast to the receiver's shape, cast to its dtype) written into the receiver."""
    if not isinstance(src, ms.Tensor):
        src = ms.Tensor(src)
    # a copy, not broadcast_to's view of src: a Parameter left holding a view refuses ops.assign later (the
    # optimizer's put-back of a parameter no backward reached, mindport.runtime.training._restore_held)
    return _store(input, ops.broadcast_to(src, input.shape).copy())


def set_(input, source=None, storage_offset=0, size=None, stride=None):
    """torch.Tensor.set_(source): the receiver takes the source's shape, dtype and values (aegroto's
    QuantizableLinear.apply_quantization: ``self.weight.set_(equantized_weight)``). A Parameter as ``p.data = source``
    (mindport.runtime.framework.set_data: an assign in place in a graph, which keeps shape and dtype); any other
    tensor by assign_value. torch shares the source's storage from then on (a later in-place write to either shows in
    both): here the receiver holds the source's values, which a later in-place write to the source alone does not
    change. A view of a storage (size, stride, storage_offset) and set_() without a source (an empty tensor) raise."""
    if source is None or size is not None or stride is not None or storage_offset:
        raise NotImplementedError("mindport: torch.Tensor.set_ with a storage view (size/stride/storage_offset) or "
                                  "without a source has no MindSpore counterpart; write x = source.view(...)")
    if not isinstance(source, ms.Tensor):
        source = ms.Tensor(source)
    if isinstance(input, ms.Parameter):
        return _set_data(input, source)
    if _in_graph():
        if source.shape != input.shape or source.dtype != input.dtype:
            raise RuntimeError("mindport: in GRAPH_MODE x.set_(source) needs a source of x's shape and dtype")
        ops.assign(input, source)
        return source
    input.assign_value(source)
    return input


def fill_diagonal_(input, fill_value, wrap=False):
    """torch.Tensor.fill_diagonal_: MindSpore's Tensor.fill_diagonal returns a new tensor and leaves the receiver
    as it was, so a bare ``x.fill_diagonal_(0)`` statement would silently do nothing. The diagonal is chosen by a
    constant mask (``ops.where``), not MindSpore's FillDiagonal, which has no backward ("Illegal primitive
    FillDiagonal's bprop not defined"): NT-Xent's ``sim.fill_diagonal_(float('-inf'))`` on a similarity matrix the
    loss differentiates through; torch's gradient is zero on the filled positions and passes elsewhere."""
    shape = tuple(input.shape)
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise RuntimeError("all dimensions of input must be of equal length")  # torch's check
    mask = np.zeros(shape, dtype=bool)
    if len(shape) == 2:
        rows, cols = shape
        flat = mask.reshape(-1)
        # torch: every (cols + 1)-th element from the start; without wrap only the first min(rows, cols) of them
        count = len(range(0, rows * cols, cols + 1)) if wrap else min(rows, cols)
        flat[np.arange(count) * (cols + 1)] = True
    else:
        mask[(np.arange(shape[0]),) * len(shape)] = True
    value = ms.Tensor(fill_value, dtype=input.dtype) if input.dtype != ms.bool_ else ms.Tensor(bool(fill_value))
    return _store(input, ops.where(ms.Tensor(mask), value, _src(input)))


def divide_(input, other, *, rounding_mode=None):
    """torch.Tensor.divide_ (rounding_mode None, 'trunc' or 'floor'; mp_math.div: 'floor' runs under launch_blocking)."""
    return _store(input, mp_math.div(_src(input), other, rounding_mode=rounding_mode))


def subtract_(input, other, *, alpha=1):
    """torch.Tensor.subtract_: input - alpha * other."""
    if alpha != 1:
        other = other * alpha
    return _store(input, ops.sub(_src(input), other))


def clamp_(input, min=None, max=None):
    """torch.Tensor.clamp_ / torch.clamp_ (numbers or tensors; min > max gives max, as in torch); no CPU kernel for
    InplaceClampScalar."""
    return _store(input, ops.clamp(_src(input), min, max))


def clip_(input, min=None, max=None):
    """torch.Tensor.clip_ / torch.clip_: clamp_."""
    return _store(input, ops.clamp(_src(input), min, max))


def lerp_(input, end, weight):
    """torch.Tensor.lerp_: input + weight * (end - input) (complex input: written out, no complex Lerp)."""
    if mp_math._is_complex(input.dtype):
        src = _src(input)
        return _store(input, src + mp_math.in_complex(weight, input.dtype) * (mp_math.in_complex(end, input.dtype) - src))
    return _store(input, ops.lerp(_src(input), end, float(weight) if isinstance(weight, int) else weight))


def addcdiv_(input, tensor1, tensor2, *, value=1):
    """torch.Tensor.addcdiv_: input + value * tensor1 / tensor2 (complex input: written out, no complex Addcdiv)."""
    if mp_math._is_complex(input.dtype):
        c = lambda v: mp_math.in_complex(v, input.dtype)  # noqa: E731
        return _store(input, _src(input) + c(value) * c(tensor1) / c(tensor2))
    return _store(input, ops.addcdiv(_src(input), tensor1, tensor2, value=value))


def addcmul_(input, tensor1, tensor2, *, value=1):
    """torch.Tensor.addcmul_: input + value * tensor1 * tensor2 (complex input: written out, no complex Addcmul)."""
    if mp_math._is_complex(input.dtype):
        c = lambda v: mp_math.in_complex(v, input.dtype)  # noqa: E731
        return _store(input, _src(input) + c(value) * c(tensor1) * c(tensor2))
    return _store(input, ops.addcmul(_src(input), tensor1, tensor2, value=value))


def _beta_src(input, beta):
    """The receiver for the add*mm operations: zeros when beta == 0, so its values (NaN, inf) are ignored, as in
    torch (0 * NaN would be NaN)."""
    return ops.zeros_like(input) if beta == 0 else _src(input)


def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    """torch.Tensor.addmm_: beta * input + alpha * mat1 @ mat2 (mint.addmm has no CPU kernel)."""
    return _store(input, mp_math.addmm(_beta_src(input, beta), mat1, mat2, beta=beta, alpha=alpha))


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """torch.Tensor.addmv_ / torch.addmv_: beta * input + alpha * mat @ vec (complex input: written out)."""
    if mp_math._is_complex(input.dtype):
        c = lambda v: mp_math.in_complex(v, input.dtype)  # noqa: E731
        return _store(input, c(beta) * _beta_src(input, beta) + c(alpha) * ops.matmul(c(mat), c(vec)))
    return _store(input, ops.addmv(_beta_src(input, beta), mat, vec, beta=beta, alpha=alpha))


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.Tensor.addbmm_: beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    return _store(input, mp_math.addbmm(_beta_src(input, beta), batch1, batch2, beta=beta, alpha=alpha))


def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.Tensor.baddbmm_: beta * input + alpha * batch1 @ batch2."""
    return _store(input, mp_math.baddbmm(_beta_src(input, beta), batch1, batch2, beta=beta, alpha=alpha))


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    """torch.Tensor.addr_: beta * input + alpha * outer(vec1, vec2) (complex input: written out)."""
    if mp_math._is_complex(input.dtype):
        c = lambda v: mp_math.in_complex(v, input.dtype)  # noqa: E731
        return _store(input, c(beta) * _beta_src(input, beta) + c(alpha) * ops.outer(c(vec1), c(vec2)))
    return _store(input, ops.addr(_beta_src(input, beta), vec1, vec2, beta=beta, alpha=alpha))


def mvlgamma_(input, p):
    """torch.Tensor.mvlgamma_."""
    return _store(input, ops.mvlgamma(_src(input), p))


def polygamma_(input, n):
    """torch.Tensor.polygamma_: the n-th derivative of digamma (ops.polygamma takes n as a tensor)."""
    return _store(input, ops.polygamma(ms.Tensor(n, ms.int64), _src(input)))


def renorm_(input, p, dim, maxnorm):
    """torch.Tensor.renorm_: sub-tensors along dim with p-norm above maxnorm scaled down to maxnorm (the CPU Renorm
    kernel takes an integer p)."""
    return _store(input, ops.renorm(_src(input), int(p), dim, float(maxnorm)))


def cumsum_(input, dim, dtype=None):
    """torch.Tensor.cumsum_ (torch accepts only dtype=None or the receiver's dtype here)."""
    return _store(input, ops.cumsum(_src(input), dim))


def cumprod_(input, dim, dtype=None):
    """torch.Tensor.cumprod_ (torch accepts only dtype=None or the receiver's dtype here)."""
    return _store(input, ops.cumprod(_src(input), dim))


def tril_(input, diagonal=0):
    """torch.Tensor.tril_ (complex input: MindSpore 2.10's Tril has no complex kernel, each part apart)."""
    return _store(input, mp_math.by_parts(ops.tril, _src(input), diagonal))


def triu_(input, diagonal=0):
    """torch.Tensor.triu_ (complex input: MindSpore 2.10's Triu has no complex kernel, each part apart)."""
    return _store(input, mp_math.by_parts(ops.triu, _src(input), diagonal))


# --- indexed updates ------------------------------------------------------------------------------------------------

def masked_fill_(input, mask, value):
    """torch.Tensor.masked_fill_ (a number or a one-element tensor); no CPU kernel for InplaceMaskedFillScalar."""
    if isinstance(value, ms.Tensor):
        value = value.astype(input.dtype)
    elif isinstance(value, complex):  # MindSpore's masked_fill takes no Python complex
        value = ms.Tensor(value, input.dtype)
    elif isinstance(value, float) and not mp_math._is_float(input.dtype) and not mp_math._is_complex(input.dtype):
        # torch casts the number to the receiver's dtype (ids.masked_fill_(m, -1.0) stays int64); MindSpore's
        # MaskedFill has no kernel for an int or bool tensor with a float value
        value = ms.Tensor(value, ms.float32).astype(input.dtype)
    elif isinstance(value, int) and mp_math._is_float(input.dtype):  # MaskedFill: no float kernel for an int value
        value = float(value)
    if mp_math._is_complex(input.dtype):  # MindSpore 2.10's MaskedFill has no complex kernel: each part apart
        value = ms.Tensor(value, input.dtype) if not isinstance(value, ms.Tensor) else value
        return _store(input, ops.Complex()(ops.masked_fill(ops.real(_src(input)), mask, ops.real(value)),
                                           ops.masked_fill(ops.imag(_src(input)), mask, ops.imag(value))))
    return _store(input, ops.masked_fill(_src(input), mask, value))


def index_fill_(input, dim, index, value):
    """torch.Tensor.index_fill_: torch.index_fill written into the receiver."""
    return _store(input, mp_math.index_fill(_src(input), dim, index, value))


def index_add_(input, dim, index, source, *, alpha=1):
    """torch.Tensor.index_add_: torch.index_add (repeated indices add up) written into the receiver."""
    return _store(input, mp_math.index_add(_src(input), dim, index, source, alpha=alpha))


def index_copy_(input, dim, index, source):
    """torch.Tensor.index_copy_: torch.index_copy written into the receiver (no CPU kernel for InplaceIndexCopy)."""
    return _store(input, mp_math.index_copy(_src(input), dim, index, source))


def _broadcast_shape(a, b):
    a, b = (1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def index_put_(input, indices, values, accumulate=False):
    """torch.Tensor.index_put_ / torch.index_put_: input[indices] = values (or += with repeats adding up when
    accumulate); ``indices`` is a tuple of integer index tensors for the leading dimensions (no CPU kernel for
    InplaceIndexPut)."""
    shape = ()
    for index in indices:  # the indices' broadcast shape
        shape = _broadcast_shape(shape, index.shape)
    index = ops.stack([ops.broadcast_to(i, shape) for i in indices], -1)
    rank = len(input.shape)
    shape = index.shape[:-1] + input.shape[len(indices):rank]
    values = ops.broadcast_to(values.astype(input.dtype), shape)
    if accumulate:
        return _store(input, mp_math.tensor_scatter_add(_src(input), index, values))
    return _store(input, ops.tensor_scatter_update(_src(input), index, values))


def put_(input, index, source, accumulate=False):
    """torch.Tensor.put_: torch.put (the receiver seen as 1-D) written into the receiver."""
    return _store(input, mp_math.put(_src(input), index, source, accumulate))


def masked_scatter_(input, mask, source):
    """torch.Tensor.masked_scatter_: the positions where mask is True take source's elements in row-major order."""
    x = _src(input)
    mask = ops.broadcast_to(mask, x.shape)
    flat_mask = mask.reshape(-1).astype(ms.int32)
    position = ops.cumsum(flat_mask, 0) - 1
    position = ops.maximum(position, ops.zeros_like(position))
    taken = ops.gather(source.reshape(-1), position, 0).reshape(x.shape)
    return _store(input, ops.where(mask, taken.astype(x.dtype), x))


def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    """torch.Tensor.scatter_ (src a tensor or a number, or value=; reduce None, 'add' or 'multiply'): torch.scatter
    written into the receiver (:func:`mindport.runtime.math.scatter`)."""
    return _store(input, mp_math.scatter(_src(input), dim, index, src, value=value, reduce=reduce))


def scatter_add_(input, dim, index, src):
    """torch.Tensor.scatter_add_: torch.scatter_add written into the receiver (no CPU kernel for ScatterAddExt)."""
    return _store(input, mp_math.scatter_add(_src(input), dim, index, src.astype(input.dtype)))


def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    """torch.Tensor.scatter_reduce_: torch.scatter_reduce ('sum', 'prod', 'mean', 'amax', 'amin') written into the
    receiver."""
    return _store(input, mp_math.scatter_reduce(_src(input), dim, index, src, reduce, include_self=include_self))


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    """torch.Tensor.index_reduce_: torch.index_reduce ('prod', 'mean', 'amax', 'amin') written into the receiver."""
    return _store(input, mp_math.index_reduce(_src(input), dim, index, source, reduce, include_self=include_self))


# --- shape-changing (PyNative only) --------------------------------------------------------------------------------

def _resized(x, shape):
    """torch's resize: the first ``prod(shape)`` elements of ``x`` in row-major order, laid out as ``shape``; the
    elements past ``x``'s own are zeros (torch leaves them uninitialised)."""
    shape = tuple(int(s) for s in shape)
    count = int(np.prod(shape)) if shape else 1
    flat = x.reshape(-1)
    if flat.shape[0] >= count:
        return flat[:count].reshape(shape)
    return ops.cat((flat, ops.zeros(count - flat.shape[0], x.dtype))).reshape(shape)


def resize_(input, size, memory_format=None):
    """torch.Tensor.resize_ (legacy code: ``x.new().resize_(n, d).zero_()``, the sizes gathered into ``size`` by the
    converter): the receiver takes the sizes (:func:`_resized`; PyNative only, see the module docstring)."""
    size = (size,) if isinstance(size, int) else tuple(size)
    return _store_reshaped(input, _resized(_src(input), size))


def resize_as_(input, the_template, memory_format=None):
    """torch.Tensor.resize_as_ (legacy code: ``x.data.new().resize_as_(x.data).fill_(0)``): the receiver takes
    ``the_template``'s shape (:func:`_resized`; PyNative only)."""
    return _store_reshaped(input, _resized(_src(input), the_template.shape))


def unsqueeze_(input, dim):
    """torch.Tensor.unsqueeze_ (PyNative only, see the module docstring)."""
    return _store_reshaped(input, ops.expand_dims(_src(input), dim))


def squeeze_(input, dim=None):
    """torch.Tensor.squeeze_: dims of size 1 removed (dim: None, an int or a tuple; dims not of size 1 are kept, as
    in torch). PyNative only."""
    x = _src(input)
    if dim is None:
        return _store_reshaped(input, ops.squeeze(x))
    rank = len(x.shape)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = tuple(d % rank for d in dims if x.shape[d % rank] == 1)
    if not dims:
        return input
    return _store_reshaped(input, ops.squeeze(x, dims))


def t_(input):
    """torch.Tensor.t_: transpose a 2-D tensor (0-D and 1-D unchanged). PyNative only."""
    if len(input.shape) < 2:
        return input
    return _store_reshaped(input, ops.swapaxes(_src(input), 0, 1))


def transpose_(input, dim0, dim1):
    """torch.Tensor.transpose_. PyNative only."""
    return _store_reshaped(input, ops.swapaxes(_src(input), dim0, dim1))


def swapaxes_(input, axis0, axis1):
    """torch.Tensor.swapaxes_. PyNative only."""
    return _store_reshaped(input, ops.swapaxes(_src(input), axis0, axis1))


def swapdims_(input, dim0, dim1):
    """torch.Tensor.swapdims_. PyNative only."""
    return _store_reshaped(input, ops.swapaxes(_src(input), dim0, dim1))


# --- random fills ---------------------------------------------------------------------------------------------------

def _rand_like(input, generator=None):
    """Uniform [0, 1) samples with the receiver's shape, in its dtype when floating (float32 otherwise); with
    ``generator=`` (torch's, converted to mindspore.Generator) from that generator's own stream."""
    dtype = input.dtype if input.dtype in _FLOATS else ms.float32
    return mp_math.uniform_draws(input.shape, generator, dtype)


def uniform_(input, from_=0, to=1, *, generator=None):
    """torch.Tensor.uniform_: fill with U[from, to) (no CPU kernel for InplaceUniform)."""
    return _store(input, _rand_like(input, generator) * (to - from_) + from_)


def normal_(input, mean=0, std=1, *, generator=None):
    """torch.Tensor.normal_: fill with N(mean, std**2) (no CPU kernel for InplaceNormal)."""
    dtype = input.dtype if input.dtype in _FLOATS else ms.float32
    return _store(input, mp_math.normal_draws(input.shape, generator, dtype) * std + mean)


def cauchy_(input, median=0, sigma=1, *, generator=None):
    """torch.Tensor.cauchy_: fill with Cauchy(median, sigma) samples, median + sigma * tan(pi * (u - 1/2))."""
    return _store(input, ops.tan((_rand_like(input, generator) - 0.5) * math.pi) * sigma + median)


def log_normal_(input, mean=1, std=2, *, generator=None):
    """torch.Tensor.log_normal_: fill with exp(N(mean, std**2)) samples."""
    dtype = input.dtype if input.dtype in _FLOATS else ms.float32
    return _store(input, ops.exp(mp_math.normal_draws(input.shape, generator, dtype) * std + mean))


def exponential_(input, lambd=1, *, generator=None):
    """torch.Tensor.exponential_: fill with Exponential(lambd) samples, -log(1 - u) / lambd."""
    return _store(input, -ops.log1p(-_rand_like(input, generator)) / lambd)


def geometric_(input, p, *, generator=None):
    """torch.Tensor.geometric_: fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    u = 1 - _rand_like(input, generator).astype(ms.float32)  # (0, 1]
    return _store(input, ops.floor(ops.log(u) / math.log1p(-p)) + 1)


_RANDOM_HIGH = {ms.float16: 2 ** 11 + 1, ms.bfloat16: 2 ** 8 + 1, ms.float32: 2 ** 24 + 1, ms.float64: 2 ** 53 + 1,
                ms.int8: 2 ** 7, ms.int16: 2 ** 15, ms.int32: 2 ** 31, ms.int64: 2 ** 63, ms.uint8: 2 ** 8,
                ms.bool_: 2}


def random_(input, from_=0, to=None, *, generator=None):
    """torch.Tensor.random_: integers in [from, to); ``random_(n)`` means [0, n), as in torch; with no bounds
    [0, 2**mantissa] for floats and [0, max] for integers."""
    if to is None:
        if from_ != 0:
            from_, to = 0, from_
        else:
            to = _RANDOM_HIGH.get(input.dtype, 2 ** 24 + 1)
    u = mp_math.uniform_draws(input.shape, generator, ms.float64)
    return _store(input, ops.floor(u * (to - from_)) + from_)


def bernoulli_(input, p=0.5, *, generator=None):
    """torch.Tensor.bernoulli_: fill with 1 with probability p (a number or a tensor), else 0."""
    return _store(input, _rand_like(input, generator) < p)


# --- Python callables per element (PyNative only) -----------------------------------------------------------------

def _host_only(name):
    if _in_graph():
        raise RuntimeError(f"mindport: Tensor.{name} runs a Python function per element on the host and can't be "
                           "compiled in a static graph (construct under GRAPH_MODE, @jit): write it with MindSpore "
                           "ops on the whole tensor")


def apply_(input, callable):
    """torch.Tensor.apply_: ``callable`` applied to every element (as a Python number). A Python function per element
    needs the values on the host, so this is a numpy round trip (torch runs it on CPU tensors only, for the same
    reason); PyNative only: in a static graph it raises (its mapping entry carries ``graph``, lint MS414 flags it)."""
    _host_only("apply_")
    values = input.asnumpy()
    out = np.array([callable(v) for v in values.ravel().tolist()], dtype=values.dtype).reshape(values.shape)
    input.assign_value(ms.Tensor(out))
    return input


def map_(input, tensor, callable):
    """torch.Tensor.map_: ``callable(a, b)`` for every element of the receiver and of ``tensor`` broadcast to its shape
    (Python numbers); a numpy round trip like apply_, PyNative only."""
    _host_only("map_")
    values = input.asnumpy()
    other = np.broadcast_to(tensor.asnumpy(), values.shape)
    pairs = zip(values.ravel().tolist(), other.ravel().tolist())
    out = np.array([callable(a, b) for a, b in pairs], dtype=values.dtype).reshape(values.shape)
    input.assign_value(ms.Tensor(out))
    return input


# --- activations called with inplace=True (an entry's `switch`) -----------------------------------------------------

def _written_back(op, name, torch_name):
    """``op`` with the MindSpore arguments the entry maps to, its result written into the first argument: torch's
    ``F.relu(x, inplace=True)`` changes ``x``."""

    def fn(input, *args, **kwargs):
        return _store(input, op(_src(input), *args, **kwargs))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{torch_name}(..., inplace=True): ``{op.__name__}`` written into the input (see the module docstring)."
    return fn


relu_inplace = _written_back(ops.relu, "relu_inplace", "torch.nn.functional.relu")
celu_inplace = _written_back(ops.celu, "celu_inplace", "torch.nn.functional.celu")
hardsigmoid_inplace = _written_back(ops.hardsigmoid, "hardsigmoid_inplace", "torch.nn.functional.hardsigmoid")
hardswish_inplace = _written_back(ops.hardswish, "hardswish_inplace", "torch.nn.functional.hardswish")
hardtanh_inplace = _written_back(ops.hardtanh, "hardtanh_inplace", "torch.nn.functional.hardtanh")
leaky_relu_inplace = _written_back(ops.leaky_relu, "leaky_relu_inplace", "torch.nn.functional.leaky_relu")
relu6_inplace = _written_back(ops.relu6, "relu6_inplace", "torch.nn.functional.relu6")
selu_inplace = _written_back(mp_F.selu, "selu_inplace", "torch.nn.functional.selu")
silu_inplace = _written_back(ops.silu, "silu_inplace", "torch.nn.functional.silu")
threshold_inplace = _written_back(ops.threshold, "threshold_inplace", "torch.nn.functional.threshold")
mish_inplace = _written_back(ops.mish, "mish_inplace", "torch.nn.functional.mish")
dropout_inplace = _written_back(ops.dropout, "dropout_inplace", "torch.nn.functional.dropout")
dropout1d_inplace = _written_back(ops.dropout1d, "dropout1d_inplace", "torch.nn.functional.dropout1d")
dropout2d_inplace = _written_back(mp_F.dropout2d, "dropout2d_inplace", "torch.nn.functional.dropout2d")
dropout3d_inplace = _written_back(mp_F.dropout3d, "dropout3d_inplace", "torch.nn.functional.dropout3d")
alpha_dropout_inplace = _written_back(mp_F.alpha_dropout, "alpha_dropout_inplace", "torch.nn.functional.alpha_dropout")
feature_alpha_dropout_inplace = _written_back(mp_F.feature_alpha_dropout, "feature_alpha_dropout_inplace",
                                              "torch.nn.functional.feature_alpha_dropout")


# --- in-place updates through torch views -------------------------------------------------------------------------

def _pieces(x, sizes, dim):
    """torch's split of ``x`` along ``dim`` into pieces of ``sizes`` (an int: pieces of that size, the last one
    shorter; a list: those sizes), as a list of position arrays."""
    length = x.shape[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, length - start) for start in range(0, length, max(sizes, 1))] or [0]
    bounds = np.cumsum([0, *sizes])
    return [_along(x, dim, slice(int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]


def _along(x, dim, index):
    """``x`` indexed by ``index`` along ``dim`` (a numpy view, so a later reshape copies where torch's does)."""
    return x[(slice(None),) * (dim % x.ndim) + (index,)]


def _tensor_split(x, sections, dim=0):
    """torch's tensor_split: ``sections`` pieces (an int, the first ones one longer) or split at the indices."""
    length = x.shape[dim]
    if isinstance(sections, int):
        size, extra = divmod(length, sections)
        bounds = np.cumsum([0] + [size + (i < extra) for i in range(sections)])
    else:
        bounds = [0, *sections, length]
    return [_along(x, dim, slice(int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]


def _as_strided(x, size, stride, storage_offset=0):
    """torch's as_strided of a contiguous base: the element at ``storage_offset + sum(index * stride)``."""
    flat = x.reshape(-1)
    if not np.may_share_memory(flat, x) or not x.flags.c_contiguous:
        raise RuntimeError("mindport: an in-place update through as_strided of a tensor that is not contiguous")
    return np.lib.stride_tricks.as_strided(flat[storage_offset:], tuple(size),
                                           tuple(s * flat.itemsize for s in stride))


def _copied_reshape(x, shape):
    """torch's reshape/flatten: a view where the strides allow one, else a copy (numpy decides the same way)."""
    return x.reshape(shape)


def _getitem(x, index):
    return x[index]


def _flatten(x, start_dim=0, end_dim=-1):
    rank = max(x.ndim, 1)
    start, end = start_dim % rank, end_dim % rank
    return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:]) if x.ndim else x.reshape(1)


def _shape(sizes):
    return tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)


def _unfold(x, dimension, size, step):
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    return _along(windows, dimension, slice(None, None, step))


def _squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = tuple(d % x.ndim for d in dims if x.shape[d % x.ndim] == 1)
    return np.squeeze(x, dims) if dims else x


# torch's view-returning operations (each the same positions as torch's view takes; documented as views in torch's
# tensor_view docs, and `v._base is x` measured for each in tests/runtime/test_view_positions.py), on numpy arrays of
# element positions
_VIEWS = {
    "getitem": _getitem,
    "narrow": lambda x, dim, start, length: _along(x, dim, slice(start % x.shape[dim] if start < 0 else start,
                                                                (start % x.shape[dim] if start < 0 else start)
                                                                + length)),
    "select": lambda x, dim, index: _along(x, dim, index),
    "diagonal": lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2),
    "t": lambda x: x.T if x.ndim == 2 else x,
    "T": lambda x: np.transpose(x),
    "mT": lambda x: np.swapaxes(x, -2, -1),
    "transpose": lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1),
    "swapaxes": lambda x, axis0, axis1: np.swapaxes(x, axis0, axis1),
    "swapdims": lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1),
    "permute": lambda x, *dims: np.transpose(x, _shape(dims)),
    "movedim": lambda x, source, destination: np.moveaxis(x, source, destination),
    "moveaxis": lambda x, source, destination: np.moveaxis(x, source, destination),
    "view": lambda x, *shape: x.reshape(_shape(shape)),
    "reshape": lambda x, *shape: x.reshape(_shape(shape)),
    "view_as": lambda x, other: x.reshape(tuple(other.shape)),
    "reshape_as": lambda x, other: x.reshape(tuple(other.shape)),
    "flatten": _flatten,
    "unflatten": lambda x, dim, sizes: x.reshape(x.shape[:dim % x.ndim] + tuple(sizes) + x.shape[dim % x.ndim + 1:]),
    "unsqueeze": lambda x, dim: np.expand_dims(x, dim if dim >= 0 else dim + x.ndim + 1),
    "squeeze": _squeeze,
    "expand": lambda x, *sizes: np.broadcast_to(x, tuple(n if n != -1 else m for n, m in zip(
        _shape(sizes), (1,) * (len(_shape(sizes)) - x.ndim) + x.shape))),
    "expand_as": lambda x, other: np.broadcast_to(x, tuple(other.shape)),
    "unfold": _unfold,
    "data": lambda x: x,
    "detach": lambda x: x,
    # tuples of views (PIECE_METHODS): a list of the pieces' positions, one of which the next step takes
    "chunk": lambda x, chunks, dim=0: _pieces(x, -(-x.shape[dim] // chunks), dim),
    "split": lambda x, split_size_or_sections, dim=0: _pieces(x, split_size_or_sections, dim),
    "unbind": lambda x, dim=0: [_along(x, dim, i) for i in range(x.shape[dim])],
    "split_with_sizes": lambda x, split_sizes, dim=0: _pieces(x, list(split_sizes), dim),
    "tensor_split": _tensor_split,
    "hsplit": lambda x, sections: _tensor_split(x, sections, 1 if x.ndim > 1 else 0),
    "vsplit": lambda x, sections: _tensor_split(x, sections, 0),
    "dsplit": lambda x, sections: _tensor_split(x, sections, 2),
    # views or the receiver itself for a real tensor (a complex one refuses, below: a conjugate view)
    "ravel": lambda x: x.reshape(-1),
    "contiguous": lambda x, memory_format=None: np.ascontiguousarray(x),
    "broadcast_to": lambda x, *sizes: np.broadcast_to(x, _shape(sizes)),
    "adjoint": lambda x: np.swapaxes(x, -2, -1),
    "mH": lambda x: np.swapaxes(x, -2, -1),
    "H": lambda x: x.T if x.ndim == 2 else x,
    "conj": lambda x: x,
    "resolve_conj": lambda x: x,
    "resolve_neg": lambda x: x,
    "positive": lambda x: x,
    "as_strided": _as_strided,
    # a dtype or device move (x.to(...), x.float(), x.cpu()): the receiver itself when nothing changes, else a
    # copy; view_update compares the updated value's dtype with the base's
    "cast": lambda x: x,
}
_CONJUGATE = frozenset({"conj", "adjoint", "mH", "H"})
assert set(_VIEWS) == VIEW_METHODS | VIEW_ATTRIBUTES | CONJUGATE_ATTRIBUTES | PIECE_METHODS | {"getitem", "cast"}  # mindport/mappings/views.py: one table


def view_update(base, steps, value):
    """An in-place update written through a chain of torch views of ``base`` (``x.narrow(1, 0, 2).copy_(y)``:
    ``view_update(x, (("narrow", (1, 0, 2), {}),), <the update of the view's copy>)``): ``value`` (the view's values
    after the update) is written where each element of the view lives in ``base``, which keeps its identity (a
    Parameter stays that Parameter) and is returned (a base that is no MindSpore tensor, a list whose item was
    updated, is returned as it is). Each step is (torch's view operation, its positional arguments,
    its keyword arguments); the positions are found by taking the same views of the base's element positions. A view
    holding an element of the base more than once (``expand``, overlapping ``unfold``) raises, as torch mostly does.
    A base that is no tensor is handled first, in a graph too: a list's or dict's item is set (nothing is written
    into a tensor), anything else comes back unchanged. Through a tensor's views: PyNative only (a compiled graph
    keeps no order between such updates: write the update out of place there)."""
    if isinstance(base, (dict, list)):
        if len(steps) == 1 and steps[0][0] == "getitem":
            base[steps[0][1][0]] = value  # a container's item (state = self.state[p]): torch updated that very object
        return base
    if _in_graph():
        raise RuntimeError("mindport: an in-place update through a torch view (x.narrow(...).copy_(y), "
                           "x.diagonal().fill_(v)) can't be compiled in graph mode; compute the new tensor out of "
                           "place")
    if not isinstance(base, ms.Tensor):
        return base  # a numpy array (its views share memory), anything else: nothing to write back
    root = np.arange(int(np.prod(base.shape)), dtype=np.int64).reshape(tuple(base.shape))
    positions = root
    for name, args, kwargs in steps:
        if name in _CONJUGATE and base.dtype in (ms.complex64, ms.complex128):
            raise RuntimeError(f"mindport: an in-place update through a conjugate view ({name}) of a complex "
                               f"tensor can't be written back; clone() the view or update the base itself")
        if name == "cast" and isinstance(value, ms.Tensor) and value.dtype != base.dtype:
            return base  # torch's .to()/.float() of another dtype made a copy: the base never sees the update
        positions = _VIEWS[name](positions, *args, **kwargs)
        if isinstance(positions, list):  # pieces
            continue
        positions = np.asarray(positions)
        if positions.size and not np.may_share_memory(positions, root):
            return base  # torch's operation copied here (reshape of a transpose, advanced indexing): no write-back
    flat_positions = positions.reshape(-1)
    if np.unique(flat_positions).size != flat_positions.size:
        # torch refuses most updates of such views (expand) and applies the others once per occurrence (unfold with
        # overlapping windows): no single value per element to write
        raise RuntimeError("mindport: an in-place update through a view in which more than one element refers to "
                           "the same element of the base (expand, overlapping unfold); clone() the view first")
    value = ms.Tensor(value) if not isinstance(value, ms.Tensor) else value
    value = ops.broadcast_to(value.astype(base.dtype), tuple(positions.shape)) if positions.shape else \
        value.astype(base.dtype).reshape(())
    flat = base.reshape(-1).copy()
    flat[ms.Tensor(flat_positions)] = value.reshape(-1)
    return _store(base, flat.reshape(tuple(base.shape)))


class _ValuesOnly(ms.nn.Cell):
    """``new``'s values, with the gradient of ``old`` passed through as if unchanged (torch's update through
    ``.data``: the values change, autograd never records it)."""

    def construct(self, old, new):
        return new

    def bprop(self, old, new, out, dout):
        return dout, ops.zeros_like(new)


_VALUES_ONLY = None


def data_update(input, value):
    """``h.data.clamp_(0, 1)`` / ``logits.data.masked_fill_(mask, -inf)`` in forward, converted as
    ``h = mp_inplace.data_update(h, ops.stop_gradient(h).clamp_(...))``: torch writes the new values into ``h``
    without recording the update for autograd, so what follows reads the new values and the gradient reaches what
    computed ``h`` as if the update had not happened (a clamped element still passes its gradient on). ``value`` is
    the updated tensor (computed from a copy that carries no gradient); the result is written into ``input``
    (PyNative: ``input`` keeps its identity) and returned. PyNative and graph mode."""
    global _VALUES_ONLY
    if _VALUES_ONLY is None:
        _VALUES_ONLY = _ValuesOnly()
    value = ms.Tensor(value) if not isinstance(value, ms.Tensor) else value
    if value.dtype != input.dtype:
        value = value.astype(input.dtype)
    return _store(input, _VALUES_ONLY(_src(input), value))


# --- torch's augmented assignment of a function's parameter ---------------------------------------------------------

def _augmented(update, name, symbol):
    def fn(target, value):
        if isinstance(target, ms.Tensor) and not _in_graph():
            return update(target, value)
        if symbol == "+=":
            target += value
        elif symbol == "-=":
            target -= value
        elif symbol == "*=":
            target *= value
        else:
            target /= value
        return target

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``target {symbol} value`` where ``target`` is a function's parameter: torch updates the caller's "
                  f"tensor in place, MindSpore's PyNative ``{symbol}`` binds a new tensor to the parameter only (the "
                  f"caller keeps the old values, measured on 2.10). A tensor is written in place in PyNative (see the "
                  f"module docstring); in a graph MindSpore's own ``{symbol}`` already updates the caller's tensor, "
                  f"and a Python number or a numpy array keeps Python's meaning.")
    return fn


iadd = _augmented(add_, "iadd", "+=")
isub = _augmented(sub_, "isub", "-=")
imul = _augmented(mul_, "imul", "*=")
itruediv = _augmented(div_, "itruediv", "/=")
