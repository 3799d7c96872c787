"""Distributed training code around the table's calls: what torchrun's scripts read from the launcher and from the
DDP wrapper (``DistributedTransform``). The calls themselves (``init_process_group``, collectives,
``DistributedDataParallel``) are mapping entries (``mindport/mappings/data/distributed.toml``), proven in 2 processes.

* ``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK", d)``, ``os.getenv("WORLD_SIZE")`` (also ``LOCAL_WORLD_SIZE``)
  -> ``mp_distributed.environ(...)``: torchrun sets these variables, msrun does not (it sets ``RANK_ID``/
  ``RANK_SIZE``), so the value comes from ``mindspore.communication`` under msrun.
* ``model.module`` of a name or ``self`` attribute assigned ``DistributedDataParallel(...)`` or
  ``nn.DataParallel(...)`` in the file -> ``model``: the conversion of DDP is the model itself (made data-parallel),
  and of DataParallel the model itself (the device rule: one device per process), which has no ``.module``
  (``model.module.state_dict()`` raised AttributeError).
"""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule

_LAUNCHER_VARIABLES = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"}
_DDP = {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}
_ENVIRON = "mindport.runtime.distributed.environ"


def _wrapper_name(node: cst.BaseExpression) -> str | None:
    """``model`` or ``self.model``: where a wrapped model is held (None for anything else)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def _variable(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString) and node.evaluated_value in _LAUNCHER_VARIABLES:
        return node.evaluated_value
    return None


class DistributedTransform(Rule):
    """torchrun's environment reads and DDP's ``.module`` (see the module docstring)."""

    EXAMPLES = (
        Example(
            before="""
                import os

                import torch.distributed as dist

                local_rank = int(os.environ["LOCAL_RANK"])
                world = int(os.environ.get("WORLD_SIZE", "1"))
                rank = int(os.getenv("RANK", "0"))
                dist.init_process_group(backend="gloo")
            """,
            after="""
                import os

                from mindport.runtime import distributed as mp_distributed

                local_rank = int(mp_distributed.environ("LOCAL_RANK"))
                world = int(mp_distributed.environ("WORLD_SIZE", "1"))
                rank = int(mp_distributed.environ("RANK", "0"))
                mp_distributed.init_process_group(backend="gloo")
            """,
            note="msrun sets RANK_ID/RANK_SIZE, not torchrun's variables: the launcher's values come from "
                 "mindspore.communication.",
        ),
        Example(
            before="""
                import torch
                from torch.nn.parallel import DistributedDataParallel as DDP


                def wrap(net):
                    model = DDP(net)
                    torch.save(model.module.state_dict(), "net.pt")
                    return model
            """,
            after="""
                from mindport.runtime import distributed as mp_distributed
                from mindport.runtime import checkpoint as mp_checkpoint


                def wrap(net):
                    model = mp_distributed.DistributedDataParallel(module=net)
                    mp_checkpoint.save(model.state_dict(), "net.pt")
                    return model
            """,
            note="DDP becomes the model itself (rank 0's weights broadcast, gradients averaged): .module is the "
                 "model.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Trainer:
                    def __init__(self, net):
                        self.model = nn.DataParallel(net)
                        self.act = nn.ReLU()

                    def weights(self):
                        return self.model.module.state_dict()
            """,
            after="""
                from mindspore import nn


                class Trainer:
                    def __init__(self, net):
                        self.model = net
                        self.act = nn.ReLU()

                    def weights(self):
                        return self.model.state_dict()
            """,
            note="DataParallel is the model itself (one device per process): .module is the model (also on a self "
                 "attribute).",
        ),
        Example(before="""
            import os

            home = os.environ["HOME"]
            os.environ["LOCAL_RANK"] = str(0)
            del os.environ["RANK"]
        """, note="Other variables, and torchrun's variables being set or deleted, are left alone."),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._ddp_names: set[str] = set()
        self._stores: set[int] = set()  # os.environ[...] written or deleted: the variable is set, not read

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stores.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stores.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        self._stores.update(id(t) for t in targets)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._stores.update(id(t.target) for t in node.targets)
        if isinstance(node.value, cst.Call) and self.scope.resolve_torch(node.value.func) in _DDP:
            self._ddp_names.update(_wrapper_name(t.target) for t in node.targets if _wrapper_name(t.target))

    def leave_Attribute(self, original_node, updated_node):
        if original_node.attr.value == "module" and _wrapper_name(original_node.value) in self._ddp_names:
            self.ctx.converted_sites += 1
            return updated_node.value
        return updated_node

    def leave_Subscript(self, original_node, updated_node):
        if id(original_node) not in self._stores and self.scope.resolve(original_node.value) == "os.environ" \
                and len(original_node.slice) == 1 \
                and isinstance(original_node.slice[0].slice, cst.Index):
            name = _variable(original_node.slice[0].slice.value)
            if name is not None:
                self.ctx.converted_sites += 1
                return cst.Call(func=self.ctx.target_expr(_ENVIRON), args=[cst.Arg(original_node.slice[0].slice.value)])
        return updated_node

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve(original_node.func)
        if qual not in ("os.environ.get", "os.getenv") or not updated_node.args \
                or _variable(updated_node.args[0].value) is None \
                or any(a.keyword is not None or a.star for a in updated_node.args) or len(updated_node.args) > 2:
            return updated_node
        args = list(updated_node.args)
        if len(args) == 1:  # .get without a default answers None, never KeyError
            args = [args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(cst.Name("None"))]
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=self.ctx.target_expr(_ENVIRON), args=args)
