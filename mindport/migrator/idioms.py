"""Small named transforms for the torch idioms that are not single API calls: classes, module methods, device
placement, tensor conversions, gradient contexts. Each is one class; the pipeline (``pipeline.py``) orders them.
"""
from __future__ import annotations

import libcst as cst

from mindport.migrator.base import Rule
from mindport.migrator.names import dotted_name

_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}


def module_class_names(module: cst.Module, scopes, known: frozenset[str] = frozenset()) -> set[str]:
    """Names of the classes in this file that are nn.Module subclasses, directly or through local bases."""
    classes = [n for n in module.body if isinstance(n, cst.ClassDef)]
    found = set(known)
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name.value in found:
                continue
            for base in cls.bases:
                qual = scopes.module_scope.resolve(base.value)
                name = dotted_name(base.value) or ""
                if qual in _MODULE_BASES or name in found or name.rsplit(".", 1)[-1] in known:
                    found.add(cls.name.value)
                    changed = True
                    break
    return found


class ModuleClassTransform(Rule):
    """``class Net(nn.Module)`` -> ``class Net(nn.Cell)``; ``forward`` -> ``construct`` (definition and calls)."""

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self.module_classes = module_classes
        self._class_stack: list[bool] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.append(node.name.value in self.module_classes)

    def leave_ClassDef(self, original_node, updated_node):
        self._class_stack.pop()  # the bases themselves are converted by the table (torch.nn.Module entry)
        return updated_node

    def leave_FunctionDef(self, original_node, updated_node):
        if self._class_stack and self._class_stack[-1] and updated_node.name.value == "forward":
            return updated_node.with_changes(name=cst.Name("construct"))
        return updated_node

    def leave_Attribute(self, original_node, updated_node):
        # self.forward(...) / super().forward(...) inside a module class
        if updated_node.attr.value == "forward" and self._class_stack and self._class_stack[-1]:
            value = updated_node.value
            if (isinstance(value, cst.Name) and value.value == "self") or (
                isinstance(value, cst.Call) and dotted_name(value.func) == "super"
            ):
                return updated_node.with_changes(attr=cst.Name("construct"))
        return updated_node


def _method_call(node: cst.BaseExpression, name: str) -> cst.Call | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name:
        return node
    return None


def _receiver(call: cst.Call) -> cst.BaseExpression:
    return call.func.value  # type: ignore[union-attr]


def _method(receiver: cst.BaseExpression, name: str, args=()) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))


class ModuleMethodTransform(Rule):
    """nn.Module methods -> Cell methods: train/eval mode, parameter and child iteration, state dicts."""

    RENAMES = {
        "named_parameters": "parameters_and_names",
        "named_modules": "cells_and_names",
        "add_module": "insert_child_to_cell",
        "register_parameter": "insert_param_to_cell",
        "state_dict": "parameters_dict",
    }

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node  # module-level functions (np.eval, torch.load ...) are not methods
        name = func.attr.value
        args = updated_node.args
        if name == "eval" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("set_train")),
                                              args=[cst.Arg(cst.Name("False"))])
        if name == "train" and len(args) <= 1 and all(a.keyword is None or a.keyword.value == "mode" for a in args):
            value = args[0].value if args else cst.Name("True")
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("set_train")), args=[cst.Arg(value)])
        if name == "parameters" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("trainable_params")))
        if name == "children" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("cells")))
        if name == "named_children" and not args:
            inner = updated_node.with_changes(func=func.with_changes(attr=cst.Name("name_cells")))
            return _method(inner, "items")
        if name == "modules" and not args:
            # Cell has no modules(): iterate cells_and_names() and keep the cells.
            pairs = updated_node.with_changes(func=func.with_changes(attr=cst.Name("cells_and_names")))
            return cst.GeneratorExp(
                elt=cst.Name("_cell"),
                for_in=cst.CompFor(target=cst.Tuple([cst.Element(cst.Name("_")), cst.Element(cst.Name("_cell"))],
                                                    lpar=[], rpar=[]), iter=pairs),
            )
        if name in self.RENAMES and (name != "state_dict" or not args):
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name(self.RENAMES[name])))
        if name == "load_state_dict" and args and args[0].keyword is None:
            ms = self.ctx.alias_for("mindspore")
            return cst.Call(func=cst.parse_expression(f"{ms}.load_param_into_net"),
                            args=[cst.Arg(func.value), cst.Arg(args[0].value)])
        return updated_node


