"""MS2xx, default-value traps (2 of 2): arguments whose meaning differs between the two frameworks (a torch keyword
that is named otherwise in mindspore.nn, `Dropout`'s keep probability, padding and pool options that only act with a
`pad_mode`), mindspore.nn 2.10 signatures. The defaults themselves are in defaults.py.

Only names that resolve to `mindspore.nn` through the file's imports are checked.
"""
from __future__ import annotations

import ast

from mindport.validators.lint.context import FileContext, literal_number
from mindport.validators.lint.rules.base import Rule
from mindport.validators.lint.rules.defaults import CONVS, NORMS, POOLS, _layer_calls

# torch keyword -> MindSpore keyword (None: no equivalent), per layer family. Renames are 1:1 in meaning,
# and the torch spelling raises TypeError in MindSpore 2.10, so `--fix` may rename them.
_CONV_KW = {"bias": "has_bias", "groups": "group", "padding_mode": None}
TORCH_KEYWORDS: dict[str, dict[str, str | None]] = {
    **{n: _CONV_KW for n in CONVS},
    "Dense": {"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias"},
    **{n: {"track_running_stats": None} for n in NORMS},
    "LayerNorm": {"eps": "epsilon", "elementwise_affine": None},
    "Softmax": {"dim": "axis"},
    "LogSoftmax": {"dim": "axis"},
    "LeakyReLU": {"negative_slope": "alpha", "inplace": None},
    "ReLU": {"inplace": None},
    "Dropout": {"inplace": None},
    "Embedding": {"num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
    "LSTM": {"bias": "has_bias"},
    "GRU": {"bias": "has_bias"},
    "RNN": {"bias": "has_bias"},
    "PReLU": {"num_parameters": "channel", "init": "w"},
    **{n: {"lr": "learning_rate", "betas": None}
       for n in ("SGD", "Adam", "Momentum", "AdamWeightDecay", "RMSProp", "Adagrad", "Lamb", "LazyAdam", "AdaMax")},
}
TORCH_KEYWORDS["Adam"] = {"lr": "learning_rate", "betas": None, "amsgrad": "use_amsgrad"}


class TorchKeywordArgument(Rule):
    """Flags torch keyword names passed to MindSpore layers and optimizers (`nn.Conv2d(bias=...)`,
    `nn.Dense(in_features=...)`, `nn.Softmax(dim=...)`, `nn.Adam(lr=...)`, ...).

    ## Why is this bad?
    MindSpore 2.10 spells these parameters differently; the torch spelling raises `TypeError` when the
    network is built (or, for `betas`, `padding_mode` and `track_running_stats`, has no direct
    counterpart).

    ## Fix
    Rename: `bias`->`has_bias`, `groups`->`group`, `in_features`/`out_features`->`in_channels`/
    `out_channels`, `eps`->`epsilon` (LayerNorm), `dim`->`axis`, `negative_slope`->`alpha`,
    `lr`->`learning_rate`, `amsgrad`->`use_amsgrad`. `--fix` applies these one-to-one renames; the others
    (`betas` -> `beta1, beta2`, `padding_mode`, ...) need a hand edit.
    """

    code = "MS209"
    name = "torch-keyword-argument"
    message = "torch keyword passed to a MindSpore API"
    severity = "error"
    fixable = True
    VALID = (
        "from mindspore import nn\nfc = nn.Dense(in_channels=4, out_channels=2, has_bias=True)\n"
        "sm = nn.Softmax(axis=1)\n",
        "import torch\nfc = torch.nn.Linear(in_features=4, out_features=2, bias=True)\n"
        "opt = torch.optim.Adam(params, lr=1e-3)\n",
    )
    INVALID = (
        "from mindspore import nn\nsm = nn.Softmax(dim=1)\n",
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='valid', bias=False, groups=1)\n",
        "import mindspore as ms\nopt = ms.nn.Adam(net.trainable_params(), lr=1e-3, betas=(0.9, 0.99))\n",
    )
    FIXES = (
        (
            "from mindspore import nn\nsm = nn.Softmax(dim=1)\nfc = nn.Dense(in_features=4, out_features=2)\n",
            "from mindspore import nn\nsm = nn.Softmax(axis=1)\nfc = nn.Dense(in_channels=4, out_channels=2)\n",
        ),
        (
            "import mindspore as ms\nopt = ms.nn.Adam(ps, lr=1e-3, betas=(0.9, 0.99))\n",
            "import mindspore as ms\nopt = ms.nn.Adam(ps, learning_rate=1e-3, betas=(0.9, 0.99))\n",
        ),
    )

    def check(self, ctx):
        for call, layer in _layer_calls(ctx, TORCH_KEYWORDS):
            table = TORCH_KEYWORDS[layer]
            for k in call.keywords:
                if k.arg in table:
                    target = table[k.arg]
                    hint = f"use `{target}=`" if target else "MindSpore has no such parameter"
                    yield k, f"nn.{layer} has no keyword `{k.arg}` (torch spelling): {hint}", target is not None


