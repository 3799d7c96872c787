"""A required size annotated with a union of kinds (``kernel_size: Union[int, Tuple[int, int]]``, ``int | tuple``,
``Union[int, None]``) gets the value of its first kind that has one, a scalar before a sequence (issue 29, migrate21;
fresh repository PointCNN.Pytorch: Conv and SepConv were "no constructor arguments could be chosen (required
parameters of unknown kind: in_channels, out_channels, kernel_size)"). Own fixture; real torch and MindSpore."""
from __future__ import annotations

FILES = {"layers.py": '''from typing import Callable, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn


class ConvUnit(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple[int, int]],
                 with_bn: bool = True, activation: Callable[[torch.Tensor], torch.Tensor] = nn.ReLU()) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=not with_bn)
        self.act = activation
        self.bn = nn.BatchNorm2d(out_channels) if with_bn else None

    def forward(self, x):
        x = self.act(self.conv(x))
        return self.bn(x) if self.bn is not None else x


class DepthwiseUnit(nn.Module):
    """PEP 604 unions, a sequence kind first in the annotation."""

    def __init__(self, channels: int, kernel_size: tuple[int, int] | int, stride: Sequence[int] | int,
                 multiplier: Union[int, None]):
        super().__init__()
        self.dw = nn.Conv1d(channels, channels * multiplier, kernel_size, stride=stride, groups=channels)
        self.pw = nn.Conv1d(channels * multiplier, channels, 1)

    def forward(self, x):
        return self.pw(torch.relu(self.dw(x)))


class ScaledDense(nn.Module):
    def __init__(self, features: Union[int, str], scale: Union[float, int], bias: Optional[bool] = True):
        super().__init__()
        self.lin = nn.Linear(features, features, bias=bias)
        self.scale = scale

    def forward(self, x):
        return self.lin(x) * self.scale
'''}


def test_a_size_annotated_with_a_union_gets_its_scalar_kind(tmp_path):
    from mindport.discovery.build import small_value
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    # the value of each kind, the scalar first (a list kernel is refused by MindSpore's Conv2d)
    assert small_value("kernel_size", "Union[int, Tuple[int, int]]") == "3"
    assert small_value("kernel_size", "Union[List[int], int]") == "3"
    assert small_value("in_channels", "int | tuple") == "16"
    assert small_value("channels", "Union[int, None]") == "16"
    assert small_value("scale", "Union[float, int]") == "1.0"
    assert small_value("name", "Union[str, bytes]") is None  # no kind with a value: still unknown

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for rel, text in FILES.items():
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, cache=False, settings=ProveSettings(), log_dir=tmp_path / "logs")
    models = {m["class"].split(":")[1]: m for m in models}
    assert set(models) == {"ConvUnit", "DepthwiseUnit", "ScaledDense"}, models
    for name, m in models.items():
        assert m["status"] == "proven", (name, m)
    assert "kernel_size=3" in models["ConvUnit"]["ctor"], models["ConvUnit"]["ctor"]
    assert "stride=" in models["DepthwiseUnit"]["ctor"] and "[" not in models["DepthwiseUnit"]["ctor"], \
        models["DepthwiseUnit"]["ctor"]
