"""MS103-MS107: the last five "Considerations for MindSpore Network Authoring" of the migration guide
(model_development.rst@r2.5.0), in the guide's order (MS101-MS102 are in pitfalls_data.py)."""
from __future__ import annotations

import ast

from mindport.validators.lint.context import FileContext, literal_number
from mindport.validators.lint.rules.base import Rule

_MODEL_NAMES = frozenset({"mindspore.Model", "mindspore.train.Model", "mindspore.train.model.Model"})


def _not_o0(node: ast.AST | None) -> bool:
    return node is not None and not (isinstance(node, ast.Constant) and node.value == "O0")


class MixedPrecisionConflict(Rule):
    """Flags `Model(..., amp_level=...)` (or `build_train_network(level=...)`) with a level other than
    "O0" in a file that also sets precision by hand (`cell.to_float(...)`,
    `amp.custom_mixed_precision(...)`, `amp.auto_mixed_precision(...)`).

    ## Why is this bad?
    The migration guide and the `Model` docstring: converting precision twice is unsupported. The two
    mechanisms insert casts independently, which gives wrong dtypes, redundant casts or errors.

    ## Fix
    Choose one: either keep the manual `to_float`/`custom_mixed_precision` and pass `amp_level="O0"`, or
    drop the manual conversion and let `Model(amp_level=...)` do it.
    """

    code = "MS103"
    name = "mixed-precision-conflict"
    message = "custom mixed precision together with Model(amp_level=...)"
    severity = "error"
    VALID = (
        "import mindspore as ms\nnet.to_float(ms.float16)\nmodel = ms.Model(net, loss, opt, amp_level='O0')\n",
        "from mindspore import Model\nmodel = Model(net, loss, opt, amp_level='O2')\n",
    )
    INVALID = (
        "import mindspore as ms\nnet.to_float(ms.float16)\nmodel = ms.Model(net, loss, opt, amp_level='O2')\n",
        "from mindspore import amp\nfrom mindspore.train import Model\n"
        "net = amp.custom_mixed_precision(net, white_list=wl)\nmodel = Model(net, loss_fn, opt, amp_level=level)\n",
    )

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore:
            return
        manual = bool([c for c in ctx.by_attr.get("to_float", ()) if c.qualname is None])
        manual = manual or bool(ctx.by_ms.get("custom_mixed_precision")) or any(
            _not_o0(ctx.argument(c.node, "amp_level", 1)) for c in ctx.by_ms.get("auto_mixed_precision", ())
        )
        amp_calls = [c.node for c in ctx.by_ms.get("Model", ())
                     if c.qualname in _MODEL_NAMES and _not_o0(ctx.argument(c.node, "amp_level", 6))]
        amp_calls += [c.node for c in ctx.by_ms.get("build_train_network", ())
                      if _not_o0(ctx.argument(c.node, "level", 3))]
        amp_calls.sort(key=lambda n: (n.lineno, n.col_offset))
        if manual:
            for node in amp_calls:
                yield node, (
                    "automatic mixed precision (amp_level) on a network whose precision is also set by hand "
                    "(to_float/custom_mixed_precision); use one of the two, or amp_level='O0'"
                )


# ---- MS104 ------------------------------------------------------------------------------------------

_FP16_LAYERS = frozenset({"Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose"})
_FP16_OPS = frozenset({"conv1d", "conv2d", "conv3d", "Conv2D", "Conv3D", "sort", "Sort", "topk", "TopK",
                       "conv_transpose2d"})
_LOSS_SCALE = frozenset({"FixedLossScaleManager", "DynamicLossScaleManager", "LossScaleManager",
                         "StaticLossScaler", "DynamicLossScaler", "TrainOneStepWithLossScaleCell",
                         "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell"})
_LOSS_SCALE_KW = frozenset({"loss_scale_manager", "loss_scale", "scale_sense"})
_TRAINING = frozenset({"value_and_grad", "grad", "TrainOneStepCell", "build_train_network", "GradOperation"})


