"""The converter rule TableCallTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/table_calls.md shows both."""
from __future__ import annotations

import ast
import functools
import itertools
import re
from pathlib import Path
from typing import Callable

import libcst as cst

from mindport.mappings import OVERLAY_HINT
from mindport.mappings.arguments import KEYWORD_VARARGS, NUMPY_NAMES, sized_parameters
from mindport.mappings.transforms import Arg, Unsupported
from mindport.mappings.settings_layers import SETTINGS_LAYERS
from mindport.mappings.transforms.layers import IMPLICIT_VALUES, SEVERAL_ITEMS
from mindport.migrator.einsum_native import native_einsum
from mindport.migrator.native_facts import (
    MUTABLE_DISPLAYS,
    block_binding,
    block_rebinding_values,
    RealFacts,
    dtype_name,
    dtype_property,
    ClassFacts,
    FileFacts,
    FloatFacts,
    FlowFloats,
    IntFacts,
    NonNegativeFacts,
    OwnOutputs,
    UnmaskedFacts,
    own_methods,
    partial_applied,
    ValueFlow,
    absorbed_reduction,
    nonempty_last_extent,
    unaliased_local_update,
    owned_parameters,
    loop_index,
    new_result_call,
    function_parents,
    layer_gives_new,
    list_members_give_new,
    caller_floats_of,
    module_functions,
    real_file,
    sequence_attributes,
    sequence_locals,
    values_only,
    indices_read,
    ViewChain,
    all_nodes,
    cell_functions,
    cells_display,
    member_list,
    empty_attributes,
    empty_cat_members,
    empty_locals,
    hoist_list,
    inplace_switch,
    list_arguments,
    list_locals,
    non_bool_arguments,
    numpy_arguments,
    numpy_locals,
    numpy_valued,
    own_nodes,
    view_chain,
)
from mindport.migrator.context import CPU_GUARDED, LOCAL_BODY
from mindport.mappings.local_bodies import local_bodies
from mindport.migrator.factories import (
    base_init,
    class_init,
    factory_def,
    factory_name,
    factory_parameters,
    torch_default,
    fresh_name,
    insert_definitions,
    sizes_statement,
    value_class_def,
    value_metaclass_def,
    value_class_name,
    with_init,
)
from mindport.mappings.surface import load_surface
from mindport.migrator.imports import runtime_alias
from mindport.migrator.named_results import result_fields, torch_result_fields
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import MODULE_AND_TENSOR_METHODS, NOT_TENSOR_KINDS, operand_kind, self_attribute_kind, \
    receiver_kind
from mindport.migrator.syntax import NO_SPACE_EQUAL, code_of, head_name, int_literal, target_names
from mindport.migrator.imports import reexport_candidates
from mindport.migrator.table import (
    ADAPT_MODULE,
    ANY_KEYWORD_METHOD_NAMES,
    ARRAY_METHOD_NAMES,
    ARRAY_PACKAGES,
    RECEIVER_DISPATCHED_NAMES,
    SHARED_METHOD_NAMES,
    TORCH_KEYWORD_PACKAGES,
    TORCH_ONLY_METHOD_KEYWORDS,
    CallBindError,
    RunTimeArguments,
    adapter_expr,
    arg_expression,
    bind_arguments,
    build_call_args,
    fix_commas,
    map_arguments,
    needs_mapping,
    parenthesize,
    receiver_name,
    resolve_ms_names,
    switched_target,
    value_expr,
)
from mindport.names import PYTHON_TYPE_DTYPES, package_nature, torch_package
from mindport.runtime.promotion import INT_RECEIVERS, INT_TO_FLOAT, JOINS, OWN_PRECISION, PROMOTED, VARARG_JOINS
from mindport.migrator.walk import read, walk

# In-place methods that change a flag of the tensor, not its values: on a copy made by indexing they still return
# what torch returns (x[:n].requires_grad_(False) is the slice, without gradient), so no update is lost.
_FLAG_METHODS = frozenset({"requires_grad_", "share_memory_"})

