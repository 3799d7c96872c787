"""Which names are torch's: how imports bind names and how a dotted name resolves through them.

Shared by the converter (``migrator/scopes.py`` walks LibCST trees scope by scope) and lint
(``validators/lint/context.py`` walks ``ast`` trees); both call the binding functions here, so an import means the same
to both. Stdlib only: the lint path imports it.

``import torch.nn as nn`` binds ``nn`` to ``torch.nn``; ``import torch.nn`` binds ``torch``; ``from torch.nn import
functional as F`` binds ``F`` to ``torch.nn.functional``; a relative import (``from .layers import Conv``) binds a
project-local name, never torch's.
"""
from __future__ import annotations

import re

TORCH_ROOTS = ("torch", "torchvision", "torchaudio")
# Third-party packages built on torch (or, PACKAGE_NATURE, with no MindSpore backend): their objects take and return
# torch tensors and modules, so converted code cannot use them as they are. The converter maps the symbols that have
# entries (timm's DropPath, trunc_normal_ ...) and flags the others (MP106), naming the package.
TORCH_PACKAGES = ("timm", "einx", "transformers", "diffusers", "accelerate", "peft", "torchmetrics", "torchtext",
                  "lightning", "pytorch_lightning", "open_clip", "xformers", "flash_attn", "kornia", "fairscale",
                  "deepspeed", "apex", "segmentation_models_pytorch", "torch_geometric", "mmcv", "detectron2",
                  "sentence_transformers", "ultralytics")


# The packages of TORCH_PACKAGES that are not built on torch, and what they are instead: their objects work on the
# tensors of the backends they support, and MindSpore is not one of them.
PACKAGE_NATURE = {"einx": "backend-agnostic (numpy, torch, jax ...) but has no MindSpore backend"}


def package_nature(package: str) -> str:
    """What a package of TORCH_PACKAGES is, for messages: "torch-based", or what PACKAGE_NATURE says."""
    return PACKAGE_NATURE.get(package, "torch-based")


def is_torch(qualname: str | None) -> bool:
    return bool(qualname) and qualname.split(".", 1)[0] in TORCH_ROOTS


# Names of those packages that hold no tensors and need no framework: transformers' tokenizers and configurations
# (``nn.Embedding(len(BertTokenizer.from_pretrained("bert-base-uncased")), d)`` in saurabhaloneai/image-cap). The
# converted code uses them as they are, as any other library's: they are not flagged, and the line is converted.
FRAMEWORK_NEUTRAL = {"transformers": re.compile(r"\w*Tokenizer(Fast|Base)?|\w*Config|BatchEncoding")}


def torch_package(qualname: str | None) -> str | None:
    """The torch-based third-party package a qualified name belongs to (``timm.layers.Mlp`` -> ``timm``), or None
    (also for a framework-neutral name of one: FRAMEWORK_NEUTRAL)."""
    root = qualname.split(".", 1)[0] if qualname else ""
    if root not in TORCH_PACKAGES:
        return None
    neutral = FRAMEWORK_NEUTRAL.get(root)
    parts = qualname.split(".")
    if neutral is not None and any(neutral.fullmatch(part) for part in parts[1:]):
        return None
    return root


# Public names of mindspore.nn.Cell that torch.nn.Module lacks (MindSpore 2.10; tests/converter/test_cell_names.py
# compares with the installed versions). A torch module attribute of one of these names (`self.cells =
# nn.ModuleList(...)`) collides with Cell's own: MindSpore refuses the assignment or the attribute hides a method it
# calls. The converter and the weight mapping both rename it with a trailing underscore (`cells_`).
CELL_NAMES = frozenset({
    "IGNORE_LIST", "add_flags", "add_flags_recursive", "bprop_debug", "cast_inputs", "cell_init_args", "cells",
    "cells_and_names", "check_names", "check_names_and_refresh_name", "cls_name", "compile_and_run", "compile_cache",
    "compile_phase", "compiled", "construct", "create_time", "enable_backward_hook", "exist_names", "exist_objs",
    "extend_repr", "generate_scope", "get_flags", "get_func_graph_proto", "get_inputs", "get_mixed_precision_type",
    "get_parameters", "get_scope", "get_sub_cell", "global_cells", "init_parameters_data", "insert_child_to_cell",
    "insert_param_to_cell", "jit_config_dict", "name_cells", "offload", "parallel_parameter_merge_net_dict",
    "parallel_parameter_name_list", "param_prefix", "parameter_layout_dict", "parameters_and_names",
    "parameters_broadcast_dict", "parameters_dict", "phase", "phase_cache", "pipeline_segment", "pipeline_stage",
    "recompute", "register_backward_pre_hook", "register_parameter_forward_hook", "register_saved_tensors_hooks",
    "remove_redundant_parameters", "run_construct", "set_boost", "set_broadcast_flag", "set_comm_fusion",
    "set_data_parallel", "set_grad", "set_inputs", "set_jit_config", "set_mixed_precision_type", "set_train", "shard",
    "to_float", "total_instance_count", "trainable_params", "untrainable_params", "update_cell_prefix",
    "update_cell_type", "update_parameters_name",
})


