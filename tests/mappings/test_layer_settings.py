"""torch.nn layers x the settings and shapes real code uses (tests/mappings/layer_settings.py builds the cases):
each converted inside a tiny Module, weights moved with mindport.transfer_weights (strict: names and sizes), run on
the same inputs on both frameworks, every output and each attribute read in forward compared with torch's at run time.

A case passes when it matches torch. The cases in KNOWN end otherwise on purpose or are recorded open: flagged
(the conversion says why, a setting MindSpore cannot do), attr_flagged (the layer matches; an attribute read is
flagged), attribute (the layer matches; an attribute read differs: open, see /work/notes/layers12.md). The test
fails when a case's outcome changes either way, so a fix updates this table.

The first run (before any fix) and the after figures: ``python -m tests.mappings.layer_settings``."""
from __future__ import annotations

import re

import pytest

from tests.mappings.layer_settings import CASES, run_case

pytest.importorskip("torch")
pytest.importorskip("mindspore")

# the outcomes that are not "pass", with why: (regular expression over the case id, reason)
_FLAGGED = [
    (r"Conv[123]d\(.*padding='same', padding_mode='reflect'", "'same' with a padding mode: give numbers"),
    (r"ConvTranspose3d\(.*dilation=2\)", "MindSpore's Conv3dTranspose has no depth dilation"),
    (r"Embedding\(10, 4, max_norm", "MindSpore's Embedding does not renormalise rows"),
    (r"AdaptiveMaxPool3d\(2, return_indices=True\)", "MindSpore's indices are int32"),
    (r"LSTM\(.*proj_size=3", "MindSpore's LSTM has no projection"),
    (r"KLDivLoss\(.*log_target=True", "MindSpore's KLDivLoss has no log_target"),
]
# the layer matches torch; reading these attributes is flagged (MP104: no attribute holding torch's value)
_FLAGGED_READS = {
    "ConvTranspose2d": {"output_padding"}, "ConvTranspose3d": {"output_padding"},
    "MaxPool1d": {"padding"}, "AvgPool1d": {"padding"}, "MaxPool2d": {"padding"},
    "MaxUnpool1d": {"kernel_size", "stride"}, "MaxUnpool2d": {"kernel_size", "stride"},
    "MaxUnpool3d": {"kernel_size", "stride"}, "AdaptiveAvgPool3d": {"output_size"},
    "AdaptiveMaxPool3d": {"output_size"}, "Unfold": {"kernel_size"}, "Fold": {"output_size", "kernel_size"},
    "PairwiseDistance": {"norm"},  # RNN's nonlinearity: derived from its cell since session 15 (reads as torch's)
    # its weight is 4-D in MindSpore: the weight converts, reading its shape is flagged
    "Conv1d": {"weight"}, "ConvTranspose1d": {"weight"},
}
# open: the layer matches torch, an attribute read differs (none since promo13: padding='valid' reads 'valid' and
# AdaptiveAvgPool2d's output_size what was passed, tests/mappings/test_layer_reads_exact.py)
_ATTRIBUTE: list[tuple[str, str]] = []
# open: loud at run time, with no diagnostic (none since promo13: float64 through ReLU6/Hardshrink/Softshrink runs
# by torch's formula, mindport.runtime.layers)
_CRASH: list[tuple[str, str]] = []


def expected(case) -> str:
    for table, status in ((_CRASH, "crash"), (_FLAGGED, "flagged"), (_ATTRIBUTE, "attribute")):
        if any(re.match(pattern, case.id) for pattern, _ in table):
            return status
    reads = {a.split(".")[0] for a in case.attrs if not a.endswith(("]", ")"))}  # weight.shape[0] is not flagged
    if reads & _FLAGGED_READS.get(case.call.split("(")[0], set()):
        return "attr_flagged"
    return "pass"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_layer_setting(case):
    outcome = run_case(case)
    want = expected(case)
    if want == "attribute" and outcome.status == "pass":  # some cases of an open family pass
        return
    assert outcome.status == want, f"{case.source()}\n{outcome.status}: {outcome.detail}"
