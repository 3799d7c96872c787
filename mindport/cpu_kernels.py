"""MindSpore's CPU convolutions on machines with AVX-512: capped at AVX2, 40-130 times faster, same numbers.

MindSpore 2.10's CPU kernels for ``Conv2d`` (and ``Conv2dTranspose``, grouped/depthwise convolutions, and their
gradients) run through the oneDNN 3.10 it bundles. On a CPU with AVX-512 (measured on this project's Xeon with
AVX-512 FP16, AMX, BF16), oneDNN picks ``jit_uni_ncsp:conv+ref:any`` for MindSpore's plain NCHW float32 tensors,
a path that runs at 0.2-0.3 GFLOP/s; capped at AVX2 (``ONEDNN_MAX_CPU_ISA=AVX2``) it picks ``x64:gemm:jit``
(``ONEDNN_VERBOSE=1`` prints which). Measured, one thread, PyNative, best of 3 (seconds):

=========================================================  =========  ==========
operation                                                  default    AVX2 cap
=========================================================  =========  ==========
``nn.Conv2d(256, 256, 3)`` on 2x256x32x32                  6.1        0.07
``nn.Conv2dTranspose(64, 64, 2, 2)`` on 8x64x56x56         3.96       0.030
depthwise ``nn.Conv2d(64, 64, 3, group=64)`` 8x64x56x56    0.443      0.0093
``Conv2d(64, 64, 3)`` forward + backward, 8x64x56x56       4.48       0.101
a DRN-C-26 segmentation net (20.6 M parameters) 2x3x256²   88-137     0.96
=========================================================  =========  ==========

BatchNorm, pooling, ReLU, 1x1 convolutions and ``Dense`` do not move (within 30 %). torch 2.13's own convolution
takes 0.025 s on the first row either way. The cap changes which algorithm computes the convolution, so the float32
rounding differs as any two algorithms' do; each proof's tolerance already allows for it.

A proof of a large CNN spent its 180 s budget inside one MindSpore forward (the DRN above: "stopped") before this,
and a converted CNN trains on CPU ~40 times slower than torch with the default. So mindport runs MindSpore capped:
its command line (:func:`cap_this_process`, before any MindSpore kernel runs; the processes it starts inherit the
cap) and every side process of a proof (:func:`capped`, used by the parity worker's environment). A value the user
set is kept (``ONEDNN_MAX_CPU_ISA=AVX512_CORE mindport ...``). The generated train/eval scripts set the same default
for the user's own runs. oneDNN reads the variable when it first dispatches, so setting it after ``import
mindspore`` still works, as long as no convolution has run yet.
"""
from __future__ import annotations

import os

VARIABLE = "ONEDNN_MAX_CPU_ISA"
CAP = "AVX2"


def capped(env: dict) -> dict:
    """``env`` with the AVX2 cap unless it names an ISA already (returned; the dict is updated in place)."""
    env.setdefault(VARIABLE, CAP)
    return env


def cap_this_process() -> None:
    """Cap this process's oneDNN (and the processes it starts) at AVX2, unless the user chose an ISA."""
    capped(os.environ)
