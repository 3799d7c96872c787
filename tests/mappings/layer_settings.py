"""torch.nn layers x the settings and shapes real code uses, converted and run on both frameworks.

Every case is one torch layer built inside a tiny ``torch.nn.Module`` whose ``forward`` calls it and reads the
layer's attributes that model code reads after construction (``conv.out_channels``, ``lstm.hidden_size`` ...). The
module's source is converted by mindport, both programs are built, the torch weights (and buffers) are set to random
values and moved with :func:`mindport.transfer_weights` (strict: every torch key must line up, names and sizes), the
same inputs run through both, and every output and attribute read is compared with torch's.

A case ends one of four ways: ``pass``; ``flagged`` (the conversion says why it cannot convert the line: loud, by
design); ``crash`` (no diagnostic, but building, moving the weights or running fails: loud, not flagged); ``silent``
(runs, and a value, shape, dtype or attribute differs from torch's).

``python -m tests.mappings.layer_settings [substring...]`` prints the table by layer family.
"""
from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

# ----------------------------------------------------------------------------------------------------------- inputs


def F(*shape):  # noqa: N802 - spec constructors read like types
    return ("float32", shape)


def D(*shape):  # noqa: N802
    return ("float64", shape)


def I(n, *shape):  # noqa: N802, E743 - integers in [0, n)
    return (f"int{n}", shape)


def P(*shape):  # noqa: N802 - probabilities in (0, 1)
    return ("prob", shape)


def POS(*shape):  # noqa: N802 - positive floats
    return ("pos", shape)


def SIGN(*shape):  # noqa: N802 - +1 / -1 floats
    return ("sign", shape)


def make_input(spec, rng):
    kind, shape = spec
    if kind == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "float64":
        return rng.standard_normal(shape).astype(np.float64)
    if kind == "prob":
        return (1 / (1 + np.exp(-rng.standard_normal(shape)))).astype(np.float32)
    if kind == "pos":
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)
    if kind == "sign":
        return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0).astype(np.float32)
    if kind.startswith("int"):
        return rng.integers(0, int(kind[3:]), shape).astype(np.int64)
    raise ValueError(kind)


# ------------------------------------------------------------------------------------------------------------ cases


@dataclass
class Case:
    family: str
    call: str  # torch.nn.<call>
    inputs: list
    attrs: tuple = ()  # attributes of the layer read in forward
    forward: str = ""  # the forward body's call, default ``self.layer(x0, x1, ...)``
    atol: float = 1e-4
    id: str = field(default="")

    def __post_init__(self):
        if not self.id:
            letter = {"float32": "f", "float64": "d", "prob": "p", "pos": "q", "sign": "s"}
            shapes = "|".join(f"{letter.get(k, 'i')}{'x'.join(map(str, s))}" for k, s in self.inputs)
            self.id = f"{self.call}@{shapes}"

    def source(self) -> str:
        args = ", ".join(f"x{i}" for i in range(len(self.inputs)))
        body = self.forward or f"self.layer({args})"
        reads = "".join(f", self.layer.{a}" for a in self.attrs)
        return (f"import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                f"        super().__init__()\n        self.layer = nn.{self.call}\n\n"
                f"    def forward(self, {args}):\n        out = {body}\n        return out{reads}\n")


CASES: list[Case] = []


def add(family, call, inputs, attrs=(), **kw):
    CASES.append(Case(family, call, list(inputs), tuple(attrs), **kw))


CONV_ATTRS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
              "padding_mode", "weight.shape")


def _conv_cases():
    for dim in (1, 2, 3):
        name = f"Conv{dim}d"
        fam = "conv"
        sp = {1: (13,), 2: (7, 9), 3: (5, 7, 6)}[dim]
        small = {1: (1,), 2: (1, 1), 3: (1, 1, 1)}[dim]
        for k, s, p, d in [(3, 1, 1, 1), (1, 2, 0, 1), (2, 3, 0, 1), (3, 2, 1, 2), (5, 1, 2, 1), (4, 2, 1, 1)]:
            add(fam, f"{name}(4, 6, {k}, stride={s}, padding={p}, dilation={d})", [F(2, 4, *sp)], CONV_ATTRS)
        for pad in ("'same'", "'valid'"):
            for k, d in [(3, 1), (4, 1), (3, 2), (2, 3)]:
                add(fam, f"{name}(4, 6, {k}, padding={pad}, dilation={d})", [F(2, 4, *sp)], CONV_ATTRS)
        tup = lambda v: "(" + ", ".join(str(v + i) for i in range(dim)) + ("," if dim == 1 else "") + ")"  # noqa: E731
        add(fam, f"{name}(4, 6, {tup(2)}, stride={tup(1)}, padding={tup(0)})", [F(2, 4, *sp)], CONV_ATTRS)
        for mode in ("reflect", "replicate", "circular", "zeros"):
            add(fam, f"{name}(4, 6, 3, padding=1, padding_mode='{mode}')", [F(2, 4, *sp)], CONV_ATTRS)
            add(fam, f"{name}(4, 6, 3, stride=2, padding=2, padding_mode='{mode}', bias=False)", [F(1, 4, *sp)],
                CONV_ATTRS)
        add(fam, f"{name}(4, 6, 3, padding='same', padding_mode='reflect')", [F(2, 4, *sp)], CONV_ATTRS)
        add(fam, f"{name}(4, 8, 3, padding=1, groups=2)", [F(2, 4, *sp)], CONV_ATTRS)
        add(fam, f"{name}(4, 4, 3, padding=1, groups=4, bias=False)", [F(2, 4, *sp)], CONV_ATTRS)
        add(fam, f"{name}(1, 3, 3, padding=1)", [F(1, 1, *sp)], CONV_ATTRS)
        add(fam, f"{name}(4, 6, 1)", [F(1, 4, *small)], CONV_ATTRS)
        add(fam, f"{name}(4, 6, 3, padding=1)", [F(4, *sp)], CONV_ATTRS)  # unbatched
        add(fam, f"{name}(4, 6, 3, padding=1, bias=False)", [F(2, 4, *sp)], CONV_ATTRS + ("bias",))
        # the weight dimensions a 4-D MindSpore Conv1d weight shares with torch's: read unflagged, torch's values
        add(fam, f"{name}(4, 6, 5, groups=2)", [F(2, 4, *sp)],
            ("weight.shape[0]", "weight.shape[1]", "weight.shape[-1]", "weight.size(0)", "weight.size(1)"))