# torch functions and tensor methods whose result is a new tensor nothing else holds (_fresh_receiver)
_FRESH_FUNCTIONS = frozenset(f"torch.{n}" for n in (
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "eye", "linspace", "zeros_like",
    "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "tensor"))
_FRESH_METHODS = frozenset({"new_ones", "new_zeros", "new_empty", "new_full", "new_tensor", "clone"})
# tensor methods that may give back their receiver itself (no conversion, already contiguous, same device)
_MAY_RETURN_RECEIVER = frozenset({"contiguous", "to", "type", "type_as", "float", "double", "half", "bfloat16", "int",
                                  "long", "short", "bool", "byte", "char", "cpu", "cuda", "pin_memory", "coalesce",
                                  "share_memory_"})


def _fresh_receiver(expr, resolve) -> bool:
    """A tensor nothing else holds: a creation call (``torch.zeros(...)``, ``x.new_ones(...)``, ``x.clone()``) or an
    in-place method of one (which returns its receiver)."""
    if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
        return False
    if resolve(expr.func) in _FRESH_FUNCTIONS:
        return True
    if resolve(expr.func) in SIZED_CONSTRUCTORS and (_visible_sizes(expr) or _number_data(expr, True)):
        return True  # torch.Tensor(h, d), torch.FloatTensor((b, 1, 1, 1)): a new tensor of sizes or copied data
    func = expr.func
    if not isinstance(func, cst.Attribute) or resolve(func) is not None:
        return False
    if func.attr.value in _FRESH_METHODS:
        return True
    return func.attr.value.endswith("_") and not func.attr.value.endswith("__") \
        and func.attr.value not in _FLAG_METHODS and _fresh_receiver(func.value, resolve)



def _same_arguments(plain, inplace, call: cst.Call) -> bool:
    """Does the out-of-place entry take the in-place call's arguments with the same meaning? Equal signatures; or
    the out-of-place one is the in-place one after a leading ``*<p>_rest`` that takes ``p`` positionally (torch's
    ``squeeze(*dim_rest, dim=None)`` for ``squeeze_(dim=None)``) and the call gives ``p`` at most one positional
    argument (``x.squeeze_(d)`` is ``x.squeeze(d)``)."""
    mine = [(p.name, p.default, p.kind) for p in inplace.signature or ()]
    theirs = [(p.name, p.default, p.kind) for p in plain.signature or ()]
    if mine == theirs:
        return True
    if not mine or len(theirs) != len(mine) + 1 or theirs[0][0] != f"{mine[0][0]}_rest" \
            or theirs[0][2] != "var_positional" or [t[:2] for t in theirs[1:]] != [m[:2] for m in mine]:
        return False
    return not any(a.star for a in call.args) and sum(1 for a in call.args if a.keyword is None) <= 1


def _draw_term(term: tuple, bound: dict) -> "cst.BaseExpression | None":
    """A FRESH_DRAWS scale or shift with the call's arguments: ``((p, d),)`` is p's argument (None when p is not given
    and its default ``d`` is 0 or 1, the neutral value of the shift or the scale); ``((p, dp), (q, dq))`` is ``p - q``
    (each absent one its default; None when both are absent: the neutral 1 - 0)."""
    if len(term) == 1:
        (name, _default), = term
        return bound.get(name)
    (left, left_default), (right, right_default) = term
    if left not in bound and right not in bound:
        return None
    if right not in bound and right_default == 0:
        return bound[left]
    return cst.BinaryOperation(left=_parenthesized(bound.get(left, cst.Integer(str(left_default)))),
                               operator=cst.Subtract(),
                               right=_parenthesized(bound.get(right, cst.Integer(str(right_default)))))


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` as an operand of ``*``, ``+`` or ``-`` (the right one): in parentheses unless it is an atom, a call,
    an attribute, a subscript or a negated number."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Call, cst.Attribute,
                         cst.Subscript)) or expr.lpar or (
            isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus))
            and isinstance(expr.expression, (cst.Name, cst.Integer, cst.Float, cst.Attribute))):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _swap_of_high_axes(func: cst.Attribute, call: cst.Call) -> bool:
    """``y.transpose(1, 2)`` with two literal axes, one of them 2 or more: torch's swap of two axes of a tensor of 3
    or more dimensions, whatever ``y`` is (numpy's transpose takes every axis, so two axes fit only a 2-D array,
    where 2 is out of range). pytorchic-bert's ``split_last(x, s).transpose(1, 2)`` kept it: a permutation in
    MindSpore's GRAPH_MODE."""
    if func.attr.value != "transpose" or len(call.args) != 2 or any(a.keyword or a.star for a in call.args):
        return False
    axes = [a.value for a in call.args]
    return all(isinstance(v, cst.Integer) for v in axes) and max(int(v.value) for v in axes) >= 2


def _swap_either_way(call: cst.Call) -> bool:
    """``y.transpose(-1, -2)`` (also ``(1, 0)``, ``(-1, 0)``, ``(1, -2)``): two integer literals that torch reads as a
    swap of two axes and numpy as the permutation of a 2-D array's axes that swaps them (the only rank at which
    numpy's transpose takes two axes), so ``y.swapaxes(-1, -2)`` is the same call whichever ``y`` is.
    UCTransNet's ``multi_head_Q1.transpose(-1, -2) if emb1 is not None else None`` in a file importing numpy was
    left as written: MindSpore's ``Tensor.transpose`` swaps in PyNative, takes a permutation in GRAPH_MODE ("the
    number of axes must be equal to the dimension of Tensor")."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "transpose" or len(call.args) != 2 \
            or any(a.keyword or a.star for a in call.args):
        return False
    axes = [int_literal(arg.value) for arg in call.args]
    return None not in axes and all(-2 <= a <= 1 for a in axes) and axes[0] % 2 == 1 and axes[1] % 2 == 0


# size and dimensions arguments a local list may be given to (mindport.mappings.transforms.layers.IMPLICIT_VALUES,
# without padding: the padding transforms take lists)
LIST_SIZE_NAMES = frozenset(IMPLICIT_VALUES) - {"padding"}
# the sizes torch expands from one element to every dimension (``_pair([2])``: stride (2,), broadcast by the op)
SINGLE_SIZE_NAMES = frozenset({"kernel_size", "stride", "dilation", "output_padding"})
# the parameters of torch's layers that take an int only (their annotations in torch.nn, less those of other kinds in
# some layer): a numpy integer given to one is an int to torch, refused by MindSpore's layer
INT_SIZE_NAMES = frozenset({
    "d_model", "dim_feedforward", "downscale_factor", "embed_dim", "embedding_dim", "groups", "hidden_size",
    "in1_features", "in2_features", "in_channels", "in_features", "input_size", "kdim", "n_classes", "nhead",
    "num_channels", "num_chunks", "num_classes", "num_decoder_layers", "num_embeddings", "num_encoder_layers",
    "num_features", "num_groups", "num_heads", "num_layers", "num_parameters", "out_channels", "out_features",
    "proj_size", "upscale_factor", "vdim"})

# the flags of torch's layers that MindSpore takes as a bool only (``has_bias``, ``affine``): torch tests them for
# truth; measured on every layer entry's example given 1 (test_non_bool_flags.py::test_every_bool_only_layer_flag_is_listed)
BOOL_FLAG_NAMES = frozenset({"affine", "bias", "swap"})


def _tuple_if_list(name: str, single: bool = False) -> str:
    """A name that may hold a list, as MindSpore takes a size: a tuple then, else the value as it is. ``single``: a
    layer's size (kernel_size, stride, dilation ...), where torch expands a one-element list to every dimension
    (EfficientNet's ``stride=[2]`` in a Conv2d) and MindSpore refuses a one-element tuple: that list's element."""
    if single:
        return f"(({name}[0] if len({name}) == 1 else tuple({name})) if isinstance({name}, list) else {name})"
    return f"(tuple({name}) if isinstance({name}, list) else {name})"


# torch functions that return the module they are given (its weight reparametrised): a construction wrapped in one
# is still a layer construction
WRAPS_MODULE = frozenset(("torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                          "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm"))


# torch layer classmethods code calls through an object of the layer (they build a new one)
_LAYER_CLASSMETHODS = frozenset({"from_pretrained"})



# MindSpore's norms that take the batch's statistics whatever their mode when told so (``use_batch_statistics=True``)
_BATCH_STATISTICS = "use_batch_statistics"
_BATCH_STATISTICS_LAYERS = frozenset({"mindspore.nn.BatchNorm1d", "mindspore.nn.BatchNorm2d", "mindspore.nn.BatchNorm3d"})


class _SelfCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self.names.add(func.attr.value)


def _self_called(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` calls as ``self.name(...)``."""
    found = _SelfCalls()
    walk(function, found)
    return found.names

def _several_items_test(value: str) -> str:
    """The run-time test that ``value`` holds several items (transforms.layers.SEVERAL_ITEMS: a LayerNorm over more
    than the last axis), for the factory and value-class branch and for a lambda's choice alike."""
    return f"isinstance({value}, (tuple, list)) and len({value}) > 1"


_UNBATCHED_FUNCTIONS = "mindport.runtime.unbatched."  # the runtime forms of mappings.unbatched.FUNCTIONS

class TableCallTransform(Rule):
    """Rewrites calls and attribute references whose torch name has a mapping entry; flags the others.

    A call whose arguments are only known at run time (``*args``/``**kwargs`` at the call site) and a torch API
    passed as a value (``norm_layer=nn.LayerNorm``, ``partial(torch.cat, dim=1)``) become the runtime adapter of the
    same entry (``mp_adapt.api("torch.nn.LayerNorm")``, ``mindport/runtime/adapt.py``), which maps the arguments when
    the call happens. A torch class called so whose entry converts a call passing every parameter by name statically
    (no value needs a run-time choice of class, none is unsupported) is built instead by a factory written into the
    file, torch's parameters and defaults building MindSpore's class (``linear(*args, **kwargs)`` calls
    ``make_linear(in_features, out_features, bias=True, ...)``, which returns ``nn.Dense(...)``:
    ``mindport/migrator/factories.py``); so is one given to ``functools.partial`` (``partial(nn.Linear, bias=False)``
    is ``partial(make_linear, bias=False)``: a partial is only ever called), and one passed as a value whose every use
    is a call or a test against None (``conv_layer=nn.Conv2d`` called with ``**kwargs``: ``ValueFlow.only_called``).
    An entry whose one ``switch`` parameter picks the class by its value gets a factory that decides when it is
    called: ``make_conv2d(..., padding_mode='zeros', ...)`` returns the runtime's ModePaddedConv2d for 'reflect',
    'replicate', 'circular', raises torch's ValueError for another mode, and builds MindSpore's ``nn.Conv2d`` for
    'zeros'; ``make_relu(inplace=False)`` returns InplaceReLU when ``inplace``. A torch function whose one bool
    ``switch`` (``inplace``) is given a value known only at run time, its other arguments static
    (``F.leaky_relu(x, self.negative_slope, self.inplace)``), is both conversions chosen by that value
    (``(mp_inplace.leaky_relu_inplace(x, alpha=...) if self.inplace else ops.leaky_relu(x, alpha=...))``), not the
    adapter: a graph compiles the branch its constant flag picks, where the adapter takes one argument only. Such a class as the base of a class
    with no ``__init__`` of its own
    (``class GroupNorm32(nn.GroupNorm)``) is MindSpore's class, and the class gets an ``__init__`` with torch's
    parameters that hands them to it bound statically, so it is still built with torch's arguments anywhere. A flagged
    call's statement keeps its torch meaning (the engine's ``keep_torch.py``).

    torch builds every module in training mode; MindSpore's Cells start in eval mode. A layer whose output depends on
    the mode (its entry says ``starts_training``: batch statistics, dropout) built outside a class gets
    ``.set_train()``, so a ``bn = nn.BatchNorm2d(3)`` called before any ``train()``/``eval()`` normalizes with the
    batch's statistics as torch's does. Inside a class, the enclosing module's mode governs a layer its ``__init__``
    builds (directly or through a method it calls); one built in another method (``forward``'s
    ``nn.BatchNorm1d(x.size(1))(x)``, a fresh module in training mode at every call in torch) gets ``.set_train()``
    too, and a BatchNorm there ``use_batch_statistics=True`` instead (a static graph cannot call what ``set_train``
    returns).

    Facts read from the class (``mindport/migrator/native_facts.py``) choose MindSpore's own layer where a runtime
    one exists only for a case the code rules out: ``nn.ReLU(inplace=True)`` (and the other in-place activations) is
    ``nn.ReLU()`` when no use of the layer leaves a reader of its input (a fresh input such as ``self.bn(x)``, or a
    local name rebound by the call and never handed on, a forward parameter included once the method has rebound it),
    and ``nn.ModuleList([...])`` of Cells (a member may be ``A(...) if c else B(...)`` of two constructions or
    ``weight_norm(A(...))``, which returns its module; ``self.blocks: T = nn.ModuleList(...)`` counts as an
    assignment; a comprehension that is a member of ``nn.ModuleDict(dict(h=...))`` / ``({"h": ...})``, nanoGPT's
    blocks, counts when nothing adds to ``.h``), never added to, is
    ``nn.CellList`` (an empty one too, when every member added later is a Cell; ``self.layers = nn.ModuleList([])``
    filled by ``self.layers.append(...)`` in ``__init__`` is built in a local, ``layers = nn.CellList([])``, and
    assigned after the last add, since CellList names members appended to a list its owner already holds without
    the owner's prefix: native_facts.hoisted_list). ``softmax`` is MindSpore's own
    ``ops.softmax`` where its input can hold no row of all ``-inf`` (a product, a layer's output, a finite
    ``masked_fill``: the runtime one is written out for the CPU kernel's defect on such rows), and so is the
    ``nn.Softmax`` layer every call of which in the class is on such an input (``nn.Softmax(axis=-1)``; in a port for
    a GPU or Ascend, every one). Otherwise the runtime
    Cell or function keeps torch's behaviour (the result written into the input; None members; a fully masked row).
    ``torch.einsum`` with a literal equation that is one batched matrix product (``'b h i d, b h j d -> b h i j'``) is
    ``ops.matmul`` with the axes swapped or permuted as the equation says (``mindport/migrator/einsum_native.py``), one
    that sums nothing (``'abc,cd->abcd'``) the broadcast product ``*``; any other
    equation keeps the runtime einsum (``ops.einsum`` has no CPU kernel). ``x.type(d)`` where ``d`` is a dtype by
    construction (``y.dtype``, ``torch.float32``) is ``x.astype(d)``; the runtime ``type`` stays for a type name or no
    argument. A layer class passed as a value whose every call is known (the default or a keyword of a parameter
    that the file's code only calls, or hands on to another such parameter: ``act_layer=nn.GELU`` ... ``act_layer()``)
    is MindSpore's class itself (``nn.ReLU``) or, where the call needs its arguments mapped, a lambda with torch's
    parameters that builds MindSpore's layer with them bound statically (``lambda: nn.GELU(approximate=False)``,
    ``lambda normalized_shape: nn.LayerNorm(...)``); where a use is not a call (the value is tested, stored in a
    dict, handed to code the file does not show, or is the base of a class with an ``__init__`` of its own), a class
    the file gets, ``TorchLayerNorm(nn.LayerNorm)`` (factories.value_class_def): called, it is the entry's factory
    (MindSpore's own layer, torch's arguments bound statically); derived from, its ``__init__`` takes torch's
    arguments (one that chooses another Cell, ``elementwise_affine=False``, makes the instance that Cell's subclass,
    ``mp_nn.become``); ``isinstance``/``issubclass``/``==`` test MindSpore's class through its metaclass. Where
    every construction of the entry builds the runtime's Cell (``nn.SELU``: ``mp_nn.SeLU``; ``nn.ReLU6`` in a project
    where a float64 tensor can come to be: ``mp_nn.ReLU6``, MindSpore's subclass computing float64), the value class
    is over that Cell (``TorchReLU6(mp_nn.ReLU6)``, timm's ``act_layer=(nn.ReLU6, None)``), whatever the file
    imported before (``_own_layer_class``). The runtime adapter stays where the entry's default construction is
    another class or is not static. So is a
    torch function kept as a value (``F.relu`` is ``ops.relu``, a lambda where the call needs its arguments mapped),
    and a layer class or function held other than by a parameter whose every call is known
    (``ValueFlow.value_shape``): ``self.act = F.silu if swiglu else F.relu`` in a class not subclassed in the file,
    every read of ``.act`` in the file a call ``self.act(x)`` in it (or in a class it derives from); ``act = F.gelu``
    bound once in a function and only called; ``return F.relu`` in a module-level function each call of which is bound
    that way (DETR's ``self.activation = _get_activation_fn(name)``). ``partial(nn.LayerNorm, eps=1e-6)`` (a torch
    layer class or function, literal keywords) used as such a value is a lambda building MindSpore's layer with the
    partial's keywords and the calls' arguments bound statically (parenthesised where it is a branch of ``a if c else
    b``).

    An in-place method on an indexed view, as a statement (``w.data[:, :n].normal_(1, 0.02)``): indexing a MindSpore
    tensor makes a copy, so the converted call updates the copy and the statement assigns it back (a chain of
    one-position indexes, ``mask[i][j].fill_(1)``, into ``mask[i, j]``); one whose result is read
    (``y = w[0].add_(1)``) is flagged. One on a local name, as a statement (``z.scatter_add_(0, idx, src)``),
    rebinds the name to the update's result (``z = mp_inplace.scatter_add_(z, ...)``: the receiver itself in
    PyNative): in a compiled graph the update of a tensor that is no Parameter is not ordered before later reads of
    the name, which would read the old values without any error. A field of torch's named-tuple result read on the
    call (``torch.linalg.lstsq(a, b).solution``) is read by position (``mp_linalg.lstsq(a, b)[0]``): the runtime
    returns a plain tuple in a graph. A layer's int-only size given a numpy value (``nn.Linear(np.product(shape),
    h)``, or a local bound to one) is ``int(...)``: torch reads a numpy integer as an int, MindSpore's layers refuse it.

    torch's joins of a sequence of tensors (``cat``, ``stack``, ``column_stack``, ``hstack``, ``vstack``, ``dstack``,
    ``row_stack``, ``block_diag``: ``mindport.runtime.promotion.JOINS``, enumerated from torch) give the members'
    common type (``column_stack([float32, int64])`` is float32); MindSpore's Concat and Stack refuse mixed dtypes.
    Where a member's dtype may differ from the others' the tensors go through ``mp_tensor.promoted`` (torch's
    promotion rules as data); MindSpore's own join is kept as it is where the facts say they share one dtype: one
    member, the same expression, members floating point by construction, a parameter the function gives to a layer
    of floating weights, a name whose reaching binding is one of those, or a recorded run (``convert --facts``) that
    saw one dtype at the call. Floating by construction includes a Parameter made of a float tensor and anything
    derived from it by dtype-keeping calls (``expand``, einops' ``repeat``, indexing, arithmetic with floats), the
    output of a layer of floating weights, of an ``nn.Sequential`` ending in one (then layers that keep floats), of a
    class of the file whose forward returns floats (``PatchEmbed``) or keeps a float input floating (a loop
    ``for blk in self.blocks: x = blk(x)``), a parameter given to such a layer before any rebinding, a local list
    only ever given floats (``skips.append(self.conv(x))``; ``skips.pop()``, ``torch.cat(features, 1)``), and names
    unpacked from a tuple (``a, b = x[:, :1], x[:, 1:]``); pieces of one tensor (``x1, x2 = x.chunk(2, -1)``) share
    its dtype. An Embedding's input is not floating (its output is). Members all integers by construction
    (native_facts.IntFacts) also keep MindSpore's join: ``multinomial``/``argmax``/``argmin``/``argsort``/
    ``randperm``/``nonzero``, the indices of ``topk``/``sort``, ``.long()``, ``arange``/``randint`` of Python ints,
    integer arithmetic and views of those, and a model's token ids, a method's parameter it gives (or a slice of) to
    ``self(...)`` before rebinding it, when the class's forward gives its first input to an ``nn.Embedding``
    (torch's embedding takes integers only): a generation loop's ``torch.cat((idx, idx_next), dim=1)``.
    """

    EXAMPLES = (
        Example(
            before="""
                from functools import partial

                import torch.nn as nn
                import torch.nn.functional as F

                def _get_activation_fn(name):
                    if name == "relu":
                        return F.relu
                    return F.silu

                class Block(nn.Module):
                    def __init__(self, dim, norm_layer=nn.LayerNorm, activation="relu"):
                        super().__init__()
                        self.norm = norm_layer(dim)
                        self.activation = _get_activation_fn(activation)

                    def forward(self, x):
                        return self.activation(self.norm(x))

                def block(dim):
                    return Block(dim, norm_layer=partial(nn.LayerNorm, eps=1e-6))
            """,
            after="""
                from functools import partial

                from mindspore import nn
                from mindspore import ops

                def _get_activation_fn(name):
                    if name == "relu":
                        return ops.relu
                    return ops.silu

                class Block(nn.Cell):
                    def __init__(self, dim, norm_layer=lambda normalized_shape: nn.LayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=1e-05), activation="relu"):
                        super().__init__()
                        self.norm = norm_layer(dim)
                        self.activation = _get_activation_fn(activation)

                    def construct(self, x):
                        return self.activation(self.norm(x))

                def block(dim):
                    _mp_lambda = (lambda normalized_shape: nn.LayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=1e-6))
                    return Block(dim, norm_layer=_mp_lambda)
            """,
            note="torch functions and layer classes kept as values whose every call is known (a parameter only "
                 "called, an attribute only called, a function returning them whose result is bound so) are "
                 "MindSpore's own, a partial of literal keywords a lambda binding them: no runtime adapter.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Head(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)

                    def forward(self, x_num, x_cat):
                        h = torch.cat([self.fc(x_num), x_num], dim=1)
                        return torch.column_stack([h, x_cat])
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Head(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def construct(self, x_num, x_cat):
                        h = ops.cat([self.fc(x_num), x_num], axis=1)
                        return ops.column_stack(mp_tensor.promoted([h, x_cat]))
            """,
            note="A join whose members may differ in dtype (x_cat: an int64 column) promotes them as torch does; one "
                 "whose members share the layer's dtype by the facts is MindSpore's own (yandex-research/tabm).",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn
                import torch.nn.functional as F


                class Block(nn.Module):
                    def __init__(self, c):
                        super().__init__()
                        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
                        self.bn = nn.BatchNorm2d(c, momentum=0.1)

                    def forward(self, x):
                        y = F.gelu(self.bn(self.conv(x)))
                        return torch.cat([x, y], dim=1)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Block(nn.Cell):
                    def __init__(self, c):
                        super().__init__()
                        self.conv = nn.Conv2d(in_channels=c, out_channels=c, kernel_size=3, padding=1, has_bias=False, pad_mode='pad')
                        self.bn = nn.BatchNorm2d(num_features=c, momentum=0.9, eps=1e-05)

                    def construct(self, x):
                        y = ops.gelu(self.bn(self.conv(x)))
                        return ops.cat([x, y], axis=1)
            """,
            note="Arguments bound to torch's signature, renamed, and MindSpore's differing defaults written out (pad_mode, momentum = 1 - torch's, eps).",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn

                bn = nn.BatchNorm1d(4)
                y = bn(torch.randn(8, 4))
            """,
            after="""
                from mindspore import nn
                from mindspore import ops

                bn = nn.BatchNorm1d(num_features=4, eps=1e-05, momentum=0.9).set_train()
                y = bn(ops.randn(8, 4))
            """,
            note="torch builds modules in training mode, MindSpore's Cells start in eval: a mode-dependent layer built "
                 "outside a class gets .set_train() (inside a class, the enclosing module's mode governs it).",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Encoder(nn.Module):
                    def __init__(self, d):
                        super().__init__()
                        self.head = nn.Sequential(nn.Linear(d, d), nn.BatchNorm1d(d))

                    def forward(self, x):
                        x = nn.BatchNorm1d(x.size(1))(x)
                        return self.head(nn.Dropout(0.5)(x))
            """,
            after="""
                from mindspore import nn


                class Encoder(nn.Cell):
                    def __init__(self, d):
                        super().__init__()
                        self.head = nn.SequentialCell(nn.Dense(in_channels=d, out_channels=d), nn.BatchNorm1d(num_features=d, eps=1e-05, momentum=0.9))

                    def construct(self, x):
                        x = nn.BatchNorm1d(num_features=x.shape[1], eps=1e-05, momentum=0.9, use_batch_statistics=True)(x)
                        return self.head(nn.Dropout(p=0.5).set_train()(x))
            """,
            note="A layer built in the forward is a fresh module in torch's training mode at every call (batch "
                 "statistics, dropping): a BatchNorm takes the batch's statistics by its argument, others get "
                 ".set_train(); those __init__ builds follow the model's mode.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self, c):
                        super().__init__()
                        self.convs = nn.ModuleList([nn.Conv2d(c, c, 3, padding=1) for _ in range(2)])
                        self.relu = nn.ReLU(inplace=True)
                        self.gate = nn.ReLU(inplace=True)

                    def forward(self, x):
                        y = self.relu(self.convs[0](x))
                        z = self.convs[1](y)
                        g = self.gate(z)
                        return g + z
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn


                class Block(nn.Cell):
                    def __init__(self, c):
                        super().__init__()
                        self.convs = nn.CellList([nn.Conv2d(in_channels=c, out_channels=c, kernel_size=3, padding=1, has_bias=True, pad_mode='pad') for _ in range(2)])
                        self.relu = nn.ReLU()
                        self.gate = mp_nn.InplaceReLU()

                    def construct(self, x):
                        y = self.relu(self.convs[0](x))
                        z = self.convs[1](y)
                        g = self.gate(z)
                        return g + z
            """,
            note="Facts from the class: relu's input is a convolution's fresh output, so out of place is the same; "
                 "gate's input z is read after it (torch reads the result there): the runtime Cell writes into z. "
                 "A ModuleList of Cells never added to is MindSpore's CellList.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Attention(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.attend = nn.Softmax(dim=-1)

                    def forward(self, q, k):
                        return self.attend(torch.matmul(q, k.transpose(-1, -2)) * 0.125)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Attention(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.attend = nn.Softmax(axis=-1)

                    def construct(self, q, k):
                        return self.attend(ops.matmul(q, k.swapaxes(axis0=-1, axis1=-2)) * 0.125)
            """,
            note="A softmax layer only ever called on a product (no row of all -inf can reach it) is MindSpore's own.",
        ),
        Example(
            before="""
                import numpy as np


                def stats(a):
                    return a.squeeze(axis=0), np.mean(a)
            """,
            note='Methods that numpy arrays share with tensors are left alone unless the receiver is evidently a tensor.',
        ),
        Example(
            before="""
                from functools import partial

                import torch.nn as nn


                def make_block(dim, norm_layer=nn.LayerNorm, **kwargs):
                    return nn.Sequential(nn.Linear(dim, dim, **kwargs), partial(norm_layer, eps=1e-6)(dim))
            """,
            after="""
                from functools import partial

                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import layers as mp_nn


                class TorchLayerType(type):
                    \"\"\"isinstance, issubclass and == of a torch layer class used as a value: those of MindSpore's class.\"\"\"

                    def __init__(cls, name, bases, namespace, **kwargs):
                        super().__init__(name, bases, namespace, **kwargs)
                        if '_mp_torch_name' in namespace:
                            cls.__name__ = namespace['_mp_torch_name']

                    def __instancecheck__(cls, obj):
                        if '_mp_value_class' in vars(cls):
                            return isinstance(obj, cls.__bases__[0])
                        return super().__instancecheck__(obj)

                    def __subclasscheck__(cls, sub):
                        if '_mp_value_class' in vars(cls):
                            return issubclass(sub, cls.__bases__[0])
                        return super().__subclasscheck__(sub)

                    def __eq__(cls, other):
                        if '_mp_value_class' in vars(cls):
                            return other is cls or other is cls.__bases__[0]
                        return super().__eq__(other)

                    def __hash__(cls):
                        return hash(cls.__bases__[0]) if '_mp_value_class' in vars(cls) else super().__hash__()

                    @property
                    def __signature__(cls):
                        if '_mp_value_class' not in vars(cls):
                            return None
                        import inspect

                        init = inspect.signature(cls.__init__)
                        return init.replace(parameters=list(init.parameters.values())[1:])


                def make_layernorm(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None):
                    \"\"\"torch.nn.LayerNorm's parameters, building MindSpore's nn.LayerNorm (isinstance(normalized_shape, (tuple, list)) and len(normalized_shape) > 1: mp_nn.OptionalAffineLayerNorm; elementwise_affine and not bias: mp_nn.OptionalAffineLayerNorm; not elementwise_affine and bias: mp_nn.OptionalAffineLayerNorm; not elementwise_affine and not bias: mp_nn.OptionalAffineLayerNorm).\"\"\"
                    if isinstance(normalized_shape, (tuple, list)) and len(normalized_shape) > 1:
                        return mp_nn.OptionalAffineLayerNorm(normalized_shape=tuple(normalized_shape), epsilon=float(eps), elementwise_affine=elementwise_affine, bias=bias, dtype=dtype or ms.float32)
                    if elementwise_affine and not bias:
                        return mp_nn.OptionalAffineLayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, bias=bias)
                    if not elementwise_affine and bias:
                        return mp_nn.OptionalAffineLayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, elementwise_affine=elementwise_affine)
                    if not elementwise_affine and not bias:
                        return mp_nn.OptionalAffineLayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, elementwise_affine=elementwise_affine, bias=bias)
                    return nn.LayerNorm(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32)


                class TorchLayerNorm(nn.LayerNorm, metaclass=TorchLayerType):
                    \"\"\"torch.nn.LayerNorm as a value: called, make_layernorm(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'LayerNorm'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchLayerNorm:
                            return make_layernorm(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None):
                        \"\"\"torch.nn.LayerNorm's parameters.\"\"\"
                        if isinstance(normalized_shape, (tuple, list)) and len(normalized_shape) > 1:
                            mp_nn.become(self, mp_nn.OptionalAffineLayerNorm)
                            mp_nn.OptionalAffineLayerNorm.__init__(self, normalized_shape=tuple(normalized_shape), epsilon=float(eps), elementwise_affine=elementwise_affine, bias=bias, dtype=dtype or ms.float32)
                            self.elementwise_affine = elementwise_affine
                            return
                        if elementwise_affine and not bias:
                            mp_nn.become(self, mp_nn.OptionalAffineLayerNorm)
                            mp_nn.OptionalAffineLayerNorm.__init__(self, normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, bias=bias)
                            self.elementwise_affine = elementwise_affine
                            return
                        if not elementwise_affine and bias:
                            mp_nn.become(self, mp_nn.OptionalAffineLayerNorm)
                            mp_nn.OptionalAffineLayerNorm.__init__(self, normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, elementwise_affine=elementwise_affine)
                            self.elementwise_affine = elementwise_affine
                            return
                        if not elementwise_affine and not bias:
                            mp_nn.become(self, mp_nn.OptionalAffineLayerNorm)
                            mp_nn.OptionalAffineLayerNorm.__init__(self, normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32, elementwise_affine=elementwise_affine, bias=bias)
                            self.elementwise_affine = elementwise_affine
                            return
                        super().__init__(normalized_shape=(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)), epsilon=float(eps), dtype=dtype or ms.float32)
                        self.elementwise_affine = elementwise_affine


                def make_linear(in_features, out_features, bias=True, device=None, dtype=None):
                    \"\"\"torch.nn.Linear's parameters, building MindSpore's nn.Dense.\"\"\"
                    return nn.Dense(in_channels=in_features, out_channels=out_features, has_bias=bias, dtype=dtype or ms.float32)


                def make_block(dim, norm_layer=TorchLayerNorm, **kwargs):
                    return nn.SequentialCell(make_linear(dim, dim, **kwargs), partial(norm_layer, eps=1e-6)(dim))
            """,
            note='Arguments known only at run time (**kwargs): a factory written into the file, torch\'s parameters '
                 'building MindSpore\'s class, where the entry converts every value statically (LayerNorm\'s '
                 'elementwise_affine and bias, which choose the class, decided when it is called); a layer class '
                 'passed as a value whose calls are not all known is a class of the file over MindSpore\'s '
                 '(TorchLayerNorm): called, its factory builds MindSpore\'s layer; derived from, its __init__ takes '
                 'torch\'s arguments; isinstance, issubclass and == test MindSpore\'s class (its metaclass).',
        ),
        Example(
            before="""
                import torch.nn.functional as F


                def act(x, slope, inplace):
                    return F.leaky_relu(x, slope, inplace)
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace


                def act(x, slope, inplace):
                    return (mp_inplace.leaky_relu_inplace(x, alpha=slope) if inplace else ops.leaky_relu(x, alpha=slope))
            """,
            note='A bool switch known only at run time (inplace) chooses between the two conversions; the runtime '
                 'adapter, which would map the call in Python, does not compile in a graph with more than one argument.',
        ),
        Example(
            before="""
                import torch.nn as nn


                def embed(n, d):
                    return nn.Embedding(n, d, max_norm=1.0), nn.ReLU()
            """,
            after="""
                import torch


                def embed(n, d):
                    return torch.nn.Embedding(n, d, max_norm=1.0), torch.nn.ReLU()  # mindport: MP102 torch.nn.Embedding: argument max_norm=1.0 is not supported: MindSpore Embedding does not renormalise rows
            """,
            note='A value with no MindSpore equivalent is flagged, and its whole line keeps its torch meaning: torch '
                 'names written in full, import torch kept; never a MindSpore callee with torch arguments.',
        ),
        Example(
            before="""
                import torch.nn as nn

                class Norm(nn.Module):
                    def __init__(self, n, classes):
                        super().__init__()
                        self.embed = nn.Embedding(classes, 2 * n)
                        self.embed.weight.data[:, :n].normal_(1, 0.02)
                        self.embed.weight.data[:, n:].zero_()
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import inplace as mp_inplace

                class Norm(nn.Cell):
                    def __init__(self, n, classes):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size=classes, embedding_size=2 * n, embedding_table=ms.common.initializer.Normal(sigma=1.0))
                        self.embed.embedding_table.data[:, :n] = mp_inplace.normal_(self.embed.embedding_table.data[:, :n], mean=1, std=0.02)
                        self.embed.embedding_table.data[:, n:] = mp_inplace.zero_(self.embed.embedding_table.data[:, n:])
            """,
            note="an in-place fill of an indexed view of a Parameter's data: the filled copy is assigned back "
                 "(a MindSpore index is a copy; .data shares the Parameter's memory).",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class WindowAttention(nn.Module):
                    def __init__(self, n):
                        super().__init__()
                        self.scale = n ** -0.5
                        self.attend = nn.Softmax(dim=-1)

                    def scaled(self, dots):
                        return dots * self.scale

                    def forward(self, q, k, windows, gate):
                        dots = self.scaled(torch.einsum('b h i d, b h j d -> b h i j', q, k))
                        out = torch.einsum('b h i j, b h j w d -> b h i w d', self.attend(dots), windows)
                        return torch.einsum('bhiwd,d->bhiwd', out, gate)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class WindowAttention(nn.Cell):
                    def __init__(self, n):
                        super().__init__()
                        self.scale = n ** -0.5
                        self.attend = nn.Softmax(axis=-1)

                    def scaled(self, dots):
                        return dots * self.scale

                    def construct(self, q, k, windows, gate):
                        dots = self.scaled(ops.matmul(q, k.swapaxes(-1, -2)))
                        out = ops.permute(ops.matmul(ops.expand_dims(self.attend(dots), 2), ops.permute(windows, (0, 1, 3, 2, 4))), (0, 1, 3, 2, 4))
                        return out * gate
            """,
            note="einsum equations settled at conversion: a product with two free labels of one operand is a matmul "
                 "between permutes (SepViT's windows), one that sums nothing the broadcast product; a softmax whose "
                 "input comes through an own method returning a product is MindSpore's own (LeViT's apply_pos_bias).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._call_funcs: set[int] = set()
        self._inner: set[int] = set()  # `torch.nn` inside `torch.nn.functional.relu`: only the whole chain counts
        self._class_scopes: set[int] = set()
        # facts from the code (mindport/migrator/native_facts.py): calls proven to need no runtime Cell
        self._native_inplace: set[int] = set()  # in-place activations whose input has no reader afterwards
        self._native_softmax: set[int] = set()  # nn.Softmax layers never called on a row of all -inf
        self._native_lists: set[int] = set()  # ModuleLists that nn.CellList holds as torch's does
        self._runtime_lists: set[int] = set()  # ModuleLists whose members are added by name: the runtime's
        self._file_facts: FileFacts | None = None
        self._functions: list[cst.FunctionDef] = []  # the enclosing functions (original nodes)
        self._function_facts: dict[int, dict[str, frozenset[str]]] = {}  # id(function) -> facts, each computed once
        self._class_layers: list[dict] = []  # the enclosing classes' self.NAME -> layer constructions
        self._class_causal: list[dict] = []  # the enclosing classes' causal mask buffers (native_facts.causal_buffers)
        self._class_hoisted: list[dict[str, str]] = []  # ModuleLists built in a local of __init__ (hoisted_list)
        self._class_nodes: list[cst.ClassDef] = []  # the enclosing classes (native_facts.IntFacts reads forward)
        self._int_facts: dict[int, IntFacts] = {}
        self._class_float_layers: list[dict] = []  # the same for the dtype facts (native_facts.class_float_layers)
        self._own_outputs: OwnOutputs | None = None
        self._float_facts: dict[int, FloatFacts] = {}
        self._non_negative_facts: dict[int, NonNegativeFacts] = {}  # per function: padding amounts never negative
        self._flow_facts: dict[int, FlowFloats] = {}
        self._called_facts: dict[int, "FlowFloats | None"] = {}
        self._unmasked_facts: dict[int, UnmaskedFacts] = {}
        self._observed_noted: set[int] = set()  # calls already reported as resting on an observation (MP108)
        self._indices_calls: set[int] = set()  # topk calls made MindSpore's whose indices are read: cast to int64
        self._statement_calls: set[int] = set()  # calls that are a whole expression statement (original nodes)
        self._local_rebinds: set[int] = set()  # of those, updates of an unaliased local: name = <out of place>
        self._owned_params: dict[str, frozenset[str]] = {}  # native_facts.owned_parameters
        self._recast: set[int] = set()  # of those, out-of-place results cast back to the receiver's dtype
        self._indexed_updates: dict[int, cst.Subscript] = {}  # such a call's in-place update of an indexed view
        self._view_updates: dict[int, ViewChain] = {}  # an in-place call through torch views (narrow, diagonal ...)

    def visit_Module(self, node: cst.Module) -> None:
        self._file_facts = FileFacts(node)
        self._module = node
        self._own_outputs = OwnOutputs(node, self.scope.resolve_torch, frozenset(INT_TO_FLOAT), self.scope.resolve,
                                        self._file_facts.appended | self._file_facts.named | self._file_facts.foreign)
        self._empty_attributes = empty_attributes(node, self.ctx.module_scope.resolve_torch)
        # module-level functions' parameters whose every caller in the file gives its tensor up (v = f(v, ...))
        self._owned_params = owned_parameters(node, self.ctx.module_scope.resolve_torch, self._file_facts,
                                              lambda value: _fresh_receiver(value, self.ctx.module_scope.resolve_torch),
                                              self.ctx.options.imported_names)
        self._flow = ValueFlow(node)
        self._module, self._loads_arrays = node, None  # _strict_name: an array package loaded by a call, found once
        # kernel_size=[1, 1] handed to a class
        self._list_arguments = list_arguments(node, self._flow.functions, self.ctx.options.list_names)
        self._numpy_arguments = numpy_arguments(node, self._flow.functions, self.ctx.module_scope.resolve)
        self._non_bool_arguments = non_bool_arguments(node, self._flow.functions)
        self._cell_functions = frozenset()
        self._cell_functions = cell_functions(node, self._builds_cell)  # make_attn(c) returns a Cell on every path
        self._value_sites: dict[int, tuple[cst.FunctionDef, str]] = {}  # a value -> (the function, its parameter)
        self._factories: dict[str, tuple[str, cst.FunctionDef] | None] = {}  # torch class -> its native factory
        self._class_bases: dict[int, cst.ClassDef] = {}  # a base of a class with no __init__ -> the class
        self._any_bases: set[int] = set()  # every class's bases (a def cannot be one: _reference)
        self._partial_firsts: dict[int, cst.Call] = {}  # the function of a functools.partial(...) call -> the call
        self._partial_calls: set[int] = set()  # the functools.partial(...) calls themselves
        self._dict_members: dict[int, str] = {}  # a member of nn.ModuleDict(dict(h=...)) / ({"h": ...}) -> key
        self._base_inits: dict[int, cst.FunctionDef] = {}  # id(class) -> the __init__ its native base needs
        self._value_classes: dict[str, tuple[str, cst.ClassDef] | None] = {}  # torch class -> its value class
        self._building_factory = False  # a factory's or value class's construction is being written
        self._value_metaclass: str | None = None  # the metaclass of the value classes (factories.value_metaclass_def)

    def _builds_cell(self, expr) -> bool:
        """Is ``expr`` the construction of a layer: a torch layer class whose call converts (one flagged keeps its
        torch meaning, a torch module, which MindSpore's CellList refuses), or a class of the file or the project?
        Also ``A(...) if c else B(...)`` of two constructions, ``weight_norm(A(...))`` (torch's weight and
        spectral norms return the module they are given: WRAPS_MODULE), and a call of a module-level
        ``LinearNoBias = partial(nn.Linear, bias=False)`` (native_facts.FileFacts.partials) read as the call of what
        it binds (``nn.Linear(dim, k, bias=False)``)."""
        if isinstance(expr, cst.IfExp):
            return self._builds_cell(expr.body) and self._builds_cell(expr.orelse)
        if not isinstance(expr, cst.Call):
            return False
        bound = self._file_facts.partials.get(expr.func.value) \
            if isinstance(expr.func, cst.Name) and self._file_facts is not None else None
        if bound is not None:
            inner = bound.args[0].value
            return self.scope.resolve(bound.func) == "functools.partial" \
                and not (isinstance(inner, cst.Name) and inner.value == expr.func.value) \
                and self._builds_cell(partial_applied(bound, expr.args))
        qual = self.scope.resolve_torch(expr.func)
        if qual == "torch.nn.Module":
            return True  # down = nn.Module(); down.block = ...: an empty Cell to hang layers on
        if qual in WRAPS_MODULE:
            return bool(expr.args) and expr.args[0].keyword in (None,) and not expr.args[0].star \
                and self._builds_cell(expr.args[0].value)
        if qual is not None:
            entry = self.ctx.registry.lookup(qual)
            if entry is None or entry.kind != "layer":
                return False
            target, profile = entry.resolve(self.ctx.options.target)
            if target is None or not entry.supported:
                return False
            try:
                map_arguments(entry, bind_arguments(entry, list(expr.args)), profile)
            except (CallBindError, Unsupported):
                return False
            except RunTimeArguments:
                pass  # the runtime adapter builds the MindSpore layer when the call happens
            return True
        return isinstance(expr.func, cst.Name) and (expr.func.value in self._file_facts.classes
                                                     or expr.func.value in self.ctx.options.module_classes
                                                     or expr.func.value in self._cell_functions)

    def _inplace_true(self, call: cst.Call) -> bool:
        """``nn.ReLU(inplace=True)`` (or another entry whose inplace=True switches to a runtime Cell)."""
        qual = self.scope.resolve_torch(call.func)
        entry = self.ctx.registry.lookup(qual) if qual is not None else None
        if entry is None or not inplace_switch(entry):
            return False
        try:
            bound = bind_arguments(entry, list(call.args))
        except (CallBindError, RunTimeArguments):
            return False
        arg = bound.get("inplace")
        return arg is not None and arg.given and arg.source == "True"

    def visit_Call(self, node: cst.Call) -> None:
        self._call_funcs.add(id(node.func))
        if node.args and not node.args[0].star and node.args[0].keyword is None \
                and self.scope.resolve(node.func) == "functools.partial":
            self._partial_firsts[id(node.args[0].value)] = node  # only ever called, as a partial's function
            self._partial_calls.add(id(node))
        if node.args and node.args[0].keyword is None and not node.args[0].star \
                and self.scope.resolve_torch(node.func) == "torch.nn.ModuleDict":
            members = node.args[0].value  # nn.ModuleDict(dict(h=...)) / nn.ModuleDict({"h": ...})
            if isinstance(members, cst.Call) and isinstance(members.func, cst.Name) and members.func.value == "dict" \
                    and self.scope.resolve(members.func) is None:
                for arg in members.args:
                    if arg.keyword is not None and isinstance(arg.value, cst.Call):
                        self._dict_members[id(arg.value)] = arg.keyword.value
            elif isinstance(members, cst.Dict):
                for element in members.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                            and isinstance(element.value, cst.Call):
                        self._dict_members[id(element.value)] = element.key.evaluated_value
        callee = self._flow.callee(node.func)
        if callee is not None:  # Block(dim, act_layer=nn.GELU): the value goes to Block.__init__'s act_layer
            names = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
            names = names[1:] if names and names[0] in ("self", "cls") else names
            positional = [a for a in node.args if a.keyword is None]
            for arg in node.args:
                if arg.star:
                    continue
                if arg.keyword is not None:
                    self._value_sites[id(arg.value)] = (callee, arg.keyword.value)
                elif positional.index(arg) < len(names):
                    self._value_sites[id(arg.value)] = (callee, names[positional.index(arg)])

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    def leave_Expr(self, original_node, updated_node):
        """``w.data[:, :n].normal_(1, 0.02)`` as a statement: indexing a MindSpore tensor makes a copy, so the
        converted in-place call updates the copy and the statement assigns it back, ``w[:, :n] = <the call>`` (the
        in-place functions return the tensor they filled); a tensor's ``.data`` shares the Parameter's memory."""
        chain = self._view_updates.pop(id(original_node.value), None)
        if chain is not None:
            return self._view_update(chain, updated_node)
        view = self._indexed_updates.pop(id(original_node.value), None)
        if id(original_node.value) in self._local_rebinds and isinstance(original_node.value.func, cst.Attribute):
            self._local_rebinds.discard(id(original_node.value))  # score.masked_fill_(m, v) of an unaliased local
            value = updated_node.value
            if id(original_node.value) in self._recast:  # x = x.div(r).astype(x.dtype): the in-place call's dtype
                self._recast.discard(id(original_node.value))
                value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("astype")), args=[cst.Arg(
                    cst.Attribute(value=original_node.value.func.value, attr=cst.Name("dtype")))])
            return cst.Assign(targets=[cst.AssignTarget(target=original_node.value.func.value)],
                              value=value, semicolon=updated_node.semicolon)
        if view is None:
            return self._rebound_update(updated_node)
        call = updated_node.value  # the view as the rules left it: the receiver, or the runtime function's input
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and isinstance(call.func.value, cst.Subscript):
            view = call.func.value
        elif isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.Subscript):
            view = call.args[0].value
        view = _merged_subscript(view) or view  # mask[i][j] is written as mask[i, j]
        return cst.Assign(targets=[cst.AssignTarget(target=view)], value=updated_node.value,
                          semicolon=updated_node.semicolon)

    def _view_update(self, chain: "ViewChain", statement: cst.Expr):
        """``x.narrow(1, 0, 2).copy_(y)``, ``w.data.diagonal().fill_(1)``, ``x[:, 1:].t().mul_(2)`` as a statement:
        torch's views share the base's storage, MindSpore's are copies, so the converted update fills a copy; the
        statement writes it back, ``mp_inplace.view_update(x, (("narrow", (1, 0, 2), {}),), <the update>)``
        (mindport.runtime.inplace.view_update: the positions of the view's elements in the base, found by the same
        views). The base is the converted update's innermost receiver, as many views down as torch's chain has."""
        call = statement.value
        view = None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and not self._module_call(call.func):
            view = call.func.value
        elif isinstance(call, cst.Call) and call.args and not call.args[0].star:
            view = call.args[0].value  # mp_inplace.copy_(<view>, src=y), mp_init.ones_(tensor=<view>)
        base = view
        for _ in range(len(chain.names)):
            base = self._view_receiver(base) if base is not None else None
        if base is None:
            return statement
        return statement.with_changes(value=cst.Call(
            func=self.ctx.target_expr("mindport.runtime.inplace.view_update"),
            args=[cst.Arg(base), cst.Arg(cst.parse_expression(chain.steps)), cst.Arg(call)]))

    def _module_call(self, func: cst.Attribute) -> bool:
        """``ops.diagonal(...)``, ``mp_math.narrow(...)``: a function of a module the converted file imports, not a
        method of a receiver."""
        head = head_name(func.value)
        return head in self.ctx.aliases.values() or head in ("ms", "mindspore", "ops", "nn")

    def _view_receiver(self, node: cst.BaseExpression) -> "cst.BaseExpression | None":
        """The tensor a converted view is taken of: ``x[i]``, ``x.T``, ``x.diagonal()``, ``mp_math.narrow(x, ...)``."""
        if isinstance(node, cst.Subscript):
            return node.value
        if isinstance(node, cst.Attribute):
            return node.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if not self._module_call(node.func):
                return node.func.value
            return node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star \
                else None
        return None

    def _rebound_update(self, statement: cst.Expr):
        """``z.scatter_add_(0, idx, src)`` as a statement on a local name: ``z = mp_inplace.scatter_add_(z, ...)``.
        In a compiled graph the runtime's update (``ops.assign`` on a tensor that is no Parameter) is not ordered
        before later reads of ``z``, which then read the old values (EGNN's ``unsorted_segment_sum`` summed into
        zeros: wrong numbers and no error, MindSpore 2.10); the update returns the value it wrote there, and the
        receiver itself in PyNative, so rebinding the name changes nothing in PyNative. A chain of updates
        (``x.mul_(2.0).add_(1.0)``: ``mp_inplace.add_(mp_inplace.mul_(x, other=2.0), other=1.0)``) rebinds its innermost
        receiver to the outermost update: each returns its receiver in PyNative, the value it wrote in a graph (a
        forward writing its own input, session 49: GRAPH_MODE had read the unwritten input after the line)."""
        call = statement.value
        receiver = call
        while (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.args
               and isinstance(receiver.func.value, cst.Name) and receiver.func.value.value == INPLACE_ALIAS
               and receiver.args[0].keyword is None and not receiver.args[0].star):
            receiver = receiver.args[0].value
        if receiver is call or not isinstance(receiver, cst.Name) or not self._functions:
            return statement
        name = receiver.value
        if name not in _local_names(self._functions[-1]):
            return statement
        return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=call,
                          semicolon=statement.semicolon)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))
        self._inner.add(id(node.attr))  # `nn` in `torch.nn` is an attribute name, not a reference to `nn`

    # Names that are not references: keyword names, parameter and definition names.
    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._inner.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self._inner.add(id(node.name))

    # A name being bound (``conv = Conv2dSame`` where ``conv`` is elsewhere an alias of nn.Conv2d) is no reference.
    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._inner.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._inner.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._inner.add(id(node.target))

    def visit_For(self, node: cst.For) -> None:
        self._inner.add(id(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._inner.add(id(node.target))

    def visit_AsName(self, node: cst.AsName) -> None:
        self._inner.add(id(node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._inner.add(id(node.name))
        self._functions.append(node)
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if param.default is not None:  # def __init__(self, act_layer=nn.GELU)
                self._value_sites[id(param.default)] = (node, param.name.value)

    def leave_FunctionDef(self, original_node, updated_node):
        self._function_facts.pop(id(self._functions.pop()), None)
        return updated_node

    def _function_fact(self, fact: str, compute: Callable[[cst.FunctionDef], frozenset[str]]) -> frozenset[str]:
        """A fact of the enclosing function (native_facts.empty_locals, list_locals: names), computed once per
        function; none at module level."""
        if not self._functions:
            return frozenset()
        function = self._functions[-1]
        facts = self._function_facts.setdefault(id(function), {})
        if fact not in facts:
            facts[fact] = compute(function)
        return facts[fact]

    def _python_type_dtypes(self, bound: dict[str, Arg]) -> dict[str, Arg]:
        """``dtype=bool`` (``float``, ``int``, ``complex``): torch takes Python's types as dtypes (``torch.ones((n, n),
        dtype=bool)``, Spijkervet/SimCLR's NT_Xent mask) and reads them as torch.bool, float64, int64, complex128;
        MindSpore refuses them ("the input 'dtype' should be mindspore dtype, but got <class 'bool'>"): the
        MindSpore dtype torch reads (names.PYTHON_TYPE_DTYPES), where the file does not bind the name itself."""
        arg = bound.get("dtype")
        node = arg.node if arg is not None and arg.given else None
        if isinstance(node, cst.Name) and node.value in PYTHON_TYPE_DTYPES and not self.scope.lookup(node.value)[0]:
            bound = dict(bound)
            bound["dtype"] = Arg(self.ctx.target_text(PYTHON_TYPE_DTYPES[node.value]), True, None, arg.cst_arg)
        return bound

    def _sizes_as_tuples(self, entry, bound: dict[str, Arg]) -> dict[str, Arg]:
        """A size or dimensions argument given by a local name that may hold a list (native_facts.list_locals:
        ``dilation=rate`` after ``rate = []`` grew per dimension, or a parameter some call of the file passes a
        list to): ``tuple(rate) if isinstance(rate, list) else rate``, which MindSpore takes where it refuses a
        list ("When expanding an int number to tuple ... but got list"). Padding is left to the entries' padding
        transforms (a convolution's, which take lists); an entry without one passes it as it is (``nn.ConstantPad2d(pad,
        0)`` after ``pad = [k // 2] * 4``), so there it is a size like the others."""
        lists = self._function_fact("lists", lambda f: list_locals(f, self._list_arguments.get(id(f), frozenset()),
                                                                   self.ctx.options.list_names))
        names = LIST_SIZE_NAMES if entry.transforms or "padding" in entry.values else LIST_SIZE_NAMES | {"padding"}
        if not lists:
            return bound
        for name in names & bound.keys():
            arg = bound[name]
            held = arg.node.value if isinstance(arg.node, cst.Name) else (
                f"self.{arg.node.attr.value}" if isinstance(arg.node, cst.Attribute) and isinstance(
                    arg.node.value, cst.Name) and arg.node.value.value == "self" else None)
            if held is not None and held in lists:
                bound[name] = Arg(_tuple_if_list(held, single=name in SINGLE_SIZE_NAMES), arg.given, None, arg.cst_arg)
        for name, arg in bound.items():  # x.repeat(shape), x.view(shape): the one part of an int list given spread out
            parts = arg.node if name.endswith("_rest") and arg.source == "<varargs>" else None
            if parts and len(parts) == 1 and not parts[0].star and isinstance(parts[0].value, cst.Name) \
                    and parts[0].value.value in lists:
                bound[name] = Arg(arg.source, arg.given,
                                  [parts[0].with_changes(value=cst.parse_expression(_tuple_if_list(parts[0].value.value)))],
                                  arg.cst_arg)
        return bound

    def _numpy_sizes_as_ints(self, bound: dict[str, Arg]) -> dict[str, Arg]:
        """A layer's int-only size given a numpy value (``nn.Linear(np.product(self.reshape), 256)``, or a local bound
        to one, or a parameter some call of the file passes one to, native_facts.numpy_arguments: C-SWM's
        ``EncoderMLP(input_dim=np.prod(wh))`` then ``nn.Linear(input_dim, h)``, native_facts.numpy_valued):
        ``int(...)``, the int torch reads it as; MindSpore's layers refuse a numpy integer."""
        for name in INT_SIZE_NAMES & bound.keys():
            arg = bound[name]
            if arg.given and arg.node is not None and numpy_valued(
                    arg.node, self.scope.resolve, self._function_fact("numpy", lambda f: numpy_locals(
                        f, self.scope.resolve, self._numpy_arguments.get(id(f), frozenset())))):
                bound[name] = Arg(f"int({arg.source})", arg.given, None, arg.cst_arg)
        return bound

    def _shapes_of_axes(self, bound: dict[str, Arg]) -> dict[str, Arg]:
        """A ``normalized_shape`` given by a name the enclosing function reads as a sequence (native_facts.
        sequence_locals: ``input_dim[-2]``): ``tuple(name)``, a shape of axes the layer_norm_axes transform counts at
        run time, where a bare name is taken for one int (MindSpore's LayerNorm normalises the last axis only: "gamma
        or beta shape must match input shape")."""
        arg = bound.get("normalized_shape")
        if arg is not None and arg.given and isinstance(arg.node, cst.Name) \
                and arg.node.value in self._function_fact("sequences", sequence_locals):
            bound["normalized_shape"] = Arg(f"tuple({arg.source})", arg.given, None, arg.cst_arg)
        elif arg is not None and arg.given and isinstance(arg.node, cst.Attribute) \
                and isinstance(arg.node.value, cst.Name) and arg.node.value.value == "self" and self._class_nodes \
                and arg.node.attr.value in self._class_sequences(self._class_nodes[-1]):
            # an attribute the class only ever sets to a display of several axes (native_facts.sequence_attributes)
            bound["normalized_shape"] = Arg(f"tuple({arg.source})", arg.given, None, arg.cst_arg)
        return bound

    def _class_sequences(self, cls: cst.ClassDef) -> frozenset[str]:
        """native_facts.sequence_attributes of ``cls``, computed once per class."""
        memo = self.__dict__.setdefault("_class_sequences_memo", {})
        if id(cls) not in memo:
            memo[id(cls)] = (cls, sequence_attributes(cls))
        return memo[id(cls)][1]

    def _flags_as_bools(self, bound: dict[str, Arg]) -> dict[str, Arg]:
        """A layer's bool-only flag (``bias``) given a parameter of the enclosing function to which some call of the
        file passes a string or a number, or which defaults to one, or the attribute the function stores it on
        (native_facts.non_bool_arguments: DBPN's 'prelu' landing in ``bias``, PhyDNet's ``bias=1`` read back as
        ``self.bias``): ``bool(...)``, what torch's ``if bias:`` reads; MindSpore's ``has_bias`` refuses anything
        but a bool."""
        function = self._functions[-1] if self._functions else None
        passed = self._non_bool_arguments.get(id(function), frozenset()) if function is not None else frozenset()
        for name in BOOL_FLAG_NAMES & bound.keys():
            arg = bound[name]
            if arg.given and isinstance(arg.node, cst.Integer):  # ceil_mode=1: what torch's truth test reads
                bound[name] = Arg(str(bool(int(arg.node.value, 0))), arg.given, None, arg.cst_arg)
            elif arg.given and (isinstance(arg.node, cst.Name) and arg.node.value in passed
                                or _self_attribute(arg.node) in passed):
                bound[name] = Arg(f"bool({arg.source})", arg.given, None, arg.cst_arg)
        return bound

    def _empty_locals(self) -> frozenset[str]:
        """The enclosing function's local names bound to a legacy empty tensor."""
        return self._function_fact("empty", lambda f: empty_locals(f, self.scope.resolve_torch))

    def leave_ClassDef(self, original_node, updated_node):
        self._class_layers.pop()
        self._class_causal.pop()
        self._class_float_layers.pop()
        self._class_nodes.pop()
        hoisted = self._class_hoisted.pop()
        init = self._base_inits.pop(id(original_node), None)
        if hoisted and isinstance(updated_node.body, cst.IndentedBlock):
            body = list(updated_node.body.body)
            for i, stmt in enumerate(body):
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                    for attr, local in hoisted.items():
                        stmt = hoist_list(stmt, attr, local)
                    body[i] = stmt
            updated_node = updated_node.with_changes(body=updated_node.body.with_changes(body=body))
        return with_init(updated_node, init) if init is not None else updated_node

    def _cpu_guarded(self) -> bool:
        """Does the port keep the guards against MindSpore's CPU kernel defects (``convert --device any|cpu``)?"""
        return self.ctx.options.device in CPU_GUARDED

    def _guard_target(self, target: str, input_node, call: cst.Call, api: str) -> str:
        """An int-to-float guard (``mp_math.sigmoid``) on an input floating point by construction, or at a call site
        where a recorded torch run saw only floating inputs (``convert --facts``, ``mindport.observed``; the site's
        observed API must be ``api``, the torch name's last part): ``ops.sigmoid`` (not for ``OWN_PRECISION``'s,
        which also guard the CPU kernel's precision: ``mp_math.tanh`` stays, except in a port for a GPU or Ascend)."""
        module, _, name = target.rpartition(".")
        if module == GUARDS and name == "abs" and input_node is not None and self._real_input(input_node):
            # the runtime abs decides only complex vs real: real by construction (of the float facts, only a layer
            # of the class's output, ``self.fc(x)``: their ``x.exp()`` is "floating" for a complex x too)
            return "mindspore.ops.abs"
        if module == GUARDS and name in PROMOTED and input_node is not None:
            return self._promoted_target(target, name, input_node, call)
        if module != GUARDS or (name not in INT_TO_FLOAT and name not in INT_RECEIVERS) or input_node is None \
                or (name in OWN_PRECISION and self._cpu_guarded()):
            return target
        return f"mindspore.ops.{name}" if self._non_integer_input(input_node, call, api) else target

    def _real_input(self, input_node) -> bool:
        """Is ``input_node`` real (not complex) by construction (native_facts.RealFacts; of the float facts, only a
        layer of the class's output, ``self.fc(x)``: their ``x.exp()`` is "floating" for a complex x too)?"""
        return RealFacts(self._functions[-1] if self._functions else None, self.scope.resolve,
                         lambda e: isinstance(e, cst.Call) and _self_attribute(e.func) is not None
                         and self._floats().is_float(e)).is_real(input_node)

    def _local_body_target(self, target: str, input_node, call: cst.Call, api: str) -> str:
        """A runtime function with a file-local native body (mindport.mappings.local_bodies: ``mp_math.tanh``, a
        precise formula of MindSpore's own ops against its float32 kernel's fault) at a site whose input the facts
        settle (``when = "floating"``: :meth:`_floating_input`): the body's name, chosen once per file and collision-
        safe (FileContext.local_bodies; migrator.local_bodies writes the definition). Otherwise ``target``."""
        body = local_bodies().get(target)
        if body is None or input_node is None or not self._floating_input(input_node, call, api):
            return target
        name = self.ctx.local_bodies.get(target)
        if name is None:
            taken = {n.value for n in all_nodes(self._module, cst.Name)} | set(self.ctx.local_bodies.values())
            name = self.ctx.local_bodies[target] = fresh_name(body.name, taken)
        return LOCAL_BODY + name

    def _floating_input(self, input_node, call: cst.Call, api: str) -> bool:
        """Is a call's input a floating-point tensor by the facts (never an integer, bool or complex one): floating
        by construction or flow (FloatFacts.is_float, FlowFloats), a parameter every caller in the file gives
        floats, or every input of the site in a recorded torch run floating (``convert --facts``)? Stricter than
        :meth:`_non_integer_input`, which lets a complex one through (a mean of anything torch takes)."""
        if self._observed_float(call, api) or self._floats().is_float(input_node) \
                or self._flow_floats().is_float(input_node):
            return True
        called = self._called_floats()
        return called is not None and called.is_float(input_node)

    def _non_integer_input(self, input_node, call: cst.Call, api: str) -> bool:
        """Is a call's input never an integer or bool tensor, by the facts: floating (or complex) by construction
        (native_facts.FloatFacts, FlowFloats), a parameter every caller in the file gives floats, or every input of
        the site in a recorded torch run floating (``convert --facts``)? What the runtime's int-to-float guards and
        integer accumulators decide at run time (:meth:`_guard_target`, :meth:`_float_accumulate_target`)."""
        if self._observed_float(call, api):
            return True
        floats = self._floats()
        if floats.is_float(input_node) or floats.non_integer(input_node) or self._flow_floats().is_float(input_node):
            return True
        called = self._called_floats()  # parameters every caller in the file gives floats
        return called is not None and called.is_float(input_node)

    def _float_accumulate_target(self, target: str, mapped: dict, input_node, call: cst.Call, api: str) -> str:
        """The runtime cumsum (written out for torch's int64 accumulation of an int32/bool input, where MindSpore's
        kernel keeps int32) on an input that is no integer or bool tensor by the facts (:meth:`_non_integer_input`),
        with no ``dtype`` given: MindSpore's own ``ops.cumsum``, its arguments renamed (``dim`` -> ``axis``), which
        is what the runtime calls for such an input."""
        native = NATIVE_FLOAT_ACCUMULATE.get(target)
        dtype = mapped.get("dtype")
        if native is None or input_node is None or (dtype is not None and dtype.given and dtype.source != "None") \
                or not self._non_integer_input(input_node, call, api):
            return target
        return _native_reduction(native, mapped)

    def _raising_extent_target(self, target: str, mapped: dict, input_node, call: cst.Call, api: str) -> str:
        """The runtime amax/amin (NATIVE_RAISING_EXTENT) over a ``dim`` given as a literal int or tuple of ints, on an
        input that is no integer or bool tensor by the facts (:meth:`_non_integer_input`): MindSpore's own
        ``ops.amax``/``ops.amin``, its arguments renamed. The runtime adds two things: an empty extent raises
        IndexError, where torch raises too (so no program torch runs meets it), and a bool input is ordered as
        uint8, which such an input is not; for the rest it makes this very call (CoCa's ``sim.amax(dim=-1,
        keepdim=True)`` after an einsum, x-transformers' ``probs.amax(dim=-1, keepdim=True)`` of a softmax)."""
        native = NATIVE_RAISING_EXTENT.get(target)
        dim = mapped.get("dim")
        if native is None or input_node is None or dim is None or not dim.given:
            return target
        axes = dim.literal(default=None)
        axes = axes if isinstance(axes, (tuple, list)) else (axes,)
        if not axes or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes) \
                or not self._non_integer_input(input_node, call, api):
            return target
        return _native_reduction(native, mapped)

    def _elementwise_extreme_target(self, target: str, mapped: dict, input_node, call: cst.Call) -> str:
        """The runtime max/min (NATIVE_ELEMENTWISE: torch.max's three forms, told apart at run time) whose one other
        argument is ``torch.zeros_like``/``ones_like``/``full_like`` of the input itself, with no dtype and no
        keepdim (x-transformers' relative-position buckets ``torch.max(n, torch.zeros_like(n))``, ``torch.min(v,
        torch.full_like(v, num_buckets - 1))``): torch's elementwise form on two tensors of one dtype and shape, which
        is MindSpore's own ``ops.maximum``/``ops.minimum``, the call the runtime makes for a tensor ``dim``."""
        native = NATIVE_ELEMENTWISE.get(target)
        keepdim = mapped.get("keepdim")
        if native is None or input_node is None or (keepdim is not None and keepdim.given):
            return target
        others = [a for a in call.args if a.value is not input_node]
        if len(others) != 1 or others[0].star or (others[0].keyword is not None
                                                   and others[0].keyword.value not in ("dim", "other")):
            return target
        other = others[0].value
        if not isinstance(other, cst.Call) or self.scope.resolve_torch(other.func) not in LIKE_SAME_DTYPE \
                or not other.args or other.args[0].keyword is not None or other.args[0].star \
                or any(a.keyword is not None and a.keyword.value == "dtype" for a in other.args) \
                or code_of(other.args[0].value) != code_of(input_node):
            return target
        return _native_reduction(native, mapped)

    def _promoted_target(self, target: str, name: str, input_node, call: cst.Call) -> str:
        """A mixed-dtype element-wise call (mindport.runtime.promotion.PROMOTED: ``mp_math.addcmul``, which casts
        its tensors to torch's common type) whose receiver and every other tensor argument are floating point by
        construction (native_facts.FloatFacts; a Python number is no tensor): MindSpore's own ``ops.<name>``, the
        runtime's elsewhere."""
        floats = self._floats()
        operands = [input_node, *(a.value for a in call.args if a.value is not input_node)]
        for node in operands:
            if isinstance(node, (cst.Integer, cst.Float)) or (
                    isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float))):
                continue
            if not (floats.is_float(node) or floats.layer_input(node)):
                return target
        return f"mindspore.ops.{name}"

    def _floats(self) -> FloatFacts:
        """The enclosing function's float facts (which tensors are floating point by construction)."""
        function = self._functions[-1] if self._functions else None
        facts = self._float_facts.get(id(function))
        if facts is None:
            layers = self._class_float_layers[-1] if self._class_float_layers else {}
            facts = self._float_facts[id(function)] = FloatFacts(function, self.scope.resolve_torch, layers,
                                                                 frozenset(INT_TO_FLOAT), self._own_outputs)
        return facts

    def _native_like(self, target: str, mapped: dict, input_node) -> str:
        """``torch.randn_like(std)`` on a name floating point by construction (``std = torch.exp(0.5 * logvar)``, a
        real float: an integer input is refused by torch, a complex one is not float): ``ops.randn_like(std,
        dtype=std.dtype)``; the explicit dtype keeps the input's (ops.randn_like gives float32 for a float16 input).
        The runtime's elsewhere, where a dtype is given, and with ``generator=`` (drawn from that generator's stream:
        mindport.runtime.math.uniform_draws)."""
        native = NATIVE_LIKE.get(target)
        dtype = mapped.get("dtype")
        generator = mapped.get("generator")
        if native is None or not isinstance(input_node, cst.Name) \
                or (dtype is not None and dtype.given and dtype.source != "None") \
                or (generator is not None and generator.given and generator.source != "None") \
                or not self._floats().is_float(input_node):
            return target
        mapped["dtype"] = Arg(f"{input_node.value}.dtype")
        return native

    def _promoted_join(self, entry, call: cst.Call, built: cst.Call) -> cst.Call:
        """A torch join (``torch.cat``, ``stack``, ``column_stack``, ...: mindport.runtime.promotion.JOINS) gives its
        tensors' common type (``column_stack([float32, int64])`` is float32); MindSpore's Concat and Stack refuse
        mixed dtypes. Where a member's dtype may differ from the others' the tensors go through
        ``mp_tensor.promoted`` (``ops.column_stack(mp_tensor.promoted((x, c)))``); MindSpore's own call is kept as it
        is where the tensors have one dtype by the facts (:meth:`_one_dtype`)."""
        if entry.torch in VARARG_JOINS:
            if not built.args or any(a.keyword is not None or a.star == "**" for a in built.args) \
                    or self._one_dtype(call, [a.value for a in call.args], star=any(a.star for a in call.args)):
                return built
            if len(built.args) == 1 and built.args[0].star == "*":
                inner = built.args[0].value
            else:
                if any(a.star for a in built.args):
                    return built
                inner = cst.Tuple([cst.Element(a.value) for a in built.args])
            wrapped = cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.promoted"), args=[cst.Arg(inner)])
            return built.with_changes(args=[cst.Arg(wrapped, star="*")])
        if entry.torch not in JOINS or not built.args or built.args[0].keyword is not None or built.args[0].star:
            return built
        seq = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "tensors"), None)
        if seq is None and call.args and call.args[0].keyword is None and not call.args[0].star:
            seq = call.args[0].value
        if seq is None:
            return built
        if isinstance(seq, (cst.List, cst.Tuple)):
            if self._one_dtype(call, [e.value for e in seq.elements],
                               star=any(isinstance(e, cst.StarredElement) for e in seq.elements)):
                return built
        elif isinstance(seq, cst.Call) and (self._one_dtype_sequence(seq) or self._floats().is_float(seq)):
            return built  # list(conv(x) for conv in self.convs)
        elif isinstance(seq, (cst.ListComp, cst.GeneratorExp)):
            if self._observed_uniform(call) or self._floats().is_float(seq):  # [conv(x) for conv in self.convs]
                return built
        elif self._observed_uniform(call) or isinstance(seq, cst.Name) and self._floats().is_float(seq):
            return built  # a local list of floats (features.append(self.conv(x)); torch.cat(features, 1))
        first = built.args[0]
        wrapped = cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.promoted"),
                           args=[cst.Arg(first.value)])
        return built.with_changes(args=[first.with_changes(value=wrapped), *built.args[1:]])

    def _one_dtype(self, call: cst.Call, members: list, star: bool) -> bool:
        """Do a join's tensors have one dtype by the facts? One member; the same expression each time; every member
        floating point by construction (native_facts.FloatFacts: float32 unless the code says otherwise, and a float
        width mixed against it is refused by MindSpore loudly, never a silent value) or a parameter the function
        gives to a layer of floating weights (FloatFacts.layer_input: torch takes only the layer's dtype there,
        DenseNet's ``torch.cat([F.relu(self.bn(x)), x], 1)``) or a name whose reaching binding is floating (FloatFacts.
        reaching_float); all integers by construction (native_facts.IntFacts: a generation loop's ``(idx, idx_next)``;
        an int32 member against an int64 one is refused by MindSpore loudly); members all derived from one name by
        dtype-keeping views, copies and ``*_like`` (``[x,
        x.conj()]``), pieces unpacked from one chunk/split/unbind call (``(-x2, x1)``); or, at a call site of a
        recorded torch run (``convert --facts``), one dtype in every call observed."""
        if self._observed_uniform(call):
            return True
        if star:
            return False
        if len(members) <= 1:
            return True
        module = cst.Module([])
        if len({module.code_for_node(m) for m in members}) == 1:
            return True
        if self._same_root(members):
            return True
        floats = self._floats()
        if floats.one_promotion(members, call):
            return True  # one tree of + - * over the same operands (native_facts._FunctionFacts.one_promotion)
        if all(floats.is_float(m) or floats.layer_input(m) or floats.reaching_float(m, call) for m in members):
            return True
        flows = self._flow_floats()
        if all(flows.is_float(m) or floats.layer_input(m) or floats.piece_float(m) for m in members):
            return True  # through reaching bindings (native_facts.FlowFloats)
        called = self._called_floats()
        if called is not None and all(called.is_float(m) or floats.layer_input(m) for m in members):
            return True  # parameters every call in the file gives floats (native_facts.CallerFloats)
        ints = self._ints()
        return all(ints.is_int(m) for m in members)  # integers by construction (native_facts.IntFacts)

    def _flow_floats(self) -> FlowFloats:
        """The enclosing function's float facts read through reaching bindings (native_facts.FlowFloats)."""
        function = self._functions[-1] if self._functions else None
        facts = self._flow_facts.get(id(function))
        if facts is None:
            layers = self._class_float_layers[-1] if self._class_float_layers else {}
            facts = self._flow_facts[id(function)] = FlowFloats(function, self.scope.resolve_torch, layers,
                                                                frozenset(INT_TO_FLOAT), self._own_outputs)
        return facts

    def _called_floats(self) -> "FlowFloats | None":
        """The enclosing function's float facts with the parameters every call of it in the file gives floats taken
        as floating (native_facts.CallerFloats: a fixed point over the file's calls, for module-level functions,
        forwards and other methods); None when there is none."""
        function = self._functions[-1] if self._functions else None
        if id(function) not in self._called_facts:
            module = getattr(self, "_module", None)
            proven = caller_floats_of(module, function, self.scope.resolve_torch, self._own_outputs,
                                      self._file_facts, frozenset(INT_TO_FLOAT))
            layers = self._class_float_layers[-1] if self._class_float_layers else {}
            self._called_facts[id(function)] = FlowFloats(function, self.scope.resolve_torch, layers,
                                                          frozenset(INT_TO_FLOAT), self._own_outputs,
                                                          assumed=proven) if proven else None
        return self._called_facts[id(function)]

    def _ints(self) -> IntFacts:
        """The enclosing function's integer facts (which tensors are integers by construction)."""
        function = self._functions[-1] if self._functions else None
        facts = self._int_facts.get(id(function))
        if facts is None:
            cls = self._class_nodes[-1] if self._class_nodes else None
            layers = self._class_float_layers[-1] if self._class_float_layers else {}
            facts = self._int_facts[id(function)] = IntFacts(function, self.scope.resolve_torch, cls, layers)
        return facts

    def _one_dtype_sequence(self, seq: cst.Call) -> bool:
        """A sequence torch builds of one dtype: the pieces of one tensor (``x.chunk(2)``, ``torch.split(x, n)``,
        ``unbind``, ``tensor_split``), or ``torch.meshgrid``'s grids (torch refuses mixed dtypes there)."""
        qual = self.scope.resolve_torch(seq.func)
        if qual in ("torch.meshgrid", "torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split"):
            return True
        return qual is None and isinstance(seq.func, cst.Attribute) \
            and seq.func.attr.value in ("chunk", "split", "unbind", "tensor_split") \
            and receiver_kind(seq.func.value, self.scope) == "tensor"

    def _same_root(self, members: list) -> bool:
        """Every member is one name, or a dtype-keeping view, copy or ``*_like`` of it (``[x, x.conj()]``,
        ``[e, torch.zeros_like(e[:, :1])]``, ``x.new_zeros(n)``), a local name followed through the plain top-level
        binding that dominates its read (``zeros = pos_score.new_zeros(b, h, n, 1)`` then ``torch.cat([zeros,
        pos_score], -1)``) when the name reached is not bound again from that binding to the join."""
        floats = self._floats()
        order = floats._order  # noqa: SLF001
        followed: list[tuple[str, int]] = []  # (name reached, position of the binding read through)
        in_block: list[tuple] = []  # (name reached, block statements, index of the binding, of the reading statement)
        function = self._functions[-1] if self._functions else None

        def root(expr, depth=0):
            while True:
                if isinstance(expr, cst.Name):
                    piece = floats.piece_of(expr.value)  # x1, x2 = x.chunk(2, -1): pieces of one call
                    if piece is not None:
                        return id(piece)
                    found = order.dominating_binding(expr.value, expr) if order is not None and depth < 4 else None
                    if found is not None and not isinstance(found[1], MUTABLE_DISPLAYS):
                        reached = root(found[1], depth + 1)
                        if isinstance(reached, str):
                            followed.append((reached, order.statement_position(found[0])))
                            return reached
                    block = block_binding(function, expr, expr.value) if found is None and depth < 4 else None
                    if block is not None and not isinstance(block[3], MUTABLE_DISPLAYS):
                        reached = root(block[3], depth + 1)
                        if isinstance(reached, str):
                            in_block.append((reached, *block[:3]))
                            return reached
                    return expr.value
                elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
                    expr = expr.expression  # -x2: x2's dtype
                elif isinstance(expr, cst.BinaryOperation) and _integer_literal_operand(expr) is not None:
                    expr = _integer_literal_operand(expr)  # 2 * q, x ** 2, y - 1: the tensor's dtype
                elif isinstance(expr, cst.Subscript):
                    expr = expr.value
                elif isinstance(expr, cst.Call) and not any(a.keyword is not None and a.keyword.value == "dtype"
                                                            for a in expr.args):
                    qual = self.scope.resolve_torch(expr.func)
                    if qual in _LIKE_KEEPING and expr.args and expr.args[0].keyword is None:
                        expr = expr.args[0].value
                    elif qual is None and isinstance(expr.func, cst.Attribute) \
                            and expr.func.attr.value in _KEEPING_METHODS | _NEW_METHODS:
                        expr = expr.func.value
                    else:
                        return None
                else:
                    return None
        roots = {root(m) for m in members}
        if len(roots) != 1 or None in roots:
            return False
        for name, body, low, high in in_block:  # the name reached keeps its value (or a dtype-keeping form of it)
            values = block_rebinding_values(body, low, high, name)
            if values is None or any(root(v, depth=4) != name for v in values):
                return False
        if not followed:
            return True
        join = order.statement_position(order.statement_of(members[0]))
        bindings = order._binding_stmts  # noqa: SLF001

        def kept(name, value) -> bool:  # x = F.pad(x, ...): a rebinding of the name to a dtype-keeping form of it
            return value is not None and root(value, depth=4) == name
        return join >= 0 and not any(low < order.statement_position(stmt) < join and not kept(name, value)
                                     for name, low in followed for stmt, value in bindings.get(name, []))

    def _observed_uniform(self, call: cst.Call) -> bool:
        """Did the recorded run (``Options.uniform_sites``) see one dtype among the tensors joined at this call?"""
        sites = self.ctx.options.uniform_sites
        where = self.ctx.positions.get(call) if sites else None
        if where is None or (where.start.line, where.start.column, where.end.line, where.end.column) not in sites:
            return False
        self._rests_on_observation(call, "one dtype joined")
        return True

    def _observed_float(self, call: cst.Call, api: str) -> bool:
        """Did the recorded run (``Options.float_sites``) see only floating inputs at this call of ``api``?"""
        sites = self.ctx.options.float_sites
        if not sites:
            return False
        where = self.ctx.positions.get(call)
        if where is None or (where.start.line, where.start.column, where.end.line, where.end.column, api) not in sites:
            return False
        self._rests_on_observation(call, f"floating input:{api}")
        return True

    def _observed_decision(self, call: cst.Call, fact: str) -> bool:
        """Did every call of this site in the recorded run (``Options.decided_sites``, mindport.observed.Facts.
        decided_sites) make the run-time decision ``fact`` (``"nonempty:mean"``, ``"unmasked:softmax"``)?"""
        sites = self.ctx.options.decided_sites
        where = self.ctx.positions.get(call) if sites else None
        if where is None or (where.start.line, where.start.column, where.end.line, where.end.column, fact) not in sites:
            return False
        self._rests_on_observation(call, fact)
        return True

    def _rests_on_observation(self, call: cst.Call, fact: str) -> None:
        """The report says which sites rest on an observation (MP108, info: what an observation proves is what ran)."""
        if id(call) in self._observed_noted:
            return
        self._observed_noted.add(id(call))
        self.ctx.diagnose(call, "MP108", f"converted on an observation of the recorded torch run ({fact}): every "
                          "call there decided so in that run; an input unlike the observed ones may differ from torch",
                          "keep the port's inputs like the recorded run's, or convert without --facts", "",
                          severity="info")

    def _nonempty_target(self, target: str, mapped: dict, call: cst.Call, api: str, input_node=None) -> str:
        """The runtime mean/sum (written out for torch's value over an empty extent: NaN, 0; MindSpore's kernel gives
        inf or uninitialised memory) at a site whose every reduced extent in the recorded run held elements
        (``convert --facts``: ``"nonempty:<api>"``), or over ``dim=-1`` of an input whose last extent holds elements
        by construction (native_facts.nonempty_last_extent: ``(rel_pos * torch.tensor([2 * w - 1, 1])).sum(dim=-1)``),
        with no ``dtype`` given: MindSpore's own, its arguments renamed. An observation proves what ran: an empty
        extent arriving later gives MindSpore's value there."""
        native = NATIVE_NONEMPTY.get(target)
        dtype = mapped.get("dtype")
        if native is None or (dtype is not None and dtype.given and dtype.source != "None"):
            return target
        dim = mapped.get("dim")
        last = dim is not None and dim.given and dim.source.strip() == "-1" and input_node is not None \
            and nonempty_last_extent(input_node, self.scope.resolve_torch)
        if not last and not self._observed_decision(call, f"nonempty:{api}"):
            return target
        return _native_reduction(native, mapped)

    def _unmasked_target(self, target: str, mapped: dict, input_node, call: cst.Call | None = None,
                         api: str = "") -> str:
        """The runtime softmax on an input that can hold no row of all -inf (``UnmaskedFacts``), or at a site whose
        every input in the recorded run had none along its dim (``convert --facts``: ``"unmasked:softmax"``):
        ``ops.softmax``, its arguments renamed (``dim`` -> ``axis``); with a ``dtype`` given, or no ``dim`` (torch's
        implicit dim, picked from the input's rank), the runtime's."""
        native = NATIVE_UNMASKED.get(target)
        dtype = mapped.get("dtype")
        if native is None or input_node is None or (dtype is not None and dtype.given and dtype.source != "None"):
            return target
        if not _explicit_dim(mapped):  # torch's implicit dim comes from the input's rank at run time
            return target
        if self._cpu_guarded():  # the defect is the CPU kernel's: a port for a GPU or Ascend needs no facts
            function = self._functions[-1] if self._functions else None
            facts = self._unmasked_facts.get(id(function))
            if facts is None:
                layers = self._class_layers[-1] if self._class_layers else {}
                causal = self._class_causal[-1] if self._class_causal else {}
                cls = self._class_nodes[-1] if self._class_nodes else None
                methods = own_methods(cls) if cls is not None \
                    and self._file_facts is not None and cls.name.value not in self._file_facts.subclassed else {}  # a subclass may override one
                facts = self._unmasked_facts[id(function)] = UnmaskedFacts(
                    function, self.scope.resolve_torch, layers, self.scope.resolve, causal, methods,
                    functions=module_functions(getattr(self, "_module", None)))
            axis = mapped["dim"].literal(default=None)
            axis = axis if isinstance(axis, int) and not isinstance(axis, bool) else None
            if not facts.unmasked(input_node, dim=axis) and not (call is not None
                                                       and self._observed_decision(call, f"unmasked:{api}")):
                return target
        return _native_reduction(native, mapped)

    def _absorbed_target(self, target: str, mapped: dict, call: cst.Call, input_node) -> str:
        """The runtime mean (written out for torch's NaN over an empty extent, where MindSpore's kernel returns
        uninitialised memory) with ``keepdim=True`` and no ``dtype``, whose value over an empty extent nothing reads
        (native_facts.absorbed_reduction: ``(x - x.mean(1, keepdim=True)) / ...``, RMSNorm's ``x * torch.rsqrt(
        x.pow(2).mean(-1, keepdim=True) + eps)``): MindSpore's own, its arguments renamed (``dim`` -> ``axis``). The
        runtime var likewise (``(x - mean) / (var + eps).sqrt()``, a channel LayerNorm), where also its input is real
        and its ``dim`` an integer (:meth:`_real_reduction`)."""
        native = NATIVE_ABSORBED.get(target)
        if native is None or input_node is None:
            return target
        keep, dtype, dim = mapped.get("keepdim"), mapped.get("dtype"), mapped.get("dim")
        if dtype is not None and dtype.given and dtype.source != "None":
            return target
        restored = None  # x.sum(dim=-1).unsqueeze(dim=-1): the keepdim=True reduction (absorbed_reduction)
        if keep is None or not keep.given or keep.source != "True":
            if (keep is not None and keep.given and keep.source != "False") or dim is None or not dim.given:
                return target
            restored = dim.literal(default=None)
            if not isinstance(restored, int) or isinstance(restored, bool):
                return target
        if target in NATIVE_ABSORBED_REAL and not self._real_reduction(mapped, input_node):
            return target
        function = self._functions[-1] if self._functions else None
        if not absorbed_reduction(call, input_node, function, self.scope.resolve_torch, restored):
            return target
        return _native_reduction(native, mapped)

    def _real_reduction(self, mapped: dict, input_node) -> bool:
        """The runtime var also serves a complex input (torch's variance is real; ``ops.var`` refuses complex) and a
        0-d one (ops.var gives 0 where torch gives NaN). MindSpore's own serves where ``dim`` is an integer literal (a
        0-d input raises in torch and MindSpore alike) and the input is real: floating point by the float facts
        (native_facts.FloatFacts, FlowFloats) or in a file that makes no complex value (native_facts.real_file: a
        complex tensor from another file makes ops.var raise, never a silent value)."""
        dim = mapped.get("dim")
        if dim is None or not dim.given or not re.fullmatch(r"-?\s*\d+", dim.source.strip()):
            return False
        if "correction" not in mapped:
            return False
        return self._floats().is_float(input_node) or self._flow_floats().is_float(input_node) \
            or real_file(getattr(self, "_module", None))

    def _non_negative_pad(self, target: str, native: str, mapped: dict, call: cst.Call | None = None,
                          api: str = "") -> str:
        """The runtime pad (``mp_F.pad``, ``mp_nn.ConstantPad2d``: written where a padding amount may be negative,
        mindport.mappings.transforms.layers.pad_crop_negative) whose padding is non-negative by construction in the
        enclosing function (native_facts.NonNegativeFacts: ``pad = (0, 1, 0, 1)`` then ``F.pad(x, pad)``; ``(0, M +
        1)`` after ``M, N = x.shape``), or at a site whose every padding in a recorded torch run was (``convert
        --facts``: ``"nonnegative:pad"``): the table's own target, MindSpore's (``ops.pad``), whose only defect is a
        negative amount."""
        if target not in NEGATIVE_PAD_GUARDS or target == native:
            return target
        padding = mapped.get("padding")
        node = padding.node if padding is not None else None
        if node is not None:
            function = self._functions[-1] if self._functions else None
            facts = self._non_negative_facts.get(id(function))
            if facts is None:
                facts = self._non_negative_facts[id(function)] = NonNegativeFacts(function, self.scope.resolve_torch)
            if facts.non_negative(node):
                return native
        return native if call is not None and self._observed_decision(call, f"nonnegative:{api}") else target

    def _batched_target(self, target: str, call: cst.Call, api: str) -> str:
        """``mindport.runtime.unbatched.NAME`` (a functional pool MindSpore's op takes only batched, given torch's
        unbatched input too: mindport.mappings.unbatched.FUNCTIONS) at a site whose every input in a recorded torch
        run was a batch of that rank (``convert --facts``: ``"batched:<api>"``): MindSpore's own ``ops.NAME``. Where
        the code shows it (a class's methods), native_facts.native_batched_functions decides after the rewrite."""
        name = target.rpartition(".")[2]
        if target.startswith(_UNBATCHED_FUNCTIONS) and self._observed_decision(call, f"batched:{api}"):
            return f"mindspore.ops.{name}"
        return target

    def _values_target(self, target: str, call: cst.Call) -> str:
        """The runtime topk (written out for torch's int64 indices) where only the values are read
        (native_facts.values_only: ``v, _ = torch.topk(logits, k)``, ``x.topk(k)[0]``): MindSpore's own, which
        takes the same arguments."""
        native = NATIVE_VALUES_ONLY.get(target)
        if native is None or not values_only(call, self._functions[-1] if self._functions else None):
            return target
        return native

    def _indices_target(self, target: str, call: cst.Call) -> str:
        """The runtime topk where only the indices are read, in the expression (native_facts.indices_read:
        ``torch.topk(logits, k, dim=1)[1]``, ``x.topk(k).indices``): MindSpore's own (NATIVE_VALUES_ONLY: the same
        arguments), the indices it gives cast to torch's int64 where they are read (:meth:`_int64_indices`)."""
        native = NATIVE_VALUES_ONLY.get(target)
        if native is None or not indices_read(call, self._functions[-1] if self._functions else None):
            return target
        self._indices_calls.add(id(call))
        return native

    def _int64_indices(self, original_node, updated_node):
        """``ops.topk(x, k)[1]`` of a call :meth:`_indices_target` made MindSpore's: ``.astype(ms.int64)`` (torch's
        indices are int64, MindSpore's int32); the node as it is otherwise."""
        inner = original_node.value
        if id(inner) not in self._indices_calls:
            return updated_node
        return cst.Call(func=cst.Attribute(value=updated_node, attr=cst.Name("astype")),
                        args=[cst.Arg(self.ctx.target_expr("mindspore.int64"))])

    def _native_einsum(self, call: cst.Call) -> cst.BaseExpression | None:
        """``torch.einsum('b h i d, b h j d -> b h i j', q, k)`` (a literal equation that is one batched matrix
        product, or a product that sums nothing): MindSpore's own ops (einsum_native.native_einsum: ``ops.matmul(q,
        k.swapaxes(-1, -2))``, ``ops.outer``, ``ops.movedim``/``ops.expand_dims``/``ops.permute`` around a matmul,
        ``ops.expand_dims(a, 3) * b``)."""
        args = call.args
        if len(args) < 3 or any(a.star or a.keyword is not None for a in args):
            return None
        equation = _literal_text(args[0].value)
        if not isinstance(equation, str):
            return None
        return native_einsum(equation, [a.value for a in args[1:]],
                             lambda name: self.ctx.target_expr(f"mindspore.ops.{name}"))

    def _native_normalize(self, entry, call: cst.Call) -> cst.BaseExpression | None:
        """``F.normalize(x, dim=-1)`` of a name (MindSpore 2.10 has no ops.normalize; mint's has no CPU kernel):
        what the runtime's normalize computes, written with MindSpore's own ops, ``(x / ops.clamp(ops.norm(x, 2.0,
        -1, keepdim=True), min=1e-12))`` (the same ops on the same values: the same numbers, in every dtype and
        mode). Only where the input is a name and ``p``, ``dim`` and ``eps`` are names, attributes or numbers (the
        input is read twice, each of them once); elsewhere ``mp_F.normalize``."""
        try:
            bound = bind_arguments(entry, list(call.args))
        except (CallBindError, RunTimeArguments, Unsupported):
            return None
        x, out = bound.get("input"), bound.get("out")
        if x is None or not isinstance(x.node, cst.Name) or (out is not None and out.given
                                                              and out.source.strip() != "None"):
            return None
        parts = []
        for name in ("p", "dim", "eps"):
            arg = bound.get(name)
            if arg is None:
                return None
            node = arg.node if arg.given else cst.parse_expression(arg.source)
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
                node = node.expression
            if not isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float)) \
                    or (isinstance(node, cst.Attribute) and not isinstance(node.value, cst.Name)):
                return None
            parts.append(arg.source.strip())
        p, dim, eps = parts
        name = x.node.value
        ops_clamp, ops_norm = self.ctx.target_text("mindspore.ops.clamp"), self.ctx.target_text("mindspore.ops.norm")
        return cst.parse_expression(f"({name} / {ops_clamp}({ops_norm}({name}, {p}, {dim}, keepdim=True), min={eps}))")

    def _input_node(self, entry, call: cst.Call):
        """The original node of a function call's first torch argument (``input``)."""
        try:
            bound = bind_arguments(entry, list(call.args))
        except (CallBindError, RunTimeArguments):
            return None
        first = entry.signature[0].name if entry.signature else None
        arg = bound.get(first) if first else None
        return arg.node if arg is not None and arg.given else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._inner.add(id(node.name))
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        if not any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in body):
            self._class_bases.update((id(b.value), node) for b in node.bases if b.keyword is None)
        self._any_bases.update(id(b.value) for b in node.bases if b.keyword is None)
        self._class_scopes.add(id(self.scope))  # the engine has entered the class's scope
        facts = ClassFacts(node, self.scope.resolve_torch, self._inplace_true, self._file_facts, self._builds_cell,
                           self.scope.resolve)
        self._native_inplace |= facts.native_inplace
        self._native_softmax |= facts.native_softmax
        self._native_lists |= facts.native_lists
        self._runtime_lists |= facts.runtime_lists
        self._class_layers.append(facts.layers)
        self._class_causal.append(facts.causal)
        self._class_float_layers.append(facts.float_layers)
        self._class_nodes.append(node)
        self._class_hoisted.append(facts.hoisted)

    def _built_after_init(self) -> bool:
        """In a method of the enclosing class that its ``forward`` runs and its ``__init__`` does not (directly or
        through its own ``self.m(...)`` calls). A layer built there is a fresh one each call, in torch's training
        mode whatever the owner's (RexYing/diffpool's ``apply_bn``: ``nn.BatchNorm1d(x.size()[1])(x)``, batch
        statistics in torch's eval forward; MindSpore's Cell, in inference mode, normalised with its moving ones and
        the three encoders using it diverged); one ``__init__`` builds is registered, and the owner's
        ``train()``/``eval()`` governs it. A method neither runs (a builder object's ``Conv2dBN(...)``, called from
        other classes' ``__init__``: DingXiaoH/ACNet's ConvBuilder) builds a layer its caller registers."""
        if not self._class_nodes or not self._functions:
            return False
        cls = self._class_nodes[-1]
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        methods = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
        method = next((f for f in self._functions if methods.get(f.name.value) is f), None)
        if method is None or "__init__" not in methods or "forward" not in methods:
            return False

        def reached_from(start: str) -> set[str]:
            reached, todo = set(), [start]
            while todo:
                name = todo.pop()
                if name in reached or name not in methods:
                    continue
                reached.add(name)
                todo.extend(_self_called(methods[name]))
            return reached

        name = method.name.value
        return name in reached_from("forward") and name not in reached_from("__init__")

    def _in_class(self) -> bool:
        scope = self.scope
        while scope is not None:
            if id(scope) in self._class_scopes:
                return True
            scope = scope.parent
        return False

    def _classmethod_through_layer(self, func) -> str | None:
        """``self.embedding.from_pretrained(w)`` (the layer built in ``__init__`` as ``nn.Embedding(...)``) and
        ``nn.Embedding(v, d).from_pretrained(w)``: a classmethod of torch's layer called through one of its objects,
        which builds a new layer as the class's call does (MindSpore's Embedding has no such method: "The 'Embedding'
        object has no attribute 'from_pretrained'", Doragd/Text-Classification-PyTorch). The classmethod's own name
        (``torch.nn.Embedding.from_pretrained``) where it has an entry and the object's class is known; else None."""
        if not isinstance(func, cst.Attribute) or func.attr.value not in _LAYER_CLASSMETHODS:
            return None
        owner = func.value
        if isinstance(owner, cst.Call):
            calls = [owner]
        elif isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self" \
                and self._class_layers:
            calls = [c for c in self._class_layers[-1].get(owner.attr.value) or []  # (its own rebinding left out)
                     if not (isinstance(c.func, cst.Attribute) and c.func.attr.value in _LAYER_CLASSMETHODS)]
        else:
            return None
        classes = {self.scope.resolve_torch(c.func) for c in calls if isinstance(c, cst.Call)}
        if len(calls) == 0 or len(classes) != 1 or None in classes:
            return None
        qual = f"{classes.pop()}.{func.attr.value}"
        return qual if self.ctx.registry.lookup(qual) is not None else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self.ctx.handled:
            return updated_node
        if id(original_node) in self._partial_calls:
            bound = self._partial_lambda(original_node)
            if bound is not None:
                self.ctx.converted_sites += 1
                return bound
        qual = self.scope.resolve_torch(original_node.func) or self._classmethod_through_layer(original_node.func)
        if qual is None:
            return self._method_call(original_node, updated_node)
        entry = self.ctx.registry.lookup(qual)
        if entry is None:
            if not self._package_site(original_node, qual):
                self.flag(original_node, "MP103", f"{qual} has no mapping entry: left unconverted",
                          OVERLAY_HINT, qual)
            return updated_node
        target, profile = entry.resolve(self.ctx.options.target)
        if not entry.supported or target is None:
            reason = entry.reason or f"no {self.ctx.options.target!r} target"
            self.flag(original_node, "MP101", f"{qual} is not supported: {reason}", "rewrite by hand", qual)
            return updated_node
        if qual in _LEGACY_CONSTRUCTORS:
            updated_node = _sizes_starred(original_node, updated_node, self.scope)
            sized = self._sized_constructor(qual, original_node, updated_node)
            if sized is None:  # torch.FloatTensor((b, 1, 1, 1)): a tensor of those numbers
                sized = self._data_constructor(qual, original_node, updated_node)
            if sized is not None:  # torch.Tensor(heads, d): zeros of those sizes
                self.ctx.converted_sites += 1
                return sized
        if entry.kind == "attribute":
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=self._func_expr(original_node.func, entry.called or target))
        first = original_node.args[0] if original_node.args else None
        chain = view_chain(first.value, self.scope) if qual.startswith("torch.nn.init.") and qual.endswith("_") \
            and first is not None and first.keyword is None and not first.star else None
        if chain is not None and chain.steps is not None and id(original_node) in self._statement_calls:
            # nn.init.ones_(w.narrow(1, 0, 2)), nn.init.constant_(w.diagonal(), 5): filled in a copy, written back
            self._view_updates[id(original_node)] = chain
        elif chain is not None:
            self.flag(original_node, "MP102", f"{qual} on a torch view ({', '.join(chain.names)}): MindSpore's views "
                      "are copies, so the initialisation would be lost", "initialise a tensor and assign it", qual)
            return updated_node
        elif qual.startswith("torch.nn.init.") and qual.endswith("_") and id(original_node) in self._statement_calls \
                and first is not None and first.keyword is None and not first.star \
                and isinstance(first.value, cst.Subscript):
            # nn.init.kaiming_uniform_(self.weight[i]) (one member of an ensemble's stacked weights): indexing makes
            # a copy in MindSpore, which the runtime init fills and returns: assigned back by leave_Expr
            self._indexed_updates[id(original_node)] = first.value
        if target == RUNTIME_EINSUM:
            native = self._native_einsum(updated_node)
            if native is not None:
                self.ctx.converted_sites += 1
                return native
        if target == RUNTIME_NORMALIZE:
            native = self._native_normalize(entry, updated_node)
            if native is not None:
                self.ctx.converted_sites += 1
                return native
        if self.scope.is_local_alias(original_node.func) and (target.startswith(".") or needs_mapping(entry)) \
                and (target.startswith(".") or original_node.func.value not in self.ctx.fixed_aliases):
            # `act = F.gelu` holds the runtime adapter (ReferenceTransform): `act(x, approximate="tanh")` keeps
            # torch's arguments, whatever else `act` may hold on another path
            self.ctx.converted_sites += 1
            return updated_node
        if target == RUNTIME_GAIN:
            gain = _literal_gain(original_node)
            if gain is not None:  # nn.init.calculate_gain('relu'): torch's number, written as it is
                self.ctx.converted_sites += 1
                return gain
        out = next((a for a in updated_node.args if a.keyword is not None and a.keyword.value == "out"), None)
        if out is not None and entry.unsupported.get("out") == OUT_REASON:
            # torch.add(a, b, out=c): the call without out=, its result written into c (which it returns)
            without = updated_node.with_changes(args=fix_commas([a for a in updated_node.args if a is not out]))
            built = self.leave_Call(original_node, without)
            if built is without:  # flagged for another argument: the line keeps its torch meaning
                return updated_node
            if isinstance(out.value, cst.Name) and out.value.value == "None":
                return built  # out=None: torch's default
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.inplace.write_out"),
                            args=[cst.Arg(out.value), cst.Arg(built)])
        try:
            bound = self._sizes_as_tuples(entry, self._python_type_dtypes(
                bind_arguments(entry, list(updated_node.args))))
            if entry.kind == "layer":
                bound = self._shapes_of_axes(self._flags_as_bools(self._numpy_sizes_as_ints(bound)))
            if id(original_node) in self._native_inplace and "inplace" in bound:
                bound["inplace"] = Arg("False", False)  # no reader of the input afterwards: out of place is the same
            mapped = map_arguments(entry, bound, profile)
            target = self._non_negative_pad(switched_target(mapped, target), target, mapped, original_node,
                                            _api_name(entry))
            if id(original_node) in self._native_lists or (qual == "torch.nn.ModuleList"
                                                           and cells_display(original_node, self._builds_cell)
                                                           and id(original_node) not in self._runtime_lists) \
                    or (qual == "torch.nn.ModuleList" and member_list(
                        original_node, self._dict_members.get(id(original_node)), self._file_facts,
                        self._builds_cell)):
                target = NATIVE_LIST
            input_node = self._input_node(entry, original_node)
            target = self._unmasked_target(self._guard_target(target, input_node, original_node, _api_name(entry)),
                                           mapped, input_node, original_node, _api_name(entry))
            target = self._local_body_target(target, input_node, original_node, _api_name(entry))
            target = self._native_like(target, mapped, input_node)
            target = self._float_accumulate_target(target, mapped, input_node, original_node, _api_name(entry))
            target = self._raising_extent_target(target, mapped, input_node, original_node, _api_name(entry))
            target = self._elementwise_extreme_target(target, mapped, input_node, original_node)
            target = _sized_interpolate_target(target, mapped, lambda name, node=original_node: loop_index(
                name, node, getattr(self, "_module", None)))
            target = self._absorbed_target(target, mapped, original_node, input_node)
            target = self._nonempty_target(target, mapped, original_node, _api_name(entry), input_node)
            target = self._batched_target(target, original_node, _api_name(entry))
            if target in NATIVE_PLAIN_DATA and self._observed_decision(original_node, f"plain:{_api_name(entry)}"):
                target = NATIVE_PLAIN_DATA[target]  # the data never held a tensor (mindport.observed)
            target = self._indices_target(self._values_target(target, original_node), original_node)
            if target in LEGACY_EMPTY_CAT and empty_cat_members(
                    original_node, self._empty_locals(), self._empty_attributes, self.scope.resolve_torch):
                target = LEGACY_EMPTY_CAT[target]
            if target in NATIVE_SOFTMAX_LAYER and _explicit_dim(mapped) \
                    and (id(original_node) in self._native_softmax or not self._cpu_guarded()):
                target, renames = NATIVE_SOFTMAX_LAYER[target]
                mapped.update((new, mapped.pop(old)) for old, new in renames.items() if old in mapped)
            if not self._cpu_guarded():
                target = CPU_GUARD_LAYERS.get(target, target)
            if self.ctx.options.float64_free:  # no float64 parameter can arrive: MindSpore's own optimizer
                target = NATIVE_OPTIMIZERS.get(target, target)
            else:  # a float64 tensor may arrive: the layers whose MindSpore kernel refuses it compute it themselves
                target = FLOAT64_LAYERS.get(target, target)
            if self.ctx.options.conv1d_settings_unread and target in SETTINGS_LAYERS:
                target = settings_native(target, mapped)  # no code reads a Conv1d's settings back: MindSpore's own
            self._resolve_ms_names(mapped)
        except RunTimeArguments:
            chosen = self._switched_by_flag(original_node, updated_node, entry, qual)
            if chosen is not None:
                return chosen
            # *args/**kwargs at the call site: a native factory with torch's parameters where the entry converts
            # statically for every value (mindport/migrator/factories.py), else the runtime adapter, which maps them
            # through the same entry at the call
            self.ctx.converted_sites += 1
            direct = entry.resolve(self.ctx.options.target)[0]
            if entry.kind == "function" and not needs_mapping(entry) and not entry.switch \
                    and not direct.startswith(".") and target == direct:
                # an entry whose calls need nothing mapped (torch.compile -> mp_framework.compile): the target takes
                # torch's arguments as they are, whatever *args/**kwargs hold, so it is called where it is written
                return updated_node.with_changes(func=self._func_expr(original_node.func, direct))
            factory = self._native_factory(original_node.func, entry)
            return updated_node.with_changes(func=factory or adapter_expr(self.ctx, qual))
        except CallBindError as exc:
            self.flag(original_node, "MP102", f"{qual}: {exc}", "pass arguments explicitly", qual)
            return updated_node
        except Unsupported as exc:
            self.flag(original_node, "MP102", f"{qual}: {exc}", "", qual)
            return updated_node
        self.ctx.converted_sites += 1
        if target.startswith("."):
            # A method on the first MindSpore argument (e.g. torch.transpose(x, 0, 1) -> x.swapaxes(0, 1)).
            receiver = arg_expression(mapped.pop(receiver_name(entry, mapped)))
            func = cst.Attribute(value=parenthesize(receiver), attr=cst.Name(target[1:]))
            return updated_node.with_changes(func=func, args=build_call_args(entry, mapped, profile))
        built = updated_node.with_changes(func=self._func_expr(original_node.func, target),
                                          args=build_call_args(entry, mapped, profile))
        built = self._promoted_join(entry, original_node, built)
        if target == NATIVE_LIST:
            built = _native_list_argument(built)
        if entry.starts_training and (not self._in_class() or self._built_after_init()) \
                and not self._building_factory:
            # torch builds every module in training mode, MindSpore's Cells start in eval: a layer built outside a
            # class, or in a method its __init__ does not run (forward's ``nn.BatchNorm1d(x.size(1))(x)``), where no
            # enclosing module's mode governs it, is put in training mode, as torch's is. In a method, a norm takes
            # the batch's statistics by its own argument: a static graph (GRAPH_MODE) cannot call what
            # ``.set_train()`` returns ("The object is not callable")
            if self._in_class() and target in _BATCH_STATISTICS_LAYERS:
                args = [a for a in built.args if not (a.keyword is not None and a.keyword.value == _BATCH_STATISTICS)]
                return built.with_changes(args=[*args, cst.Arg(keyword=cst.Name(_BATCH_STATISTICS),
                                                               value=cst.Name("True"), equal=NO_SPACE_EQUAL)])
            return cst.Call(func=cst.Attribute(value=built, attr=cst.Name("set_train")), args=[])
        return built

    def _method_call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """``x.view(...)`` and friends, through the ``torch.Tensor.*`` entries, when ``x`` is plausibly a tensor."""
        func = original_node.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func) is not None:
            return updated_node
        fill = self._fresh_fill(original_node, updated_node)
        if fill is None:  # torch.rand(n).uniform_(-0.1, 0.1): a draw shaped like the new tensor
            fill = self._fresh_draw(original_node, updated_node)
        if fill is None:  # mask = torch.empty(...); mask.bernoulli_(p): the draw rebinds the unaliased local
            fill = self._unaliased_draw(original_node, updated_node)
        if fill is not None:  # torch.zeros(1, 1, dim).fill_(eps): ops.full_like of the new tensor
            self.ctx.converted_sites += 1
            return fill
        entry = self.ctx.registry.lookup(f"torch.Tensor.{func.attr.value}")
        plain = self._fresh_out_of_place(original_node) or self._unaliased_update(original_node)
        if plain is not None:  # torch.empty(n, n).fill_(v).triu_(1): nothing else holds the receiver
            entry = plain
        method_name = func.attr.value if plain is None else plain.torch.rpartition(".")[2]
        if entry is None and method_name in _unmapped_tensor_methods() \
                and receiver_kind(func.value, self.scope) == "tensor":
            self.flag(original_node, "MP103", f"torch.Tensor.{method_name} has no mapping entry: left unconverted",
                      OVERLAY_HINT, f"torch.Tensor.{method_name}")
            return updated_node
        if entry is None and method_name in _removed_tensor_methods() and plain is None and (
                method_name in _REMOVED_ON_ANY_RECEIVER or receiver_kind(func.value, self.scope) == "tensor"):
            self.flag(original_node, "MP103", f"torch.Tensor.{method_name} is torch 1.x's (torch 2.x's Tensor has "
                      f"no such method, torch.fft took it over): left unconverted",
                      f"call torch.fft's function instead (x.{method_name}(n) of torch 1.x is torch.{method_name}(x, "
                      f"n), which mindport maps where it has an entry), then convert")
            return updated_node
        if entry is None or entry.kind != "method":
            return updated_node
        target, profile = entry.resolve(self.ctx.options.target)
        if target is None or not entry.supported:
            if self._plausible(func, strict=True):
                self.flag(original_node, "MP101", f"{entry.torch} is not supported: {entry.reason}", "", entry.torch)
            return updated_node
        numpy_names = _numpy_names(entry, updated_node)
        ambiguous = numpy_names and self._maybe_numpy(func)  # a.std(axis=0): numpy's call, or torch's?
        keywords = any(a.keyword is not None and (entry.positional or a.keyword.value in _spread_names(entry))
                       for a in updated_node.args)
        extra = sum(1 for a in updated_node.args if a.keyword is None and not a.star) \
            > sum(1 for p in entry.signature or () if p.kind == "positional")  # x.addcmul(0.5, a, b): torch's order
        if target == f".{method_name}" and not needs_mapping(entry) and (not numpy_names or ambiguous) \
                and not keywords and not extra:
            if plain is not None:
                self.ctx.converted_sites += 1
                return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name(method_name)))
            return updated_node  # same method, same arguments (keywords of a `positional` entry are written
            # positionally: in a static graph MindSpore's Tensor methods take other keywords, or other kernels)
        if _swap_either_way(original_node) and not self._torch_swap(original_node) \
                and receiver_kind(original_node.func.value, self.scope) in ("other", "python", "tensor"):
            # x.transpose(-1, -2) of a receiver of unknown kind in a file that imports numpy: a swap for torch and
            # for numpy's transpose alike; numpy and MindSpore both take swapaxes' two axes positionally
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name("swapaxes")))
        swap = self._torch_swap(original_node) or self._torch_expand(original_node)
        strict = self._strict_name(method_name, target) and not self._torch_keywords(updated_node)
        if not swap and not self._plausible(func, strict=strict):
            return updated_node
        in_place = method_name.endswith("_") and method_name not in _FLAG_METHODS
        chain = view_chain(original_node.func.value, self.scope) if in_place else None
        if chain is not None and chain.steps is None:
            self.flag(original_node, "MP102", f"{entry.torch} on a torch view whose arguments are computed by calls: "
                      "MindSpore's views are copies, so the update would be lost",
                      "name the arguments first, or assign the result back", entry.torch)
            return updated_node
        if chain is not None and id(original_node) in self._statement_calls:
            self._view_updates[id(original_node)] = chain  # written back into the base by leave_Expr
        elif chain is not None:
            self.flag(original_node, "MP102", f"{entry.torch} on a torch view ({', '.join(chain.names)}): MindSpore's views are "
                      "copies, so the update would be lost", "write the update as a statement of its own", entry.torch)
            return updated_node
        indexed_view = (in_place and chain is None
                        and isinstance(func.value, cst.Subscript) and not _keyed(func.value))
        if indexed_view and id(original_node) in self._statement_calls \
                and (isinstance(original_node.func.value.value, (cst.Name, cst.Attribute))
                     or _merged_subscript(original_node.func.value) is not None):
            self._indexed_updates[id(original_node)] = func.value  # assigned back by leave_Expr
        elif indexed_view:
            self.flag(original_node, "MP102", f"{entry.torch} on an indexed view: indexing a MindSpore tensor makes a "
                      "copy, so the update would be lost", "assign the result: x[i] = <out-of-place op>(x[i], ...)",
                      entry.torch)
            return updated_node
        try:
            mapped = map_arguments(entry, self._sizes_as_tuples(entry, self._python_type_dtypes(
                bind_arguments(entry, list(updated_node.args)))), profile)
            target = switched_target(mapped, target)
            target = self._unmasked_target(self._guard_target(target, func.value, original_node, _api_name(entry)),
                                           mapped, func.value, original_node, _api_name(entry))
            target = self._local_body_target(target, func.value, original_node, _api_name(entry))
            target = self._float_accumulate_target(target, mapped, func.value, original_node, _api_name(entry))
            target = self._raising_extent_target(target, mapped, func.value, original_node, _api_name(entry))
            target = self._elementwise_extreme_target(target, mapped, func.value, original_node)
            target = self._absorbed_target(target, mapped, original_node, func.value)
            target = self._nonempty_target(target, mapped, original_node, _api_name(entry), func.value)
            target = self._indices_target(self._values_target(target, original_node), original_node)
            self._resolve_ms_names(mapped)
        except RunTimeArguments:
            self.ctx.converted_sites += 1
            receiver = updated_node.func.value  # type: ignore[union-attr]
            if target.startswith(".") and _positional_only(entry, updated_node):
                # x.transpose(*self.shape): an entry that only renames takes the same arguments in the same places
                return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name(target[1:])))
            return updated_node.with_changes(func=adapter_expr(self.ctx, entry.torch),
                                             args=fix_commas([cst.Arg(value=receiver), *updated_node.args]))
        except CallBindError as exc:
            if receiver_kind(func.value, self.scope) != "tensor" or _parameter_torch_refuses(func.value, self.scope,
                                                                                        entry, updated_node):
                return updated_node  # flow.inverse(u, y), ax.scatter(x, y, s=10): arguments no torch.Tensor method
                # takes, so the receiver is the program's own object (or a library's), whose call stays as written
            self.flag(original_node, "MP102", f"{entry.torch}: {exc}", "pass arguments explicitly", entry.torch)
            return updated_node
        except Unsupported as exc:
            self.flag(original_node, "MP102", f"{entry.torch}: {exc}", "", entry.torch)
            return updated_node
        receiver = updated_node.func.value  # type: ignore[union-attr]
        if target == RUNTIME_BOOL and not mapped and self._real_input(func.value):
            # x.bool() of a real tensor by construction: the runtime's only decision is complex (x != 0) or not
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name("astype")), args=[
                cst.Arg(cst.parse_expression(f"{self.ctx.alias_for('mindspore')}.bool_"))])
        cast = self._dtype_cast(target, mapped)
        if cast is not None:  # h.type(x.dtype): a cast to a dtype, MindSpore's astype
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=updated_node.func.with_changes(attr=cst.Name("astype")),
                                             args=[cst.Arg(cast)])
        if ambiguous:  # torch's reading must give the text as written, or the call is flagged
            args = build_call_args(entry, dict(mapped), profile)
            if target == f".{method_name}" and code_of(updated_node.with_changes(args=args)) == code_of(updated_node):
                return updated_node
            self.flag(original_node, "MP102", f"{entry.torch} with numpy's keyword names on a value that may be a "
                      "numpy array: converting it for a tensor would break it for an array",
                      "if it is a tensor, write torch's names (dim=, keepdim=); if an array, leave it", entry.torch)
            return updated_node
        self.ctx.converted_sites += 1
        if method_name.endswith("_") and isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value  # p.data.zero_(): MindSpore's Parameter.data is a copy, update p itself
        args = build_call_args(entry, mapped, profile)
        if target.startswith("."):
            method = updated_node.func.with_changes(value=receiver, attr=cst.Name(target[1:]))
            return updated_node.with_changes(func=method, args=args)
        return updated_node.with_changes(func=self.ctx.target_expr(target),
                                         args=fix_commas([cst.Arg(value=receiver), *args]))

    def _fresh_fill(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``x.fill_(v)`` whose receiver nothing else holds (_fresh_receiver: ``torch.zeros(1, 1, dim).fill_(eps)``,
        CaiT's LayerScale; ``torch.empty(n, n).fill_(-np.inf).triu_(1)``, Whisper's mask) and whose result is read
        (not a statement): torch's fill keeps the receiver's shape and dtype (``2.7`` into an int64 tensor is 2; a
        0-d tensor value is its number), which is ``ops.full_like(receiver, v)``, the runtime fill_'s own value
        with no receiver to write it into; ``zero_()`` likewise ``ops.zeros_like(receiver)`` (a legacy constructor
        given sizes is such a receiver too: ResNeXt's shortcut ``torch.Tensor(n, c, d, h, w).zero_()``). None
        otherwise (the runtime fill_ writes the value into its receiver)."""
        func = original.func
        if func.attr.value not in FRESH_FILLS or id(original) in self._statement_calls \
                or not (_fresh_receiver(func.value, self.scope.resolve_torch) or _visible_sizes(func.value) and
                        self.scope.resolve_torch(func.value.func) in SIZED_CONSTRUCTORS):
            return None
        args = updated.args
        if func.attr.value in FRESH_ZEROS:  # x.new_empty(n).zero_(): ops.zeros_like of it
            if args:
                return None
            if self.scope.resolve_torch(func.value.func) in SIZED_CONSTRUCTORS.keys() | {"torch.zeros"}:
                return updated.func.value  # torch.Tensor(n, c - k, h, w).zero_(): zeros already
            return cst.Call(func=self.ctx.target_expr(FRESH_FILLS[func.attr.value]),
                            args=[cst.Arg(value=updated.func.value)])
        if len(args) != 1 or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "value"):
            return None
        return cst.Call(func=self.ctx.target_expr(FRESH_FILLS[func.attr.value]),
                        args=fix_commas([cst.Arg(value=updated.func.value),
                                         cst.Arg(value=args[0].value)]))

    def _fresh_draw(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``x.uniform_(a, b)`` whose receiver nothing else holds (_fresh_receiver: the attentions' ``nn.Parameter(
        torch.rand(n).uniform_(-0.1, 0.1))``, CaiT's ``torch.zeros(num_layers).uniform_(0., 1.) < dropout``) and whose
        result is read (not a statement): the runtime uniform_ exists because MindSpore has no CPU kernel for the
        in-place draw, and writes ``ops.rand * (to - from) + from`` into its receiver; with no receiver anyone else
        reads, that value alone is the result: MindSpore's own ``ops.rand_like(receiver) * (to - from) + from``
        (FRESH_DRAWS; rand_like keeps the receiver's shape and floating dtype, a Python number keeps it in the
        arithmetic). A ``generator=``, a starred or unknown argument: None (the runtime's, which draws from that
        generator's stream)."""
        func = original.func
        draw = FRESH_DRAWS.get(func.attr.value)
        if draw is None or id(original) in self._statement_calls \
                or not _fresh_receiver(func.value, self.scope.resolve_torch):
            return None
        target, params, scale, shift = draw
        bound: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(updated.args):
            name = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
            if arg.star or name not in params or name in bound:
                return None
            bound[name] = arg.value
        value: cst.BaseExpression = cst.Call(func=self.ctx.target_expr(target), args=[cst.Arg(value=updated.func.value)])
        factor = _draw_term(scale, bound)
        if factor is not None:
            value = cst.BinaryOperation(left=value, operator=cst.Multiply(), right=_parenthesized(factor))
        offset = _draw_term(shift, bound)
        if offset is not None:
            value = cst.BinaryOperation(left=value, operator=cst.Add(), right=_parenthesized(offset))
        return value if factor is None and offset is None else value.with_changes(lpar=[cst.LeftParen()],
                                                                                   rpar=[cst.RightParen()])

    def _unaliased_draw(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``mask.bernoulli_(p)`` called as a statement on a local name whose tensor nothing else holds
        (native_facts.unaliased_local_update: every binding a new tensor, ``mask = torch.empty(shape, dtype=x.dtype)``,
        kuangliu's EfficientNet drop_connect; no parameter, no loop, no reference kept by an earlier read): the
        runtime bernoulli_ exists because MindSpore's Bernoulli kernels refuse half receivers (ops.bernoulli) or have
        no CPU kernel (BernoulliExt), and writes ``rand_like(m) < p`` in ``m``'s dtype into its receiver; with no
        other holder, that value rebinding the name is the update (leave_Expr, ``_local_rebinds``): ``mask =
        (ops.rand_like(mask, dtype=ms.float32) < p).astype(mask.dtype)``, MindSpore's own ops for every receiver dtype
        (a float draw compared with ``p``, a number or a tensor broadcast against it as torch's is). A ``generator=``,
        a starred or unknown argument, a result that is read: None (the runtime's)."""
        func = original.func
        draw = UNALIASED_DRAWS.get(func.attr.value)
        if draw is None or id(original) not in self._statement_calls or not isinstance(func.value, cst.Name) \
                or not isinstance(updated.func, cst.Attribute) or not isinstance(updated.func.value, cst.Name) \
                or not self._functions:
            return None
        param, default = draw
        args = updated.args
        if len(args) > 1 or any(a.star for a in args) \
                or any(a.keyword is not None and a.keyword.value != param for a in args):
            return None
        resolve = self.scope.resolve_torch

        def fresh(value) -> bool:
            return isinstance(value, cst.BinaryOperation) or _fresh_receiver(value, resolve)

        if not unaliased_local_update(self._functions[-1], original, func.value.value, fresh,
                                      owned=self._owned()):
            return None
        receiver = updated.func.value
        probability = args[0].value if args else cst.Float(default)
        draw_call = cst.Call(func=self.ctx.target_expr("mindspore.ops.rand_like"),
                             args=[cst.Arg(value=receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                   cst.Arg(keyword=cst.Name("dtype"), value=self.ctx.target_expr("mindspore.float32"),
                                           equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                                 whitespace_after=cst.SimpleWhitespace("")))])
        below = cst.Comparison(left=draw_call, comparisons=[cst.ComparisonTarget(
            operator=cst.LessThan(), comparator=_parenthesized(probability))],
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self._local_rebinds.add(id(original))
        return cst.Call(func=cst.Attribute(value=below, attr=cst.Name("astype")),
                        args=[cst.Arg(value=cst.Attribute(value=receiver, attr=cst.Name("dtype")))])

    def _sized_constructor(self, qual: str, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``torch.Tensor(heads, d_head)`` (the attentions' ``nn.Parameter(torch.Tensor(h, d))`` before an init),
        ``torch.FloatTensor(3)``: a legacy constructor given sizes, visibly (two or more positional arguments, which
        torch reads only as sizes, or one integer literal), and nothing else: the runtime constructor's own value,
        zeros of those sizes in the class's dtype (torch leaves them uninitialised), ``ops.zeros((h, d),
        ms.float32)`` (SIZED_CONSTRUCTORS). None otherwise (one argument that may be data, a star, a keyword)."""
        dtype = SIZED_CONSTRUCTORS.get(qual)
        if dtype is None or not _visible_sizes(original) or len(updated.args) != len(original.args):
            return None
        sizes = cst.Tuple([cst.Element(a.value) for a in updated.args])
        return cst.Call(func=self.ctx.target_expr("mindspore.ops.zeros"),
                        args=[cst.Arg(sizes), cst.Arg(self.ctx.target_expr(dtype))])

    def _data_constructor(self, qual: str, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``torch.FloatTensor((x.shape[0], 1, 1, 1))`` (MaxViT's dropsample), ``torch.LongTensor([n, 1])``: a legacy
        constructor given one list or tuple display of Python numbers by construction (:func:`_number_data`), which
        torch reads as data (a sequence is never sizes), copied into a new tensor of the class's dtype: MindSpore's
        ``ms.Tensor((x.shape[0], 1, 1, 1), ms.float32)``, the runtime constructor's own value for such data. None
        otherwise (a name, a tensor, sizes, a display holding anything else: the runtime constructor decides)."""
        dtype = SIZED_CONSTRUCTORS.get(qual)
        data = [a for a in updated.args if a.keyword is None]
        if dtype is None or not _number_data(original, dtype in DATA_CONSTRUCTOR_FLOATS) or len(data) != 1:
            return None
        return cst.Call(func=self.ctx.target_expr("mindspore.Tensor"),
                        args=[cst.Arg(data[0].value), cst.Arg(self.ctx.target_expr(dtype))])

    def _fresh_out_of_place(self, call: cst.Call):
        """The out-of-place entry (``torch.Tensor.triu`` for ``triu_``, same signature) of an in-place method that
        keeps its receiver's dtype out of place too (its entry says ``keeps_dtype``: an in-place update keeps the
        receiver's dtype, while ``add_`` of a float32 tensor into a float16 one would be float32 out of place), whose receiver is a tensor nothing else holds (_fresh_receiver: ``torch.empty(n, n).fill_(-inf).triu_(1)``,
        ``x.new_ones((i, j)).triu_(k)``), in an expression (its result is read): the update of such a receiver is
        its out-of-place result, values and gradients, so MindSpore's own method does, where the in-place entry
        needs the runtime's write-back. None otherwise."""
        func = call.func
        name = func.attr.value
        if not name.endswith("_") or id(call) in self._statement_calls:
            return None
        inplace = self.ctx.registry.lookup(f"torch.Tensor.{name}")
        if inplace is None or not (inplace.keeps_dtype or inplace.metadata_only):
            return None
        if not _fresh_receiver(func.value, self.scope.resolve_torch) and not (
                inplace.metadata_only and self._new_object(func.value)):
            return None
        plain = self.ctx.registry.lookup(f"torch.Tensor.{name[:-1]}")
        if plain is None or plain.kind != "method" or not plain.supported \
                or not _same_arguments(plain, inplace, call):
            return None
        return plain

    def _unaliased_update(self, call: cst.Call):
        """The out-of-place entry (as :meth:`_fresh_out_of_place` takes it: same signature, the in-place entry
        ``keeps_dtype``) of an in-place method called as a statement on a local name whose tensor nothing else holds
        (native_facts.unaliased_local_update: sooftware/attentions' ``score.masked_fill_(mask, -inf)`` after ``score
        = torch.bmm(q, k.transpose(1, 2)) / sqrt(d)``): the statement becomes ``score = score.masked_fill(...)``
        (leave_Expr, ``_local_rebinds``), MindSpore's own method, where the runtime's write-back into the object
        served readers that here do not exist. None otherwise."""
        func = call.func
        name = func.attr.value
        if not name.endswith("_") or id(call) not in self._statement_calls or not isinstance(func.value, cst.Name) \
                or not self._functions:
            return None
        inplace = self.ctx.registry.lookup(f"torch.Tensor.{name}")
        plain = self.ctx.registry.lookup(f"torch.Tensor.{name[:-1]}")
        if inplace is None or inplace.kind != "method" or plain is None or plain.kind != "method" \
                or not plain.supported or not _same_arguments(plain, inplace, call):
            return None
        resolve = self.scope.resolve_torch

        def fresh(value) -> bool:
            return isinstance(value, cst.BinaryOperation) or _fresh_receiver(value, resolve) \
                or new_result_call(value) and resolve(value.func) is None  # x.sum(dim=d, keepdim=True): a new tensor

        if not unaliased_local_update(self._functions[-1], call, func.value.value, fresh, owned=self._owned()):
            return None
        self._local_rebinds.add(id(call))
        if not inplace.keeps_dtype:
            self._recast.add(id(call))  # x.div_(r) keeps x's dtype, x.div(r) may promote: cast back
        return plain

    def _owned(self) -> frozenset[str]:
        """The current function's parameters whose every caller gives its tensor up (native_facts.owned_parameters):
        a module-level function only."""
        if len(self._functions) != 1 or self._class_nodes:
            return frozenset()
        return self._owned_params.get(self._functions[0].name.value, frozenset())

    def _new_object(self, expr) -> bool:
        """An expression whose value is a tensor object of its own, whatever data it shares: an operator's result,
        an index, a torch function's result (not an in-place one), a tensor method's (not one that may return its
        receiver itself: ``x.contiguous()``, ``x.float()``, ``x.to(d)``), the call of a layer of the class that gives
        a new tensor (``self.fc(y)`` of an ``nn.Linear``), an in-place method's on any of these. A change of that object's shape alone
        (``torch.einsum(...).unsqueeze_(1)``: gitE0Z9/pytorch-implementations' attention, which failed to compile
        in GRAPH_MODE through the runtime's in-place update) is seen by no one else."""
        if isinstance(expr, (cst.BinaryOperation, cst.Subscript)) or (
                isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not)):
            return True
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args) \
                or any(a.keyword is not None and a.keyword.value == "inplace" for a in expr.args):
            return False
        func = expr.func
        if isinstance(func, cst.Attribute) and self.scope.resolve(func) is None and func.attr.value.endswith("_") \
                and not func.attr.value.endswith("__") and func.attr.value not in _FLAG_METHODS \
                and func.attr.value in _tensor_methods():
            return self._new_object(func.value)  # an in-place method gives back its receiver: new when it is
        torch_name = self.scope.resolve_torch(expr.func)
        if torch_name is not None:
            entry = self.ctx.registry.lookup(torch_name)
            last = torch_name.rpartition(".")[2]
            return torch_name.startswith("torch.") and not last.endswith("_") and not (
                entry is not None and any(p.name == "inplace" for p in entry.signature or ()))
        func = expr.func
        return isinstance(func, cst.Attribute) and self.scope.resolve(func) is None \
            and not func.attr.value.endswith("_") and func.attr.value not in _MAY_RETURN_RECEIVER \
            and func.attr.value in _tensor_methods() or self._new_layer_output(expr)

    def _new_layer_output(self, call: cst.Call) -> bool:
        """A layer's call whose result is a new tensor holding none of its input (native_facts.layer_gives_new):
        ``self.fc(z)`` of an attribute every assignment of which builds such a layer (ozanciga/gans-with-pytorch's
        CT-GAN critic, ``self.l1(y).unsqueeze_(1).unsqueeze_(2)``), ``self.convs[i](x)``, or
        ``conv(x)`` of the target of a loop ``for conv in self.convs`` / ``for i, conv in enumerate(self.convs)``
        around it, bound nowhere else, over a ModuleList of such members (SKNet's ``conv(x).unsqueeze_(dim=1)``:
        each branch an ``nn.Sequential(conv, norm, nn.ReLU(inplace=False))``), in a class the file does not
        subclass."""
        if not self._class_nodes or not self._functions or not self._class_float_layers \
                or self._class_nodes[-1].name.value in self._file_facts.subclassed:
            return False
        layers, resolve = self._class_float_layers[-1], self.scope.resolve_torch
        func = call.func
        if _self_attribute(func) is not None:
            built = layers.get(func.attr.value, [])
            return bool(built) and all(layer_gives_new(c, resolve) for c in built)
        listed = None
        if isinstance(func, cst.Subscript) and _self_attribute(func.value) is not None:
            listed = func.value.attr.value
        elif isinstance(func, cst.Name):
            listed = self._loop_member_of(func)
        if listed is None:
            return False
        built = layers.get(listed, [])
        return bool(built) and all(list_members_give_new(c, resolve) for c in built)

    def _loop_member_of(self, name: cst.Name) -> "str | None":
        """``NAME`` of the loop ``for v in self.NAME`` (or ``for i, v in enumerate(self.NAME)``) around the name ``v``
        in the current function, when that loop's target is the function's only binding of ``v``."""
        function = self._functions[-1]
        parents = function_parents(function)
        node, parent = name, parents.get(id(name))
        while parent is not None and parent is not function:
            if isinstance(parent, cst.For) and node is parent.body:
                break
            node, parent = parent, parents.get(id(parent))
        else:
            return None
        loop = parent
        it, target = loop.iter, loop.target
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" \
                and len(it.args) == 1 and not it.args[0].star and it.args[0].keyword is None \
                and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            it, target = it.args[0].value, target.elements[1].value
        if not (isinstance(target, cst.Name) and target.value == name.value and _self_attribute(it) is not None):
            return None
        bound = [t for t in all_nodes(function, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                                 cst.CompFor, cst.NamedExpr, cst.Del))
                 if any(n.value == name.value for n in all_nodes(t.target, cst.Name))]
        bound += [a for a in all_nodes(function, cst.AsName) if any(n.value == name.value
                                                                   for n in all_nodes(a.name, cst.Name))]
        return it.attr.value if bound == [loop] else None

    def _dtype_cast(self, target: str, mapped: dict) -> cst.BaseExpression | None:
        """``x.type(d)`` (the runtime ``type``, which decides on the value: a dtype, a torch type name, nothing)
        where ``d`` is a dtype by construction, ``y.dtype`` or ``torch.float32``, a local name every binding of which
        is one (native_facts.dtype_name: ``orig_dtype = t.dtype``, a parameter defaulting to ``torch.float32`` that
        no call in the file gives anything but a dtype) or a property returning ``.dtype``
        (native_facts.dtype_property): the converted ``d``, for ``x.astype(d)``."""
        if target != RUNTIME_TYPE or set(mapped) != {"dtype"} or not mapped["dtype"].given:
            return None
        node = mapped["dtype"].node
        if isinstance(node, cst.Attribute) and node.attr.value == "dtype":
            return arg_expression(mapped["dtype"])
        if isinstance(node, cst.Name) and self._functions and dtype_name(
                self._functions[-1], node.value, getattr(self, "_module", None), self.scope.resolve_torch):
            return arg_expression(mapped["dtype"])
        attr = _self_attribute(node)
        if attr is not None and self._class_nodes and dtype_property(self._class_nodes[-1], attr[len("self."):]):
            return arg_expression(mapped["dtype"])
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.attr.value in TORCH_DTYPE_NAMES \
                and code_of(node) == self.ctx.target_text(f"mindspore.{node.attr.value}"):
            return node  # torch.float64, already written as ms.float64
        return None

    def _torch_swap(self, call: cst.Call) -> bool:
        """``k.transpose(-1, -2)`` on a receiver of unknown kind in a file that does not import numpy: two integer
        literals, torch's swap of two axes (numpy's transpose takes a permutation). Left as written, MindSpore's
        ``Tensor.transpose`` swaps them in PyNative but takes a permutation in GRAPH_MODE ("the number of axes must
        be equal to the dimension of Tensor")."""
        def integer(arg) -> bool:
            value = arg.value
            if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
                value = value.expression
            return arg.keyword is None and not arg.star and isinstance(value, cst.Integer)

        if _swap_of_high_axes(call.func, call):
            return True
        return call.func.attr.value == "transpose" and len(call.args) == 2 and all(integer(a) for a in call.args) \
            and not self.ctx.imports("numpy") and receiver_kind(call.func.value, self.scope) in ("other", "python",
                                                                                                 "tensor")

    def _torch_expand(self, call: cst.Call) -> bool:
        """``t.expand(-1, h, -1, -1)`` on a receiver of unknown kind (linformer's lambda parameter, dinov2's
        ``self.register_tokens``, a Parameter or None): two or more sizes given positionally are torch's
        ``Tensor.expand(*sizes)`` (the other ``expand`` methods, a distribution's or a regex match's, take one
        argument). Left as written, MindSpore's ``Tensor.expand`` takes them in PyNative but only one size tuple in
        GRAPH_MODE ("The parameters number of the function is 2, but the number of provided arguments is 4")."""
        func = call.func
        if func.attr.value != "expand" or len(call.args) < 2 or any(a.keyword or a.star for a in call.args):
            return False
        if isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) \
                and func.value.func.value == "super":
            return False
        return receiver_kind(func.value, self.scope) not in NOT_TENSOR_KINDS

    def _strict_name(self, name: str, target: str) -> bool:
        """Must the receiver be an evident tensor for ``x.name(...)`` to be rewritten? For the names other Python
        values share (SHARED_METHOD_NAMES), except array-only names rewritten to MindSpore's own method (``repeat``
        -> ``tile``, ``size()`` -> ``shape``) in a file that loads no array package (by an import statement or by a
        call: ``__import__("numpy")``). Names whose entry goes through a runtime helper (reductions guarded for empty
        extents) stay as written on such receivers: MindSpore's method of the same name serves the common call."""
        if name not in SHARED_METHOD_NAMES or name in RECEIVER_DISPATCHED_NAMES:
            return False
        if name not in ARRAY_METHOD_NAMES or target.startswith("mindport.runtime") \
                or any(self.ctx.imports(p) for p in ARRAY_PACKAGES):
            return True
        if self._loads_arrays is None:
            self._loads_arrays = _imports_dynamically(self._module, ARRAY_PACKAGES)
        return self._loads_arrays

    def _torch_keywords(self, call: cst.Call) -> bool:
        """Does the call pass a keyword only torch's Tensor methods take (TORCH_ONLY_METHOD_KEYWORDS)? Then a shared
        name (``nonzero``, ``sum``, ``max``, ``split``) is torch's method whatever the receiver's kind looks like."""
        return call.func.attr.value not in ANY_KEYWORD_METHOD_NAMES \
            and any(a.keyword is not None and a.keyword.value in TORCH_ONLY_METHOD_KEYWORDS for a in call.args) \
            and not any(self.ctx.imports(p) for p in TORCH_KEYWORD_PACKAGES)

    def _maybe_numpy(self, func: cst.Attribute) -> bool:
        """Could the receiver be a numpy array? A bare name that is a parameter (or of unknown kind) in a file that
        imports numpy: ``a.sum(axis=0)`` there is numpy's spelling, left as it is."""
        if not isinstance(func.value, cst.Name) or self.scope.kind_of(func.value.value) not in ("param", "other"):
            return False
        return self.ctx.imports("numpy")

    def _resolve_ms_names(self, mapped: dict[str, Arg]) -> None:
        resolve_ms_names(self.ctx, mapped)

    def _plausible(self, func: cst.Attribute, strict: bool) -> bool:
        """Is the receiver plausibly a tensor? ``strict`` for names numpy/lists/dicts share (sum, reshape ...)."""
        kind = receiver_kind(func.value, self.scope)
        if kind in NOT_TENSOR_KINDS:
            return False  # "object": self.softmax(x) calls a sub-layer, not Tensor.softmax; "engine": v.tanh() of
            # the project's own autograd engine's Value
        if kind == "other" and self_attribute_kind(func.value, self.scope) == "tensor_or_layer":
            # self.skip_k: a Parameter on one branch, a Conv1d on another; .repeat(...) can only be the Parameter's
            return func.attr.value not in MODULE_AND_TENSOR_METHODS
        return kind == "tensor" or not strict

    def _func_expr(self, func: cst.BaseExpression, target: str) -> cst.BaseExpression:
        if self.scope.is_local_alias(func):
            return func  # `act = F.relu; act(x)`: the alias assignment itself is rewritten
        return self.ctx.target_expr(target)

    def _reference(self, original_node, updated_node):
        if id(original_node) in self._call_funcs or id(original_node) in self._inner \
                or id(original_node) in self.ctx.handled:
            return updated_node
        qual = self.scope.resolve_torch(original_node)
        if qual is None:
            return updated_node
        # passed as a value (norm_layer=nn.LayerNorm, partial(torch.cat, dim=1)): the MindSpore name, or the runtime
        # adapter of the entry when later calls need their arguments mapped
        value = value_expr(self.ctx, qual)
        if value is not None and id(original_node) in self._class_bases:
            base = self._native_base(original_node, qual)
            if base is not None:
                self.ctx.converted_sites += 1
                return base
        if value is not None and id(original_node) in self._partial_firsts:  # partial(nn.Linear, bias=False)
            needed = set(self.ctx.imports_needed)
            if self._partial_lambda(self._partial_firsts[id(original_node)]) is not None:
                self.ctx.imports_needed = needed
                return updated_node  # the whole partial becomes a lambda (leave_Call): no factory is written
            entry = self.ctx.registry.lookup(qual)
            factory = self._native_factory(original_node, entry) if entry is not None else None
            if factory is not None:
                self.ctx.converted_sites += 1
                return factory
        factory = self._layer_factory(original_node, qual) if value is not None else None
        if factory is None and value is not None:  # only ever called, in shapes not all known: a native factory
            entry, site = self.ctx.registry.lookup(qual), self._value_sites.get(id(original_node))
            if entry is not None and entry.kind == "layer" and site is not None and self._flow.only_called(*site):
                factory = self._native_factory(original_node, entry)
        if factory is not None:
            self.ctx.converted_sites += 1
            return factory
        if value is not None and "mp_adapt" in code_of(value):  # a layer class with no known call: a value class
            entry = self.ctx.registry.lookup(qual)   # (a function: a native function, _value_function)
            made = None if entry is None or (entry.kind == "function" and id(original_node) in self._any_bases) \
                else self._value_function(original_node, entry) if entry.kind == "function" \
                else self._value_class(original_node, entry)  # a class derived from a function entry (timm's
            # MultiEpochsDataLoader(DataLoader)): the adapter, whose class a base can be; a def cannot
            if made is None and entry is not None and entry.kind == "layer" and not needs_mapping(entry):
                # a layer with sizes whose calls need nothing else mapped (table.value_expr) and no value class:
                # MindSpore's class itself, as before (a list given at run time is refused there)
                made = self.ctx.target_expr(entry.resolve(self.ctx.options.target)[0])
            if made is not None:
                self.ctx.converted_sites += 1
                return made
        own = self.ctx.registry.lookup(qual)
        if value is None and own is not None and not own.supported:
            # an API of its own entry that MindSpore lacks (``torch.Tensor.chalf`` kept as a value): flagged and left
            # to torch, never read off its prefix's target (``ms.Tensor.chalf``: an AttributeError on import)
            self.flag(original_node, "MP101", f"{qual} is not supported: {own.reason}", "rewrite by hand", qual)
            return updated_node
        if value is None and isinstance(original_node, cst.Attribute):
            value = self._attribute_of_value(original_node)
        if value is None:
            if self.ctx.registry.lookup(qual) is not None or not self._package_site(original_node, qual):
                self.flag(original_node, "MP104", f"{qual} is referenced but has no MindSpore mapping",
                          OVERLAY_HINT, qual)
            return updated_node
        self.ctx.converted_sites += 1
        return value

    def _attribute_of_value(self, node: cst.Attribute) -> cst.BaseExpression | None:
        """An attribute read from a mapped torch value (an ``attribute`` entry, which is the same value as its
        target): the target's attribute. ``container_abcs.Sequence`` with ``from torch._six import container_abcs``
        (the module collections.abc) -> ``mp_framework.container_abcs.Sequence``. None when no prefix is such an
        entry."""
        attrs: list[str] = []
        inner: cst.BaseExpression = node
        while isinstance(inner, cst.Attribute):
            attrs.append(inner.attr.value)
            inner = inner.value
            qual = self.scope.resolve_torch(inner)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is None:
                continue
            value = value_expr(self.ctx, qual) if entry.kind == "attribute" else None
            if value is None:
                return None
            for attr in reversed(attrs):
                value = cst.Attribute(value=value, attr=cst.Name(attr))
            return value
        return None

    def _layer_factory(self, original_node, qual: str) -> cst.BaseExpression | None:
        """A torch layer class passed as a value whose every call is known (``ValueFlow``: ``act_layer=nn.GELU``
        only ever called as ``act_layer()``, ``norm_layer=nn.LayerNorm`` as ``norm_layer(dim)``): the MindSpore class
        itself when such a call needs no arguments mapped (``nn.ReLU``), else a lambda taking torch's arguments that
        builds MindSpore's layer with them bound statically (``lambda: nn.GELU(approximate=False)``). None (the
        runtime adapter) when a call is not known or cannot be converted statically."""
        entry = self.ctx.registry.lookup(qual)
        if entry is None or entry.kind not in ("layer", "function") or not entry.signature:
            return None
        site = self._value_sites.get(id(original_node))
        shape = self._flow.call_shape(*site) if site is not None else self._flow.value_shape(original_node)
        if shape is None:
            return None
        count, keywords = shape
        signature = [p.name for p in entry.signature]
        names = signature[:count] + list(keywords)
        if count > len(signature) or len(set(names)) != len(names) or any(n.startswith("*") for n in names):
            return None
        args = [cst.Arg(cst.Name(n)) for n in signature[:count]]
        args += [cst.Arg(keyword=cst.Name(k), value=cst.Name(k), equal=NO_SPACE_EQUAL) for k in keywords]
        needed = set(self.ctx.imports_needed)
        built = self._static_call(entry, cst.Call(func=original_node, args=fix_commas(args)))
        runtime = {self.ctx.aliases.get(m, runtime_alias(m)) for m in self.ctx.imports_needed if m.startswith("mindport")}
        if built is None or "mp_adapt" in code_of(built.func) or (
                entry.kind == "function" and any(n.value in runtime for n in all_nodes(built, cst.Name))):
            self.ctx.imports_needed = needed
            return None
        if not built.args and not names:
            return built.func  # nn.ReLU() with nothing to map: the class itself
        if entry.kind == "function" and not keywords and len(built.args) == count and all(
                a.keyword is None and not a.star and isinstance(a.value, cst.Name) and a.value.value == n
                for a, n in zip(built.args, names)):
            return built.func  # F.relu only ever called as f(x): MindSpore's function itself
        built = self._several_items_choice(entry, original_node, args, built)
        made = cst.Lambda(params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in names]), body=built)
        # a branch of ``a if c else b`` (value_shape's positions): parenthesised, or its body would take the rest
        return made if site is not None else made.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def _partial_lambda(self, original_node: cst.Call) -> cst.Lambda | None:
        """``partial(nn.LayerNorm, eps=1e-6)`` (a torch layer class or function and literal keywords) used as a value
        whose every call is known (``ValueFlow``: ``norm_layer=partial(...)`` only ever called as
        ``norm_layer(dim)``): a lambda taking the calls' arguments that builds MindSpore's layer (calls MindSpore's
        function) with the partial's keywords and those arguments bound statically, ``lambda normalized_shape:
        nn.LayerNorm(..., epsilon=1e-6)``. None (the partial, whose function goes through the runtime adapter or a
        factory) when a call is not known, a keyword is not a literal (a lambda would read it at each call), a call
        gives a keyword the partial binds, or the call does not convert statically."""
        first = original_node.args[0].value
        qual = self.scope.resolve_torch(first)
        entry = self.ctx.registry.lookup(qual) if qual is not None else None
        if entry is None or entry.kind not in ("layer", "function") or not entry.signature:
            return None
        given = original_node.args[1:]
        if any(a.star or a.keyword is None or not _literal(a.value) for a in given):
            return None
        site = self._value_sites.get(id(original_node))
        shape = self._flow.call_shape(*site) if site is not None else self._flow.value_shape(original_node)
        if shape is None:
            return None
        count, keywords = shape
        signature = [p.name for p in entry.signature]
        names = signature[:count] + list(keywords)
        bound = [a.keyword.value for a in given]
        if count > len(signature) or len(set(names + bound)) != len(names + bound) \
                or any(n.startswith("*") for n in names):
            return None
        args = [cst.Arg(cst.Name(n)) for n in signature[:count]]
        args += [cst.Arg(keyword=cst.Name(k), value=cst.Name(k), equal=NO_SPACE_EQUAL) for k in keywords]
        args += [cst.Arg(keyword=a.keyword, value=a.value, equal=NO_SPACE_EQUAL) for a in given]
        needed = set(self.ctx.imports_needed)
        built = self._static_call(entry, cst.Call(func=first, args=fix_commas(args)))
        runtime = {self.ctx.aliases.get(m, runtime_alias(m)) for m in self.ctx.imports_needed if m.startswith("mindport")}
        if built is None or any(n.value in runtime for n in all_nodes(built, cst.Name)):
            self.ctx.imports_needed = needed
            return None
        built = self._several_items_choice(entry, first, args, built)
        return cst.Lambda(params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in names]), body=built,
                          lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # a branch of ``a if c else b`` too

    def _static_call(self, entry, synthetic: cst.Call) -> cst.Call | None:
        """``synthetic`` (a call of the entry's torch name, its arguments names) converted as any call is, or None
        when it does not convert statically: an argument needs the run-time adapter, is unsupported or flagged."""
        target, profile = entry.resolve(self.ctx.options.target)
        if target is None or not entry.supported:
            return None
        try:  # the call must convert statically, or it would be flagged (and its statement kept as torch)
            map_arguments(entry, bind_arguments(entry, list(synthetic.args)), profile)
        except (CallBindError, Unsupported, RunTimeArguments):
            return None
        diagnostics, sites = len(self.ctx.diagnostics), self.ctx.converted_sites
        built = self.leave_Call(synthetic, synthetic)
        failed = len(self.ctx.diagnostics) != diagnostics or built is synthetic or not isinstance(built, cst.Call)
        del self.ctx.diagnostics[diagnostics:]
        self.ctx.converted_sites = sites
        return None if failed else built

    def _switched_by_flag(self, original_node: cst.Call, updated_node: cst.Call, entry, qual: str) -> cst.IfExp | None:
        """A torch function whose bool ``switch`` parameter is given a value known only at run time
        (``F.leaky_relu(x, self.negative_slope, self.inplace)``, ``F.relu(x, inplace=inplace)``): both conversions,
        chosen by that value, ``(mp_inplace.leaky_relu_inplace(x, alpha=...) if self.inplace else ops.leaky_relu(x,
        alpha=...))``. In a graph the flag is a constant and one branch is compiled; the runtime adapter, which maps
        the call when it happens, does not compile there with more than one argument (batch 8 DCUnet's CLeakyReLU).
        None when the flag is not the only value deciding the call, or a branch would not convert natively."""
        if entry.kind != "function" or len(entry.switch) != 1:
            return None
        (name, choices), = entry.switch.items()
        if not set(choices) <= {"True", "False"}:
            return None
        try:
            bound = bind_arguments(entry, list(updated_node.args))
        except (CallBindError, RunTimeArguments):
            return None
        flag = bound.get(name)
        if flag is None or not flag.given or flag.is_literal() or flag.node is None:
            return None
        profile = entry.resolve(self.ctx.options.target)[1]
        for value in ("True", "False"):  # each branch converts with no flag and no run-time decision
            try:
                map_arguments(entry, {**bound, name: Arg(value, True)}, profile)
            except (CallBindError, RunTimeArguments, Unsupported):
                return None
        sites, branches = self.ctx.converted_sites, []
        for value in ("True", "False"):
            args = [a.with_changes(value=cst.Name(value)) if a.value is flag.node else a for a in updated_node.args]
            variant = updated_node.with_changes(args=args)
            built = self.leave_Call(original_node, variant)
            if built is variant or "mp_adapt" in code_of(built):
                self.ctx.converted_sites = sites
                return None
            branches.append(built)
        self.ctx.converted_sites = sites + 1
        return cst.IfExp(test=flag.node, body=branches[0], orelse=branches[1],
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def _native_factory(self, func: cst.BaseExpression, entry, anywhere: bool = False) -> cst.Name | None:
        """``nn.Linear(*args, **kwargs)``, ``partial(nn.Linear, bias=False)``: the name of a factory the file gets (``mindport/migrator/factories.py``),
        torch's parameters building MindSpore's class with each bound statically, where the entry's conversion of a
        call passing every parameter by name names no runtime helper; None (the runtime adapter) otherwise. Only
        classes (a layer, an optimizer): a function keeps the adapter; a layer that starts in training mode only
        inside a class (the enclosing module's mode governs it there); the nn profile only (mint keeps torch's
        arguments, the adapter passes them on). ``anywhere``: for a value class (its calls are not seen, as the
        adapter's are not: a layer that starts in training mode is built as the adapter builds it)."""
        leaf = entry.torch.rsplit(".", 1)[-1]
        if entry.kind not in ("layer", "function") or not leaf[:1].isupper() or entry.torch.startswith("torch.Tensor.") \
                or self.ctx.options.target != "nn" or (entry.starts_training and not self._in_class() and not anywhere):
            return None
        if entry.torch not in self._factories:
            # a factory is called where no class is seen: its layer is built as one inside a class is (the enclosing
            # module's mode governs it; the runtime adapter's does the same)
            self._building_factory = True
            try:
                self._factories[entry.torch] = self._factory_for(func, entry)
            finally:
                self._building_factory = False
        made = self._factories[entry.torch]
        return cst.Name(made[0]) if made is not None else None

    def _native_construction(self, func: cst.BaseExpression, entry,
                             without=()) -> tuple[cst.Call, str] | None:
        """(MindSpore's construction of the entry's class from torch's parameters each passed by its name, those
        parameters as source) where that converts statically to a MindSpore class naming no runtime helper;
        ``without``: parameters left out (their defaults taken). A ``function`` entry (a torch function, or a class
        its table calls a function: an optimizer, ``DataLoader``) may name the runtime helpers a call written with
        those arguments names (``ms_optim.SGD(mp_optim.distinct_names(params), ...)``, ``mp_framework.compile``):
        its definition is then the very code a written call converts to, decided statically; only the runtime
        adapter (``mp_adapt``, a mapping looked up by name when called) is refused."""
        parameters = factory_parameters(entry, lambda text: torch_default(entry, text, self._attribute_source))
        if parameters is None:
            return None
        args = [cst.Arg(keyword=cst.Name(p.name), value=cst.Name(p.name), equal=NO_SPACE_EQUAL)
                for p in entry.signature if p.name not in without]
        needed = set(self.ctx.imports_needed)
        built = self._static_call(entry, cst.Call(func=func, args=fix_commas(args)))
        runtime = {self.ctx.aliases.get(m, runtime_alias(m)) for m in self.ctx.imports_needed if m.startswith("mindport")}
        if entry.kind == "function":
            runtime = {self.ctx.aliases.get(ADAPT_MODULE, runtime_alias(ADAPT_MODULE))}
        own = built is not None and code_of(built.func) == self._own_layer_class(entry)  # its callee alone
        if built is None or any(n.value in runtime for n in (
                [n for a in built.args for n in all_nodes(a, cst.Name)] if own else all_nodes(built, cst.Name))):
            self.ctx.imports_needed = needed
            return None
        return built, parameters

    def _own_layer_class(self, entry) -> str | None:
        """The source of the class a layer entry's every written construction builds in this project when that class
        is the runtime's: the entry's own target (``torch.nn.SELU`` -> ``mp_nn.SeLU``, which an ``isinstance`` of
        the torch class also tests: ReferenceTransform) or MindSpore's class's float64-computing subclass in a project
        where a float64 tensor can come to be (``FLOAT64_LAYERS``: ``nn.ReLU6`` -> ``mp_nn.ReLU6``, an instance of
        MindSpore's class). As the callee of a construction it is no helper bound by name at run time: a factory or
        value class may build it (timm's ``act_layer=(nn.ReLU6, None)``, ``dict(relu6=nn.ReLU6, selu=nn.SELU)``).
        None for any other entry, and on the mint profile."""
        target = entry.resolve(self.ctx.options.target)[0] if entry.kind == "layer" else None
        if target is None or self.ctx.options.target != "nn":
            return None
        if not self.ctx.options.float64_free:
            target = FLOAT64_LAYERS.get(target, target)
        return self.ctx.target_text(target) if target.startswith("mindport.runtime.layers.") else None

    def _factory_for(self, func: cst.BaseExpression, entry):
        made, branches = self._native_construction(func, entry), ()
        if made is None:
            made, branches = self._switched_construction(func, entry) or (None, ())
        if made is None:
            made, branches = self._refused_construction(func, entry) or (None, ())
        if made is None:
            return None
        built, parameters = made
        taken = {n.value for n in all_nodes(self._module, cst.Name)} | {m[0] for m in self._factories.values() if m}
        name = factory_name(entry, taken)
        return name, factory_def(name, entry, parameters, built, code_of(built.func), branches, self._sizes(entry))

    def _attribute_source(self, torch_name: str) -> str | None:
        """A torch attribute (``torch.distributed.ReduceOp.SUM``, ``torch.long``) as the file's MindSpore source
        (its import scheduled), as any attribute used as a value is written (table.value_expr); None where no
        attribute entry maps it."""
        entry = self.ctx.registry.lookup(torch_name)
        value = value_expr(self.ctx, torch_name) if entry is not None and entry.kind == "attribute" else None
        return code_of(value) if value is not None else None

    def _refused_construction(self, func: cst.BaseExpression, entry):
        """A ``function`` entry (an optimizer, a torch function) with ``unsupported`` parameters that MindSpore's
        target lacks (RAdam's ``decoupled_weight_decay`` and ``maximize``): (the construction without them, their
        defaults taken, guards first that raise the adapter's TypeError when one is given another value at the
        call). A written call with such a value is flagged; a value reached by name at run time is refused loudly,
        as the runtime adapter refuses it. None for a layer, a parameter with no default or a ``switch`` one, or a
        construction that is not static."""
        names = [n for n in entry.unsupported if n not in entry.switch]
        specs = [entry.param(n) for n in names]
        if entry.kind != "function" or not names or any(p is None or p.default is None for p in specs):
            return None
        made = self._native_construction(func, entry, without=tuple(names))
        if made is None:
            return None
        guards = []
        for name, spec in zip(names, specs):
            reason = entry.unsupported[name].replace("{", "{{").replace("}", "}}")
            message = f"{entry.torch}: argument {name}={{{name}!r}} is not supported: {reason}"
            test = {"None": f"{name} is not None", "False": name, "True": f"not {name}"}.get(
                spec.default, f"{name} != {torch_default(entry, spec.default, self._attribute_source)}")
            guards.append((test, f"raise TypeError(f{message!r})"))
        return made, tuple(guards)

    def _sizes(self, entry) -> str | None:
        """The first statement of a factory, value class or native base ``__init__`` whose torch parameters include
        sizes or counts MindSpore takes only as plain ints or tuples (factories.sizes_statement): the values arrive
        at run time (EfficientNet-PyTorch's ``stride=[1]`` through its Conv2d subclass, a count from numpy), so they
        are read as the runtime adapter reads them, by its own code (mindport.runtime.adapt.layer_sizes)."""
        if not sized_parameters(entry):
            return None
        return sizes_statement(entry, self.ctx.target_text(f"{ADAPT_MODULE}.layer_sizes"))

    def _switched_construction(self, func: cst.BaseExpression, entry):
        """An entry whose one ``switch`` parameter picks another class by its value (``padding_mode='reflect'`` ->
        the runtime's ModePaddedConv2d, ``inplace=True`` -> InplaceReLU): ((MindSpore's construction for the
        parameter's default, which must name no runtime helper, torch's parameters as source), the branches
        ``(condition source, construction)`` for the other values, then a guard raising torch's error for a value
        torch refuses (a string switch)); None when a construction is not static."""
        if len(entry.switch) > 1:
            return self._flags_construction(func, entry) or self._ordered_construction(func, entry)
        if len(entry.switch) != 1:
            return None
        (param, choices), = entry.switch.items()
        spec = entry.param(param)
        if "*" in choices or spec is None or spec.default is None:
            return None
        needed = set(self.ctx.imports_needed)
        made = self._native_construction(func, entry, without=(param,))
        if made is None:
            return None
        arg = lambda n, v: cst.Arg(keyword=cst.Name(n), value=v, equal=NO_SPACE_EQUAL)  # noqa: E731
        base = [arg(p.name, cst.Name(p.name)) for p in entry.signature if p.name != param]
        by_target: dict[str, list] = {}
        for source, target in choices.items():
            value = ast.literal_eval(source)
            if value not in by_target.setdefault(target, []):
                by_target[target].append(value)
        branches = []
        for values in by_target.values():
            other = self._static_call(entry, cst.Call(func=func, args=fix_commas(
                [*base, arg(param, cst.parse_expression(repr(values[0])))])))
            if other is None:
                self.ctx.imports_needed = needed
                return None
            other = other.with_changes(args=[a.with_changes(value=cst.Name(param)) if a.keyword is not None
                                             and a.keyword.value == param else a for a in other.args])
            condition = (param if values == [True] else f"not {param}" if values == [False]
                         else f"{param} in {tuple(values)!r}" if len(values) > 1 else f"{param} == {values[0]!r}")
            branches.append((condition, other))
        default = ast.literal_eval(spec.default)
        allowed = [default] + [v for values in by_target.values() for v in values]
        if isinstance(default, str) and all(isinstance(v, str) for v in allowed):
            message = f"{param} must be one of {allowed!r}, but got {param}={{{param}!r}}"  # torch's words
            branches.append((f"{param} != {default!r}", f"raise ValueError(f{message!r})"))
        return made, tuple(branches)

    def _flags_construction(self, func: cst.BaseExpression, entry):
        """An entry with several bool ``switch`` parameters, each of whose ``False`` (or ``True``) picks another class
        (LayerNorm's ``elementwise_affine`` and ``bias``: the runtime's OptionalAffineLayerNorm): as
        _switched_construction, a branch per combination of values other than the defaults (``not
        elementwise_affine and bias`` ...), each the entry's static conversion of that combination with the
        parameters handed on by name; None when a parameter's choices are not bools, has no bool default, or a
        construction is not static."""
        params = list(entry.switch)
        defaults = []
        for param in params:
            spec = entry.param(param)
            if not set(entry.switch[param]) <= {"True", "False"} or spec is None or spec.default not in ("True", "False"):
                return None
            defaults.append(spec.default == "True")
        if len(params) > 3:
            return None
        needed = set(self.ctx.imports_needed)
        made = self._native_construction(func, entry, without=tuple(params))
        if made is None:
            return None
        arg = lambda n, v: cst.Arg(keyword=cst.Name(n), value=v, equal=NO_SPACE_EQUAL)  # noqa: E731
        base = [arg(p.name, cst.Name(p.name)) for p in entry.signature if p.name not in params]
        branches = []
        for values in itertools.product((True, False), repeat=len(params)):
            if list(values) == defaults:
                continue
            other = self._static_call(entry, cst.Call(func=func, args=fix_commas(
                [*base, *(arg(p, cst.Name(repr(v))) for p, v in zip(params, values))])))
            if other is None:
                self.ctx.imports_needed = needed
                return None
            other = other.with_changes(args=[a.with_changes(value=cst.Name(a.keyword.value)) if a.keyword is not None
                                             and a.keyword.value in params else a for a in other.args])
            condition = " and ".join(p if v else f"not {p}" for p, v in zip(params, values))
            branches.append((condition, other))
        several = self._several_items(func, entry, params)
        if several is None:
            self.ctx.imports_needed = needed
            return None
        return made, (*several, *branches)

    def _several_items_choice(self, entry, func: cst.BaseExpression, args: list, built: cst.Call) -> cst.BaseExpression:
        """A lambda's body (a value only ever called: ``norm_type=nn.LayerNorm`` called as ``norm_type(x)``) when the
        parameter ``x`` stands for converts another way given several items (transforms.layers.SEVERAL_ITEMS) and
        the file calls a value it was handed with a display of several items (``norm_type((length, channels))``,
        ditschuk/pytorch-tsmixer): that construction if ``x`` is such a sequence, else ``built``. ``built`` itself
        otherwise (``norm_layer(dim)``: MindSpore's own layer, as a direct call with a name), or when that
        construction is not static."""
        if not self._handed_displays():
            return built
        names = [p.name for p in entry.signature]
        for transform in entry.transforms:
            if transform not in SEVERAL_ITEMS:
                continue
            param, source = SEVERAL_ITEMS[transform]
            at = [i for i, a in enumerate(args) if (a.keyword.value if a.keyword is not None else
                                                    names[i] if i < len(names) else None) == param]
            if not at:
                continue
            given = [a.with_changes(value=cst.parse_expression(source.replace(param, code_of(a.value))))
                     if i in at else a for i, a in enumerate(args)]
            other = self._static_call(entry, cst.Call(func=func, args=fix_commas(given)))
            if other is None:
                return built
            value = code_of(args[at[0]].value)
            return cst.IfExp(test=cst.parse_expression(_several_items_test(value)),
                             body=other, orelse=built, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return built

    def _handed_displays(self) -> bool:
        """Whether the file calls a name that is none of its module-level functions or classes (a value handed to a
        function: ``norm_type``) with a tuple or list display of several items as its first argument."""
        if getattr(self, "_displays_memo", (None,))[0] is not self._module:
            found = any(isinstance(c.func, cst.Name) and c.func.value not in self._flow.functions and c.args
                        and c.args[0].keyword is None and isinstance(c.args[0].value, (cst.Tuple, cst.List))
                        and len(c.args[0].value.elements) > 1 for c in all_nodes(self._module, cst.Call))
            self._displays_memo = (self._module, found)
        return self._displays_memo[1]

    def _several_items(self, func: cst.BaseExpression, entry, flags) -> tuple | None:
        """The branch of a factory or value class for a parameter that converts another way when given several items
        (transforms.layers.SEVERAL_ITEMS: LayerNorm's ``normalized_shape``), first, its bool ``switch`` ``flags``
        handed on by name: ``(("isinstance(p, (tuple, list)) and len(p) > 1", construction),)``; () for an entry
        with none, None when that construction is not static."""
        branches = []
        for transform in entry.transforms:
            if transform not in SEVERAL_ITEMS or entry.param(SEVERAL_ITEMS[transform][0]) is None:
                continue
            param, source = SEVERAL_ITEMS[transform]
            arg = lambda n, v: cst.Arg(keyword=cst.Name(n), value=v, equal=NO_SPACE_EQUAL)  # noqa: E731
            # each flag at its other value, so the construction names it, then handed on by name
            given = [arg(p.name, cst.parse_expression(source) if p.name == param else cst.Name(
                ("False" if p.default == "True" else "True") if p.name in flags else p.name)) for p in entry.signature]
            other = self._static_call(entry, cst.Call(func=func, args=fix_commas(given)))
            if other is None:
                return None
            other = other.with_changes(args=[a.with_changes(value=cst.Name(a.keyword.value)) if a.keyword is not None
                                             and a.keyword.value in flags else a for a in other.args])
            branches.append((_several_items_test(param), other))
        return tuple(branches)

    def _ordered_construction(self, func: cst.BaseExpression, entry):
        """Several ``switch`` parameters, each either a bool whose one choice is its other value (``inplace``
        ``True``) or ``"*"`` (any value but the default: ELU's ``alpha`` -> the runtime's ELU, MindSpore's kernel
        taking 1.0 only): a branch per parameter in the table's order, as ``arguments._switch`` tries them (the first
        one given another value picks the class; the later ones are handed on by name), then MindSpore's
        construction with every switch parameter at its default. None for another kind of switch or a construction
        that is not static."""
        params = list(entry.switch)
        defaults = {}
        for param in params:
            spec, choices = entry.param(param), entry.switch[param]
            if spec is None or spec.default is None:
                return None
            if set(choices) == {"*"}:
                defaults[param] = spec.default
            elif spec.default in ("True", "False") and set(choices) == {"False" if spec.default == "True" else "True"}:
                defaults[param] = spec.default
            else:
                return None
        needed = set(self.ctx.imports_needed)
        made = self._native_construction(func, entry, without=tuple(params))
        if made is None:
            return None
        arg = lambda n, v: cst.Arg(keyword=cst.Name(n), value=v, equal=NO_SPACE_EQUAL)  # noqa: E731
        base = [arg(p.name, cst.Name(p.name)) for p in entry.signature if p.name not in params]
        branches = []
        for i, param in enumerate(params):
            later = [arg(p, cst.Name(p)) for p in params[i + 1:]]
            if set(entry.switch[param]) == {"*"}:
                value, condition = cst.Name(param), f"{param} != {defaults[param]}"
            else:
                value = cst.Name("False" if defaults[param] == "True" else "True")
                condition = f"not {param}" if defaults[param] == "True" else param
            other = self._static_call(entry, cst.Call(func=func, args=fix_commas([*base, arg(param, value), *later])))
            if other is None:
                self.ctx.imports_needed = needed
                return None
            other = other.with_changes(args=[a.with_changes(value=cst.Name(a.keyword.value)) if a.keyword is not None
                                             and a.keyword.value == param else a for a in other.args])
            branches.append((condition, other))
        return made, tuple(branches)

    def _native_base(self, original_node, qual: str) -> cst.BaseExpression | None:
        """``class GroupNorm32(nn.GroupNorm)`` with no ``__init__`` of its own: MindSpore's class as the base and an
        ``__init__`` taking torch's parameters that hands them to it bound statically (factories.base_init), so any
        construction, in any file, keeps torch's arguments; None (the runtime adapter's class) where the entry's
        conversion is not static, its target is a runtime class, or the layer starts in training mode."""
        entry = self.ctx.registry.lookup(qual)
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
        if entry is None or entry.kind != "layer" or entry.starts_training or self.ctx.options.target != "nn" \
                or target is None or not target.startswith("mindspore."):
            return None
        made = self._native_construction(original_node, entry)
        if made is None or code_of(made[0].func) != self.ctx.target_text(target):
            return None
        self._base_inits[id(self._class_bases[id(original_node)])] = base_init(entry, made[1], made[0],
                                                                                self._sizes(entry))
        return made[0].func

    def _value_class(self, original_node, entry) -> cst.Name | None:
        """A torch layer class used as a value where no call of it is known (``norm_layer=nn.LayerNorm`` handed on to
        code that also tests it, ``dict(gelu=nn.GELU)``, ``partial(nn.LayerNorm, eps=1e-6)`` whose entry needs a
        run-time choice, ``class LayerNorm2d(nn.LayerNorm)`` with an ``__init__`` of its own): the name of a class the
        file gets (factories.value_class_def), ``TorchLayerNorm(nn.LayerNorm)``: called, its factory builds
        MindSpore's layer (torch's parameters, each bound statically; a value that picks another Cell decided when it
        is called); derived from, its ``__init__`` hands torch's arguments to MindSpore's ``__init__``. None (the
        runtime adapter) where the entry's default construction is not MindSpore's class itself, or a construction
        is not static."""
        target = entry.resolve(self.ctx.options.target)[0]
        if entry.kind != "layer" or self.ctx.options.target != "nn" or target is None \
                or not (target.startswith("mindspore.") or self._own_layer_class(entry)):
            return None
        if entry.torch not in self._value_classes:
            self._value_classes[entry.torch] = self._value_class_for(original_node, entry, target)
        made = self._value_classes[entry.torch]
        return cst.Name(made[0]) if made is not None else None

    def _value_function(self, original_node, entry) -> cst.Name | None:
        """A torch function used as a value where no call of it is known (timm's and geffnet's activation registries,
        ``dict(relu=F.relu, silu=F.silu)``, ``act_fn=F.relu6`` handed on): the name of a function the file gets
        (factories.factory_def), ``def torch_relu(input, inplace=False): return ops.relu(input)``, torch's parameters
        and defaults whose body is the entry's own conversion of a call passing every parameter by name (a ``switch``
        value decided when it is called, as a factory's). Called in a graph too (MindSpore compiles it as it compiles
        the file's functions). None (the runtime adapter) on the mint profile, for a ``.method`` target, for an entry
        with a size or dimension parameter (the adapter reads a run-time list there: factories.sizes_statement is
        not compiled in a graph), or where the conversion is not static or names a runtime helper."""
        target = entry.resolve(self.ctx.options.target)[0]
        if self.ctx.options.target != "nn" or target is None or target.startswith(".") \
                or entry.torch.startswith("torch.Tensor.") or sized_parameters(entry):
            return None
        if entry.torch not in self._factories:
            self._factories[entry.torch] = self._function_for(original_node, entry)
        made = self._factories[entry.torch]
        return cst.Name(made[0]) if made is not None else None

    def _function_for(self, func, entry):
        needed = set(self.ctx.imports_needed)
        made, branches = self._native_construction(func, entry), ()
        if made is None:
            made, branches = self._switched_construction(func, entry) or (None, ())
        if made is None:
            made, branches = self._refused_construction(func, entry) or (None, ())
        if made is None:
            self.ctx.imports_needed = needed
            return None
        built, parameters = made
        taken = {n.value for n in all_nodes(self._module, cst.Name)} | {m[0] for m in self._factories.values() if m} \
            | {m[0] for m in self._value_classes.values() if m}
        name = fresh_name("torch_" + entry.torch.rsplit(".", 1)[-1], taken)
        return name, factory_def(name, entry, parameters, built, code_of(built.func), branches)

    def _value_class_for(self, func, entry, target: str):
        needed = set(self.ctx.imports_needed)
        factory = self._native_factory(func, entry, anywhere=True)
        self._building_factory = True
        try:
            made, branches = self._native_construction(func, entry), ()
            if made is None:
                made, branches = self._switched_construction(func, entry) or (None, ())
        finally:
            self._building_factory = False
        if factory is None or made is None or code_of(made[0].func) not in (
                self.ctx.target_text(target), self._own_layer_class(entry)):
            self.ctx.imports_needed = needed
            return None
        built, parameters = made
        become = code_of(self.ctx.target_expr("mindport.runtime.layers.become")) \
            if any(not isinstance(b, str) for _, b in branches) else ""
        layer = load_surface().layer(entry.torch)
        names = {p.name for p in entry.signature}
        kept = [n for n in (layer.kept if layer is not None else ()) if n in names]
        taken = {n.value for n in all_nodes(self._module, cst.Name)} | {m[0] for m in self._factories.values() if m} \
            | {m[0] for m in self._value_classes.values() if m}
        name = value_class_name(entry, taken)
        self.ctx.value_classes.add(name)
        if self._value_metaclass is None:
            self._value_metaclass = fresh_name("TorchLayerType", taken | {name})
        init = class_init(entry, parameters, built, branches, kept, become, self._sizes(entry))
        return name, value_class_def(name, entry, code_of(built.func), factory.value, init, self._value_metaclass)

    def leave_Module(self, original_node, updated_node):
        made = {m[0]: m[1] for m in self._value_classes.values() if m is not None}
        if made:  # after the classes, so it goes before the first of them
            made[self._value_metaclass] = value_metaclass_def(self._value_metaclass)
        made.update((m[0], m[1]) for m in self._factories.values() if m is not None)
        updated_node = insert_definitions(updated_node, made) if made else updated_node
        exported = self._reexport_definitions(original_node)
        if exported:  # names the module never reads: defined after everything else, as the imports' values were
            updated_node = updated_node.with_changes(body=[*updated_node.body, *(
                d.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]) for d in exported.values())])
        return updated_node

    def _reexport_definitions(self, module: cst.Module) -> dict[str, cst.FunctionDef]:
        """A torch function (an optimizer class its table calls a function) the module imports only for other
        modules to import from it (timm's ``optim/__init__.py``: ``from torch.optim import AdamW``): a definition
        under that very name, ``def AdamW(params, lr=0.001, ...)``, the value function a reference to it gets
        (_function_for), at the end of the module (nothing in it reads the name); the import then goes (imports.find_reexports writes no ``AdamW = mp_adapt.api(...)``). Only a name the module
        never reads itself, and only where the value would be the runtime adapter."""
        out: dict[str, cst.FunctionDef] = {}
        if self.ctx.options.target != "nn":
            return out
        for _stmt, alias, bound, name in reexport_candidates(module, self.ctx, self.ctx.seen_names):
            qual = f"{name}.{alias.name.value}"
            entry = self.ctx.registry.lookup(qual)
            value = value_expr(self.ctx, qual)
            if bound in self.ctx.seen_names or entry is None or entry.kind != "function" or value is None \
                    or "mp_adapt" not in code_of(value):
                continue
            made = self._function_for(cst.Name(bound), entry)
            if made is None:
                continue
            out[bound] = made[1].with_changes(name=cst.Name(bound))
            self.ctx.reexport_definitions.add(bound)
        return out

    def _package_site(self, node, qual: str) -> bool:
        """A symbol of a torch-based third-party package with no entry: MP106, naming the package."""
        package = torch_package(qual)
        if package is None:
            return False
        nature = package_nature(package)
        needs = f"{package} and torch" if nature == "torch-based" else f"{package} with a backend of its own"
        self.flag(node, "MP106", f"{qual}: {package} is {'a torch-based package' if nature == 'torch-based' else nature}"
                  f" and this symbol has no MindSpore mapping; the line keeps it (it needs {needs} at run time)",
                  f"replace it with a MindSpore equivalent (a MindSpore port of {package}, or your own Cell), or add "
                  "an entry to mindport/mappings/data", qual)
        return True

    def leave_Subscript(self, original_node, updated_node):
        return self._int64_indices(original_node, updated_node)

    def leave_Attribute(self, original_node, updated_node):
        positional = _field_by_position(updated_node) or self._torch_field_by_position(original_node, updated_node)
        if positional is not None:
            return self._int64_indices(original_node, positional)
        method = self._method_read(original_node, updated_node)
        if method is not None:
            return method
        return self._reference(original_node, updated_node)

    def _method_read(self, original_node, updated_node) -> cst.Call | None:
        """``torch.mean(b, dim=0).values``, ``x.sum(1).is_coalesced``: a torch.Tensor method that MindSpore's Tensor
        lacks (mappings/data/tensor_methods_mindspore_lacks.txt: data, checked against the installed MindSpore by a
        test) read as a value, not called, on a value known to be a tensor. torch gives a bound method and the read
        never fails; MindSpore raises AttributeError. Written ``mp_tensor.method_value(t, "values")``: a callable, as
        in torch (a sparse accessor raises torch's RuntimeError when called on a dense tensor), flagged MP104, since
        a call made later of the value is not converted. Known to be a tensor (:meth:`_known_tensor`): the result of
        a torch function or of a tensor method on one, never a name (a name may hold a named tuple, a distribution),
        never a torch class's object (``Normal(mu, sigma).mode`` is the distribution's). A field of torch's named
        tuples (``.values`` of ``torch.max(x, 1)``) is read by position elsewhere: a call returning one is skipped."""
        name = original_node.attr.value
        if id(original_node) in self._call_funcs or id(original_node) in self._inner \
                or name not in _missing_tensor_methods() or not self._known_tensor(original_node.value):
            return None
        self.remark(original_node, "MP104", f"torch.Tensor.{name} read as a value, not called: a callable as in "
                    "torch (mindport.runtime.tensor.method_value); a call of it made later is not converted",
                    "call the method where it is read", f"torch.Tensor.{name}")
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.method_value"),
                        args=[cst.Arg(updated_node.value), cst.Arg(cst.SimpleString(f'"{name}"'))])

    def _known_tensor(self, expr) -> bool:
        """``expr`` (original) is a call whose result is a tensor in torch, whatever the scopes say of names: a torch
        function (``torch.mean``, ``torch.linalg.norm``, ``F.relu``: lower-case, in a namespace of tensor functions,
        with a mapping entry) or a torch.Tensor method (lower-case, in torch's list, not one of a distribution's
        methods) called on such a call or on a name or attribute the scopes call a tensor; neither returning one of
        torch's named tuples."""
        if not isinstance(expr, cst.Call):
            return False
        qual = self.scope.resolve_torch(expr.func)
        if qual is not None:
            module, _, last = qual.rpartition(".")
            return module in _TENSOR_FUNCTION_MODULES and last[:1].islower() and torch_result_fields(qual) is None \
                and self.ctx.registry.lookup(qual) is not None
        func = expr.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func) is not None:
            return False
        method = func.attr.value
        if method not in _tensor_methods() or method in _DISTRIBUTION_METHODS or not method[:1].islower() \
                or torch_result_fields(f"torch.Tensor.{method}") is not None:
            return False
        owner = func.value
        if isinstance(owner, cst.Call):
            return self._known_tensor(owner)
        return isinstance(owner, (cst.Name, cst.Attribute, cst.Subscript)) \
            and not (isinstance(owner, cst.Name) and owner.value in ("self", "cls")) \
            and receiver_kind(owner, self.scope) == "tensor"

    def _torch_field_by_position(self, original_node, updated_node) -> cst.Subscript | None:
        """``v.cummax(0).values``, ``torch.linalg.qr(m).Q``, ``x.nanmedian(0).indices``: a field of torch's named
        tuple (torch.return_types, mappings/data/surface/named_results.toml) read on a call this rule converted to
        MindSpore's own, which returns a plain tuple in torch's order (its proof compares them by position): read
        by position (``v.cummax(axis=0)[0]``)."""
        call, converted = original_node.value, updated_node.value
        if not (isinstance(call, cst.Call) and isinstance(converted, cst.Call)) or call.deep_equals(converted):
            return None
        qual = self.scope.resolve_torch(call.func)
        if qual is None and isinstance(call.func, cst.Attribute):
            qual = f"torch.Tensor.{call.func.attr.value}"
        return _read_by_position(converted, torch_result_fields(qual) if qual else None, original_node.attr.value)

    def leave_Name(self, original_node, updated_node):
        return self._reference(original_node, updated_node)


