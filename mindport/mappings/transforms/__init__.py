"""Named transforms that mapping entries refer to: the only place where mapping logic is code.

The registries and the helpers live in ``base.py``; one module per area (``functions``, ``layers``, ``optim``,
``tensor``) registers its transforms with base's decorators, so a new API's transform sits beside its kin.
Importing this package registers them all.
"""
from mindport.mappings.transforms import functions, layers, optim, tensor  # noqa: F401  (registration)
from mindport.mappings.transforms.base import (  # noqa: F401
    CALL_TRANSFORMS,
    TARGET,
    UNKNOWN,
    VALUE_TRANSFORMS,
    WEIGHT_TRANSFORMS,
    Arg,
    Unsupported,
    call_transform,
    new,
    value_code,
    value_transform,
    weight_transform,
)