def _conv_transpose_cases():
    attrs = CONV_ATTRS + ("output_padding",)
    for dim in (1, 2, 3):
        name = f"ConvTranspose{dim}d"
        fam = "conv_transpose"
        sp = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}[dim]
        for k, s, p, op, d in [(3, 1, 0, 0, 1), (4, 2, 1, 0, 1), (3, 2, 1, 1, 1), (2, 3, 0, 0, 1), (1, 2, 0, 1, 1),
                               (3, 2, 0, 1, 2), (5, 3, 2, 2, 1)]:
            add(fam, f"{name}(4, 6, {k}, stride={s}, padding={p}, output_padding={op}, dilation={d})",
                [F(2, 4, *sp)], attrs)
        add(fam, f"{name}(4, 6, 3, stride=2, padding=1, groups=2, bias=False)", [F(2, 4, *sp)], attrs)
        add(fam, f"{name}(1, 1, 2, stride=2)", [F(1, 1, *sp)], attrs)
        add(fam, f"{name}(4, 6, 3, stride=2)", [F(4, *sp)], attrs)  # unbatched
    add("conv_transpose", "ConvTranspose3d(4, 6, 3, stride=2, dilation=(1, 2, 2))", [F(2, 4, 3, 4, 5)])


def _linear_cases():
    fam = "linear"
    la = ("in_features", "out_features", "weight.shape")
    add(fam, "Linear(8, 5)", [F(3, 8)], la)
    add(fam, "Linear(8, 5, bias=False)", [F(2, 4, 8)], la + ("bias",))
    add(fam, "Linear(8, 5)", [F(8)], la)
    add(fam, "Linear(1, 1)", [F(1, 1)], la)
    add(fam, "Linear(8, 5)", [F(2, 3, 4, 8)], la)
    add(fam, "Linear(8, 5)", [D(3, 8)], la, forward="self.layer.double()(x0)")
    add(fam, "Bilinear(4, 5, 3)", [F(2, 4), F(2, 5)], ("in1_features", "in2_features", "out_features"))
    add(fam, "Bilinear(4, 5, 3, bias=False)", [F(4), F(5)], ("in1_features", "out_features"))
    add(fam, "Identity()", [F(2, 3)])
    add(fam, "Identity(54, unused='x')", [F(2, 3)])


def _embedding_cases():
    fam = "embedding"
    ea = ("num_embeddings", "embedding_dim", "padding_idx", "weight.shape")
    add(fam, "Embedding(10, 4)", [I(10, 2, 5)], ea)
    add(fam, "Embedding(10, 4, padding_idx=0)", [I(10, 2, 5)], ea)
    add(fam, "Embedding(10, 4, padding_idx=-1)", [I(10, 7)], ea)
    add(fam, "Embedding(10, 4)", [I(10)], ea)  # a 0-d index
    add(fam, "Embedding(1, 3)", [I(1, 1, 1)], ea)
    add(fam, "Embedding(10, 4, max_norm=1.0)", [I(10, 2, 5)], ea + ("max_norm",))
    add(fam, "Embedding(10, 4, scale_grad_by_freq=True, sparse=False)", [I(10, 3)], ea)
    ba = ("num_embeddings", "embedding_dim", "mode")
    for mode in ("'mean'", "'sum'", "'max'"):
        add(fam, f"EmbeddingBag(10, 4, mode={mode})", [I(10, 3, 5)], ba)
    add(fam, "EmbeddingBag(10, 4, mode='sum')", [I(10, 7), I(3, 3)], ba,
        forward="self.layer(x0, torch.tensor([0, 2, 5]))")
    add(fam, "EmbeddingBag(10, 4, padding_idx=1)", [I(10, 3, 5)], ba)


