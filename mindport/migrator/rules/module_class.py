"""The converter rule ModuleClassTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/module_class.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import dotted_name
from mindport.migrator.syntax import function_bindings, module_level, own_bindings
from mindport.names import CELL_NAMES, CELL_PRIVATE_NAMES, cell_attribute_name, is_module_base
from mindport.migrator.walk import find_all, parse_statement, walk


def class_summary(module: cst.Module, module_scope) -> tuple:
    """What :func:`module_classes` needs of a file: per top-level class, its name and, per base, the base's dotted
    name and whether it resolves to torch's nn.Module; and module-level aliases of classes (:func:`_class_aliases`)."""
    classes = tuple((cls.name.value, tuple((dotted_name(b.value) or "", is_module_base(module_scope.resolve(b.value)))
                                           for b in cls.bases))
                    for cls in module.body if isinstance(cls, cst.ClassDef))
    return classes + _class_aliases(module.body)


def _class_aliases(body) -> tuple:
    """Module-level ``SwiGLU = PlainSwiGLU`` (also in a top-level if/try/except: an optional package's fallback), as
    a summary entry: the name is a module class when the class it names is one."""
    found = []
    for stmt in module_level(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name) and dotted_name(small.value):
                    found.append((small.targets[0].target.value, ((dotted_name(small.value), False),)))
    return tuple(found)


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
    """``class Net(nn.Module)`` -> ``class Net(nn.Cell)``; ``forward`` -> ``construct`` (definition and calls: on
    ``self``, ``super()``, sub-layers and, inside a module class, any layer reached through a local name).

    A method the model defines under a name Cell has and calls itself (``compile``, which ``Cell.__call__`` runs in
    GRAPH_MODE; ``construct``; any name of ``mindport.names.CELL_NAMES``) takes a trailing underscore, with its
    ``self.<name>`` references in the file's module classes and the calls on a name of the file bound only to
    instances of the class (``model = Net(); model.compile(...)``): it would replace MindSpore's method.

    A ``torch.nn.ModuleList`` subclass that defines ``forward`` (called as a layer: dinov2's ``BlockChunk``) is based
    on ``mp_containers.ModuleListLayer``, a SequentialCell holding its members as ModuleList does: a static graph
    reads any CellList as a tuple of its members, and calling one failed to compile ("The object is not callable").

    A module class with no ``forward`` method that sets ``self.forward = lambda x: ...`` at the top of ``__init__``
    (reading no local of ``__init__``) gets that lambda as its ``construct`` method: a static graph failed to compile
    the lambda held on the instance ("Parse Resolve convert failed": PointCNN's ``LayerNorm``).

    A direct nn.Module subclass with no ``forward`` that overrides ``__call__`` has that method as its
    ``construct`` (a static graph compiles a sub-cell's ``construct``, never its ``__call__``); one whose body calls
    ``__call__`` (``super().__call__(x)``) is left as written.

    A module class defining ``extra_repr`` gets an ``extend_repr`` returning it: torch's ``repr(m)`` shows
    ``extra_repr()``, MindSpore's ``Cell.__repr__`` calls ``extend_repr()`` (a layer subclass's custom text was
    MindSpore's ``Dense(input_channels=...)`` silently); ``super().extra_repr()`` in a class whose base is torch's
    own (nn.Module, a layer: MindSpore's classes have no ``extra_repr``) is ``super().extend_repr()``, the Cell's
    text."""

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Net(nn.Module):
                    def forward(self, x):
                        return x * 2


                class Wrapper(Net):
                    def forward(self, x):
                        return super().forward(x) + 1
            """,
            after="""
                from mindspore import nn


                class Net(nn.Cell):
                    def construct(self, x):
                        return x * 2


                class Wrapper(Net):
                    def construct(self, x):
                        return super(Wrapper, self).construct(x) + 1
            """,
            note="A subclass of a Module subclass is a Cell too; super().forward(...) follows the rename (written "
                 "super(Wrapper, self), which GRAPH_MODE compiles as Python means it: ObjectSurfaceTransform).",
        ),
        Example(
            before="""
                class Plain:
                    def forward(self, x):
                        return x
            """,
            note='A class that is no nn.Module keeps its forward.',
        ),
        Example(
            before="""
                import torch.nn as nn


                class Flow(nn.Module):
                    def __init__(self, flows):
                        super().__init__()
                        self.flows = nn.ModuleList(flows)

                    def forward(self, x):
                        for flow in self.flows:
                            x = flow.forward(x)
                        return x
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import containers as mp_containers


                class Flow(nn.Cell):
                    def __init__(self, flows):
                        super().__init__()
                        self.flows = mp_containers.ModuleList(flows)

                    def construct(self, x):
                        for flow in self.flows:
                            x = flow.construct(x)
                        return x
            """,
            note='In a module class, forward called on a layer reached through a local name is its construct.',
        ),
        Example(
            before="""
                import torch.nn as nn


                class Chunk(nn.ModuleList):
                    def forward(self, x):
                        for block in self:
                            x = block(x)
                        return x
            """,
            after="""
                from mindport.runtime import containers as mp_containers


                class Chunk(mp_containers.ModuleListLayer):
                    def construct(self, x):
                        for block in self:
                            x = block(x)
                        return x
            """,
            note="A ModuleList subclass called as a layer: a static graph reads a CellList as a tuple, which it "
                 "cannot call; ModuleListLayer is a SequentialCell, compiled as a Cell.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Forecaster(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2)

                    def compile(self, loss, optimizer):
                        self.loss, self.optimizer = loss, optimizer

                    def forward(self, x):
                        return self.fc(x)

                    def fit(self, loss):
                        self.compile(loss, None)
            """,
            after="""
                from mindspore import nn


                class Forecaster(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=2)

                    def compile_(self, loss, optimizer):
                        self.loss, self.optimizer = loss, optimizer

                    def construct(self, x):
                        return self.fc(x)

                    def fit(self, loss):
                        self.compile_(loss, None)
            """,
            note="A model's own compile would replace Cell.compile, which a Cell's call runs in GRAPH_MODE "
                 "(N-BEATS: 'compile() missing 1 required positional argument'): it becomes compile_.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self, k):
                        super().__init__()
                        self.k = k

                    def extra_repr(self):
                        return f"k={self.k}, " + super().extra_repr()
            """,
            after="""
                from mindspore import nn


                class Block(nn.Cell):
                    def __init__(self, k):
                        super().__init__()
                        self.k = k

                    def extra_repr(self):
                        return f"k={self.k}, " + super().extend_repr()

                    def extend_repr(self):  # MindSpore's Cell.__repr__ calls extend_repr; torch's Module.__repr__, extra_repr
                        return self.extra_repr()
            """,
            note="repr(block) shows the model's extra_repr, as torch's does (MindSpore's Cell.__repr__ calls "
                 "extend_repr); super().extra_repr() of torch's own base is the Cell's text.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Expansion(nn.Module):
                    def __init__(self, basis):
                        super().__init__()
                        self.basis = basis

                    def __call__(self, x):
                        return self.basis(x)
            """,
            after="""
                from mindspore import nn


                class Expansion(nn.Cell):
                    def __init__(self, basis):
                        super().__init__()
                        self.basis = basis

                    def construct(self, x):
                        return self.basis(x)
            """,
            note="A module that overrides __call__ instead of defining forward: its method is the Cell's construct, "
                 "which Cell.__call__ runs and a static graph compiles in a parent's construct.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self.module_classes = module_classes
        self._class_stack: list[bool] = []
        self._reserved: set[str] = set()
        self._methods: set[str] = set()  # methods a module class defines under a name Cell calls itself (compile)
        self._class_bodies: list[tuple] = []
        self._torch_based: list[bool] = []  # per class: a module class whose base is torch's own (nn.Module, a layer)
        self._instances: dict[str, set[str]] = {}  # a name bound only to instances of such a class -> those methods

    def visit_Module(self, node: cst.Module) -> None:
        self._instances = _instances_of_renamed(node, self.module_classes)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_module = node.name.value in self.module_classes
        self._class_stack.append(is_module)
        self._class_bodies.append(tuple(node.body.body) if isinstance(node.body, cst.IndentedBlock) else ())
        self._torch_based.append(is_module and any(
            b.keyword is None and is_module_base(self.scope.resolve_torch(b.value)) for b in node.bases))
        if is_module:  # attributes the class sets under a name Cell uses itself (self.cells = ...): renamed
            self._reserved |= {n for n in _self_assigned(node) if n in CELL_NAMES or n in CELL_PRIVATE_NAMES}
            self._methods |= _own_methods(node) & _TAKEN_METHOD_NAMES

    def leave_ClassDef(self, original_node, updated_node):
        torch_based = self._torch_based.pop()
        is_module = self._class_stack.pop()  # the bases themselves are converted by the table (torch.nn.Module entry)
        self._class_bodies.pop()
        own = _own_methods(original_node)
        if is_module and "forward" in own:
            updated_node = self._called_list_base(original_node, updated_node)
        if is_module and not own & {"forward", "construct"}:
            updated_node = self._forward_lambda_as_method(updated_node)
            if torch_based and "__call__" in own:
                updated_node = self._call_as_construct(updated_node)
        if not is_module or "extra_repr" not in own or "extend_repr" in own:
            return updated_node
        # torch's repr(m) shows extra_repr(); MindSpore's Cell.__repr__ calls extend_repr(): one that returns it
        body = list(updated_node.body.body)
        at = next(i for i, stmt in enumerate(body) if isinstance(stmt, cst.FunctionDef)
                  and stmt.name.value == "extra_repr") + 1
        body.insert(at, parse_statement(
            "def extend_repr(self):  # MindSpore's Cell.__repr__ calls extend_repr; torch's Module.__repr__, extra_repr\n"
            "    return self.extra_repr()\n").with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        self.ctx.converted_sites += 1
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def _called_list_base(self, original: cst.ClassDef, cls: cst.ClassDef) -> cst.ClassDef:
        """A ``torch.nn.ModuleList`` base of a class that defines ``forward`` (dinov2's ``BlockChunk``, called as a
        layer) -> ``mp_containers.ModuleListLayer``: a static graph reads any CellList, a subclass too, as a tuple,
        and calling it failed to compile ("The object is not callable")."""
        bases = list(cls.bases)
        for i, base in enumerate(original.bases):
            if base.keyword is None and self.scope.resolve_torch(base.value) == "torch.nn.ModuleList":
                layer = f"{self.ctx.alias_for('mindport.runtime.containers')}.ModuleListLayer"
                bases[i] = bases[i].with_changes(value=cst.parse_expression(layer))
                self.ctx.converted_sites += 1
        return cls.with_changes(bases=bases)

    def _call_as_construct(self, cls: cst.ClassDef) -> cst.ClassDef:
        """A direct nn.Module subclass with no ``forward`` that overrides ``__call__`` (high-order-layers-torch's
        ``Expansion2d``: torch calls it, bypassing hooks) -> that method named ``construct``: MindSpore's
        ``Cell.__call__`` runs ``construct``, and a static graph compiles a sub-cell's ``construct``, never its
        ``__call__`` ("For 'Cell', the method 'construct' is not defined"). Left as written when its body calls
        ``__call__`` itself (``super().__call__(x)`` would run the renamed method again)."""
        members = list(cls.body.body)
        for i, member in enumerate(members):
            if isinstance(member, cst.FunctionDef) and member.name.value == "__call__":
                if find_all(member.body, cst.matchers.Name("__call__")):
                    return cls
                members[i] = member.with_changes(name=cst.Name("construct"))
                self.ctx.converted_sites += 1
                return cls.with_changes(body=cls.body.with_changes(body=members))
        return cls

    def _forward_lambda_as_method(self, cls: cst.ClassDef) -> cst.ClassDef:
        """``self.forward = lambda x: BODY`` at the top level of ``__init__`` in a module class with no ``forward`` of
        its own -> ``def construct(self, x): return BODY``, when the lambda reads no name ``__init__`` binds but
        ``self``. A static graph compiles a Cell's ``construct`` method; a lambda held on the instance reading ``self``
        failed to compile ("Parse Resolve convert failed": PointCNN's BatchNorm-over-the-batch 'LayerNorm').
        A lambda set on a branch, or reading ``__init__``'s locals, is left as written."""
        init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None or not isinstance(init.body, cst.IndentedBlock):
            return cls
        bound = function_bindings(init) - {"self"}
        for i, stmt in enumerate(init.body.body):
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                    and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1):
                continue
            target, value = stmt.body[0].targets[0].target, stmt.body[0].value
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self" and target.attr.value in ("forward", "construct")
                    and isinstance(value, cst.Lambda)):
                continue
            lp = value.params
            own = function_bindings(value)
            read: set[str] = set()

            class Reads(cst.CSTVisitor):
                def visit_Name(self, node):
                    read.add(node.value)

            walk(value.body, Reads())
            if (read - own) & bound or "self" in own:
                return cls  # reads __init__'s locals: left as written
            body = list(init.body.body)
            del body[i]
            init2 = init.with_changes(body=init.body.with_changes(body=body))
            method_params = lp.with_changes(params=(cst.Param(cst.Name("self")), *lp.params)) \
                if not lp.posonly_params else lp.with_changes(posonly_params=(cst.Param(cst.Name("self")),
                                                                              *lp.posonly_params))
            method = cst.FunctionDef(
                name=cst.Name("construct"), params=method_params,
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(value.body)])]),
                leading_lines=[cst.EmptyLine(indent=False)])
            members = [init2 if m is init else m for m in cls.body.body]
            members.insert(members.index(init2) + 1, method)
            self.ctx.converted_sites += 1
            return cls.with_changes(body=cls.body.with_changes(body=members))
        return cls

    def leave_FunctionDef(self, original_node, updated_node):
        if self._class_stack and self._class_stack[-1] and original_node.name.value in self._methods \
                and self._in_class_body(original_node):
            return updated_node.with_changes(name=cst.Name(f"{original_node.name.value}_"))
        if self._class_stack and self._class_stack[-1] and updated_node.name.value == "forward":
            updated_node = updated_node.with_changes(name=cst.Name("construct"))
            static = [d for d in updated_node.decorators if isinstance(d.decorator, cst.Name)
                      and d.decorator.value == "staticmethod"]
            if static:  # a graph does not resolve a static construct (YOLOX's SiLU: 'Parse Resolve convert failed')
                params = updated_node.params
                taken = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
                me = next(n for n in ("self", "_self", "__self") if n not in taken)
                first = cst.Param(cst.Name(me))
                params = (params.with_changes(posonly_params=(first, *params.posonly_params)) if params.posonly_params
                          else params.with_changes(params=(first, *params.params)))
                updated_node = updated_node.with_changes(
                    params=params, decorators=[d for d in updated_node.decorators if d not in static])
        return updated_node

    def _in_class_body(self, function: cst.FunctionDef) -> bool:
        """Is ``function`` a method (a statement of the innermost class's body, not a nested function)?"""
        return any(function is stmt for stmt in self._class_bodies[-1]) if self._class_bodies else False

    def leave_Attribute(self, original_node, updated_node):
        if updated_node.attr.value in self._reserved and self._class_stack and self._class_stack[-1] \
                and isinstance(updated_node.value, cst.Name) and updated_node.value.value == "self":
            return updated_node.with_changes(attr=cst.Name(cell_attribute_name(updated_node.attr.value)))
        if updated_node.attr.value in self._methods and self._class_stack and self._class_stack[-1] \
                and isinstance(updated_node.value, cst.Name) and updated_node.value.value == "self":
            return updated_node.with_changes(attr=cst.Name(f"{updated_node.attr.value}_"))
        if isinstance(updated_node.value, cst.Name) \
                and updated_node.attr.value in self._instances.get(updated_node.value.value, ()):
            # model = Forecaster() ... model.compile(loss, opt): the instance's own method, renamed with it
            return updated_node.with_changes(attr=cst.Name(f"{updated_node.attr.value}_"))
        # self.forward(...), super().forward(...), a sub-module's self.conv.forward(...) and one reached through a
        # local name (`for flow in self.flows: x = flow.forward(x)`) inside a module class: in model code the object
        # whose forward is called is a layer (a torch class's own attribute is left to the table)
        if updated_node.attr.value == "forward" and self._class_stack and self._class_stack[-1] \
                and self.scope.resolve_torch(original_node.value) is None:
            return updated_node.with_changes(attr=cst.Name("construct"))
        # super().extra_repr() in a class derived from torch's own (nn.Module, a layer): the Cell's text
        # (MindSpore's classes have extend_repr, no extra_repr)
        if updated_node.attr.value == "extra_repr" and self._class_stack and self._class_stack[-1] \
                and _is_super_call(original_node.value) and self._torch_based[-1]:
            return updated_node.with_changes(attr=cst.Name("extend_repr"))
        return updated_node


