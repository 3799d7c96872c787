"""The converter rule ModuleStatementTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/module_statements.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind
from mindport.migrator.walk import parse_statement


_CASTS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16"}
_PARAMETER_LOOPS = {"parameters", "named_parameters"}
_DROPPED = {"flatten_parameters"}  # a layer method whose effect MindSpore never needs: the statement goes
# torch's norm layers' input check, called by a subclass's own forward; MindSpore's Cell checks its input in
# construct, and its _check_input_dim is another function (a static check of a shape and a class name)
_NORM_CHECK = "_check_input_dim"
_NORM_BASES = ("BatchNorm", "InstanceNorm", "_NormBase")


class ModuleStatementTransform(Rule):
    """Module methods that are statements in torch and have no Cell method:
    ``model.requires_grad_(False)`` -> ``for _p in model.get_parameters(): _p.requires_grad = False``;
    ``model.double()`` (also ``float``/``half``/``bfloat16``, and ``model.to(torch.float16)``), a statement that casts
    a Module in place (on a tensor it does nothing): ``mp_tensor.to(model, ms.float64)``, which casts a Cell's floating-point Parameters
    (``Tensor.astype`` is not a Cell method); ``self.lstm.flatten_parameters()``: MindSpore's RNN weights need no
    flattening, the statement goes. In a subclass of a torch norm layer (BatchNorm, InstanceNorm, their bases) that
    does not define its own, ``self._check_input_dim(x)`` / ``super()._check_input_dim(x)`` goes too: torch's check of
    the input's rank, which the MindSpore layer makes in its construct (MindSpore's ``_check_input_dim`` takes a shape
    and a class name: called as torch's, it raised).

    Receivers that are evidently tensors are left to the tensor rules. (``zero_grad()`` is the training rule's:
    it disappears with the loop it belongs to, see ``training.py``.)
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Encoder(nn.Module):
                    pass


                def freeze():
                    encoder = Encoder()
                    encoder.requires_grad_(False)
                    return encoder
            """,
            after="""
                from mindspore import nn


                class Encoder(nn.Cell):
                    pass


                def freeze():
                    encoder = Encoder()
                    for _p in encoder.get_parameters():
                        _p.requires_grad = False
                    return encoder
            """,
            note='A Cell has no requires_grad_(): the flag is set on each of its parameters.',
        ),
        Example(
            before="""
                import torch


                def prepare(model, rnn):
                    model.double()
                    rnn.flatten_parameters()
                    return model
            """,
            after="""
                import mindspore as ms
                from mindport.runtime import tensor as mp_tensor


                def prepare(model, rnn):
                    mp_tensor.to(model, ms.float64)
                    return model
            """,
            note='A Module cast in place casts the Cell\'s Parameters; flatten_parameters() has nothing to do.',
        ),
        Example(
            before="""
                import torch.nn as nn


                class ScaledBatchNorm(nn.BatchNorm2d):
                    def forward(self, x):
                        self._check_input_dim(x)
                        return super().forward(x) * 2
            """,
            after="""
                from mindspore import nn


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


                def make_batchnorm2d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
                    \"\"\"torch.nn.BatchNorm2d's parameters, building MindSpore's nn.BatchNorm2d.\"\"\"
                    return nn.BatchNorm2d(num_features=num_features, eps=float(eps), momentum=1 - (momentum), affine=affine, use_batch_statistics=None if track_running_stats else True)


                class TorchBatchNorm2d(nn.BatchNorm2d, metaclass=TorchLayerType):
                    \"\"\"torch.nn.BatchNorm2d as a value: called, make_batchnorm2d(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'BatchNorm2d'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchBatchNorm2d:
                            return make_batchnorm2d(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
                        \"\"\"torch.nn.BatchNorm2d's parameters.\"\"\"
                        super().__init__(num_features=num_features, eps=float(eps), momentum=1 - (momentum), affine=affine, use_batch_statistics=None if track_running_stats else True)
                        self.affine = affine


                class ScaledBatchNorm(TorchBatchNorm2d):
                    def construct(self, x):
                        return super(ScaledBatchNorm, self).construct(x) * 2
            """,
            note="torch's rank check inside a norm subclass's forward: the MindSpore layer checks in construct.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._parameters: set[str] = set()  # loop names over parameters: ``for p in model.parameters():``
        self._norm_classes: list[bool] = []  # per enclosing class: a torch norm layer's subclass without its own check

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        norm = any(any(part in (self.scope.resolve_torch(base.value) or "").rsplit(".", 1)[-1] for part in _NORM_BASES)
                   for base in node.bases)
        own = any(isinstance(item, cst.FunctionDef) and item.name.value == _NORM_CHECK for item in node.body.body)
        self._norm_classes.append(norm and not own)

    def leave_ClassDef(self, original_node, updated_node):
        self._norm_classes.pop()
        return updated_node

    def visit_For(self, node: cst.For) -> None:
        """``p`` of ``for p in model.parameters()`` (``for name, p in model.named_parameters()``) is a Parameter:
        its ``requires_grad_`` is the tensor method's."""
        it = node.iter
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in _PARAMETER_LOOPS:
            target = node.target
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target = target.elements[1].value
            if isinstance(target, cst.Name):
                self._parameters.add(target.value)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        call = self._call(node)
        if call is not None:
            self.ctx.handled.add(id(call))

    def _call(self, line: cst.SimpleStatementLine) -> cst.Call | None:
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
            return None
        call = line.body[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        name = call.func.attr.value
        if name != "requires_grad_" or self.scope.resolve(call.func.value) is not None:
            return None
        if receiver_kind(call.func.value, self.scope) in ("tensor", "python", "foreign", "instance") or (
                isinstance(call.func.value, cst.Name) and call.func.value.value in self._parameters):
            return None
        if (len(call.args) > 1 or any(
                a.keyword is not None and a.keyword.value != "requires_grad" for a in call.args)):
            return None
        return call

    def leave_SimpleStatementLine(self, original_node, updated_node):
        surface = self._surface_statement(original_node, updated_node)
        if surface is not None:
            return surface
        call = self._call(original_node)
        if call is None:
            return updated_node
        self.ctx.converted_sites += 1
        flag = call.args[0].value if call.args else cst.Name("True")
        code = cst.Module(body=[])
        loop = parse_statement(f"for _p in {code.code_for_node(call.func.value)}.get_parameters():\n"
                                   f"    _p.requires_grad = {code.code_for_node(flag)}\n")
        return loop.with_changes(leading_lines=updated_node.leading_lines)

    def _surface_statement(self, original_node, updated_node):
        """``model.double()`` -> ``mp_tensor.to(model, ms.float64)``; ``rnn.flatten_parameters()`` -> removed."""
        if len(original_node.body) != 1 or not isinstance(original_node.body[0], cst.Expr):
            return None
        call = original_node.body[0].value
        if self._norm_check(call):
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        if isinstance(call, cst.ListComp) and _dropped_call(call.elt):
            # [m.flatten_parameters() for m in self._to_flatten] (WaveRNN): a loop of dropped calls as a statement
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        to_cast = self._to_statement(call, updated_node)
        if to_cast is not None:
            return to_cast
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)) or call.args \
                or self.scope.resolve_torch(call.func) is not None:
            return None
        name = call.func.attr.value
        if name in _DROPPED:
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        if name not in _CASTS:  # as a statement it casts a Module; on a tensor it does nothing either way
            return None
        new = updated_node.body[0].value if isinstance(updated_node.body[0], cst.Expr) else None
        if not (isinstance(new, cst.Call) and isinstance(new.func, cst.Attribute)
                and new.func.attr.value in (name, "astype")):
            return updated_node  # the device rule cast a module it knows already, with the same mp_tensor.to
        self.ctx.converted_sites += 1
        owner = new.func.value
        ms = self.ctx.alias_for("mindspore")
        cast = cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.to"), args=[
            cst.Arg(owner, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.Attribute(value=cst.Name(ms), attr=cst.Name(_CASTS[name])))])
        return updated_node.with_changes(body=[cst.Expr(cast)])

    def _to_statement(self, call, updated_node):
        """``model.to(torch.float16)`` as a statement: the tensor rules made it ``model.astype(ms.float16)`` (a Cell has
        no ``astype``: AttributeError); as a statement it casts a Module in place (on a tensor it does nothing either
        way): ``mp_tensor.to(model, ms.float16)``, as ``model.half()``."""
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"
                and call.args) or self.scope.resolve_torch(call.func) is not None:
            return None
        new = updated_node.body[0].value if isinstance(updated_node.body[0], cst.Expr) else None
        if not (isinstance(new, cst.Call) and isinstance(new.func, cst.Attribute) and new.func.attr.value == "astype"
                and len(new.args) == 1 and new.args[0].keyword is None):
            return None
        self.ctx.converted_sites += 1
        cast = cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.to"), args=[
            cst.Arg(new.func.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            new.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return updated_node.with_changes(body=[cst.Expr(cast)])

    def _norm_check(self, call) -> bool:
        """``self._check_input_dim(x)`` / ``super()._check_input_dim(x)`` in a norm layer's subclass (see above)."""
        if not (self._norm_classes and self._norm_classes[-1] and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute) and call.func.attr.value == _NORM_CHECK and len(call.args) == 1):
            return False
        owner = call.func.value
        return (isinstance(owner, cst.Name) and owner.value == "self") or (
            isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super")

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:  # its only statement was dropped
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


def _dropped_call(expr) -> bool:
    """``m.flatten_parameters()``: a call, without arguments, of a layer method MindSpore never needs."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args \
        and expr.func.attr.value in _DROPPED