def _norm_cases():
    fam = "batch_norm"
    ba = ("num_features", "eps", "momentum", "affine", "track_running_stats")
    for dim, shapes in ((1, [F(4, 6), F(3, 6, 7), F(1, 6, 1)]), (2, [F(2, 6, 5, 7), F(1, 6, 1, 1)]),
                        (3, [F(2, 6, 3, 4, 5)])):
        for sh in shapes:
            add(fam, f"BatchNorm{dim}d(6)", [sh], ba)
        add(fam, f"BatchNorm{dim}d(6, affine=False)", [shapes[0]], ba)
        add(fam, f"BatchNorm{dim}d(6, eps=1e-3, momentum=0.01)", [shapes[0]], ba)
        add(fam, f"BatchNorm{dim}d(6, momentum=None)", [shapes[0]], ba)
        add(fam, f"BatchNorm{dim}d(6, track_running_stats=False)", [shapes[0]], ba)
        add(fam, f"BatchNorm{dim}d(6)", [shapes[0]], ("weight.shape", "running_mean.shape", "bias.shape"))
    add(fam, "SyncBatchNorm(6)", [F(2, 6, 5, 7)], ba)
    fam = "instance_norm"
    ia = ("num_features", "eps", "affine", "track_running_stats")
    for dim, sh, unb in ((1, F(2, 6, 9), F(6, 9)), (2, F(2, 6, 5, 7), F(6, 5, 7)), (3, F(2, 6, 3, 4, 5), F(6, 3, 4, 5))):
        add(fam, f"InstanceNorm{dim}d(6)", [sh], ia)
        add(fam, f"InstanceNorm{dim}d(6, affine=True)", [sh], ia)
        add(fam, f"InstanceNorm{dim}d(6, track_running_stats=True)", [sh], ia)
        add(fam, f"InstanceNorm{dim}d(6, affine=True, eps=1e-3)", [unb], ia)
    fam = "norm"
    add(fam, "LayerNorm(8)", [F(2, 3, 8)], ("normalized_shape", "eps", "elementwise_affine", "weight.shape"))
    add(fam, "LayerNorm((3, 8))", [F(2, 3, 8)], ("normalized_shape",))
    add(fam, "LayerNorm([5, 7], eps=1e-6)", [F(2, 5, 7)], ("normalized_shape", "eps"))
    add(fam, "LayerNorm(8, elementwise_affine=False)", [F(2, 8)], ("normalized_shape", "elementwise_affine"))
    add(fam, "LayerNorm(8, bias=False)", [F(2, 8)], ("normalized_shape",))
    add(fam, "LayerNorm(8)", [F(8)], ("normalized_shape",))
    add(fam, "LayerNorm(8)", [D(2, 8)], forward="self.layer.double()(x0)")
    add(fam, "GroupNorm(2, 6)", [F(2, 6, 5, 7)], ("num_groups", "num_channels", "eps", "affine"))
    add(fam, "GroupNorm(3, 6, affine=False)", [F(2, 6, 9)], ("num_groups", "num_channels"))
    add(fam, "GroupNorm(1, 6, eps=1e-3)", [F(1, 6, 2, 3, 4)], ("num_groups",))
    add(fam, "GroupNorm(6, 6)", [F(2, 6)], ("num_groups",))
    add(fam, "RMSNorm(8)", [F(2, 3, 8)], ("normalized_shape", "eps"))
    add(fam, "RMSNorm([3, 8], eps=1e-5)", [F(2, 3, 8)], ("normalized_shape",))
    add(fam, "RMSNorm(8, elementwise_affine=False)", [F(8)], ("normalized_shape",))
    add(fam, "LocalResponseNorm(3)", [F(2, 6, 5, 7)], ("size", "alpha", "beta", "k"))
    add(fam, "LocalResponseNorm(2, alpha=1e-3, beta=0.5, k=2.0)", [F(2, 6, 9)], ("size",))
    add(fam, "CrossMapLRN2d(3)", [F(2, 6, 5, 7)], ("size",))


def _pool_cases():
    fam = "pool"
    for dim in (1, 2, 3):
        sp = {1: (13,), 2: (7, 9), 3: (5, 7, 6)}[dim]
        for k, s, p, c in [(2, None, 0, False), (3, 2, 1, False), (3, 2, 1, True), (2, 3, 0, True), (3, 1, 1, False),
                           (2, 2, 1, True)]:
            add(fam, f"MaxPool{dim}d({k}, stride={s}, padding={p}, ceil_mode={c})", [F(2, 3, *sp)],
                ("kernel_size", "stride", "padding", "ceil_mode"))
            for cip in (True, False):
                add(fam, f"AvgPool{dim}d({k}, stride={s}, padding={p}, ceil_mode={c}, count_include_pad={cip})",
                    [F(2, 3, *sp)], ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"))
        add(fam, f"MaxPool{dim}d(3, stride=1, padding=1, dilation=2)", [F(2, 3, *sp)], ("dilation",))
        add(fam, f"MaxPool{dim}d(2, return_indices=True)", [F(2, 3, *sp)], ("return_indices",))
        add(fam, f"MaxPool{dim}d(2)", [F(3, *sp)])  # unbatched
        add(fam, f"AvgPool{dim}d(2)", [F(3, *sp)])
        add(fam, f"MaxPool{dim}d(2)", [D(2, 3, *sp)])
        add(fam, f"AvgPool{dim}d(3, stride=2)", [D(2, 3, *sp)])
        if dim > 1:
            add(fam, f"AvgPool{dim}d(3, stride=1, padding=1, divisor_override=2)", [F(2, 3, *sp)], ("divisor_override",))
        for o in (1, 3, 4, 5):
            size = o if dim == 1 else "(" + ", ".join(str(o + i) for i in range(dim)) + ")"
            add(fam, f"AdaptiveAvgPool{dim}d({size})", [F(2, 3, *sp)], ("output_size",))
            add(fam, f"AdaptiveMaxPool{dim}d({size})", [F(2, 3, *sp)], ("output_size",))
        add(fam, f"AdaptiveAvgPool{dim}d(1)", [F(3, *sp)], ("output_size",))
        add(fam, f"AdaptiveMaxPool{dim}d(2, return_indices=True)", [F(2, 3, *sp)], ("return_indices",))
        add(fam, f"AdaptiveAvgPool{dim}d(2)", [D(2, 3, *sp)])
        if dim > 1:
            none = "(None, 2)" if dim == 2 else "(None, 2, None)"
            add(fam, f"AdaptiveAvgPool{dim}d({none})", [F(2, 3, *sp)], ("output_size",))
            add(fam, f"AdaptiveMaxPool{dim}d({none})", [F(2, 3, *sp)], ("output_size",))
            add(fam, f"AdaptiveMaxPool{dim}d({none})", [F(3, *sp)])  # unbatched
        add(fam, f"LPPool{dim}d(2, 3, stride=2)", [F(2, 3, *sp)], ("norm_type", "kernel_size", "stride"))
        add(fam, f"LPPool{dim}d(1.5, 2)", [POS(2, 3, *sp)], ("norm_type",))
        add(fam, f"LPPool{dim}d(2, 2, ceil_mode=True)", [F(2, 3, *sp)])
        un = f"MaxUnpool{dim}d(2)"
        add(fam, un, [F(2, 3, *{1: (8,), 2: (6, 8), 3: (4, 6, 4)}[dim])], ("kernel_size", "stride"),
            forward=f"self.layer(*nn.functional.max_pool{dim}d(x0, 2, return_indices=True))")
        add(fam, f"MaxUnpool{dim}d(2, stride=2)", [F(2, 3, *{1: (7,), 2: (5, 7), 3: (5, 5, 3)}[dim])],
            forward=f"self.layer(*nn.functional.max_pool{dim}d(x0, 2, return_indices=True), output_size=x0.shape)")


def _pad_cases():
    fam = "pad"
    for dim in (1, 2, 3):
        sp = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}[dim]
        tup = "(" + ", ".join(str(1 + (i % 2)) for i in range(2 * dim)) + ")"
        for kind, extra in (("Reflection", ""), ("Replication", ""), ("Circular", ""), ("Constant", ", 0.5"),
                            ("Zero", "")):
            cls = f"{kind}Pad{dim}d"
            add(fam, f"{cls}(2{extra})", [F(2, 3, *sp)], ("padding",))
            add(fam, f"{cls}({tup}{extra})", [F(2, 3, *sp)], ("padding",))
            add(fam, f"{cls}(1{extra})", [F(3, *sp)])  # unbatched
            add(fam, f"{cls}(1{extra})", [D(2, 3, *sp)])
    add(fam, "ZeroPad2d((1, 0, 2, 0))", [F(1, 1, 1, 1)], ("padding",))
    add(fam, "ConstantPad2d((-1, 1, 0, 2), 3.0)", [F(2, 3, 5, 6)], ("padding", "value"))


