"""MS5xx: optimizers and losses whose MindSpore semantics differ from their torch namesakes."""
from __future__ import annotations

import ast

from mindport.validators.lint.context import FileContext, literal_number, walk_body
from mindport.validators.lint.rules.base import Rule

NN_OPTIMIZERS = frozenset({"SGD", "Adam", "Momentum", "AdamWeightDecay", "Lamb", "RMSProp", "Adagrad", "FTRL",
                           "ProximalAdagrad", "LazyAdam", "AdaMax", "Rprop", "ASGD", "Adadelta", "AdamOffload", "LARS"})
_UNGROUPED_CALLS = frozenset({"trainable_params", "get_parameters"})


def _optimizer_calls(ctx: FileContext, names=NN_OPTIMIZERS):
    by_layer = ctx.by_layer
    for layer in names:
        for c in by_layer.get(layer, ()):
            yield c.node, layer


class AdamWeightDecayAsAdamW(Rule):
    """Flags `nn.AdamWeightDecay`, the usual (wrong) translation of `torch.optim.AdamW`.

    ## Why is this bad?
    `nn.AdamWeightDecay` is not torch's AdamW: eps defaults to 1e-6 and it has no bias correction; after
    5 steps it diverged from torch AdamW by 0.185 even with eps=1e-8 (verified). It is also deprecated.

    ## Fix
    Use `mindspore.experimental.optim.AdamW(params, lr=..., betas=..., eps=1e-8, weight_decay=0.01)`,
    which matched torch to 1.8e-7.
    """

    code = "MS501"
    name = "adamweightdecay-as-adamw"
    message = "nn.AdamWeightDecay is not torch AdamW"
    VALID = (
        "from mindspore.experimental import optim\nopt = optim.AdamW(net.trainable_params(), lr=1e-3)\n",
        "from mindspore import nn\nopt = nn.Adam(net.trainable_params(), learning_rate=1e-3)\n",
    )
    INVALID = (
        "from mindspore import nn\nopt = nn.AdamWeightDecay(net.trainable_params(), 1e-3, weight_decay=0.01)\n",
        "import mindspore as ms\nopt = ms.nn.AdamWeightDecay(params, learning_rate=1e-3, eps=1e-8)\n",
    )

    def check(self, ctx):
        for call, _ in _optimizer_calls(ctx, ("AdamWeightDecay",)):
            yield call, (
                "nn.AdamWeightDecay differs numerically from torch AdamW (no bias correction, eps 1e-6); "
                "use mindspore.experimental.optim.AdamW"
            )


class WeightDecayUngrouped(Rule):
    """Flags `mindspore.nn` optimizers given a non-zero `weight_decay` and ungrouped parameters
    (`net.trainable_params()` / `get_parameters()`, directly or through a variable).

    ## Why is this bad?
    With ungrouped parameters, `nn` optimizers apply weight decay only to parameters whose names contain
    neither "beta" nor "gamma" (docstring; verified `decay_flags`), i.e. BatchNorm/LayerNorm scales and
    shifts get none. torch decays every parameter, so the port trains differently.

    ## Fix
    Group the parameters explicitly, e.g.
    `[{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}]`, choosing the
    split you intend (torch's default: everything decayed), or use `mindspore.experimental.optim`.
    """

    code = "MS502"
    name = "weight-decay-ungrouped"
    message = "weight_decay with ungrouped parameters skips BN gamma/beta"
    VALID = (
        "from mindspore import nn\nparams = net.trainable_params()\n"
        "groups = [{'params': params, 'weight_decay': 1e-4}]\nopt = nn.Momentum(groups, 0.1, 0.9)\n",
        "from mindspore import nn\nopt = nn.SGD(net.trainable_params(), 0.1, weight_decay=0.0)\n",
    )
    INVALID = (
        "from mindspore import nn\nopt = nn.SGD(net.trainable_params(), 0.1, weight_decay=1e-4)\n",
        "import mindspore as ms\nparams = net.trainable_params()\n"
        "opt = ms.nn.Momentum(params=params, learning_rate=0.1, momentum=0.9, weight_decay=wd)\n",
    )

    def check(self, ctx):
        ungrouped_names: set[str] | None = None
        for call, layer in _optimizer_calls(ctx):
            wd = ctx.keyword(call, "weight_decay")
            if wd is None or literal_number(wd.value) == 0:
                continue
            params = ctx.argument(call, "params", 0)
            ungrouped = isinstance(params, ast.Call) and isinstance(params.func, ast.Attribute) and (
                params.func.attr in _UNGROUPED_CALLS
            )
            if not ungrouped and isinstance(params, ast.Name):
                if ungrouped_names is None:
                    ungrouped_names = {
                        t.id for a in ctx.assigns for t in a.targets
                        if isinstance(t, ast.Name) and isinstance(a.value, ast.Call)
                        and isinstance(a.value.func, ast.Attribute) and a.value.func.attr in _UNGROUPED_CALLS
                    }
                ungrouped = params.id in ungrouped_names
            if ungrouped:
                yield wd, (
                    f"nn.{layer} weight_decay with ungrouped params skips every 'gamma'/'beta' parameter "
                    "(BatchNorm/LayerNorm), unlike torch; group the parameters explicitly"
                )


