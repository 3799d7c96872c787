"""Small named transforms for the torch idioms that are not single API calls: classes, module methods, device
placement, tensor conversions, gradient contexts. Each is one class; the pipeline (``pipeline.py``) orders them.
"""
from __future__ import annotations

import libcst as cst

from mindport.migrator.base import Rule
from mindport.migrator.names import dotted_name, receiver_kind
from mindport.migrator.walk import parse_expression, parse_statement

_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}


def module_class_names(module: cst.Module, scopes, known: frozenset[str] = frozenset()) -> set[str]:
    """Names of the classes in this file that are nn.Module subclasses, directly or through local bases."""
    return module_classes(class_summary(module, scopes.module_scope), known)


def class_summary(module: cst.Module, module_scope) -> tuple:
    """What :func:`module_classes` needs of a file: per top-level class, its name and, per base, the base's dotted
    name and whether it resolves to torch's nn.Module. (``ast_names.class_summary`` gives the same from ``ast``.)"""
    return tuple((cls.name.value, tuple((dotted_name(b.value) or "", module_scope.resolve(b.value) in _MODULE_BASES)
                                        for b in cls.bases))
                 for cls in module.body if isinstance(cls, cst.ClassDef))


def module_classes(summary: tuple, known: frozenset[str] = frozenset()) -> set[str]:
    """The summary's classes that are nn.Module subclasses: through torch's base, a class found so far, or a base
    whose last name is in ``known`` (module classes of the other files of the project)."""
    found = set(known)
    changed = True
    while changed:
        changed = False
        for name, bases in summary:
            if name in found:
                continue
            if any(is_module or base in found or base.rsplit(".", 1)[-1] in known for base, is_module in bases):
                found.add(name)
                changed = True
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
            return cst.Call(func=parse_expression(f"{ms}.load_param_into_net"),
                            args=[cst.Arg(func.value), cst.Arg(args[0].value)])
        return updated_node