ACTIVATIONS = [
    "ReLU()", "ReLU(inplace=True)", "ReLU6()", "ELU()", "ELU(alpha=0.5)", "ELU(inplace=True)", "CELU(alpha=2.0)",
    "SELU()", "SiLU()", "Mish()", "GELU()", "GELU(approximate='tanh')", "Hardshrink(0.3)", "Hardsigmoid()",
    "Hardswish()", "Hardtanh()", "Hardtanh(-2.0, 2.0)", "Hardtanh(min_val=0.0, max_val=6.0)", "LeakyReLU()",
    "LeakyReLU(0.2, inplace=True)", "LeakyReLU(negative_slope=0.01)", "LogSigmoid()", "Sigmoid()", "Tanh()",
    "Softsign()", "Tanhshrink()", "Softshrink(0.2)", "Softplus()", "Softplus(beta=2, threshold=1)",
    "Threshold(0.1, 20.0)", "Threshold(0.5, -1.0, inplace=True)", "RReLU()", "RReLU(0.1, 0.3)",
    "PReLU()", "PReLU(3)", "PReLU(num_parameters=3, init=0.1)", "GLU()", "GLU(dim=1)",
    "Softmax(dim=1)", "Softmax(dim=-1)", "Softmax()", "LogSoftmax(dim=1)", "LogSoftmax(-1)", "Softmin(dim=1)",
    "Softmax2d()",
]


def _activation_cases():
    fam = "activation"
    for a in ACTIVATIONS:
        if not a.startswith("PReLU"):
            add(fam, a, [F(2, 4, 4, 6)])
            add(fam, a, [D(2, 4, 6)] if a != "Softmax2d()" else [D(2, 4, 4, 6)])
        else:
            add(fam, a, [F(2, 3, 4, 6)])
            add(fam, a, [F(3)] if a == "PReLU()" else [F(5, 3)])
    for a, at in (("ELU(alpha=0.5)", "alpha"), ("LeakyReLU(0.2)", "negative_slope"), ("Softmax(dim=1)", "dim"),
                  ("Hardtanh(-2.0, 2.0)", "min_val"), ("GELU(approximate='tanh')", "approximate"),
                  ("Softplus(beta=2, threshold=1)", "beta"), ("PReLU(3)", "num_parameters"), ("ReLU(inplace=True)",
                                                                                          "inplace"),
                  ("Threshold(0.1, 20.0)", "threshold"), ("GLU(dim=1)", "dim")):
        add(fam, a, [F(2, 3, 6)] if a.startswith("PReLU") else [F(2, 4, 6)], (at,))
    add(fam, "PReLU()", [F(2, 3)], ("weight.shape",))


def _dropout_cases():
    fam = "dropout"
    for d in ("Dropout()", "Dropout(0.3)", "Dropout(p=0.5, inplace=True)", "Dropout1d(0.2)", "Dropout2d()",
              "Dropout3d(0.4)", "AlphaDropout(0.2)", "FeatureAlphaDropout(0.2)", "Dropout(0.0)"):
        shape = {"Dropout1d": (2, 3, 7), "Dropout3d": (2, 3, 4, 5, 2)}.get(d.split("(")[0], (2, 3, 5, 7))
        add(fam, d, [F(*shape)], ("p",))
    add(fam, "Dropout2d(0.5)", [F(3, 5, 7)])
    add(fam, "Dropout(0.1)", [D(2, 5)])


