"""The converter rule InitTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/init_calls.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import own_nodes
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import NO_SPACE_EQUAL, compact_source, head_name, method
from mindport.migrator.walk import parse_expression, parse_statement, walk

# torch.nn.init.<fn> -> (MindSpore initializer class, [(torch arg, MindSpore arg, default source)], fixed kwargs)
_INITS: dict[str, tuple[str, list[tuple[str, str, str | None]]]] = {
    "uniform_": ("Uniform", []),  # handled specially: (a, b) -> scale only when symmetric; see _init_args
    "normal_": ("Normal", [("mean", "mean", "0.0"), ("std", "sigma", "1.0")]),
    "constant_": ("Constant", [("val", "value", None)]),
    "ones_": ("One", []),
    "zeros_": ("Zero", []),
    "xavier_uniform_": ("XavierUniform", [("gain", "gain", "1.0")]),
    "xavier_normal_": ("XavierNormal", [("gain", "gain", "1.0")]),
    "kaiming_uniform_": ("HeUniform", [("a", "negative_slope", "0"), ("mode", "mode", "'fan_in'"),
                                       ("nonlinearity", "nonlinearity", "'leaky_relu'")]),
    "kaiming_normal_": ("HeNormal", [("a", "negative_slope", "0"), ("mode", "mode", "'fan_in'"),
                                     ("nonlinearity", "nonlinearity", "'leaky_relu'")]),
    "trunc_normal_": ("TruncatedNormal", [("mean", "mean", "0.0"), ("std", "sigma", "1.0"), ("a", "a", "-2.0"),
                                          ("b", "b", "2.0")]),
    "orthogonal_": ("Orthogonal", [("gain", "gain", "1.0")]),
    "eye_": ("Identity", []),
}
# nonlinearity names mindspore.common.initializer's gain table knows (others raise ValueError there)
_MS_GAINS = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
             "sigmoid", "tanh", "relu", "leaky_relu"}
_INIT_SIGNATURES = {
    "uniform_": ("a", "b"),
    "normal_": ("mean", "std"),
    "constant_": ("val",),
    "xavier_uniform_": ("gain",),
    "xavier_normal_": ("gain",),
    "kaiming_uniform_": ("a", "mode", "nonlinearity"),
    "kaiming_normal_": ("a", "mode", "nonlinearity"),
    "trunc_normal_": ("mean", "std", "a", "b"),
    "orthogonal_": ("gain",),
}


class InitTransform(Rule):
    """``nn.init.kaiming_normal_(m.weight, mode="fan_out")`` ->
    ``m.weight.set_data(initializer(HeNormal(mode="fan_out"), m.weight.shape, m.weight.dtype))``.

    torch initialises in place; MindSpore replaces a Parameter's data with an initializer's tensor. ``uniform_(t, a,
    b)`` becomes ``Uniform(scale)`` only when ``a == -b``; anything else is flagged.

    A layer wrapped by ``nn.utils.weight_norm``/``spectral_norm`` earlier in the file (``self.conv =
    nn.utils.weight_norm(self.conv)``) has a computed ``weight`` (a Tensor, no ``set_data``): its init goes to the
    table's ``mindport.runtime.init`` function, which fills a plain Tensor in place, as torch's init fills the
    derived tensor that the next forward computes again.

    An init of a function's own argument (``def _init_rsqrt_uniform_(tensor, d): return nn.init.uniform_(tensor,
    -d**-0.5, d**-0.5)``, called with a layer's Parameter and with a fresh tensor) goes to the table's runtime init,
    which fills a Parameter by ``set_data`` and a plain Tensor in place: which one it is, only the call knows.

    A loop over the pieces of a parameter that initialises each piece (``for w in weight.chunk(4, 0):
    nn.init.orthogonal_(w)``, an LSTM's gates) writes through torch's views; MindSpore's ``chunk``/``split``/
    ``unbind`` give copies, so the pieces are kept in a list, each initialised in place by the runtime init, and
    joined back into the parameter after the loop (``set_data`` of their ``ops.cat``, ``ops.stack`` for ``unbind``).
    The same for any loop that updates such pieces in place by tensor methods (a plain-torch FlashAttention: ``for
    qc, oc, rs in zip(q.split(n, dim=-2), o.split(n, dim=-2), sums.split(n, dim=-2)): oc.mul_(d).add_(v)``, also over
    ``enumerate(...)`` and over a zip bound to a name first): the pieces of each updated tensor are kept in a list the
    loop runs over, and the tensor is set from them after the loop (``mp_inplace.copy_(o, src=ops.cat(_mp_pieces_1,
    axis=-2))``, which keeps its identity). Before, the updates filled copies and ``o`` stayed as it was, silently.

    An init of ``p.data`` (``nn.init.sparse_(self.w.data, 0.5)``, ``uniform_(layer.weight.data, a=0.2, b=0.7)``)
    fills ``p`` itself, natively or through the table's runtime init alike: MindSpore's ``Parameter.data`` is a plain
    Tensor copy, and a fill of the copy would leave the Parameter as it was.
    """

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._computed: set[tuple[str, str | None]] = set()  # (layer expression, its reparametrized member)
        self._view_loops: dict[int, tuple[cst.BaseExpression, str, cst.BaseExpression]] = {}  # For -> (base, join, dim)
        self._view_names: list[str] = []  # loop targets that are pieces of a parameter (views in torch, copies here)
        self._piece_loops: dict[int, dict] = {}  # For -> pieces updated in place by the loop (_updated_pieces)
        self._shapes: dict[int, tuple] = {}  # For -> (over enumerate(...), the name its zip is bound to or None)
        self._zips: list[dict] = []  # per function: name -> the zip(...) call it is bound to (once)
        self._converted_zips: dict[int, cst.BaseExpression] = {}  # that zip call (original) -> converted
        self._arguments: list[set[str]] = [set()]  # the enclosing functions' parameters (self and cls left out)
        self._data_receivers: set[int] = set()  # p.data given to an nn.init function: filled as p (leave_Attribute)
        self._plain_members: list[set[str]] = [set()]  # per function: self.X last assigned a fresh tensor (not a
        # Parameter): ``self.w = torch.randn(m, d)`` then ``nn.Parameter(nn.init.orthogonal_(self.w))``
        self._reparametrizes = False  # the file calls weight_norm/spectral_norm somewhere (visit_Module)

    def visit_Module(self, node: cst.Module) -> None:
        """Does the file reparametrize a layer anywhere (``nn.utils.weight_norm(nn.Linear(a, b), dim=0)`` inside a
        list, not only ``self.conv = weight_norm(self.conv)``): a layer reached through an argument may then be one."""
        calls = _Calls()
        walk(node, calls)
        self._reparametrizes = any(self.scope.resolve_torch(call.func) in _REPARAMETRIZE for call in calls.found)

    def visit_Call(self, node: cst.Call) -> None:
        """``nn.init.<fn>_(p.data, ...)``: its ``p.data`` becomes ``p`` (leave_Attribute), for the native rewrite and
        for the table's runtime init alike (this rule's rewrite of the call would stop the table's)."""
        qual = self.scope.resolve_torch(node.func)
        if not (qual or "").startswith("torch.nn.init.") or not node.args or node.args[0].star \
                or (node.args[0].keyword is not None and node.args[0].keyword.value != "tensor"):
            return
        first = node.args[0].value
        if isinstance(first, cst.Attribute) and first.attr.value == "data" \
                and _parameter_reference(first.value, self.scope):
            self._data_receivers.add(id(first))

    def leave_Attribute(self, original_node, updated_node):
        if id(original_node) in self._data_receivers:
            self._data_receivers.discard(id(original_node))
            return updated_node.value
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        self._arguments.append(names - {"self", "cls"})
        bound: dict[str, list] = {}
        for assign in own_nodes(node, cst.Assign):
            for t in assign.targets:
                if isinstance(t.target, cst.Name):
                    bound.setdefault(t.target.value, []).append(assign.value)
        self._zips.append({k: v[0] for k, v in bound.items() if len(v) == 1 and _zip_call(v[0])})
        self._plain_members.append(set())

    def leave_FunctionDef(self, original_node, updated_node):
        self._arguments.pop()
        self._zips.pop()
        self._plain_members.pop()
        return updated_node

    def leave_Assign(self, original_node, updated_node):
        if self._zips and any(v is original_node.value for v in self._zips[-1].values()):
            self._converted_zips[id(original_node.value)] = updated_node.value  # rebuilt before the loop
        for target in original_node.targets:  # after the value: nn.Parameter(init(self.w)) still saw the tensor
            if isinstance(target.target, cst.Attribute):
                member = compact_source(target.target)
                if self._fresh_tensor(original_node.value):
                    self._plain_members[-1].add(member)
                else:
                    self._plain_members[-1].discard(member)
        return updated_node

    def _fresh_tensor(self, value: cst.BaseExpression) -> bool:
        """A torch function's tensor (``torch.randn(m, d)``, ``torch.empty(n)``, ``torch.Tensor(a, b)``): a plain
        Tensor in MindSpore, with no ``set_data``; not a Parameter, a layer or anything of ``torch.nn``."""
        qual = self.scope.resolve_torch(value.func) if isinstance(value, cst.Call) else None
        return qual is not None and qual.rpartition(".")[0] in ("torch", "torch.Tensor") \
            and qual != "torch.Tensor.__call__"

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                def init_weights(m):
                    if isinstance(m, nn.Conv2d):
                        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                        nn.init.zeros_(m.bias)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn


                def init_weights(m):
                    if isinstance(m, nn.Conv2d):
                        m.weight.set_data(ms.common.initializer.initializer(ms.common.initializer.HeNormal(negative_slope=0, mode="fan_out", nonlinearity="relu"), m.weight.shape, m.weight.dtype))
                        m.bias.set_data(ms.common.initializer.initializer(ms.common.initializer.Zero(), m.bias.shape, m.bias.dtype))
            """,
            note="torch's defaults are written out: MindSpore's initializers default differently.",
        ),
        Example(
            before="""
                import torch.nn as nn


                def init_uniform(layer):
                    if isinstance(layer, nn.Linear):
                        nn.init.uniform_(layer.weight, -0.1, 0.1)
                        nn.init.uniform_(layer.bias, 0.0, 1.0)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import init as mp_init


                def init_uniform(layer):
                    if isinstance(layer, nn.Dense):
                        layer.weight.set_data(ms.common.initializer.initializer(ms.common.initializer.Uniform(scale=0.1), layer.weight.shape, layer.weight.dtype))
                        mp_init.uniform_(tensor=layer.bias, a=0.0, b=1.0)
            """,
            note="A symmetric uniform_ is MindSpore's Uniform(scale); an asymmetric one goes to the runtime layer's uniform_ (its table entry).",
        ),
        Example(
            before="""
                import torch.nn as nn


                def init_gates(lstm):
                    for w in lstm.weight_hh_l0.chunk(4, 0):
                        nn.init.orthogonal_(w)
            """,
            after="""
                import mindspore as ms
                from mindport.runtime import init as mp_init


                def init_gates(lstm):
                    _mp_views = list(lstm.weight_hh_l0.chunk(4, 0))
                    for w in _mp_views:
                        mp_init.orthogonal_(tensor=w)
                    lstm.weight_hh_l0.set_data(ms.ops.cat(_mp_views, axis=0))
            """,
            note="Each gate's block initialised on its own, as torch's views are, then written back into the parameter.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Gate(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.w = nn.Parameter(torch.empty(16, 8))
                        nn.init.uniform_(self.w.data, a=0.2, b=0.7)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import init as mp_init


                class Gate(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.w = ms.Parameter(ops.zeros((16, 8)))
                        mp_init.uniform_(tensor=self.w, a=0.2, b=0.7)
            """,
            note="p.data is a copy in MindSpore: the runtime init fills the Parameter itself.",
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        """``self.conv = nn.utils.weight_norm(self.conv)``: the layer's ``weight`` is computed from ``weight_g`` and
        ``weight_v`` from here on (a Tensor, not a Parameter)."""
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.Call) or not value.args:
            return
        qual = self.scope.resolve_torch(value.func)
        if qual not in _REPARAMETRIZE:
            return
        name = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "name"),
                    value.args[1].value if len(value.args) > 1 and value.args[1].keyword is None else None)
        leaf = name.evaluated_value if isinstance(name, cst.SimpleString) else "weight" if name is None else None
        target = compact_source(node.targets[0].target)
        self._computed.add((target, leaf))

    def visit_For(self, node: cst.For) -> None:
        updated = self._updated_pieces(node)
        if updated:
            self._piece_loops[id(node)] = updated
            return
        pieces = self._pieces(node.iter)
        if pieces is None or not isinstance(node.target, cst.Name):
            return
        name = node.target.value
        if any((self.scope.resolve_torch(c.func) or "").startswith("torch.nn.init.") and c.args
               and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == name
               for c in own_nodes(node.body, cst.Call)):
            self._view_loops[id(node)] = pieces
            self._view_names.append(name)

    def _updated_pieces(self, node: cst.For) -> dict:
        """``for qc, oc in zip(q.split(n, -2), o.split(n, -2)): oc.mul_(s).add_(v)`` (a plain-torch FlashAttention's
        running output, row sums and maxima): the loop updates in place pieces that torch's ``split``/``chunk``/
        ``unbind`` give as views of a tensor. {position of the pieces call among zip's arguments (None: the iterable
        itself): (base, join, dim)} for each piece whose loop name gets an in-place update (``name.<op>_(...)``,
        chained or not); empty for any other loop. Pieces of a parameter initialised by ``nn.init`` are the loop
        below's (one name, set_data)."""
        it, target = node.iter, node.target
        self._loop_shape = (False, None)
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" \
                and len(it.args) == 1 and not it.args[0].keyword and not it.args[0].star \
                and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            it, target = it.args[0].value, target.elements[1].value  # for i, (a, b) in enumerate(zip(...))
            self._loop_shape = (True, None)
        if isinstance(it, cst.Name) and self._zips and it.value in self._zips[-1]:
            self._loop_shape = (self._loop_shape[0], it.value)  # splits = zip(...); for ... in enumerate(splits)
            it = self._zips[-1][it.value]
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "zip" \
                and not any(a.star or a.keyword for a in it.args) and isinstance(target, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(it.args) and not any(isinstance(e, cst.StarredElement)
                                                                       for e in target.elements):
            slots = [(i, a.value, e.value) for i, (a, e) in enumerate(zip(it.args, target.elements))]
        elif isinstance(target, cst.Name):
            slots = [(None, it, target)]
        else:
            return {}
        updated = {}
        for position, value, name in slots:
            pieces = self._pieces(value, local=True)
            if pieces is not None and isinstance(name, cst.Name) and _updated_in_place(node.body, name.value):
                updated[position] = pieces
        if updated:
            self._shapes[id(node)] = self._loop_shape
        if None in updated and any(
                (self.scope.resolve_torch(c.func) or "").startswith("torch.nn.init.") for c in
                own_nodes(node.body, cst.Call)):
            return {}  # for w in weight.chunk(4, 0): nn.init.orthogonal_(w): the init loop's
        return updated

    def _write_back_pieces(self, updated_node, updated: dict, shape):
        """The pieces of each updated tensor kept in a list before the loop, the loop over them, each tensor set
        from its pieces after it (``mp_inplace.copy_(o, src=ops.cat(_mp_pieces_1, axis=-2))``: the tensor keeps its
        identity, as torch's base of the views does)."""
        code = cst.Module(body=[]).code_for_node
        ms = self.ctx.alias_for("mindspore")
        copy = code(self.ctx.target_expr("mindport.runtime.inplace.copy_"))
        enumerated, bound = shape
        loop_iter = updated_node.iter
        if bound is not None:
            it = self._converted_zips.get(id(self._zips[-1][bound])) if self._zips else None
            if it is None:
                return updated_node
        else:
            it = loop_iter.args[0].value if enumerated else loop_iter
        before, after = [], []
        for position, (base, join, dim) in updated.items():
            name = f"_mp_pieces_{position if position is not None else 0}"
            current = it if position is None else it.args[position].value
            before.append(parse_statement(f"{name} = list({code(current)})"))
            after.append(parse_statement(f"{copy}({code(base)}, src={ms}.ops.{join}({name}, axis={code(dim)}))"))
            if position is None:
                it = cst.Name(name)
            else:
                args = list(it.args)
                args[position] = args[position].with_changes(value=cst.Name(name))
                it = it.with_changes(args=args)
        self.ctx.converted_sites += len(updated)
        if bound is not None:  # the zip is built again over the lists, under its name
            before.append(cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(cst.Name(bound))], value=it)]))
        elif enumerated:
            loop_iter = loop_iter.with_changes(args=[loop_iter.args[0].with_changes(value=it)])
        else:
            loop_iter = it
        return cst.FlattenSentinel([*before, updated_node.with_changes(iter=loop_iter), *after])

    def leave_For(self, original_node, updated_node):
        updated = self._piece_loops.pop(id(original_node), None)
        if updated:
            return self._write_back_pieces(updated_node, updated, self._shapes.pop(id(original_node)))
        pieces = self._view_loops.pop(id(original_node), None)
        if pieces is None:
            return updated_node
        self._view_names.pop()
        base, join, dim = pieces
        code = cst.Module(body=[]).code_for_node
        ms = self.ctx.alias_for("mindspore")
        views = parse_statement(f"_mp_views = list({code(updated_node.iter)})")
        back = parse_statement(f"{code(base)}.set_data({ms}.ops.{join}(_mp_views, axis={code(dim)}))")
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel([views, updated_node.with_changes(iter=cst.Name("_mp_views")), back])

    def _pieces(self, it: cst.BaseExpression, local: bool = False):
        """``P.chunk(n, d)``/``P.split(s, d)``/``P.unbind(d)`` (or torch.chunk/split/unbind(P, ...)) of a parameter
        ``P`` (``local``: of any name or attribute chain, a local tensor too): (P, how the pieces join back, the
        dimension); None for anything else."""
        if not isinstance(it, cst.Call) or any(a.star for a in it.args):
            return None
        qual = self.scope.resolve_torch(it.func)
        if qual in ("torch.chunk", "torch.split", "torch.unbind") and it.args:
            kind, base, rest = qual.rsplit(".", 1)[1], it.args[0].value, list(it.args[1:])
        elif isinstance(it.func, cst.Attribute) and it.func.attr.value in ("chunk", "split", "unbind") and qual is None:
            kind, base, rest = it.func.attr.value, it.func.value, list(it.args)
        else:
            return None
        if isinstance(base, cst.Call) or not (_parameter_reference(base, self.scope) or local and head_name(base)):
            return None
        position = 0 if kind == "unbind" else 1
        keyword = next((a.value for a in rest if a.keyword is not None and a.keyword.value == "dim"), None)
        positional = [a.value for a in rest if a.keyword is None]
        dim = keyword if keyword is not None else positional[position] if len(positional) > position \
            else cst.Integer("0")
        return base, "stack" if kind == "unbind" else "cat", dim

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve_torch(original_node.func)
        if qual is None or not qual.startswith("torch.nn.init."):
            return updated_node
        name = qual.rsplit(".", 1)[1]
        if name not in _INITS:
            return updated_node  # the table flags it (or maps calculate_gain & co.)
        args = updated_node.args
        if not args or any(a.star for a in args) or (args[0].keyword is not None
                                                     and args[0].keyword.value != "tensor"):
            return updated_node
        tensor = args[0].value
        if isinstance(tensor, cst.Attribute) and tensor.attr.value == "data" and _parameter_reference(tensor.value,
                                                                                                      self.scope):
            tensor = tensor.value  # init of p.data: MindSpore's Parameter.data is a plain Tensor copy, fill p itself
        if isinstance(tensor, cst.Subscript):
            return updated_node  # an indexed view (a copy in MindSpore): the table's runtime init, assigned back
        if isinstance(tensor, cst.Name) and tensor.value in self._view_names:
            return updated_node  # a piece of a parameter (a copy in MindSpore): the runtime init fills it in place
        if isinstance(tensor, cst.Name) and tensor.value in self._arguments[-1]:
            return updated_node  # a helper's argument (TabM's _init_rsqrt_uniform_(tensor, d), given a Parameter and
            # a fresh ops.zeros): a Parameter or a plain Tensor, known at run time; the runtime init fills either
        if not _parameter_reference(tensor, self.scope) or compact_source(tensor) in self._plain_members[-1]:
            return updated_node  # a fresh tensor (nn.init.orthogonal_(torch.randn(d, d)), or a member last given
            # one: self.w = torch.randn(m, d)): the table's runtime init
        if self._reparametrizes and isinstance(tensor, cst.Attribute) and head_name(tensor) in self._arguments[-1]:
            return updated_node  # ``m.weight`` of a layer handed to ``model.apply(weights_init)`` in a file that
            # weight-norms some of its layers (kimy-de/pinns): a Parameter or a weight-normed layer's computed Tensor,
            # known at run time; the table's runtime init fills either (``set_data`` failed on the Tensor)
        if isinstance(tensor, cst.Attribute) and ((compact_source(tensor.value), tensor.attr.value) in self._computed
                                                  or (compact_source(tensor.value), None) in self._computed):
            return updated_node  # a weight-normed layer's computed weight (a Tensor): the table's runtime init fills
            # it as torch's does, and the next read computes it again from weight_g and weight_v, as in torch
        given: dict[str, cst.BaseExpression] = {}
        names = _INIT_SIGNATURES.get(name, ())
        for i, arg in enumerate(args[1:]):
            if arg.keyword is None:
                if i >= len(names):
                    return updated_node
                given[names[i]] = arg.value
            elif arg.keyword.value == "generator":
                if compact_source(arg.value) != "None":
                    return updated_node  # the table's runtime init draws from that generator's stream
                continue
            else:
                given[arg.keyword.value] = arg.value
        cls, spec = _INITS[name]
        init_args: list[cst.Arg] = []
        if name == "uniform_":
            low, high = given.get("a"), given.get("b")
            low_s = compact_source(low) if low is not None else "0.0"
            high_s = compact_source(high) if high is not None else "1.0"
            if low_s.lstrip("-") != high_s or not low_s.startswith("-"):
                return updated_node  # Uniform(scale) is symmetric: the table's mindport.runtime.init.uniform_ takes it
            init_args.append(cst.Arg(parse_expression(high_s), keyword=cst.Name("scale"), equal=NO_SPACE_EQUAL))
        else:
            known = {t for t, _, _ in spec}
            if set(given) - known:
                return updated_node
            gain = given.get("nonlinearity")
            if gain is not None and not (isinstance(gain, cst.SimpleString) and gain.evaluated_value in _MS_GAINS):
                return updated_node  # MindSpore's gain table lacks it ("selu"): the table's runtime init has torch's
            for torch_arg, ms_arg, default in spec:
                value = given.get(torch_arg)
                if value is None:
                    if default is None:
                        return updated_node  # a required argument is missing: leave it to the table to flag
                    value = parse_expression(default)  # MindSpore's defaults differ (Normal sigma=0.01)
                init_args.append(cst.Arg(value, keyword=cst.Name(ms_arg), equal=NO_SPACE_EQUAL))
        ms = self.ctx.alias_for("mindspore")
        self.ctx.converted_sites += 1
        self.ctx.handled.add(id(original_node))
        init = cst.Call(func=parse_expression(f"{ms}.common.initializer.{cls}"), args=init_args)
        data = cst.Call(func=parse_expression(f"{ms}.common.initializer.initializer"), args=[
            cst.Arg(init), cst.Arg(cst.Attribute(value=tensor, attr=cst.Name("shape"))),
            cst.Arg(cst.Attribute(value=tensor, attr=cst.Name("dtype")))])
        return method(tensor, "set_data", [cst.Arg(data)])


