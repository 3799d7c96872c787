"""The order of the rewrite, written in one place. Each step is a small transform over the same typed tree."""
from __future__ import annotations

import libcst as cst

from mindport.mappings import Registry
from mindport.migrator.base import LazyPositions, RuleRunner
from mindport.migrator.calls import TableCallTransform
from mindport.migrator.context import FileContext, Options
from mindport.migrator.idioms import (
    AutogradFunctionTransform,
    BufferTransform,
    ContainerTransform,
    InitTransform,
    ModuleStatementTransform,
    LayerParameterNameTransform,
    ReferenceTransform,
    finalize_runtime,
    DeviceTransform,
    ModuleClassTransform,
    ModuleMethodTransform,
    TensorIdiomTransform,
    class_summary,
    module_classes,
)
from mindport.migrator.imports import choose_aliases, drop_unused_imports, finalize_imports
from mindport.migrator.names import build_scopes
from mindport.migrator.training import CustomOptimizerTransform, DataPipelineTransform, TrainingLoopRule
from mindport.migrator.walk import transform


def run_pipeline(module: cst.Module, filename: str, registry: Registry, options: Options) -> tuple[str, FileContext]:
    """Every rule over the parsed file, in order; returns the converted source text and the file's context."""
    scopes = build_scopes(module)
    positions = LazyPositions(module)  # resolved on the first diagnostic only
    aliases, present = choose_aliases(scopes.module_scope)
    ctx = FileContext(filename=filename, registry=registry, options=options, scopes=scopes.scopes,
                      module_scope=scopes.module_scope, positions=positions, aliases=aliases)
    ctx.class_summary = class_summary(module, scopes.module_scope)
    classes = module_classes(ctx.class_summary, options.module_classes)
    rules = make_rules(ctx, classes)
    module = transform(module, RuleRunner(ctx, rules))
    module, added = finalize_imports(module, ctx.imports_needed, aliases, present, ctx.torch_names_kept)
    module = finalize_runtime(module, rules)  # mindport.runtime imports (einops backend, parameter containers)
    return drop_unused_imports(module.code, added), ctx


def make_rules(ctx: FileContext, classes: set[str]) -> list:
    """The rules, in the order they run (the first rule that changes a node wins)."""
    return [
        ModuleClassTransform(ctx, classes),  # nn.Module -> nn.Cell, forward -> construct
        CustomOptimizerTransform(ctx),       # Optimizer subclasses: step(self) reading p.grad -> construct(self, grads)
        AutogradFunctionTransform(ctx),      # autograd.Function -> Cell with construct/bprop; F.apply -> F()
        LayerParameterNameTransform(ctx),    # self.emb.weight -> self.emb.embedding_table (tied weights)
        ReferenceTransform(ctx),             # isinstance(m, nn.Conv2d), act = F.relu: class/function names only
        InitTransform(ctx),                  # nn.init.*_(t, ...) -> t.set_data(initializer(...))
        ContainerTransform(ctx),             # ParameterList/ParameterDict -> mindport.runtime.containers
        ModuleStatementTransform(ctx),       # model.requires_grad_(False), zero_grad() statements
        BufferTransform(ctx),                # register_buffer -> non-trainable Parameter
        TensorIdiomTransform(ctx),           # .numpy(), .size(), no_grad blocks (before device moves vanish)
        DeviceTransform(ctx),                # .to(device), .cuda(), torch.device, DataParallel
        ModuleMethodTransform(ctx),          # eval()/train(), parameters(), state_dict() ...
        DataPipelineTransform(ctx),          # TensorDataset/DataLoader/Dataset bases -> GeneratorDataset + batch
        TrainingLoopRule(ctx),               # zero_grad/backward/step loops -> forward_fn + value_and_grad + opt(grads)
        TableCallTransform(ctx),             # every other torch API through the mapping tables; flags the rest
    ]
