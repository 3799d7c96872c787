"""MS2xx, default-value traps (1 of 2): MindSpore layers whose defaults differ from PyTorch's (mindspore.nn 2.10
signatures). Arguments whose meaning differs are in arguments.py.

Only names that resolve to `mindspore.nn` through the file's imports are checked; a torch `nn.Conv2d`
is a torch-leftover matter (MS3xx), not a MindSpore default trap.
"""
from __future__ import annotations

import ast
from typing import ClassVar

from mindport.validators.lint.context import FileContext, literal_number
from mindport.validators.lint.rules.base import Rule

CONVS = ("Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose")
POOLS = ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d")
NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")


def _layer_calls(ctx: FileContext, layers):
    by_layer = ctx.by_layer
    for layer in layers:
        for c in by_layer.get(layer, ()):
            yield c.node, layer


class MissingArgumentRule(Rule):
    """Shared check: a listed layer constructed without an explicit `param` (by keyword or position)."""

    layers: ClassVar[dict[str, int | None]]  # layer -> position of `param`
    param: ClassVar[str]
    why: ClassVar[str]

    def skip(self, ctx: FileContext, call: ast.Call, layer: str) -> bool:
        return False

    def check(self, ctx: FileContext):
        for call, layer in _layer_calls(ctx, self.layers):
            if not ctx.passes(call, self.param, self.layers[layer]) and not self.skip(ctx, call, layer):
                yield call, f"nn.{layer} without `{self.param}=`: {self.why}"


class ConvImplicitPadMode(MissingArgumentRule):
    """Flags `nn.Conv*` layers constructed without an explicit `pad_mode`.

    ## Why is this bad?
    MindSpore's `pad_mode` defaults to `'same'`, torch's padding to 0 (`'valid'`). A converted
    `Conv2d(3, 8, 3)` keeps a 9x9 output where torch produced 7x7 (verified), and every later shape moves.

    ## Fix
    Always pass `pad_mode`: torch `padding=0` -> `pad_mode='valid'`; `padding=p>0` ->
    `pad_mode='pad', padding=p`; `padding='same'` -> `pad_mode='same'`.
    """

    code = "MS201"
    name = "conv-implicit-pad-mode"
    message = "Conv without explicit pad_mode"
    layers = {name: 4 for name in CONVS}
    param = "pad_mode"
    why = "the default is 'same' (torch pads 0, i.e. 'valid')"
    VALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='valid', has_bias=True)\n",
        "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)  # torch's Conv2d: not a MindSpore default trap\n",
        "import mindspore.nn as nn\nconv = nn.Conv1d(3, 8, 3, 1, 'pad', 1, has_bias=True)\n",
    )
    INVALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, has_bias=True)\n",
        "from mindspore.nn import Conv2dTranspose\nup = Conv2dTranspose(8, 4, 2, stride=2, has_bias=False)\n",
    )


class ConvImplicitHasBias(MissingArgumentRule):
    """Flags `nn.Conv*` layers constructed without an explicit `has_bias`.

    ## Why is this bad?
    MindSpore convolutions default to `has_bias=False`; torch's default to `bias=True`. A converted layer
    silently loses its bias, and loading a torch checkpoint leaves `conv.bias` unmatched.

    ## Fix
    Pass `has_bias=True` (torch default) or `has_bias=False` explicitly.
    """

    code = "MS202"
    name = "conv-implicit-has-bias"
    message = "Conv without explicit has_bias"
    layers = {"Conv1d": 8, "Conv2d": 8, "Conv3d": 8, "Conv1dTranspose": 8, "Conv2dTranspose": 9,
              "Conv3dTranspose": 10}
    param = "has_bias"
    why = "the default is False (torch: bias=True)"
    VALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='valid', has_bias=True)\n",
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, **conv_kwargs)\n",
    )
    INVALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='valid')\n",
        "import mindspore as ms\nconv = ms.nn.Conv3d(3, 8, 3, stride=1, pad_mode='same')\n",
    )


