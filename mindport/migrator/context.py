"""What every transform of one file shares: options, scopes, positions, diagnostics, imports to add."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import libcst as cst

from mindport.errors import Diagnostic
from mindport.mappings import Registry
from mindport.migrator.walk import parse_expression
from mindport.names import Scope

# How each MindSpore module is imported and named in converted code (one place, so every file is consistent).
IMPORT_STYLE = {
    "mindspore": ("import mindspore as ms", "ms"),
    "mindspore.nn": ("from mindspore import nn", "nn"),
    "mindspore.ops": ("from mindspore import ops", "ops"),
    "mindspore.mint": ("from mindspore import mint", "mint"),
    "mindspore.dataset": ("import mindspore.dataset as ds", "ds"),
    "mindspore.experimental.optim": ("from mindspore.experimental import optim as ms_optim", "ms_optim"),
    # mindport's runtime layer, for what MindSpore lacks (see mindport/runtime/)
    "mindport.runtime.losses": ("from mindport.runtime import losses as mp_losses", "mp_losses"),
    "mindport.runtime.optim": ("from mindport.runtime import optim as mp_optim", "mp_optim"),
    "mindport.runtime.inplace": ("from mindport.runtime import inplace as mp_inplace", "mp_inplace"),
    "mindport.runtime.init": ("from mindport.runtime import init as mp_init", "mp_init"),
    "mindport.runtime.layers": ("from mindport.runtime import layers as mp_nn", "mp_nn"),
    "mindport.runtime.nn_functional": ("from mindport.runtime import nn_functional as mp_F", "mp_F"),
    "mindport.runtime.unbatched": ("from mindport.runtime import unbatched as mp_unbatched", "mp_unbatched"),
    "mindport.runtime.special": ("from mindport.runtime import special as mp_special", "mp_special"),
    "mindport.runtime.tensor": ("from mindport.runtime import tensor as mp_tensor", "mp_tensor"),
    "mindport.runtime.math": ("from mindport.runtime import math as mp_math", "mp_math"),
    "mindport.runtime.linalg": ("from mindport.runtime import linalg as mp_linalg", "mp_linalg"),
    "mindport.runtime.distributions": ("from mindport.runtime import distributions as mp_dist", "mp_dist"),
    "mindport.runtime.adapt": ("from mindport.runtime import adapt as mp_adapt", "mp_adapt"),
    "mindport.runtime.framework": ("from mindport.runtime import framework as mp_framework", "mp_framework"),
    "mindport.runtime.ecosystem": ("from mindport.runtime import ecosystem as mp_ecosystem", "mp_ecosystem"),
    "mindport.runtime.foreach": ("from mindport.runtime import foreach as mp_foreach", "mp_foreach"),
    "mindport.runtime.distributed": ("from mindport.runtime import distributed as mp_distributed", "mp_distributed"),
    "mindport.runtime.containers": ("from mindport.runtime import containers as mp_containers", "mp_containers"),
    "mindport.runtime.rnn": ("from mindport.runtime import rnn as mp_rnn", "mp_rnn"),
    "mindport.runtime.data": ("from mindport.runtime import data as mp_data", "mp_data"),
    "mindport.runtime.signal": ("from mindport.runtime import signal as mp_signal", "mp_signal"),
    "mindport.runtime.training": ("from mindport.runtime import training as mp_train", "mp_train"),
    "mindport.runtime.seed": ("from mindport.runtime import seed as mp_seed", "mp_seed"),
    "mindport.runtime.checkpoint": ("from mindport.runtime import checkpoint as mp_checkpoint", "mp_checkpoint"),
    "mindport.runtime.einops_backend": ("from mindport.runtime import einops_backend as mp_einops", "mp_einops"),
    "mindport.runtime.swa": ("from mindport.runtime import swa as mp_swa", "mp_swa"),
    "mindport.runtime.lightning": ("from mindport.runtime import lightning as mp_lightning", "mp_lightning"),
}


@functools.lru_cache(maxsize=None)
def _split_target(target: str) -> tuple[str, str]:
    """``mindspore.nn.Conv2d`` -> (``mindspore.nn``, ``.Conv2d``): the longest module with an import style."""
    for module in sorted(IMPORT_STYLE, key=len, reverse=True):
        if target == module or target.startswith(module + "."):
            return module, target[len(module):]
    raise ValueError(f"no import style for {target}")


@dataclass(frozen=True)
class Options:
    target: str = "nn"  # mapping profile: "nn" (CPU/GPU/Ascend) or "mint" (torch-aligned, Ascend)
    # the device the port is for: "any" or "cpu" keep the guards against MindSpore's CPU kernel defects (tanh's
    # precision, softmax on rows of all -inf); "gpu"/"ascend" write MindSpore's own op there (CPU_GUARDED)
    device: str = "any"
    ms_version: tuple[int, int] = (2, 10)
    module_classes: frozenset[str] = frozenset()  # project-local nn.Module subclasses (across files)
    local_packages: frozenset[str] = frozenset()  # the project's top-level packages and modules (convert_path)
    object_classes: frozenset[str] = frozenset()  # the project's classes that are not nn.Module subclasses (across
    # files: convert_path): ``trainer = Trainer(model)`` of an imported one keeps the Trainer's own methods
    function_classes: frozenset[str] = frozenset()  # the project's autograd Functions (across files: convert_path):
    # ``invmat.InvMatrix.apply`` of an imported one is a call of the Cell it becomes
    star_bindings: tuple = ()  # ((name, torch name), ...) brought by `from <project module> import *` (convert_path)
    list_names: frozenset[str] = frozenset()  # names the project binds to a list in any file (project.list_names)
    # observed facts (mindport.observed, ``convert --facts``): this file's call sites whose every input in the recorded
    # torch run was floating point, as ((line, col, end_line, end_col, api name), ...)
    float_sites: frozenset = frozenset()
    # this file's joins (torch.cat, stack, ...) whose tensors had one dtype in every call of the recorded run, as
    # ((line, col, end_line, end_col), ...): MindSpore's own join there (TableCallTransform._promoted_join)
    uniform_sites: frozenset = frozenset()
    # this file's sites whose every call in the recorded run made one run-time decision the same way, as ((line, col,
    # end_line, end_col, fact), ...) (mindport.observed.Facts.decided_sites): "nonempty:mean" (ops.mean there),
    # "unmasked:softmax" (ops.softmax), "built:Conv2d:batched"/"built:Conv2d:open" (a layer build and whether every
    # call of it had a batch: native_facts.unbatched_handling)
    decided_sites: frozenset = frozenset()
    # ((name, parameters, backpropagated parameters), ...): the project's functions that call .backward() on a
    # parameter (project.backward_params): a caller records the loss it hands them
    backward_params: tuple = ()
    # ((class, ((field, default source or None), ...)), ...): the project's dataclass records a model builds in its
    # forward, written as dicts (project.record_classes; RecordDictTransform)
    record_classes: tuple = ()
    # ((class, parent class, attribute), ...): a sub-Cell one parent calls more than once in its forward (project.
    # held_cells; SelfCacheTransform passes its state along)
    held_cells: tuple = ()
    return_kinds: tuple = ()  # ((name, kind), ...): what the project's functions return (project.return_kinds)
    imported_names: frozenset[str] = frozenset()  # names imported from the project's modules (project.py)
    # ((name, params, written params), ...): the project's module functions that write into an argument, which their
    # callers in other files bind again (project.argument_writers; ArgumentWriteTransform)
    argument_writers: tuple = ()
    # no float64 tensor can come to be in the project (project.float64_free): an optimizer's parameters are float32
    # or float16, so torch.optim.SGD is MindSpore's own (mindport.runtime.optim.SGD exists for a float64 one)
    float64_free: bool = False
    # no code of the project touches a layer's kernel_size/stride/dilation/padding (project.conv1d_settings_unread): a
    # Conv1d is MindSpore's own (mindport.runtime.layers.Conv1d only reads them back as torch's 1-tuples)
    conv1d_settings_unread: bool = False
    # ((module as imported, name, function source, ((bound name, (kind, target)), ...)), ...): helpers of several lines
    # holding torch.autograd.grad in the project's other modules (grad_helpers.module_grad_helpers), written out
    # where this file calls them
    grad_helpers: tuple = ()
    # names of the project's functions whose results some file reads a DataLoader-only field of (``.dataset`` ...:
    # project.loader_field_reads): a DataLoader such a function returns is mindport.runtime.data's
    loader_reads: frozenset[str] = frozenset()
    # ((name, params, read params), ...): the project's functions/methods/classes that read a DataLoader-only field of
    # what a parameter holds (project.loader_param_reads): a DataLoader handed to one is mindport.runtime.data's
    loader_params: tuple = ()


LOCAL_BODY = "file-local:"  # a target naming a definition the converter writes into the file (FileContext.local_bodies)
CPU_GUARDED = ("any", "cpu")  # Options.device values whose ports keep the CPU kernel guards
DEVICES = ("any", "cpu", "gpu", "ascend")


@dataclass
class FileContext:
    filename: str
    registry: Registry
    options: Options
    scopes: dict[int, Scope]
    module_scope: Scope
    positions: dict = field(default_factory=dict)  # original node -> CodeRange
    diagnostics: list[Diagnostic] = field(default_factory=list)
    imports_needed: set[str] = field(default_factory=set)  # keys of IMPORT_STYLE
    converted_sites: int = 0
    torch_names_kept: set[str] = field(default_factory=set)  # local names of torch imports still referenced
    torch_roots_kept: set[str] = field(default_factory=set)  # packages flagged statements name in full (torch ...)
    handled: set[int] = field(default_factory=set)  # ids of original nodes an idiom rule has claimed
    value_classes: set[str] = field(default_factory=set)  # names of the file's value classes (factories.py)
    aliases: dict[str, str] = field(default_factory=dict)  # MindSpore module -> local name (imports.choose_aliases)
    class_summary: tuple = ()  # idioms.class_summary: which classes are nn.Module subclasses, and through what
    tree_changed: bool = True  # did any rule change the tree (run_pipeline sets it)
    fixed_aliases: frozenset = frozenset()  # ScopeBuilder.fixed_aliases: torch aliases bound once, only called
    import_roots: frozenset = frozenset()  # ScopeBuilder.import_roots: packages the file imports, at any depth
    seen_names: frozenset = frozenset()  # ScopeBuilder.seen: names the file reads (imports.reexport_candidates)
    # re-exported torch names (``from torch.optim import AdamW`` in a package's __init__) the file now defines
    # itself (TableCallTransform.leave_Module): no assignment is written for them (imports.find_reexports)
    reexport_definitions: set[str] = field(default_factory=set)
    # runtime target -> the name of its file-local native body the file's sites call (mindport.mappings.local_bodies;
    # TableCallTransform._local_body_target chooses it, migrator.local_bodies writes the definitions)
    local_bodies: dict[str, str] = field(default_factory=dict)

    def alias_for(self, module: str) -> str:
        """The local name converted code uses for a MindSpore module, and remember to import it."""
        self.imports_needed.add(module)
        return self.aliases.get(module, IMPORT_STYLE[module][1])

    def imports(self, package: str) -> bool:
        """Does the file import ``package`` (``numpy``, ``mindspore``) at module level, under any name?"""
        return any((qual or "").split(".", 1)[0] == package for qual in self.module_scope.names.values())

    def ops_name(self) -> str:
        """The name ``alias_for("mindspore.ops")`` would give, without scheduling the import."""
        return self.aliases.get("mindspore.ops", IMPORT_STYLE["mindspore.ops"][1])

    def target_expr(self, target: str) -> cst.BaseExpression:
        """``mindspore.nn.Conv2d`` -> the expression ``nn.Conv2d`` (and schedule ``from mindspore import nn``)."""
        return parse_expression(self.target_text(target))

    def target_text(self, target: str) -> str:
        """``target_expr`` as source text (a file-local body's target, ``LOCAL_BODY`` + name: the name)."""
        if target.startswith(LOCAL_BODY):
            return target[len(LOCAL_BODY):]
        module, rest = _split_target(target)
        return self.alias_for(module) + rest

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        rng = self.positions.get(node)
        if rng is None:
            return 0, 0
        return rng.start.line, rng.start.column + 1

    def diagnose(self, node: cst.CSTNode, code: str, message: str, suggestion: str = "", api: str = "",
                 severity: str = "error") -> Diagnostic:
        line, col = self.position(node)
        diag = Diagnostic(code=code, message=message, file=self.filename, line=line, column=col,
                          suggestion=suggestion, api=api, severity=severity)
        self.diagnostics.append(diag)
        return diag