# Private names mindspore.nn.Cell sets on each instance or defines, torch.nn.Module has not (MindSpore 2.10, torch 2.13;
# the same test compares them). torch code owns every underscored name but torch's own, so a module's
# ``self._params = nn.ParameterList([...])`` (wararaki718's cross net) is fine in torch and overwrote the Cell's own
# dict of Parameters: ``'ParameterList' object has no attribute 'items'`` as the model was built. Renamed like
# CELL_NAMES (``_params_``), in the converter and the weight mapping alike.
CELL_PRIVATE_NAMES = frozenset({
    "_add_attr", "_add_init_args", "_add_mixed_precision_flag", "_amp_level", "_auto_prefix", "_backward_hook",
    "_backward_pre_hook", "_bprop_debug", "_call_custom_bprop", "_call_post_process", "_call_pre_process",
    "_cell_backward_hook", "_cell_backward_pre_hook", "_cell_tag", "_cells", "_check_construct_args",
    "_check_parameter_consistency", "_children_scope_recursive", "_compile_cache", "_compile_phase", "_compiled",
    "_complex_call", "_construct_sig", "_create_time", "_del_attr", "_dynamic_shape_inputs", "_exist_names",
    "_exist_objs", "_forward_hook", "_forward_hook_always_called", "_forward_hook_with_kwargs", "_forward_pre_hook",
    "_forward_pre_hook_with_kwargs", "_get_attr_from_cell", "_get_cell_parallel_mode", "_get_compile_args",
    "_get_prims_recursively", "_has_config_recompute", "_has_mutable_args_list", "_id", "_in_strategy",
    "_init_check", "_init_flag", "_is_check_and_refresh", "_is_recursion_hook", "_jit_backward_hook",
    "_jit_backward_pre_hook", "_jit_config_dict", "_jit_forward_hook", "_jit_forward_pre_hook", "_jit_graph_name",
    "_lazy_backward_hook", "_lazy_backward_pre_hook", "_lazy_construct_sig", "_lazy_forward_hook",
    "_lazy_forward_hook_always_called", "_lazy_forward_hook_with_kwargs", "_lazy_forward_pre_hook",
    "_lazy_forward_pre_hook_with_kwargs", "_lazy_load_state_dict_post_hooks", "_lazy_load_state_dict_pre_hooks",
    "_lazy_non_persistent_buffers_set", "_lazy_state_dict_hooks", "_lazy_state_dict_pre_hooks",
    "_lazy_user_parameters", "_mp_comm_recompute", "_no_auto_lazy_inline", "_out_strategy",
    "_parallel_optimizer_comm_recompute", "_parallel_parameter_merge_net_dict", "_parallel_parameter_name_list",
    "_param_prefix", "_parameter_layout_dict", "_params", "_params_list", "_phase", "_phase_cache", "_predict",
    "_primitives", "_recompute", "_recompute_cell", "_recompute_slice_activation", "_run_construct",
    "_run_forward_hook", "_run_forward_pre_hook", "_run_grad_construct", "_saved_tensors_pack_hook",
    "_saved_tensors_unpack_hook", "_scope", "_self_check", "_set_attr_for_cell", "_set_attr_for_object",
    "_set_attr_for_param_or_param_tuple", "_set_attr_for_parameter_in_list_or_tuple", "_set_attr_for_params",
    "_set_jit_graph_name", "_set_recompute_scope", "_set_scope", "_shard_fn", "_update_local_parameters_name",
    "_user_parameters",
})


def cell_attribute_name(name: str) -> str:
    """The name a torch module attribute takes on a MindSpore Cell (``cells`` -> ``cells_``, ``_params`` ->
    ``_params_``: see CELL_NAMES and CELL_PRIVATE_NAMES)."""
    return f"{name}_" if name in CELL_NAMES or name in CELL_PRIVATE_NAMES else name


class Scope:
    """Name -> qualified name (``None`` = bound to something that is not an import we track)."""

    __slots__ = ("names", "aliases", "kinds", "parent", "is_class")

    def __init__(self, parent: "Scope | None" = None) -> None:
        self.names: dict[str, str | None] = {}
        self.aliases: set[str] = set()  # names bound by `act = F.relu`, not by an import
        self.kinds: dict[str, str] = {}  # what a local name holds, when visible: see ValueKind
        self.parent = parent
        self.is_class = False  # a class body: its names are not visible in the functions nested in it

    def _visible(self):
        """This scope, then the enclosing ones whose names it sees (Python skips class bodies: a method's
        ``remove_weight_norm(m)`` is the module's import even when the class defines a method of that name)."""
        scope: Scope | None = self
        while scope is not None:
            if scope is self or not scope.is_class:
                yield scope
            scope = scope.parent

    def kind_of(self, name: str) -> str:
        for scope in self._visible():
            if name in scope.names:
                return scope.kinds.get(name, "other")
        return "unbound"

    def lookup(self, name: str) -> tuple[bool, str | None]:
        for scope in self._visible():
            if name in scope.names:
                return True, scope.names[name]
        return False, None

    def resolve_dotted(self, dotted: str) -> str | None:
        """The qualified name of a dotted name given as text (``"nn.Conv2d"`` -> ``"torch.nn.Conv2d"``) when its head
        is bound by an import (torch's or not); None otherwise."""
        head, _, rest = dotted.partition(".")
        found, qual = self.lookup(head)
        if not found or qual is None:
            return None
        return f"{qual}.{rest}" if rest else qual

    def is_alias_name(self, name: str) -> bool:
        for scope in self._visible():
            if name in scope.names:
                return name in scope.aliases
        return False