class BufferTransform(Rule):
    """``self.register_buffer("name", t)`` -> ``self.name = ms.Parameter(t, name="name", requires_grad=False)``.

    MindSpore buffers do not reach checkpoints; a persistent torch buffer is in the state_dict, so it becomes a
    non-trainable Parameter that save_checkpoint/load_checkpoint carry. Non-persistent buffers stay buffers.
    """

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Expr):
            call = _method_call(updated_node.body[0].value, "register_buffer")
            if call is not None:
                return self._rewrite(updated_node, call)
        return updated_node

    def _rewrite(self, line, call: cst.Call):
        args = {a.keyword.value if a.keyword else i: a.value for i, a in enumerate(call.args)}
        name = args.get(0, args.get("name"))
        tensor = args.get(1, args.get("tensor"))
        persistent = args.get(2, args.get("persistent"))
        if not isinstance(name, cst.SimpleString) or tensor is None:
            return line
        if persistent is not None and not (isinstance(persistent, cst.Name) and persistent.value == "True"):
            return line  # non-persistent: MindSpore's Cell.register_buffer has the same meaning
        ms = self.ctx.alias_for("mindspore")
        owner = _receiver(call)
        param = cst.Call(func=cst.parse_expression(f"{ms}.Parameter"), args=[
            cst.Arg(tensor),
            cst.Arg(keyword=cst.Name("name"), value=name, equal=_eq()),
            cst.Arg(keyword=cst.Name("requires_grad"), value=cst.Name("False"), equal=_eq()),
        ])
        target = cst.Attribute(value=owner, attr=cst.Name(name.evaluated_value))
        self.ctx.converted_sites += 1
        return line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=param)])


def _eq() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


_DEVICE_METHODS = {"cuda", "cpu"}
_CAST_METHODS = {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32",
                 "bool": "bool_", "bfloat16": "bfloat16"}


class DeviceTransform(Rule):
    """Device placement is global in MindSpore: per-tensor moves disappear, ``torch.device`` becomes a string,
    ``torch.cuda.is_available()`` asks ``ms.hal``, ``DataParallel(model)`` is the model itself."""

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        qual = self.scope.resolve_torch(original_node.func)
        if qual in ("torch.device",):
            self.ctx.converted_sites += 1
            return updated_node.args[0].value if updated_node.args else cst.SimpleString('"cpu"')
        if qual == "torch.cuda.is_available":
            self.ctx.converted_sites += 1
            ms = self.ctx.alias_for("mindspore")
            if self.ctx.options.ms_version >= (2, 3):
                return cst.parse_expression(f'{ms}.hal.is_available("GPU")')
            return cst.parse_expression(f'({ms}.get_context("device_target") == "GPU")')
        if qual in ("torch.cuda.device_count",):
            ms = self.ctx.alias_for("mindspore")
            self.ctx.converted_sites += 1
            return cst.parse_expression(f'{ms}.hal.device_count("GPU")')
        if qual in ("torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel",
                    "torch.nn.parallel.DataParallel") and updated_node.args:
            self.ctx.converted_sites += 1
            return updated_node.args[0].value
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node
        name = func.attr.value
        if name in _DEVICE_METHODS and not any(a.keyword is None for a in updated_node.args):
            self.ctx.converted_sites += 1
            return func.value
        if name == "to":
            return self._to(updated_node)
        if name in _CAST_METHODS and not updated_node.args:
            ms = self.ctx.alias_for("mindspore")
            self.ctx.converted_sites += 1
            return _method(func.value, "astype", [cst.Arg(cst.parse_expression(f"{ms}.{_CAST_METHODS[name]}"))])
        return updated_node

    def _to(self, call: cst.Call):
        receiver = call.func.value  # type: ignore[union-attr]
        dtype = None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                dtype = arg.value
            elif arg.keyword is None and self._is_dtype(arg.value):
                dtype = arg.value
            elif arg.keyword is not None and arg.keyword.value not in ("device", "non_blocking", "copy"):
                return call
        self.ctx.converted_sites += 1
        if dtype is None:
            return receiver
        return _method(receiver, "astype", [cst.Arg(dtype)])

    def _is_dtype(self, expr) -> bool:
        qual = self.scope.resolve_torch(expr)
        if qual is not None:
            entry = self.ctx.registry.lookup(qual)
            return entry is not None and entry.kind == "attribute" and qual != "torch.Tensor"
        return isinstance(expr, cst.Attribute) and expr.attr.value == "dtype"

    def leave_SimpleStatementLine(self, original_node, updated_node):
        # torch.backends.cudnn.* = ... : no MindSpore meaning; drop the statement.
        body = updated_node.body
        if len(body) == 1 and isinstance(body[0], cst.Assign) and len(body[0].targets) == 1:
            qual = self.scope.resolve_torch(body[0].targets[0].target)
            if qual is not None and qual.startswith("torch.backends."):
                self.ctx.converted_sites += 1
                return cst.RemoveFromParent()
        return updated_node

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if (self.scope.resolve_torch(target.target) or "").startswith("torch.backends."):
                self.ctx.handled.add(id(target.target))


