"""Model classes that live in Jupyter notebooks, discovered, built and proven like a Python file's.

A notebook is no module: importing it would run every cell, the training loop, the dataset download and the
plotting with it. Discovery reads a notebook's code cells (``formats.code_cells``: IPython's ``%`` and ``!`` lines
blank) and makes of them a *definitions-only module*: the top-level imports, class and function definitions (their
decorators too), and the assignments of constant values they may read (``z_dim = 100``, ``device =
torch.device("cuda" if torch.cuda.is_available() else "cpu")``: literals, names already bound by what is kept,
attributes of those, and the calls ``_SAFE_CALLS`` allows); every other statement (loops, ``with`` blocks, calls
of the notebook's functions, ``model = Net()``, ``train(...)``, ``plt.show()``) is dropped, so nothing but the
definitions runs on import. A cell that does not parse is left out whole.

Both sides load the module the same way: the torch side from the repository's notebook, the MindSpore side from its
converted notebook in the output (``validators.parity.loading.import_file`` of a ``.ipynb``). The module is written
as a ``.py`` file, each kept statement under a comment naming its cell, into ``$MINDPORT_NOTEBOOK_MODULES`` (the
proof's log folder, ``OUT/mindport-logs/models/notebooks/``: set by ``discovery.prove``) or else a temporary
folder, named by the notebook's content, so tracebacks and the first divergent layer's source line point at a file
one can read. The notebook's own folder goes on ``sys.path``, as a kernel started there has it.

A notebook class is addressed as ``path/to/nb.ipynb:Name`` everywhere a ``path.py:Name`` is: the report,
``--models`` (``--models '*.ipynb:*'`` selects every notebook class), ``[models."nb.ipynb:Name"]`` in
mindport.toml. The notebook's other cells are evidence like a script's: ``G = Generator(g_input_dim=100)`` and
``G(torch.randn(4, 100))`` give constructor arguments and inputs (discovery parses all of its code cells for them,
never runs them).

Light: ast and json only (the converter's install has no torch)."""
from __future__ import annotations

import ast
import builtins
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

SUFFIX = ".ipynb"
MODULES_ENV = "MINDPORT_NOTEBOOK_MODULES"  # where definitions-only modules are written
_MAX_BYTES = 20_000_000  # a notebook's JSON, outputs (images) included
# the calls a kept assignment may make: no side effects, no data (``device = torch.device(...)``; its conversion's
# ``mp_framework.cuda_available()``, so that a converted script keeps what its torch file keeps: scripts.py)
_SAFE_CALLS = {"device", "is_available", "cuda_available", "device_count", "dtype", "getattr", "int", "float", "str",
               "bool", "tuple", "list", "dict", "set", "frozenset", "len", "range", "min", "max", "abs", "round"}


def is_notebook(rel: str) -> bool:
    return rel.endswith(SUFFIX)


def cells(data: bytes) -> list[str] | None:
    """The Python of a notebook's code cells (``formats.code_cells``), None when it is no readable notebook."""
    from mindport.migrator.formats import code_cells

    if len(data) > _MAX_BYTES:
        return None
    try:
        notebook = json.loads(data.decode("utf-8"))
        return code_cells(notebook["cells"])
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None