def _shape_cases():
    fam = "reshape"
    add(fam, "Flatten()", [F(2, 3, 4, 5)], ("start_dim", "end_dim"))
    add(fam, "Flatten(0, -1)", [F(2, 3, 4)], ("start_dim", "end_dim"))
    add(fam, "Flatten(start_dim=2)", [F(2, 3, 4, 5)])
    add(fam, "Flatten(1, 2)", [F(2, 3, 4, 5)])
    add(fam, "Flatten()", [F(2, 1)])
    add(fam, "Unflatten(1, (2, 3))", [F(4, 6, 5)], ("dim", "unflattened_size"))
    add(fam, "Unflatten(-1, (2, -1))", [F(4, 6)])
    add(fam, "PixelShuffle(2)", [F(1, 8, 3, 5)], ("upscale_factor",))
    add(fam, "PixelShuffle(3)", [F(9, 2, 3)])
    add(fam, "PixelUnshuffle(2)", [F(1, 2, 6, 4)], ("downscale_factor",))
    add(fam, "ChannelShuffle(2)", [F(2, 6, 3, 3)], ("groups",))
    for mode, ac in (("'nearest'", None), ("'bilinear'", False), ("'bilinear'", True), ("'bicubic'", True),
                     ("'bicubic'", False), ("'nearest-exact'", None)):
        acs = "" if ac is None else f", align_corners={ac}"
        add(fam, f"Upsample(scale_factor=2, mode={mode}{acs})", [F(1, 2, 5, 7)], ("scale_factor", "mode"))
        add(fam, f"Upsample(size=(9, 4), mode={mode}{acs})", [F(2, 2, 5, 7)], ("size",))
    add(fam, "Upsample(scale_factor=1.5, mode='bilinear')", [F(1, 2, 4, 6)])
    add(fam, "Upsample(scale_factor=2)", [F(1, 2, 7)])
    add(fam, "Upsample(scale_factor=2, mode='linear', align_corners=True)", [F(1, 2, 7)])
    add(fam, "Upsample(scale_factor=(2, 1, 2), mode='trilinear')", [F(1, 2, 3, 4, 5)])
    add(fam, "Upsample(scale_factor=2, mode='nearest')", [F(1, 2, 3, 4, 5)])
    add(fam, "UpsamplingNearest2d(scale_factor=2)", [F(1, 2, 3, 5)])
    add(fam, "UpsamplingBilinear2d(size=(7, 3))", [F(1, 2, 3, 5)])
    add(fam, "Unfold(3)", [F(2, 3, 6, 7)], ("kernel_size",))
    add(fam, "Unfold(kernel_size=(2, 3), stride=2, padding=1, dilation=1)", [F(1, 3, 7, 7)])
    add(fam, "Unfold(2, dilation=2)", [F(3, 6, 6)])
    add(fam, "Fold(output_size=(5, 6), kernel_size=2)", [F(2, 12, 20)], ("output_size", "kernel_size"))
    add(fam, "Fold((7, 7), 3, stride=2, padding=1)", [F(1, 18, 16)])
    add(fam, "CosineSimilarity()", [F(3, 5), F(3, 5)], ("dim", "eps"))
    add(fam, "CosineSimilarity(dim=0)", [F(5, 3), F(5, 3)])
    add(fam, "PairwiseDistance()", [F(3, 5), F(3, 5)], ("norm", "eps"))
    add(fam, "PairwiseDistance(p=1.0, keepdim=True)", [F(3, 5), F(3, 5)])
    add(fam, "PairwiseDistance()", [F(5), F(5)])


def _rnn_cases():
    fam = "rnn"
    ra = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "bidirectional", "dropout")
    for cls in ("RNN", "LSTM", "GRU"):
        for bf, bi, nl in itertools.product((False, True), (False, True), (1, 2)):
            shape = (2, 5, 4) if bf else (5, 2, 4)
            add(fam, f"{cls}(4, 6, num_layers={nl}, batch_first={bf}, bidirectional={bi})", [F(*shape)], ra)
        add(fam, f"{cls}(4, 6, 2, dropout=0.3)", [F(5, 2, 4)], ra)
        add(fam, f"{cls}(4, 6, bias=False)", [F(5, 2, 4)], ra)
        add(fam, f"{cls}(4, 6)", [F(5, 4)], ra)  # unbatched
        add(fam, f"{cls}(4, 6, batch_first=True)", [F(2, 1, 4)])  # length 1
        add(fam, f"{cls}(4, 6, batch_first=True, bidirectional=True)", [F(1, 5, 4)])  # batch 1
        add(fam, f"{cls}(input_size=4, hidden_size=6, num_layers=2)", [F(5, 2, 4)], ("weight_ih_l0.shape",))
        h = "(x1, x1)" if cls == "LSTM" else "x1"
        add(fam, f"{cls}(4, 6, num_layers=2, bidirectional=True)", [F(5, 2, 4), F(4, 2, 6)],
            forward=f"self.layer(x0, {h})")
    add(fam, "RNN(4, 6, nonlinearity='relu')", [F(5, 2, 4)], ("nonlinearity",))
    for bf, bi in itertools.product((False, True), (False, True)):
        add(fam, f"LSTM(4, 6, proj_size=3, batch_first={bf}, bidirectional={bi})", [F(5, 2, 4)], ("proj_size",))
    add(fam, "LSTM(4, 6, 2, proj_size=3)", [F(5, 2, 4)])
    fam = "rnn_cell"
    for cls in ("RNNCell", "LSTMCell", "GRUCell"):
        ca = ("input_size", "hidden_size", "bias")
        add(fam, f"{cls}(4, 6)", [F(3, 4)], ca)
        add(fam, f"{cls}(4, 6, bias=False)", [F(3, 4)], ca)
        add(fam, f"{cls}(4, 6)", [F(4)])  # unbatched
        h = "(x1, x1)" if cls == "LSTMCell" else "x1"
        add(fam, f"{cls}(4, 6)", [F(3, 4), F(3, 6)], forward=f"self.layer(x0, {h})")
    add(fam, "RNNCell(4, 6, nonlinearity='relu')", [F(3, 4)], ("nonlinearity",))


