"""MS3xx: PyTorch idioms left in MindSpore code.

Checked in files that import mindspore, whether or not they also import torch: a half-migrated file's leftovers
(`loss.backward()`, `optimizer.zero_grad()`) are shown beside its MS301. The one exception is a method call on a
value that is visibly torch's (`torch.load(path)["w"].cpu()` in interop code): its receiver starts with a torch call.
"""
from __future__ import annotations

import ast
from typing import ClassVar

from mindport.validators.lint.context import CallSite, FileContext, cell_instance_names
from mindport.validators.lint.rules.base import Rule


def _in_scope(ctx: FileContext, c: CallSite) -> bool:
    if not ctx.imports_mindspore or c.qualname is not None:
        return False
    return not (ctx.imports_torch and _torch_receiver(ctx, c.node.func))


def _torch_receiver(ctx: FileContext, func: ast.AST) -> bool:
    """``torch.load(p)["w"].cpu``: the receiver chain of the method starts with a call of a torch function."""
    node = func.value if isinstance(func, ast.Attribute) else None
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Call) and (ctx.resolve(node.func) or "").startswith(("torch.", "torchvision.")):
            return True
        node = node.func if isinstance(node, ast.Call) else node.value
    return False


class MethodCallRule(Rule):
    """Shared check: a method call `x.<attr>(...)` whose receiver is not an imported module."""

    attrs: ClassVar[frozenset[str]]

    def accept(self, ctx: FileContext, c: CallSite) -> str | None:
        """The message, or None to skip."""
        return f"`.{c.attr}()` is a torch idiom"

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore:
            return
        for attr in self.attrs:
            for c in ctx.by_attr.get(attr, ()):
                if not _in_scope(ctx, c):
                    continue
                msg = self.accept(ctx, c)
                if msg:
                    yield c.node, msg


class TorchImport(Rule):
    """Flags `import torch` (and torchvision/torchaudio) in a file that also imports MindSpore.

    ## Why is this bad?
    A migrated module that still imports torch usually still *uses* it somewhere (a leftover
    `torch.no_grad()`, a tensor helper), makes torch a runtime dependency of the MindSpore model and can
    mix two tensor types in one computation.

    ## Fix
    Replace the remaining torch uses by MindSpore ones and drop the import. Interop code (checkpoint
    conversion, parity tests) legitimately needs both: silence it there with `# noqa: MS301`.

    A file that still imports torch is checked like any other: its leftovers (`.backward()`, `.zero_grad()`,
    `.cuda()`, MS3xx) are reported beside this finding. Only a method call on a value that is visibly torch's,
    its receiver starting with a torch call (`torch.load(path)["w"].cpu()`), is left alone.
    """

    code = "MS301"
    name = "torch-import"
    message = "torch import in MindSpore code"
    VALID = (
        "import mindspore as ms\nfrom mindspore import nn\n",
        "import torch  # a pure torch file is not MindSpore code\nx = torch.ones(2)\n",
    )
    INVALID = (
        "import torch\nimport mindspore as ms\n",
        "from mindspore import nn\nfrom torch.utils.data import DataLoader\n",
    )

    def check(self, ctx):
        if ctx.imports_mindspore:
            for node in ctx.torch_imports:
                yield node, "torch imported in MindSpore code; finish the port or mark interop code with # noqa"


class TorchDeviceMethod(MethodCallRule):
    """Flags device and autograd-graph methods that MindSpore tensors and Cells lack: `.cuda()`,
    `.cpu()`, `.detach()`, and `.to(device)` with a device (a `"cuda"`/`"cpu"` string, a `device`
    variable or `torch.device(...)`).

    ## Why is this bad?
    MindSpore has no per-tensor device placement and no `.cuda()/.cpu()/.detach()` on Tensor (verified in
    2.10): the call raises `AttributeError`. `Tensor.to` exists (dtypes, `"cpu"`) but rejects `"cuda"`
    with `ValueError` (verified); `.to(dtype)`, `.to("cpu")` and `.to(device_variable)` are not flagged.

    ## Fix
    Select the device once with `ms.set_device("GPU"|"Ascend"|"CPU")`; drop `.cuda()/.cpu()/.to(device)`.
    Replace `.detach()` with `ops.stop_gradient(x)`.
    """

    code = "MS302"
    name = "torch-device-method"
    message = "torch device/graph method"
    severity = "error"
    attrs = frozenset({"cuda", "cpu", "detach", "to"})
    VALID = (
        "import mindspore as ms\nfrom mindspore import ops\nms.set_device('CPU')\ny = ops.stop_gradient(x)\n"
        "z = x.to(ms.float16).to('cpu')\n",
        "import torch\nimport mindspore as ms\nw = torch.load('m.pt')['w'].cpu().numpy()  # noqa: MS301\n",
    )
    INVALID = (
        "import mindspore as ms\nnet = Net().cuda()\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return self.fc(x).detach()\n",
        "import mindspore as ms\ny = y.to('cuda:0')\n",
    )

    def accept(self, ctx, c):
        if c.attr != "to":
            return f"`.{c.attr}()` does not exist in MindSpore; " + (
                "use ops.stop_gradient" if c.attr == "detach" else "select the device with ms.set_device"
            )
        args = [*c.node.args, *(k.value for k in c.node.keywords if k.arg == "device")]
        if not args:
            return None
        a = args[0]
        # 2.10 Tensor.to accepts dtypes and MindSpore device names ("cpu", "CPU", "Ascend"); "cuda" fails
        device_like = (
            isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.split(":")[0] in ("cuda", "mps")
        ) or (isinstance(a, ast.Call) and (ctx.resolve(a.func) or "").startswith("torch."))
        return "`.to(device)` has no MindSpore equivalent; select the device with ms.set_device" if device_like else None