# torch's legacy tensor constructors: called with one torch.Size they make a tensor of those sizes, with any other
# sequence one from that data (torch.FloatTensor(x.size()) is [3, 4]-shaped, torch.FloatTensor((3, 4)) is [3., 4.])
_LEGACY_CONSTRUCTORS = frozenset({"torch.Tensor"} | {f"torch.{k}Tensor" for k in (
    "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")} | {
    f"torch.cuda.{k}Tensor" for k in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte",
                                      "Bool")})


def _visible_sizes(call) -> bool:
    """A call given sizes visibly and nothing else: two or more positional arguments (which a legacy constructor,
    ``torch.Tensor(h, d)``, reads only as sizes) or one integer literal; no star, no keyword."""
    args = call.args if isinstance(call, cst.Call) else ()
    return bool(args) and not any(a.star or a.keyword is not None for a in args) \
        and (len(args) > 1 or isinstance(args[0].value, cst.Integer))


def _number_data(call, floats: bool) -> bool:
    """One positional argument, a list or tuple display of one or more elements each a Python number by
    construction: an integer literal (a float literal too when ``floats``), a sign of one, ``X.shape[i]``,
    ``X.size(i)`` (an integer literal ``i``), ``len(...)``, or ``+ - * //`` of those. No star; no keyword but
    ``device=`` (MaxViT's ``torch.FloatTensor((b, 1, 1, 1), device = device)``: MindSpore places no tensor, the
    converter drops it)."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value != "device"] \
        if isinstance(call, cst.Call) else ()
    if len(args) != 1 or args[0].star or args[0].keyword is not None:
        return False
    display = args[0].value
    return isinstance(display, (cst.List, cst.Tuple)) and bool(display.elements) and all(
        isinstance(e, cst.Element) and _python_number(e.value, floats) for e in display.elements)


def _python_number(expr, floats: bool) -> bool:
    if isinstance(expr, cst.Integer) or (floats and isinstance(expr, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _python_number(expr.expression, floats)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
        return _python_number(expr.left, floats) and _python_number(expr.right, floats)
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape" \
            and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        index = expr.slice[0].slice.value
        return isinstance(index, cst.Integer) or (isinstance(index, cst.UnaryOperation)
                                                   and isinstance(index.expression, cst.Integer))
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
        return len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None \
            and _python_number(expr.args[0].value, False) and isinstance(expr.args[0].value, (cst.Integer,
                                                                                               cst.UnaryOperation))
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len" \
        and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None


def _sizes_starred(original: cst.Call, updated: cst.Call, scope) -> cst.Call:
    """``torch.FloatTensor(x.size())``, ``torch.Tensor(x.shape[1:])``, ``torch.cuda.FloatTensor(torch.Size([2, 3]))``:
    the one argument is a torch.Size, which a legacy constructor reads as sizes (a tensor of that shape), where any
    other tuple is data. MindSpore's shape is a plain tuple, which the runtime constructor (as torch's, for a tuple)
    would read as data: a [2] tensor of the sizes' values, then a broadcast failure, or a wrong mean. The sizes are
    passed one by one (``FloatTensor(*x.shape)``), as torch's ``FloatTensor(3, 4)``. Only an argument that is
    visibly a size (``.size()`` without arguments, ``.shape``, a slice of either, ``torch.Size(...)``); a name bound
    to one is left as written."""
    if len(original.args) != 1 or original.args[0].keyword is not None or original.args[0].star \
            or len(updated.args) != 1 or not _size_object(original.args[0].value, scope):
        return updated
    return updated.with_changes(args=[updated.args[0].with_changes(star="*")])


def _size_object(expr, scope) -> bool:
    """``x.size()``, ``x.shape``, ``x.size()[1:]``, ``torch.Size([2, 3])``: an expression whose value is a
    torch.Size in torch."""
    if isinstance(expr, cst.Subscript):
        return all(isinstance(e.slice, cst.Slice) for e in expr.slice) and _size_object(expr.value, scope)
    if isinstance(expr, cst.Call):
        if scope.resolve_torch(expr.func) == "torch.Size":
            return True
        return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" and not expr.args \
            and scope.resolve(expr.func) is None and receiver_kind(expr.func.value, scope) not in ("foreign",
                                                                                                  "python")
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape" and scope.resolve(expr) is None \
        and receiver_kind(expr.value, scope) not in ("foreign", "python")


def _merged_subscript(view: cst.Subscript) -> cst.Subscript | None:
    """``mask[i][lengths[i] - 1]`` -> ``mask[i, lengths[i] - 1]``: chained indexing of a name or attribute whose inner
    subscripts each pick one position (an int, a name, arithmetic: no slice, None, Ellipsis or star) is the same
    element as the one subscript in torch (a view of a view), so an in-place update of it is written back there
    (assigning into ``mask[i][j]`` would fill a copy in MindSpore). None when the chain is not of that form."""
    if not isinstance(view, cst.Subscript) or not isinstance(view.value, cst.Subscript):
        return None
    elements, node = list(view.slice), view.value
    while isinstance(node, cst.Subscript):
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or node.slice[0].slice.star \
                or (isinstance(node.slice[0].slice.value, cst.Name)
                    and node.slice[0].slice.value.value in ("None", "Ellipsis")) \
                or isinstance(node.slice[0].slice.value, (cst.Ellipsis, cst.Tuple, cst.List)):
            return None
        elements = [node.slice[0]] + elements
        node = node.value
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    merged = [e.with_changes(comma=comma) for e in elements[:-1]] + [elements[-1].with_changes(
        comma=cst.MaybeSentinel.DEFAULT)]
    return cst.Subscript(value=node, slice=merged)


def _field_by_position(node: cst.Attribute) -> cst.Subscript | None:
    """``mp_linalg.lstsq(a, b).solution`` -> ``mp_linalg.lstsq(a, b)[0]``: the runtime returns torch's named tuple in
    PyNative and a plain tuple in a compiled graph (mindport/migrator/named_results.py), so the field is read by
    position, the same in both modes."""
    call = node.value
    if not isinstance(call, cst.Call):
        return None
    return _read_by_position(call, result_fields(code_of(call.func), len(call.args)), node.attr.value)


def _read_by_position(call: cst.Call, fields: tuple[str, ...] | None, field: str) -> cst.Subscript | None:
    """``call[i]``, i the position of ``field`` among the named tuple's ``fields``; None when it is not one."""
    if fields is None or field not in fields:
        return None
    return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(fields.index(field)))))])


