"""Every known trap, re-injected into a converted model, is localised to its layer with its cause."""
from __future__ import annotations

import pytest

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import validate

INPUTS = {"convnet": ["2x3x16x16:float32"], "upnet": ["2x3x8x8:float32"]}
CLASSES = {"convnet": "ConvNet", "upnet": "UpNet"}

# (model, layer, old text in the converted line, trap text, trap name, words the cause must contain)
TRAPS = [
    ("convnet", "ln", r"epsilon=1e-05", "epsilon=1e-07", "eps", "eps differs"),
    ("convnet", "bn1", r"eps=1e-05", "eps=1e-03", "eps", "eps differs"),
    ("convnet", "bn1", r"momentum=0\.9", "momentum=0.1", "momentum", "1 - torch"),
    ("convnet", "act", r"approximate=False", "approximate=True", "gelu_approximate", "GELU approximation"),
    ("convnet", "conv2", r"pad_mode='valid'", "pad_mode='same'", "padding", "pad_mode='same'"),
    ("convnet", "pool", r"stride=2,\s*", "", "pool_stride", "defaults stride to kernel_size"),
    ("convnet", "conv1", r"has_bias=True", "has_bias=False", "has_bias", "has_bias=False"),
    ("convnet", "avg", r"count_include_pad=False", "count_include_pad=True", "count_include_pad",
     "count_include_pad differs"),
    ("convnet", "leaky", r"alpha=0\.01", "alpha=0.2", "leaky_relu_slope", "negative_slope=0.01"),
    ("convnet", "drop", r"p=0\.1", "keep_prob=0.1", "dropout_rate", "keep_prob"),
    ("upnet", "up", r"align_corners=True", "align_corners=False", "align_corners", "align_corners differs"),
    ("upnet", "softmax", r"axis=1", "axis=-1", "softmax_axis", "dim=1"),  # MindSpore's own nn.Softmax(axis=...)
]


@pytest.mark.parametrize("model,layer,old,new,trap,words", TRAPS, ids=[f"{t[1]}-{t[4]}" for t in TRAPS])
def test_injected_trap_is_localised(tmp_path, model, layer, old, new, trap, words):
    ms_file = convert_model(model, tmp_path, edits=[(layer, old, new)])
    report = validate(f"{MODELS / model}.py:{CLASSES[model]}", f"{ms_file}:{CLASSES[model]}",
                      inputs=INPUTS[model], graph_mode=False)
    assert not report.ok
    fd = report.first_divergent
    assert fd is not None, report.to_json()
    assert fd.path == layer, (fd.path, fd.status, fd.cause)
    assert trap in [c["trap"] for c in fd.causes], fd.causes
    assert words in fd.cause
    # the two configurations are shown side by side
    assert fd.torch_config and fd.ms_config
    # every layer before it matched
    assert all(not lr.diverged for lr in report.layers[:fd.index])


def test_training_only_trap_leaves_outputs_equal(tmp_path):
    """BatchNorm momentum does not change eval outputs: the outputs match, yet the port is flagged."""
    ms_file = convert_model("convnet", tmp_path, edits=[("bn1", r"momentum=0\.9", "momentum=0.1")])
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=INPUTS["convnet"],
                      graph_mode=False)
    assert all(o.allclose for o in report.outputs)
    assert not report.ok
    assert report.config_findings[0]["training_only"] is True
    assert report.config_findings[0]["path"] == "bn1"


POOL_1D = '''import torch
import torch.nn as nn


class Trend(nn.Module):
    """FEDformer's moving average: torch keeps AvgPool1d's kernel_size as the 1-tuple (25,)."""

    def __init__(self, kernel_size=25):
        super().__init__()
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=1, padding=0)
        self.max = nn.MaxPool1d(3, stride=1, padding=1)

    def forward(self, x):
        return self.avg(x) + self.max(x)[..., : x.shape[-1] - 24]
'''


def _assert_no_finding(tmp_path, source: str, cls: str, inputs: list[str], graph_mode: bool) -> None:
    """The torch program and its conversion validated against each other: no settings finding, outputs equal."""
    from mindport.migrator import convert_source

    stem = cls.lower()  # a module name of each program's own
    (tmp_path / f"{stem}_torch.py").write_text(source)
    (tmp_path / f"{stem}_ms.py").write_text(convert_source(source).code)
    report = validate(f"{tmp_path / f'{stem}_torch.py'}:{cls}", f"{tmp_path / f'{stem}_ms.py'}:{cls}",
                      inputs=inputs, graph_mode=graph_mode)
    assert report.config_findings == [], report.config_findings
    assert report.ok and all(o.allclose for o in report.outputs)


def test_a_1d_pool_window_is_not_a_finding(tmp_path):
    """A 1-D pool's window: (25,) in torch and 25 in MindSpore are one window, not a "pooling window differs" trap
    (the discovery sweep reported FEDformer's correct port as diverged)."""
    _assert_no_finding(tmp_path, POOL_1D, "Trend", ["2x4x40:float32"], graph_mode=False)


UP_BILINEAR = '''import torch
import torch.nn as nn


class Up(nn.Module):
    """minemile's DeepLabv3 decoder: nn.UpsamplingBilinear2d, bilinear with align_corners=True."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.up_4x = nn.UpsamplingBilinear2d(scale_factor=4)

    def forward(self, x):
        return self.up_4x(self.conv(x))
'''


def test_upsampling_bilinear_is_not_an_align_corners_finding(tmp_path):
    """The runtime UpsamplingBilinear2d (align_corners=True, as torch's) is no "align_corners differs" trap: the
    discovery proofs reported minemile's DeepLabv3 decoder as diverged on it."""
    _assert_no_finding(tmp_path, UP_BILINEAR, "Up", ["2x3x5x5:float32"], graph_mode=True)


MODE_PADDED = '''
import torch
import torch.nn as nn


class Token(nn.Module):
    def __init__(self):
        super().__init__()
        self.circ = nn.Conv1d(4, 8, kernel_size=3, padding=1, padding_mode='circular', bias=False)
        self.refl = nn.Conv2d(3, 4, kernel_size=3, padding=1, padding_mode='reflect')

    def forward(self, x, img):
        return self.circ(x).sum() + self.refl(img).sum()
'''


def test_a_mode_padded_convolution_is_not_a_padding_finding(tmp_path):
    """mindport's mode-padded convolutions (torch's padding_mode 'circular'/'reflect', padded with ops.pad) keep
    torch's padding_mode, which the settings check reads since it reads a runtime layer's attributes: "torch
    padding_mode='circular' has no MindSpore Conv equivalent" made Autoformer's TokenEmbedding 'diverged'
    (KaigeZheng/LTSF-model, hyperplasma/tsf-demo, after graph36's merge)."""
    _assert_no_finding(tmp_path, MODE_PADDED, "Token", ["2x4x10:float32", "1x3x6x6:float32"], graph_mode=True)