class TorchBackward(MethodCallRule):
    """Flags `.backward()` calls.

    ## Why is this bad?
    MindSpore tensors have no `.backward()` and no `.grad`; gradients are computed functionally.

    ## Fix
    `grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)`, then
    `loss, grads = grad_fn(x, y)` and `optimizer(grads)`.
    """

    code = "MS303"
    name = "torch-backward"
    message = "loss.backward() is a torch idiom"
    severity = "error"
    attrs = frozenset({"backward"})
    VALID = (
        "import mindspore as ms\ngrad_fn = ms.value_and_grad(forward_fn, None, opt.parameters)\n"
        "loss, grads = grad_fn(x, y)\nopt(grads)\n",
        "import torch\nloss.backward()\n",
    )
    INVALID = (
        "import mindspore as ms\nloss = loss_fn(net(x), y)\nloss.backward()\n",
        "from mindspore import nn\n\ndef train(net, loss_fn, x, y):\n    loss_fn(net(x), y).backward()\n",
        # a half-migrated file that still imports torch: its leftovers are shown beside MS301
        "import torch\nimport mindspore as ms\n\ndef step(net, loss_fn, x, y):\n    loss_fn(net(x), y).backward()\n",
    )

    def accept(self, ctx, c):
        return "`.backward()` does not exist in MindSpore; use ms.value_and_grad(...) and call the optimizer with the grads"


class TorchZeroGrad(MethodCallRule):
    """Flags `optimizer.zero_grad()` / `net.zero_grad()`.

    ## Why is this bad?
    MindSpore does not accumulate gradients, so there is nothing to zero, and neither optimizers nor
    Cells have `zero_grad` (AttributeError).

    ## Fix
    Delete the call.
    """

    code = "MS304"
    name = "torch-zero-grad"
    message = "zero_grad() is a torch idiom"
    severity = "error"
    attrs = frozenset({"zero_grad"})
    VALID = (
        "import mindspore as ms\nloss, grads = grad_fn(x, y)\nopt(grads)\n",
        "import torch\nopt.zero_grad()\n",
    )
    INVALID = (
        "import mindspore as ms\nopt.zero_grad()\n",
        "from mindspore import nn\nfor x, y in data:\n    net.zero_grad()\n",
    )

    def accept(self, ctx, c):
        return "`.zero_grad()` does not exist in MindSpore (gradients are not accumulated); delete it"


class TorchSizeCall(MethodCallRule):
    """Flags `x.size()` / `x.size(dim)` calls.

    ## Why is this bad?
    In MindSpore `Tensor.size` is an int property (the number of elements), so `x.size(0)` raises
    "'int' object is not callable", and `x.size()` fails the same way (verified).

    ## Fix
    `x.shape[dim]` for `x.size(dim)`, `x.shape` for `x.size()`; `x.size` (no call) is the element count.
    """

    code = "MS305"
    name = "torch-size-call"
    message = "x.size(dim) is a torch idiom"
    severity = "error"
    attrs = frozenset({"size"})
    VALID = (
        "import mindspore as ms\nn = x.shape[0]\ntotal = x.size\n",
        "import numpy as np\nimport mindspore as ms\nk = np.size(a, 0)\n",
    )
    INVALID = (
        "import mindspore as ms\nbatch = x.size(0)\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return x.view(x.size()[0], -1)\n",
    )

    def accept(self, ctx, c):
        node = c.node
        if node.keywords or len(node.args) > 1:
            return None
        shown = f"x.shape[{ast.unparse(node.args[0])}]" if node.args else "x.shape"
        return f"Tensor.size is an int in MindSpore; `.size({'...' if node.args else ''})` fails: use {shown}"


class ForwardInCell(Rule):
    """Flags a Cell class that defines `forward` but no `construct`.

    ## Why is this bad?
    MindSpore calls `construct`; a Cell without one raises at the first call, and a `forward` left in
    place is never used.

    ## Fix
    Rename `forward` to `construct` (its first parameter must stay `self`).
    """

    code = "MS306"
    name = "forward-in-cell"
    message = "Cell defines forward instead of construct"
    severity = "error"
    VALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return x\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return self.forward(x)\n"
        "    def forward(self, x):  # a helper next to construct\n        return x\n",
    )
    INVALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def forward(self, x):\n        return x\n",
        "import mindspore as ms\n\nclass Base(ms.nn.Cell):\n    pass\n\nclass Net(Base):\n"
        "    def forward(self, x, y):\n        return x + y\n",
    )

    def check(self, ctx):
        for cls in ctx.cell_classes.values():
            names = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if "forward" in names and "construct" not in names:
                yield names["forward"], f"Cell `{cls.name}` defines `forward`, which MindSpore never calls; rename it to `construct`"