class AscendFp16WithoutLossScale(Rule):
    """On Ascend (the file sets `device_target="Ascend"`, or the config says `device-target = "Ascend"`),
    flags training code that uses Conv, Sort or TopK without any loss scaling (no loss-scale manager,
    scaler, `TrainOneStepWithLossScaleCell` or `loss_scale_manager=`). Reported once per file, at the first
    such operator.

    ## Why is this bad?
    The migration guide: on Ascend, Conv, Sort and TopK only support float16, so gradients through them
    underflow or overflow without loss scaling and training silently stalls or diverges.

    ## Fix
    Add loss scaling: `Model(..., loss_scale_manager=ms.amp.DynamicLossScaleManager())`, or in a custom
    loop `amp.DynamicLossScaler` with `scale`/`unscale` and `amp.all_finite(grads)`.
    """

    code = "MS104"
    name = "ascend-fp16-without-loss-scale"
    message = "float16-only Ascend operator in training without loss scaling"
    severity = "info"
    VALID = (
        "import mindspore as ms\nfrom mindspore import nn\nms.set_context(device_target='Ascend')\n"
        "net = nn.Conv2d(3, 8, 3, pad_mode='same', has_bias=True)\n"
        "model = ms.Model(net, loss, opt, loss_scale_manager=ms.amp.DynamicLossScaleManager())\n",
        "import mindspore as ms\nfrom mindspore import nn\nms.set_context(device_target='CPU')\n"
        "net = nn.Conv2d(3, 8, 3, pad_mode='same', has_bias=True)\n"
        "grad_fn = ms.value_and_grad(forward, None, opt.parameters)\n",
    )
    INVALID = (
        "import mindspore as ms\nfrom mindspore import nn\nms.set_context(device_target='Ascend')\n"
        "net = nn.Conv2d(3, 8, 3, pad_mode='same', has_bias=True)\n"
        "grad_fn = ms.value_and_grad(forward, None, opt.parameters)\n",
        "import mindspore as ms\nfrom mindspore import ops\nms.set_device('Ascend')\n"
        "def forward(x):\n    values, idx = ops.topk(x, 5)\n    return values.sum()\n"
        "train_net = ms.nn.TrainOneStepCell(net, opt)\n",
    )

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore or not ctx.ascend:
            return
        first = None
        training = False
        for c in ctx.calls:
            if c.ms_name is None:
                continue
            qn, last = c.qualname, c.ms_name
            if last in _LOSS_SCALE or any(k.arg in _LOSS_SCALE_KW for k in c.node.keywords):
                return
            if last in _TRAINING or (qn in _MODEL_NAMES and ctx.argument(c.node, "optimizer", 2) is not None):
                training = True
            if first is None and ((c.layer in _FP16_LAYERS) or (
                qn.startswith(("mindspore.ops.", "mindspore.mint.")) and last in _FP16_OPS
            )):
                first = c.node
        if first is not None and training:
            yield first, (
                "Conv/Sort/TopK run in float16 on Ascend; this training code has no loss scaling "
                "(add a LossScaleManager or DynamicLossScaler)"
            )


# ---- MS105 ------------------------------------------------------------------------------------------

