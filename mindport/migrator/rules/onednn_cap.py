"""The converter rule OneDnnCapTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/onednn_cap.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.cpu_kernels import CAP, VARIABLE
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_statement

_COMMENT = "# mindport: MindSpore's CPU convolutions on AVX-512 take a oneDNN path 40-130x slower than AVX2's (same results)"


def _imports(body) -> list:
    return [small for stmt in body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body
            if isinstance(small, (cst.Import, cst.ImportFrom))]


def _is_main_guard(stmt) -> bool:
    if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison):
        return False
    code = cst.Module(body=[]).code_for_node(stmt.test).replace("'", '"').replace(" ", "")
    return code in ('__name__=="__main__"', '"__main__"==__name__')


# packages a program imports that build no network: a script importing only these and torch, and naming no
# convolution, runs none
_NO_NETWORKS = frozenset({"torch", "numpy", "matplotlib", "pandas", "scipy", "tqdm", "sklearn", "seaborn", "PIL",
                          "cv2", "h5py", "yaml", "tensorboard", "tensorboardX", "wandb", "einops", "IPython"})


def _may_convolve(module: cst.Module, import_roots) -> bool:
    """Can the program run a convolution: it names one (``nn.Conv2d``, ``F.conv1d``, ``ConvTranspose`` ...) or imports a
    module that may build one (the project's own model file, torchvision's models: not a standard or data library).
    ``import_roots``: the packages of its absolute imports (the file context's)."""
    import sys

    if "conv" in module.code.lower():
        return True
    if any(isinstance(imp, cst.ImportFrom) and imp.relative for imp in _imports(module.body)):
        return True
    return any(root not in _NO_NETWORKS and root not in sys.stdlib_module_names for root in import_roots)


def _loop_calling(stmt) -> bool:
    """A module-level ``for``/``while`` whose body calls something: a script whose epochs run at its top level, the
    backward inside the functions it calls (``for epoch in range(...): train(epoch)``, timgaripov/swa's
    ``utils.train_epoch(...)`` from another module): it runs as a program though it has no main block and no
    ``.backward()`` of its own at the top."""
    if not isinstance(stmt, (cst.For, cst.While)):
        return False
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

    stmt.body.visit(_Find())
    return bool(found)


def _calls_backward(stmt) -> bool:
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                found.append(node)

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

    stmt.visit(_Find())
    return bool(found)


class OneDnnCapTransform(Rule):
    """A program (a file with an ``if __name__ == "__main__":`` block, or whose top-level code trains: a ``.backward()``
    outside functions and classes, or a loop at the top level calling the functions that train, ``for epoch in
    range(n): train(epoch)``) gets ``os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")`` where it starts: the
    first statement of its main block, or the statement after its imports.

    MindSpore 2.10's CPU convolutions (plain, transposed, grouped, and their gradients) run through the oneDNN it
    bundles; on a CPU with AVX-512 it picks a path for MindSpore's NCHW float32 tensors that runs at 0.2-0.3 GFLOP/s,
    40-130 times slower than the path it takes capped at AVX2 (``mindport/cpu_kernels.py`` has the measurements):
    a converted CNN trained on such a machine ~40 times slower than torch, and a DRN segmentation net's forward took
    88-137 s instead of 0.96 s. The cap changes which algorithm computes a convolution, not what it computes. oneDNN
    reads the variable when it first dispatches, so the line works anywhere before the first convolution runs; a
    value the user sets outside keeps precedence (``setdefault``), and Ascend and GPU never read it. Modules that are
    only imported are left as written: the program that imports them sets it. Only a program that may run a
    convolution gets it: one that names a convolution (``conv`` in its text) or imports a module that may build one
    (its project's model file, torchvision ...: anything but the standard library, torch and data/plotting libraries
    such as numpy, pandas, matplotlib). Not written for ``--device gpu`` or ``--device ascend``, nor into a file that
    names the variable already.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import utils

                net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(), torch.nn.Linear(32, 1))
                opt = torch.optim.SGD(net.parameters(), lr=0.05)
                for epoch in range(5):
                    print(utils.train_epoch(net, opt))
            """,
            after="""
                from mindspore import nn
                from mindspore.experimental import optim as ms_optim
                import utils
                import os
                import mindport.runtime.unbatched  # noqa: F401  (layers taking inputs without a batch axis)
                # mindport: MindSpore's CPU convolutions on AVX-512 take a oneDNN path 40-130x slower than AVX2's (same results)
                os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")

                net = nn.SequentialCell(nn.Conv2d(in_channels=1, out_channels=2, kernel_size=3, has_bias=True, pad_mode='valid'), nn.Flatten(), nn.Dense(in_channels=32, out_channels=1))
                opt = ms_optim.SGD(net.trainable_params(), lr=0.05)
                for epoch in range(5):
                    print(utils.train_epoch(net, opt))
            """,
            note="A script whose epochs run at its top level, the backward in a function of another module (timgaripov/swa's train.py calling utils.train_epoch; its VGG16's first step took over 60 s uncapped, the run timed out at 400 s where torch took 28 s): a program, so the cap goes after its imports.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn

                net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
                opt = torch.optim.SGD(net.parameters(), lr=0.1)
                x, y = torch.randn(8, 1, 8, 8), torch.randn(8, 2)
                for step in range(3):
                    loss = ((net(x) - y) ** 2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train
                import os
                # mindport: MindSpore's CPU convolutions on AVX-512 take a oneDNN path 40-130x slower than AVX2's (same results)
                os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")

                net = nn.SequentialCell(nn.Conv2d(in_channels=1, out_channels=4, kernel_size=3, has_bias=True, pad_mode='valid'), nn.Flatten(), nn.Dense(in_channels=4 * 6 * 6, out_channels=2))
                opt = ms_optim.SGD(net.trainable_params(), lr=0.1)
                x, y = ops.randn(8, 1, 8, 8), ops.randn(8, 2)
                net.set_train(True)
                for step in range(3):
                    def forward_fn():
                        loss = mp_math.mean(((net(x) - y) ** 2))
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt, net))
                    loss, grads = grad_fn()
                    mp_train.zero_grad(opt)
                    mp_train.backward(grads)
                    opt(mp_train.grads_of(opt))
            """,
            note="A script that trains at its top level: the cap after its imports.",
        ),
        Example(
            before="""
                import torch

                from model import Net


                def main():
                    net = Net()
                    print(net(torch.ones(1, 3, 8, 8)).shape)


                if __name__ == "__main__":
                    main()
            """,
            after="""
                from mindspore import ops

                from model import Net


                def main():
                    net = Net()
                    print(net(ops.ones((1, 3, 8, 8))).shape)


                if __name__ == "__main__":
                    import os
                    # mindport: MindSpore's CPU convolutions on AVX-512 take a oneDNN path 40-130x slower than AVX2's (same results)
                    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
                    main()
            """,
            note="A program with a main block, running its project's model: the cap as the block's first statement.",
        ),
        Example(
            before="""
                import numpy as np

                if __name__ == "__main__":
                    print(np.ones(2))
            """,
            after=None,
            note="A program that is not torch code (nor a port converted again): left as written.",
        ),
    )

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self.ctx.options.device not in ("any", "cpu"):
            return updated_node
        if "torch" not in self.ctx.import_roots:
            return updated_node  # not torch code (a converted file converted again)
        if VARIABLE in original_node.code or not _may_convolve(original_node, self.ctx.import_roots):
            return updated_node
        os_bound = any(isinstance(i, cst.Import) and any(
            a.asname is None and cst.Module(body=[]).code_for_node(a.name) == "os" for a in i.names)
            for i in _imports(updated_node.body))
        setting = parse_statement(f'os.environ.setdefault("{VARIABLE}", "{CAP}")')
        setting = setting.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(_COMMENT))])
        body = list(updated_node.body)
        for index, stmt in enumerate(body):
            if _is_main_guard(stmt) and isinstance(stmt.body, cst.IndentedBlock):
                head = [] if os_bound else [parse_statement("import os")]
                block = stmt.body.with_changes(body=[*head, setting, *stmt.body.body])
                body[index] = stmt.with_changes(body=block)
                return updated_node.with_changes(body=body)
        if not any(_calls_backward(stmt) or _loop_calling(stmt) for stmt in original_node.body
                   if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))):
            return updated_node
        last = max((i for i, stmt in enumerate(body) if isinstance(stmt, cst.SimpleStatementLine)
                    and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)), default=-1)
        head = [] if os_bound else [parse_statement("import os")]
        return updated_node.with_changes(body=[*body[:last + 1], *head, setting, *body[last + 1:]])
