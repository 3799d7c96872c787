"""torch.nn.init.calculate_gain's table, in plain Python (no framework import): the runtime function
(``mindport.runtime.init.calculate_gain``) computes it at run time, and the converter writes the number itself where
the call's arguments are literals (``nn.init.calculate_gain('relu')`` -> ``1.4142135623730951``: MindSpore's table
is private and has no 'selu', so a gain given by a name at run time stays the runtime's)."""
from __future__ import annotations

import math

ONE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid")


def torch_gain(nonlinearity, param=None):
    """torch's gain for ``nonlinearity`` (its ValueError for an unknown one or a slope that is not a number)."""
    if nonlinearity in ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