def _parsed_cells(data: bytes) -> list[tuple[int, str, ast.Module]]:
    """(index among code cells, text, tree) of every code cell that parses."""
    out = []
    for index, text in enumerate(cells(data) or []):
        try:
            out.append((index, text, ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return out


def code_tree(data: bytes) -> ast.Module | None:
    """All the notebook's code (the cells that parse, in order) as one tree: what discovery reads for its classes
    and for the evidence of the other cells (constructor calls, inputs). Read, never run."""
    parsed = _parsed_cells(data)
    if not parsed:
        return None
    try:
        return ast.parse("\n".join(text for _, text, _ in parsed))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a cell ending inside a bracket
        body = []
        for _, _, tree in parsed:
            body.extend(tree.body)
        return ast.Module(body=body, type_ignores=[])


def _bound(node) -> set[str]:
    if isinstance(node, ast.Try):
        return set().union(*[_bound(n) for n in [*node.body, *[s for h in node.handlers for s in h.body]]])
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name}
    if isinstance(node, ast.Expr):
        return set()
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _constant(value, known: set[str], values: set[str] = frozenset()) -> bool:
    """Can the expression be evaluated on import without running the notebook's work: literals, names ``known``
    (kept before it, or builtins), attributes of those, operators, the calls ``_SAFE_CALLS`` allows, and items of
    the constants kept before it (``values``: ``window = window_type[0]`` after ``window_type = ['hanning']``, a
    notebook's configuration cell: seorim0's speech enhancement tutorial, its classes' default ``win_type=window``)."""
    for node in ast.walk(value):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in values:
            continue
        if isinstance(node, ast.Name):
            if node.id not in known and not hasattr(builtins, node.id):
                return False
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in _SAFE_CALLS:
                return False
        elif isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.ListComp,
                               ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Subscript, ast.Starred)):
            return False  # another subscript reads data (``train_data[0]``); comprehensions bind names of their own
    return True


def _kept(node, known: set[str], values: set[str] = frozenset()) -> bool:
    """Is the statement kept in a definitions-only module (``values``: the constants kept before it, whose items
    an assignment may read)."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if isinstance(node, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) and all(
            isinstance(e, ast.Name) for e in getattr(t, "elts", [t])) for t in node.targets) \
            and _constant(node.value, known, values):
        return True
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.value is not None and _constant(node.value, known, values)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):  # the converter's set-up of its runtime
        func = node.value.func  # (``mp_train.keep_dropout_masks()`` after a converted notebook's imports)
        while isinstance(func, ast.Attribute):
            func = func.value
        if isinstance(func, ast.Name) and func.id in known and func.id.startswith(_RUNTIME_PREFIX) and all(
                _constant(a, known) for a in [*node.value.args, *[k.value for k in node.value.keywords]]):
            return True
    if isinstance(node, ast.Try):  # ``try: import apex / except ImportError: apex = None``
        return all(_kept(n, known, values) for n in [*node.body, *[s for h in node.handlers for s in h.body]]) \
            and not node.orelse and not node.finalbody
    return _command_line(node, known)


# argparse's calls that make a script's command line and read it: kept with their options, so that the classes (and
# the constants kept after them: ``n_features = opt.channels * opt.img_size ** 2``) read the options' defaults
_PARSER_METHODS = {"add_argument", "add_argument_group", "add_mutually_exclusive_group", "set_defaults", "parse_args",
                   "parse_known_args"}


def _command_line(node, known: set[str]) -> bool:
    """Is the statement a script's command line, made and read at its top level (``parser =
    argparse.ArgumentParser()``, ``parser.add_argument('--latent_dim', type=int, default=100)``, ``opt =
    parser.parse_args()`` or ``parser.parse_known_args()[0]``), with constant arguments. A script that trains on
    import (scripts.py) is read as its definitions, and its classes read ``opt.latent_dim`` at construction
    (ozanciga/gans-with-pytorch: every GAN's ``nn.Linear(opt.latent_dim, ...)``, "name 'opt' is not defined").
    The processes that import it give it no command line (the builder's and the proof sides' ``sys.argv`` are the
    interpreter's alone), so it parses to its defaults, as the script run without options does. An option it
    requires (``required=True``, a positional one) is not kept: parsing would exit for want of it."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if isinstance(node, ast.Assign) and not all(
            isinstance(t, (ast.Name, ast.Tuple)) and all(isinstance(e, ast.Name) for e in getattr(t, "elts", [t]))
            for t in node.targets):
        return False
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):  # parse_known_args()[0]
        value = value.value
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "ArgumentParser" or getattr(func, "id", "") == "ArgumentParser":
        base = func.value if isinstance(func, ast.Attribute) else func
        if not (isinstance(base, ast.Name) and base.id in known):
            return False
    elif not (isinstance(func, ast.Attribute) and func.attr in _PARSER_METHODS and isinstance(func.value, ast.Name)
              and func.value.id in known):
        return False
    if getattr(func, "attr", "") == "add_argument":
        first = value.args[0] if value.args else None
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("-")):
            return False  # a positional option: required
        if any(k.arg == "required" and not (isinstance(k.value, ast.Constant) and not k.value.value)
               for k in value.keywords):
            return False
    return all(_constant(a, known) for a in [*value.args, *[k.value for k in value.keywords]])


