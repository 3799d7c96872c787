"""The converter rule AugAssignRebindTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/aug_rebind.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import FileFacts, unshared_augmented
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import walk

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_OPERATORS = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide}
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)
_CONTAINERS = (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class AugAssignRebindTransform(GraphMethodRule):
    """In a model's methods, ``x += e`` (also ``-=``, ``*=``, ``/=``) of a name whose items the method then writes
    (``x[:, -k:] += m``, ``x[i] = v``) is ``x = x + e``.

    MindSpore 2.10's static graph (GRAPH_MODE) loses an item write that follows a whole-tensor augmented assignment
    of the same name: ``d += bias`` then ``d[:, :, -k:] += mask`` then ``d[:, :, k - 1::k] += mask2`` gives a tensor
    where the first item write is missing where the two slices overlap, silently (the compiler warns "Some side
    effect nodes were eliminated by mistake"; lucidrains' Swin window attention: 0.3 off, 0.99 on a small twin),
    while ``d = d + bias`` compiles right. In PyNative the two forms are one: MindSpore's ``Tensor.__iadd__`` returns
    a new tensor (another name bound to the old one does not see the change, measured on 2.10), so nothing changes
    there.

    So is ``x += e`` of a local that holds a tensor nothing else shares (``native_facts.unshared_augmented``: every
    binding that may reach it is a new tensor, ``out = self.bn2(self.conv2(out))`` or an arithmetic result, and no
    name, container, view or caller holds it before the update; ``out += identity`` of a ResNet block): writing into
    such a tensor (torch) and binding ``x`` to the result are one. GRAPH_MODE compiles ``+=`` as MindSpore's in-place
    add: the operand times 1, the add, an Assign and the side-effect ordering around it (per ResNet block 4 kernels
    more than ``x + e``, and the native twin's ``out + identity``); ``x = x + e`` is the add alone. PyNative's ``+=``
    already binds a new tensor. One difference is left, as in PyNative before: for operands of two float dtypes
    torch's ``+=`` keeps ``x``'s dtype, ``x + e`` promotes (GRAPH_MODE's in-place add kept it).
    So is ``x += e`` of a name the function binds to a detached value (``Variable(t)``, ``t.detach()``, ``t.data``:
    ``ops.stop_gradient`` in the port) or to a tensor of literal data (``torch.tensor([1.0, 2.0])``: ``ms.Tensor``):
    MindSpore 2.10's graph folds ``stop_gradient`` of a compile-time value and a literal tensor into a constant, and
    ``+=`` then writes into the constant itself, silently: NRI's ``all_msgs = Variable(torch.zeros(...))`` then
    ``all_msgs += msg / norm`` in a per-step method summed every earlier step's messages (max rel 2e-3; a fixture
    calling such a method twice: 22 for 11, then 44 on the next call); ``stop_gradient(x * 1)`` of an input even
    wrote into the caller's input. ``x = x + e`` binds a new tensor, as PyNative's ``+=`` does; a detached view of
    another tensor keeps its write-back (``view_update``), now of the rebound value.
    Left as written: a name the method never writes items of that may be shared (a parameter, ``y = x``,
    ``feats.append(x)``, a view, a binding by a call whose result may be its input) and ``l += [v]`` of a container
    display (a list's ``+=`` extends it in place).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Window(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.bias = nn.Parameter(torch.zeros(4))

                    def forward(self, q, k, mask):
                        dots = q @ k * 0.5
                        dots += self.bias
                        dots[:, -2:] += mask
                        steps = 0
                        steps += 1
                        return dots * steps
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops


                class Window(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.bias = ms.Parameter(ops.zeros(4))

                    def construct(self, q, k, mask):
                        dots = q @ k * 0.5
                        dots = dots + self.bias
                        dots[:, -2:] += mask
                        steps = 0
                        steps += 1
                        return dots * steps
            """,
            note="The whole-tensor += before the item write is a rebinding; a name without item writes is left.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn
                from torch.autograd import Variable


                class Messages(nn.Module):
                    def forward(self, x):
                        acc = Variable(torch.zeros(x.size(0), 4))
                        acc += x
                        return acc
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Messages(nn.Cell):
                    def construct(self, x):
                        acc = ops.stop_gradient(ops.zeros((x.shape[0], 4)))
                        acc = acc + x
                        return acc
            """,
            note="A detached value may be a graph constant: += would write into the constant.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._written: list[set[str]] = []  # per enclosing function: names whose items it writes, or bound detached
        self._file: FileFacts | None = None
        self._unshared: set[int] = set()  # ids of the original x += e whose x nothing else shares

    def visit_Module(self, node: cst.Module) -> None:
        self._file = FileFacts(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        if node.name.value in self._module_classes and self._file is not None:
            self._unshared |= unshared_augmented(node, self.scope.resolve_torch, self._file)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._written.append(_rebound_names(node, self.scope.resolve_torch) if self.compiled else set())

    def leave_FunctionDef(self, original_node, updated_node):
        self._written.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_AugAssign(self, original_node, updated_node):
        operator = _OPERATORS.get(type(updated_node.operator))
        target = updated_node.target
        if not (self.compiled and self._written and operator is not None and isinstance(target, cst.Name)
                and (target.value in self._written[-1] or id(original_node) in self._unshared)
                and not isinstance(updated_node.value, _CONTAINERS)):
            return updated_node
        value = updated_node.value
        if not isinstance(value, _ATOMS):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.ctx.converted_sites += 1
        return cst.Assign([cst.AssignTarget(cst.Name(target.value))],
                          cst.BinaryOperation(cst.Name(target.value), operator(), value))


def _rebound_names(fn: cst.FunctionDef, resolve) -> set[str]:
    """The names ``fn`` (not its nested functions) writes items of (``x[...] = v``, ``x[...] += v``) or binds to a
    detached value or a tensor of literal data (:func:`_detached`): one walk for both reasons the rule rebinds."""
    names: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if node is not fn and isinstance(node, _NESTED):
                return False
            return super().on_visit(node)

        def _take(self, target) -> None:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                names.add(target.value.value)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._take(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._take(node.target)

        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and _detached(node.value, resolve):
                names.add(node.targets[0].target.value)

    walk(fn, Visitor())
    return names


_DETACHING = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
_LITERAL_TENSORS = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor",
                              "torch.LongTensor", "torch.IntTensor", "torch.as_tensor"})
_SAME_TENSOR = frozenset({"cuda", "cpu", "to", "float", "double", "type", "contiguous", "requires_grad_"})


def _detached(expr, resolve) -> bool:
    """A detached value or a tensor of literal data: ``Variable(t)``, ``t.detach()``, ``t.data``,
    ``torch.tensor([...])`` of a list, tuple or number display, seen through ``.cuda()``/``.to(...)``/``.float()``...
    of such a value (:class:`AugAssignRebindTransform` says why)."""
    while True:
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            return True
        if not isinstance(expr, cst.Call):
            return False
        qual = resolve(expr.func)
        if qual in _DETACHING:
            return True
        if qual in _LITERAL_TENSORS:
            return bool(expr.args) and isinstance(expr.args[0].value, (cst.List, cst.Tuple, cst.Integer,
                                                                       cst.Float, cst.UnaryOperation))
        if not isinstance(expr.func, cst.Attribute):
            return False
        if expr.func.attr.value == "detach":
            return True
        if expr.func.attr.value not in _SAME_TENSOR:
            return False
        expr = expr.func.value