_STRIDED = {name: 3 for name in _FP16_LAYERS}
_STRIDED.update({n: 1 for n in ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d")})
ASCEND_MAX_STRIDE = 63


class AscendStrideLimit(Rule):
    """On Ascend, flags Conv and pooling layers whose literal `stride` is outside 1..63.

    ## Why is this bad?
    The migration guide warns that operators with a stride attribute have stride-length limits on
    Ascend; the Ascend Conv2D/Pooling kernels accept strides 1..63 per dimension. Larger values fail at
    graph compilation (or fall back to slow AI CPU kernels), far from the model code.

    ## Fix
    Use a smaller stride and downsample in several steps (e.g. two convolutions, or a pooling layer
    followed by a strided convolution).
    """

    code = "MS105"
    name = "ascend-stride-limit"
    message = "stride outside the Ascend range 1..63"
    severity = "info"
    VALID = (
        "import mindspore as ms\nfrom mindspore import nn\nms.set_context(device_target='Ascend')\n"
        "conv = nn.Conv2d(3, 8, 3, stride=2, pad_mode='same', has_bias=True)\n",
        "from mindspore import nn\npool = nn.MaxPool2d(kernel_size=64, stride=64)  # not an Ascend file\n",
    )
    INVALID = (
        "import mindspore as ms\nfrom mindspore import nn\nms.set_context(device_target='Ascend')\n"
        "conv = nn.Conv2d(3, 8, 64, stride=64, pad_mode='valid', has_bias=True)\n",
        "import mindspore as ms\nfrom mindspore import nn\nms.set_device('Ascend')\n"
        "pool = nn.AvgPool2d(128, (1, 128))\n",
    )

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore or not ctx.ascend:
            return
        for c in ctx.calls:
            layer = c.layer
            if layer not in _STRIDED:
                continue
            stride = ctx.argument(c.node, "stride", _STRIDED[layer])
            values = stride.elts if isinstance(stride, (ast.Tuple, ast.List)) else [stride]
            nums = [literal_number(v) for v in values if v is not None]
            if any(n is not None and (n < 1 or n > ASCEND_MAX_STRIDE) for n in nums):
                yield stride, f"{layer} stride {ast.unparse(stride)} is outside the Ascend range 1..{ASCEND_MAX_STRIDE}"


# ---- MS106 ------------------------------------------------------------------------------------------

_DIST = frozenset({"init_process_group", "set_auto_parallel_context", "DistributedGradReducer"})


class DistributedInitWithoutSeed(Rule):
    """Flags distributed initialisation (`mindspore.communication.init()`, `set_auto_parallel_context`,
    `nn.DistributedGradReducer`, `mint.distributed.init_process_group`) in a file that never calls
    `mindspore.set_seed` (or `manual_seed`).

    ## Why is this bad?
    The migration guide: in distributed training every card must initialise the parameters identically,
    which needs a fixed global seed. Without it each rank starts from different weights, and data
    parallel training averages gradients of different models.

    ## Fix
    Call `ms.set_seed(<constant>)` before the network is built.
    """

    code = "MS106"
    name = "distributed-init-without-seed"
    message = "distributed training without a global seed"
    severity = "error"
    VALID = (
        "import mindspore as ms\nfrom mindspore.communication import init\nms.set_seed(1)\ninit()\nnet = Net()\n",
        "from mindspore import set_seed, set_auto_parallel_context\nset_seed(0)\n"
        "set_auto_parallel_context(parallel_mode='data_parallel', gradients_mean=True)\n",
    )
    INVALID = (
        "import mindspore as ms\nfrom mindspore.communication import init\ninit()\nnet = Net()\n",
        "import mindspore as ms\nms.set_auto_parallel_context(parallel_mode='data_parallel')\n"
        "reducer = ms.nn.DistributedGradReducer(opt.parameters)\n",
    )

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore:
            return
        if ctx.by_ms.get("set_seed") or ctx.by_ms.get("manual_seed"):
            return
        dist = [c for name in _DIST for c in ctx.by_ms.get(name, ())]
        dist += [c for c in ctx.by_ms.get("init", ()) if c.qualname.startswith("mindspore.communication")]
        first = min(dist, key=lambda c: (c.node.lineno, c.node.col_offset)).node if dist else None
        if first is not None:
            yield first, "distributed initialisation without ms.set_seed(...): ranks would start from different weights"


# ---- MS107 ------------------------------------------------------------------------------------------


class CellContainerInInit(Rule):
    """Flags a Python list, tuple or dict of Cells or Parameters assigned to `self` in a Cell's
    `__init__` (literals, comprehensions, `list(...)`, and `self.x = []` followed by
    `self.x.append(<Cell>)`).

    ## Why is this bad?
    The migration guide: a list of Cells must become `CellList`/`SequentialCell`, a list of Parameters a
    `ParameterTuple`. A plain container registers no parameters: `trainable_params()` is empty, the
    optimizer trains nothing and checkpoints miss the weights (verified), and GRAPH_MODE fails with
    "parameter name 'weight' already exists".

    ## Fix
    Wrap the container: `nn.CellList([...])` (for a list or tuple of Cells), `nn.CellDict({...})`,
    `ParameterTuple([...])`. `--fix` does this (and adds the import when none is usable); `CellList`
    keeps indexing, iteration, `len` and `append`, so the rest of the code is unchanged.
    """

    code = "MS107"
    name = "cell-container-in-init"
    message = "Python container of Cells/Parameters in __init__"
    severity = "error"
    fixable = True
    VALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(3)])\n        self.sizes = [4, 4, 4]\n",
        "import mindspore as ms\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
        "        super().__init__()\n        self.ws = ms.ParameterTuple([ms.Parameter(ms.Tensor(1.0), name='w0')])\n"
        "        self.heads = nn.CellDict({'a': nn.ReLU()})\n",
    )
    INVALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Dense(4, 4), nn.ReLU()]\n",
        "from mindspore import nn\n\nclass Block(nn.Cell):\n    pass\n\nclass Net(nn.Cell):\n"
        "    def __init__(self, n):\n        super().__init__()\n        self.blocks = [Block() for _ in range(n)]\n",
        "import mindspore as ms\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
        "        super().__init__()\n        self.heads = {'cls': nn.Dense(8, 2)}\n"
        "        self.ws = (ms.Parameter(ms.Tensor(1.0)), ms.Parameter(ms.Tensor(2.0)))\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = []\n        for i in range(3):\n            self.layers.append(nn.Dense(4, 4))\n",
    )
    FIXES = (
        (
            "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = [nn.Dense(4, 4), nn.ReLU()]  # keep me\n",
            "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.CellList([nn.Dense(4, 4), nn.ReLU()])  # keep me\n",
        ),
        (
            "import mindspore as ms\nimport mindspore.nn as mnn\n\nclass Net(mnn.Cell):\n    def __init__(self):\n"
            "        super().__init__()\n        self.heads = {'cls': mnn.Dense(8, 2)}\n"
            "        self.ws = (ms.Parameter(ms.Tensor(1.0)), ms.Parameter(ms.Tensor(2.0)))\n"
            "        self.blocks = []\n        self.blocks.append(mnn.ReLU())\n",
            "import mindspore as ms\nimport mindspore.nn as mnn\n\nclass Net(mnn.Cell):\n    def __init__(self):\n"
            "        super().__init__()\n        self.heads = mnn.CellDict({'cls': mnn.Dense(8, 2)})\n"
            "        self.ws = ms.ParameterTuple((ms.Parameter(ms.Tensor(1.0)), ms.Parameter(ms.Tensor(2.0))))\n"
            "        self.blocks = mnn.CellList()\n        self.blocks.append(mnn.ReLU())\n",
        ),
        (
            "from mindspore.nn import Cell, Dense\n\nclass Net(Cell):\n    def __init__(self):\n"
            "        super().__init__()\n        self.layers = (Dense(2, 2), Dense(2, 2))\n",
            "from mindspore.nn import CellList, Cell, Dense\n\nclass Net(Cell):\n"
            "    def __init__(self):\n        super().__init__()\n        self.layers = CellList([Dense(2, 2), Dense(2, 2)])\n",
        ),
    )

    def check(self, ctx: FileContext):
        for cls, fn in ctx.cell_methods:
            if fn.name != "__init__" or not fn.args.args:
                continue
            self_name = fn.args.args[0].arg
            yield from self._check_init(ctx, fn, self_name)

    @staticmethod
    def kind_of(ctx: FileContext, value: ast.AST, cell_locals: set[str]) -> str | None:
        """"cells" / "parameters" / "celldict" when `value` is a plain container of those, else None."""

        def element_kind(e: ast.AST) -> str | None:
            if isinstance(e, ast.Call) and ctx.is_cell_call(e):
                return "cells"
            if isinstance(e, ast.Name) and e.id in cell_locals:
                return "cells"
            if ctx.is_parameter_call(e):
                return "parameters"
            return None

        if isinstance(value, (ast.List, ast.Tuple)):
            kinds = {element_kind(e) for e in value.elts}
            kinds.discard(None)
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            return element_kind(value.elt)
        if isinstance(value, ast.Dict):
            if value.values and all(element_kind(v) == "cells" for v in value.values if v is not None):
                return "celldict"
            return None
        if isinstance(value, ast.DictComp):
            return "celldict" if element_kind(value.value) == "cells" else None
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in ("list", "tuple")
            and value.func.id not in ctx.aliases
            and len(value.args) == 1
            and isinstance(value.args[0], (ast.ListComp, ast.GeneratorExp, ast.List, ast.Tuple))
        ):
            return CellContainerInInit.kind_of(ctx, value.args[0], cell_locals)
        return None

    def _check_init(self, ctx: FileContext, fn: ast.FunctionDef, self_name: str):
        cell_locals: set[str] = set()
        empties: dict[str, ast.AST] = {}
        relevant = [n for n in ctx.body_nodes(fn) if (n.__class__ is ast.Assign and len(n.targets) == 1) or (
            n.__class__ is ast.Call and n.func.__class__ is ast.Attribute and n.func.attr == "append")]
        relevant.sort(key=lambda n: (n.lineno, n.col_offset))
        for node in relevant:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and isinstance(value, ast.Call) and ctx.is_cell_call(value):
                    cell_locals.add(target.id)
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == self_name):
                    continue
                kind = self.kind_of(ctx, value, cell_locals)
                if kind:
                    yield value, self._message(kind, target.attr)
                elif isinstance(value, ast.List) and not value.elts:
                    empties[target.attr] = value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Attribute)
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == self_name
                and node.func.value.attr in empties
                and len(node.args) == 1
            ):
                arg = node.args[0]
                if (isinstance(arg, ast.Call) and ctx.is_cell_call(arg)) or (
                    isinstance(arg, ast.Name) and arg.id in cell_locals
                ):
                    empty = empties.pop(node.func.value.attr)
                    yield empty, self._message("cells", node.func.value.attr)

    @staticmethod
    def _message(kind: str, attr: str) -> str:
        target = {"cells": "nn.CellList", "parameters": "ParameterTuple", "celldict": "nn.CellDict"}[kind]
        what = "Parameters" if kind == "parameters" else "Cells"
        return f"`self.{attr}` is a plain Python container of {what}: nothing in it is registered; use {target}"