class ModuleStatementTransform(Rule):
    """Module methods that are statements in torch and have no Cell method:
    ``model.requires_grad_(False)`` -> ``for _p in model.get_parameters(): _p.requires_grad = False``.

    Receivers that are evidently tensors are left to the tensor rules. (``zero_grad()`` is the training rule's:
    it disappears with the loop it belongs to, see ``training.py``.)
    """

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
        if receiver_kind(call.func.value, self.scope) in ("tensor", "python", "foreign"):
            return None
        if (len(call.args) > 1 or any(
                a.keyword is not None and a.keyword.value != "requires_grad" for a in call.args)):
            return None
        return call

    def leave_SimpleStatementLine(self, original_node, updated_node):
        call = self._call(original_node)
        if call is None:
            return updated_node
        self.ctx.converted_sites += 1
        flag = call.args[0].value if call.args else cst.Name("True")
        code = cst.Module(body=[])
        loop = parse_statement(f"for _p in {code.code_for_node(call.func.value)}.get_parameters():\n"
                                   f"    _p.requires_grad = {code.code_for_node(flag)}\n")
        return loop.with_changes(leading_lines=updated_node.leading_lines)


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
        param = cst.Call(func=parse_expression(f"{ms}.Parameter"), args=[
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
_DEVICE_WORDS = ("device", "dev", "cuda", "gpu", "cpu", "rank", "npu")


def _is_device(expr) -> bool:
    """Evidently a device: a string or int literal, ``torch.device(...)``, or a name such as ``device``,
    ``args.device``, ``x.device``, ``local_rank``."""
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.FormattedString)):
        return True
    if isinstance(expr, cst.Call):
        return _is_device(expr.func)
    if isinstance(expr, cst.IfExp):
        return _is_device(expr.body) and _is_device(expr.orelse)
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return any(word in name.lower() for word in _DEVICE_WORDS)


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
                return parse_expression(f'{ms}.hal.is_available("GPU")')
            return parse_expression(f'({ms}.get_context("device_target") == "GPU")')
        if qual in ("torch.cuda.device_count",):
            ms = self.ctx.alias_for("mindspore")
            self.ctx.converted_sites += 1
            return parse_expression(f'{ms}.hal.device_count("GPU")')
        if qual in ("torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel",
                    "torch.nn.parallel.DataParallel") and updated_node.args:
            self.ctx.converted_sites += 1
            return updated_node.args[0].value
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node
        name = func.attr.value
        if name in _DEVICE_METHODS and all(a.keyword is None or a.keyword.value in ("device", "non_blocking",
                                                                                   "memory_format")
                                           for a in updated_node.args):  # x.cuda(0): the device index goes too
            self.ctx.converted_sites += 1
            return func.value
        if name == "to":
            return self._to(original_node, updated_node)
        if name in _CAST_METHODS and not updated_node.args:
            ms = self.ctx.alias_for("mindspore")
            self.ctx.converted_sites += 1
            return _method(func.value, "astype", [cst.Arg(parse_expression(f"{ms}.{_CAST_METHODS[name]}"))])
        return updated_node

    def _to(self, original: cst.Call, call: cst.Call):
        receiver = call.func.value  # type: ignore[union-attr]
        dtype = None
        # Decide on the original arguments: children are already converted (torch.float16 -> ms.float16).
        for original_arg, arg in zip(original.args, call.args):
            if arg.keyword is not None and arg.keyword.value == "dtype":
                dtype = arg.value
            elif arg.keyword is None and self._is_dtype(original_arg.value):
                dtype = arg.value
            elif arg.keyword is None and not _is_device(original_arg.value):
                # x.to(d) / x.to(other): a dtype, a device or a tensor, only known at run time
                self.flag(original, "MP102", f".to({_src(original_arg.value)}): cannot tell whether the argument is a "
                          "dtype, a device or a tensor", "write x.astype(dtype) for a dtype, drop the call for a device "
                          "move, x.astype(other.dtype) for a tensor", "torch.Tensor.to")
                self.ctx.handled.add(id(original))
                return call
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
        device = self._device_assignment(original_node)
        if device is not None:
            return cst.FlattenSentinel([updated_node, device])
        # torch.backends.cudnn.* = ... : no MindSpore meaning; drop the statement.
        body = updated_node.body
        if len(body) == 1 and isinstance(body[0], cst.Assign) and len(body[0].targets) == 1:
            qual = self.scope.resolve_torch(body[0].targets[0].target)
            if qual is not None and qual.startswith("torch.backends."):
                self.ctx.converted_sites += 1
                return cst.RemoveFromParent()
        return updated_node

    def _device_assignment(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine | None:
        """``device = torch.device(spec)`` -> the same line (``device = spec``) plus the global device setting:
        ``ms.set_device("GPU", 1)`` (MindSpore >= 2.5) or ``ms.set_context(device_target=..., device_id=...)``."""
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
            return None
        assign = line.body[0]
        call = assign.value
        if not isinstance(call, cst.Call) or self.scope.resolve_torch(call.func) != "torch.device" \
                or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        spec = positional[0] if positional else keywords.get("type")
        index = positional[1] if len(positional) > 1 else keywords.get("index")
        device_id = cst.Module(body=[]).code_for_node(index) if index is not None else None
        if isinstance(spec, cst.SimpleString):
            kind, _, number = spec.evaluated_value.partition(":")
            target = '"GPU"' if kind == "cuda" else '"Ascend"' if kind == "npu" else '"CPU"'
            device_id = device_id or (number if number.isdigit() else None)
        elif spec is None:
            target = '"CPU"'
        else:  # a run-time choice (e.g. "cuda" if torch.cuda.is_available() else "cpu")
            name = assign.targets[0].target.value
            target = f'("GPU" if str({name}).startswith("cuda") else "CPU")'
        ms = self.ctx.alias_for("mindspore")
        if self.ctx.options.ms_version >= (2, 5):
            text = f"{ms}.set_device({target}{', ' + device_id if device_id else ''})"
        else:
            text = f"{ms}.set_context(device_target={target}{', device_id=' + device_id if device_id else ''})"
        return parse_statement(text)  # type: ignore[return-value]

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if (self.scope.resolve_torch(target.target) or "").startswith("torch.backends."):
                self.ctx.handled.add(id(target.target))


class TensorIdiomTransform(Rule):
    """``.cpu().numpy()``/``.detach().numpy()`` -> ``.asnumpy()``; ``x.size(i)`` -> ``x.shape[i]``;
    ``with torch.no_grad():`` -> its body (MindSpore records no graph in a forward pass); ``z.real``/``z.imag``
    (properties in torch, methods in MindSpore) -> ``z.real()``/``z.imag()`` on evident tensors."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._called: set[int] = set()  # attributes that are the function of a call: z.real() is not the property

    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))

    def leave_Attribute(self, original_node, updated_node):
        if original_node.attr.value not in ("real", "imag") or id(original_node) in self._called \
                or receiver_kind(original_node.value, self.scope) != "tensor":
            return updated_node  # numpy arrays have the same properties: only evident tensors
        self.ctx.converted_sites += 1
        return cst.Call(func=updated_node)

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
            return cst.Call(func=parse_expression(f"{ops}.stop_gradient"), args=[cst.Arg(func.value)])
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


# ------------------------------------------------------------------------------------------- class references

_TYPE_CHECKS = ("isinstance", "issubclass")


class ReferenceTransform(Rule):
    """References to torch APIs that need no argument mapping, rewritten to the MindSpore name:

    * the class in a type check: ``isinstance(m, nn.Conv2d)`` / ``isinstance(m, (nn.Linear, nn.Conv1d))``;
    * the value of a local alias, ``act = F.relu``: the alias's call sites ``act(x)`` get their arguments mapped
      by the table, so the assignment only needs the target's name (and the alias name itself is not a site).
    """

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._refs: set[int] = set()
        self._narrowed_blocks: dict[int, tuple[str, dict[str, str]]] = {}
        self._narrowing: list[tuple[str, dict[str, str]]] = []

    # Inside ``if isinstance(m, nn.BatchNorm2d):`` the parameters of ``m`` have MindSpore names: ``m.weight`` is
    # ``m.gamma`` there (the entry's weight rule), as init loops over ``self.modules()`` expect.
    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
            return
        second = test.args[1].value
        items = [e.value for e in second.elements] if isinstance(second, cst.Tuple) else [second]
        maps = []
        for item in items:
            qual = self.scope.resolve_torch(item)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is None or not entry.weights:
                return
            maps.append({k: v for k, v in entry.weights.items() if v and v != k})
        common = {k: v for k, v in maps[0].items() if all(m.get(k) == v for m in maps[1:])}
        if common:
            self._narrowed_blocks[id(node.body)] = (test.args[0].value.value, common)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if id(node) in self._narrowed_blocks:
            self._narrowing.append(self._narrowed_blocks[id(node)])

    def leave_IndentedBlock(self, original_node, updated_node):
        if id(original_node) in self._narrowed_blocks:
            self._narrowing.pop()
        return updated_node

    def _narrowed(self, node: cst.Attribute):
        if self._narrowing and isinstance(node.value, cst.Name):
            for name, leaves in reversed(self._narrowing):
                if name == node.value.value:
                    leaf = leaves.get(node.attr.value)
                    return node.with_changes(attr=cst.Name(leaf)) if leaf else None
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # ``x.Function`` is an attribute name, never the ``Function`` a ``from torch.autograd import`` bound
        self.ctx.handled.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in _TYPE_CHECKS and len(node.args) == 2 \
                and not self.scope.lookup(func.value)[0]:
            second = node.args[1].value
            items = [e.value for e in second.elements] if isinstance(second, cst.Tuple) else [second]
            self._refs.update(id(item) for item in items)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and self.scope.resolve_torch(node.value) is not None:
            self._refs.add(id(node.value))
            self.ctx.handled.add(id(node.targets[0].target))  # the alias name is not itself a torch reference

    def _rewrite(self, original_node, updated_node):
        if id(original_node) not in self._refs:
            return updated_node
        qual = self.scope.resolve_torch(original_node)
        entry = self.ctx.registry.lookup(qual) if qual else None
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
        if target is None or not entry.supported or target.startswith("."):
            return updated_node  # the table flags it
        self.ctx.handled.add(id(original_node))
        self.ctx.converted_sites += 1
        return self.ctx.target_expr(target)

    def leave_Attribute(self, original_node, updated_node):
        narrowed = self._narrowed(updated_node)
        if narrowed is not None:
            self.ctx.converted_sites += 1
            return narrowed
        return self._rewrite(original_node, updated_node)

    def leave_Name(self, original_node, updated_node):
        return self._rewrite(original_node, updated_node)


# ------------------------------------------------------------------------------------------- nn.init

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
    """

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
        given: dict[str, cst.BaseExpression] = {}
        names = _INIT_SIGNATURES.get(name, ())
        for i, arg in enumerate(args[1:]):
            if arg.keyword is None:
                if i >= len(names):
                    return updated_node
                given[names[i]] = arg.value
            elif arg.keyword.value == "generator":
                continue
            else:
                given[arg.keyword.value] = arg.value
        cls, spec = _INITS[name]
        init_args: list[cst.Arg] = []
        if name == "uniform_":
            low, high = given.get("a"), given.get("b")
            low_s = _src(low) if low is not None else "0.0"
            high_s = _src(high) if high is not None else "1.0"
            if low_s.lstrip("-") != high_s or not low_s.startswith("-"):
                return updated_node  # Uniform(scale) is symmetric: the table's mindport.runtime.init.uniform_ takes it
            init_args.append(cst.Arg(parse_expression(high_s), keyword=cst.Name("scale"), equal=_eq()))
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
                init_args.append(cst.Arg(value, keyword=cst.Name(ms_arg), equal=_eq()))
        ms = self.ctx.alias_for("mindspore")
        self.ctx.converted_sites += 1
        self.ctx.handled.add(id(original_node))
        init = cst.Call(func=parse_expression(f"{ms}.common.initializer.{cls}"), args=init_args)
        data = cst.Call(func=parse_expression(f"{ms}.common.initializer.initializer"), args=[
            cst.Arg(init), cst.Arg(cst.Attribute(value=tensor, attr=cst.Name("shape"))),
            cst.Arg(cst.Attribute(value=tensor, attr=cst.Name("dtype")))])
        return _method(tensor, "set_data", [cst.Arg(data)])


def _src(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).replace(" ", "")


# ------------------------------------------------------------------------------------------- containers

_CONTAINERS = {"torch.nn.ParameterList": "ParameterList", "torch.nn.ParameterDict": "ParameterDict",
               "torch.nn.modules.container.ParameterList": "ParameterList",
               "torch.nn.modules.container.ParameterDict": "ParameterDict"}
RUNTIME_CONTAINERS = "mindport.runtime.containers"


class ContainerTransform(Rule):
    """``nn.ParameterList``/``nn.ParameterDict`` -> ``mindport.runtime.containers.ParameterList``/``ParameterDict``.

    ``mindspore.ParameterTuple`` (the documented counterpart) registers its members under their own names
    (``Parameter$1``), so torch's ``scales.0`` would have nothing to land on; the runtime Cells keep the index/key.
    (``ModuleList``/``ModuleDict``/``Sequential`` are table entries: CellList/CellDict/SequentialCell.)
    """

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve_torch(original_node.func)
        if qual not in _CONTAINERS:
            return updated_node
        self.ctx.converted_sites += 1
        self.ctx.handled.add(id(original_node))
        self.runtime_modules.add(RUNTIME_CONTAINERS)
        alias = _runtime_alias(RUNTIME_CONTAINERS)
        return updated_node.with_changes(func=parse_expression(f"{alias}.{_CONTAINERS[qual]}"))


def _runtime_alias(module: str) -> str:
    return "mp_" + module.rsplit(".", 1)[1]


def runtime_import(module: str) -> str:
    """The import line of a ``mindport.runtime`` module in converted code."""
    parent, leaf = module.rsplit(".", 1)
    return f"from {parent} import {leaf} as {_runtime_alias(module)}"


# ------------------------------------------------------------------------------------------- autograd.Function

_FUNCTION_BASES = {"torch.autograd.Function", "torch.autograd.function.Function"}
_CTX_DROPPED = {"mark_dirty", "mark_non_differentiable", "set_materialize_grads"}
_DROPPED_DECORATORS = {"staticmethod", "once_differentiable"}


class AutogradFunctionTransform(Rule):
    """``class F(torch.autograd.Function)`` with static ``forward(ctx, ...)``/``backward(ctx, grad)`` -> a Cell with
    ``construct(self, ...)`` and ``bprop(self, <inputs>, out, dout)`` (MindSpore's custom-gradient Cell).

    ``ctx`` becomes ``self``: ``ctx.save_for_backward(a, b)`` -> ``self.saved_tensors = (a, b)``, ``ctx.k = v`` stays
    an attribute. ``bprop`` must return one gradient per input as a tuple, so a single gradient is wrapped and a
    ``None`` gradient becomes ``ops.zeros_like(<input>)``. Call sites ``F.apply(x)`` -> ``F()(x)``.
    """

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.functions: set[str] = set()
        self._bases: set[int] = set()

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.ClassDef) and self._function_base(stmt) is not None:
                self.functions.add(stmt.name.value)

    def _function_base(self, node: cst.ClassDef):
        for base in node.bases:
            if self.ctx.module_scope.resolve_torch(base.value) in _FUNCTION_BASES:
                return base
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        base = self._function_base(node)
        if base is not None:
            self._bases.add(id(node))
            self.ctx.handled.add(id(base.value))

    def leave_ClassDef(self, original_node, updated_node):
        if id(original_node) not in self._bases:
            return updated_node
        forward = _find_method(updated_node, "forward")
        backward = _find_method(updated_node, "backward")
        if forward is None or backward is None or not forward.params.params or not backward.params.params:
            self.flag(original_node, "MP105", "torch.autograd.Function without forward(ctx, ...)/backward(ctx, ...)",
                      "write a Cell with construct and bprop by hand", "torch.autograd.Function")
            return updated_node
        inputs = [p.name.value for p in forward.params.params[1:]]
        if forward.params.star_arg is not cst.MaybeSentinel.DEFAULT and isinstance(forward.params.star_arg, cst.Param):
            self.flag(original_node, "MP105", "torch.autograd.Function.forward with *args cannot become bprop",
                      "name the inputs", "torch.autograd.Function")
            return updated_node
        new_body = []
        for stmt in updated_node.body.body:
            if stmt is forward:
                stmt = self._construct(forward)
            elif stmt is backward:
                stmt = self._bprop(backward, inputs)
            new_body.append(stmt)
        cell = self.ctx.target_expr("mindspore.nn.Cell")
        bases = [b.with_changes(value=cell) if self.ctx.module_scope.resolve_torch(b.value) in _FUNCTION_BASES else b
                 for b in updated_node.bases]
        self.ctx.converted_sites += 1
        return updated_node.with_changes(bases=bases, body=updated_node.body.with_changes(body=new_body))

    def _construct(self, fn: cst.FunctionDef) -> cst.FunctionDef:
        ctx_name = fn.params.params[0].name.value
        body = fn.body.visit(_CtxToSelf(ctx_name))
        params = fn.params.with_changes(params=[fn.params.params[0].with_changes(name=cst.Name("self")),
                                                *fn.params.params[1:]])
        return fn.with_changes(name=cst.Name("construct"), params=params, body=body,
                               decorators=_keep_decorators(fn, self.scope))

    def _bprop(self, fn: cst.FunctionDef, inputs: list[str]) -> cst.FunctionDef:
        ctx_name = fn.params.params[0].name.value
        grads = [p.name.value for p in fn.params.params[1:]]
        dout = grads[0] if len(grads) == 1 else "dout"
        ops = self.ctx.alias_for("mindspore.ops")
        body = fn.body.visit(_CtxToSelf(ctx_name, len(inputs)))
        body = body.visit(_BpropReturns(inputs, ops))
        if len(grads) > 1:
            unpack = parse_statement(f"{', '.join(grads)} = dout")
            body = body.with_changes(body=[unpack, *body.body])
        params = [cst.Param(cst.Name("self")), *[cst.Param(cst.Name(n)) for n in inputs], cst.Param(cst.Name("out")),
                  cst.Param(cst.Name(dout))]
        return fn.with_changes(name=cst.Name("bprop"), params=cst.Parameters(params=params), body=body,
                               decorators=_keep_decorators(fn, self.scope))

    def leave_Attribute(self, original_node, updated_node):
        value = updated_node.value
        if updated_node.attr.value == "apply" and isinstance(value, cst.Name) and value.value in self.functions \
                and self.ctx.module_scope.lookup(value.value) == (True, None):
            self.ctx.converted_sites += 1
            return cst.Call(func=value)
        return updated_node