class TorchTrainEvalMode(MethodCallRule):
    """Flags argument-less `.train()` / `.eval()` calls (torch's mode switches) on a network: `self` in a
    Cell, a variable assigned a Cell in this file, or a name such as `net`, `model`, `backbone`
    (metrics have a legitimate `eval()` and are not flagged).

    ## Why is this bad?
    MindSpore Cells have no `train()`/`eval()` (AttributeError); `Model.train`/`Model.eval` take an epoch
    count or a dataset. Note that a Cell starts in *inference* mode (`training=False`), unlike torch.

    ## Fix
    `net.set_train(True)` before training, `net.set_train(False)` before evaluation.
    """

    code = "MS307"
    name = "torch-train-eval-mode"
    message = "net.train()/net.eval() is a torch idiom"
    severity = "error"
    attrs = frozenset({"train", "eval"})
    VALID = (
        "import mindspore as ms\nnet.set_train(True)\nmodel.train(10, train_ds)\nmodel.eval(valid_ds)\n"
        "acc = metric.eval()\n",
        "import torch\nmodel.eval()\n",
    )
    INVALID = (
        "import mindspore as ms\nnet.eval()\n",
        "from mindspore import nn\n\ndef fit(net):\n    net.train()\n",
    )

    def accept(self, ctx, c):
        if c.node.args or c.node.keywords:
            return None
        # metrics define a legitimate argument-less eval(): only receivers that look like networks count
        receiver = c.node.func.value
        if isinstance(receiver, ast.Name):
            name = receiver.id
            if name == "self":
                if c.cls is None or c.cls.name not in ctx.cell_classes:
                    return None
            elif name not in cell_instance_names(ctx) and not any(
                k in name.lower() for k in ("net", "model", "module", "backbone", "encoder", "decoder")
            ):
                return None
        elif not (isinstance(receiver, ast.Attribute) and any(
            k in receiver.attr.lower() for k in ("net", "model", "module", "backbone", "encoder", "decoder")
        )):
            return None
        flag = "True" if c.attr == "train" else "False"
        return f"Cells have no `.{c.attr}()`; use `.set_train({flag})`"


_MODULE_METHODS = {
    "parameters": "trainable_params()",
    "named_parameters": "parameters_and_names()",
    "named_modules": "cells_and_names()",
    "named_children": "name_cells().items()",
    "children": "cells()",
    "modules": "cells_and_names()",
    "register_parameter": "insert_param_to_cell(name, param)",
    "add_module": "insert_child_to_cell(name, cell)",
    "get_submodule": "a direct attribute access",
    "half": "to_float(ms.float16)",
    "double": "to_float(ms.float64)",
    "requires_grad_": "Parameter.requires_grad = ...",
}


class TorchModuleMethod(MethodCallRule):
    """Flags torch `nn.Module` methods called on a Cell (`self` inside a Cell class, or a variable
    assigned a Cell in this file): `parameters()`, `named_parameters()`, `named_modules()`,
    `register_parameter()`, `add_module()`, `half()`, ...

    ## Why is this bad?
    `mindspore.nn.Cell` has none of these (checked against 2.10): the call raises `AttributeError`.

    ## Fix
    Use the Cell API: `trainable_params()`, `parameters_and_names()`, `cells_and_names()`,
    `insert_param_to_cell()`, `insert_child_to_cell()`, `to_float()`.
    """

    code = "MS308"
    name = "torch-module-method"
    message = "torch nn.Module method on a Cell"
    severity = "error"
    attrs = frozenset(_MODULE_METHODS)
    VALID = (
        "from mindspore import nn\nnet = nn.Dense(2, 2)\nopt = nn.SGD(net.trainable_params(), 0.1)\n",
        "from mindspore import nn\nloader = make_loader()\nfor p in loader.parameters():\n    pass\n",
    )
    INVALID = (
        "from mindspore import nn\nnet = nn.Dense(2, 2)\nopt = nn.SGD(net.parameters(), 0.1)\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.add_module('fc', nn.Dense(2, 2))\n",
    )

    def accept(self, ctx, c):
        receiver = c.node.func.value
        if not isinstance(receiver, ast.Name):
            return None
        is_self = receiver.id == "self" and c.cls is not None and c.cls.name in ctx.cell_classes
        if not is_self and receiver.id not in cell_instance_names(ctx):
            return None
        return f"Cell has no `.{c.attr}()` (torch nn.Module API); use `.{_MODULE_METHODS[c.attr]}`"
