"""torch's private layer base classes in type tests and as bases: ``isinstance(m, nn.modules.conv._ConvNd)`` is true
for what torch's convolutions convert to (the mapping entries' proofs compare each with torch). A class derived from
``_BatchNorm`` is a Cell with torch's batch norm behaviour (asteroid's ``class BatchNorm(_BatchNorm)``, compared with
torch in tests/converter/test_private_base_subclass.py); deriving from another one defines the class (the module that
holds it imports) and building it raises with the reason, instead of building a Cell without the layer's behaviour."""
from __future__ import annotations

import pytest

from mindport.runtime import layers


@pytest.mark.parametrize("family", [layers.ConvNd, layers.InstanceNormNd, layers.NormBase])
def test_building_a_class_derived_from_a_private_base_raises_with_the_reason(family):
    custom = type("Custom", (family,), {"extra": lambda self: 1})  # defining it does not raise: the module imports
    with pytest.raises(TypeError, match="private base.*derive Custom from the public layer"):
        custom(4)


def test_a_class_derived_from_batch_norm_is_a_cell_of_the_family():
    from mindspore import nn

    custom = type("Custom", (layers.BatchNormNd,), {"_check_input_dim": lambda self, x: None})
    cell = custom(4)
    assert isinstance(cell, nn.Cell) and isinstance(cell, layers.BatchNormNd) and isinstance(cell, layers.NormBase)
    assert sorted(n for n, _ in cell.parameters_and_names()) == [
        "bias", "num_batches_tracked", "running_mean", "running_var", "weight"]


def test_the_families_hold_the_converted_classes():
    from mindspore import nn

    assert isinstance(nn.Conv2d(3, 4, 3), layers.ConvNd) and isinstance(layers.Conv1d(3, 4, 3), layers.ConvNd)
    assert isinstance(nn.BatchNorm3d(4), layers.BatchNormNd) and not isinstance(nn.LayerNorm((4,)), layers.NormBase)
    assert issubclass(layers.InstanceNorm2d, layers.InstanceNormNd) and issubclass(nn.BatchNorm2d, layers.NormBase)