class DropoutKeepProb(Rule):
    """Flags `nn.Dropout(keep_prob=...)` (also the first positional argument, which is `keep_prob`).

    ## Why is this bad?
    `keep_prob` is deprecated and is the *complement* of torch's `p`: `nn.Dropout(0.1)` keeps only 10% of
    the activations, where torch's `Dropout(0.1)` drops 10%. The positional form is a classic
    conversion bug.

    ## Fix
    Use `p=` (the drop probability, same meaning as torch). `--fix` rewrites a literal
    `keep_prob=k` to `p=1-k`, which is exactly equivalent.
    """

    code = "MS210"
    name = "dropout-keep-prob"
    message = "Dropout keep_prob (deprecated, complement of torch p)"
    fixable = True
    VALID = (
        "from mindspore import nn\ndrop = nn.Dropout(p=0.1)\n",
        "import torch.nn as nn\ndrop = nn.Dropout(0.1)\n",
    )
    INVALID = (
        "from mindspore import nn\ndrop = nn.Dropout(keep_prob=0.9)\n",
        "from mindspore import nn\ndrop = nn.Dropout(0.1)  # keeps only 10%!\n",
    )
    FIXES = (
        ("from mindspore import nn\ndrop = nn.Dropout(keep_prob=0.9)\n", "from mindspore import nn\ndrop = nn.Dropout(p=0.1)\n"),
        ("from mindspore import nn\nd = nn.Dropout(0.75, dtype=t)\n", "from mindspore import nn\nd = nn.Dropout(p=0.25, dtype=t)\n"),
    )

    def check(self, ctx):
        for call, layer in _layer_calls(ctx, ("Dropout",)):
            if ctx.keyword(call, "p") is not None:
                continue
            arg = ctx.argument(call, "keep_prob", 0)
            if arg is not None:
                literal = literal_number(arg)
                safe = literal is not None and 0 <= literal <= 1 and (
                    ctx.keyword(call, "keep_prob") is not None or len(call.args) == 1
                )
                yield call, "nn.Dropout keep_prob is deprecated and means 1 - p (torch's p is the drop rate); use p=", safe


def _pad_mode(ctx: FileContext, call: ast.Call, position: int) -> str | None:
    """The literal pad_mode ('same', 'valid', 'pad'), "" when not given, None when not a literal."""
    value = ctx.argument(call, "pad_mode", position)
    if value is None:
        return ""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value.lower()
    return None


def _nonzero(node: ast.AST | None) -> bool:
    """A literal other than 0 / (0, 0, ...)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(_nonzero(e) for e in node.elts)
    v = literal_number(node)
    return v is not None and v != 0


class PoolOptionWithoutPadMode(Rule):
    """Flags `nn.MaxPool*`/`nn.AvgPool*` given `padding`, `ceil_mode=True`, `dilation` or
    `return_indices=True` without `pad_mode='pad'`.

    ## Why is this bad?
    In MindSpore 2.10 these options are only valid with `pad_mode='pad'`; otherwise construction raises
    `ValueError` (verified). torch has no pad_mode, so converted code often omits it.

    ## Fix
    Add `pad_mode='pad'` (torch semantics: explicit zero padding).
    """

    code = "MS212"
    name = "pool-option-without-pad-mode"
    message = "pooling option that needs pad_mode='pad'"
    severity = "error"
    VALID = (
        "from mindspore import nn\npool = nn.MaxPool2d(3, 2, pad_mode='pad', padding=1)\n",
        "from mindspore import nn\npool = nn.AvgPool2d(2, 2, padding=0, ceil_mode=False)\n",
    )
    INVALID = (
        "from mindspore import nn\npool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)\n",
        "from mindspore import nn\npool = nn.AvgPool2d(2, 2, pad_mode='valid', ceil_mode=True)\n",
    )

    def check(self, ctx):
        for call, layer in _layer_calls(ctx, POOLS):
            mode = _pad_mode(ctx, call, 2)
            if mode is None or mode == "pad" or ctx.has_star_kwargs(call):
                continue
            offending = []
            if _nonzero(ctx.argument(call, "padding", 3)):
                offending.append("padding")
            for name, bad in (("ceil_mode", True), ("return_indices", True)):
                k = ctx.keyword(call, name)
                if k is not None and isinstance(k.value, ast.Constant) and k.value.value is bad:
                    offending.append(name)
            d = ctx.keyword(call, "dilation")
            if d is not None and literal_number(d.value) not in (None, 1):
                offending.append("dilation")
            if offending:
                yield call, f"nn.{layer} {', '.join(offending)} requires pad_mode='pad' (ValueError otherwise)"


class ConvPaddingWithoutPadMode(Rule):
    """Flags `nn.Conv*` with a non-zero literal `padding` but a `pad_mode` other than `'pad'` (including
    the default `'same'`).

    ## Why is this bad?
    MindSpore only applies `padding` when `pad_mode='pad'`; with `'same'` or `'valid'` a non-zero
    padding raises `ValueError` when the layer is built. It is the usual result of copying torch's
    `padding=1` without the pad_mode.

    ## Fix
    Use `pad_mode='pad', padding=p` (torch semantics).
    """

    code = "MS213"
    name = "conv-padding-without-pad-mode"
    message = "Conv padding without pad_mode='pad'"
    severity = "error"
    VALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='pad', padding=1, has_bias=True)\n",
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='same', padding=0, has_bias=True)\n",
    )
    INVALID = (
        "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, padding=1, has_bias=True)\n",
        "from mindspore import nn\nconv = nn.Conv1d(3, 8, 3, 1, 'valid', (1, 1), has_bias=True)\n",
    )

    def check(self, ctx):
        for call, layer in _layer_calls(ctx, CONVS):
            mode = _pad_mode(ctx, call, 4)
            if mode is None or mode == "pad" or ctx.has_star_kwargs(call):
                continue
            if _nonzero(ctx.argument(call, "padding", 5)):
                shown = mode or "same (default)"
                yield call, f"nn.{layer} padding is only used with pad_mode='pad' (here: {shown}); ValueError"