def _find_method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def _keep_decorators(fn: cst.FunctionDef, scope) -> list[cst.Decorator]:
    return [d for d in fn.decorators if (dotted_name(_decorator_func(d)) or "").rsplit(".", 1)[-1]
            not in _DROPPED_DECORATORS]


class _CtxToSelf(cst.CSTTransformer):
    """``ctx`` -> ``self``; ``ctx.save_for_backward(...)`` -> ``self.saved_tensors = (...)``; mark_* calls dropped."""

    def __init__(self, ctx_name: str, n_inputs: int = 0) -> None:
        super().__init__()
        self.ctx_name = ctx_name
        self.n_inputs = n_inputs

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Expr):
            call = updated_node.body[0].value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                    and isinstance(call.func.value, cst.Name) and call.func.value.value in (self.ctx_name, "self"):
                method = call.func.attr.value
                if method == "save_for_backward":
                    saved = cst.Tuple([cst.Element(a.value) for a in call.args]) if call.args else cst.Tuple([])
                    return updated_node.with_changes(body=[cst.Assign(
                        targets=[cst.AssignTarget(parse_expression("self.saved_tensors"))], value=saved)])
                if method in _CTX_DROPPED:
                    return cst.RemoveFromParent()
        return updated_node

    def leave_Attribute(self, original_node, updated_node):
        if isinstance(updated_node.value, cst.Name) and updated_node.value.value == "self":
            if updated_node.attr.value == "saved_variables":
                return updated_node.with_changes(attr=cst.Name("saved_tensors"))
            if updated_node.attr.value == "needs_input_grad":
                return parse_expression(f"({'True, ' * self.n_inputs})")
        return updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == self.ctx_name:
            return updated_node.with_changes(value="self")
        return updated_node

    def visit_FunctionDef(self, node) -> bool:
        return False  # nested functions keep their own names


