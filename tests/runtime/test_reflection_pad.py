"""mindport.runtime.layers.ReflectionPad1d/2d/3d: torch's values (symmetric, asymmetric, batched and unbatched
inputs, float32/float64) and torch's ``padding`` attribute, which mindspore.nn's Cells hold as their own pairs."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport.runtime import layers as mp_nn

CASES = [
    ("ReflectionPad1d", 2, [(2, 3, 5), (3, 5)]),
    ("ReflectionPad1d", (3, 1), [(2, 3, 5), (3, 5)]),
    ("ReflectionPad2d", 1, [(2, 3, 4, 4), (3, 4, 4)]),
    ("ReflectionPad2d", (1, 2, 0, 3), [(2, 3, 4, 5), (3, 4, 5)]),
    ("ReflectionPad3d", 1, [(1, 2, 3, 3, 3), (2, 3, 3, 3)]),
    ("ReflectionPad3d", (1, 2, 0, 1, 2, 0), [(1, 2, 3, 4, 4), (2, 3, 4, 4)]),
]


@pytest.mark.parametrize(("name", "padding", "shapes"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reflection_pad_matches_torch(name, padding, shapes, dtype):
    t_layer, m_layer = getattr(torch.nn, name)(padding), getattr(mp_nn, name)(padding)
    assert tuple(m_layer.padding) == tuple(t_layer.padding)
    for shape in shapes:
        x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
        expected = t_layer(torch.tensor(x)).numpy()
        got = m_layer(ms.Tensor(x)).asnumpy()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