class PoolImplicitStride(MissingArgumentRule):
    """Flags `nn.MaxPool*`/`nn.AvgPool*` with a kernel larger than 1 and no explicit `stride`.

    ## Why is this bad?
    MindSpore pooling defaults to `stride=1`; torch's stride defaults to the kernel size.
    `nn.MaxPool2d(2)` gives an 8x8 output where torch gives 4x4 (verified).

    ## Fix
    Pass `stride` explicitly, usually equal to `kernel_size`.
    """

    code = "MS203"
    name = "pool-implicit-stride"
    message = "pooling without explicit stride"
    layers = {name: 1 for name in POOLS}
    param = "stride"
    why = "the default is 1 (torch: stride = kernel_size)"
    VALID = (
        "from mindspore import nn\npool = nn.MaxPool2d(kernel_size=2, stride=2)\n",
        "from mindspore import nn\npool = nn.AvgPool2d(3, 1, pad_mode='same')\nident = nn.MaxPool2d(1)\n",
    )
    INVALID = (
        "from mindspore import nn\npool = nn.MaxPool2d(2)\n",
        "from mindspore.nn import AvgPool1d\npool = AvgPool1d(kernel_size=4)\n",
    )

    def skip(self, ctx, call, layer):
        kernel = ctx.argument(call, "kernel_size", 0)
        return kernel is None or literal_number(kernel) == 1


class BatchNormTorchMomentum(Rule):
    """Flags `nn.BatchNorm*d(momentum=m)` with a literal `m < 0.5`.

    ## Why is this bad?
    MindSpore's momentum is the weight of the *old* running statistic: `ms_momentum = 1 - torch_momentum`
    (default 0.9 vs torch 0.1, verified). A value below 0.5 is almost always a torch value copied over
    unchanged, so running statistics follow the last batch and evaluation accuracy collapses.

    ## Fix
    Use `1 - torch_momentum` (torch 0.1 -> MindSpore 0.9).
    """

    code = "MS204"
    name = "batchnorm-torch-momentum"
    message = "BatchNorm momentum < 0.5 (torch value not inverted?)"
    VALID = (
        "from mindspore import nn\nbn = nn.BatchNorm2d(64, momentum=0.9)\n",
        "from mindspore import nn\nbn = nn.BatchNorm2d(64, 1e-5, 0.99)\nbn2 = nn.BatchNorm1d(8, momentum=m)\n",
    )
    INVALID = (
        "from mindspore import nn\nbn = nn.BatchNorm2d(64, momentum=0.1)\n",
        "import mindspore.nn as nn\nbn = nn.BatchNorm1d(16, 1e-5, 0.01)\n",
    )

    def check(self, ctx):
        for call, layer in _layer_calls(ctx, NORMS):
            m = ctx.argument(call, "momentum", 2)
            value = literal_number(m)
            if value is not None and value < 0.5:
                yield m, (
                    f"nn.{layer} momentum={value}: MindSpore momentum = 1 - torch momentum; "
                    f"did you mean {round(1 - value, 10)}?"
                )


class LayerNormImplicitEpsilon(MissingArgumentRule):
    """Flags `nn.LayerNorm` constructed without an explicit `epsilon`.

    ## Why is this bad?
    MindSpore's LayerNorm epsilon defaults to 1e-7, torch's eps to 1e-5: outputs differ by ~4.5e-5
    (verified), enough to fail a parity check and to change fp16 behaviour.

    ## Fix
    Pass `epsilon=1e-5` (or the torch model's `eps`).
    """

    code = "MS205"
    name = "layernorm-implicit-epsilon"
    message = "LayerNorm without explicit epsilon"
    layers = {"LayerNorm": 5}
    param = "epsilon"
    why = "the default is 1e-7 (torch eps: 1e-5)"
    VALID = (
        "from mindspore import nn\nln = nn.LayerNorm((768,), epsilon=1e-5)\n",
        "from mindspore import nn\nln = nn.LayerNorm((768,), -1, -1, 'ones', 'zeros', 1e-6)\n",
    )
    INVALID = (
        "from mindspore import nn\nln = nn.LayerNorm((768,))\n",
        "from mindspore.nn import LayerNorm\nln = LayerNorm((4, 4), begin_norm_axis=1, begin_params_axis=1)\n",
    )


