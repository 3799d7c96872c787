"""One file by its kind: Python source (encodings, BOMs and line endings kept), the code cells of a notebook, and
the torch lines of requirement files and pyproject.toml."""
from __future__ import annotations

import codecs
import io
import json
import re
import tokenize

from mindport.errors import Diagnostic
from mindport.migrator.tree import _too_large

_TORCH_REQUIREMENT = re.compile(r"^(\s*)(torch)(\s*(?:[<>=!~].*)?)$", re.IGNORECASE)
_DROPPED_REQUIREMENTS = ("torchvision", "torchaudio", "torchtext")


def decode_source(data: bytes, name: str) -> tuple[str | None, str, bool, Diagnostic | None]:
    """(text, encoding, has_bom, problem). Honours BOMs and ``# -*- coding: … -*-`` lines (PEP 263)."""
    if b"\x00" in data:
        return None, "", False, Diagnostic("MP203", "binary file (NUL bytes): copied unchanged", name, 1, 1)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, "", False, Diagnostic("MP202", f"unknown source encoding: {exc}", name, 1, 1,
                                           "declare a valid `# -*- coding: … -*-` or save the file as UTF-8")
    has_bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if has_bom else encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, encoding, has_bom, Diagnostic(
            "MP202", f"cannot decode as {encoding}: {exc.reason} at byte {exc.start}", name, line, 1,
            "save the file as UTF-8 or declare its encoding with a `# -*- coding: … -*-` line")
    return text, encoding, has_bom, None


def encode_source(text: str, encoding: str, has_bom: bool) -> bytes:
    data = text.encode("utf-8" if has_bom else encoding)
    return codecs.BOM_UTF8 + data if has_bom else data


def convert_python_bytes(data: bytes, name: str, options: dict) -> tuple[bytes, list[Diagnostic], int, int, bool]:
    """(output bytes, diagnostics, lines, converted sites, changed)."""
    return _convert_python(data, name, options)[:5]


def _convert_python(data: bytes, name: str, options: dict):
    """``convert_python_bytes`` + the ConversionResult (None when the bytes could not be decoded)."""
    from mindport.migrator import convert_source

    text, encoding, has_bom, problem = decode_source(data, name)
    if problem is not None:
        return data, [problem], 0, 0, False, None
    result = convert_source(text, name, **options)  # libcst keeps CRLF, also on the lines it writes
    return encode_source(result.code, encoding, has_bom), result.diagnostics, text.count("\n") + 1, \
        result.converted_sites, result.changed, result


def _cells_fact(cells, fact) -> bool:
    """A project fact (``project.float64_free``: can no float64 tensor come to be; ``project.conv1d_settings_unread``)
    of the code cells of a notebook together (a cell that does not parse answers no)."""
    import ast

    trees = []
    for body in code_cells(cells):
        try:
            trees.append(ast.parse(body))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return fact(trees)


def code_cells(cells) -> list[str]:
    """The Python of a notebook's code cells, one text per cell (:func:`python_of`)."""
    texts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        texts.append(python_of("".join(source) if isinstance(source, list) else source))
    return texts


# cell magics whose body is Python run in the notebook's namespace; any other (%%shell, %%bash, %%writefile, %%html,
# %%script, %%sql ...) holds another language or text for another process
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "time_it"}


def python_of(text: str) -> str:
    """A code cell's Python: IPython's magic and shell lines (``%``, ``!``) blank, and every line blank under a cell
    magic whose body is not Python (``%%shell`` then ``pip install torchaudio``: Colab's; the cell was a syntax error
    and the whole notebook was copied unchanged, tky823/DNN-based_source_separation's tutorials). Line numbers kept."""
    lines = text.split("\n")
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%") and first[2:].split(" ")[0] not in _PYTHON_CELL_MAGICS:
        return "\n".join("" for _ in lines)
    # an indented one is ``pass`` at its indentation: blank, the block it was the body of (``if IN_COLAB:`` then
    # ``!wget ...``) had no body, and the cell, the notebook's imports with it, did not parse (MrSyee's
    # pg-is-all-you-need: "name 'np' is not defined" in every later cell's class)
    return "\n".join((line[:len(line) - len(line.lstrip())] + _MAGIC_BODY.format(i) if line[:1] in (" ", "\t") else "")
                     if line.lstrip().startswith(("%", "!")) else line for i, line in enumerate(lines))


