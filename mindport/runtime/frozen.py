"""Which non-trainable Parameters are torch's frozen parameters rather than buffers.

The converter keeps each persistent ``register_buffer`` (and MindSpore keeps BatchNorm's running statistics) as a
non-trainable Parameter, so a parameter a script freezes looks like a buffer unless the freeze leaves a mark. Loaded
with any :mod:`mindport.runtime` module, this marks a Parameter ``_mp_frozen`` when its ``requires_grad`` is set from
True to False after it was made (``p.requires_grad = False``, the fine-tuning loops' form; a buffer is made
non-trainable and stays so), and keeps the mark on a deep copy (``copy.deepcopy(model)``, an EMA copy's).
``mindport.runtime.inplace.requires_grad_`` marks what it freezes too, and the converter makes a frozen-from-start
``nn.Parameter(t, requires_grad=False)`` through it. :func:`mindport.runtime.containers.is_parameter` reads the mark.
"""
from __future__ import annotations

from mindspore import Parameter

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


if not getattr(Parameter, "_mp_marks_freezes", False):
    _original_init = Parameter.__init__
    _original_deepcopy = Parameter.__deepcopy__
    Parameter.__init__ = _init
    Parameter.__deepcopy__ = _deepcopy
    Parameter.requires_grad = property(_requires_grad.fget, _set_requires_grad, _requires_grad.fdel,
                                       _requires_grad.__doc__)
    Parameter._mp_marks_freezes = True