class GeluImplicitApproximate(MissingArgumentRule):
    """Flags `nn.GELU()` without an explicit `approximate`.

    ## Why is this bad?
    MindSpore's `nn.GELU` defaults to the tanh approximation (`approximate=True`); torch's GELU is exact
    by default. The outputs differ by up to 4.7e-4 (verified). No autofix: the right value depends on
    which behaviour the model was trained with.

    ## Fix
    Pass `approximate=False` for torch's default `GELU()` / `approximate='none'`, and `approximate=True`
    for `approximate='tanh'`.
    """

    code = "MS206"
    name = "gelu-implicit-approximate"
    message = "GELU without explicit approximate"
    layers = {"GELU": 0}
    param = "approximate"
    why = "the default is the tanh approximation (torch: exact)"
    VALID = (
        "from mindspore import nn\nact = nn.GELU(approximate=False)\n",
        "from mindspore import nn\nimport torch\nact = nn.GELU(True)\nt = torch.nn.GELU()\n",
    )
    INVALID = (
        "from mindspore import nn\nact = nn.GELU()\n",
        "import mindspore as ms\nclass FFN(ms.nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.act = ms.nn.GELU()\n",
    )


class LeakyReluImplicitAlpha(MissingArgumentRule):
    """Flags `nn.LeakyReLU()` without an explicit `alpha`.

    ## Why is this bad?
    MindSpore's negative slope defaults to 0.2, torch's `negative_slope` to 0.01.

    ## Fix
    Pass `alpha=0.01` (or the torch model's `negative_slope`).
    """

    code = "MS207"
    name = "leakyrelu-implicit-alpha"
    message = "LeakyReLU without explicit alpha"
    layers = {"LeakyReLU": 0}
    param = "alpha"
    why = "the default slope is 0.2 (torch: 0.01)"
    VALID = (
        "from mindspore import nn\nact = nn.LeakyReLU(alpha=0.01)\n",
        "from mindspore import nn\nact = nn.LeakyReLU(0.1)\n",
    )
    INVALID = (
        "from mindspore import nn\nact = nn.LeakyReLU()\n",
        "from mindspore.nn import LeakyReLU\nlayers = [LeakyReLU() for _ in range(2)]\n",
    )


class SmoothL1ImplicitReduction(MissingArgumentRule):
    """Flags `nn.SmoothL1Loss` without an explicit `reduction`.

    ## Why is this bad?
    MindSpore's SmoothL1Loss defaults to `reduction='none'` (an element-wise loss tensor); torch's to
    `'mean'` (a scalar). Training code that expects a scalar then fails, or averages differently.

    ## Fix
    Pass `reduction='mean'` (torch default), `'sum'` or `'none'` explicitly.
    """

    code = "MS208"
    name = "smoothl1-implicit-reduction"
    message = "SmoothL1Loss without explicit reduction"
    layers = {"SmoothL1Loss": 1}
    param = "reduction"
    why = "the default is 'none' (torch: 'mean')"
    VALID = (
        "from mindspore import nn\nloss = nn.SmoothL1Loss(reduction='mean')\n",
        "from mindspore import nn\nloss = nn.SmoothL1Loss(1.0, 'sum')\n",
    )
    INVALID = (
        "from mindspore import nn\nloss = nn.SmoothL1Loss()\n",
        "from mindspore import nn\nloss = nn.SmoothL1Loss(beta=0.5)\n",
    )


class EmbeddingImplicitInit(MissingArgumentRule):
    """Flags `nn.Embedding` without an explicit `embedding_table` initialiser.

    ## Why is this bad?
    MindSpore initialises embeddings from a normal distribution with std ~0.01; torch from N(0, 1).
    Models trained from scratch start in a different regime (tied output layers, scaled dot products).
    Irrelevant when weights are loaded from a checkpoint, hence info only.

    ## Fix
    Pass `embedding_table=Normal(1.0)` (from `mindspore.common.initializer`) to match torch, or another
    explicit initialiser.
    """

    code = "MS211"
    name = "embedding-implicit-init"
    message = "Embedding without explicit embedding_table"
    severity = "info"
    layers = {"Embedding": 3}
    param = "embedding_table"
    why = "the default init has std 0.01 (torch: N(0, 1))"
    VALID = (
        "from mindspore import nn\nfrom mindspore.common.initializer import Normal\n"
        "emb = nn.Embedding(100, 16, embedding_table=Normal(1.0))\n",
        "from mindspore import nn\nemb = nn.Embedding(100, 16, False, 'uniform')\n",
    )
    INVALID = (
        "from mindspore import nn\nemb = nn.Embedding(100, 16)\n",
        "from mindspore import nn\nemb = nn.Embedding(vocab_size=100, embedding_size=16, padding_idx=0)\n",
    )
