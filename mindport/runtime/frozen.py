"""Which non-trainable Parameters are torch's frozen parameters rather than buffers.

The converter keeps each persistent ``register_buffer`` (and MindSpore keeps BatchNorm's running statistics) as a
non-trainable Parameter, so a parameter a script freezes looks like a buffer unless the freeze leaves a mark. Loaded
with any :mod:`mindport.runtime` module, this marks a Parameter ``_mp_frozen`` when its ``requires_grad`` is set from
True to False after it was made (``p.requires_grad = False``, the fine-tuning loops' form; a buffer is made
non-trainable and stays so), and keeps the mark on a deep copy (``copy.deepcopy(model)``, an EMA copy's).
``mindport.runtime.inplace.requires_grad_`` marks what it freezes too, and the converter makes a frozen-from-start
``nn.Parameter(t, requires_grad=False)`` through it. :func:`mindport.runtime.containers.is_parameter` reads the mark.

An optimizer step skips the parameters it holds that are frozen when it runs, as torch's does (a frozen parameter has
no gradient, and torch's optimizers pass over it: no update, no weight decay, its momentum/moments untouched), while
MindSpore's optimizers apply weight decay and momentum to a zero gradient: a step of ``mindspore.experimental.optim``
or ``mindspore.nn`` optimizers keeps each frozen parameter and its state slots (``accum.<name>``, ``exp_avg.<name>``
...) as they were. So parameters unfrozen after the optimizer was built (the converter hands it every parameter in a
file that unfreezes) train from then on, and parameters frozen after it was built stop moving. torch also counts each
parameter's own steps (Adam/AdamW's bias corrections, Adamax, NAdam, RAdam, Adagrad's ``lr_decay``, ASGD), where
MindSpore's optimizer reads one counter (``state_step``/``step_t``): from the first step that skips a parameter on,
each held parameter's count is kept, and parameters of different counts are stepped apart, each group with the
counter set to its own count (one step of MindSpore per group: a parameter unfrozen after k steps of the others has
the bias correction of its own first step, as in torch). A parameter no backward reached (``.grad`` None when
``mindport.runtime.training.grads_of`` handed the optimizer its gradients: a head the loss of an earlier phase did not
use, trained by the same optimizer later) is skipped and its steps are not counted the same way.
"""
from __future__ import annotations

from mindspore import Parameter, Tensor, ops

_requires_grad = Parameter.requires_grad


def _set_requires_grad(self, value=True):
    # made: Parameter.__init__ sets the flag once before param_info is fully set up; a later True -> False is a freeze
    if value is False and self.__dict__.get("_mp_made") and _requires_grad.fget(self):
        self._mp_frozen = True
    _requires_grad.fset(self, value)


def _init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    self._mp_made = True


def _deepcopy(self, memo):
    new = _original_deepcopy(self, memo)
    if getattr(self, "_mp_frozen", False):
        new._mp_frozen = True
    return new


# the one step counter of mindspore.experimental.optim's optimizers whose update reads it (Adam/AdamW's bias
# corrections: state_step; Adamax, NAdam, RAdam, Adagrad's lr_decay, ASGD, Rprop: step_t)
_COUNTERS = ("state_step", "step_t")


def _counter(opt):
    for name in _COUNTERS:
        counter = getattr(opt, name, None)
        if isinstance(counter, Parameter):
            return counter
    return None


def _slots(opt, held, params):
    """The state slots (``exp_avg.<name>``, ``accum.<name>``...) of ``params`` among what ``opt`` holds."""
    names = {p.name for p in params}
    own = {id(p) for p in held}
    return [p for name, p in opt.parameters_and_names()
            if id(p) not in own and "." in name and name.split(".", 1)[1] in names]


