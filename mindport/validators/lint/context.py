"""What the rules know about one file: its tree, its imports, its Cells, and indexes built in one walk.

Names are resolved from the file's own imports (`import mindspore as ms`, `from mindspore import nn`, ...),
never by bare text: `nn.Conv2d` is `mindspore.nn.Conv2d` only when `nn` was imported from MindSpore. Imports bind
names as `mindport.names` says (the converter uses the same rules).
Stdlib only (`ast`): the lint path must stay cheap.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from mindport.names import Scope, bind_from, bind_module, bind_star

CELL_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})
PARAMETER_NAMES = frozenset(
    {"mindspore.Parameter", "mindspore.common.Parameter", "mindspore.common.parameter.Parameter"}
)
JIT_NAMES = frozenset({"mindspore.jit", "mindspore.common.jit", "mindspore.common.api.jit"})
FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(slots=True)
class CallSite:
    """One call, where it is, and what its callee resolves to (None when not from an import)."""

    node: ast.Call
    qualname: str | None
    func: ast.AST | None  # innermost enclosing function or lambda
    cls: ast.ClassDef | None  # innermost enclosing class
    method: ast.FunctionDef | None  # the class method the call sits in (a nested def keeps its method)
    attr: str | None = None  # `x.size(0)` -> "size": the method name of an attribute call
    ms_name: str | None = None  # last segment of a `mindspore.*` qualname ("GeneratorDataset")
    layer: str | None = None  # the name of a `mindspore.nn.*` callee ("Conv2d")


# Fields that never hold nodes the index needs (expression contexts, operators, plain strings/flags).
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "attr", "arg", "id", "name", "level", "is_async", "simple",
                          "conversion", "type_comment", "kind", "type_ignores"})
_FIELDS: dict[type, tuple[str, ...]] = {}
# Leaves: nothing below them matters to the index (also the scalar values some fields hold).
_LEAVES = frozenset({ast.Name, ast.Constant, ast.alias, ast.arguments, ast.arg, ast.Pass, ast.Break, ast.Continue,
                     str, int, float, bool, bytes, complex, type(None), type(Ellipsis), ast.Global, ast.Nonlocal})


@dataclass
class FileContext:
    path: str
    source: str
    tree: ast.Module
    options: dict = field(default_factory=dict)  # e.g. {"device-target": "Ascend"} from config

    # filled by _index()
    aliases: dict[str, str | None] = field(default_factory=dict)  # the names imports bind (mindport.names)
    calls: list[CallSite] = field(default_factory=list)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)  # module-level defs
    methods: list[tuple[ast.ClassDef, ast.FunctionDef]] = field(default_factory=list)
    jit_functions: list[ast.FunctionDef] = field(default_factory=list)
    imports_mindspore: bool = False
    imports_torch: bool = False
    torch_imports: list[ast.AST] = field(default_factory=list)
    assigns: list[ast.Assign] = field(default_factory=list)
    by_attr: dict[str, list[CallSite]] = field(default_factory=dict)
    by_ms: dict[str, list[CallSite]] = field(default_factory=dict)
    by_layer: dict[str, list[CallSite]] = field(default_factory=dict)
    site_of: dict[int, CallSite] = field(default_factory=dict)  # id(ast.Call) -> its CallSite
    # function -> the nodes directly in its body (nested defs have their own), and its nested defs
    _bodies: dict[int, list[ast.AST]] = field(default_factory=dict)
    _nested: dict[int, list[ast.AST]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index()

    # ---- the single walk ---------------------------------------------------------------------------
    def _index(self) -> None:
        """One iterative walk: imports, classes, functions, calls (with scope), assignments, and the
        nodes of every function body. Names, constants and operators are not visited (the rules
        never need them from the index), which roughly halves the walk."""
        scope = Scope()  # every import of the file, wherever it stands, binds here
        scope.names = self.aliases
        bodies = self._bodies
        fields_of = _FIELDS
        leaves = _LEAVES
        skip = _SKIP_FIELDS
        Call, Import, ImportFrom, ClassDef = ast.Call, ast.Import, ast.ImportFrom, ast.ClassDef
        FunctionDef, AsyncFunctionDef, Lambda, Assign = ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Assign
        Attribute, Name = ast.Attribute, ast.Name
        # (node, func, cls, method, body bucket of the innermost def)
        stack: list[tuple] = [(stmt, None, None, None, None) for stmt in reversed(self.tree.body)]
        pending_calls: list[tuple] = []
        push = stack.append
        pop = stack.pop
        while stack:
            node, func, cls, method, bucket = pop()
            kind = node.__class__
            if bucket is not None:
                bucket.append(node)
            if kind is Call:
                pending_calls.append((node, func, cls, method))
            elif kind is Import:
                for a in node.names:
                    self._note_module(a.name, node)
                    bind_module(scope, a.name, a.asname)
                continue
            elif kind is ImportFrom:
                module = node.module if node.level == 0 else None
                if module:
                    self._note_module(module, node)
                for a in node.names:
                    if a.name != "*":
                        bind_from(scope, module, a.name, a.asname)
                    else:
                        bind_star(scope, module)
                continue
            elif kind is ClassDef:
                if func is None and cls is None:
                    self.classes[node.name] = node
                for part in (*node.decorator_list, *node.bases, *node.keywords):
                    push((part, func, cls, method, bucket))
                for stmt in node.body:
                    push((stmt, None, node, None, None))
                continue
            elif kind is FunctionDef or kind is AsyncFunctionDef:
                inner_method = method
                if func is None and cls is not None:
                    self.methods.append((cls, node))
                    inner_method = node
                else:
                    if func is None:
                        self.functions[node.name] = node
                    if node.decorator_list:
                        self._maybe_jit(node)
                if func is not None and not isinstance(func, Lambda):
                    self._nested.setdefault(id(func), []).append(node)
                inner = bodies[id(node)] = []
                # decorators and defaults belong to the enclosing scope; the body is inside
                for part in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
                    if part is not None:
                        push((part, func, cls, method, bucket))
                for stmt in node.body:
                    push((stmt, node, cls, inner_method, inner))
                continue
            elif kind is Lambda:
                push((node.body, node, cls, method, bucket))
                continue
            elif kind is Assign:
                self.assigns.append(node)
            names = fields_of.get(kind)
            if names is None:
                names = fields_of[kind] = tuple(f for f in kind._fields if f not in skip)
            for name in names:
                value = getattr(node, name, None)
                cls_ = value.__class__
                if cls_ is list:
                    for item in value:
                        c = item.__class__
                        # `self.conv`, `nn.Conv2d`: an attribute of a plain name holds nothing to index
                        if c in leaves or (c is Attribute and item.value.__class__ is Name):
                            continue
                        push((item, func, cls, method, bucket))
                elif cls_ not in leaves and not (cls_ is Attribute and value.value.__class__ is Name):
                    push((value, func, cls, method, bucket))
        resolve = self.resolve
        calls = self.calls
        by_attr, by_ms, by_layer = self.by_attr, self.by_ms, self.by_layer
        site_of = self.site_of
        for call, func, cls, method in pending_calls:
            f = call.func
            qn = resolve(f)
            attr = f.attr if f.__class__ is ast.Attribute else None
            ms_name = layer = None
            if qn is not None and qn.startswith("mindspore."):
                ms_name = qn.rsplit(".", 1)[1]
                if qn.startswith("mindspore.nn."):
                    layer = ms_name
            site = CallSite(call, qn, func, cls, method, attr, ms_name, layer)
            calls.append(site)
            site_of[id(call)] = site
            if attr is not None:
                by_attr.setdefault(attr, []).append(site)
            if ms_name is not None:
                by_ms.setdefault(ms_name, []).append(site)
                if layer is not None:
                    by_layer.setdefault(layer, []).append(site)
        calls.sort(key=lambda c: (c.node.lineno, c.node.col_offset))
        # jit detection needs aliases, which are complete only now
        for fn in self._jit_candidates or ():
            if any(self._is_jit_decorator(d) for d in fn.decorator_list):
                self.jit_functions.append(fn)

    def body_nodes(self, fn: ast.AST) -> list[ast.AST]:
        """The nodes inside a def's body, nested defs included (names and constants excluded).
        Falls back to a full walk for lambdas and nodes the index did not see."""
        nodes = self._bodies.get(id(fn))
        if nodes is None:
            return list(walk_body(fn))
        nested = self._nested.get(id(fn))
        if nested:
            nodes = list(nodes)
            for inner in nested:
                nodes.extend(self.body_nodes(inner))
        return nodes

    _jit_candidates: list = None  # type: ignore[assignment]

    def _maybe_jit(self, fn: ast.FunctionDef) -> None:
        if self._jit_candidates is None:
            self._jit_candidates = []
        self._jit_candidates.append(fn)

    def _is_jit_decorator(self, d: ast.AST) -> bool:
        target = d.func if isinstance(d, ast.Call) else d
        return self.resolve(target) in JIT_NAMES

    def _note_module(self, module: str, node: ast.AST) -> None:
        top = module.split(".", 1)[0]
        if top == "mindspore":
            self.imports_mindspore = True
        elif top == "torch" or top == "torchvision" or top == "torchaudio":
            self.imports_torch = True
            self.torch_imports.append(node)

    # ---- name resolution ---------------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> str | None:
        """`nn.Conv2d` -> "mindspore.nn.Conv2d" when `nn` was imported from mindspore; else None."""
        parts = []
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        base = self.aliases.get(node.id)
        if base is None:
            return None
        if parts:
            parts.reverse()
            return base + "." + ".".join(parts)
        return base

    @staticmethod
    def ms_nn(qualname: str | None) -> str | None:
        """The layer name of a `mindspore.nn.*` qualname ("Conv2d"), else None."""
        if qualname and qualname.startswith("mindspore.nn."):
            return qualname.rsplit(".", 1)[1]
        return None

    def is_ms_op(self, qualname: str | None) -> bool:
        """A MindSpore operator or layer: mindspore.ops.*, mindspore.mint.*, mindspore.nn.*, Tensor."""
        if not qualname:
            return False
        return qualname.startswith(("mindspore.ops.", "mindspore.mint.", "mindspore.nn.", "mindspore.numpy.")) or (
            qualname in ("mindspore.Tensor", "mindspore.common.Tensor", "mindspore.common.tensor.Tensor")
        )

    # ---- Cells -------------------------------------------------------------------------------------
    @cached_property
    def cell_classes(self) -> dict[str, ast.ClassDef]:
        """Classes of this file whose base resolves to mindspore.nn.Cell (or to a Cell class of this file)."""
        cells: dict[str, ast.ClassDef] = {}
        changed = True
        while changed:
            changed = False
            for name, cls in self.classes.items():
                if name in cells:
                    continue
                for base in cls.bases:
                    qn = self.resolve(base)
                    layer = self.ms_nn(qn)
                    local = base.id if isinstance(base, ast.Name) else None
                    if qn in CELL_BASES or (layer and layer[:1].isupper()) or (local and local in cells):
                        cells[name] = cls
                        changed = True
                        break
        return cells

    def is_cell_call(self, call: CallSite | ast.Call) -> bool:
        """Does this call construct a Cell (an nn layer or a Cell class of this file)?"""
        if not isinstance(call, CallSite):
            site = self.site_of.get(id(call))
            if site is None:
                qn = self.resolve(call.func)
                site = CallSite(call, qn, None, None, None, layer=self.ms_nn(qn))
            call = site
        layer = call.layer
        if layer and layer[:1].isupper():
            return True
        func = call.node.func
        return func.__class__ is ast.Name and func.id in self.cell_classes and func.id not in self.aliases

    @cached_property
    def assign_by_value(self) -> dict[int, ast.Assign]:
        """id(value expression) -> the `Assign` it is the value of."""
        return {id(a.value): a for a in self.assigns}

    def is_parameter_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and self.resolve(node.func) in PARAMETER_NAMES

    @cached_property
    def cell_methods(self) -> list[tuple[ast.ClassDef, ast.FunctionDef]]:
        cells = self.cell_classes
        return [(c, m) for c, m in self.methods if c.name in cells and cells[c.name] is c]

    @cached_property
    def graph_functions(self) -> list[ast.FunctionDef]:
        """Code compiled to a static graph: `construct` of every Cell class and @jit functions."""
        out = [m for _, m in self.cell_methods if m.name == "construct"]
        out.extend(self.jit_functions)
        return out

    @cached_property
    def graph_function_ids(self) -> set[int]:
        return {id(f) for f in self.graph_functions}

    def in_graph(self, call: CallSite) -> bool:
        return (call.method is not None and id(call.method) in self.graph_function_ids) or (
            call.func is not None and id(call.func) in self.graph_function_ids
        )

    @cached_property
    def ascend(self) -> bool:
        """Does this file target Ascend (set_context(device_target=...)/set_device(...)) or the config say so?"""
        if str(self.options.get("device-target", "")).lower() == "ascend":
            return True
        for c in (*self.by_ms.get("set_context", ()), *self.by_ms.get("set_device", ())):
            for arg in (*c.node.args, *(k.value for k in c.node.keywords)):
                if isinstance(arg, ast.Constant) and arg.value == "Ascend":
                    return True
        return False

    # ---- small helpers shared by rules ---------------------------------------------------------------
    @staticmethod
    def keyword(call: ast.Call, name: str) -> ast.keyword | None:
        for k in call.keywords:
            if k.arg == name:
                return k
        return None

    @staticmethod
    def has_star_kwargs(call: ast.Call) -> bool:
        return any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)

    def argument(self, call: ast.Call, name: str, position: int | None) -> ast.AST | None:
        """The expression given for parameter `name` (by keyword, or positionally at `position`)."""
        k = self.keyword(call, name)
        if k is not None:
            return k.value
        if position is not None and len(call.args) > position and not any(
            isinstance(a, ast.Starred) for a in call.args[: position + 1]
        ):
            return call.args[position]
        return None

    def passes(self, call: ast.Call, name: str, position: int | None) -> bool:
        """Is parameter `name` given at all (a `**kwargs` or `*args` counts as maybe: yes)?"""
        return self.has_star_kwargs(call) or self.argument(call, name, position) is not None


def literal_number(node: ast.AST | None) -> float | None:
    """The value of a numeric literal (`0.1`, `-3`), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal_number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def walk_body(fn: ast.AST):
    """Every node inside a function's body (not its decorators or defaults)."""
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    for stmt in body:
        yield from ast.walk(stmt)


def graph_nodes_of(ctx: FileContext) -> list[tuple[ast.AST, ast.AST]]:
    """(graph function, node) for every node inside `construct`/@jit bodies; cached on the context."""
    cached = ctx.__dict__.get("_graph_nodes")
    if cached is None:
        cached = [(fn, node) for fn in ctx.graph_functions for node in ctx.body_nodes(fn)]
        ctx.__dict__["_graph_nodes"] = cached
    return cached


def cell_instance_names(ctx: FileContext) -> dict[str, str]:
    """`net = Net(...)` anywhere in the file -> {"net": "Net"} for Cell classes of this file and nn layers."""
    cached = ctx.__dict__.get("_cell_names")
    if cached is None:
        cached = {}
        by_value = ctx.assign_by_value
        for c in ctx.calls:
            a = by_value.get(id(c.node))
            if a is None or not ctx.is_cell_call(c):
                continue
            f = c.node.func
            name = f.id if f.__class__ is ast.Name and f.id in ctx.cell_classes else c.layer or ""
            for t in a.targets:
                if t.__class__ is ast.Name:
                    cached[t.id] = name
        ctx.__dict__["_cell_names"] = cached
    return cached