# the local name converted code gives mindport.runtime.inplace (its functions return the receiver they update)
INPLACE_ALIAS = runtime_alias("mindport.runtime.inplace")


def _local_names(function: cst.FunctionDef) -> frozenset[str]:
    """The names local to ``function``: its parameters and the names its own body binds (assignment, loop and
    ``with ... as`` targets), less those it declares ``global``/``nonlocal`` (rebinding one of those would not be
    local)."""
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    declared: set[str] = set()
    for node in own_nodes(function, cst.CSTNode):
        if isinstance(node, (cst.AssignTarget, cst.For, cst.AsName)):
            target = node.target if not isinstance(node, cst.AsName) else node.name
            names |= set(target_names(target))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name):
            names.add(node.target.value)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            declared |= {item.name.value for item in node.names}
    return frozenset(names - declared)


# what keeps its input's dtype, for a join's members derived from one name (TableCallTransform._same_root)
_LIKE_KEEPING = frozenset({"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like",
                           "torch.randn_like", "torch.rand_like", "torch.flip", "torch.roll", "torch.conj",
                           "torch.nn.functional.pad",  # the fill value is cast to the input's dtype
                           "torch.norm"})  # norm: a real float's dtype (torch refuses an integer; see _KEEPING_METHODS)
# methods whose new tensor has the receiver's dtype unless a dtype is given (x.new_zeros(n))
_NEW_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})
_KEEPING_METHODS = frozenset({"conj", "clone", "detach", "flip", "roll", "view", "reshape", "permute", "transpose",
                              "contiguous", "unsqueeze", "squeeze", "expand", "expand_as", "repeat", "narrow",
                              "flatten", "neg", "abs", "t", "view_as", "reshape_as", "tril", "triu",
                              "mean", "amax", "amin", "norm"})