# Methods of Cell that ``Cell.__call__`` reaches (MindSpore 2.10, followed from ``__call__`` through the ``self.<m>``
# calls of cell.py; tests/converter/test_graph_ports.py checks the list against the installed MindSpore), and that
# a torch model may define as its own: torch's nn.Module has ``compile`` too (torch.compile), so CELL_NAMES, which
# lists only names torch lacks, leaves it out. A module class defining one (N-BEATS's Keras-like
# ``def compile(self, loss, optimizer)``) would replace Cell's: GRAPH_MODE's call runs ``self.compile(*inputs)`` and
# failed with "NBeatsNet.compile() missing 1 required positional argument: 'optimizer'". Such a method, and its
# ``self.<name>`` references in the file's module classes, take a trailing underscore (``compile_``), and so do the
# calls on a name of the file bound only to instances of such a class (``model = Net(); model.compile(...)``,
# _instances_of_renamed). A caller outside the file, or through a name bound to other things too, keeps the old
# name and reaches Cell's method (which fails loudly given a loss and an optimizer: it compiles a graph of them).
_CALL_PATH_METHODS = frozenset({
    "cells_and_names", "check_names", "check_names_and_refresh_name", "compile", "compile_and_run", "construct",
    "get_parameters", "parameters_and_names", "update_parameters_name"})
