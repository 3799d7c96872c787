"""The converter's scopes: which names in a file are torch's, resolved from the file's own imports and simple aliases,
scope by scope (the binding rules are :mod:`mindport.names`', shared with lint), and what a local name evidently holds.

This is deliberately cheap (one visitor over the tree, no qualified-name metadata, which costs ~5x the parse):
``import torch.nn as nn``, ``from torch.nn import functional as F``, ``from torch.nn import Conv2d as C`` and
local aliases such as ``act = F.relu`` are followed, in the module and inside functions. Any other binding of a
name (an assignment, a parameter, a non-torch import) shadows it, so a local ``nn`` from another library is never
taken for torch's.
"""
from __future__ import annotations

import libcst as cst

from mindport.migrator.project import project_return
from mindport.migrator.walk import read, walk
from mindport.names import Scope, bind_from, bind_module, bind_star, is_torch, torch_package


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for Name/Attribute chains, None for anything else (calls, subscripts ...)."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class CstScope(Scope):
    """A :class:`mindport.names.Scope` that also resolves LibCST expressions (what the rules hold).

    ``local``: top-level packages of the project being converted; a torch-based package among them (converting timm
    itself) is the project's code, not a third-party dependency."""

    __slots__ = ("local", "returns", "attributes", "use_kinds", "line_kinds", "use_quals", "patched", "element_kinds")

    def __init__(self, parent: "Scope | None" = None, local: frozenset[str] = frozenset(),
                 returns: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self.local = parent.local if isinstance(parent, CstScope) else local
        # what the project's functions and methods return, by name, across its files (project.return_kinds)
        self.returns: dict[str, str] = parent.returns if isinstance(parent, CstScope) else (returns or {})
        # what a name holds where it is read, in source order (id of the Name node -> kind; one dict for the file):
        # `x = a + b; x = x.chunk(4, dim=-1); x = [n(t) for t in x]` reads a tensor on the second line although the
        # name ends up a list. Names bound in ways not tracked in order (unpacking, loops) read `kinds`.
        self.use_kinds: dict[int, str] = parent.use_kinds if isinstance(parent, CstScope) else {}
        self.line_kinds: dict[str, str] = {}  # while the scope is built: each name's kind at the current line
        # what an expression read before a later binding names (id of the node -> qualified name; one dict for the
        # file): a class's bases, read before the class binds its own name (`class Dataset(Dataset)`)
        self.use_quals: dict[int, str] = parent.use_quals if isinstance(parent, CstScope) else {}
        # torch names the file binds itself (one set for the file): `nn.MaskedLinear = MaskedLinear` puts the file's
        # own class on the torch module, so `nn.MaskedLinear(...)` is that class, not a torch API
        self.patched: set[str] = parent.patched if isinstance(parent, CstScope) else set()
        # a class body's scope: what each `self.X = ...` in its methods evidently holds ("tensor", "python", ...;
        # "other" when assignments disagree); register_buffer names are tensors
        self.attributes: dict[str, str] | None = None
        # names bound here to a list or tuple of objects of the project's own classes (``items = [Alphabet(2),
        # Alphabet(6)]``) -> their kind (PROJECT_OBJECT_KINDS): ``items[1]`` is one of them
        self.element_kinds: dict[str, str] = {}

    def elements_kind(self, name: str) -> str | None:
        """What each element of the list or tuple ``name`` holds, when it was bound to one of project objects."""
        for scope in self._visible():
            if name in scope.names:
                return getattr(scope, "element_kinds", {}).get(name)
        return None

    def attribute_elements(self, attr: str) -> str | None:
        """The same for ``self.<attr>`` (``self.alphabets = [Alphabet(n) for n in sizes]``), from its class body."""
        scope: Scope | None = self
        while scope is not None:
            if getattr(scope, "attributes", None) is not None:
                return scope.element_kinds.get("self." + attr)
            scope = scope.parent
        return None

    def attribute_kind(self, attr: str) -> str:
        """What ``self.<attr>`` holds, from the assignments of the enclosing class."""
        scope: Scope | None = self
        while scope is not None:
            attributes = getattr(scope, "attributes", None)
            if attributes is not None:
                return attributes.get(attr, "other")
            scope = scope.parent
        return "other"

    def own_method(self, name: str) -> bool:
        """``name`` is a method the enclosing class defines (a ``def`` in its body) and none of its methods assigns
        as ``self.<name>``: ``self.<name>(...)`` calls that method, not a sub-layer."""
        scope: Scope | None = self
        while scope is not None:
            attributes = getattr(scope, "attributes", None)
            if attributes is not None:
                return name in scope.names and name not in attributes
            scope = scope.parent
        return False

    def resolve(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of a dotted expression when its head is an import (torch's or not)."""
        if id(expr) in self.use_quals:
            return self.use_quals[id(expr)]
        dotted = dotted_name(expr)
        return None if dotted is None else self.resolve_dotted(dotted)

    def resolve_torch(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name when it is torch's, or a torch-based package's (``timm.layers.DropPath``) that is not
        part of the project."""
        qual = self.resolve(expr)
        if qual is not None and self.patched and any(qual == p or qual.startswith(p + ".") for p in self.patched):
            return None
        return qual if is_torch(qual) or self.is_package(qual) else None

    def is_package(self, qual: str | None) -> bool:
        """``qual`` belongs to a torch-based third-party package (not one of the project's own)."""
        package = torch_package(qual)
        return package is not None and package not in self.local

    def is_local_alias(self, expr: cst.BaseExpression) -> bool:
        """True for ``act`` in ``act = F.relu``: a name bound by assignment, not by an import."""
        return isinstance(expr, cst.Name) and self.is_alias_name(expr.value)


def bind_import(scope: Scope, node: cst.Import | cst.ImportFrom) -> None:
    """Bind the names an import statement binds, as :mod:`mindport.names` says imports bind."""
    if isinstance(node, cst.Import):
        for alias in node.names:
            bind_module(scope, _module_name(alias.name), alias.asname.name.value if alias.asname else None)
        return
    module = None if node.relative or node.module is None else _module_name(node.module)
    if isinstance(node.names, cst.ImportStar):
        bind_star(scope, module)
        return
    for alias in node.names:
        name = alias.name.value if isinstance(alias.name, cst.Name) else _module_name(alias.name)
        bind_from(scope, module, name, alias.asname.name.value if alias.asname else None)  # type: ignore[union-attr]


class ScopeBuilder(cst.CSTVisitor):
    """One pass that records, for the module and every function/class, the names it binds."""

    def __init__(self, local_packages: frozenset[str] = frozenset(), star_bindings=(), return_kinds=()) -> None:
        self.module_scope = CstScope(local=local_packages, returns=dict(return_kinds))
        # torch names a `from <project module> import *` brings: bound before the file's own statements, which may
        # rebind them
        self.module_scope.names.update(dict(star_bindings))
        self.seen: set[str] = set()  # names written in the file, but in imports and def/class names
        self.import_roots: set[str] = set()  # top-level package of every absolute import, at any depth
        self._definitions: set[int] = set()
        self.scopes: dict[int, Scope] = {}
        self._stack: list[Scope] = [self.module_scope]
        self._in_class: list[bool] = []  # per enclosing function/class: is it a class body?
        # for fixed_aliases(): how often each name is bound as a torch alias, and its uses other than as a callee
        self._alias_bindings: dict[str, int] = {}
        self._other_uses: set[str] = set()
        self._callees: set[int] = set()
        self._called: set[str] = set()
        self._not_uses: set[int] = set()  # assignment targets and attribute names: not uses of a name
        self._classes: list[CstScope] = []  # the class bodies being visited (their scopes)
        self._defined: set[str] = set()  # names a def or class statement of the file binds
        self._lambda_kinds: dict[int, dict[str, str]] = {}  # Lambda node mapped over literal tuples -> its params' kinds
        # id(scope) -> names bound there to a list of the project's own autograd engine's values
        # (``params = [Value(0.0) for _ in range(3)]``): a loop over one gives each its kind ("engine")
        self._engine_lists: dict[int, set[str]] = {}
        self._pending_kinds: dict[int, str] = {}  # Assign node -> its value's kind, noted when the value is read
        # `try: from torch.nn.functional import sdpa` / `except ImportError: sdpa = None`: the handler's fallback does
        # not rebind the imported name (the import succeeds under torch, and the converted code reads the import)
        self._fallback_names: dict[int, frozenset[str]] = {}  # ExceptHandler node -> the names its try imports
        self._fallbacks: list[frozenset[str]] = []
        # (id of a scope, name) bound to different things in that scope: a parameter, then `norm_layer =
        # nn.BatchNorm2d` when it is None; `act = F.relu` on one branch, `act = F.gelu` on another. Which binding a
        # read sees is known only at run time, so no read of the name is torch's (the alias values themselves are
        # rewritten, to the runtime adapter when calls need their arguments mapped). A torch-based package's import
        # is no such binding: under MindSpore it fails (see ImportCleanup), so the binding after it is the one.
        self._ambiguous: set[tuple[int, str]] = set()

    @property
    def current(self) -> Scope:
        return self._stack[-1]

    # libcst calls these for every field of every node; this visitor has no per-field hooks.
    def on_visit_attribute(self, node, attribute) -> None:
        return None

    def on_leave_attribute(self, original_node, attribute) -> None:
        return None

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes[id(node)] = self.module_scope

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._definitions:
            self.seen.add(node.value)
            scope = self.current
            if id(node) not in self._not_uses and node.value in scope.line_kinds:
                scope.use_kinds[id(node)] = scope.line_kinds[node.value]
        if id(node) not in self._callees and id(node) not in self._not_uses:
            self._other_uses.add(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._callees.add(id(node.func))
            self._called.add(node.func.value)
            if node.func.value == "map" and len(node.args) >= 2 and isinstance(node.args[0].value, cst.Lambda):
                # map(lambda t: t.chunk(2, dim=-1), (q, k, v)): each parameter takes its iterable's elements
                params = node.args[0].value.params.params
                self._lambda_kinds[id(node.args[0].value)] = {
                    p.name.value: kind for p, a in zip(params, node.args[1:])
                    if (kind := self._element_kind(a.value)) is not None}
        elif (isinstance(node.func, cst.Attribute) and node.func.attr.value == "register_buffer" and node.args
              and isinstance(node.args[0].value, cst.SimpleString) and self._is_self(node.func.value)):
            self._note_attribute(node.args[0].value.evaluated_value, "tensor")

    def _is_self(self, expr: cst.BaseExpression) -> bool:
        return bool(self._classes) and isinstance(expr, cst.Name) and self.current.kind_of(expr.value) == "object"

    def _note_attribute(self, attr, kind: str) -> None:
        attributes = self._classes[-1].attributes
        if isinstance(attr, str) and attributes is not None:
            before = attributes.get(attr, kind)
            if before == kind:
                attributes[attr] = kind
            elif {before, kind} <= {"tensor", "object", "tensor_or_layer"}:
                attributes[attr] = "tensor_or_layer"  # a Parameter on one branch, a layer on another
            else:
                attributes[attr] = "other"

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_uses.add(id(node.attr))

    def fixed_aliases(self) -> frozenset[str]:
        """Torch aliases (``act = F.relu``) bound once in the whole file, called in it and only ever called
        (``act(x)``): the alias can hold the MindSpore name and each call be mapped where it is written (no runtime
        adapter, which a static graph can't compile). An alias passed on as a value, bound twice, or never called
        here (another module may import it) holds the runtime adapter."""
        ambiguous = {name for _, name in self._ambiguous}
        return frozenset(name for name, count in self._alias_bindings.items()
                         if count == 1 and name in self._called and name not in self._other_uses
                         and name not in ambiguous)

    def _push(self, node: cst.CSTNode) -> None:
        scope = CstScope(self.current)
        self.scopes[id(node)] = scope
        self._stack.append(scope)

    def _fallback_definition(self, name: str) -> bool:
        """A def or class statement in an ``except ImportError:`` handler whose ``try`` imports the same name from
        torch (VAR's ``try: from torch.nn.functional import scaled_dot_product_attention as slow_attn`` / ``except
        ImportError: def slow_attn(...)``): the import succeeds under torch, so the name keeps the import, as for
        the handler's assignments (``_bind_target``)."""
        return any(name in names for names in self._fallbacks)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._fallback_definition(node.name.value):
            self.current.names[node.name.value] = None
        self._defined.add(node.name.value)
        self._definitions.add(id(node.name))
        in_class = self._in_class[-1] if self._in_class else False
        self._in_class.append(False)
        self._push(node)
        params = node.params
        for i, p in enumerate((*params.posonly_params, *params.params, *params.kwonly_params)):
            self.current.names[p.name.value] = None
            # a method's first parameter (self/cls) is the object, not a tensor: self.norm(x) is a layer call
            self.current.kinds[p.name.value] = "object" if in_class and i == 0 and not is_static(node) else \
                self._annotated_kind(p.annotation)
            self.current.line_kinds[p.name.value] = self.current.kinds[p.name.value]
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                self.current.names[p.name.value] = None

    def _annotated_kind(self, annotation: cst.Annotation | None) -> str:
        """``def f(alphabet: Alphabet)`` / ``"Alphabet"`` / ``alpha.Alphabet``: a parameter annotated with a plain class
        of the project's (return kind "instance", project.return_kinds) holds one of its objects ("engine" for the
        project's own autograd engine's class); any other parameter is a "param"."""
        if annotation is None:
            return "param"
        expr = annotation.annotation
        if isinstance(expr, cst.SimpleString):
            name = expr.evaluated_value
        else:
            name = dotted_name(expr)
        if not isinstance(name, str) or not name:
            return "param"
        head, leaf = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
        imported = self.current.resolve_dotted(head) if "." in name else None
        if imported is not None and imported.split(".", 1)[0] not in self.module_scope.local:
            return "param"  # np.ndarray, torch.Tensor: another library's class, whatever its name
        kind = self.module_scope.returns.get(leaf)
        return kind if kind in ("instance", "engine") else "param"

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.pop()
        self._in_class.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:  # read before the class binds its name: `class Dataset(Dataset)` extends the import
            qual = self.current.resolve(base.value)
            if qual is not None:
                self.current.use_quals[id(base.value)] = qual
        if not self._fallback_definition(node.name.value):
            self.current.names[node.name.value] = None
        self._defined.add(node.name.value)
        self._definitions.add(id(node.name))
        self._push(node)
        self.current.is_class = True
        self.current.attributes = {}
        self._classes.append(self.current)
        self._in_class.append(True)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.pop()
        self._in_class.pop()
        self._classes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._push(node)
        for p in node.params.params:
            self.current.names[p.name.value] = None
        self.current.kinds.update(self._lambda_kinds.pop(id(node), {}))

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._stack.pop()

    def visit_Import(self, node: cst.Import) -> bool:
        bind_import(self.current, node)
        self.import_roots.update(_module_name(alias.name).split(".", 1)[0] for alias in node.names)
        return False  # the names in an import are bindings, not uses (``seen``)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        bind_import(self.current, node)
        if not node.relative and node.module is not None:
            self.import_roots.add(_module_name(node.module).split(".", 1)[0])
        return False

    def visit_Try(self, node: cst.Try) -> None:
        imported = frozenset(_imported_names(node.body))
        for handler in node.handlers:
            self._fallback_names[id(handler)] = imported

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._fallbacks.append(self._fallback_names.pop(id(node), frozenset()))

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._fallbacks.pop()

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        # loss = 0, then loss += criterion(out, y): from here on the name holds what was added, not a Python number
        if isinstance(node.target, cst.Name) and self.current.line_kinds.get(node.target.value) == "python":
            kind = value_kind(node.value, self.current)
            if kind != "python":
                self.current.line_kinds[node.target.value] = kind

    def leave_Assign(self, node: cst.Assign) -> None:
        # the name's kind from here on (its value was read with the kinds before this line)
        kind = self._pending_kinds.pop(id(node))
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                name = target.target.value
                if kind != "other" or self.current.line_kinds.get(name) not in ("tensor", "param"):
                    self.current.line_kinds[name] = kind

    def visit_Assign(self, node: cst.Assign) -> None:
        self._read_before_rebinding(node)
        engine_list = self._engine_elements(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                names = self._engine_lists.setdefault(id(self.current), set())
                (names.add if engine_list else names.discard)(target.target.value)
        alias = self.current.resolve_torch(node.value) if len(node.targets) == 1 else None
        kind = value_kind(node.value, self.current)
        self._pending_kinds[id(node)] = kind
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and self._is_self(target.target.value) \
                    and not _says_nothing(node.value, target.target.attr.value):
                self._note_attribute(target.target.attr.value, _attribute_kind(node.value, kind, self.current))
                self._note_attribute_elements(target.target.attr.value, self._object_elements(node.value))
            self._note_patched(target.target, node.value)
            line_kind = self.current.line_kinds.get(getattr(target.target, "value", None))
            self._bind_target(target.target, alias)
            if isinstance(target.target, cst.Name) and line_kind is not None:
                self.current.line_kinds[target.target.value] = line_kind  # the value still reads the old kind
            if isinstance(target.target, (cst.Tuple, cst.List)):
                self._note_unpacked(target.target, node.value, kind)
            if isinstance(target.target, cst.Name):
                self._note_kind(target.target.value, kind)
                elements = self._object_elements(node.value)
                if elements is not None:
                    self.current.element_kinds[target.target.value] = elements
                else:
                    self.current.element_kinds.pop(target.target.value, None)
                self._not_uses.add(id(target.target))
                if alias is not None:
                    self._alias_bindings[target.target.value] = self._alias_bindings.get(target.target.value, 0) + 1
                elif target.target.value in self._alias_bindings:
                    self._alias_bindings[target.target.value] += 1  # bound to something else as well

    def _note_patched(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``nn.MaskedLinear = MaskedLinear`` (ikostrikov/pytorch-flows): the file puts a class or function it defines
        on a torch module and reads it from there; that name is the file's own (``CstScope.patched``). The assignment
        itself stays as written (it then sets the attribute on the MindSpore module the alias names)."""
        if not isinstance(target, cst.Attribute) or not isinstance(value, cst.Name) \
                or value.value not in self._defined:
            return
        qual = self.current.resolve(target)
        if is_torch(qual):
            self.current.patched.add(qual)

    def _read_before_rebinding(self, node: cst.Assign) -> None:
        """``optim = optim.Adam(model.parameters())`` (``import torch.optim as optim``): the value reads the import,
        which the assignment then rebinds; each dotted read of a rebound import in the value keeps its qualified name
        (``use_quals``), as a class's bases do."""
        rebound = {t.target.value for t in node.targets if isinstance(t.target, cst.Name)
                   and self.current.resolve_dotted(t.target.value) is not None}
        if not rebound:
            return
        scope = self.current

        class _Reads(cst.CSTVisitor):
            def visit_Attribute(self, n) -> None:
                self._note(n)

            def visit_Name(self, n) -> None:
                self._note(n)

            def _note(self, n) -> None:
                dotted = dotted_name(n)
                if dotted is not None and dotted.split(".")[0] in rebound \
                        and (qual := scope.resolve_dotted(dotted)) is not None:
                    scope.use_quals[id(n)] = qual

        read(node.value, _Reads())

    def _note_unpacked(self, target, value, kind: str) -> None:
        """``k, v = k_new, v_new``: each name its value's kind; ``q, k, v = qkv.split(C, dim=2)``: tensors;
        ``b, t, c = x.shape``: ints. Nested targets take the same rule at each level: ``_, (h, c) = self.lstm(x)``
        (an RNN's output and its state pair) makes ``h`` and ``c`` tensors, ``a, (b, c) = x, (y, z)`` pairs up."""
        names = [e.value for e in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names) \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            for name, element in zip(names, value.elements):
                element_kind = value_kind(element.value, self.current)
                if isinstance(name, cst.Name):
                    self._note_kind(name.value, element_kind)
                elif isinstance(name, (cst.Tuple, cst.List)):
                    self._note_unpacked(name, element.value, element_kind)
        elif kind in ("tensor", "python", "foreign") and not isinstance(value, (cst.Tuple, cst.List)):
            for name in names:
                if isinstance(name, cst.Name):
                    self._note_kind(name.value, kind)
                elif isinstance(name, (cst.Tuple, cst.List)):
                    self._note_unpacked(name, value, kind)  # an element of a tensor-kind value: the same kind

    def _note_kind(self, name: str, kind: str) -> None:
        if kind != "other" or self.current.kinds.get(name) not in ("tensor", "param"):
            # kinds are per scope, not per line: `k = k.view(...)` then `k = rope(k)` (unknown) keeps k a tensor
            self.current.kinds[name] = kind

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, None)
        self._note_iterated(node.target, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, None)
        self._note_iterated(node.target, node.iter)

    def _note_iterated(self, target, iterable) -> None:
        """``for t in (q, k, v)``, ``[t.chunk(2, dim=-1) for t in (q, k)]``: ``t`` holds each element in turn, so it
        has their kind when they all have the same one (tensors, as lucidrains' ``map``-free loops read)."""
        kind = self._element_kind(iterable)
        if isinstance(target, cst.Name) and kind is not None:
            self._note_kind(target.value, kind)

    def _element_kind(self, iterable) -> str | None:
        """The kind every element of a literal tuple or list has, if they agree; an element of a function's parameter
        (``for t in xs``, ``[t.repeat(2) for t in feats]``) has the parameter's kind, as ``xs[0]`` has."""
        if isinstance(iterable, cst.Name) and self.current.kind_of(iterable.value) == "param":
            return "param"
        if isinstance(iterable, cst.Name) and isinstance(self.current, CstScope) \
                and (elements := self.current.elements_kind(iterable.value)) is not None:
            return elements  # for a in alphabets: each one of the project's objects
        if isinstance(iterable, cst.Attribute) and self._is_self(iterable.value) \
                and (elements := self.current.attribute_elements(iterable.attr.value)) is not None:
            return elements  # for a in self.alphabets
        if self._engine_elements(iterable):
            return "engine"  # for p in params + [b]: p.data -= lr * p.grad on the project's own engine's values
        if not isinstance(iterable, (cst.Tuple, cst.List)) or not iterable.elements \
                or any(isinstance(e, cst.StarredElement) for e in iterable.elements):
            return None
        kinds = {value_kind(e.value, self.current) for e in iterable.elements}
        return kinds.pop() if len(kinds) == 1 else None

    def _note_attribute_elements(self, attr: str, kind: str | None) -> None:
        """``self.alphabets = [Alphabet(2), Alphabet(6)]``: its elements' kind, while every binding agrees."""
        elements = self._classes[-1].element_kinds
        key = "self." + attr
        if kind is not None and elements.get(key, kind) == kind:
            elements[key] = kind
        else:
            elements[key] = None

    def _object_elements(self, value: cst.BaseExpression) -> str | None:
        """``[Alphabet(2), Alphabet(6)]``, ``[Alphabet(n) for n in sizes]``: a list (or tuple) whose every element is
        an object of the project's own classes, of one kind (PROJECT_OBJECT_KINDS): that kind; None otherwise."""
        if isinstance(value, (cst.List, cst.Tuple)) and value.elements \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            kinds = {value_kind(e.value, self.current) for e in value.elements}
        elif isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            kinds = {value_kind(value.elt, self.current)}
        else:
            return None
        kind = kinds.pop() if len(kinds) == 1 else None
        return kind if kind in PROJECT_OBJECT_KINDS else None

    def _engine_elements(self, value: cst.BaseExpression) -> bool:
        """Is ``value`` a list of the project's own autograd engine's values: ``[Value(x) for x in xs]``, ``[w, b]``
        of such values, ``ws + [b]``, ``list(ws)``, or a name bound to one of these."""
        if isinstance(value, (cst.List, cst.Tuple)):
            return bool(value.elements) and all(
                self._engine_elements(e.value) if isinstance(e, cst.StarredElement)
                else value_kind(e.value, self.current) == "engine" for e in value.elements)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            return value_kind(value.elt, self.current) == "engine"
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            return self._engine_elements(value.left) and self._engine_elements(value.right)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "tuple") \
                and len(value.args) == 1:
            return self._engine_elements(value.args[0].value)
        if isinstance(value, cst.Name):
            scope = self.current
            while scope is not None:
                if value.value in scope.names or scope.parent is None:
                    return value.value in self._engine_lists.get(id(scope), ())
                scope = scope.parent
        return False

    def _bind_target(self, target: cst.BaseExpression, alias: str | None) -> None:
        if isinstance(target, cst.Name) and any(target.value in names for names in self._fallbacks):
            return  # an import's fallback in an except handler: the name keeps the import
        if isinstance(target, cst.Name):
            key = (id(self.current), target.value)
            before = self.current.names.get(target.value)
            if key in self._ambiguous or (target.value in self.current.names and before != alias
                                          and torch_package(before) is None):
                self._ambiguous.add(key)
                alias = None
            self.current.names[target.value] = alias
            self.current.line_kinds.pop(target.value, None)  # bound other than by `name = value`: read `kinds`
            if alias is not None:
                self.current.aliases.add(target.value)
            else:
                self.current.aliases.discard(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, None)


def _imported_names(block: cst.BaseSuite) -> set[str]:
    """The names torch's import statements directly in a block bind (``from torch.x import b as c`` -> c, ``import
    torch.nn`` -> torch). A torch-based package's import is not among them: under MindSpore it fails (see
    ImportCleanup), so its fallback binding is the one that holds."""
    names: set[str] = set()
    lines = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    for line in lines:
        for small in getattr(line, "body", ()) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
                else ():
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    module = _module_name(alias.name) if isinstance(small, cst.Import) else \
                        (_module_name(small.module) if small.module is not None and not small.relative else "")
                    if not is_torch(module):
                        continue
                    if alias.asname is not None:
                        names.add(alias.asname.name.value)
                    else:
                        names.add(_module_name(alias.name).split(".")[0])
    return names


_LITERALS = (cst.List, cst.Dict, cst.Set, cst.Tuple, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString,
             cst.Integer, cst.Float, cst.ListComp, cst.DictComp, cst.SetComp)


# What a tensor's size queries give: Python ints and tuples, never tensors (the same before and after conversion,
# where x.size(0) becomes x.shape[0]).
SIZE_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "item", "tolist", "element_size",
                          "stride", "is_contiguous", "is_floating_point", "is_complex"})
SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})


def _says_nothing(value: cst.BaseExpression, attr: str) -> bool:
    """A binding of ``self.<attr>`` that says nothing of what it holds otherwise: ``None`` (a cache filled later,
    C-SWM's ``self.edge_list = None`` then ``= torch.nonzero(adj)``) or a method of its own value
    (``self.edge_list = self.edge_list.repeat(n, 1)``): the attribute's kind is its other bindings'."""
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        value = value.func.value
        if isinstance(value, cst.Attribute) and value.attr.value == attr and isinstance(value.value, cst.Name) \
                and value.value.value == "self":
            return True
    return False


def _attribute_kind(value: cst.BaseExpression, kind: str, scope: Scope) -> str:
    """What ``self.X = value`` stores: a torch class (nn.Conv2d(...), an optimizer) is an object, not a tensor; a
    function parameter (``self.anchor_scale = anchor_scale``) "param": a receiver of tensor methods as the parameter
    is, but in arithmetic as likely a number (EfficientDet's anchors: ``yv - self.anchor_scale * stride / 2.0``, with
    ``yv`` numpy's, is numpy's operator)."""
    if isinstance(value, cst.Name) and operand_kind(value, scope) == "param":
        return "param"
    if kind == "tensor" and isinstance(value, cst.Call):
        qual = scope.resolve(value.func)
        leaf = qual.rsplit(".", 1)[-1] if qual else ""
        if leaf[:1].isupper() and leaf != "Parameter" and not leaf.endswith("Tensor"):
            return "object"
    return kind


# the methods torch.Tensor and torch.nn.Module share (set(dir(torch.Tensor)) & set(dir(torch.nn.Module)), dunders
# left out; tests/converter/test_tensor_or_layer.py recomputes it from the installed torch): on an attribute holding a
# Parameter on one branch and a layer on another (segan's skip_k), any other Tensor method is the Parameter's
MODULE_AND_TENSOR_METHODS = frozenset({"_version", "bfloat16", "cpu", "cuda", "double", "float", "half", "ipu", "mtia",
                                       "requires_grad_", "to", "type", "xpu"})

# methods whose result is a tensor, which numpy arrays, lists and dicts do not have
_TENSOR_ONLY_METHODS = frozenset({"permute", "contiguous", "unsqueeze", "masked_fill", "transpose_", "unflatten"})


# Kinds of receivers whose methods are never torch.Tensor's: Python's values and another library's objects ("python",
# "foreign"), layers and torch's objects ("object"), the project's own autograd engine's values ("engine") and objects
# of the project's own plain classes ("instance": ``self.alphabet = Alphabet()``, ``def f(a: Alphabet)``).
NOT_TENSOR_KINDS = frozenset({"python", "foreign", "object", "engine", "instance"})
# Of those, the kinds a method named like a tensor query (``size``, ``numpy``, ``detach``) is evidently not torch's
# on: a Python list's items ("python") may be tensors (``outs[-1].size(0)``).
OWN_METHOD_KINDS = frozenset({"object", "engine", "instance"})
# Objects of the project's own classes that are no layer: their ``to``/``cuda``/``float`` are the class's own (a
# layer's, self.cuda() in a Module, are nn.Module's, which the device rule converts)
PROJECT_OBJECT_KINDS = frozenset({"engine", "instance"})


def value_kind(value: cst.BaseExpression, scope: Scope) -> str:
    """What an expression evidently holds: "tensor" (a torch call's result or arithmetic on tensors), "python"
    (a literal or comprehension), "foreign" (a call into another imported library, e.g. numpy), "engine" (a value of
    an autograd engine the project defines itself, micrograd's ``Value``: project.engine_classes), or "other"."""
    if isinstance(value, _LITERALS):
        return "python"
    if isinstance(value, cst.Call):
        qual = scope.resolve(value.func)
        returns = getattr(scope, "returns", {})
        if qual in ("copy.deepcopy", "copy.copy") and value.args:
            return value_kind(value.args[0].value, scope)  # deepcopy(model): a copy holds what it copies
        if qual is not None:
            if qual.split(".", 1)[0] in getattr(scope, "local", frozenset()):
                # utils.to_one_hot(...) of the project's own: what it returns (project.return_kinds); SimpleVAE(...):
                # its model, not a library's
                return returns.get(qual.rsplit(".", 1)[-1], "other")
            if qual.split(".", 1)[0] in _NUMBER_MODULES and qual not in _NUMBER_MODULE_EXCEPTIONS:
                return "python"  # keys / math.sqrt(d): a Python number, so the quotient is what keys is
            # einops gives back what it was given: in torch code, tensors
            return "tensor" if is_torch(qual) or qual.split(".", 1)[0] == "einops" else "foreign"
        if isinstance(value.func, cst.Attribute):
            owner = value.func.value
            if value.func.attr.value in SIZE_METHODS:
                return "python"  # x.size(0), x.dim(), x.numel(), x.item(): Python numbers and tuples
            if value.func.attr.value == "get_last_lr" and not value.args:
                # a scheduler's rates: torch's list of Python floats (the port's mp_optim.get_last_lr gives the same);
                # a project class's own get_last_lr returns what the project says
                return returns.get("get_last_lr", "python")
            if value.func.attr.value == "numpy" and not value.args:
                return "foreign"  # x.data.numpy(): a numpy array, whose methods (argmax(axis=1)) are numpy's
            if isinstance(owner, cst.Name) and owner.value == "self":
                if isinstance(scope, CstScope) and scope.own_method(value.func.attr.value) \
                        and returns.get(value.func.attr.value) == "python":
                    # self.count_params() of the class's own method returning sum([p.view(-1).shape[0] ...]): a
                    # number (project.return_kinds), not a sub-layer's output
                    return "python"
                return "tensor"  # self.layer(x) / self.helper(x) in model code: a sub-layer's output
            kind = receiver_kind(owner, scope)
            if kind == "instance":  # alphabet.copy(): the class's own method, which returns what the project says
                return returns.get(value.func.attr.value, "other")
            if kind == "engine":  # v.tanh() of the project's own autograd engine (project.engine_classes)
                return "engine" if returns.get(value.func.attr.value) == "engine" else "other"
            if kind == "other" and (value.func.attr.value in _TENSOR_ONLY_METHODS or (
                    value.func.attr.value == "view" and len(value.args) >= 2)):
                return "tensor"  # l(x).view(b, -1, h, d).transpose(1, 2): only a tensor has these (numpy's view
                # takes one dtype)
            if kind == "other" and returns:  # from . import utils; utils.to_one_hot(...), helper.encode(x)
                return project_return(value.func.attr.value, returns) or kind
            return kind
        if isinstance(value.func, cst.Call) and isinstance(value.func.func, cst.Name) \
                and value.func.func.value[:1].isupper() and scope.resolve(value.func.func) is None:
            return "tensor"  # Attention()(q, k, v): a layer of the file's, built and called at once
        if isinstance(value.func, cst.Call) and _torch_layer_class(scope.resolve(value.func.func)):
            # nn.Flatten(1)(x), nn.MaxPool1d(n)(x): a torch layer built and called at once gives a tensor (in a file
            # that imports numpy, its .repeat(n, 1, 1) was left as numpy's spelling: nikitakaraevv/pointnet's
            # Transform, "'repeat' is not supported on this device" in MindSpore)
            return "tensor"
        if _first_parameter(value):
            return "tensor"  # next(self.parameters()): a Parameter (its .data, .new(...) are a tensor's)
        if isinstance(value.func, cst.Name) and value.func.value in ("list", "dict", "set", "str", "tuple", "len",
                                                                     "range", "int", "float", "sorted"):
            return "python"
        if isinstance(value.func, cst.Name) and value.func.value in returns:
            return returns[value.func.value]  # a function of this file's, or one imported relatively (project's)
        return "other"
    if isinstance(value, cst.BinaryOperation):
        kinds = {operand_kind(value.left, scope), operand_kind(value.right, scope)}
        if "engine" in kinds:
            return "engine"  # a * b on Values of the project's own engine: the class's operator
        if "tensor" in kinds:
            return "tensor"
        if "foreign" in kinds and kinds <= {"foreign", "python", "param"}:
            return "foreign"  # np.log(base) / (dim - 1): numpy arithmetic (a parameter here is a number)
        if "param" in kinds:
            return "param" if kinds <= {"param", "python"} else "tensor"  # dim // 2: as its parameter
        return "other"
    if isinstance(value, cst.UnaryOperation):
        return operand_kind(value.expression, scope)
    if isinstance(value, cst.IfExp):
        # (torch.abs(p) if adaptive else 1.0): a tensor on one branch, a number (or a tensor) on the other is a
        # tensor's arithmetic and methods; branches of one kind are that kind
        kinds = {operand_kind(value.body, scope), operand_kind(value.orelse, scope)}
        if "tensor" in kinds and kinds <= {"tensor", "python", "param"}:
            return "tensor"
        return kinds.pop() if len(kinds) == 1 else "other"
    if isinstance(value, cst.Name) and not scope.is_alias_name(value.value):
        qual = scope.resolve(value)
        if qual is not None and not is_torch(qual) and qual.split(".", 1)[0] != "einops" \
                and qual.split(".", 1)[0] not in getattr(scope, "local", frozenset()):
            return "foreign"  # painter = plt: another library's import (matplotlib's pyplot), not a tensor
    return receiver_kind(value, scope)


# The standard library's number modules: each function of math (and cmath) gives a Python number, a bool or a tuple
# of them whatever it is given (a 0-d tensor is read as a float; checked over every function of math on torch 2.13),
# so arithmetic with one is arithmetic with a number, not with another library's object. math.prod multiplies what
# it is given (a tensor for tensors).
_NUMBER_MODULES = frozenset({"math", "cmath"})
_NUMBER_MODULE_EXCEPTIONS = frozenset({"math.prod"})


def _torch_layer_class(qual: str | None) -> bool:
    """``torch.nn.Flatten``, ``torch.nn.modules.pooling.MaxPool1d``: a layer class of torch.nn (its last name
    capitalised; ``torch.nn.Parameter`` is no layer)."""
    return qual is not None and qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper() \
        and qual.rsplit(".", 1)[-1] not in ("Parameter", "UninitializedParameter", "Buffer")


def _first_parameter(call: cst.Call) -> bool:
    """``next(model.parameters())``, ``next(iter(self.parameters()))`` (also ``.buffers()``)."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "next" and call.args):
        return False
    inner = call.args[0].value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter" and inner.args:
        inner = inner.args[0].value
    return isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) \
        and inner.func.attr.value in ("parameters", "buffers") and not inner.args


def operand_kind(expr: cst.BaseExpression, scope: Scope) -> str:
    """An operand's kind, a function parameter kept as "param" (taken for a tensor only when nothing says else)."""
    if isinstance(expr, cst.Name) and expr.value not in ("self", "cls"):
        # read where it stands (in source order), else what the scope says of the name
        return getattr(scope, "use_kinds", {}).get(id(expr)) or scope.kind_of(expr.value)
    if isinstance(expr, cst.BinaryOperation):
        return value_kind(expr, scope)
    if self_attribute_kind(expr, scope) == "param":
        return "other"  # self.scale = scale: a number or a tensor, nothing says which
    return receiver_kind(expr, scope)


def self_attribute_kind(expr: cst.BaseExpression, scope: Scope) -> str | None:
    """What ``self.X`` stores (``_attribute_kind``), for an attribute of an object-kind name; None otherwise."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and isinstance(scope, CstScope) \
            and scope.kind_of(expr.value.value) == "object":
        return scope.attribute_kind(expr.attr.value)
    return None


def receiver_kind(expr: cst.BaseExpression, scope: Scope) -> str:
    if isinstance(expr, cst.Name) and expr.value in ("self", "cls"):
        return "object"  # self.norm(x) calls a sub-layer or a method, never a tensor method
    if isinstance(expr, cst.Name):
        kind = operand_kind(expr, scope)
        return "tensor" if kind == "param" else kind
    if isinstance(expr, cst.Subscript):
        if isinstance(expr.value, cst.Name) and isinstance(scope, CstScope) \
                and (elements := scope.elements_kind(expr.value.value)) is not None:
            return elements  # items[1] of items = [Alphabet(2), Alphabet(6)]: one of the project's objects
        if isinstance(expr.value, cst.Attribute) and isinstance(expr.value.value, cst.Name) \
                and isinstance(scope, CstScope) and scope.kind_of(expr.value.value.value) == "object" \
                and (elements := scope.attribute_elements(expr.value.attr.value)) is not None:
            return elements  # self.alphabets[i]
        return receiver_kind(expr.value, scope)
    if isinstance(expr, (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.IfExp) + _LITERALS):
        kind = value_kind(expr, scope)
        return "tensor" if kind == "param" else kind
    if isinstance(expr, cst.Comparison):  # (x != 0).type(...), (trg > 1).float(): a mask of its tensor operand
        kinds = {receiver_kind(expr.left, scope), *(receiver_kind(c.comparator, scope) for c in expr.comparisons)}
        return "tensor" if "tensor" in kinds else "foreign" if "foreign" in kinds else "other"
    if isinstance(expr, cst.Attribute) and expr.attr.value in SIZE_ATTRIBUTES:
        return "python"  # x.shape, x.shape[0], x.ndim: tuples and ints, in torch and in MindSpore
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("weight", "bias"):
        return "tensor"  # a layer's parameter: m.weight.normal_(), self.fc.bias.zero_()
    kind = self_attribute_kind(expr, scope)  # self.running_mean, registered as a buffer in __init__
    if kind in ("tensor", "python", "foreign", "param", "instance", "engine"):
        return "tensor" if kind == "param" else kind  # a parameter kept on self: a tensor's methods, as its own
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("data", "grad", "T", "mT", "H", "mH") \
            and receiver_kind(expr.value, scope) == "tensor":
        return "tensor"  # m.weight.data.zero_(), x.T.imag; a numpy-holding self.data stays unknown
    if isinstance(expr, cst.Attribute) and _foreign_call_attribute(expr, scope):
        return "foreign"  # pathlib.Path(__file__).parent.absolute(), np.arange(6).reshape(2, 3).T.clip(0, 3)
    return "other"


def _foreign_call_attribute(expr: cst.Attribute, scope: Scope) -> bool:
    """``f(...).a.b`` where f is another library's callable (``pathlib.Path``, ``np.array``): an attribute of what
    that library returns is that library's object, whose methods (``Path.absolute()``) are no tensor's. Only through
    attributes of the call itself: a name bound to such a value is left to what the scope says of it."""
    base = expr.value
    while isinstance(base, cst.Attribute):
        base = base.value
    return isinstance(base, cst.Call) and value_kind(base, scope) == "foreign"


def is_static(node: cst.FunctionDef) -> bool:
    """A ``@staticmethod``."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)


def build_scopes(module: cst.Module, local_packages: frozenset[str] = frozenset(), star_bindings=(),
                 return_kinds=()) -> ScopeBuilder:
    """The scopes of a module: ``.module_scope``, and ``.scopes`` (id of each function, class and lambda node -> its
    scope). ``local_packages``: the project's top-level packages (see :class:`CstScope`); ``star_bindings``: the torch
    names star imports of project modules bring ((name, torch name), ...); ``return_kinds``: what the project's
    functions return ((name, kind), ...: project.return_kinds)."""
    builder = ScopeBuilder(local_packages, star_bindings, return_kinds)
    walk(module, builder)
    return builder