# mean, norm: a float's dtype (torch refuses an integer); norm of a complex tensor is real, and MindSpore's Concat
# refuses that mixed join loudly (complex64 with float32: "KernelMod Init Failed"), never a silent value


def _integer_literal_operand(expr: cst.BinaryOperation):
    """The tensor side of ``2 * q``, ``q * 2``, ``x + 1``, ``y - 1``, ``x ** 2`` (an integer literal on the other
    side; for ``**`` only as the exponent): torch keeps the tensor's dtype there (a Python int never widens a
    tensor's category), but for a bool tensor, which becomes int64 -- a join of it with the bool one is refused by
    MindSpore's Concat loudly (Bool with Int64). None for any other operation (``x / 2`` of an integer ``x`` is
    float; ``0.5 * x`` too)."""
    def integer(node) -> bool:
        return isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation)
                                                 and isinstance(node.operator, cst.Minus)
                                                 and isinstance(node.expression, cst.Integer))
    if isinstance(expr.operator, cst.Power):
        return expr.left if integer(expr.right) else None
    if not isinstance(expr.operator, (cst.Multiply, cst.Add, cst.Subtract)):
        return None
    if integer(expr.left) and not integer(expr.right):
        return expr.right
    if integer(expr.right) and not integer(expr.left):
        return expr.left
    return None

