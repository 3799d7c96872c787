"""The converter rule ContainerTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/parameter_containers.md shows both."""
from __future__ import annotations

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression

RUNTIME_CONTAINERS = "mindport.runtime.containers"
_CONTAINERS = {"torch.nn.ParameterList": "ParameterList", "torch.nn.ParameterDict": "ParameterDict",
               "torch.nn.modules.container.ParameterList": "ParameterList",
               "torch.nn.modules.container.ParameterDict": "ParameterDict"}


class ContainerTransform(Rule):
    """``nn.ParameterList``/``nn.ParameterDict`` -> ``mindport.runtime.containers.ParameterList``/``ParameterDict``.

    ``mindspore.ParameterTuple`` (the documented counterpart) registers its members under their own names
    (``Parameter$1``), so torch's ``scales.0`` would have nothing to land on; the runtime Cells keep the index/key.
    (``ModuleList``/``ModuleDict``/``Sequential`` are table entries: CellList,
    ``mindport.runtime.containers.ModuleDict``, SequentialCell.)
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Mixture(nn.Module):
                    def __init__(self, n):
                        super().__init__()
                        self.scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(n)])
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import containers as mp_containers


                class Mixture(nn.Cell):
                    def __init__(self, n):
                        super().__init__()
                        self.scales = mp_containers.ParameterList([ms.Parameter(ops.ones(1)) for _ in range(n)])
            """,
            note="The runtime ParameterList keeps torch's parameter names (scales.0, scales.1 ...).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve_torch(original_node.func)
        if qual not in _CONTAINERS:
            return updated_node
        self.ctx.converted_sites += 1
        self.ctx.handled.add(id(original_node))
        self.runtime_modules.add(RUNTIME_CONTAINERS)
        alias = runtime_alias(RUNTIME_CONTAINERS)
        return updated_node.with_changes(func=parse_expression(f"{alias}.{_CONTAINERS[qual]}"))
