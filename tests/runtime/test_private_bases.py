"""torch's private layer base classes in type tests and as bases: ``isinstance(m, nn.modules.conv._ConvNd)`` is true
for what torch's convolutions convert to (the mapping entries' proofs compare each with torch); deriving a class from
one raises with the reason instead of building a Cell without the layer's behaviour."""
from __future__ import annotations

import pytest

from mindport.runtime import layers


@pytest.mark.parametrize("family", [layers.ConvNd, layers.BatchNormNd, layers.InstanceNormNd, layers.NormBase])
def test_deriving_from_a_private_base_raises_with_the_reason(family):
    with pytest.raises(TypeError, match="private base"):
        type("Custom", (family,), {})


def test_the_families_hold_the_converted_classes():
    from mindspore import nn

    assert isinstance(nn.Conv2d(3, 4, 3), layers.ConvNd) and isinstance(layers.Conv1d(3, 4, 3), layers.ConvNd)
    assert isinstance(nn.BatchNorm3d(4), layers.BatchNormNd) and not isinstance(nn.LayerNorm((4,)), layers.NormBase)
    assert issubclass(layers.InstanceNorm2d, layers.InstanceNormNd) and issubclass(nn.BatchNorm2d, layers.NormBase)