# the module of the int-to-float guards (mindport.runtime.promotion names them)
# x.bool(): the runtime cast, for a complex input (x != 0); MindSpore's astype where the input is real by construction
RUNTIME_BOOL = "mindport.runtime.tensor.bool_"
GUARDS = "mindport.runtime.math"


def _api_name(entry) -> str:
    """The name a recorded run gives an entry's call (``torch.Tensor.sigmoid`` -> ``sigmoid``: mindport.observed)."""
    return entry.torch.rpartition(".")[2]

# torch.Tensor.type's runtime function (a cast, a type name, or the type name read): astype for a dtype argument
RUNTIME_TYPE = "mindport.runtime.tensor.type"
TORCH_DTYPE_NAMES = frozenset({"float", "float32", "float64", "double", "float16", "half", "bfloat16", "int", "int8",
                               "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64",
                               "complex128"})

# in-place fills whose out-of-place value is a MindSpore function of (receiver, value): on a receiver nothing else
# holds, read in an expression (TableCallTransform._fresh_fill)
FRESH_FILLS = {"fill_": "mindspore.ops.full_like", "zero_": "mindspore.ops.zeros_like"}
FRESH_ZEROS = frozenset({"zero_"})  # of these, the ones that take no value

# in-place random fills -> (MindSpore's standard draw shaped like its argument, in its floating dtype; the torch
# parameters in order; the scale and the shift of the draw, as (parameter, default) terms: ("to", 1) - ("from_", 0) is
# ``to - from_``), on a receiver nothing else holds, read in an expression (TableCallTransform._fresh_draw): the value is
# ``draw(receiver) * scale + shift``, the runtime's own value with no receiver to write it into
FRESH_DRAWS = {"uniform_": ("mindspore.ops.rand_like", ("from_", "to"), (("to", 1), ("from_", 0)), (("from_", 0),))}

