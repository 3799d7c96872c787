"""einops calls with a literal pattern -> MindSpore operations written out at conversion time."""
from __future__ import annotations

import ast

import libcst as cst
from libcst import parse_expression

from mindport.migrator.einops_patterns import FUNCTIONS, compile_einops
from mindport.migrator.einsum_native import native_einsum
from mindport.migrator.factories import insert_definitions
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import parse_statement, read

_ROLES = {"rearrange": ("tensor", "pattern"), "repeat": ("tensor", "pattern"),
          "reduce": ("tensor", "pattern", "reduction")}
# einops.layers.torch's layers -> (the function they apply, their constructor's positional parameters)
LAYERS = {"einops.layers.torch.Rearrange": ("rearrange", ("pattern",)),
          "einops.layers.torch.Reduce": ("reduce", ("pattern", "reduction"))}
# names a MindSpore Cell already has (MindSpore 2.10, ``dir(nn.Cell())`` without the private ones; checked by
# tests/converter/test_einops_layers.py): an axis length of a generated layer is stored as ``self.<axis>``, so an axis
# named like one of them keeps the run-time layer
CELL_NAMES = frozenset({
    "IGNORE_LIST", "T_destination", "add_flags", "add_flags_recursive", "apply", "arguments_key", "bprop_debug",
    "buffers", "cast_inputs", "cell_init_args", "cell_type", "cells", "cells_and_names", "check_names",
    "check_names_and_refresh_name", "cls_name", "compile", "compile_and_run", "compile_cache", "compile_phase",
    "compiled", "construct", "create_time", "enable_backward_hook", "exist_names", "exist_objs", "extend_repr",
    "generate_scope", "get_buffer", "get_extra_state", "get_flags", "get_func_graph_proto", "get_inputs",
    "get_mixed_precision_type", "get_parameters", "get_scope", "get_sub_cell", "global_cells", "grad_ops_label",
    "has_bprop", "init_parameters_data", "insert_child_to_cell", "insert_param_to_cell", "is_top_cell",
    "jit_config_dict", "load_state_dict", "mixed_precision_type", "name_cells", "named_buffers", "offload",
    "parallel_parameter_merge_net_dict", "parallel_parameter_name_list", "param_prefix", "parameter_layout_dict",
    "parameters_and_names", "parameters_broadcast_dict", "parameters_dict", "phase", "phase_cache",
    "pipeline_segment", "pipeline_stage", "recompute", "register_backward_hook", "register_backward_pre_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_parameter_forward_hook", "register_saved_tensors_hooks",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "remove_redundant_parameters",
    "requires_grad", "run_construct", "set_boost", "set_broadcast_flag", "set_comm_fusion", "set_data_parallel",
    "set_extra_state", "set_grad", "set_inputs", "set_jit_config", "set_mixed_precision_type", "set_train", "shard",
    "state_dict", "to", "to_empty", "to_float", "total_instance_count", "trainable_params", "training",
    "untrainable_params", "update_cell_prefix", "update_cell_type", "update_parameters_name"})