_INT64 = frozenset({"mindspore.int64", "mindspore.common.dtype.int64", "mindspore.dtype.int64", "numpy.int64"})


class CrossEntropyInt64Labels(Rule):
    """Flags an `nn.CrossEntropyLoss` instance called with labels that are visibly int64 (built or cast
    with `int64` in the call or in an assignment in the same function).

    ## Why is this bad?
    In MindSpore 2.10 `nn.CrossEntropyLoss` requires int32 class labels; int64 labels (torch's default
    `long`, and numpy's default int) raise `TypeError` (verified).

    ## Fix
    Cast the labels: `labels.astype(ms.int32)`, or produce int32 in the dataset.
    """

    code = "MS503"
    name = "cross-entropy-int64-labels"
    message = "int64 labels passed to nn.CrossEntropyLoss"
    severity = "error"
    VALID = (
        "import mindspore as ms\nfrom mindspore import nn\nloss_fn = nn.CrossEntropyLoss()\n"
        "loss = loss_fn(logits, labels.astype(ms.int32))\n",
        "import mindspore as ms\nfrom mindspore import nn\nloss_fn = nn.MSELoss()\n"
        "loss = loss_fn(pred, target.astype(ms.int64))\n",
    )
    INVALID = (
        "import mindspore as ms\nfrom mindspore import nn\nloss_fn = nn.CrossEntropyLoss()\n"
        "loss = loss_fn(logits, labels.astype(ms.int64))\n",
        "import mindspore as ms\nimport numpy as np\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n"
        "    def __init__(self):\n        super().__init__()\n        self.ce = nn.CrossEntropyLoss()\n"
        "    def construct(self, x, y):\n        y = ms.Tensor(y, dtype=ms.int64)\n        return self.ce(x, y)\n",
    )

    def check(self, ctx):
        ce_names: set[str] = set()
        ce_attrs: set[str] = set()
        for site in ctx.by_layer.get("CrossEntropyLoss", ()):
            a = ctx.assign_by_value.get(id(site.node))
            for t in a.targets if a is not None else ():
                if isinstance(t, ast.Name):
                    ce_names.add(t.id)
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    ce_attrs.add(t.attr)
        if not ce_names and not ce_attrs:
            return
        int64_locals: dict[int, set[str]] = {}
        for c in ctx.calls:
            f = c.node.func
            hit = (isinstance(f, ast.Name) and f.id in ce_names) or (
                isinstance(f, ast.Attribute) and f.attr in ce_attrs and isinstance(f.value, ast.Name)
                and f.value.id == "self"
            )
            if not hit:
                continue
            labels = ctx.argument(c.node, "labels", 1)
            if labels is None:
                continue
            if self._int64(ctx, labels):
                yield labels, "nn.CrossEntropyLoss needs int32 labels in MindSpore 2.10; cast with .astype(ms.int32)"
            elif isinstance(labels, ast.Name) and c.func is not None:
                key = id(c.func)
                if key not in int64_locals:
                    int64_locals[key] = {
                        t.id for n in ctx.body_nodes(c.func) if isinstance(n, ast.Assign) and self._int64(ctx, n.value)
                        for t in n.targets if isinstance(t, ast.Name)
                    }
                if labels.id in int64_locals[key]:
                    yield labels, f"`{labels.id}` is int64 but nn.CrossEntropyLoss needs int32 labels; cast with .astype(ms.int32)"

    @staticmethod
    def _int64(ctx: FileContext, expr: ast.AST) -> bool:
        for n in ast.walk(expr):
            if isinstance(n, (ast.Attribute, ast.Name)) and ctx.resolve(n) in _INT64:
                return True
            if isinstance(n, ast.Constant) and n.value == "int64":
                return True
        return False