# in-place Bernoulli fills -> (the probability parameter, its default): called as a statement on a local name whose
# tensor nothing else holds (TableCallTransform._unaliased_draw), ``m.bernoulli_(p)`` is ``m = (ops.rand_like(m,
# dtype=ms.float32) < p).astype(m.dtype)``, the runtime bernoulli_'s own value with no other holder to write it into
UNALIASED_DRAWS = {"bernoulli_": ("p", "0.5")}

# torch's legacy constructors given sizes alone -> the dtype of MindSpore's zeros of those sizes
# (TableCallTransform._sized_constructor)
SIZED_CONSTRUCTORS = {"torch.Tensor": "mindspore.float32", "torch.FloatTensor": "mindspore.float32",
                      "torch.DoubleTensor": "mindspore.float64", "torch.LongTensor": "mindspore.int64",
                      "torch.IntTensor": "mindspore.int32", "torch.BoolTensor": "mindspore.bool_"}
# of those dtypes, the floating ones: a float literal in their data is kept as it is (an integer dtype truncates it,
# a bool one reads it as truth: only integers are taken for those; TableCallTransform._data_constructor)
DATA_CONSTRUCTOR_FLOATS = frozenset({"mindspore.float32", "mindspore.float64"})


# torch.nn.functional.normalize's runtime function: written with MindSpore's ops where its input is a name
# (TableCallTransform._native_normalize)
RUNTIME_NORMALIZE = "mindport.runtime.nn_functional.normalize"