def _zip_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "zip" \
        and not any(a.star or a.keyword for a in expr.args)


def _updated_in_place(body, name: str) -> bool:
    """Does the loop body update ``name`` in place by a tensor method (``name.mul_(s)``, ``name.mul_(s).add_(v)``,
    ``name.copy_(x)``)?"""
    for call in own_nodes(body, cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value.endswith("_")
                and not func.attr.value.startswith("_")):
            continue
        receiver = func.value
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value.endswith("_"):
            receiver = receiver.func.value  # oc.mul_(s).add_(v): add_ updates what mul_ returned, oc itself
        if isinstance(receiver, cst.Name) and receiver.value == name:
            return True
    return False


def _parameter_reference(expr: cst.BaseExpression, scope) -> bool:
    """Does ``expr`` evidently name a Parameter that ``set_data`` can fill in place: an attribute (``m.weight``,
    ``self.blocks[0].bias``), or a name that is not a tensor this function made? A call
    (``nn.init.xavier_uniform_(torch.empty(a, b))``) or a local tensor is a plain Tensor in MindSpore (no
    ``set_data``), and the expression would run three times: ``mindport.runtime.init`` fills and returns it."""
    if isinstance(expr, cst.Name):
        return scope.kind_of(expr.value) != "tensor"
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return isinstance(expr, cst.Name)


class _Calls(cst.CSTVisitor):
    """Every call of a tree, nested functions and classes included."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


# torch's reparametrizations that make a layer's member a computed tensor
_REPARAMETRIZE = frozenset({"torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                            "torch.nn.utils.parametrizations.weight_norm",
                            "torch.nn.utils.parametrizations.spectral_norm"})