class TensorIdiomTransform(Rule):
    """``.cpu().numpy()``/``.detach().numpy()`` -> ``.asnumpy()``; ``x.size(i)`` -> ``x.shape[i]``;
    ``with torch.no_grad():`` -> its body (MindSpore records no graph in a forward pass)."""

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node
        name = func.attr.value
        if name == "numpy" and not updated_node.args:
            receiver = func.value
            while (inner := _method_call(receiver, "detach") or _method_call(receiver, "cpu")) is not None \
                    and not inner.args:
                receiver = _receiver(inner)
            self.ctx.converted_sites += 1
            return _method(receiver, "asnumpy")
        if name == "detach" and not updated_node.args:
            ops = self.ctx.alias_for("mindspore.ops")
            self.ctx.converted_sites += 1
            return cst.Call(func=cst.parse_expression(f"{ops}.stop_gradient"), args=[cst.Arg(func.value)])
        if name == "size" and len(updated_node.args) <= 1 and all(
            a.keyword is None or a.keyword.value == "dim" for a in updated_node.args
        ):
            self.ctx.converted_sites += 1
            shape = cst.Attribute(value=func.value, attr=cst.Name("shape"))
            if not updated_node.args:
                return shape
            return cst.Subscript(value=shape, slice=[cst.SubscriptElement(cst.Index(updated_node.args[0].value))])
        return updated_node

    def visit_With(self, node: cst.With) -> None:
        if self._grad_context(node):
            self.ctx.handled.add(id(node.items[0].item))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if self.scope.resolve_torch(_decorator_func(node)) in _GRAD_DECORATORS:
            self.ctx.handled.add(id(node.decorator))
            self.ctx.handled.add(id(_decorator_func(node)))

    def _grad_context(self, node: cst.With) -> bool:
        items = node.items
        return len(items) == 1 and isinstance(items[0].item, cst.Call) and items[0].asname is None and \
            self.scope.resolve_torch(items[0].item.func) in _GRAD_CONTEXTS

    def leave_With(self, original_node, updated_node):
        if self._grad_context(original_node):
            self.ctx.converted_sites += 1
            body = updated_node.body
            statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
            if statements and original_node.leading_lines:
                statements[0] = statements[0].with_changes(
                    leading_lines=[*original_node.leading_lines, *statements[0].leading_lines])
            return cst.FlattenSentinel(statements)
        return updated_node

    def leave_Decorator(self, original_node, updated_node):
        if self.scope.resolve_torch(_decorator_func(original_node)) in _GRAD_DECORATORS:
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        return updated_node


_GRAD_CONTEXTS = ("torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled")
_GRAD_DECORATORS = ("torch.no_grad", "torch.inference_mode", "torch.enable_grad")


def _decorator_func(node: cst.Decorator) -> cst.BaseExpression:
    return node.decorator.func if isinstance(node.decorator, cst.Call) else node.decorator