def bind_module(scope: Scope, module: str, asname: str | None) -> None:
    """``import a.b as c`` binds ``c`` to ``a.b``; ``import a.b`` binds ``a``."""
    if asname is not None:
        scope.names[asname] = module
    else:
        head = module.split(".", 1)[0]
        scope.names[head] = head


def bind_from(scope: Scope, module: str | None, name: str, asname: str | None) -> None:
    """``from m import n as a`` binds ``a`` (or ``n``) to ``m.n``; ``module=None`` (a relative import) binds a
    project-local name, resolved to nothing."""
    scope.names[asname or name] = f"{module}.{name}" if module else None


# Python's types where torch takes a dtype (``x.to(bool)``, ``torch.ones(n, dtype=bool)``), as torch reads them: the
# MindSpore dtype of each. The converter writes it for a ``dtype=`` argument (TableCallTransform._python_type_dtypes),
# the runtime decides on the value (mindport.runtime.tensor._python_dtype).
PYTHON_TYPE_DTYPES = {"bool": "mindspore.bool_", "float": "mindspore.float64", "int": "mindspore.int64",
                      "complex": "mindspore.complex128"}


def bind_star(scope: Scope, module: str | None) -> None:
    """``from <torch module> import *`` binds the module's public names (``from torch.nn.init import *`` then
    ``xavier_uniform_(w)`` is torch's, and is converted like ``init.xavier_uniform_(w)``), as far as the mapping
    tables know them (:func:`mindport.mappings.star_names`). A relative or non-torch star binds nothing here (the
    project's own modules: ``migrator.project.star_bindings``)."""
    if not module or not is_torch(module):
        return
    from mindport.mappings import star_names  # stdlib only too; imported here, it imports this module
    for name in star_names(module):
        scope.names[name] = f"{module}.{name}"


_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module", "torch.jit.ScriptModule"}  # a ScriptModule
# subclass is an nn.Module whose methods TorchScript compiles (``@torch.jit.script_method``): a Cell like any other
_NOT_MODULES = {"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"}
# torch's private layer bases, nn.Module subclasses all (enumerated from torch 2.13's torch.nn.modules: every class
# named _Capitalised there that derives from nn.Module): `class DiceLoss(_Loss)`, `class ContBatchNorm3d(_BatchNorm)`
# with its own forward are module classes as much as `class Net(nn.Module)`
_PRIVATE_MODULE_BASES = {
    "_NormBase", "_BatchNorm", "_LazyNormBase", "_ConvNd", "_ConvTransposeNd", "_ConvTransposeMixin", "_DropoutNd",
    "_InstanceNorm", "_Loss", "_WeightedLoss", "_CircularPadNd", "_ConstantPadNd", "_ReflectionPadNd",
    "_ReplicationPadNd", "_MaxPoolNd", "_MaxUnpoolNd", "_AvgPoolNd", "_LPPoolNd", "_AdaptiveMaxPoolNd",
    "_AdaptiveAvgPoolNd"}


# PyTorch Lightning's LightningModule under every import spelling (pytorch_lightning 1.x/2.x, the unified ``lightning``
# package, ``lightning.pytorch``): an nn.Module subclass, so ``class Net(pl.LightningModule)`` is a module class (its
# forward is construct, discovery proves it); the mapping entry ``pytorch_lightning.LightningModule`` (packages.toml)
# lists the same names as its torch name and aliases (tests/converter/test_lightning.py checks both agree)
LIGHTNING_MODULE_BASES = frozenset({
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule", "pytorch_lightning.core.lightning.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule"})


def is_module_base(qual: str | None) -> bool:
    """torch.nn.Module, or one of torch's layers (``class Conv2dSame(nn.Conv2d)`` is a module class too), public or
    private (``class ContBatchNorm3d(nn.modules.batchnorm._BatchNorm)``), or Lightning's LightningModule."""
    if qual in _MODULE_BASES or qual in LIGHTNING_MODULE_BASES:
        return True
    if not qual or not (qual.startswith("torch.nn.") and (qual.count(".") == 2 or qual.startswith("torch.nn.modules."))):
        return False
    name = qual.rsplit(".", 1)[1]
    return (name[:1].isupper() and name not in _NOT_MODULES) or name in _PRIVATE_MODULE_BASES
