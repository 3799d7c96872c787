"""Facts about the whole project, read with ``ast`` before its files are converted (nothing is imported): every
class's bases and the nn.Module subclasses they make across files, the project's own top-level packages, the
torch names each file receives through a star import of a project module, and the names it binds to a list."""
from __future__ import annotations

import ast
from pathlib import Path


def class_bases(data: bytes | str | ast.Module) -> dict[str, list[str]]:
    """Class name -> the last component of each base, for every class of one file, nested ones too (``ast``: cheap,
    nothing imported; a tree already parsed is not parsed again)."""
    try:
        tree = data if isinstance(data, ast.Module) else ast.parse(data)
        return {node.name: [_last_component(b) for b in node.bases] for node in _statements(tree.body)
                if type(node) is ast.ClassDef}
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deeper than Python's parser allows: none
        return {}


def _statements(body):
    """Every statement in a block, nested blocks included, in source order (no expression is walked)."""
    for stmt in body:
        yield stmt
        for part in ("body", "orelse", "finalbody"):
            child = getattr(stmt, part, None)
            if isinstance(child, list):
                yield from _statements(child)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body)


def _last_component(base: ast.expr) -> str:
    if type(base) is ast.Name:
        return base.id
    if type(base) is ast.Attribute:
        return base.attr
    return ast.unparse(base).rsplit(".", 1)[-1]


def local_packages(src: Path, files) -> frozenset[str]:
    """The top-level packages and modules of a tree (``timm`` when converting timm itself): imports of them are the
    project's own code, even when a torch-based package of that name exists."""
    if not src.is_dir():
        return frozenset()
    names = set()
    for path in files:
        if path.suffix == ".py":
            parts = path.relative_to(src).parts
            names.add(parts[0] if len(parts) > 1 else path.stem)
    return frozenset(names)


