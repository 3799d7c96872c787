"""The converter rule PartialAttributeTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/partial_attributes.md shows both."""
from __future__ import annotations

import builtins
import collections

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import target_names
from mindport.migrator.walk import parse_expression, walk

_BUILTINS = frozenset(dir(builtins))
_PLAIN = (cst.Name, cst.Integer, cst.Float, cst.SimpleString)
_RUNTIME = "mindport.runtime.graph_safe"


def _value_leaves(value: cst.BaseExpression):
    """The expressions an assignment's value may be: itself, or a branch of a conditional expression or of ``and``/
    ``or`` (recursively)."""
    if isinstance(value, cst.IfExp):
        yield from _value_leaves(value.body)
        yield from _value_leaves(value.orelse)
    elif isinstance(value, cst.BooleanOperation):
        yield from _value_leaves(value.left)
        yield from _value_leaves(value.right)
    else:
        yield value


class PartialAttributeTransform(Rule):
    """In a model's ``__init__``, ``self.pack = partial(packing, r=r)`` whose attribute the class only ever calls with
    positional arguments becomes ``self.pack = lambda *args: packing(*args, r=r)``.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) does not compile a ``functools.partial`` object held on a Cell:
    ``self.pack(x)`` in ``construct`` runs as Python through the JIT Fallback, and what it returns has no type the
    graph knows, so the next layer fails ("Failed to infer for primitive:DtypeToEnum" in a ConstantPad2d; the
    unbatched check of a Conv3d compiled both branches: batch 7 PackNet's PackLayerConv3d). A stored lambda compiles.
    The lambda means the same: the partial's positional arguments first, its keywords after the call's arguments.
    Only when the partial's arguments are constants or names ``__init__`` binds once (outside a loop: the lambda reads
    them when called), the function is not torch's, and every use of the attribute in the class is a call without
    keywords; otherwise it is left as written.

    Any other partial whose object a model's ``__init__`` keeps on the model (the value given a ``self`` attribute,
    a branch of a conditional expression or of ``and``/``or`` there, a local name so given, or the function of such a
    partial) becomes ``mp_graph_safe.partial``: the same meaning in an object a static graph compiles
    (``ms.jit_class``). x-transformers' ``self.attn_fn = partial(softmax_fn, dtype=torch.float32) if not qk_norm
    else softmax_fn`` returned an interpreted object in a graph, and the einsum after it failed ("The tensor should
    have only one element, but got 0"). So does a partial a model's method other than ``forward`` gives to a call by
    name (``block(..., downsample)`` in a ``_make_layer``, directly or through a local name), whose Cell keeps it:
    functools' object on two instances of one Cell class gave "Graph cycle exists" (video-classification-3d-cnn's
    type-A shortcut). A partial only called in ``__init__``, or given to a builtin (``map``) or a method
    (``self.apply``), stays functools'.
    """

    EXAMPLES = (
        Example(
            before="""
                from functools import partial

                import torch.nn as nn


                def packing(x, r=2):
                    return x * r


                class Pack(nn.Module):
                    def __init__(self, r=2):
                        super().__init__()
                        self.pack = partial(packing, r=r)
                        self.scale = partial(packing, r=3)

                    def forward(self, x):
                        return self.pack(x) + self.scale(x, r=4)
            """,
            after="""
                from functools import partial

                from mindspore import nn
                from mindport.runtime import graph_safe as mp_graph_safe


                def packing(x, r=2):
                    return x * r


                class Pack(nn.Cell):
                    def __init__(self, r=2):
                        super().__init__()
                        self.pack = lambda *args: packing(*args, r=r)
                        self.scale = mp_graph_safe.partial(packing, r=3)

                    def construct(self, x):
                        return self.pack(x) + self.scale(x, r=4)
            """,
            note="A partial called with keywords somewhere (self.scale) is the runtime's partial, not a lambda.",
        ),
        Example(
            before="""
                from functools import partial

                import torch.nn as nn
                import torch.nn.functional as F


                class Attend(nn.Module):
                    def __init__(self, qk_norm=False):
                        super().__init__()
                        softmax_fn = partial(F.softmax, dim=-1)
                        self.attn_fn = partial(softmax_fn, dim=-2) if qk_norm else softmax_fn
                        at_least = partial(max, 8)
                        self.width = at_least(4)

                    def forward(self, x):
                        return self.attn_fn(x) * self.width
            """,
            after="""
                from functools import partial

                from mindspore import nn
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import graph_safe as mp_graph_safe


                def torch_softmax(input, dim=None, _stacklevel=3, dtype=None):
                    \"\"\"torch.nn.functional.softmax's parameters, calling mp_F.softmax.\"\"\"
                    return mp_F.softmax(input, dim=dim, dtype=dtype)


                class Attend(nn.Cell):
                    def __init__(self, qk_norm=False):
                        super().__init__()
                        softmax_fn = mp_graph_safe.partial(torch_softmax, dim=-1)
                        self.attn_fn = mp_graph_safe.partial(softmax_fn, dim=-2) if qk_norm else softmax_fn
                        self.width = max(8, 4)

                    def construct(self, x):
                        return self.attn_fn(x) * self.width
            """,
            note="Kept on the model and called in forward: the runtime's partial (a graph compiles it). A partial "
                 "only called in __init__ is not (PartialCallTransform writes this one's call out).",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._plan: set[int] = set()  # ids of the partial(...) calls to write as lambdas
        self._graph_partials: set[int] = set()  # ids of the partial(...) calls to make the runtime's partial
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if node.name.value in self._module_classes and isinstance(node.body, cst.IndentedBlock):
            self._plan |= self._partials(node)
            self._graph_partials |= self._handed_on(node) - self._plan

    def _handed_on(self, node: cst.ClassDef) -> set[int]:
        """The partial calls of a model's methods other than ``forward`` whose object is given to a call by name (a class or
        a function, not a builtin's or a method's): an argument
        itself (a branch of a conditional expression or of ``and``/``or`` there) or a local name bound to it so.
        video-classification-3d-cnn's ``_make_layer`` builds ``downsample = partial(downsample_basic_block, ...)``
        and gives it to ``block(...)``, whose ``__init__`` keeps it and whose ``forward`` calls it: functools' object
        on two instances of one Cell broke the graph ("Graph cycle exists" in a BatchNorm3d). A partial of torch's
        function or of a class (a layer factory) is left to the rules that own those."""
        is_partial, classes, scope = self._is_partial, self._module_classes, self.scope
        handed: set[int] = set()
        for method in node.body.body:
            if not isinstance(method, cst.FunctionDef) or method.name.value in ("forward", "construct"):
                continue
            local: dict[str, list[cst.Call]] = collections.defaultdict(list)
            given_calls: list[cst.Call] = []
            given_names: set[str] = set()

            class Method(cst.CSTVisitor):
                def visit_Assign(self, assign):
                    for target in assign.targets:
                        if isinstance(target.target, cst.Name):
                            local[target.target.value].extend(
                                leaf for leaf in _value_leaves(assign.value)
                                if isinstance(leaf, cst.Call) and is_partial(leaf))

                def visit_Call(self, call):
                    if is_partial(call) or not isinstance(call.func, cst.Name) or call.func.value in _BUILTINS:
                        return  # a constructor or function called by name (block(...)), not map/self.apply/...
                    for arg in call.args:
                        for leaf in _value_leaves(arg.value):
                            if isinstance(leaf, cst.Call) and is_partial(leaf):
                                given_calls.append(leaf)
                            elif isinstance(leaf, cst.Name):
                                given_names.add(leaf.value)

            walk(method, Method())
            for name in given_names:
                given_calls.extend(local.get(name, ()))
            for call in given_calls:
                func = call.args[0].value
                if call.args[0].star or scope.resolve_torch(func) \
                        or (isinstance(func, cst.Name) and (func.value in classes or func.value[:1].isupper())):
                    continue  # torch's function or a class: a layer factory, not this rule's
                handed.add(id(call))
        return handed

    def _partials(self, node: cst.ClassDef) -> set[int]:
        init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None:
            return set()
        bound: collections.Counter = collections.Counter()
        found: dict[str, list[cst.Call]] = collections.defaultdict(list)  # attribute -> the partial calls given it
        is_partial = self._is_partial
        kept: list[cst.Call] = []  # partial calls whose object a self attribute is given (its value, a branch of it)
        kept_names: set[str] = set()  # local names a self attribute is given the same way
        local: dict[str, list[cst.Call]] = collections.defaultdict(list)  # local name -> the partial calls given it

        class Init(cst.CSTVisitor):
            loops = 0

            def visit_For(self, loop):
                self.loops += 1
                for name in target_names(loop.target):
                    bound[name] += 2

            def leave_For(self, loop):
                self.loops -= 1

            def visit_While(self, loop):
                self.loops += 1

            def leave_While(self, loop):
                self.loops -= 1

            def visit_Assign(self, assign):
                value = assign.value
                for target in assign.targets:
                    t = target.target
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" \
                            and isinstance(value, cst.Call) and is_partial(value):
                        found[t.attr.value].append(value if self.loops == 0 and len(assign.targets) == 1 else None)
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                        for leaf in _value_leaves(value):
                            if isinstance(leaf, cst.Call) and is_partial(leaf):
                                kept.append(leaf)
                            elif isinstance(leaf, cst.Name):
                                kept_names.add(leaf.value)
                    elif isinstance(t, cst.Name):
                        local[t.value].extend(leaf for leaf in _value_leaves(value)
                                              if isinstance(leaf, cst.Call) and is_partial(leaf))

            def visit_AssignTarget(self, target):
                for name in target_names(target.target):
                    bound[name] += 1

            def visit_AugAssign(self, assign):
                for name in target_names(assign.target):
                    bound[name] += 2

        walk(init, Init())
        params = init.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                bound[p.name.value] += 1
        uses: collections.Counter = collections.Counter()
        calls: collections.Counter = collections.Counter()

        class Uses(cst.CSTVisitor):
            def visit_Attribute(self, attr):
                if isinstance(attr.value, cst.Name) and attr.value.value == "self":
                    uses[attr.attr.value] += 1

            def visit_Call(self, call):
                f = call.func
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self" \
                        and all(a.keyword is None and not a.star for a in call.args):
                    calls[f.attr.value] += 1

        walk(node, Uses())
        plan = set()
        for attr, partials in found.items():
            if None in partials or uses[attr] != len(partials) + calls[attr] or not calls[attr]:
                continue  # bound in a loop or with others, read other than by a positional call, or never called
            for call in partials:
                if all(isinstance(a.value, _PLAIN) and not a.star for a in call.args[1:]) \
                        and isinstance(call.args[0].value, (cst.Name, cst.Attribute)) and not call.args[0].star \
                        and not self.scope.resolve_torch(call.args[0].value) \
                        and all(bound[a.value.value] <= 1 for a in call.args[1:] if isinstance(a.value, cst.Name)):
                    plan.add(id(call))
        # the others a self attribute is given, directly or through a local name (a partial of that name included):
        # functools' object is not compiled by a graph, the runtime's is
        calls_kept, names, seen = list(kept), list(kept_names), set()
        for call in kept:
            names.append(call.args[0].value)
        while names:
            name = names.pop()
            if not isinstance(name, cst.Name) or name.value in seen:
                continue
            seen.add(name.value)
            for call in local.get(name.value, ()):
                calls_kept.append(call)
                names.append(call.args[0].value)  # partial(softmax_fn, ...) of a local partial
        self._graph_partials |= {id(call) for call in calls_kept if id(call) not in plan}
        return plan

    def _is_partial(self, call: cst.Call) -> bool:
        return bool(call.args) and self.scope.resolve(call.func) == "functools.partial"

    def leave_Call(self, original_node, updated_node):
        if id(original_node) in self._graph_partials:
            self.runtime_modules.add(_RUNTIME)
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.partial"))
        if id(original_node) not in self._plan:
            return updated_node
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args[1:]]
        positional = [a for a in args if a.keyword is None]
        keywords = [a for a in args if a.keyword is not None]
        body = cst.Call(func=updated_node.args[0].value,
                        args=[*positional, cst.Arg(cst.Name("args"), star="*"), *keywords])
        self.ctx.converted_sites += 1
        return cst.Lambda(params=cst.Parameters(star_arg=cst.Param(cst.Name("args"))), body=body)