# what an indented magic or shell line is in a cell's Python (python_of): its line number in the comment, so the
# converter writes it back where it went when the conversion added lines above it (imports)
_MAGIC_BODY = "pass  # mindport: magic line {}"
_MAGIC_MARK = re.compile(r"^\s*pass  # mindport: magic line (\d+)$")


def _not_python(body: str) -> str | None:
    """Why a cell's Python does not parse (the parser's message), or None when it does."""
    import ast

    try:
        ast.parse(body)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError):
        return None  # left to the converter, which says what it is
    return None


def _kept_lines(text: str, python: str) -> list[tuple[int, str]]:
    """The lines of a cell that are not Python (blank in ``python``, or an indented magic's ``pass``, not in
    ``text``): written back as they were."""
    return [(i, line) for i, (line, body) in enumerate(zip(text.split("\n"), python.split("\n")))
            if line.strip() and (not body.strip() or _MAGIC_MARK.match(body))]


# a statement between two cells of a notebook converted as one module (a statement, not a comment: a comment line
# belongs to the statement after it, and goes when a rule removes that statement, ``import torch.nn as nn`` first in a
# cell: bentrevett/pytorch-sentiment-analysis's class cells)
_CELL_MARK = "__mindport_cell__ = "


def _convert_cells_together(bodies: list[str], labels: list[str], options: dict):
    """Convert the code cells that parse (``bodies``: magics blank) as one module, a boundary statement between each
    two; ({position: converted text}, head, {position: diagnostics}, converted sites), the diagnostics at their cell's
    own lines (``labels[position]:line``, the names the per-cell conversion gave). ``head``: lines the conversion
    wrote above the first cell (the caller puts them at the top of the first cell converted). None when no cell
    parses or the boundaries do not come back one per cell, in order (the caller converts cell by cell then)."""
    import ast
    import dataclasses

    from mindport.migrator import convert_source

    together = []
    for k, body in enumerate(bodies):
        try:
            ast.parse(body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if _CELL_MARK in body:
            return None
        together.append(k)
    if not together:
        return None
    parts, starts, line = [], {}, 1
    for k in together:
        parts.append(f"{_CELL_MARK}{k}\n{bodies[k]}\n")
        starts[k] = line + 1  # the cell's first line in the joined module
        line += 1 + bodies[k].count("\n") + 1
    result = convert_source("".join(parts), labels[together[0]].rpartition("[")[0] or "notebook", **options)
    out_lines = result.code.split("\n")
    marks = [i for i, text in enumerate(out_lines) if text.startswith(_CELL_MARK)]
    if [out_lines[i][len(_CELL_MARK):] for i in marks] != [str(k) for k in together]:
        return None
    texts = {}
    for n, k in enumerate(together):
        end = marks[n + 1] if n + 1 < len(marks) else len(out_lines) - 1  # the last: the joining's final newline
        texts[k] = "\n".join(out_lines[marks[n] + 1:end])
    diagnostics: dict[int, list] = {}
    for d in result.diagnostics:
        k = next((k for k in reversed(together) if d.line >= starts[k]), together[0])
        diagnostics.setdefault(k, []).append(dataclasses.replace(
            d, file=labels[k], line=max(1, d.line - starts[k] + 1)))
    return texts, out_lines[:marks[0]], diagnostics, result.converted_sites


def convert_notebook_bytes(data: bytes, name: str, options: dict, max_code_size: int | None = None
                           ) -> tuple[bytes, list[Diagnostic], int, int, bool]:
    """Convert the code cells of a notebook; the JSON stays valid and keeps its other content. ``max_code_size``
    limits the code of all cells together (outputs such as images do not count)."""
    from mindport.migrator import convert_source

    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
        code_size = sum(len("".join(c.get("source", ""))) for c in cells if c.get("cell_type") == "code")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        return data, [Diagnostic("MP202", f"not a readable notebook: {exc}", name, 1, 1)], 0, 0, False
    if max_code_size is not None and code_size > max_code_size:
        return data, [_too_large(code_size, max_code_size).diagnostic(name)], 0, 0, False
    diagnostics: list[Diagnostic] = []
    lines = sites = 0
    changed = False
    # cells run in one namespace: float64 made in one cell reaches an optimizer built in another (project.float64_free)
    from mindport.migrator.project import conv1d_settings_unread, float64_free

    options = {**options, "float64_free": options.get("float64_free") is not False and _cells_fact(cells, float64_free),
               "conv1d_settings_unread": options.get("conv1d_settings_unread") is not False
               and _cells_fact(cells, conv1d_settings_unread)}
    code = [(index, cell) for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    texts, bodies, kept_lines = [], [], []
    for _, cell in code:
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        # IPython magics, shell escapes and cells of another language are not Python: kept out of the parser
        body = python_of(text)
        kept_lines.append(_kept_lines(text, body))
        bodies.append(body)
        texts.append(text)
    # the cells run in one namespace (``import torch.nn as nn`` in the first, ``class G(nn.Module)`` in the third):
    # the cells that parse are converted together, as one module, and split back at their boundaries; converted
    # one by one, a cell never saw the imports of the cells before it, and its classes stayed torch's while the
    # first cell's imports were rewritten (lyeoni/pytorch-mnist-GAN: "name 'nn' is not defined" in the port)
    joined = _convert_cells_together(bodies, [f"{name}[cell {index}]" for index, _ in code], options)
    head = joined[1] if joined is not None else []
    for k, (index, cell) in enumerate(code):
        source, text = cell.get("source", ""), texts[k]
        if joined is not None and k in joined[0]:
            out_text = joined[0][k]
            cell_diagnostics = joined[2].get(k, [])
        elif (problem := _not_python(bodies[k])) is not None:
            # prose, a license or Python 2 in a code cell: that cell fails when run, the others run; kept as written
            # (an MP201 here copied the whole notebook unchanged: seorim0's SE_tutorials.ipynb, its license first)
            out_text, cell_diagnostics = text, [Diagnostic(
                "MP209", f"notebook cell is not Python ({problem}): kept as written; the other cells are converted",
                f"{name}[cell {index}]", 1, 1, "make the cell Python or markdown", severity="warning")]
        else:
            result = convert_source(bodies[k], f"{name}[cell {index}]", **options)
            out_text, cell_diagnostics = result.code, result.diagnostics
            sites += result.converted_sites
        out_lines = out_text.split("\n")
        marked = {int(m.group(1)): j for j, o in enumerate(out_lines) if (m := _MAGIC_MARK.match(o))}
        for i, line in kept_lines[k]:
            if i in marked:  # an indented magic line: where its placeholder went
                out_lines[marked[i]] = line
            elif i < len(out_lines):
                out_lines[i] = line
        if head and joined is not None and k in joined[0]:  # what the conversion wrote above the first cell
            out_lines, head = head + out_lines, []
        new_text = "\n".join(out_lines)
        diagnostics.extend(cell_diagnostics)
        lines += text.count("\n") + 1
        if new_text != text:
            changed = True
            cell["source"] = new_text.splitlines(keepends=True) if isinstance(source, list) else new_text
    if joined is not None:
        sites += joined[3]
    out = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    return out.encode("utf-8"), diagnostics, lines, sites, changed


RUNTIME = "mindport.runtime"  # what converted code imports where MindSpore lacks an equivalent
MINDSPORE_REQUIREMENT = "mindspore==2.10.*"


def _runtime_requirement() -> str:
    """The package converted code needs when it imports mindport.runtime: mindport with the ``runtime`` extra
    (MindSpore and numpy, nothing of the converter's), at this release's series."""
    from mindport import __version__

    major, minor = __version__.split(".")[:2]
    return f"mindport[runtime]~={major}.{minor}.0"


_IMPORT_LINE = re.compile(rb"^[ \t]*(?:import[ \t]+([\w. \t,]+)|from[ \t]+(\w[\w.]*)[ \t]+import\b)", re.M)


def imported_packages(data: bytes) -> set[str]:
    """The top-level packages a Python file imports (``mindport.runtime`` by that name); read with ``ast``, or, in a
    file ``ast`` cannot read (a syntax error, an expression deeper than its recursion limit: copied unchanged, its
    imports still count), from its import lines."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        names = [name.strip().split()[0] for plain, package in _IMPORT_LINE.findall(data)
                 for name in (plain.decode().split(",") if plain else [package.decode()]) if name.strip()]
    else:
        names = [name for node in ast.walk(tree)
                 for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                              [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                              else [])]
    return {RUNTIME if name == RUNTIME or name.startswith(RUNTIME + ".") else name.split(".")[0] for name in names}


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~\[;]", spec.strip(), maxsplit=1)[0].lower() if spec.strip() else ""


def _torch_replacement(spec: str, imports: set[str] | None, listed: set[str]) -> list[str]:
    """What a requirement on torch becomes: torch kept while a converted file still imports it, MindSpore while one
    imports it, mindport (its runtime extra) while one imports mindport.runtime; nothing the code does not import.
    ``imports=None``: the project is unknown (one requirement file alone): torch becomes MindSpore."""
    if imports is None:
        return [MINDSPORE_REQUIREMENT]
    out = [spec] if "torch" in imports else []
    if "mindspore" in imports and "mindspore" not in listed:
        out.append(MINDSPORE_REQUIREMENT)
    if RUNTIME in imports and "mindport" not in listed:
        out.append(_runtime_requirement())
    return out


def convert_requirements_text(text: str, imports: set[str] | None = None) -> str:
    """torch -> what the converted code imports (``_torch_replacement``) in a requirements file;
    torchvision/torchaudio/torchtext commented out with a reason unless a converted file still imports them."""
    listed = {_requirement_name(line) for line in text.splitlines()}
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        name = _requirement_name(stripped)
        ending = "\n" if line.endswith("\n") else ""
        if name == "torch":
            kept = _torch_replacement(stripped, imports, listed)
            out.extend(spec + "\n" for spec in kept[:-1])
            out.append((kept[-1] + ending) if kept else f"# {stripped}  # mindport: no converted file imports torch"
                       + ending)
            listed.update(_requirement_name(spec) for spec in kept)
        elif name in _DROPPED_REQUIREMENTS and not (imports and name in imports):
            out.append(f"# {stripped}  # mindport: no MindSpore package; use mindspore.dataset" + ending)
        else:
            out.append(line)
    return "".join(out)


def convert_pyproject_text(text: str, imports: set[str] | None = None) -> str:
    """The same for the dependency strings of a pyproject.toml (quoted requirement specifiers)."""
    listed = {_requirement_name(m.group(2)) for m in re.finditer(r"""(["'])([A-Za-z][\w.\-]*[^"']*)\1""", text)}

    def replace(match: re.Match) -> str:
        quote, spec = match.group(1), match.group(2)
        if _requirement_name(spec) != "torch":
            return match.group(0)
        kept = _torch_replacement(spec, imports, listed)
        listed.update(_requirement_name(s) for s in kept)
        return ", ".join(f"{quote}{s}{quote}" for s in kept) if kept else f"{quote}{MINDSPORE_REQUIREMENT}{quote}"

    return re.sub(r"""(["'])(torch(?:[\s<>=!~\[;][^"']*)?)\1""", replace, text)
