"""First contact, batch 11 (session 41): classes of failure met on repositories no corpus of ours named, each as a
fixture of our own proven by ``prove_models`` with real torch and real MindSpore (PyNative and GRAPH_MODE)."""
from __future__ import annotations

import textwrap

from mindport import convert_source
from tests.discovery._prove import prove_files

WAVENET = '''
import torch
import torch.nn.functional as F
from torch import nn


class WaveNet(nn.Module):
    def __init__(self, channels=8, layers=4, skip_channels=16):
        super().__init__()
        self.dilations = [2 ** i for i in range(layers)]
        self.filters = nn.ModuleList([nn.Conv1d(channels, channels, 2, dilation=d) for d in self.dilations])
        self.gates = nn.ModuleList([nn.Conv1d(channels, channels, 2, dilation=d) for d in self.dilations])
        self.skips = nn.ModuleList([nn.Conv1d(channels, skip_channels, 1) for _ in self.dilations])
        self.end = nn.Conv1d(skip_channels, 4, 1)

    def forward(self, x):
        for i in range(len(self.dilations)):
            residual = x
            x = torch.tanh(self.filters[i](x)) * torch.sigmoid(self.gates[i](x))
            s = self.skips[i](x)
            try:
                skip = skip[:, :, -s.size(2):]
            except:
                skip = 0
            skip = s + skip
            x = x + residual[:, :, -x.size(2):]
        return self.end(F.relu(skip))


if __name__ == "__main__":
    WaveNet()(torch.randn(2, 8, 32))
'''


def test_a_running_sum_started_by_an_except_compiles_in_a_graph(tmp_path):
    # samarth0898/ConditionalWaveNet (after vincentherrmann/pytorch-wavenet): ``try: skip = skip[...]`` /
    # ``except: skip = 0`` gives the skip sum its first value on the first pass (skip unbound); GRAPH_MODE has no
    # try ("Unsupported statement 'Try'"): ms-failed on first contact. UnboundFallbackTransform.
    result = prove_files(tmp_path, {"wavenet.py": WAVENET}, None)["wavenet.py:WaveNet"]
    assert result["status"] == "proven", result
    assert result["draws"][0]["graph"] == "ok", result["draws"]
    port = (tmp_path / "out" / "wavenet.py").read_text()
    assert "try:" not in port and "if skip is None:" in port


def test_other_trys_are_left_as_written():
    source = textwrap.dedent('''\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x, skip):
                try:
                    skip = skip + 1          # a parameter: bound before the try
                except:
                    skip = 0
                out = None
                for _ in range(2):
                    try:
                        out = out + x        # bound to None before the try
                    except TypeError:
                        out = x
                    try:
                        acc = acc + x        # the handler names the exception
                    except NameError as e:
                        acc = x
                return skip, out, acc
    ''')
    assert convert_source(source).code.count("try:") == 3


NAMED = '''
import torch.nn as nn
from oil_missing.utils.utils import Named, export


@export
class SmallResnet(nn.Module, metaclass=Named):
    def __init__(self, k=16, num_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, k, 3, padding=1), nn.BatchNorm2d(k), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(k, num_classes))

    def forward(self, x):
        return self.net(x)
'''


def test_a_missing_package_s_metaclass(tmp_path):
    # izmailovpavel/flowgmm: ``class SmallResnet(nn.Module, metaclass=Named)`` with oil (Named's package) missing:
    # the stand-in class was "metaclass conflict" at import, 8 of 15 classes not built. stubs._metaclass_names.
    result = prove_files(tmp_path, {"resnets.py": NAMED}, None)["resnets.py:SmallResnet"]
    assert result["status"] == "proven", result