def _constants_bound(node) -> set[str]:
    """The names a kept statement binds to constant values (an assignment's; not an import's or a definition's)."""
    return _bound(node) if isinstance(node, (ast.Assign, ast.AnnAssign)) else set()


_RUNTIME_PREFIX = "mp_"  # the names the converter binds to mindport.runtime's modules (``mp_train``)


def _imports(node) -> bool:
    return isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, ast.Try) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body))


def defined_names(tree: ast.Module) -> set[str]:
    """The names the definitions-only module of a notebook binds (``tree``: ``code_tree``'s, its code cells
    together): what a constructor call discovery reads from the notebook may name. A constant computed from data
    (``INPUT_DIM = len(SRC.vocab)``) is left out of the module, so it is not one of them."""
    known: set[str] = set()
    values: set[str] = set()
    for node in tree.body:
        if _kept(node, known, values):
            known |= _bound(node)
            values |= _constants_bound(node)
    return known


def definitions_source(data: bytes, name: str = "notebook") -> str:
    """The definitions-only module of a notebook (see the module docstring), as Python source. An import none of the
    kept statements reads is left out too (``from torchvision.utils import save_image`` for the plotting cell, ``import
    wandb`` for the training one): it was there for the dropped code, and a module this machine lacks would fail the
    import of models that never use it."""
    future: list[str] = []
    kept: list[tuple[int, int, ast.stmt, str]] = []
    known: set[str] = set()
    values: set[str] = set()
    for index, text, tree in _parsed_cells(data):
        lines = text.split("\n")
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                future.append(ast.unparse(node))
                continue
            if not _kept(node, known, values):
                continue
            known |= _bound(node)
            values |= _constants_bound(node)
            first = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]])
            kept.append((index, first, node, "\n".join(lines[first - 1:node.end_lineno])))
    read = {n.id for _, _, node, _ in kept if not _imports(node) for n in ast.walk(node) if isinstance(n, ast.Name)}
    parts = [f"# mindport: the definitions of {name}'s code cells (imports, classes, functions, constants); the "
             f"notebook's other statements are left out, never run\n"]
    for index, first, node, text in kept:
        if _imports(node) and not (_bound(node) & read) and not any(
                isinstance(n, ast.alias) and n.name == "*" for n in ast.walk(node)):
            continue
        parts.append(f"# cell {index}, line {first}\n{text}\n")
    return "\n".join([*future, *parts])


def definitions_file(path, folder=None) -> Path:
    """The definitions-only module of the notebook at ``path`` written as a file (named by the notebook's path and
    content: written once, read by every process that needs it) in ``folder``, ``$MINDPORT_NOTEBOOK_MODULES`` or a
    temporary folder."""
    path = Path(path)
    data = path.read_bytes()
    folder = Path(folder or os.environ.get(MODULES_ENV) or Path(tempfile.gettempdir()) / "mindport-notebooks")
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(str(path.resolve()).encode() + b"\0" + data).hexdigest()[:12]
    stem = re.sub(r"\W+", "_", path.stem).strip("_") or "notebook"
    target = folder / f"{stem}_ipynb_{digest}.py"
    if not target.is_file():
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(definitions_source(data, str(path)), encoding="utf-8")
        os.replace(tmp, target)
    return target
