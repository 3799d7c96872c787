"""The converter rule ExactTypeTestTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/exact_types.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import parse_expression

_RUNTIME = "mindport.runtime.graph_safe"
_TENSOR_RUNTIME = "mindport.runtime.tensor"
# torch's legacy typed tensor types (torch.FloatTensor, torch.cuda.LongTensor ...): mapping entries whose targets are
# the classes of mindport.runtime.tensor (cuda_<Name> for torch.cuda.<Name>)
_TYPED = frozenset(f"{k}Tensor" for k in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char",
                                           "Byte", "Bool"))

_POSITIVE = (cst.Is, cst.Equal, cst.In)
_NEGATIVE = (cst.IsNot, cst.NotEqual, cst.NotIn)


class ExactTypeTestTransform(GraphMethodRule):
    """In a model's methods and a torch file's module functions (a graph compiles one with every method that calls it:
    onpolicy's ``check(input)``, ``torch.from_numpy(input) if type(input) == np.ndarray else input``, called on the
    inputs of MAT's forward), an exact type test ``type(v) is T`` (also ``==``, ``in (A, B)`` and the negations) ->
    ``mp_graph_safe.is_exactly(v, T)`` (``not ...`` for ``is not``, ``!=``, ``not in``).

    Models take a tensor or a pair with ``x_h, x_l = x if type(x) is tuple else (x, None)`` and then branch on
    ``x_l is not None`` (d-li14/octconv.pytorch's OctaveConv, Bottleneck, OctMobileNet). MindSpore's static graph
    (GRAPH_MODE) does not fold ``type(x) is tuple`` to a constant (``isinstance`` it does), so it compiles both
    branches, and the one the input never takes fails: a layer that is ``None`` called ("The object is not
    callable"), a tensor added to ``None`` ("Data type conversion is not supported for a 'Parameter'"), "Graph
    cycle exists" (measured on 2.10). ``isinstance(x, tuple) and type(x) is tuple`` is not enough: when the input is
    a tuple the second half is still not a constant, both results of a conditional expression are kept, and the
    caller's next test of that value fails the same way. ``is_exactly`` is ``type(v) is T`` in PyNative and
    ``isinstance`` in a graph, where there is no subclass of a tuple, list or dict to tell apart (named tuples are
    plain tuples there), bool told from int as ``type`` does. Only a test against a class written by name (or a
    tuple of them) is rewritten: ``type(a) is type(b)``, ``type`` rebound in the file and code outside a model's
    methods are left alone.

    The same holds for ``isinstance(x, torch.FloatTensor)`` / ``(torch.LongTensor, torch.cuda.LongTensor)``, a test
    of dtype and device: the typed tensor types are classes whose isinstance answers as torch does on the same device
    (``mindport.runtime.tensor``; a CPU run: False for every ``torch.cuda`` type), but a static graph does not call
    their ``__instancecheck__`` (measured: False for every tensor), so the test is ``mp_tensor.is_typed(x, T)``
    (wherever it is: it is isinstance in PyNative), the dtype compared in a graph (DCGAN-style ``isinstance(input.data,
    torch.cuda.FloatTensor) and self.ngpu > 1``).

    In a module function the unfolded test left the conditional expression to run time: its value was an interpreted
    one, and what the model did with it next failed ("'int' object is not subscriptable" in the AnyTypeKernelActor,
    measured on 2.10); ``is_exactly`` is ``type`` itself outside a graph, so host code calling the function is as
    before.
    """

    MODULE_FUNCTIONS = True

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class OctaveConv(nn.Module):
                    def __init__(self, channels):
                        super().__init__()
                        self.conv_h = nn.Conv2d(channels, channels, 3, padding=1)
                        self.conv_l = None

                    def forward(self, x):
                        x_h, x_l = x if type(x) is tuple else (x, None)
                        if type(x_h) != torch.Tensor or type(x) in (list, tuple):
                            raise TypeError("a tensor or a pair")
                        if x_l is not None:
                            x_l = self.conv_l(x_l)
                        return self.conv_h(x_h), x_l
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindport.runtime import graph_safe as mp_graph_safe


                class OctaveConv(nn.Cell):
                    def __init__(self, channels):
                        super().__init__()
                        self.conv_h = nn.Conv2d(in_channels=channels, out_channels=channels, kernel_size=3, padding=1, has_bias=True, pad_mode='pad')
                        self.conv_l = None

                    def construct(self, x):
                        x_h, x_l = x if mp_graph_safe.is_exactly(x, tuple) else (x, None)
                        if not mp_graph_safe.is_exactly(x_h, ms.Tensor) or mp_graph_safe.is_exactly(x, (list, tuple)):
                            raise TypeError("a tensor or a pair")
                        if x_l is not None:
                            x_l = self.conv_l(x_l)
                        return self.conv_h(x_h), x_l
            """,
            note="The exact test keeps its meaning in PyNative and is a constant in a graph: a tensor input "
                 "compiles only the branch it takes.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Generator(nn.Module):
                    def __init__(self, ngpu):
                        super().__init__()
                        self.ngpu = ngpu
                        self.main = nn.Linear(8, 8)

                    def forward(self, input):
                        if isinstance(input.data, torch.cuda.FloatTensor) and self.ngpu > 1:
                            return self.main(input) * 2
                        return self.main(input)
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import tensor as mp_tensor


                class Generator(nn.Cell):
                    def __init__(self, ngpu):
                        super().__init__()
                        self.ngpu = ngpu
                        self.main = nn.Dense(in_channels=8, out_channels=8)

                    def construct(self, input):
                        if mp_tensor.is_typed(input.data, mp_tensor.cuda_FloatTensor) and self.ngpu > 1:
                            return self.main(input) * 2
                        return self.main(input)
            """,
            note="A CPU run answers False for the cuda type, as torch on the CPU does, in PyNative and in a graph.",
        ),
        Example(
            before="""
                def kind(x, y):
                    return type(x) is tuple, type(x) is type(y)
            """,
            note="Outside a model's methods (Python runs it), and against another object's type, the test is left "
                 "as written.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        # (everywhere, not only in a model's methods: is_typed is isinstance in PyNative, and any function may be
        # compiled by @jit, as the mapping table's graph proof of the entries compiles its programs)
        if not (isinstance(func, cst.Name) and func.value == "isinstance"
                and self.scope.resolve(original_node.func) is None and len(updated_node.args) == 2
                and not any(a.keyword or a.star for a in updated_node.args)):
            return updated_node
        classes = updated_node.args[1].value
        if not (_typed_type(classes) or isinstance(classes, cst.Tuple) and classes.elements
                and all(_typed_type(e.value) for e in classes.elements)):
            return updated_node
        self.runtime_modules.add(_TENSOR_RUNTIME)
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_TENSOR_RUNTIME)}.is_typed"))

    def leave_Comparison(self, original_node, updated_node):
        if not self.compiled or len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        op = target.operator
        positive = isinstance(op, _POSITIVE)
        if not (positive or isinstance(op, _NEGATIVE)):
            return updated_node
        left = updated_node.left
        if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type"
                and self.scope.resolve(original_node.left.func) is None and len(left.args) == 1
                and left.args[0].keyword is None and not left.args[0].star and not left.lpar):
            return updated_node
        value = left.args[0].value
        classes = target.comparator
        single = isinstance(op, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual))
        if not (_class_name(classes) if single else isinstance(classes, cst.Tuple) and classes.elements
                and all(_class_name(e.value) for e in classes.elements)):
            return updated_node
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        test = cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME)}.is_exactly"),
                        args=[cst.Arg(value), cst.Arg(classes.with_changes(lpar=(), rpar=()) if single else
                                                      classes)])
        out = test if positive else cst.UnaryOperation(operator=cst.Not(), expression=test)
        return out.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)


def _typed_type(expr) -> bool:
    """``torch.FloatTensor``, ``torch.cuda.LongTensor`` or their conversion ``mp_tensor.FloatTensor`` /
    ``mp_tensor.cuda_LongTensor``."""
    if not isinstance(expr, cst.Attribute):
        return False
    name = expr.attr.value.removeprefix("cuda_")
    owner = expr.value
    if name not in _TYPED:
        return False
    if isinstance(owner, cst.Name):
        return owner.value in ("torch", runtime_alias(_TENSOR_RUNTIME))
    return (isinstance(owner, cst.Attribute) and owner.attr.value == "cuda" and isinstance(owner.value, cst.Name)
            and owner.value.value == "torch")


def _class_name(expr) -> bool:
    """A class written by name: ``tuple``, ``torch.Tensor``, ``ms.Tensor`` (not a call such as ``type(y)``)."""
    if isinstance(expr, cst.Name):
        return True
    return isinstance(expr, cst.Attribute) and _class_name(expr.value)
