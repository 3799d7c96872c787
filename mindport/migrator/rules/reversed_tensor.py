"""The converter rule ReversedTensorTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/reversed_tensor.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import own_nodes
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import target_names

# torch functions that give one tensor of at least one axis from any valid arguments (``torch.tensor`` and
# ``as_tensor`` only with a list or tuple display: ``torch.tensor(5.0)`` is 0-d, and torch's ``reversed`` of a 0-d
# tensor is the tensor itself where ``flip(0)`` raises)
_MADE = frozenset({
    "stack", "cat", "concat", "concatenate", "arange", "linspace", "logspace", "zeros", "ones", "full", "empty",
    "rand", "randn", "randint", "randperm", "cumsum", "cumprod", "flip", "hstack", "vstack", "column_stack"})
_DISPLAYED = frozenset({"tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor"})
# methods that give a tensor of the receiver's shape
_KEEPING = frozenset({"detach", "clone", "float", "double", "long", "int", "half", "cpu", "to", "contiguous"})


class ReversedTensorTransform(Rule):
    """``reversed(t)`` of a tensor the function builds is ``ops.flip(t, (0,))``, torch's ``t.flip(0)``.

    torch's ``Tensor.__reversed__`` is ``self.flip(0)``: ``reversed(torch.stack(rewards))`` is a tensor, and code
    uses it as one (``.mean()``, arithmetic, ``torch.cumsum``). MindSpore's Tensor has no ``__reversed__``, so
    Python's ``reversed`` falls back to the sequence protocol and gives an iterator over the rows:
    "AttributeError: 'reversed' object has no attribute 'mean'" (measured on 2.10). Where the argument is a tensor by
    construction, built by a torch function in the expression itself (arithmetic on one included) or bound to a
    local name only by such expressions, the call becomes torch's own definition, ``t.flip(0)``, in MindSpore's words: ``ops.flip(t, (0,))``, no
    run-time helper. Iterating it gives the same rows in the same order as the iterator did. A value of unknown
    kind (a parameter, an attribute, a list) keeps ``reversed``: a list's ``reversed`` is Python's, and a tensor's
    gets torch's meaning from ``mindport.runtime.reversed_tensor`` wherever a runtime module is loaded.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def discounted(rewards, gamma):
                    r = torch.stack(rewards)
                    back = reversed(r)
                    steps = [s for s in reversed(rewards)]
                    return back.mean() + gamma * reversed(torch.tensor([1.0, 2.0]))[0], steps
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                def discounted(rewards, gamma):
                    r = ops.stack(mp_tensor.promoted(rewards))
                    back = ops.flip(r, (0,))
                    steps = [s for s in list(rewards)[::-1]]
                    return back.mean() + gamma * ops.flip(ms.Tensor([1.0, 2.0]), (0,))[0], steps
            """,
            note="A stacked tensor and a tensor display, reversed: flipped along their first axis; the list a "
                 "caller gave keeps Python's reversed (the comprehension's copy is ReversedCellsTransform's).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not (isinstance(original_node.func, cst.Name) and original_node.func.value == "reversed"
                and len(original_node.args) == 1 and original_node.args[0].keyword is None
                and not original_node.args[0].star and not self.scope.lookup("reversed")[0]):
            return updated_node
        value = original_node.args[0].value
        if not self._made(value, frozenset()):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr("mindspore.ops.flip"), args=[
            cst.Arg(updated_node.args[0].value), cst.Arg(cst.Tuple([cst.Element(cst.Integer("0"))]))])

    def _made(self, expr, seen: frozenset[str]) -> bool:
        """Is ``expr`` a tensor of at least one axis by construction (see the class docstring)?"""
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _KEEPING \
                    and self.scope.resolve_torch(func) is None:
                return self._made(func.value, seen)
            qual = self.scope.resolve_torch(func) or ""
            module, _, name = qual.rpartition(".")
            if module != "torch":
                return False
            if name in _MADE:
                return True
            return name in _DISPLAYED and bool(expr.args) and expr.args[0].keyword is None \
                and isinstance(expr.args[0].value, (cst.List, cst.Tuple, cst.ListComp))
        if isinstance(expr, cst.BinaryOperation):  # r * gamma: a tensor operand gives a tensor of its axes or more
            return self._made(expr.left, seen) or self._made(expr.right, seen)
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self._made(expr.expression, seen)
        if isinstance(expr, cst.Name) and self._functions:
            # a name read while its own bindings are checked (r = r * gamma) is what those bindings make
            return expr.value in seen or self._bound_made(self._functions[-1], expr.value, seen | {expr.value})
        return False

    def _bound_made(self, function: cst.FunctionDef, name: str, seen: frozenset[str]) -> bool:
        """Every binding of ``name`` in ``function`` is ``name = <tensor by construction>`` (a parameter, a loop or
        ``with`` target, an unpacking, a ``global``/``nonlocal``: unknown)."""
        params = function.params
        if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)) \
                or any(isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
            return False
        values = []
        for node in own_nodes(function, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)
                elif _names(target.target, name):
                    return False
        for kind in (cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem, cst.NamedExpr, cst.Global, cst.Nonlocal):
            for node in own_nodes(function, kind):
                target = getattr(node, "target", None) or getattr(node, "asname", None) or node
                if _names(target, name):
                    return False
        return bool(values) and all(self._made(v, seen) for v in values)


def _names(node, name: str) -> bool:
    """Does ``node`` (a binding target, or a global/nonlocal statement) bind ``name``?"""
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return any(n.name.value == name for n in node.names)
    if isinstance(node, cst.AsName):
        node = node.name
    return name in target_names(node)