class _BpropReturns(cst.CSTTransformer):
    """``return g`` -> ``return (g,)``; ``None`` gradients -> ``ops.zeros_like(<input>)``."""

    def __init__(self, inputs: list[str], ops: str) -> None:
        super().__init__()
        self.inputs = inputs
        self.ops = ops

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Return(self, original_node, updated_node):
        value = updated_node.value
        if value is None:
            return updated_node
        items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        fixed = []
        for i, item in enumerate(items):
            if isinstance(item, cst.Name) and item.value == "None" and i < len(self.inputs):
                item = parse_expression(f"{self.ops}.zeros_like({self.inputs[i]})")
            fixed.append(cst.Element(item))
        return updated_node.with_changes(value=cst.Tuple(fixed) if len(fixed) > 1 else
                                         cst.Tuple([cst.Element(fixed[0].value, comma=cst.Comma())]))


# ------------------------------------------------------------------------------------------- run-time imports

EINOPS_BACKEND = "mindport.runtime.einops_backend"
_EINOPS_LAYERS = {"einops.layers.torch": "mindport.runtime.einops_layers"}


def finalize_runtime(module: cst.Module, rules) -> cst.Module:
    """Imports of :mod:`mindport.runtime` that converted code needs, after ``finalize_imports``:

    * ``from einops.layers.torch import Rearrange`` -> ``from mindport.runtime.einops_layers import Rearrange``;
    * a file that imports einops also imports ``mindport.runtime.einops_backend`` (registers the MindSpore backend,
      so ``rearrange``/``reduce``/``repeat`` take MindSpore tensors unchanged);
    * the runtime modules the rules used (``mp_containers.ParameterList``).

    Only top-level statements are looked at: this is cheap, and idempotent (present imports are not repeated).
    """
    needed = set()
    for rule in rules:
        needed |= getattr(rule, "runtime_modules", set())
    body = list(module.body)
    present: set[str] = set()
    uses_einops = False
    last_import = -1
    changed = False
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))):
            if isinstance(stmt, cst.SimpleStatementLine) and i == 0 and isinstance(stmt.body[0], cst.Expr):
                last_import = max(last_import, 0)
            continue
        imp = stmt.body[0]
        last_import = i
        if isinstance(imp, cst.ImportFrom):
            mod = dotted_name(imp.module) if imp.module is not None and not imp.relative else ""
            if mod in _EINOPS_LAYERS:
                imp = imp.with_changes(module=parse_expression(_EINOPS_LAYERS[mod]))
                body[i] = stmt.with_changes(body=[imp])
                changed = True
                mod = dotted_name(imp.module)
            names = [mod] + ([f"{mod}.{a.name.value}" for a in imp.names if isinstance(a.name, cst.Name)]
                             if not isinstance(imp.names, cst.ImportStar) else [])
        else:
            new_names = []
            for alias in imp.names:
                full = dotted_name(alias.name) or ""
                if full in _EINOPS_LAYERS and alias.asname is not None:
                    alias = alias.with_changes(name=parse_expression(_EINOPS_LAYERS[full]))
                    changed = True
                new_names.append(alias)
            imp = imp.with_changes(names=new_names)
            body[i] = stmt.with_changes(body=[imp])
            names = [dotted_name(a.name) or "" for a in imp.names]
        present.update(names)
        if any(n == "einops" or n.startswith("einops.") for n in names):
            uses_einops = True
    if uses_einops:
        needed.add(EINOPS_BACKEND)
    add = [m for m in sorted(needed) if m not in present and not (m == RUNTIME_CONTAINERS and
                                                                  "mindport.runtime.containers" in present)]
    if not add and not changed:
        return module
    lines = []
    for m in add:
        if m == EINOPS_BACKEND:
            lines.append(parse_statement(f"import {m}  # noqa: F401  (einops backend for MindSpore tensors)"))
        else:
            lines.append(parse_statement(runtime_import(m)))
    body[last_import + 1:last_import + 1] = lines
    return module.with_changes(body=body)