def star_bindings(src: Path, python: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The imported names each file receives through ``from <project module> import *`` (failure class 5: ``from
    .layers import *`` brings the torch ``nn``, ``F`` and ``torch`` that ``layers.py`` imports, and its ``math``, whose
    ``math.sqrt`` is then not a tensor method): {file: ((name, qualified name), ...)}, for the files that receive
    torch names. Python's rule: the star gives the module's ``__all__``, or its names without a leading underscore,
    its own star imports included; ``globals().update(vars(m))`` of a module loaded with
    ``importlib.import_module("<project module>")`` gives all its names. Read with ``ast`` from the files that contain
    ``import *`` and the modules they name (nothing is imported); imports bind names as ``mindport.names`` says."""
    from mindport.names import Scope, bind_from, bind_module, is_torch

    modules: dict[str, str] = {}
    for rel in python:
        parts = rel[:-3].split("/")
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = rel
    cache: dict[str, dict[str, str | None]] = {}
    parsed: dict[str, tuple[list, bool]] = {}

    def statements(rel: str):
        if rel not in parsed:
            try:
                tree = ast.parse((src / rel).read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                tree = ast.Module(body=[], type_ignores=[])
            body = []
            for stmt in tree.body:  # module level, also inside a top-level if/try (optional imports)
                body.append(stmt)
                for part in ("body", "orelse", "finalbody"):
                    if isinstance(stmt, (ast.If, ast.Try)):
                        body.extend(getattr(stmt, part, []))
                if isinstance(stmt, ast.Try):
                    for handler in stmt.handlers:
                        body.extend(handler.body)
            parsed[rel] = (body, rel.endswith("__init__.py"))
        return parsed[rel]

    def target(rel: str, node: ast.ImportFrom) -> str | None:
        module = modules_of[rel]
        if node.level:
            package = module.split(".") if parsed[rel][1] else module.split(".")[:-1]
            package = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            name = ".".join([*package, *([node.module] if node.module else [])])
        else:
            name = node.module or ""
        return project_file(name)

    def project_file(name: str) -> str | None:
        """The file of a project module named as the importing code names it: exactly, or by its unique tail (a
        tree converted from above its import root: ``models`` is ``src/models.py``)."""
        if name in modules:
            return modules[name]
        matches = [r for m, r in modules.items() if m.endswith("." + name)]
        return matches[0] if len(matches) == 1 else None

    def names_of(rel: str, visiting: frozenset[str]) -> dict[str, str | None]:
        """The names a module binds at its top level: torch name, or None for anything else."""
        if rel in cache:
            return cache[rel]
        body, _ = statements(rel)
        scope = Scope()
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bind_module(scope, alias.name, alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                if any(a.name == "*" for a in stmt.names):
                    other = target(rel, stmt)
                    if other is not None and other not in visiting:
                        scope.names.update(exported(other, visiting | {rel}))
                    continue
                module = None if stmt.level else stmt.module
                for alias in stmt.names:
                    bind_from(scope, module, alias.name, alias.asname)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope.names[stmt.name] = None
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for tgt in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    for node in ast.walk(tgt):
                        if isinstance(node, ast.Name):
                            scope.names[node.id] = None
        cache[rel] = scope.names
        return scope.names

    def exported(rel: str, visiting: frozenset[str]) -> dict[str, str | None]:
        names = names_of(rel, visiting)
        body, _ = statements(rel)
        public = None
        for stmt in body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                try:
                    public = set(ast.literal_eval(stmt.value))
                except (ValueError, SyntaxError, TypeError):
                    public = None
        return {n: q for n, q in names.items() if (n in public if public is not None else not n.startswith("_"))}

    def dynamic_stars(body) -> list[str]:
        """``m = importlib.import_module("pkg.mod")`` then ``globals().update(vars(m))`` (or a filtered dict of
        ``vars(m).items()`` / ``m.__dict__``): a star import written at run time, as evaluation drivers do. The project
        module each such statement names."""
        loaded: dict[str, str] = {}
        found = []
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in (
                        "importlib.import_module", "import_module") \
                    and stmt.value.args and isinstance(stmt.value.args[0], ast.Constant) \
                    and isinstance(stmt.value.args[0].value, str):
                loaded[stmt.targets[0].id] = stmt.value.args[0].value
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and ast.unparse(stmt.value.func) == "globals().update" and len(stmt.value.args) == 1:
                for node in ast.walk(stmt.value.args[0]):
                    name = None
                    if isinstance(node, ast.Call) and ast.unparse(node.func) == "vars" and len(node.args) == 1 \
                            and isinstance(node.args[0], ast.Name):
                        name = node.args[0].id
                    elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and isinstance(node.value, ast.Name):
                        name = node.value.id
                    other = project_file(loaded[name]) if name in loaded else None
                    if other is not None:
                        found.append(other)
        return found

    modules_of = {rel: module for module, rel in modules.items()}
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for rel in python:
        try:
            text = (src / rel).read_bytes()
        except OSError:
            continue
        if b"import *" not in text and b"globals().update" not in text:
            continue
        body, _ = statements(rel)
        received: dict[str, str | None] = {}
        for stmt in body:
            if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                other = target(rel, stmt)
                if other is not None and other != rel:
                    received.update(exported(other, frozenset({rel})))
        for other in dynamic_stars(body):
            if other != rel:
                received.update(names_of(other, frozenset({rel})))
        # torch's names, and the other imports the star brings (`math`, `np`): a call on those is not a tensor method
        imported = tuple(sorted((n, q) for n, q in received.items() if q is not None))
        if any(is_torch(q) for _, q in imported):
            out[rel] = imported
    return out


def object_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, that are plain objects: no base but ``object`` or another such class of the
    project (``class Trainer:``), whatever file defines them. A class with any other base may be a module (torch's
    ``nn.Sequential``, a library's base) and is not one of these."""
    bases = _merged_bases(per_file)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs <= found | {"object"}:
                found.add(name)
                changed = True
    return frozenset(found)


def function_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, of custom autograd Functions: a base named ``Function`` (``torch.autograd.
    Function``) directly or through project-local bases. Their ``F.apply`` call sites in other files become calls
    of the Cell the class is converted to (PointNetLK's ``invmat.InvMatrix.apply``)."""
    return _subclasses(per_file, "Function")


def module_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, that are nn.Module subclasses directly or through project-local bases."""
    return _subclasses(per_file, "Module")


def _merged_bases(per_file: list[dict[str, list[str]]]) -> dict[str, set[str]]:
    """Class name -> the last components of its bases, over every file of the project (a name defined in two files
    gets the bases of both)."""
    bases: dict[str, set[str]] = {}
    for file_bases in per_file:
        for name, names in file_bases.items():
            bases.setdefault(name, set()).update(names)
    return bases


def _subclasses(per_file: list[dict[str, list[str]]], base: str) -> frozenset[str]:
    """Class names, across the project, with a base named ``base`` directly or through project-local bases."""
    bases = _merged_bases(per_file)
    found = {name for name, bs in bases.items() if base in bs}
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs & found:
                found.add(name)
                changed = True
    return frozenset(found)


def list_names(src: Path, python: list[str]) -> frozenset[str]:
    """Names the project binds to a list anywhere, across its files (EfficientNet's ``BlockArgs(...,
    stride=[int(options['s'][0])])`` in ``utils.py``, read as ``s = self._block_args.stride`` in ``model.py`` and handed
    on as ``Conv2d(stride=s)`` to a class of a third file, through a factory no reading can follow): a keyword of a
    call that is not torch's (a namedtuple's field, a config's, a project class's parameter), an attribute assigned
    (``cfg.stride = [2, 2]``), a dict key (``{'stride': [2]}``), given a list display, comprehension, ``list(...)``,
    ``[x] * n``, or a value read from one of these names (``.stride`` of anything, a local bound to it, a parameter so
    named): to a fixed point. A parameter or an attribute read of such a name may hold a list in every file
    (native_facts.list_locals), which torch takes for a size and MindSpore refuses. Read with ``ast``, nothing
    imported."""
    trees = []
    for rel in python:
        try:
            text = (src / rel).read_bytes()
        except OSError:
            continue
        if b"[" not in text:
            continue
        try:
            trees.append(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    found: set[str] = set()
    sites = [site for tree in trees for site in _list_sites(tree)]
    changed = True
    while changed:
        changed = False
        for name, value, local in sites:
            if name not in found and _holds_list(value, found, local(found)):
                found.add(name)
                changed = True
    return frozenset(found)


def _is_list_expr(node: ast.expr) -> bool:
    """A list display, comprehension, ``list(...)`` or a list display repeated or joined."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
        return isinstance(node.left, ast.List) or isinstance(node.right, ast.List)
    return isinstance(node, (ast.List, ast.ListComp)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list")


def _holds_list(node: ast.expr, names: set[str], local: set[str]) -> bool:
    """A list expression, ``.name`` of a list name, or a local name that holds one."""
    if _is_list_expr(node):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in names
    return isinstance(node, ast.Name) and node.id in local


def _list_sites(tree: ast.Module):
    """(name, value, locals of the enclosing function that may hold a list, given the names found so far) for every
    keyword of a call that is not torch's, attribute assignment and string dict key of the file."""
    torch_names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            torch_names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "torch")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            torch_names.update(a.asname or a.name for a in node.names)

    def root(func: ast.expr) -> str | None:
        while isinstance(func, ast.Attribute):
            func = func.value
        return func.id if isinstance(func, ast.Name) else None

    def scan(body_owner, function):
        assigned: list[tuple[str, ast.expr]] = []
        params = set()
        if function is not None:
            args = function.args
            params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        nodes = list(_own_nodes(body_owner))
        for node in nodes:
            if isinstance(node, ast.Assign):
                for tgt in node.targets:
                    if isinstance(tgt, ast.Name):
                        assigned.append((tgt.id, node.value))

        def local(found: set[str]) -> set[str]:
            held = {p for p in params if p in found}
            changed = True
            while changed:
                changed = False
                for name, value in assigned:
                    if name not in held and _holds_list(value, found, held):
                        held.add(name)
                        changed = True
            return held

        for node in nodes:
            if isinstance(node, ast.Call) and root(node.func) not in torch_names:
                for kw in node.keywords:
                    if kw.arg is not None:
                        yield kw.arg, kw.value, local
            elif isinstance(node, ast.Assign):
                for tgt in node.targets:
                    if isinstance(tgt, ast.Attribute):
                        yield tgt.attr, node.value, local
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        yield key.value, value, local
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from scan(node, node)

    yield from scan(tree, None)


def _own_nodes(owner):
    """The nodes of a module's or a function's body, not those of the functions it defines (their own scope); the
    function nodes themselves are included."""
    stack = list(owner.body) if not isinstance(owner, list) else list(owner)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