# torch.einsum's runtime function: a literal equation that is one batched matrix product is written natively
RUNTIME_EINSUM = "mindport.runtime.math.einsum"

# the runtime softmax (written out for MindSpore's CPU kernel defect on rows of all -inf) -> MindSpore's own, with
# its renames, where the input can hold no such row (native_facts.UnmaskedFacts)
NATIVE_UNMASKED = {"mindport.runtime.nn_functional.softmax": ("mindspore.ops.softmax", {"dim": "axis"})}

# torch.tensor / as_tensor of data that is not a literal (the runtime reads tensors inside a list as torch does, gives
# a tensor back itself) -> MindSpore's own, at a site whose data held no tensor in a recorded torch run
NATIVE_PLAIN_DATA = {"mindport.runtime.tensor.tensor": "mindspore.Tensor",
                     "mindport.runtime.tensor.as_tensor": "mindspore.Tensor"}

# the runtime interpolate / Upsample -> MindSpore's own where a size or an integral scale factor is given and the mode
# is one of these (MindSpore's sampling is torch's there: _sized_interpolate_target)
NATIVE_SIZED_INTERPOLATE = {"mindport.runtime.nn_functional.interpolate": "mindspore.ops.interpolate",
                            "mindport.runtime.layers.Upsample": "mindspore.nn.Upsample"}
SIZED_INTERPOLATE_MODES = frozenset({"nearest", "linear", "bilinear", "trilinear"})

# the runtime's integer accumulators (an int32/bool input accumulates in int64 as in torch) -> MindSpore's own, with
# its renames, on an input that is no integer or bool tensor (TableCallTransform._float_accumulate_target)
NATIVE_FLOAT_ACCUMULATE = {"mindport.runtime.math.cumsum": ("mindspore.ops.cumsum", {"input": "x", "dim": "axis"})}

# the runtime's max/min (reduction or elementwise, told apart at run time) -> MindSpore's elementwise op, its argument
# renamed, where the other argument is a *_like (LIKE_SAME_DTYPE) of the input itself (_elementwise_extreme_target)
NATIVE_ELEMENTWISE = {"mindport.runtime.tensor.max": ("mindspore.ops.maximum", {"dim": "other"}),
                      "mindport.runtime.tensor.min": ("mindspore.ops.minimum", {"dim": "other"})}
LIKE_SAME_DTYPE = frozenset({"torch.zeros_like", "torch.ones_like", "torch.full_like"})

# the runtime's reductions that only raise over an empty extent (as torch does) and order a bool input as uint8 ->
# MindSpore's own, with its renames, over a literal dim of an input no integer or bool tensor by the facts
# (TableCallTransform._raising_extent_target)
NATIVE_RAISING_EXTENT = {"mindport.runtime.math.amax": ("mindspore.ops.amax", {"dim": "axis", "keepdim": "keepdims"}),
                         "mindport.runtime.math.amin": ("mindspore.ops.amin", {"dim": "axis", "keepdim": "keepdims"})}

# the runtime's reductions that only replace the value over an empty extent -> MindSpore's own, with its renames, at a
# site whose every reduced extent held elements in a recorded torch run (TableCallTransform._nonempty_target)
NATIVE_NONEMPTY = {"mindport.runtime.math.mean": ("mindspore.ops.mean", {"dim": "axis", "keepdim": "keep_dims"}),
                   "mindport.runtime.math.sum": ("mindspore.ops.sum", {})}

# the runtime's reductions that only replace the value over an empty extent -> MindSpore's own, with its renames, where
# that value is never read (native_facts.absorbed_reduction)
NATIVE_ABSORBED = {"mindport.runtime.math.mean": ("mindspore.ops.mean", {"dim": "axis", "keepdim": "keep_dims"}),
                   "mindport.runtime.math.sum": ("mindspore.ops.sum", {}),
                   "mindport.runtime.math.var": ("mindspore.ops.var", {"dim": "axis", "correction": "ddof",
                                                                       "keepdim": "keepdims"})}
# of those, the ones whose runtime also serves complex and 0-d inputs: MindSpore's own only on a real input and an
# integer dim (TableCallTransform._real_reduction)
NATIVE_ABSORBED_REAL = frozenset({"mindport.runtime.math.var"})

# the runtime pads that crop a negative amount by slicing (MindSpore 2.10's ops.pad is wrong for one): the table's own
# target where the padding is non-negative by construction (TableCallTransform._non_negative_pad)
NEGATIVE_PAD_GUARDS = frozenset({"mindport.runtime.nn_functional.pad", "mindport.runtime.layers.ConstantPad1d",
                                 "mindport.runtime.layers.ConstantPad2d", "mindport.runtime.layers.ConstantPad3d",
                                 "mindport.runtime.layers.ZeroPad2d"})

# the runtime's (values, indices) functions that exist for torch's int64 indices -> MindSpore's own (same parameters),
# where the indices are never read (native_facts.values_only)
NATIVE_VALUES_ONLY = {"mindport.runtime.math.topk": "mindspore.ops.topk"}

# the runtime's ``*_like`` random functions -> MindSpore's own, given the input's dtype, on a name floating point by
# construction (TableCallTransform._native_like)
NATIVE_LIKE = {"mindport.runtime.math.randn_like": "mindspore.ops.randn_like"}

# torch.nn.init.calculate_gain's runtime function: the number itself where the arguments are literals (_literal_gain)
RUNTIME_GAIN = "mindport.runtime.init.calculate_gain"

# torch.cat skips 1-D tensors of no elements (``acc = torch.tensor([])`` grown by cat); MindSpore's Concat refuses
# them: the runtime's cat where a member may be one (native_facts.empty_cat_members)
LEGACY_EMPTY_CAT = {"mindspore.ops.cat": "mindport.runtime.tensor.cat", "mindspore.mint.cat": "mindport.runtime.tensor.cat"}

# the runtime nn.Softmax (the same defect) -> MindSpore's own, with its renames, where every call of the layer is on an
# input with no such row (native_facts.ClassFacts), or in a port for a GPU or Ascend
def _explicit_dim(mapped: dict) -> bool:
    """A softmax given its dim (not torch's implicit, deprecated ``dim=None``, which torch picks from the input's rank
    when it runs and MindSpore's Softmax refuses): only then may it be MindSpore's own."""
    dim = mapped.get("dim")
    return dim is not None and dim.given and dim.source != "None"


NATIVE_SOFTMAX_LAYER = {"mindport.runtime.layers.Softmax": ("mindspore.nn.Softmax", {"dim": "axis"})}

# runtime layers that only guard a defect of MindSpore's CPU kernel (same constructor arguments) -> MindSpore's own,
# in a port for a GPU or Ascend (``convert --device``)
CPU_GUARD_LAYERS = {"mindport.runtime.layers.Tanh": "mindspore.nn.Tanh", "mindport.runtime.layers.RNN": "mindspore.nn.RNN",
                    "mindport.runtime.layers.GRU": "mindspore.nn.GRU",
                    **{f"mindport.runtime.layers.{cell}": f"mindspore.nn.{cell}" for cell in ("RNNCell", "GRUCell", "LSTMCell")}}

# runtime optimizers that exist for float64 parameters only (MindSpore's ops.SGD refuses them; same constructor
# arguments) -> MindSpore's own, in a project where no float64 tensor can come to be (project.float64_free)
NATIVE_OPTIMIZERS = {"mindport.runtime.optim.SGD": "mindspore.experimental.optim.SGD"}
# MindSpore layers whose 2.10 kernel refuses a float64 input (ReLU6, HShrink, SoftShrink: TypeError) -> the runtime's
# subclass computing float64 by torch's formula, in a project where a float64 tensor can come to be (the entries name
# MindSpore's own Cell, which a float64-free project keeps; the subclass is still an instance of it)
FLOAT64_LAYERS = {f"mindspore.nn.{cell}": f"mindport.runtime.layers.{cell}" for cell in ("ReLU6", "HShrink", "SoftShrink")}

def settings_native(target: str, mapped: dict) -> str:
    """MindSpore's own class for a runtime layer that only reads settings back in torch's form, in a project where no
    code touches them (``mindport.mappings.settings_layers``, ``project.conv1d_settings_unread``); torch's ``padding='valid'``, which
    the conversion writes as the pair (0, 0) the runtime layer reads back as 'valid' (``conv_padding``), is the int 0
    MindSpore's Conv1d takes (it refuses a tuple): the same convolution, whose padding nothing reads. A padding known
    at run time (``(0, 0) if p == 'valid' else ...``) gets 0 on that branch. ``mapped``: the call's MindSpore
    arguments, changed in place."""
    padding = mapped.get("padding")
    if padding is not None:
        try:
            tree = ast.parse(padding.source.strip(), mode="eval").body
        except SyntaxError:
            return target
        zeros = (isinstance(tree, ast.Tuple) and len(tree.elts) == 2
                 and all(isinstance(e, ast.Constant) and e.value == 0 and type(e.value) is int for e in tree.elts))
        if zeros:
            mapped["padding"] = Arg("0", True)
        elif isinstance(tree, ast.IfExp) and ast.unparse(tree.body) == "(0, 0)":
            tree.body = ast.Constant(0)
            mapped["padding"] = Arg(f"({ast.unparse(tree)})", True)
    return SETTINGS_LAYERS[target]


# torch.nn.ModuleList built from a list of Cells, never added to: MindSpore's own container (native_facts.py)
NATIVE_LIST = "mindspore.nn.CellList"

# the reason of the entries whose out= the converter writes (mindport.runtime.inplace.write_out)
OUT_REASON = "MindSpore has no out= argument: assign the result"


def _literal_text(node) -> "str | None":
    """The text of a string literal: a plain string, or an f-string with no replacement field
    (``f"b h i j, b h j d -> b h i d"``); None for anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString) and all(isinstance(p, cst.FormattedStringText) for p in node.parts):
        text = "".join(p.value for p in node.parts)
        prefix = node.start[:-1].lower().replace("f", "")
        quote = node.start[len(node.start) - 1:]
        if "{" in text or "}" in text or "b" in prefix or node.end not in ('"', "'"):
            return None
        try:
            value = ast.literal_eval(f"{prefix}{quote}{text}{node.end}")
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None


def _literal_gain(call: cst.Call) -> cst.BaseExpression | None:
    """``nn.init.calculate_gain('leaky_relu', 0.2)`` with a string literal for ``nonlinearity`` and no ``param``, None
    or a number literal: torch's gain (``mindport.mappings.gains``) as a number literal (``1`` for the linear ones,
    the float's exact repr otherwise). None where an argument is not such a literal, or torch would raise."""
    from mindport.mappings.gains import torch_gain

    names = ("nonlinearity", "param")
    values: dict[str, object] = {}
    for i, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword is not None else (names[i] if i < 2 and not arg.star else None)
        if name not in names or name in values or arg.star:
            return None
        try:
            value = ast.literal_eval(code_of(arg.value))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if name == "nonlinearity" and not isinstance(value, str) \
                or name == "param" and value is not None and (isinstance(value, bool)
                                                              or not isinstance(value, (int, float))):
            return None
        values[name] = value
    if "nonlinearity" not in values:
        return None
    try:
        gain = torch_gain(values["nonlinearity"], values.get("param"))
    except ValueError:
        return None
    return cst.Integer(str(gain)) if isinstance(gain, int) else cst.Float(repr(float(gain)))


def _positional_only(entry, call: cst.Call) -> bool:
    """A call with positional arguments only (``*args`` among them) of an entry whose mapping only renames its
    parameters: MindSpore's method takes them in torch's order (tests/converter/test_native_ports.py checks each such
    entry's signature), so ``x.transpose(*dims)`` is ``x.swapaxes(*dims)`` with no run-time mapping."""
    if not entry.rename or entry.emit or entry.transforms or entry.values or entry.drop or entry.unsupported \
            or entry.switch:
        return False
    return all(a.keyword is None and a.star != "**" for a in call.args)


def _keyed(subscript: cst.Subscript) -> bool:
    """``state["buf"]``: a string key, so a mapping's item (the tensor itself), not a view of a tensor."""
    elements = subscript.slice
    return len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
        and isinstance(elements[0].slice.value, (cst.SimpleString, cst.ConcatenatedString))


# torch.Tensor methods other rules convert (device moves, autograd calls) or that mean something else on the
# objects a tensor-typed name often turns out to be (dict.values(), list.index())
_HANDLED_ELSEWHERE = frozenset({"cpu", "cuda", "xpu", "ipu", "mtia", "backward", "register_hook", "retain_grad",
                                "pin_memory", "share_memory_", "record_stream", "data_ptr", "values", "index",
                                "indices", "new", "resize", "storage"})


# namespaces whose lower-case functions return tensors (a torch function of another namespace may return a module,
# an optimizer, a distribution...); and the methods of torch.distributions' objects a tensor also has
_TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.linalg", "torch.fft", "torch.special", "torch.nn.functional"})
_DISTRIBUTION_METHODS = frozenset({"expand", "sample", "rsample", "log_prob", "cdf", "icdf", "entropy",
                                   "enumerate_support", "perplexity", "sample_n"})


@functools.lru_cache(maxsize=1)
def _tensor_methods() -> frozenset[str]:
    """torch.Tensor's public method names (data/torch_tensor_methods.txt)."""
    return _data_names("torch_tensor_methods.txt")


@functools.lru_cache(maxsize=1)
def _missing_tensor_methods() -> frozenset[str]:
    """torch.Tensor's public methods a MindSpore tensor has no attribute of (data/tensor_methods_mindspore_lacks.txt:
    a static list, so the converter never imports MindSpore; a test checks it against the installed MindSpore)."""
    return _data_names("tensor_methods_mindspore_lacks.txt")


def _data_names(file: str) -> frozenset[str]:
    path = Path(__file__).resolve().parents[2] / "mappings" / "data" / file
    return frozenset(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                     if line.strip() and not line.startswith("#"))


@functools.lru_cache(maxsize=1)
def _removed_tensor_methods() -> frozenset[str]:
    """torch 1.x's tensor methods that torch 2.x's torch.Tensor lacks (data/torch_tensor_methods_removed.txt)."""
    return _data_names("torch_tensor_methods_removed.txt")


# of those, the names flagged on any receiver (no other object of the code is known to have them); ``fft``/``ifft``
# only on a receiver known to be a tensor
_REMOVED_ON_ANY_RECEIVER = frozenset({"rfft", "irfft"})


@functools.lru_cache(maxsize=1)
def _unmapped_tensor_methods() -> frozenset[str]:
    """torch.Tensor's public method names (data/torch_tensor_methods.txt) but those other rules take."""
    return _tensor_methods() - _HANDLED_ELSEWHERE


def _spread_names(entry) -> set[str]:
    """The ``*name`` parameters of an entry torch also takes by keyword (``x.view(size=(2, 3))``): such a call is
    bound and written positionally (MindSpore's methods take the sequence, not torch's keyword)."""
    return {p.name for p in entry.signature or () if p.kind == "var_positional" and p.name in KEYWORD_VARARGS}


def _numpy_names(entry, call: cst.Call) -> bool:
    """Does the call use numpy's names for torch parameters (``x.max(axis=1)``, ``keepdims=``)? torch takes them,
    MindSpore's same-named method may not mean the same (``Tensor.max(axis=1)`` gives no indices): such a call is
    written with torch's names."""
    names = {p.name for p in entry.signature or ()}
    return any(a.keyword is not None and a.keyword.value in NUMPY_NAMES and a.keyword.value not in names
               for a in call.args)


def _imports_dynamically(module: cst.Module, packages) -> bool:
    """Does the file load one of ``packages`` by a call (``__import__('numpy')``, ``importlib.import_module('numpy')``):
    an array package reached without an import statement (a driver's ``__import__('numpy').eye(7)``)?"""
    found = False

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node):
            nonlocal found
            func = node.func
            loader = (isinstance(func, cst.Name) and func.value == "__import__") or (
                isinstance(func, cst.Attribute) and func.attr.value == "import_module")
            if loader and node.args and isinstance(node.args[0].value, cst.SimpleString) \
                    and node.args[0].value.evaluated_value.split(".", 1)[0] in packages:
                found = True

    read(module, _Find())
    return found


def _self_attribute(node) -> str | None:
    """``self.bias`` -> "self.bias"; None for anything else."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def _literal(node: cst.BaseExpression) -> bool:
    """A constant written out: a number, a string, True/False/None, a negated number, a tuple of those."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.Tuple):
        return all(not isinstance(e, cst.StarredElement) and _literal(e.value) for e in node.elements)
    return False


# torch.Tensor methods whose sizes or dims torch also takes as separate arguments (an overload the tables' signatures
# do not list): more arguments than the signature's are no sign that the receiver is not a tensor
# (not transpose: torch.Tensor.transpose takes exactly two dims; numpy's takes a permutation, ``img.transpose(2, 0, 1)``
# of an HWC image handed in as a parameter is numpy's, and the line around it converts: PkuDavidGuan's data pipeline)
_VARARG_METHODS = {"view", "reshape", "repeat", "expand", "permute", "flip", "tile", "squeeze", "new_empty",
                   "new_zeros", "new_ones", "resize", "sum", "mean", "amax", "amin", "std", "var"}


def _parameter_torch_refuses(receiver: cst.BaseExpression, scope, entry, call: cst.Call) -> bool:
    """A function's parameter (typed a tensor for method calls) called with more positional arguments than the
    torch.Tensor method of that name takes (no ``*args``), or fewer than it requires (numpy's ``im.transpose((1, 2,
    0))`` of an image handed in): in a script that runs under torch the receiver is not a tensor (the call would raise there) but the program's own object, as ``def view(model, losses):
    model.inverse(Z).detach().numpy()`` with ``model`` a normalizing flow (Jimmy-2016/DLModels_Pytorch NormFlow: the
    call was flagged as Tensor.inverse and the line kept torch's ``.detach()``, AttributeError at first run fresh15).
    Also a value the parameter's own methods made (``adj.dot(d).transpose()`` of a scipy matrix handed in,
    daiquocnguyen/Graph-Transformer's ``normalize_adj``: "Tensor.transpose: missing required argument 'dim0'" left the
    migration partial): it is only as much a tensor as the parameter is."""
    root = receiver
    while isinstance(root, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(root, cst.Call) and not isinstance(root.func, cst.Attribute):
            return False  # f(adj).transpose(): what another function returns
        root = root.func.value if isinstance(root, cst.Call) else root.value
    if not (isinstance(root, cst.Name) and operand_kind(root, scope) == "param"):
        return False
    if entry.torch.rsplit(".", 1)[-1].rstrip("_") in _VARARG_METHODS:
        return False  # torch also takes these sizes/dims one by one (x.squeeze_(1, 3), x.view(2, 3)): still a tensor
    if any(p.kind == "var_positional" for p in entry.signature):
        return False
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    if len(positional) != len(call.args) and any(a.star for a in call.args):
        return False  # *args at the call: the count is unknown
    own = entry.signature[1:] if entry.signature and entry.signature[0].name == "self" else entry.signature
    capacity = sum(1 for p in own if p.kind == "positional")
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    required = [p for p in own if p.kind == "positional" and p.default is None and p.name not in keywords]
    return len(positional) > capacity or len(positional) < len(required)


def _sized_interpolate_target(target: str, mapped: dict, counted: "Callable[[str], bool] | None" = None) -> str:
    """The runtime interpolate and Upsample (written out for torch's sampling where MindSpore's differs: bicubic, a
    non-integral ``scale_factor``, antialias; MindSpore refuses an integer ``scale_factor``) with a literal ``mode``
    (or torch's default) of nearest, linear, bilinear or trilinear, no ``antialias``, and either a ``size`` (no
    ``scale_factor``, no ``recompute_scale_factor``) or a literal integral ``scale_factor`` (``2``, ``2.0``, ``(2,
    3)``, or a positive int by construction: ``2 ** i`` of a loop's count from zero, ``counted``, _integral_scale; no
    ``size``, ``recompute_scale_factor`` unset): MindSpore's own ``ops.interpolate`` / ``nn.Upsample`` with
    torch's argument names. Its sampling is torch's there (nearest exactly, the linear modes to 1e-6: tests/converter/
    test_native_interpolate.py); an integral scale factor is written as a float with ``recompute_scale_factor=True``
    (MindSpore's form of it: the output size n * s, sampled at n / (n * s), which is torch's 1 / s)."""
    native = NATIVE_SIZED_INTERPOLATE.get(target)
    if native is None:
        return target

    def given(name):
        arg = mapped.get(name)
        return arg is not None and arg.given and arg.source.strip() != "None"

    antialias = mapped.get("antialias")
    if antialias is not None and antialias.given and antialias.literal(None) is not False:
        return target
    mode = mapped.get("mode")
    if mode is not None and mode.given and mode.literal(None) not in SIZED_INTERPOLATE_MODES:
        return target
    if given("recompute_scale_factor") or given("size") == given("scale_factor") \
            or (given("size") and not _plain_size(mapped["size"])):
        return target
    if given("scale_factor"):
        scale = _integral_scale(mapped["scale_factor"], counted)
        if scale is None:
            return target
        mapped["scale_factor"] = Arg(scale)
        mapped["recompute_scale_factor"] = Arg("True")
    else:
        mapped.pop("scale_factor", None)
        mapped.pop("recompute_scale_factor", None)
    mapped.pop("antialias", None)
    return native


_SIZE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def _plain_size(arg: Arg) -> bool:
    """A ``size`` MindSpore's interpolate takes as torch's does: ops.interpolate refuses a NumPy integer or a tensor
    in it ("the 'size[0]' must be int", where the runtime's ``int(s)`` reads one), so only an int literal, a name, an
    attribute, a subscript (``x.shape[2]``), ``int(...)``, ``len(...)`` and ``+ - * // %`` of those, alone or in a
    tuple or list display, are taken (a name may hold a tuple of sizes); a call such as ``np.ceil(h)`` or
    ``t.item()`` keeps the runtime's."""
    node = arg.node if arg.node is not None else cst.parse_expression(arg.source)

    def plain(expr) -> bool:
        if isinstance(expr, (cst.Integer, cst.Name, cst.Attribute, cst.Subscript)):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return plain(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _SIZE_OPERATORS):
            return plain(expr.left) and plain(expr.right)
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("int", "len")

    if isinstance(node, (cst.Tuple, cst.List)):
        return bool(node.elements) and all(isinstance(e, cst.Element) and plain(e.value) for e in node.elements)
    return plain(node)


def _integral_scale(arg: Arg, counted: "Callable[[str], bool] | None" = None) -> "str | None":
    """A literal scale factor of integral values (``2``, ``2.0``, ``(2, 3)``) written as floats (``2.0``, ``(2.0,
    3.0)``); with ``counted`` (is this name a non-negative int: native_facts.loop_index), a positive int by
    construction, ``float(2 ** i)`` (:func:`_positive_int`: segformer's ``nn.Upsample(scale_factor = 2 ** i)`` for
    ``i, dim in enumerate(dims)``); None for anything else."""
    if counted is not None and not arg.is_literal():
        try:
            node = cst.parse_expression(arg.source.strip())
        except cst.ParserSyntaxError:
            return None
        return f"float({arg.source.strip()})" if _positive_int(node, counted) else None
    value = arg.literal(None)
    values = value if isinstance(value, tuple) else (value,)
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
                             and v > 0 for v in values):
        return None
    floats = tuple(float(v) for v in values)
    return repr(floats) if isinstance(value, tuple) else repr(floats[0])


def _positive_int(expr, counted: "Callable[[str], bool]", least: int = 1) -> bool:
    """Is ``expr`` a Python int of at least ``least`` (1 or 0) by construction: an int literal, a name ``counted``
    takes (a non-negative int: at least 0), ``a ** b`` of a positive ``a`` and a non-negative ``b``, ``a * b`` of two
    positive (of least 0: non-negative) ones, ``a + b`` of one of at least ``least`` and one non-negative?"""
    if expr.lpar or expr.rpar:
        expr = expr.with_changes(lpar=[], rpar=[])
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value >= least
    if isinstance(expr, cst.Name):
        return least == 0 and counted(expr.value)
    if isinstance(expr, cst.BinaryOperation):
        left, right = expr.left, expr.right
        if isinstance(expr.operator, cst.Power):
            return _positive_int(left, counted, 1) and _positive_int(right, counted, 0)
        if isinstance(expr.operator, cst.Multiply):
            return _positive_int(left, counted, least) and _positive_int(right, counted, least)
        if isinstance(expr.operator, cst.Add):
            return (_positive_int(left, counted, least) and _positive_int(right, counted, 0)) \
                or (_positive_int(left, counted, 0) and _positive_int(right, counted, least))
    return False


def _native_list_argument(built: cst.Call) -> cst.Call:
    """``nn.CellList(...)`` of a generator expression (``nn.ModuleList(nn.Linear(n, k) for n, k in zip(a, b))``):
    CellList takes a list only, torch's ModuleList consumes the generator when it is built; the same elements as a
    list comprehension, built at the same moment."""
    if len(built.args) != 1 or not isinstance(built.args[0].value, cst.GeneratorExp):
        return built
    gen = built.args[0].value
    return built.with_changes(args=[built.args[0].with_changes(value=cst.ListComp(elt=gen.elt, for_in=gen.for_in))])


def _native_reduction(native: tuple, mapped: dict) -> str:
    """MindSpore's own op for a runtime reduction/softmax a fact settled (``native`` = (name, {torch argument:
    MindSpore's})): the mapped arguments renamed (``dim`` -> ``axis``), ``dtype`` (None or absent) dropped."""
    name, renames = native
    for old, new in renames.items():
        if old in mapped:
            mapped[new] = mapped.pop(old)
    mapped.pop("dtype", None)
    return name