# ------------------------------------------------------------------------------- layer parameter names

class LayerParameterNameTransform(Rule):
    """``self.emb.weight`` -> ``self.emb.embedding_table`` when ``self.emb`` holds a torch layer whose weight rule
    renames the parameter (Embedding, BatchNorm, LayerNorm, PReLU …): tied weights
    (``self.head.weight = self.emb.weight``) and direct parameter use keep working after conversion."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[dict[str, dict[str, str]]] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._layer_attributes(node))

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        return updated_node

    def _layer_attributes(self, node: cst.ClassDef) -> dict[str, dict[str, str]]:
        """``self.X = <torch layer>(...)`` anywhere in the class -> {X: {torch leaf: MindSpore leaf}} (renames only).
        Walks statements only (never into expressions): an assignment is a statement."""
        renames: dict[str, dict[str, str]] = {}
        for assign in _assignments(node.body):
            if len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self"):
                continue
            qual = self.scope.resolve_torch(assign.value.func)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is not None and entry.kind == "layer":
                leaves = {k: v for k, v in entry.weights.items() if v and v != k and "." not in v}
                if leaves:
                    renames[target.attr.value] = leaves
        return renames

    def leave_Attribute(self, original_node, updated_node):
        if not self._classes or not self._classes[-1]:
            return updated_node
        owner = original_node.value
        if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self":
            leaf = self._classes[-1].get(owner.attr.value, {}).get(original_node.attr.value)
            if leaf:
                self.ctx.converted_sites += 1
                return updated_node.with_changes(attr=cst.Name(leaf))
        return updated_node


def _assignments(block):
    """Every ``Assign`` statement in a block, nested blocks included (statements only, no expressions)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from (small for small in stmt.body if isinstance(small, cst.Assign))
        elif isinstance(stmt, cst.Assign):
            yield stmt
        else:
            for part in ("body", "orelse", "finalbody"):
                child = getattr(stmt, part, None)
                while isinstance(child, (cst.If, cst.Else)):  # elif chains
                    yield from _assignments(child.body)
                    child = getattr(child, "orelse", None)
                if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    yield from _assignments(child)
                elif child is not None and hasattr(child, "body"):
                    yield from _assignments(child.body)
            for handler in getattr(stmt, "handlers", ()):
                yield from _assignments(handler.body)
            for case in getattr(stmt, "cases", ()):
                yield from _assignments(case.body)
