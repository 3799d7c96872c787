"""The converter rule DeviceTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/device.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import unread_bindings
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import PROJECT_OBJECT_KINDS, receiver_kind
from mindport.migrator.syntax import compact_source, method, module_code, pure_read
from mindport.migrator.table import fix_commas, parenthesize
from mindport.migrator.walk import parse_expression, parse_statement, read, transform

_DEVICE_METHODS = {"cuda", "cpu"}
# torch's device queries (torch.cuda / torch.backends.cudnn functions answering whether or how many GPUs): run-time
# functions that are constants also in a static graph
_DEVICE_QUERIES = {"torch.cuda.is_available": "mindport.runtime.framework.cuda_available",
                   "torch.backends.cudnn.is_available": "mindport.runtime.framework.cuda_available",
                   "torch.backends.cuda.is_built": "mindport.runtime.framework.cuda_available",
                   "torch.cuda.device_count": "mindport.runtime.framework.cuda_device_count",
                   "torch.accelerator.is_available": "mindport.runtime.framework.accelerator_available",
                   "torch.accelerator.device_count": "mindport.runtime.framework.accelerator_device_count"}
# the queries about devices MindSpore has no backend for (Intel XPU, Apple MPS, Meta MTIA) and about the CPU, which
# is always there: their answers, written in place
_CONSTANT_QUERIES = {"torch.backends.mps.is_available": "False", "torch.backends.mps.is_built": "False",
                     "torch.mps.is_available": "False", "torch.mps.device_count": "0",
                     "torch.xpu.is_available": "False", "torch.xpu.device_count": "0",
                     "torch.mtia.is_available": "False", "torch.mtia.device_count": "0",
                     "torch.cpu.is_available": "True", "torch.cpu.device_count": "1"}
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


# module methods that return the module
_MODULE_RETURNING = frozenset({"to", "cuda", "cpu", "double", "float", "half", "bfloat16", "train", "eval",
                               "requires_grad_", "type"})
# (x.bool() is the mapping entry's: a complex tensor's cast to bool needs mindport's function)
_CAST_METHODS = {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32",
                 "bfloat16": "bfloat16"}


class DeviceTransform(Rule):
    """Device placement is global in MindSpore: per-tensor moves disappear, ``torch.device`` becomes a string,
    ``torch.cuda.is_available()`` (and ``torch.cuda.device_count()``, ``torch.backends.cudnn.is_available()``) asks
    ``ms.hal`` through ``mindport.runtime.framework.cuda_available()``/``cuda_device_count()``, constants that also
    compile in a graph, which can't call the ``ms.hal`` builtins (CapsNet routes on ``torch.cuda.is_available()``
    inside forward); ``torch.accelerator``'s queries ask for a GPU or an Ascend device the same way; those of the
    devices MindSpore has no backend for (``torch.xpu``, ``torch.mps``, ``torch.mtia``, ``torch.backends.mps``) are
    False / 0, ``torch.cpu``'s True / 1.
    ``DataParallel(model)`` is the model itself, ``nn.parallel.data_parallel(module, inputs, device_ids)`` the call
    ``module(inputs)`` (a tuple literal of inputs unpacked, ``module_kwargs`` passed on). A GPU or Ascend device
    (``torch.device("cuda:0")``, or a run-time ``"cuda"``) is set by ``mindport.runtime.framework.select_device``
    only where ``ms.hal.is_available`` finds one, else the CPU: torch makes a device object on any machine, and
    ``ms.set_device("GPU")`` raises where there is none; in a function a static graph compiles it does nothing. A tensor's
    ``x.is_cuda`` is whether MindSpore computes on a GPU (``mindport.runtime.tensor.is_cuda(x)``, a constant that
    also compiles in a graph, which can't call ``ms.get_context``); ``x.is_xpu``/``x.is_mps`` are False (MindSpore runs on neither). A
    tensor's ``x.device`` is ``mindport.runtime.tensor.device(x)``: torch's designation of the device MindSpore computes on
    (``'cpu'``, ``'cuda:0'``, as ``torch.device`` is written; MindSpore's ``Tensor.device`` reads ``'CPU'``), a constant in a static graph, which does not compile ``Tensor.device`` (the line reading it, and all it binds,
    would run interpreted: ``n, device = x.shape[-2], x.device`` made ``n`` unusable for ``arange``). A local name
    bound to a tensor's device that no converted line of the function reads (its ``device=`` arguments and
    ``.to(device)`` moves are gone) is not bound at all: ``n, device = x.shape[1], x.device`` is ``n = x.shape[1]``.
    Two tensors' devices compared (``self.pe.device != x.device``, ``assert idx.device == self.cos.device``) are
    the same device, placement being global: the comparison is ``False`` / ``True`` (the runtime reads gave that
    constant; receivers that are names or attributes of one, read without effect). A device's ``.type`` and
    ``.index`` (``if device.type == "cuda"``, ``x.device.type``) are read from its designation string
    (``str(device).partition(":")[0]``), for a name or ``self.X`` the file binds to ``torch.device(...)``, a
    parameter or attribute called ``device`` (torch reads ``.type`` of no string) and a tensor's device."""

    EXAMPLES = (
        Example(
            before="""
                import torch

                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


                def prepare(model, batch):
                    model = model.to(device)
                    return model, batch.cuda().half()
            """,
            after="""
                import mindspore as ms
                from mindport.runtime import framework as mp_framework

                device = "cuda" if mp_framework.cuda_available() else "cpu"
                mp_framework.select_device(device)


                def prepare(model, batch):
                    model = model
                    return model, batch.astype(ms.float16)
            """,
            note='Placement is global in MindSpore: the device becomes a select_device call (ms.set_device unless '
                 'MindSpore already computes there: it refuses once a kernel ran), per-tensor moves vanish, casts stay.',
        ),
        Example(
            before="""
                import torch

                device = torch.device("cuda:0")


                def ones(n):
                    return torch.ones(n, device=device)
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import framework as mp_framework

                device = "cuda:0"
                mp_framework.select_device("GPU", 0)


                def ones(n):
                    return ops.ones(n)
            """,
            note='A hard-coded accelerator (a library file\'s module-level device): torch makes it on any machine, so '
                 'the port takes the GPU only where there is one and computes on the CPU elsewhere, never failing at '
                 'import where torch did not.',
        ),
        Example(
            before="""
                import torch.nn as nn


                def parallel(model):
                    return nn.DataParallel(model).cuda()
            """,
            after="""


                def parallel(model):
                    return model
            """,
            note='DataParallel(model) is the model itself.',
        ),
        Example(
            before="""
                import torch


                def run(model, x, kind):
                    return model(x).to(kind)
            """,
            after="""
                from mindport.runtime import tensor as mp_tensor


                def run(model, x, kind):
                    return mp_tensor.to(model(x), kind)
            """,
            note='.to(kind): a dtype, a device or a tensor, known only at run time; the runtime function decides on '
                 'the value (a dtype or a tensor casts, a device leaves the tensor as is).',
        ),
        Example(
            before="""
                import torch


                def positions(x):
                    n, device = x.shape[1], x.device
                    return torch.arange(n, device=device)
            """,
            after="""
                from mindspore import ops


                def positions(x):
                    n = x.shape[1]
                    return ops.arange(start=n)
            """,
            note='A device only device= arguments read: they vanish, and so does its binding.',
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._stored: set[int] = set()  # attributes assigned to: not reads
        self._modules: set[tuple[int, str]] = set()  # (id(scope), name) bound to a module: torch.nn.Linear(...), Net()
        self._module_classes: set[str] | None = None
        self._device_reads: set[int] = set()  # the mindport.runtime.tensor.device(x) calls this rule wrote
        self._device_names: set[str] = set()  # names the file binds to torch.device(...) (by name, file-wide)

    def visit_Module(self, node: cst.Module) -> None:
        rule = self

        class _Devices(cst.CSTVisitor):
            def visit_Assign(inner, assign) -> None:
                if isinstance(assign.value, cst.Call) \
                        and rule.scope.resolve_torch(assign.value.func) == "torch.device":
                    for target in assign.targets:
                        t = target.target
                        if isinstance(t, cst.Name):
                            rule._device_names.add(t.value)
                        elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name):
                            rule._device_names.add(f"{t.value.value}.{t.attr.value}")

        read(node, _Devices())

    def leave_FunctionDef(self, original_node, updated_node):
        """``n, device = x.shape[0], x.device`` whose ``device`` the converted function never reads (its
        ``device=`` arguments and ``.to(device)`` moves are gone): the binding goes."""
        if not self._device_reads:
            return updated_node
        return unread_bindings(updated_node, lambda value: id(value) in self._device_reads and pure_read(value.args[0].value))

    def leave_Comparison(self, original_node, updated_node):
        """``a.device == b.device`` / ``!=`` of two tensors this rule read: one global placement, so True / False."""
        if len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        sides = (updated_node.left, target.comparator)
        if not isinstance(target.operator, (cst.Equal, cst.NotEqual)) \
                or not all(id(side) in self._device_reads and pure_read(side.args[0].value) for side in sides):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Name("True" if isinstance(target.operator, cst.Equal) else "False",
                        lpar=updated_node.lpar, rpar=updated_node.rpar)

    def _names_a_device(self, expr) -> bool:
        """A name the file binds to ``torch.device(...)`` (``device``, ``self.device``), or one called ``device``
        (a parameter, ``self.device``): torch reads ``.type`` of no string, so such a read is of a device."""
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            key = f"{expr.value.value}.{expr.attr.value}"
        elif isinstance(expr, cst.Name):
            key = expr.value
        else:
            return False
        if self.scope.resolve(expr) is not None:
            return False
        return key in self._device_names or key.rpartition(".")[2] == "device"

    def leave_Attribute(self, original_node, updated_node):
        name = original_node.attr.value
        if id(original_node) in self._stored:
            return updated_node  # `self.is_cuda = ...`, `args.device = ...`: the object's own attribute, assigned
        if name in ("type", "index") and (id(updated_node.value) in self._device_reads
                                           or self._names_a_device(original_node.value)):
            # a device is its designation string here (torch.device(...) and x.device both): torch.device's
            # .type / .index are read from it ("cuda:1" -> "cuda", 1; "cpu" -> "cpu", None)
            self.ctx.converted_sites += 1
            code = cst.Module(body=[]).code_for_node(updated_node.value)
            if name == "type":
                return parse_expression(f'str({code}).partition(":")[0]')
            return parse_expression(f'(int(str({code}).partition(":")[2]) if ":" in str({code}) else None)')
        if name == "device" and receiver_kind(original_node.value, self.scope) == "tensor" \
                and self.scope.resolve(original_node.value) is None:
            # a graph does not compile Tensor.device: the line (and what it binds) would run interpreted
            self.ctx.converted_sites += 1
            read = cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.device"),
                            args=[cst.Arg(updated_node.value)])
            self._device_reads.add(id(read))
            return read
        if name not in ("is_cuda", "is_xpu", "is_mps") or self.scope.resolve(original_node.value) is not None:
            return updated_node
        self.ctx.converted_sites += 1
        if name != "is_cuda":
            return cst.Name("False")
        # (not ms.get_context(...): a graph does not compile it, and the read is often inside forward)
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.is_cuda"), args=[cst.Arg(updated_node.value)])

    @staticmethod
    def _data_parallel_call(node: cst.Call) -> "cst.Call | None":
        """``nn.parallel.data_parallel(self.main, input, range(self.ngpu))`` (DCGAN's generator and its many
        descendants): on one device torch calls ``module(*inputs, **module_kwargs)``, a tensor ``inputs`` being one
        argument; so does the port, the devices dropped. None where the arguments are not written plainly."""
        names = ["module", "inputs", "device_ids", "output_device", "dim", "module_kwargs"]
        bound: dict = {}
        for i, arg in enumerate(node.args):
            if arg.star:
                return None
            key = arg.keyword.value if arg.keyword is not None else (names[i] if i < len(names) else None)
            if key not in names or key in bound:
                return None
            bound[key] = arg.value
        if "module" not in bound:
            return None
        inputs = bound.get("inputs")
        if inputs is None:
            args = []
        elif isinstance(inputs, cst.Tuple):
            args = [cst.Arg(e.value, star="*" if isinstance(e, cst.StarredElement) else "") for e in inputs.elements]
        else:
            args = [cst.Arg(inputs)]
        kwargs = bound.get("module_kwargs")
        if kwargs is not None and not (isinstance(kwargs, cst.Name) and kwargs.value == "None"):
            args.append(cst.Arg(kwargs, star="**"))
        return cst.Call(func=bound["module"], args=args)

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        qual = self.scope.resolve_torch(original_node.func)
        if qual in ("torch.device",):
            self.ctx.converted_sites += 1
            return self._designation(updated_node)
        if qual in _DEVICE_QUERIES:
            # a constant also in a static graph, which cannot call ms.hal.is_available/device_count (builtins: "has
            # no attribute '__code__'"); CapsNet's routing reads torch.cuda.is_available() inside forward
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr(_DEVICE_QUERIES[qual]))
        if qual in _CONSTANT_QUERIES:
            self.ctx.converted_sites += 1
            return parse_expression(_CONSTANT_QUERIES[qual])
        if qual in ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel") and updated_node.args:
            # (DistributedDataParallel is a mapping entry: the gradient mean across processes must stay)
            self.ctx.converted_sites += 1
            return updated_node.args[0].value
        if qual == "torch.nn.parallel.data_parallel":
            called = self._data_parallel_call(updated_node)
            if called is not None:
                self.ctx.converted_sites += 1
                return called
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None \
                or receiver_kind(original_node.func.value, self.scope) in PROJECT_OBJECT_KINDS:
            return updated_node  # alphabet.to(2), vocab.float(): the project's own class's methods
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
            dtype = parse_expression(f"{ms}.{_CAST_METHODS[name]}")
            self.ctx.converted_sites += 1
            if self._is_module(original_node.func.value):  # model.double(): its parameters cast in place
                return self._cell_to(func.value, [cst.Arg(dtype)]) or updated_node
            return method(func.value, "astype", [cst.Arg(dtype)])
        return updated_node

    def _is_module(self, expr) -> bool:
        """A module, evidently: a name bound in this scope to a torch.nn class or a module class of the project, or
        a ``self.`` attribute holding one."""
        if isinstance(expr, cst.Name):
            return (id(self.scope), expr.value) in self._modules
        if isinstance(expr, cst.Call):
            return self._builds_module(expr)
        return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            and self.scope.kind_of(expr.value.value) == "object" and hasattr(self.scope, "attribute_kind") \
            and self.scope.attribute_kind(expr.attr.value) == "object"

    def _cell_to(self, receiver, args):
        """``mindport.runtime.tensor.to(module, ...)`` (the Tensor.to entry's function, which casts a Cell's
        floating-point Parameters in place), or None without one."""
        entry = self.ctx.registry.lookup("torch.Tensor.to")
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
        if target is None or target.startswith("."):
            return None
        return cst.Call(func=self.ctx.target_expr(target), args=fix_commas([cst.Arg(value=receiver), *args]))

    def _to(self, original: cst.Call, call: cst.Call):
        receiver = call.func.value  # type: ignore[union-attr]
        dtype = original_dtype = None
        # Decide on the original arguments: children are already converted (torch.float16 -> ms.float16).
        for original_arg, arg in zip(original.args, call.args):
            if arg.keyword is not None and arg.keyword.value == "dtype":
                dtype, original_dtype = arg.value, original_arg.value
            elif arg.keyword is None and self._is_dtype(original_arg.value):
                dtype, original_dtype = arg.value, original_arg.value
            elif arg.keyword is None and not _is_device(original_arg.value):
                # x.to(d) / x.to(other): a dtype, a device or a tensor, only known at run time: the entry's
                # runtime function decides on the value
                self.ctx.handled.add(id(original))
                entry = self.ctx.registry.lookup("torch.Tensor.to")
                target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
                if target is None:
                    self.flag(original, "MP102", f".to({compact_source(original_arg.value)}): cannot tell whether the "
                              "argument is a dtype, a device or a tensor", "write x.astype(dtype) for a dtype, drop the "
                              "call for a device move, x.astype(other.dtype) for a tensor", "torch.Tensor.to")
                    return call
                self.ctx.converted_sites += 1
                return call.with_changes(func=self.ctx.target_expr(target),
                                         args=fix_commas([cst.Arg(value=receiver), *call.args]))
            elif arg.keyword is not None and arg.keyword.value not in ("device", "non_blocking", "copy",
                                                                       "memory_format"):
                return call  # memory_format: MindSpore tensors have one layout
        self.ctx.converted_sites += 1
        if dtype is None:
            return receiver
        if self._is_module(original.func.value):  # model.to(torch.float64): a Cell has no astype
            cell_to = self._cell_to(receiver, [cst.Arg(dtype)])
            if cell_to is not None:
                return cell_to
        if self.scope.resolve_torch(original_dtype) == "torch.bool":  # x.to(torch.bool) is x.bool(): its entry's
            entry = self.ctx.registry.lookup("torch.Tensor.bool")  # function (complex values: nonzero is True)
            target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
            if target is not None and not target.startswith("."):
                return cst.Call(func=self.ctx.target_expr(target), args=[cst.Arg(receiver)])
        return method(receiver, "astype", [cst.Arg(dtype)])

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

    @staticmethod
    def _designation(call: cst.Call) -> cst.BaseExpression:
        """``torch.device(type, index)`` -> its string, as ``str(device)`` reads: ``"cpu:1"``; the type and index
        are taken by position or keyword (``torch.device(index=0, type="cpu")``)."""
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        spec = positional[0] if positional else keywords.get("type", cst.SimpleString('"cpu"'))
        index = positional[1] if len(positional) > 1 else keywords.get("index")
        if index is None or (isinstance(index, cst.Name) and index.value == "None"):
            # written over several lines inside torch.device's parentheses (YOLOv3's load_model): it keeps its own
            return parenthesize(spec) if "\n" in cst.Module(body=[]).code_for_node(spec) else spec
        if isinstance(spec, cst.SimpleString) and isinstance(index, cst.Integer):
            return cst.SimpleString(f'"{spec.evaluated_value}:{index.value}"')
        code = cst.Module(body=[]).code_for_node
        return parse_expression(f'"{{}}:{{}}".format({code(spec)}, {code(index)})')

    def _device_assignment(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine | None:
        """``device = torch.device(spec)`` -> the same line (``device = spec``) plus the global device setting:
        ``mp_framework.select_device(target, 1)`` (MindSpore >= 2.5: ``ms.set_device`` unless MindSpore already
        computes there, since it refuses once a kernel ran) or ``ms.set_context(device_target=..., device_id=...)``.
        Making a ``torch.device("cuda:0")`` never fails in torch (a library file's module-level device, used only
        on paths a CPU run never reaches), and ``ms.set_device("GPU")`` raises on a machine without one: from 2.5 on
        an accelerator target is taken only when ``ms.hal.is_available`` says it is there, else the CPU."""
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
        guarded = self.ctx.options.ms_version >= (2, 5)  # ms.hal.is_available: MindSpore >= 2.5 only
        if isinstance(spec, cst.SimpleString):
            kind, _, number = spec.evaluated_value.partition(":")
            accelerator = "GPU" if kind == "cuda" else "Ascend" if kind == "npu" else None
            target = f'"{accelerator or "CPU"}"'
            device_id = device_id or (number if number.isdigit() else None)
        elif spec is None:
            target = '"CPU"'
        elif guarded:  # a run-time choice ("cuda" if torch.cuda.is_available() else "cpu", args.device): its string
            target = assign.targets[0].target.value
        else:
            target = f'("GPU" if str({assign.targets[0].target.value}).startswith("cuda") else "CPU")'
        # from 2.5 on, select_device takes an accelerator only where ms.hal.is_available finds one (torch makes
        # torch.device("cuda:0") on any machine), and does nothing in a static graph, where the ms.hal builtins do
        # not compile (a device line in a function forward calls: DGCNN's get_graph_feature)
        if guarded:  # kept where MindSpore already computes on it: a kernel may have run (see select_device)
            text = (f"{self.ctx.alias_for('mindport.runtime.framework')}.select_device("
                    f"{target}{', ' + device_id if device_id else ''})")
        else:
            text = (f"{self.ctx.alias_for('mindspore')}.set_context(device_target={target}"
                    f"{', device_id=' + device_id if device_id else ''})")
        return parse_statement(text)  # type: ignore[return-value]

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            key = (id(self.scope), node.targets[0].target.value)
            if self._builds_module(node.value):
                self._modules.add(key)
            else:
                self._modules.discard(key)
        for target in node.targets:
            self._stored.update(_attribute_targets(target.target))
            if (self.scope.resolve_torch(target.target) or "").startswith("torch.backends."):
                self.ctx.handled.add(id(target.target))

    def _builds_module(self, value) -> bool:
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _MODULE_RETURNING:
            return self._is_module(value.func.value)  # Net().to(dtype), model.cuda().eval(): the module itself
        qual = self.scope.resolve_torch(value.func) or ""
        if qual == "torch.nn.Module":
            return True
        entry = self.ctx.registry.lookup(qual) if qual else None
        if entry is not None and entry.kind == "layer":  # (not PackedSequence, Parameter: their .double() casts)
            return True
        if self._module_classes is None:
            from mindport.migrator.rules.module_class import module_classes

            self._module_classes = module_classes(self.ctx.class_summary, self.ctx.options.module_classes)
        return isinstance(value.func, cst.Name) and self.scope.resolve(value.func) is None \
            and value.func.value in self._module_classes

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stored.update(_attribute_targets(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stored.update(_attribute_targets(node.target))



def _attribute_targets(target: cst.BaseExpression) -> set[int]:
    """The attributes an assignment stores to (``self.device``, ``a.x, b.y = ...``)."""
    if isinstance(target, cst.Attribute):
        return {id(target)}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {i for e in target.elements for i in _attribute_targets(e.value)}
    return set()


def _device_move_of(value, target) -> bool:
    """``target.to(<device>)``, ``target.to(device=<device>, non_blocking=...)``, ``target.cuda(...)``,
    ``target.cpu()``: a move of ``target`` itself to a device, nothing else (no dtype, no tensor to take one from)."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) \
            or not value.func.value.deep_equals(target):
        return False
    name = value.func.attr.value
    if name in _DEVICE_METHODS:
        return all(a.keyword is None or a.keyword.value in ("device", "non_blocking") for a in value.args)
    if name != "to" or not value.args:
        return False
    for arg in value.args:
        if arg.keyword is None and not _is_device(arg.value):
            return False
        if arg.keyword is not None and (arg.keyword.value not in ("device", "non_blocking", "copy")
                                        or arg.keyword.value == "device" and not _is_device(arg.value)):
            return False
    return any(arg.keyword is None or arg.keyword.value == "device" for arg in value.args)


class _SelfDeviceMoves(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0

    def leave_IndentedBlock(self, original_node, updated_node):
        body = [s for s in updated_node.body if not self._move(s)]
        if len(body) == len(updated_node.body):
            return updated_node
        self.dropped += len(updated_node.body) - len(body)
        return updated_node.with_changes(body=body or [cst.SimpleStatementLine(body=[cst.Pass()])])

    @staticmethod
    def _move(statement) -> bool:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        assign = statement.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return False
        target = assign.targets[0].target
        return isinstance(target, cst.Attribute) and pure_read(target) \
            and (assign.value.deep_equals(target) or _device_move_of(assign.value, target))


def drop_self_device_moves(module: cst.Module) -> cst.Module:
    """An attribute moved to a device and written back to itself (LlamaGen's ``self.freqs_cis =
    self.freqs_cis.to(h.device)`` in ``forward``; ``self.grid = self.grid.cuda()``; ``self.pe =
    self.pe.to(device=x.device)``) is nothing on MindSpore, whose placement is global, and an attribute written to
    itself (``self.freqs_cis = self.freqs_cis``, LlamaGen's other branch) is nothing anywhere: the statement is dropped
    before the rules run (DeviceTransform would leave, and a written self-assignment is, ``self.freqs_cis = self.freqs_cis``, which SelfCacheTransform
    then sees as a value ``forward`` writes to ``self``: MP107, and in a static graph an interpreted value the next
    op refuses, "Invalid input args for unpack call"). Only a move of the attribute itself, to something that is
    evidently a device (``_is_device``): ``self.a = self.a.to(x)`` takes ``x``'s dtype and stays."""
    if "self" not in module_code(module):  # cheap exit: nothing of the kind
        return module
    runner = _SelfDeviceMoves()
    new = transform(module, runner)  # rebuilds only the blocks it changes (LibCST's visit rebuilds every node)
    return new if runner.dropped else module
