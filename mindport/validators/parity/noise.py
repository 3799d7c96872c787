"""Telling float32 noise from divergence in training parity: a torch float32-vs-float64 control.

Training amplifies rounding: two float32 implementations of the same step drift apart over steps (a ReLU mask bit
flipped by a last-bit difference in a BatchNorm, Adam dividing by a tiny second moment), and a fixed tolerance
reports that noise as divergence. The control runs torch's own training again in float64 from the same initial
weights and data: how far torch's float32 run is from it at each step is the noise the script's arithmetic makes.
A MindSpore loss beyond the fixed tolerance still tracks when it is within ``NOISE_FACTOR`` times that noise (the
largest relative control difference so far on its curve, noise only grows, and never below float32's unit in the
last place); a semantic difference (a wrong eps, a missing term) sits orders of magnitude above it.

The forward proof of a discovered model (``mindport.discovery.prove``) takes the same control for one forward
(``forward_within_noise``): a draw whose outputs miss the fixed tolerance passes when MindSpore's distance to torch
is within NOISE_FACTOR times torch's own float32-to-float64 distance on the same weights and inputs, unless that
distance is itself a sizeable share of the output (ILL_CONDITIONED). Such an ill-conditioned draw is judged in
float64 (``ill_conditioned_within_noise``): the port passes when it is no further from torch than torch's own float32
is from float64, and the port run in float64 matches torch's float64 run within the proof's tolerance. Anomaly-Transformer's prior ``exp(-d^2 / 2 sigma^2) / sigma`` (sigma
from ``3 ** sigmoid(.) - 1`` near 1e-5): the port 6.8e-5 from torch where torch float32 is 1.6e-4 from float64.
"""
from __future__ import annotations

# MindSpore's float32 kernels are not more exact than torch's (its CPU BatchNorm is 2-3x less accurate), and both
# sides' errors add: ten times torch's own distance to float64 bounds what rounding alone explains.
NOISE_FACTOR = 10.0
# and no float32 loss is known better than one unit in its last place: the noise is never taken below that (a
# single forward's kernels already differ by an ulp or two, where torch's happened to land nearer float64)
FLOAT32_ULP = 2.0 ** -23


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def within_noise(torch32: list[float], torch64: list[float], got: list[float]) -> list[bool]:
    """Per step: is ``got`` within NOISE_FACTOR times the float32 noise so far (``torch32`` vs ``torch64``)?"""
    envelope, out = FLOAT32_ULP, []
    for t32, t64, m in zip(torch32, torch64, got):
        envelope = max(envelope, rel(t32, t64))
        out.append(rel(m, t32) <= NOISE_FACTOR * envelope)
    return out


# one forward whose float32 rounding already reaches this share of its largest output is ill-conditioned at the draw
# (a chain of amplifying layers): ten times that noise would excuse real differences, so the control does not judge
# it. Measured: PCT's Point_Transformer_Last at the random draw 2.5e-5 (softmax of large attention energies); the
# deep-text-recognition RCNN_FeatureExtractor at the old own-init BatchNorm statistics 9.3e-2
ILL_CONDITIONED = 1e-4


def forward_within_noise(ms_abs: float, noise_abs: float, scale: float) -> bool:
    """One forward's output: is MindSpore's largest absolute distance to torch float32 (``ms_abs``) within
    NOISE_FACTOR times torch's own float32-to-float64 distance (``noise_abs``; never below one ulp of ``scale``, the
    output's largest magnitude), the draw not ill-conditioned?"""
    envelope = max(noise_abs, FLOAT32_ULP * scale)
    return noise_abs <= ILL_CONDITIONED * scale and ms_abs <= NOISE_FACTOR * envelope


def ill_conditioned_within_noise(ms_abs: float, noise_abs: float, port64_close: bool) -> bool:
    """An ill-conditioned output (torch's own float32 more than ILL_CONDITIONED of the output from float64): is the
    port within the reference's own noise? Its largest distance to torch float32 (``ms_abs``) at most torch's own
    largest distance to float64 (``noise_abs``; msprobe's benchmark ratio, port error over the same-precision
    reference's error against a float64 golden, at most 1), AND the port run in float64 within the proof's own
    tolerance of torch's float64 run (``port64_close``). The first alone is not sound: rounding amplified ~1e4 times
    hides a formula error below it (an approximate GELU feeding the width of a Gaussian prior: the port 89 from torch
    where torch float32 was 169 from float64); in float64 the same amplification leaves ~1e-9 of that noise, and the
    formula error stands out."""
    return ms_abs <= noise_abs and port64_close


# MindSpore 2.10's float32 CPU kernels for transcendental functions are less exact than torch's: ops.exp measured up
# to 8 ulp of its result from torch.exp on N(0, 1) and N(0, 4) inputs, where torch is within 1-2 of float64; a
# cancelling formula (``torch.exp(x) - x - 1``, zhuofupan/Pytorch-Deep-Neural-Networks' Exp_sq) carries those ulps of
# exp(x) into a result near 0, past the fixed tolerance and past NOISE_FACTOR x torch's own rounding
KERNEL_ULPS = 64


def kernel_accuracy_within(ms_abs: float, scale: float, port64_close: bool) -> bool:
    """A well-conditioned output MindSpore misses by more than torch's own float32 rounding explains: within the
    float32 accuracy of MindSpore's kernels (``ms_abs`` at most KERNEL_ULPS ulps of ``scale``, the output's largest
    magnitude: 7.6e-6 of it) AND the port run in float64 within the proof's tolerance of torch's float64 run
    (``port64_close``: the formula is torch's; a wrong one is no closer in float64)."""
    return port64_close and ms_abs <= KERNEL_ULPS * FLOAT32_ULP * scale


# A port that cannot run in float64 because a MindSpore CPU kernel has none (Conv2D: "must be a type of {...
# Tensor[Float32] ...}, but got ... Float64"): the formula cannot be checked in float64, so the float32 miss is held
# to both bounds at once, MindSpore's kernel accuracy (KERNEL_ULPS ulps of the output's largest magnitude) and a
# multiple of torch's own distance to float64. Measured: MindSpore 2.10's CPU Conv2D accumulates long reductions less
# exactly than torch's, 1.0x torch's float32 distance to float64 at K = 16 reduction terms, 2.5x at 576, 7.5x at 2304,
# 8.4x at 9216 (3x3 over 1024 channels); an SSD prediction head summing such convolutions missed by 10.5x
NO_FLOAT64_FACTOR = 32.0


def lacks_float64_kernel(error: str | None) -> bool:
    """Did the port's float64 run stop at a MindSpore kernel that has no float64 version?"""
    return bool(error) and "Float64" in error and "must be a type of" in error


def kernel_accuracy_without_float64(ms_abs: float, noise_abs: float, scale: float) -> bool:
    """A well-conditioned output whose port has no float64 run (``lacks_float64_kernel``): MindSpore's largest
    distance to torch within KERNEL_ULPS ulps of ``scale`` AND within NO_FLOAT64_FACTOR times torch's own float32
    distance to float64 (never below one ulp of ``scale``)."""
    envelope = max(noise_abs, FLOAT32_ULP * scale)
    return ms_abs <= KERNEL_ULPS * FLOAT32_ULP * scale and ms_abs <= NO_FLOAT64_FACTOR * envelope
