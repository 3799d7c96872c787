"""Facts about the whole project, read with ``ast`` before its files are converted (nothing is imported): every
class's bases and the nn.Module subclasses they make across files, the project's own top-level packages, and the
torch names each file receives through a star import of a project module."""
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
    bases: dict[str, set[str]] = {}
    for file_bases in per_file:
        for name, names in file_bases.items():
            bases.setdefault(name, set()).update(names)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs <= found | {"object"}:
                found.add(name)
                changed = True
    return frozenset(found)


def module_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, that are nn.Module subclasses directly or through project-local bases."""
    bases: dict[str, set[str]] = {}
    for file_bases in per_file:
        for name, names in file_bases.items():
            bases.setdefault(name, set()).update(names)
    found = {name for name, bs in bases.items() if "Module" in bs}
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs & found:
                found.add(name)
                changed = True
    return frozenset(found)