def _attention_cases():
    fam = "attention"
    ma = ("embed_dim", "num_heads", "head_dim", "batch_first", "kdim", "vdim", "dropout")
    add(fam, "MultiheadAttention(8, 2)", [F(5, 2, 8)], ma, forward="self.layer(x0, x0, x0)")
    add(fam, "MultiheadAttention(8, 2, batch_first=True)", [F(2, 5, 8)], ma, forward="self.layer(x0, x0, x0)")
    add(fam, "MultiheadAttention(8, 4, bias=False)", [F(5, 2, 8)], forward="self.layer(x0, x0, x0)")
    add(fam, "MultiheadAttention(8, 2, kdim=6, vdim=3)", [F(5, 2, 8), F(4, 2, 6), F(4, 2, 3)], ma,
        forward="self.layer(x0, x1, x2)")
    add(fam, "MultiheadAttention(8, 2, dropout=0.1)", [F(5, 2, 8)],
        forward="self.layer(x0, x0, x0, need_weights=True, average_attn_weights=False)")
    add(fam, "MultiheadAttention(8, 2)", [F(5, 2, 8)], forward="self.layer(x0, x0, x0, need_weights=False)[0]")
    add(fam, "MultiheadAttention(8, 2)", [F(5, 8)], forward="self.layer(x0, x0, x0)")  # unbatched
    add(fam, "MultiheadAttention(8, 2, add_bias_kv=True)", [F(5, 2, 8)], forward="self.layer(x0, x0, x0)")
    add(fam, "MultiheadAttention(8, 2, batch_first=True)", [F(2, 5, 8)],
        forward="self.layer(x0, x0, x0, attn_mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), 1))")
    add(fam, "MultiheadAttention(8, 2, batch_first=True)", [F(2, 5, 8)],
        forward="self.layer(x0, x0, x0, key_padding_mask=torch.tensor([[False] * 5, [False] * 3 + [True] * 2]))")
    fam = "transformer"
    ta = ("self_attn.embed_dim", "self_attn.num_heads")
    add(fam, "TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1)", [F(5, 2, 8)], ta)
    add(fam, "TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True, activation='gelu')", [F(2, 5, 8)])
    add(fam, "TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, bias=False)", [F(5, 2, 8)])
    add(fam, "TransformerDecoderLayer(8, 2, 16)", [F(5, 2, 8), F(4, 2, 8)])
    add(fam, "TransformerDecoderLayer(8, 2, 16, batch_first=True, norm_first=True)", [F(2, 5, 8), F(2, 4, 8)])
    add(fam, "TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), num_layers=2)", [F(5, 2, 8)], ("num_layers",))
    add(fam, "TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, norm=nn.LayerNorm(8))",
        [F(2, 5, 8)])
    add(fam, "TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)", [F(5, 2, 8), F(4, 2, 8)])
    add(fam, "Transformer(8, 2, 1, 1, 16)", [F(5, 2, 8), F(4, 2, 8)], ("d_model", "nhead", "batch_first"))
    add(fam, "Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=16, "
        "batch_first=True)", [F(2, 5, 8), F(2, 4, 8)])