class OptimizerParamsGenerator(Rule):
    """Flags `mindspore.nn` optimizers given `net.get_parameters()` or `net.parameters_and_names()`.

    ## Why is this bad?
    These return generators (and `get_parameters` includes non-trainable parameters such as BatchNorm
    moving statistics). `nn` optimizers need a list: pass `net.trainable_params()`
    (learning_rate_and_optimizer.md).

    ## Fix
    `nn.Adam(net.trainable_params(), ...)`.
    """

    code = "MS504"
    name = "optimizer-params-generator"
    message = "optimizer given a parameter generator"
    severity = "error"
    VALID = (
        "from mindspore import nn\nopt = nn.Adam(net.trainable_params(), learning_rate=1e-3)\n",
        "from mindspore import nn\nopt = nn.Adam(list(net.get_parameters()), learning_rate=1e-3)\n",
    )
    INVALID = (
        "from mindspore import nn\nopt = nn.Adam(net.get_parameters(), learning_rate=1e-3)\n",
        "import mindspore as ms\nopt = ms.nn.SGD(params=model.parameters_and_names(), learning_rate=0.1)\n",
    )

    def check(self, ctx):
        for call, layer in _optimizer_calls(ctx):
            params = ctx.argument(call, "params", 0)
            if (isinstance(params, ast.Call) and isinstance(params.func, ast.Attribute)
                    and params.func.attr in ("get_parameters", "parameters_and_names")):
                yield params, f"nn.{layer} needs a list of trainable parameters; pass net.trainable_params()"


class DeprecatedNnApi(Rule):
    """Flags `nn.Momentum` and `nn.SoftmaxCrossEntropyWithLogits`, deprecated in MindSpore 2.10.

    ## Why is this bad?
    Both are marked deprecated in the 2.10 docstrings and will be removed after 2.9-era API changes;
    new code (and converted code) should not start on them. They still work, hence info only.

    ## Fix
    `nn.SGD(params, learning_rate, momentum=...)` (same update as torch SGD with momentum) and
    `nn.CrossEntropyLoss()` with int32 labels.
    """

    code = "MS505"
    name = "deprecated-nn-api"
    message = "deprecated mindspore.nn API"
    severity = "info"
    VALID = (
        "from mindspore import nn\nopt = nn.SGD(net.trainable_params(), 0.1, momentum=0.9)\nloss = nn.CrossEntropyLoss()\n",
        "import torch\nloss = torch.nn.CrossEntropyLoss()\n",
    )
    INVALID = (
        "from mindspore import nn\nopt = nn.Momentum(net.trainable_params(), 0.1, 0.9)\n",
        "from mindspore import nn\nloss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')\n",
    )

    _REPLACEMENT = {"Momentum": "nn.SGD(..., momentum=...)", "SoftmaxCrossEntropyWithLogits": "nn.CrossEntropyLoss"}

    def check(self, ctx):
        for call, layer in _optimizer_calls(ctx, self._REPLACEMENT):
            yield call, f"nn.{layer} is deprecated in MindSpore 2.10; use {self._REPLACEMENT[layer]}"