def _kept(call, opt, held, kept, args, kwargs):
    """One step of ``opt`` that leaves ``kept`` (Parameters it holds) and their state slots as they were."""
    if not kept:
        return call(opt, *args, **kwargs)
    saved = [(p, p.value().copy()) for p in [*kept, *_slots(opt, held, kept)]]
    out = call(opt, *args, **kwargs)
    for p, value in saved:
        ops.assign(p, value)  # in place: set_data/assign_value detach the Parameter from the optimizer
    return out


def _resize_lazy_slots(opt, held) -> None:
    """State slots made for a lazy layer's placeholder Parameter (mindport.runtime.layers.Lazy*: an optimizer built
    before the model's first call, as torch allows) take the shape the first call gave the Parameter, with the value
    the optimizer made them with (zeros; nn.SGD's ``stat`` ones): no step can have run before that call, and torch
    makes its state (momentum_buffer, exp_avg...) at the first step."""
    lazy = [p for p in held if isinstance(p, Parameter) and getattr(p, "_mp_lazy", False)]
    for p in lazy:
        for slot in _slots(opt, held, [p]):
            if tuple(slot.shape) != tuple(p.shape) and len(slot.shape) == len(p.shape):
                first = slot.value().asnumpy().reshape(-1)
                fill = first[0] if first.size else 0
                slot.set_data(ops.full(p.shape, fill, dtype=slot.dtype), slice_shape=True)
        p._mp_lazy = False


def _skipping_frozen(call):
    def __call__(self, *args, **kwargs):
        held = getattr(self, "parameters", None)
        held = held if isinstance(held, tuple) else ()
        _resize_lazy_slots(self, held)
        # parameters no backward reached since the last step (``.grad`` None: mindport.runtime.training.grads_of
        # marks them for this call), which torch's optimizers skip as they skip a frozen one, their steps not counted
        unreached = self.__dict__.pop("_mp_unreached", frozenset())
        frozen = [p for p in held if isinstance(p, Parameter) and (not p.requires_grad or id(p) in unreached)]
        steps = self.__dict__.get("_mp_steps")
        counter = _counter(self) if frozen or steps is not None else None
        if counter is None:
            return _kept(call, self, held, frozen, args, kwargs)
        # torch counts each parameter's own steps (a frozen one has no gradient: its step is not taken); MindSpore's
        # update reads one counter. From the first step that skips a parameter on, each parameter's count is kept here,
        # and parameters of different counts are stepped apart, each group with the counter at its own count.
        if steps is None:
            done = int(counter.value().asnumpy().reshape(-1)[0])
            steps = self.__dict__["_mp_steps"] = {id(p): done for p in held}
        frozen_ids = {id(p) for p in frozen}
        groups: dict = {}
        for p in held:
            if id(p) not in frozen_ids:
                groups.setdefault(steps.get(id(p), 0), []).append(p)
        if not groups:
            return True
        out = True
        for done, members in sorted(groups.items()):
            ops.assign(counter, Tensor(done, counter.dtype).reshape(counter.shape))
            inside = {id(p) for p in members}
            out = _kept(call, self, held, [p for p in held if id(p) not in inside], args, kwargs)
            for p in members:
                steps[id(p)] = done + 1
        return out
    __call__._mp_skips_frozen = True
    return __call__


def _skip_frozen_in_steps() -> None:
    from mindspore.experimental.optim import Optimizer as ExperimentalOptimizer
    from mindspore.nn import Optimizer as NnOptimizer

    for cls in (ExperimentalOptimizer, NnOptimizer):
        if not getattr(cls.__call__, "_mp_skips_frozen", False):
            cls.__call__ = _skipping_frozen(cls.__call__)


if not getattr(Parameter, "_mp_marks_freezes", False):
    _original_init = Parameter.__init__
    _original_deepcopy = Parameter.__deepcopy__
    Parameter.__init__ = _init
    Parameter.__deepcopy__ = _deepcopy
    Parameter.requires_grad = property(_requires_grad.fget, _set_requires_grad, _requires_grad.fdel,
                                       _requires_grad.__doc__)
    Parameter._mp_marks_freezes = True
    _skip_frozen_in_steps()