# A private method of Cell's is replaced as well (CELL_PRIVATE_NAMES: torch code owns every underscored name but
# torch's own): DRL-Pytorch's C51 defines ``_predict(self, state)``, which GRAPH_MODE's ``Cell.__call__`` runs as
# ``predict_compiled, res = self._predict(*args)``: the model's two tensors were unpacked and tested ("The tensor
# should have only one element, but got 165"), where PyNative never calls it.
_TAKEN_METHOD_NAMES = _CALL_PATH_METHODS | CELL_NAMES | CELL_PRIVATE_NAMES  # a Cell method torch lacks is replaced too


def _instances_of_renamed(module: cst.Module, module_classes: set[str]) -> dict[str, set[str]]:
    """Names of the file every binding of which is a call of one of its module classes that defines a method under a
    taken name (``model = Forecaster()``), with those method names: ``model.compile(...)`` calls the renamed method.
    A name bound anywhere to something else (another value, an unpacking, a for/with/import/parameter) is left out."""
    taken = {cls.name.value: _own_methods(cls) & _TAKEN_METHOD_NAMES
             for cls in find_all(module, cst.matchers.ClassDef()) if cls.name.value in module_classes}
    taken = {name: methods for name, methods in taken.items() if methods}
    if not taken:
        return {}
    found: dict[str, set[str]] = {}
    other: set[str] = set()

    class Bindings(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Call) \
                    and isinstance(node.value.func, cst.Name) and node.value.func.value in taken:
                found.setdefault(node.targets[0].target.value, set()).update(taken[node.value.func.value])
            elif isinstance(node, cst.Param):
                other.add(node.name.value)
            else:
                other.update(own_bindings(node))
            return True

    walk(module, Bindings())
    return {name: methods for name, methods in found.items() if name not in other}


def _is_super_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def _own_methods(cls: cst.ClassDef) -> set[str]:
    """The names of the methods the class body defines (``def name(self, ...)``, not nested functions)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return {stmt.name.value for stmt in body if isinstance(stmt, cst.FunctionDef)}


def _self_assigned(cls: cst.ClassDef) -> set[str]:
    """The names the class assigns as ``self.<name> = ...`` (anywhere in its methods)."""
    found: set[str] = set()

    class _Walk(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            target = node.target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                found.add(target.attr.value)

    walk(cls, _Walk())
    return found

