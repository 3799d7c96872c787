"""Model classes that live in scripts whose import trains: a file that defines its model and then trains it at module
level, with no ``if __name__ == "__main__":`` guard (JunyuanHe/my-AI-roadmap's ``mini_gpt_toy_1.py``: ``model =
MiniGPT()``, ``for step in range(200): ... loss.backward()``). Importing it to build the class ran the training each
time, in the builder and in both proof sides, until a time limit stopped it. Such files are common in tutorial and
course repositories: 87 of 1,257 files defining an nn.Module in 124 mirrored repositories train at module level.

A file *trains on import* when a statement at its top level that is a loop or a ``with`` block calls a method named
``backward`` (``loss.backward()``), or a top-level statement builds a MindSpore training step (``grad_fn =
ms.value_and_grad(...)``: the converter's form of that loop), so that the torch file and its conversion are judged
alike. Such a file is imported as its *definitions only*, as a notebook is
(``notebooks.py``: imports, classes, functions, constant assignments, and a command line made and read at the top,
parsed to its defaults: ``opt = parser.parse_args()``; every other top-level statement dropped), with
the dropped statements' lines left blank so that line numbers, tracebacks and ``inspect.getsource`` read the file as
it is. A line shared by a kept and a dropped statement (``x = 1; train()``) keeps the file whole.

``install()`` makes every import of a project file (not the standard library's, an installed package's or mindport's)
read it so: the builder calls it, the proof's sides get it through ``stubsite/sitecustomize.py`` when ``ENV`` is set
(``discovery.prove``). Light: ast only."""
from __future__ import annotations

import ast
import os
import sys

from mindport.discovery.notebooks import _bound, _constants_bound, _kept

ENV = "MINDPORT_SCRIPT_DEFINITIONS"


def trains_on_import(tree: ast.Module) -> bool:
    """A top-level loop or ``with`` block that calls a ``backward`` method, or a top-level statement that makes a
    MindSpore training step (``grad_fn = ms.value_and_grad(forward_fn, ...)``: the converter's form of a module-level
    training loop, which may leave no ``backward`` behind). See the module docstring."""
    for node in tree.body:
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)) and any(
                isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"
                for c in ast.walk(node)):
            return True
        if isinstance(node, (ast.Assign, ast.Expr)) and any(
                isinstance(c, ast.Call) and _name(c.func) == "value_and_grad" for c in ast.walk(node)):
            return True
    return False


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


_FAILED: set[str] = set()  # files whose module-level code raised on import: read as their definitions from then on


def definitions_code(data: bytes, always: bool = False) -> str | None:
    """The file's source with every top-level statement but its definitions blanked (line for line), when it trains on
    import (or ``always``); None otherwise (the file is imported as it is)."""
    try:
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None
    if not always and not trains_on_import(tree):
        return None
    lines = text.split("\n")
    known: set[str] = set()
    values: set[str] = set()
    kept_lines: set[int] = set()
    dropped: list[ast.stmt] = []
    for node in tree.body:
        first = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]])
        if _kept(node, known, values) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            known |= _bound(node)
            values |= _constants_bound(node)
            kept_lines.update(range(first, node.end_lineno + 1))
        else:
            dropped.append(node)
    for node in dropped:
        span = range(node.lineno, node.end_lineno + 1)
        if kept_lines.intersection(span):
            return None
        for line in span:
            lines[line - 1] = ""
    return "\n".join(lines)


_NOT_PROJECT = tuple(os.path.realpath(p) + os.sep for p in {sys.base_prefix, sys.prefix, os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))})  # the standard library, the installed packages, mindport


def _project_file(real: str) -> bool:
    """A file of the user's code (a real path): not the standard library's, an installed package's or mindport's."""
    return not real.startswith(_NOT_PROJECT) and "site-packages" not in real and "dist-packages" not in real


def install() -> None:
    """Read each project file that trains on import as its definitions only (``importlib``'s source loader)."""
    from importlib.machinery import SourceFileLoader

    if getattr(SourceFileLoader.get_code, "_mindport_scripts", False):
        return
    original = SourceFileLoader.get_code

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        real = os.path.realpath(path)
        if path.endswith(".py") and _project_file(real):
            try:
                with open(path, "rb") as f:
                    code = definitions_code(f.read(), always=real in _FAILED)
            except OSError:
                code = None
            if code is not None:
                return compile(code, path, "exec", dont_inherit=True)
        return original(self, fullname)

    get_code._mindport_scripts = True
    SourceFileLoader.get_code = get_code


def failed_at_import(exc: BaseException) -> bool:
    """After an import that raised: when the error came from a project file's module-level code (its innermost such
    frame: JunyuanHe's ``text = "\\n".join(ds["text"])`` after ``ds = load_dataset(...)``, a download this machine
    cannot make, before its classes were used), that file is read as its definitions from now on and True is returned
    (import again); False when scripts are not read so here (``install``), the file was already, or the error is no
    module-level one."""
    from importlib.machinery import SourceFileLoader

    if not getattr(SourceFileLoader.get_code, "_mindport_scripts", False):
        return False
    tb, found = exc.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "<module>" and code.co_filename.endswith(".py") and os.path.isfile(code.co_filename):
            found = os.path.realpath(code.co_filename)
        tb = tb.tb_next
    if found is None or found in _FAILED or not _project_file(found):
        return False
    _FAILED.add(found)
    return True