def _loss_cases():
    fam = "loss"
    for red in ("'mean'", "'sum'", "'none'"):
        for cls in ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss"):
            tgt = SIGN(3, 5) if cls == "SoftMarginLoss" else F(3, 5)
            add(fam, f"{cls}(reduction={red})", [F(3, 5), tgt], ("reduction",))
        add(fam, f"BCELoss(reduction={red})", [P(3, 5), P(3, 5)])
        add(fam, f"BCEWithLogitsLoss(reduction={red})", [F(3, 5), P(3, 5)])
        add(fam, f"CrossEntropyLoss(reduction={red})", [F(4, 5), I(5, 4)])
        add(fam, f"NLLLoss(reduction={red})", [F(4, 5), I(5, 4)])
        add(fam, f"KLDivLoss(reduction={red})", [F(3, 5), P(3, 5)])
        add(fam, f"HingeEmbeddingLoss(reduction={red})", [F(3, 5), SIGN(3, 5)])
        add(fam, f"MarginRankingLoss(reduction={red})", [F(6), F(6), SIGN(6)])
        add(fam, f"CosineEmbeddingLoss(reduction={red})", [F(4, 5), F(4, 5), SIGN(4)])
        add(fam, f"MultiLabelSoftMarginLoss(reduction={red})", [F(3, 5), I(2, 3, 5)])
        add(fam, f"MultiMarginLoss(reduction={red})", [F(4, 5), I(5, 4)])
        add(fam, f"PoissonNLLLoss(reduction={red})", [F(3, 5), POS(3, 5)])
        add(fam, f"GaussianNLLLoss(reduction={red})", [F(3, 5), F(3, 5), POS(3, 5)])
        add(fam, f"TripletMarginLoss(reduction={red})", [F(4, 5), F(4, 5), F(4, 5)])
        add(fam, f"TripletMarginWithDistanceLoss(reduction={red})", [F(4, 5), F(4, 5), F(4, 5)])
    add(fam, "SmoothL1Loss(beta=0.5)", [F(3, 5), F(3, 5)], ("beta",))
    add(fam, "HuberLoss(delta=0.5)", [F(3, 5), F(3, 5)], ("delta",))
    add(fam, "CrossEntropyLoss(label_smoothing=0.1)", [F(4, 5), I(5, 4)], ("label_smoothing",))
    add(fam, "CrossEntropyLoss(ignore_index=1)", [F(6, 5), I(5, 6)], ("ignore_index",))
    add(fam, "CrossEntropyLoss()", [F(2, 5, 3, 4), I(5, 2, 3, 4)])
    add(fam, "CrossEntropyLoss()", [F(4, 5), P(4, 5)])  # probabilities as the target
    add(fam, "CrossEntropyLoss()", [F(5), I(5)])  # unbatched
    add(fam, "CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))", [F(4, 5), I(5, 4)])
    add(fam, "NLLLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))", [F(4, 5), I(5, 4)])
    add(fam, "MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))", [F(3, 5), I(2, 3, 5)])
    add(fam, "MultiMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))", [F(4, 5), I(5, 4)])
    add(fam, "BCEWithLogitsLoss(weight=torch.tensor([2.0, 1.0, 0.5, 1.0, 1.0]), pos_weight=torch.ones(5) * 2)",
        [F(3, 5), P(3, 5)])
    add(fam, "NLLLoss(ignore_index=-100)", [F(2, 5, 3), I(5, 2, 3)])
    add(fam, "NLLLoss2d()", [F(2, 5, 3, 4), I(5, 2, 3, 4)])
    add(fam, "BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5, 1.0, 1.0]))", [F(3, 5), P(3, 5)])
    add(fam, "BCELoss(weight=torch.tensor([2.0, 1.0, 0.5, 1.0, 1.0]))", [P(3, 5), P(3, 5)])
    add(fam, "KLDivLoss(reduction='batchmean', log_target=True)", [F(3, 5), F(3, 5)])
    add(fam, "PoissonNLLLoss(log_input=False, full=True)", [POS(3, 5), POS(3, 5)])
    add(fam, "MarginRankingLoss(margin=0.5)", [F(6), F(6), SIGN(6)], ("margin",))
    add(fam, "TripletMarginLoss(margin=0.5, p=1.0, swap=True)", [F(4, 5), F(4, 5), F(4, 5)])
    add(fam, "MultiLabelMarginLoss()", [F(3, 4)], forward="self.layer(x0, torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], "
        "[1, -1, 0, 0]]))")
    add(fam, "CTCLoss()", [F(6, 2, 5)], ("blank",), forward="self.layer(x0.log_softmax(2), torch.tensor([[1, 2, 2], "
        "[3, 4, 1]]), torch.tensor([6, 5]), torch.tensor([3, 2]))")


def _container_cases():
    fam = "container"
    add(fam, "Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))", [F(3, 4)])
    add(fam, "Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())", [F(2, 3, 7, 7)],
        forward="self.layer[0](x0) + self.layer[:2](x0)[:, :, :, :] * 0 + len(self.layer)")
    add(fam, "ModuleList([nn.Linear(4, 4), nn.Tanh()])", [F(3, 4)], forward="self.layer[1](self.layer[0](x0))")
    add(fam, "ModuleDict({'a': nn.Linear(4, 3), 'b': nn.Sigmoid()})", [F(3, 4)],
        forward="self.layer['b'](self.layer['a'](x0))")


for _gen in (_conv_cases, _conv_transpose_cases, _linear_cases, _embedding_cases, _norm_cases, _pool_cases,
             _pad_cases, _activation_cases, _dropout_cases, _shape_cases, _rnn_cases, _attention_cases, _loss_cases,
             _container_cases):
    _gen()

# ids unique
_seen: dict[str, int] = {}
for _c in CASES:
    if _c.id in _seen:
        _seen[_c.id] += 1
        _c.id = f"{_c.id}#{_seen[_c.id]}"
    else:
        _seen[_c.id] = 0


# ------------------------------------------------------------------------------------------------------------- run


STATUSES = ("pass", "attr_flagged", "flagged", "crash", "silent", "attribute")


@dataclass
class Outcome:
    status: str  # pass | flagged | crash | silent | attribute (the output matches, an attribute read differs)
    detail: str = ""


def _randomise(module):
    """Random values for every float weight and buffer (running_var stays positive), from a fixed seed."""
    import torch

    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, t in itertools.chain(module.named_parameters(), module.named_buffers()):
            if not t.is_floating_point():
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=gen) * 0.5)


def _flatten(value):
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _to_plain(value):
    import mindspore as ms
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", value.detach().numpy())
    if isinstance(value, ms.Tensor):
        return ("tensor", value.asnumpy())
    if isinstance(value, torch.Size):
        return ("value", tuple(value))
    if isinstance(value, (list, tuple)):
        return ("value", tuple(_to_plain(v)[1] for v in value))
    if isinstance(value, bool):
        return ("value", value)
    if isinstance(value, np.generic):
        return ("value", value.item())
    if value is None:
        return ("value", None)
    if isinstance(value, (ms.Parameter,)):
        return ("tensor", value.asnumpy())
    return ("value", value)