class EinopsPatternTransform(Rule):
    """``einops.rearrange``/``reduce``/``repeat`` with a string-literal pattern become explicit
    ``reshape``/``transpose``/reduction/broadcast operations (``mindport/migrator/einops_patterns.py`` compiles the
    pattern; unnamed lengths are read from the tensor's shape at run time).

    Why: the converted code then needs neither einops nor mindport's einops backend at run time, and it compiles in
    GRAPH_MODE like any other MindSpore code. A call the compiler declines (a pattern that is not a literal,
    ``**kwargs``, a callable reduction, a pattern einops itself rejects) calls the function of the same name in
    ``mindport.runtime.einops_backend`` with the same arguments (``mp_einops.rearrange(t, f"{a} -> {b}", **dims)``):
    it runs einops' own recipe (its checks and errors) at compile time in a graph and holds only reshape/transpose/
    reduce/broadcast operations there, where einops' own function does not compile ("Unsupported statement 'Try'":
    TimeSformer's and Nystromformer's patterns passed as arguments or held in a local). A value that is not a
    MindSpore tensor (a numpy array) goes to einops itself.

    ``einops.pack``/``unpack`` call the runtime's functions of the same names, which compile in a graph (einops'
    own raise ``EinopsError``, which a graph refuses: lucidrains/local-attention's LocalAttention). An einops
    function handed on as an argument (``maybe(rearrange)(t, 'b n (h d) -> b h n d', h=h)``: x-transformers) is the
    runtime's function too.

    ``einops.einsum(x, y, "b l d, b l d -> b l")`` (named axes, the pattern last) with a literal pattern becomes
    torch.einsum's runtime function with the names renamed to letters, ``mp_math.einsum("abc,abc->ab", x, y)``:
    einops' own ``einsum`` does not compile in a graph ("'_Classes' object is not iterable", mamba-minimal's selective
    scan). An equation with a native plan is MindSpore's own ops (einsum_native.native_einsum): one batched matrix
    product (``"b d_in n, b n -> b d_in"``) a matmul, one that sums nothing (``"b l d_in, d_in n -> b l d_in n"``)
    the broadcast product ``ops.expand_dims(delta, 3) * A``.

    The layers ``einops.layers.torch.Rearrange``/``Reduce`` built with a literal pattern (and reduction) become a
    Cell the file gets, one per pattern: its constructor takes the axis lengths the construction passes, its
    ``construct`` is the compiled pattern (``Rearrange1(p1=patch, p2=patch)``). An einops name whose every use was
    written out is no longer imported, and a file that imports nothing of einops any more does not import
    ``mindport.runtime.einops_backend`` (imports.finalize_runtime).
    """

    EXAMPLES = (
        Example(
            before="""
                from einops import rearrange


                def to_frames(x, einops_from, einops_to, **dims):
                    return rearrange(x, f"{einops_from} -> {einops_to}", **dims)
            """,
            after="""
                from mindport.runtime import einops_backend as mp_einops


                def to_frames(x, einops_from, einops_to, **dims):
                    return mp_einops.rearrange(x, f"{einops_from} -> {einops_to}", **dims)
            """,
            note="A pattern known only at run time: mindport's einops function, which a graph compiles (einops' "
                 "recipe is computed when the graph is built).",
        ),
        Example(
            before="""
                from einops import pack, unpack


                def fold(q, k):
                    (q, ps), (k, _) = [pack([t], "* n d") for t in (q, k)]
                    out, = unpack(q + k, ps, "* n d")
                    return out
            """,
            after="""
                from mindport.runtime import einops_backend as mp_einops


                def fold(q, k):
                    (q, ps), (k, _) = [mp_einops.pack([t], "* n d") for t in (q, k)]
                    out, = mp_einops.unpack(q + k, ps, "* n d")
                    return out
            """,
            note="einops' pack and unpack: mindport's, which compile in a graph (einops' own raise EinopsError, which "
                 "a graph refuses: 'Unsupported exception type').",
        ),
        Example(
            before="""
                from einops import rearrange, reduce


                def heads(x, h):
                    return rearrange(x, "b n (h d) -> b h n d", h=h)


                def pool(x):
                    return reduce(x, "b c h w -> b c", "mean")
            """,
            after="""
                from mindspore import ops


                def heads(x, h):
                    return ops.transpose(ops.reshape(x, (x.shape[0], x.shape[1], h, x.shape[2] // h)), (0, 2, 1, 3))


                def pool(x):
                    return ops.mean(x, (2, 3))
            """,
            note="Literal patterns are written out as operations; the lengths einops would infer come from x.shape. "
                 "Every use of rearrange and reduce is written out: neither einops nor its backend is imported.",
        ),
        Example(
            before="""
                from einops.layers.torch import Rearrange
                import torch.nn as nn


                def patches(p, dim):
                    return nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p), nn.Linear(dim, dim))
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Rearrange1(nn.Cell):
                    \"\"\"einops' Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)'), written out with MindSpore's ops.\"\"\"

                    def __init__(self, p1, p2):
                        super().__init__()
                        self.p1 = p1
                        self.p2 = p2

                    def construct(self, x):
                        return ops.reshape(ops.transpose(ops.reshape(x, (x.shape[0], x.shape[1], x.shape[2] // self.p1, self.p1, x.shape[3] // self.p2, self.p2)), (0, 2, 4, 3, 5, 1)), (x.shape[0], (x.shape[2] // self.p1) * (x.shape[3] // self.p2), self.p1 * self.p2 * x.shape[1]))


                def patches(p, dim):
                    return nn.SequentialCell(Rearrange1(p1=p, p2=p), nn.Dense(in_channels=dim, out_channels=dim))
            """,
            note="A layer of a literal pattern is a Cell of the file; the einops import goes with its last use.",
        ),
        Example(
            before="""
                from einops import einsum


                def scan(delta, A, x, y):
                    return einsum(delta, A, "b l d_in, d_in n -> b l d_in n"), einsum(x, y, "b l d, b l d -> b l")
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import math as mp_math


                def scan(delta, A, x, y):
                    return ops.expand_dims(delta, 3) * A, mp_math.einsum('abc,abc->ab', x, y)
            """,
            note="einops' named axes become one letter each, for torch.einsum's runtime function; an equation that "
                 "sums nothing is the broadcast product of the operands.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.compiled_names: set[str] = set()  # local einops names a written-out call used (read by finalize_runtime)
        self._layer_classes: dict[tuple, tuple[str, cst.ClassDef]] = {}  # (function, pattern, ...) -> class
        self._taken: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        self._taken = _names(node)  # the file's names: a generated class takes none of them

    def leave_Module(self, original_node, updated_node):
        made = {name: cls for name, cls in self._layer_classes.values()}
        return insert_definitions(updated_node, made) if made else updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        qual = self.scope.resolve(original_node.func) or ""
        if qual in LAYERS:
            return self._layer(original_node, updated_node, *LAYERS[qual])
        module, _, function = qual.rpartition(".")
        if qual == "einops.einsum":
            return self._einsum(original_node, updated_node)
        if qual in ("einops.pack", "einops.unpack"):  # no pattern to write out: the runtime's, which compiles
            return self._runtime(original_node, updated_node, function)
        if module != "einops" or function not in FUNCTIONS:
            return updated_node
        roles = _bind(function, updated_node.args)
        if roles is None:
            return self._runtime(original_node, updated_node, function)
        pattern = _literal(roles.pop("pattern", None))
        if not isinstance(pattern, str) or "tensor" not in roles:
            return self._runtime(original_node, updated_node, function)
        reduction = roles.pop("reduction", None)
        reduction = _literal(reduction) if reduction is not None else None
        tensor = code_of(roles.pop("tensor"))
        axes = {name: code_of(value) for name, value in roles.items()}
        compiled = compile_einops(function, pattern, axes, tensor, self.ctx.ops_name(),
                                  reduction if isinstance(reduction, str) else None)
        if compiled is None:
            return self._runtime(original_node, updated_node, function)
        self.ctx.alias_for("mindspore.ops")  # the import, scheduled only for a call that is written out
        self.ctx.converted_sites += 1
        self._used(original_node.func)
        return parse_expression(compiled)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        """An einops function handed on as an argument (x-transformers' ``maybe(rearrange)(t, pattern, h=h)``,
        ``partial(rearrange, ...)``, ``map(rearrange, ...)``) -> the runtime's function of the same name: einops' own
        function reaches a graph through the call and does not compile there ("Unsupported statement 'Try'")."""
        value = original_node.value
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return updated_node
        module, _, function = (self.scope.resolve(value) or "").rpartition(".")
        if module != "einops" or function not in (*FUNCTIONS, "pack", "unpack"):
            return updated_node
        self._used(value)
        self.ctx.converted_sites += 1
        return updated_node.with_changes(
            value=parse_expression(self.ctx.target_text(f"mindport.runtime.einops_backend.{function}")))

    def _runtime(self, original_node: cst.Call, updated_node: cst.Call, function: str) -> cst.BaseExpression:
        """A call the pattern compiler declines (a pattern known only at run time, ``**axes``): the same call of
        ``mindport.runtime.einops_backend``'s function, which runs einops' own recipe at compile time in a graph
        (einops' function does not compile there: "Unsupported statement 'Try'")."""
        self._used(original_node.func)
        return updated_node.with_changes(
            func=parse_expression(self.ctx.target_text(f"mindport.runtime.einops_backend.{function}")))

    def _einsum(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """``einsum(x, y, "b l d, b l d -> b l")`` -> ``mp_math.einsum("abc,abc->ab", x, y)``: einops'
        named axes renamed to letters (torch.einsum's runtime function, which a graph compiles); one batched matrix
        product (``"b d_in n, b n -> b d_in"``) is MindSpore's own ``ops.matmul``, one that sums nothing the broadcast
        product ``*`` (einsum_native.native_einsum)."""
        args = updated_node.args
        if len(args) < 2 or any(a.star or a.keyword is not None for a in args):
            return updated_node
        equation = einsum_equation(_literal(args[-1].value))
        if equation is None:
            return updated_node
        operands = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args[:-1]]
        self.ctx.converted_sites += 1
        self._used(original_node.func)
        # one batched matrix product, or a product that sums nothing: MindSpore's own ops (einsum_native)
        native = native_einsum(equation, [o.value for o in operands],
                               lambda name: parse_expression(self.ctx.target_text(f"mindspore.ops.{name}")))
        if native is not None:
            return native
        return cst.Call(func=parse_expression(self.ctx.target_text("mindport.runtime.math.einsum")),
                        args=[cst.Arg(cst.SimpleString(repr(equation)))] + operands)

    def _used(self, func) -> None:
        """Remember the local name a written-out call reached einops by (``rearrange``, ``einops``)."""
        while isinstance(func, cst.Attribute):
            func = func.value
        if isinstance(func, cst.Name):
            self.compiled_names.add(func.value)

    def _layer(self, original_node: cst.Call, updated_node: cst.Call, function: str, positional) -> cst.BaseExpression:
        """``Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)`` -> ``Rearrange1(p1=p, p2=p)``, a Cell
        the file gets (one per pattern, reduction and set of axis names) whose ``construct`` is the compiled pattern."""
        args = updated_node.args
        given = [a for a in args if a.keyword is None]
        if any(a.star for a in args) or len(given) > len(positional):
            return updated_node
        roles = dict(zip(positional, (a.value for a in given)))
        axes = []
        for arg in args:
            if arg.keyword is None:
                continue
            name = arg.keyword.value
            if name in roles or name in positional:
                if name in roles:
                    return updated_node
                roles[name] = arg.value
                continue
            if name in CELL_NAMES or name.startswith("_") or name in ("self", "x"):
                return updated_node
            axes.append(arg)
        pattern = _literal(roles.get("pattern"))
        reduction = _literal(roles.get("reduction")) if "reduction" in positional else None
        if not isinstance(pattern, str) or (function == "reduce" and not isinstance(reduction, str)):
            return updated_node
        names = tuple(a.keyword.value for a in axes)
        key = (function, pattern, reduction, tuple(sorted(names)))
        if key not in self._layer_classes:
            ops = self.ctx.ops_name()
            compiled = compile_einops(function, pattern, {n: f"self.{n}" for n in names}, "x", ops, reduction)
            if compiled is None:
                return updated_node
            leaf = "Rearrange" if function == "rearrange" else "Reduce"
            taken = self._taken | {c for c, _ in self._layer_classes.values()}
            number = 1
            while f"{leaf}{number}" in taken:
                number += 1
            name = f"{leaf}{number}"
            shown = ", ".join([repr(pattern)] + ([repr(reduction)] if reduction is not None else []))
            lines = [f"class {name}({self.ctx.alias_for('mindspore.nn')}.Cell):",
                     f'    """einops\' {leaf}({shown}), written out with MindSpore\'s ops."""', ""]
            if names:
                lines += [f"    def __init__(self, {', '.join(sorted(names))}):", "        super().__init__()"]
                lines += [f"        self.{n} = {n}" for n in sorted(names)]
                lines.append("")
            lines += ["    def construct(self, x):", f"        return {compiled}"]
            self._layer_classes[key] = (name, parse_statement("\n".join(lines) + "\n"))
        self.ctx.alias_for("mindspore.ops")
        self.ctx.converted_sites += 1
        self._used(original_node.func)
        cls = self._layer_classes[key][0]
        kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in axes]
        return cst.Call(func=cst.Name(cls), args=kept)



def _bind(function: str, args) -> dict | None:
    """{role or axis name: value expression}, or None for a call whose arguments are known only at run time."""
    names = _ROLES[function]
    bound: dict = {}
    positional = [a for a in args if a.keyword is None]
    if any(a.star for a in args) or len(positional) > len(names):
        return None
    for name, arg in zip(names, positional):
        bound[name] = arg.value
    for arg in args:
        if arg.keyword is not None:
            if arg.keyword.value in bound:
                return None
            bound[arg.keyword.value] = arg.value
    return bound


def einsum_equation(pattern) -> str | None:
    """einops' einsum pattern (``"b l d_in, d_in n -> b l d_in n"``: axis names separated by spaces, operands by
    commas, ``...`` allowed, an output required) as torch's equation with one letter per name (``"abc,cd->abcd"``);
    None for anything else (it then stays on einops' run-time path)."""
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        return None
    left, right = pattern.split("->")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    names: dict[str, str] = {}

    def term(text):
        out = []
        for token in text.split():
            if token == "...":
                out.append("...")
                continue
            if not token.isidentifier():
                return None
            if token not in names:
                if len(names) == len(letters):
                    return None
                names[token] = letters[len(names)]
            out.append(names[token])
        return "".join(out)

    inputs = [term(part) for part in left.split(",")]
    output = term(right)
    if output is None or any(t is None or t == "" for t in inputs):
        return None
    if any(name not in {names.get(t) for t in left.replace(",", " ").split()} for name in output if name != "."):
        return None  # an output axis no input has: einops refuses it
    return ",".join(inputs) + "->" + output


def _literal(node):
    """The value of a plain string literal (implicit concatenation included), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = ast.literal_eval(code_of(node))
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None


def _names(node) -> set:
    found = set()

    class _Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    read(node, _Find())
    return found
