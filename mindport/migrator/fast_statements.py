"""The fast path's statement rewriter (see ``fast.py``): the rules' decisions on one top-level statement of the
``ast`` tree, as text edits. Each handler of :class:`StatementRewriter` is the twin of a rule hook in ``idioms.py``,
``calls.py`` or ``training.py`` and gives the same text; where it cannot, it raises :class:`Decline` and the statement
goes through the LibCST rules instead.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize

from mindport.mappings.transforms import TARGET, Unsupported
from mindport.migrator.ast_names import (
    AstScopes,
    child_nodes,
    dotted,
    field_names,
    receiver_kind,
    resolve,
    resolve_torch,
    statements,
)
from mindport.migrator.calls import (
    _VARARGS,
    SHARED_METHOD_NAMES,
    CallBindError,
    bind_arguments,
    map_arguments,
    ordered_arguments,
    resolve_ms_names,
)
from mindport.migrator.context import FileContext
from mindport.migrator.idioms import _CAST_METHODS, _CONTAINERS, _DEVICE_WORDS, _INIT_SIGNATURES, _INITS, _MS_GAINS, \
    RUNTIME_CONTAINERS, ModuleMethodTransform, _runtime_alias
from mindport.migrator.names import is_torch

# torch names that an idiom rule (not the table) converts: a statement using one is the rules' business.
_IDIOM_QUALS = ("torch.device", "torch.cuda.", "torch.backends.", "torch.nn.DataParallel",
                "torch.nn.parallel.", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
                "torch.set_grad_enabled", "torch.autograd", "torch.utils.data", "torch.nn.utils.clip_grad",
                "torch.autocast", "torch.amp.", "torch.cpu.amp", "torch.optim.")
# method names an idiom rule converts (see StatementRewriter._idiom_call); these the fast path leaves to the rules
_DECLINED_METHODS = frozenset({"load_state_dict", "requires_grad_", "backward", "zero_grad"})
_IDIOM_METHODS = frozenset({"numpy", "detach", "size", "cuda", "cpu", "to", "eval", "train", "parameters", "children",
                            "named_children", "modules", *ModuleMethodTransform.RENAMES, *_CAST_METHODS,
                            *_DECLINED_METHODS})
_TYPE_CHECKS = ("isinstance", "issubclass")
_BLANK = re.compile(r"(?:[ \t\f\n]|#[^\n]*)*")  # whitespace and comments
_GAP = re.compile(r"((?:[ \t\f\n]|#[^\n]*)*),((?:[ \t\f\n]|#[^\n]*)*)")  # ... , ... between two arguments
_EQUAL = re.compile(r"[ \t\f]*=[ \t\f]*")
_DOT = re.compile(r"\s*\.\s*")
_DEF = re.compile(r"(?:async\s+)?def\s+")
_UNPARENTHESIZED = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


class Decline(Exception):
    """The statement needs a LibCST rule, or a layout the splicer does not reproduce exactly."""


class Source:
    """The file's text with (line, column) -> offset (ast columns are UTF-8 byte offsets)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = [0] + [m.end() for m in re.finditer("\n", code)]
        self.ascii = code.isascii()
        if self.ascii:  # columns are character offsets: the common case, without a call per lookup
            starts = self.starts
            self.start = lambda node: starts[node.lineno - 1] + node.col_offset
            self.end = lambda node: starts[node.end_lineno - 1] + node.end_col_offset

    def offset(self, line: int, col: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + col
        end = self.starts[line] if line < len(self.starts) else len(self.code)
        return start + len(self.code[start:end].encode("utf-8")[:col].decode("utf-8"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        return self.starts[line] if line < len(self.starts) else len(self.code)


class SourceArg:
    """A call-site argument as text, with the attributes ``calls.bind_arguments`` reads from a libcst ``Arg``."""

    __slots__ = ("star", "star_ws", "keyword", "equal", "value", "code", "comma", "comma_newline", "after")

    def __init__(self, star, star_ws, keyword, equal, value, code) -> None:
        self.star = star  # "", "*" or "**"
        self.star_ws = star_ws
        self.keyword = keyword  # _Keyword or None
        self.equal = equal  # the "=" with its whitespace, for keyword arguments
        self.value = value  # the ast node
        self.code = code  # the value's converted text
        self.comma = None  # the comma with the whitespace around it, or None
        self.comma_newline = False  # a line break after the comma (libcst keeps such a trailing comma)
        self.after = ""  # whitespace after the last argument, before ")"


class _Keyword:
    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class _Piece:
    __slots__ = ("head", "value", "comma", "comma_newline", "after")

    def __init__(self, head, value, comma=None, comma_newline=False, after="") -> None:
        self.head, self.value, self.comma, self.comma_newline, self.after = head, value, comma, comma_newline, after


class StatementRewriter:
    """Text edits for one top-level statement, in the rules' order and with their decisions (see ``idioms.py``,
    ``calls.py``): each handler is the fast twin of a rule hook, and declines where the rule would do more."""

    def __init__(self, src: Source, ctx: FileContext, scopes: AstScopes, classes: set[str]) -> None:
        self.src = src
        self.code = src.code
        self.ctx = ctx
        self.registry = ctx.registry
        self.profile = ctx.options.target
        self.scopes = scopes.scopes
        self.classes = classes
        self._torch_names = scopes.torch_names  # names some scope binds to a torch import or alias
        self._alias_key = tuple(sorted(ctx.aliases.items()))
        self._scope = [scopes.module_scope]
        self._class_stack: list[bool] = []
        self._layer_attrs: list[dict[str, dict[str, str]]] = []
        self._call_funcs: set[int] = set()
        self._inner: set[int] = set()
        self._fstring = 0
        self._structural: set[int] = set()  # offsets of the "(" of calls and class bases
        self._type_refs: set[int] = set()  # classes in type checks, values of local aliases (ReferenceTransform)
        self._narrowing: list[tuple[str, dict[str, str]]] = []  # (name, {torch leaf: MindSpore leaf}) per isinstance
        self.edits: list[tuple[int, int, str]] = []
        self._handlers = {
            ast.Call: self._call, ast.Attribute: self._attribute, ast.Name: self._name,
            ast.FunctionDef: self._function, ast.AsyncFunctionDef: self._function, ast.ClassDef: self._class,
            ast.Lambda: self._lambda, ast.Import: self._import, ast.ImportFrom: self._import,
            ast.JoinedStr: self._fstring_node, ast.ExceptHandler: self._except, ast.Global: self._global,
            ast.Nonlocal: self._global, ast.Assign: self._assign, ast.If: self._if, ast.Expr: self._expr_statement,
            ast.Constant: _leaf,
        }

    # ---------------------------------------------------------------- text
    def statement(self, stmt: ast.stmt, start: int, end: int) -> str:
        self.edits = []
        self.runtime_modules = set()  # mindport.runtime modules the statement's code imports (finalize_runtime)
        self._call_funcs.clear()
        self._inner.clear()
        self._structural.clear()
        self._type_refs.clear()
        # a declined statement may have left entries on the stacks
        del self._scope[1:], self._class_stack[:], self._layer_attrs[:], self._narrowing[:]
        self._fstring = 0
        self._visit(stmt)
        return self.text(start, end)

    def text(self, start: int, end: int) -> str:
        inside = sorted(e for e in self.edits if start <= e[0] and e[1] <= end)
        if not inside:
            return self.code[start:end]
        out, pos = [], start
        for s, e, t in inside:
            out.append(self.code[pos:s])
            out.append(t)
            pos = e
        out.append(self.code[pos:end])
        return "".join(out)

    def node_text(self, node: ast.AST) -> str:
        return self.text(self.src.start(node), self.src.end(node))

    def replace(self, start: int, end: int, text: str) -> None:
        if self._fstring:
            raise Decline("an edit inside an f-string")
        self.edits = [e for e in self.edits if not (start <= e[0] and e[1] <= end)]
        self.edits.append((start, end, text))

    def _parenthesized(self, node: ast.AST) -> bool:
        """Is the node in parentheses of its own (libcst's ``lpar``), not a call's or a class's? Declines when a
        comment stands between the node and what is before or after it (the scan cannot see past one)."""
        code = self.code
        pos = self.src.start(node) - 1
        while pos >= 0 and code[pos] in " \t\n\f":
            pos -= 1
        if pos >= 0 and code[pos] != "(" and "\n" in code[pos:self.src.start(node)] \
                and "#" in code[code.rfind("\n", 0, pos) + 1:pos + 1]:
            raise Decline("a comment before the node")
        if pos < 0 or code[pos] != "(" or pos in self._structural:
            return False
        end = self.src.end(node)
        while end < len(code) and code[end] in " \t\n\f":
            end += 1
        if end < len(code) and code[end] == "#":
            raise Decline("a comment after the node")
        return end < len(code) and code[end] == ")"

    def _open_paren(self, after: int) -> int:
        pos = after
        while self.code[pos] in " \t\n\f":
            pos += 1
        return pos

    # ---------------------------------------------------------------- traversal
    @property
    def scope(self):
        return self._scope[-1]

    def _visit(self, node: ast.AST) -> None:
        cls = type(node)
        handler = self._handlers.get(cls)
        if handler is not None:
            handler(node)
            return
        visit = self._visit
        for name in field_names(cls):  # child_nodes, inlined: this runs for every node
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)

    def _fstring_node(self, node: ast.JoinedStr) -> None:
        self._fstring += 1
        for child in child_nodes(node):
            self._visit(child)
        self._fstring -= 1

    def _import(self, node) -> None:
        module = node.names[0].name if type(node) is ast.Import else ("" if node.level else node.module or "")
        if is_torch(module):
            raise Decline("a torch import inside a block")  # imports.ImportCleanup's business

    def _except(self, node: ast.ExceptHandler) -> None:
        if node.name and is_torch(self.scope.resolve_dotted(node.name)):
            raise Decline("a torch name rebound by except")
        for child in child_nodes(node):
            self._visit(child)

    def _global(self, node) -> None:
        if any(is_torch(self.scope.resolve_dotted(n)) for n in node.names):
            raise Decline("a torch name in global/nonlocal")

    def _assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and resolve_torch(self.scope, node.value) is not None:
            # idioms.ReferenceTransform: `act = F.relu` -> `act = ops.relu`; the alias name is not a reference
            self._type_refs.add(id(node.value))
            self._inner.add(id(node.targets[0]))
        for child in child_nodes(node):
            self._visit(child)

    def _if(self, node: ast.If) -> None:
        """idioms.ReferenceTransform.visit_If: in the (indented) body of ``if isinstance(m, nn.BatchNorm2d):``,
        ``m.weight`` has its MindSpore name (``m.gamma``)."""
        test = node.test
        if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" \
                and len(test.args) + len(test.keywords) == 2 and len(test.args) >= 1 \
                and type(test.args[0]) is ast.Name:
            second = test.args[1] if len(test.args) == 2 else test.keywords[0].value
            items = [e.value if type(e) is ast.Starred else e for e in second.elts] \
                if type(second) is ast.Tuple else [second]
            maps = []
            for item in items:
                qual = resolve_torch(self.scope, item)
                entry = self.registry.lookup(qual) if qual else None
                if entry is None or not entry.weights:
                    maps = []
                    break
                maps.append({k: v for k, v in entry.weights.items() if v and v != k})
            common = {k: v for k, v in maps[0].items() if all(m.get(k) == v for m in maps[1:])} if maps else {}
            if common and node.body[0].lineno > test.end_lineno:  # an indented block (a one-line suite is not)
                self._visit(test)
                self._narrowing.append((test.args[0].id, common))
                for child in node.body:
                    self._visit(child)
                self._narrowing.pop()
                for child in node.orelse:
                    self._visit(child)
                return
        for child in child_nodes(node):
            self._visit(child)

    def _expr_statement(self, node: ast.Expr) -> None:
        """idioms.BufferTransform: ``self.register_buffer("name", t)`` ->
        ``self.name = ms.Parameter(t, name="name", requires_grad=False)``."""
        for child in child_nodes(node):
            self._visit(child)
        call = node.value
        if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr != "register_buffer":
            return
        args = {}
        for i, arg in enumerate(sorted((*call.args, *call.keywords), key=lambda a: (a.lineno, a.col_offset))):
            if type(arg) is ast.keyword:
                if arg.arg is None:
                    raise Decline("**kwargs in register_buffer")
                args[arg.arg] = arg.value
            elif type(arg) is ast.Starred:
                raise Decline("*args in register_buffer")
            else:
                args[i] = arg
        name = args.get(0, args.get("name"))
        tensor = args.get(1, args.get("tensor"))
        persistent = args.get(2, args.get("persistent"))
        if type(name) is not ast.Constant or not isinstance(name.value, str) or tensor is None:
            raise Decline("register_buffer with a computed name")
        name_text = self.node_text(name)
        if not _simple_string(name_text):
            raise Decline("register_buffer with a concatenated name")
        if persistent is not None and not (type(persistent) is ast.Constant and persistent.value is True):
            return  # non-persistent: MindSpore's Cell.register_buffer has the same meaning
        src, code = self.src, self.code
        start, end = src.start(node), src.end(node)
        line_start = code.rfind("\n", 0, start) + 1
        line_end = code.find("\n", end)
        if code[line_start:start].strip() or not _BLANK.fullmatch(code[end:len(code) if line_end < 0 else line_end]) \
                or self._parenthesized(call) or self._parenthesized(tensor) or self._parenthesized(name):
            raise Decline("register_buffer in an unusual layout")
        owner = self._receiver_text(call.func)
        ms = self.ctx.alias_for("mindspore")
        self.ctx.converted_sites += 1
        self.replace(start, end, f"{owner}.{name.value} = {ms}.Parameter({self.node_text(tensor)}, "
                                 f"name={name_text}, requires_grad=False)")

    def _receiver_text(self, func: ast.Attribute) -> str:
        """The text of ``x`` in ``x.method``; declines a parenthesized ``x`` (libcst keeps its parentheses)."""
        dot = self.code[self.src.end(func.value):self.src.end(func) - len(func.attr)]
        if not _DOT.fullmatch(dot):
            raise Decline("a parenthesized receiver")
        return self.node_text(func.value)

    def _function(self, node) -> None:
        if self._class_stack and self._class_stack[-1] and node.name == "forward":
            start = _DEF.match(self.code, self.src.start(node)).end()
            self.replace(start, start + len("forward"), "construct")
        self._scope.append(self.scopes.get(id(node), self.scope))
        for child in (*node.decorator_list, node.args, *((node.returns,) if node.returns else ()), *node.body):
            self._visit(child)
        self._scope.pop()

    def _class(self, node: ast.ClassDef) -> None:
        self._class_stack.append(node.name in self.classes)
        self._scope.append(self.scopes.get(id(node), self.scope))
        self._layer_attrs.append(self._layer_attributes(node))
        if node.bases or node.keywords:
            name = self.code.index(node.name, self.src.start(node) + len("class"))
            self._structural.add(self._open_paren(name + len(node.name)))
        for child in (*node.decorator_list, *node.bases, *node.keywords, *node.body):
            self._visit(child)
        self._layer_attrs.pop()
        self._scope.pop()
        self._class_stack.pop()

    def _lambda(self, node: ast.Lambda) -> None:
        self._scope.append(self.scopes.get(id(node), self.scope))
        for child in child_nodes(node):
            self._visit(child)
        self._scope.pop()

    def _layer_attributes(self, node: ast.ClassDef) -> dict[str, dict[str, str]]:
        """idioms.LayerParameterNameTransform._layer_attributes on ast (resolved in the class scope)."""
        renames: dict[str, dict[str, str]] = {}
        for assign in _assignments(node.body):
            if len(assign.targets) != 1 or type(assign.value) is not ast.Call:
                continue
            target = assign.targets[0]
            if not (type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self"):
                continue
            qual = resolve_torch(self.scope, assign.value.func)
            entry = self.registry.lookup(qual) if qual else None
            if entry is not None and entry.kind == "layer":
                leaves = {k: v for k, v in entry.weights.items() if v and v != k and "." not in v}
                if leaves:
                    renames[target.attr] = leaves
        return renames

    # ---------------------------------------------------------------- references
    def _name(self, node: ast.Name) -> None:
        if node.id not in self._torch_names:
            return  # bound to no torch import anywhere in the file: never a torch reference
        if id(node) in self._type_refs and self._type_ref(node):
            return
        if id(node) not in self._inner and id(node) not in self._call_funcs:
            self._reference(node)

    def _type_ref(self, node) -> bool:
        """idioms.ReferenceTransform._rewrite: a class in a type check, or the value of a local alias."""
        qual = resolve_torch(self.scope, node)
        entry = self.registry.lookup(qual) if qual else None
        target = entry.resolve(self.profile)[0] if entry is not None else None
        if target is None or not entry.supported or target.startswith("."):
            return False
        self.ctx.converted_sites += 1  # parentheses around the node stay (base._keep_parentheses)
        self.replace(self.src.start(node), self.src.end(node), self.ctx.target_text(target))
        return True

    def _attribute(self, node: ast.Attribute) -> None:
        self._inner.add(id(node.value))
        self._visit(node.value)
        # idioms.ModuleClassTransform: self.forward / super().forward inside a module class
        if node.attr == "forward" and self._class_stack and self._class_stack[-1]:
            value = node.value
            if (type(value) is ast.Name and value.id == "self") or (
                    type(value) is ast.Call and dotted(value.func) == "super"):
                end = self.src.end(node)
                self.replace(end - len("forward"), end, "construct")
                return
        # idioms.LayerParameterNameTransform: self.emb.weight -> self.emb.embedding_table
        if self._layer_attrs and self._layer_attrs[-1]:
            owner = node.value
            if type(owner) is ast.Attribute and type(owner.value) is ast.Name and owner.value.id == "self":
                leaf = self._layer_attrs[-1].get(owner.attr, {}).get(node.attr)
                if leaf:
                    end = self.src.end(node)
                    self.ctx.converted_sites += 1
                    self.replace(end - len(node.attr), end, leaf)
                    return
        # idioms.ReferenceTransform: inside `if isinstance(m, nn.BatchNorm2d):`, m.weight is m.gamma
        if self._narrowing and type(node.value) is ast.Name:
            for name, leaves in reversed(self._narrowing):
                if name == node.value.id:
                    leaf = leaves.get(node.attr)
                    if leaf:
                        end = self.src.end(node)
                        self.ctx.converted_sites += 1
                        self.replace(end - len(node.attr), end, leaf)
                        return
                    break
        if id(node) in self._type_refs and self._type_ref(node):
            return
        # idioms.TensorIdiomTransform: z.real / z.imag on evident tensors
        if node.attr in ("real", "imag") and id(node) not in self._call_funcs \
                and receiver_kind(node.value, self.scope) == "tensor":
            raise Decline("a tensor property that is a method in MindSpore")
        if id(node) not in self._inner and id(node) not in self._call_funcs:
            self._reference(node)

    def _reference(self, node) -> None:
        """calls.TableCallTransform._reference."""
        if _head(node) not in self._torch_names:
            return
        qual = resolve_torch(self.scope, node)
        if qual is None:
            return
        if qual.startswith(_IDIOM_QUALS):
            raise Decline(qual)
        entry = self.registry.lookup(qual)
        target = entry.resolve(self.profile)[0] if entry is not None else None
        if entry is None or target is None or not entry.supported or target.startswith("."):
            raise Decline("MP104")
        if entry.kind != "attribute" and (entry.rename or entry.emit or entry.transforms or entry.values
                                          or entry.drop or entry.unsupported):
            raise Decline("MP104")
        self.ctx.converted_sites += 1  # parentheses around the node stay (base._keep_parentheses)
        self.replace(self.src.start(node), self.src.end(node), self.ctx.target_text(target))

    # ---------------------------------------------------------------- calls
    def _call(self, node: ast.Call) -> None:
        func = node.func
        scope = self.scope
        self._call_funcs.add(id(func))
        if type(func) is ast.Name and func.id in _TYPE_CHECKS and len(node.args) + len(node.keywords) == 2 \
                and not scope.lookup(func.id)[0]:
            # idioms.ReferenceTransform: the classes in isinstance(m, (nn.Conv2d, nn.Linear)) are bare references
            if node.keywords:
                raise Decline("a type check with keywords")
            second = node.args[1]
            for item in (second.elts if type(second) is ast.Tuple else [second]):
                self._type_refs.add(id(item.value if type(item) is ast.Starred else item))
        self._visit(func)
        self._structural.add(self._open_paren(self.src.end(func)))
        for arg in node.args:
            self._visit(arg)
        for keyword in node.keywords:
            self._visit(keyword.value)
        qual = resolve_torch(scope, func) if _head(func) in self._torch_names else None
        if qual is not None and qual.startswith(_IDIOM_QUALS):
            raise Decline(qual)
        if qual in _CONTAINERS:  # idioms.ContainerTransform: the runtime's ParameterList/ParameterDict
            self.ctx.converted_sites += 1
            self.runtime_modules.add(RUNTIME_CONTAINERS)
            self.replace(self.src.start(func), self.src.end(func),
                         f"{_runtime_alias(RUNTIME_CONTAINERS)}.{_CONTAINERS[qual]}")
            return
        if qual is not None and qual.startswith("torch.nn.init.") and qual.rsplit(".", 1)[1] in _INITS:
            self._init_call(node, qual.rsplit(".", 1)[1])
            return
        if type(func) is ast.Attribute and func.attr in _IDIOM_METHODS and resolve(scope, func.value) is None \
                and self._idiom_call(node, func):
            return
        if qual is None:
            self._method_call(node)
            return
        entry = self.registry.lookup(qual)
        if entry is None:
            raise Decline("MP103")
        target, profile = entry.resolve(self.profile)
        if not entry.supported or target is None:
            raise Decline("MP101")
        if entry.kind == "attribute":
            self.ctx.converted_sites += 1
            self.replace(self.src.start(func), self.src.end(func), self._func_text(func, target))
            return
        receiver, args_text = self._mapped(entry, self._arguments(node), profile, target.startswith("."))
        self.ctx.converted_sites += 1
        if receiver is not None:
            self._emit(node, receiver + "." + target[1:], args_text)
            return
        self._emit(node, self._func_text(func, target), args_text)

    def _idiom_call(self, node: ast.Call, func: ast.Attribute) -> bool:
        """The method idioms of TensorIdiomTransform, DeviceTransform and ModuleMethodTransform, in that order.
        True when one rewrote the call; False when none applies (the table's turn)."""
        name = func.attr
        args = node.args
        keywords = node.keywords
        if name in _DECLINED_METHODS:
            raise Decline(name)
        no_args = not args and not keywords
        # TensorIdiomTransform
        if name == "numpy" and no_args:
            inner = func.value
            if type(inner) is ast.Call and type(inner.func) is ast.Attribute and inner.func.attr in ("detach", "cpu") \
                    and not inner.args and not inner.keywords and resolve(self.scope, inner.func.value) is not None:
                raise Decline("a .detach()/.cpu() chain")  # not rewritten itself, so .numpy() would unwrap it
            # (x.cpu() and x.detach() were rewritten already: x and ops.stop_gradient(x), as the rules leave them)
            return self._whole(node, self._receiver_text(func) + ".asnumpy()")
        if name == "detach" and no_args:
            ops = self.ctx.target_text("mindspore.ops.stop_gradient")
            return self._whole(node, f"{ops}({self._receiver_text(func)})")
        if name == "size" and len(args) + len(keywords) <= 1 and all(k.arg == "dim" for k in keywords):
            receiver = self._receiver_text(func)
            if no_args:
                return self._whole(node, receiver + ".shape")
            index = args[0] if args else keywords[0].value
            if type(index) is ast.Starred or self._parenthesized(index):
                raise Decline("an unusual size() argument")
            return self._whole(node, f"{receiver}.shape[{self.node_text(index)}]")
        # DeviceTransform
        if name in ("cuda", "cpu") and all(k.arg in ("device", "non_blocking", "memory_format") for k in keywords):
            return self._whole(node, self._receiver_text(func))
        if name == "to":
            return self._to(node, func)
        if name in _CAST_METHODS and no_args:
            ms = self.ctx.alias_for("mindspore")
            return self._whole(node, f"{self._receiver_text(func)}.astype({ms}.{_CAST_METHODS[name]})")
        # ModuleMethodTransform
        if name == "eval" and no_args:
            return self._module_method(node, func, "set_train", "False")
        if name == "train" and len(args) + len(keywords) <= 1 and all(k.arg == "mode" for k in keywords):
            value = args[0] if args else keywords[0].value if keywords else None
            if value is not None and (type(value) is ast.Starred or self._parenthesized(value)):
                raise Decline("an unusual train() argument")
            return self._module_method(node, func, "set_train", "True" if value is None else self.node_text(value))
        if name == "parameters" and no_args:
            return self._rename_method(node, func, "trainable_params")
        if name == "children" and no_args:
            return self._rename_method(node, func, "cells")
        if name == "named_children" and no_args:
            if self._parenthesized(node):
                raise Decline("a parenthesized call")
            self._rename_method(node, func, "name_cells")
            return self._whole(node, self.node_text(node) + ".items()", count=False)
        if name == "modules" and no_args:
            if self._parenthesized(node):
                raise Decline("a parenthesized call")
            self._rename_method(node, func, "cells_and_names")
            return self._whole(node, f"(_cell for _, _cell in {self.node_text(node)})", count=False)
        renamed = ModuleMethodTransform.RENAMES.get(name)
        if renamed is not None and (name != "state_dict" or no_args):
            return self._rename_method(node, func, renamed)
        return False  # no idiom's conditions held: as in the rules, the table's turn

    def _init_call(self, node: ast.Call, name: str) -> None:
        """idioms.InitTransform: ``nn.init.kaiming_normal_(m.weight, mode="fan_out")`` ->
        ``m.weight.set_data(initializer(HeNormal(...), m.weight.shape, m.weight.dtype))``."""
        items = sorted((*node.args, *node.keywords), key=lambda a: (a.lineno, a.col_offset))
        if not items or any(type(a) is ast.Starred or (type(a) is ast.keyword and a.arg is None) for a in items) \
                or (type(items[0]) is ast.keyword and items[0].arg != "tensor"):
            raise Decline("an unusual nn.init call")
        values = [a.value if type(a) is ast.keyword else a for a in items]
        if any(self._parenthesized(v) for v in values):
            raise Decline("a parenthesized nn.init argument")
        tensor = self.node_text(values[0])
        given: dict[str, ast.AST] = {}
        names = _INIT_SIGNATURES.get(name, ())
        for i, arg in enumerate(items[1:]):
            if type(arg) is not ast.keyword:
                if i >= len(names):
                    raise Decline("an unusual nn.init call")
                given[names[i]] = arg
            elif arg.arg != "generator":
                given[arg.arg] = arg.value
        cls, spec = _INITS[name]
        init_args: list[str] = []
        if name == "uniform_":
            low, high = given.get("a"), given.get("b")
            low_s = self.node_text(low).replace(" ", "") if low is not None else "0.0"
            high_s = self.node_text(high).replace(" ", "") if high is not None else "1.0"
            if low_s.lstrip("-") != high_s or not low_s.startswith("-"):
                raise Decline("asymmetric uniform_")  # the table's mindport.runtime.init.uniform_
            init_args.append(f"scale={high_s}")
        else:
            if set(given) - {t for t, _, _ in spec}:
                raise Decline("an unusual nn.init call")
            gain = given.get("nonlinearity")
            if gain is not None and not (type(gain) is ast.Constant and isinstance(gain.value, str)
                                         and gain.value in _MS_GAINS and _simple_string(self.node_text(gain))):
                raise Decline("a gain MindSpore lacks")
            for torch_arg, ms_arg, default in spec:
                value = given.get(torch_arg)
                if value is None and default is None:
                    raise Decline("a required nn.init argument is missing")
                init_args.append(f"{ms_arg}={default if value is None else self.node_text(value)}")
        ms = self.ctx.alias_for("mindspore")
        init = f"{ms}.common.initializer.{cls}({', '.join(init_args)})"
        self._whole(node, f"{tensor}.set_data({ms}.common.initializer.initializer({init}, {tensor}.shape, "
                          f"{tensor}.dtype))")

    def _whole(self, node: ast.Call, text: str, count: bool = True) -> bool:
        """The call becomes ``text`` (parentheses around it stay, as base._keep_parentheses keeps them)."""
        self.ctx.converted_sites += count
        self.replace(self.src.start(node), self.src.end(node), text)
        return True

    def _rename_method(self, node: ast.Call, func: ast.Attribute, name: str) -> bool:
        """ModuleMethodTransform's renames (it counts no converted site)."""
        end = self.src.end(func)
        self.replace(end - len(func.attr), end, name)
        return True

    def _module_method(self, node: ast.Call, func: ast.Attribute, name: str, argument: str) -> bool:
        """``m.eval()`` -> ``m.set_train(False)``: the method renamed, the arguments replaced by one."""
        receiver = self._receiver_text(func)
        dot = self.code[self.src.end(func.value):self.src.end(func) - len(func.attr)]
        self._emit(node, receiver + dot + name, argument)
        return True

    def _to(self, node: ast.Call, func: ast.Attribute) -> bool:
        """idioms.DeviceTransform._to: x.to(dtype) -> x.astype(dtype); device moves disappear."""
        dtype = None
        for item in sorted((*node.args, *node.keywords), key=lambda a: (a.lineno, a.col_offset)):
            if type(item) is ast.Starred or (type(item) is ast.keyword and item.arg is None):
                raise Decline("*args in .to()")
            if type(item) is ast.keyword:
                if item.arg == "dtype":
                    dtype = item.value
                elif item.arg not in ("device", "non_blocking", "copy"):
                    raise Decline(".to() with other arguments")
            elif self._is_dtype(item):
                dtype = item
            elif not _is_device(item):
                raise Decline("MP102")  # dtype, device or tensor: known only at run time
        receiver = self._receiver_text(func)
        if dtype is None:
            return self._whole(node, receiver)
        if self._parenthesized(dtype):
            raise Decline("a parenthesized dtype")
        return self._whole(node, f"{receiver}.astype({self.node_text(dtype)})")

    def _is_dtype(self, expr: ast.AST) -> bool:
        qual = resolve_torch(self.scope, expr)
        if qual is not None:
            entry = self.registry.lookup(qual)
            return entry is not None and entry.kind == "attribute" and qual != "torch.Tensor"
        return type(expr) is ast.Attribute and expr.attr == "dtype"

    def _method_call(self, node: ast.Call) -> None:
        """calls.TableCallTransform._method_call."""
        func = node.func
        if type(func) is not ast.Attribute or resolve(self.scope, func) is not None:
            return
        entry = self.registry.lookup(f"torch.Tensor.{func.attr}")
        if entry is None or entry.kind != "method":
            return
        target, profile = entry.resolve(self.profile)
        if target is None or not entry.supported:
            if self._plausible(func, strict=True):
                raise Decline("MP101")
            return
        if target == f".{func.attr}" and not (entry.rename or entry.emit or entry.transforms or entry.values
                                              or entry.drop or entry.unsupported):
            return
        if not self._plausible(func, strict=func.attr in SHARED_METHOD_NAMES):
            return
        if func.attr.endswith("_") and type(func.value) is ast.Subscript and not (
                type(func.value.slice) is ast.Constant and isinstance(func.value.slice.value, str)):
            raise Decline("MP102")  # an in-place update of a tensor view (a string key is a mapping's item)
        dot = self.code[self.src.end(func.value):self.src.end(func) - len(func.attr)]
        if not _DOT.fullmatch(dot):
            raise Decline("a parenthesized receiver")
        _, args_text = self._mapped(entry, self._arguments(node), profile, False)
        self.ctx.converted_sites += 1
        receiver = func.value
        if func.attr.endswith("_") and type(receiver) is ast.Attribute and receiver.attr == "data":
            receiver = receiver.value  # p.data.zero_(): MindSpore's Parameter.data is a copy, update p itself
        receiver_text = self.node_text(receiver)
        if target.startswith("."):
            self._emit(node, receiver_text + dot + target[1:], args_text)
            return
        # the receiver becomes the first argument (calls._fix_commas gives it ", " when arguments follow)
        self._emit(node, self.ctx.target_text(target), receiver_text + (", " if args_text else "") + args_text)

    def _plausible(self, func: ast.Attribute, strict: bool) -> bool:
        kind = receiver_kind(func.value, self.scope)
        if kind in ("python", "foreign", "object"):
            return False
        return kind == "tensor" or not strict

    def _func_text(self, func: ast.AST, target: str) -> str:
        if type(func) is ast.Name and self.scope.is_alias_name(func.id):
            return self.node_text(func)  # `act = F.relu; act(x)`: the alias assignment itself is rewritten
        return self.ctx.target_text(target)

    def _mapped(self, entry, args: list[SourceArg], profile: str, pop_receiver: bool) -> tuple[str | None, str]:
        """The table's work on one call: (the receiver, for a ``.method`` target; the MindSpore arguments as text).

        Remembered per process: the result is a function of the entry, the arguments' text and the file's import
        aliases alone, and model code repeats its calls (``nn.BatchNorm2d(planes)``, ``nn.ReLU()``)."""
        key = (id(entry), profile, pop_receiver, self._alias_key,
               tuple((a.star, a.star_ws, a.keyword.value if a.keyword else None, a.equal, a.code, a.comma,
                      a.comma_newline, a.after) for a in args))
        hit = _MAPPED.get(key)
        if hit is None:
            if len(_MAPPED) > 200_000:
                _MAPPED.clear()  # bounded memory on huge trees
            ctx = self.ctx
            needed, ctx.imports_needed = ctx.imports_needed, set()  # record the imports the mapping asks for
            try:
                mapped = self._map(entry, args, profile)
            except Decline:
                hit = _MAPPED[key] = None, None, None
            else:
                receiver = None
                if pop_receiver:
                    receiver = mapped.pop(entry.positional[0] if entry.positional else next(iter(mapped))).source
                    if not isinstance(_expression(receiver), _UNPARENTHESIZED):
                        receiver = f"({receiver})"
                hit = _MAPPED[key] = frozenset(ctx.imports_needed), receiver, \
                    self._args_text(ordered_arguments(entry, mapped, profile))
            finally:
                ctx.imports_needed = needed | ctx.imports_needed
        modules, receiver, text = hit
        if modules is None:
            raise Decline("MP102")
        self.ctx.imports_needed |= modules
        return receiver, text

    def _map(self, entry, args, profile):
        try:
            mapped = map_arguments(entry, bind_arguments(entry, args), profile)
            resolve_ms_names(self.ctx, mapped)
        except (CallBindError, Unsupported) as exc:
            raise Decline("MP102") from exc
        if TARGET in mapped:
            raise Decline("a target chosen by an argument (switch)")
        return mapped

    def _arguments(self, node: ast.Call) -> list[SourceArg]:
        """The call's arguments with the text around them split as libcst does: each comma keeps the whitespace on
        both sides; the last argument keeps the whitespace before ")". Declines parenthesized values and anything
        but whitespace, comments and one comma between arguments."""
        src, code = self.src, self.code
        func_end = src.end(node.func)
        open_paren = func_end
        while code[open_paren] in " \t\n\f":
            open_paren += 1
        close = src.end(node) - 1
        if code[open_paren] != "(" or code[close] != ")":
            raise Decline("a parenthesized function")
        items = sorted((*node.args, *node.keywords), key=lambda a: (a.lineno, a.col_offset))
        args: list[SourceArg] = []
        bounds = []
        for item in items:
            kind = type(item)
            start = src.start(item)
            if kind is ast.keyword:
                value = item.value
                vstart = src.start(value)
                if item.arg is None:
                    star_ws = code[start + 2:vstart]
                    if not _BLANK.fullmatch(star_ws):
                        raise Decline("a parenthesized argument")
                    arg = SourceArg("**", star_ws, None, "", value, self.node_text(value))
                else:
                    equal = code[start + len(item.arg):vstart]
                    if not _EQUAL.fullmatch(equal):
                        raise Decline("a parenthesized argument")
                    arg = SourceArg("", "", _Keyword(item.arg), equal, value, self.node_text(value))
            elif kind is ast.Starred:
                value = item.value
                vstart = src.start(value)
                star_ws = code[start + 1:vstart]
                if not _BLANK.fullmatch(star_ws):
                    raise Decline("a parenthesized argument")
                arg = SourceArg("*", star_ws, None, "", value, self.node_text(value))
            else:
                value = item
                arg = SourceArg("", "", None, "", value, self.node_text(value))
            args.append(arg)
            bounds.append((start, src.end(value)))
        if not args:
            return args
        if bounds[0][0] <= open_paren or bounds[-1][1] > close:
            raise Decline("a generator argument sharing the call's parentheses")
        if not _BLANK.fullmatch(code, open_paren + 1, bounds[0][0]):
            raise Decline("a parenthesized argument")
        for i, arg in enumerate(args):
            end = bounds[i][1]
            nxt = bounds[i + 1][0] if i + 1 < len(args) else close
            gap = code[end:nxt]
            match = _GAP.fullmatch(gap)
            if match is not None:
                arg.comma = gap
                arg.comma_newline = "\n" in match.group(2)
            elif i + 1 == len(args) and _BLANK.fullmatch(gap):
                arg.after = gap
            else:
                raise Decline("a parenthesized argument")
        return args

    def _args_text(self, ordered) -> str:
        """calls.build_call_args (+ _with_value, _fix_commas) on text."""
        pieces: list[_Piece] = []
        for keyword, arg in ordered:
            if arg.source == _VARARGS:
                for base in arg.node:
                    head = base.star + base.star_ws + (base.keyword.value + base.equal if base.keyword else "")
                    pieces.append(_Piece(head, base.code, base.comma, base.comma_newline, base.after))
                continue
            base = arg.cst_arg
            if base is None:
                pieces.append(_Piece("" if keyword is None else keyword + "=", arg.source))
                continue
            if keyword is None:
                head = base.star + base.star_ws
            else:
                head = keyword + ("=" if base.keyword is None else base.equal)
            pieces.append(_Piece(head, arg.source, base.comma, base.comma_newline, base.after))
        last = len(pieces) - 1
        out = []
        for i, piece in enumerate(pieces):
            comma = piece.comma
            if i != last and comma is None:
                comma = ", "
            elif i == last and comma is not None and not piece.comma_newline:
                comma = None
            out.append(piece.head + piece.value + (comma or "") + piece.after)
        return "".join(out)

    def _emit(self, node: ast.Call, func_text: str, args_text: str) -> None:
        """The call with its new function and arguments (the text around them, up to the first, kept)."""
        src, code = self.src, self.code
        func_end = src.end(node.func)
        close = src.end(node) - 1
        if node.args or node.keywords:
            first_start = min(src.start(a) for a in (*node.args, *node.keywords))
            prefix = code[func_end:first_start]
        else:
            prefix = code[func_end:close]
        self.replace(src.start(node), close + 1, func_text + prefix + args_text + ")")


def _leaf(node: ast.AST) -> None:
    return None


def _head(expr: ast.AST) -> str | None:
    """``a`` of ``a.b.c``; None when the chain does not start with a name."""
    while type(expr) is ast.Attribute:
        expr = expr.value
    return expr.id if type(expr) is ast.Name else None


def _is_device(expr: ast.AST) -> bool:
    """idioms._is_device on ast."""
    kind = type(expr)
    if kind is ast.Constant:
        value = expr.value
        if isinstance(value, (str, bytes)) or (isinstance(value, int) and not isinstance(value, bool)):
            return True
        name = repr(value) if value is True or value is False or value is None else ""
        return any(word in name.lower() for word in _DEVICE_WORDS)
    if kind is ast.JoinedStr:
        return True
    if kind is ast.Call:
        return _is_device(expr.func)
    if kind is ast.IfExp:
        return _is_device(expr.body) and _is_device(expr.orelse)
    name = expr.attr if kind is ast.Attribute else expr.id if kind is ast.Name else ""
    return any(word in name.lower() for word in _DEVICE_WORDS)


def _assignments(body):
    """idioms._assignments on ast: every Assign statement in a block, nested blocks included."""
    return (stmt for stmt in statements(body) if type(stmt) is ast.Assign)


_EXPRESSIONS: dict[str, ast.AST] = {}
_MAPPED: dict[tuple, tuple] = {}  # StatementRewriter._mapped


def _expression(text: str) -> ast.AST:
    node = _EXPRESSIONS.get(text)
    if node is None:
        node = ast.parse(text, mode="eval").body
        if type(node) is ast.Constant and (node.value is True or node.value is False or node.value is None):
            node = ast.Name(id=repr(node.value))  # True/False/None are Names in libcst
        _EXPRESSIONS[text] = node
    return node


def _simple_string(text: str) -> bool:
    """One string token (a libcst SimpleString), not an implicit concatenation."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return sum(1 for t in tokens if t.type == tokenize.STRING) == 1 and not any(
        t.type == tokenize.FSTRING_START for t in tokens if hasattr(tokenize, "FSTRING_START"))