def _compare(want, got, atol) -> str:
    """'' when equal, else what differs."""
    if len(want) != len(got):
        return f"{len(got)} outputs, torch {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        (wk, wv), (gk, gv) = _to_plain(w), _to_plain(g)
        if wk != gk:
            return f"output {i}: {gk} {str(gv)[:40]}, torch {wk} {str(wv)[:40]}"
        if wk == "tensor":
            if wv.shape != gv.shape:
                return f"output {i}: shape {gv.shape}, torch {wv.shape}"
            if wv.dtype != gv.dtype:
                return f"output {i}: dtype {gv.dtype}, torch {wv.dtype}"
            if wv.dtype.kind in "fc":
                tol = atol if wv.dtype != np.float64 else 1e-6
                if not np.allclose(gv, wv, atol=tol, rtol=1e-4, equal_nan=True):
                    return f"output {i}: max |diff| {np.nanmax(np.abs(gv - wv)):.3g}"
            elif not np.array_equal(gv, wv):
                return f"output {i}: values differ"
        else:
            if isinstance(wv, float) and isinstance(gv, (int, float)) and not isinstance(gv, bool):
                if not math.isclose(wv, gv, rel_tol=1e-6):
                    return f"output {i}: {gv!r}, torch {wv!r}"
            elif type(wv) is not type(gv) and not (isinstance(wv, str) and isinstance(gv, str)):
                return f"output {i}: {gv!r} ({type(gv).__name__}), torch {wv!r} ({type(wv).__name__})"
            elif wv != gv:
                return f"output {i}: {gv!r}, torch {wv!r}"
    return ""


def run_case(case: Case) -> Outcome:
    import mindspore as ms
    import torch

    from mindport import convert_source, transfer_weights

    source = case.source()
    # a float64 case's project makes float64 tensors (the caller here, outside the model's file): converted as a
    # project that is not float64-free (mindport.migrator.project.float64_free), as the repository's would be
    float64 = any(spec[0] == "float64" for spec in case.inputs)
    result = convert_source(source, "net.py", float64_free=not float64)
    flagged = [d for d in result.diagnostics if d.severity in ("error", "warning")]
    if flagged:
        why = "; ".join(f"{d.code}: {d.message}"[:160] for d in flagged)
        text = " ".join(d.message for d in flagged)
        kept = tuple(a for a in case.attrs if f".{a}:" not in text and f".{a.split('.')[0]}:" not in text)
        if kept != case.attrs:  # attribute reads the conversion flags: the layer and the other reads, without them
            alone = run_case(Case(case.family, case.call, case.inputs, kept, case.forward, case.atol, case.id))
            if alone.status == "pass":
                return Outcome("attr_flagged", why)
            return alone
        return Outcome("flagged", why)
    try:
        t_ns: dict = {}
        exec(compile(source, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
        torch.manual_seed(0)
        t_net = t_ns["Net"]()
        _randomise(t_net)
        t_net.eval()
        state = t_net.state_dict()
        rng = np.random.default_rng(0)
        xs = [make_input(s, rng) for s in case.inputs]
        with torch.no_grad():
            want = t_net(*(torch.from_numpy(x.copy()) for x in xs))
    except Exception as ex:  # torch's own side: the case is wrong, not the conversion
        raise AssertionError(f"{case.id}: torch itself fails: {ex}") from ex
    try:
        m_ns: dict = {"__name__": "net_ms"}
        exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
        m_net = m_ns["Net"]()
        m_net.set_train(False)
        report = transfer_weights(state, m_net)
        # every torch key lines up by name, and each filled MindSpore tensor holds as many values as its sources
        mapped = {k for item in report.weight_map.items for k in item.sources}
        left = set(state) - mapped - set(report.dropped)
        if left:
            return Outcome("silent", f"torch keys not moved: {sorted(left)}")
        for item in report.weight_map.items:
            n = sum(int(np.prod(state[k].shape)) for k in item.sources)
            if int(np.prod(item.shape)) != n:
                return Outcome("silent", f"{item.name}: {item.shape} from {[tuple(state[k].shape) for k in item.sources]}")
        got = m_net(*(ms.Tensor(x.copy()) for x in xs))
        return _judge(case, want, got)
    except Exception as ex:  # noqa: BLE001 - the outcome records it
        text = str(ex).strip().splitlines()
        return Outcome("crash", f"{type(ex).__name__}: {text[0][:200] if text else ''}")


def _judge(case, want, got) -> Outcome:
    reads = []
    if case.attrs:  # (out, attribute reads...): the output's tensors, then each attribute read whole
        if not isinstance(got, tuple) or len(got) != len(want):
            return Outcome("silent", f"forward returned {type(got).__name__}")
        reads = list(zip(case.attrs, want[1:], got[1:]))
        want, got = want[0], got[0]
    diff = _compare(_flatten(want), _flatten(got), case.atol)
    if diff:
        return Outcome("silent", diff)
    for name, w, g in reads:
        diff = _compare([w], [g], case.atol)
        if diff:
            return Outcome("attribute", f"{name}: {diff.partition(': ')[2]}")
    return Outcome("pass")


def main(argv):
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    picked = [c for c in CASES if not argv or any(a in c.id or a == c.family for a in argv)]
    table: dict[str, dict[str, int]] = {}
    start = time.time()
    for c in picked:
        try:
            o = run_case(c)
        except AssertionError as ex:
            print(f"BADCASE  {ex}", flush=True)
            continue
        table.setdefault(c.family, dict.fromkeys(STATUSES, 0))[o.status] += 1
        if o.status != "pass":
            print(f"{o.status.upper():8} {c.id}  {o.detail}", flush=True)
    print(f"\n{'family':16} {'cases':>6}" + "".join(f" {k:>9}" for k in STATUSES))
    tot = dict.fromkeys(STATUSES, 0)
    for fam, counts in table.items():
        for k in tot:
            tot[k] += counts[k]
        print(f"{fam:16} {sum(counts.values()):6}" + "".join(f" {counts[k]:9}" for k in STATUSES))
    print(f"{'total':16} {sum(tot.values()):6}" + "".join(f" {tot[k]:9}" for k in STATUSES))
    print(f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
