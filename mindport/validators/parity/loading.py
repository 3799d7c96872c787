"""Loading what the user names on the command line: a model reference + ``--ctor`` source, and ``--input`` specs.

References (``Name`` is a class or a factory function, or any name the module has, re-exports included):

* ``path/model.py:Name`` -- a file. When its folder is a package (has ``__init__.py``), the file is imported as a
  module of that package (``x_transformers/x_transformers.py`` -> ``x_transformers.x_transformers``, with the
  package's parent on ``sys.path``), so absolute and relative imports inside the package work; otherwise its folder
  goes first on ``sys.path`` so sibling imports (``from attend import Attend``) work.
* ``pkg/__init__.py:Name`` or ``pkg:Name`` (a package folder) -- a name the package re-exports.
* ``pkg.module:Name`` -- a dotted module under ``root`` (``--root``, default the current folder).

``--ctor`` is the call's argument list as Python source, evaluated in the model module's own namespace (so
``--ctor "BasicBlock, [2, 2, 2, 2]"`` builds both the torch and the MindSpore model from the same text). Input specs:
``2x3x32x32:float32`` (seeded normal floats), ``2x16:int64:0:1000`` (integers in [0, 1000)), a ``.npy``/``.npz``
file, ``value:LITERAL`` (a Python value the forward takes as it is: ``value:4``, ``value:True``, ``value:'norm'``,
``value:None``, ``value:[1, 2]``), ``fn:identity`` (a function that returns its first argument: ``forward(x,
sublayer)``), or a list or tuple of such specs, ``[2x8x32x32:float32, 2x16x16x16:float32]`` / ``(A, B)`` (a forward
that takes its feature maps in one argument: HRNet's branches, a decoder's encoder features), or a dict of specs,
``{image: 2x3x32x32:float32, label: 2:int64:0:10}`` (a forward that reads its input by key: ``batch["image"]``).

``build_model(..., isolated=True)`` is for a process that builds one side only (``worker.py``): modules are imported
under their own names and stay imported. In-process callers (both frameworks in one interpreter) get a fresh import
each time, so that the torch project and its converted copy never share a module.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import sys
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mindport.errors import InputError

_DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"}


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str
    low: float | None = None
    high: float | None = None
    path: str | None = None
    value: object = None  # dtype "value": a Python literal; "fn": a FunctionInput's name; "list"/"tuple": the specs

    def __str__(self) -> str:
        if self.path:
            return self.path
        if self.dtype == "value":
            return f"value:{self.value!r}"
        if self.dtype == "fn":
            return f"fn:{self.value}"
        if self.dtype in ("dict", "object"):
            return ("obj" if self.dtype == "object" else "") + "{" + ", ".join(f"{k}: {v}" for k, v in self.value) + "}"
        if self.dtype in _SEQUENCES:
            inner = ", ".join(map(str, self.value)) + ("," if self.dtype == "tuple" and len(self.value) == 1 else "")
            return f"[{inner}]" if self.dtype == "list" else f"({inner})"
        text = "x".join(map(str, self.shape)) + ":" + self.dtype
        if self.low is not None:
            text += f":{self.low:g}:{self.high:g}"
        return text


@dataclass(frozen=True)
class FunctionInput:
    """A forward argument that is a function (``SublayerConnection.forward(x, sublayer)`` calls ``sublayer(x)``):
    ``identity`` returns its first argument. Plain data for the side processes (no framework object), callable on
    both sides alike."""

    name: str = "identity"

    def __call__(self, x, *args, **kwargs):
        return x


class ObjectInput:
    """A forward argument the forward reads by attribute (a PyG batch's ``data.x``, ``data.edge_index``; ptls'
    ``PaddedBatch``: ``pb.payload``, ``pb.seq_len_mask``): its arrays as attributes, in the ``obj{name: SPEC, ...}``
    order. Plain data for the side processes (no framework object); each side gets one holding its own tensors
    (``map_arrays``)."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)

    def items(self):
        return self.__dict__.items()

    def __repr__(self) -> str:
        return "obj{" + ", ".join(f"{k}: {describe_input(v)}" for k, v in self.__dict__.items()) + "}"


_SEQUENCES = {"list": list, "tuple": tuple}


def map_arrays(value, convert):
    """``value`` with every array in it (also inside a list or tuple input) passed through ``convert``; the other
    inputs (``value:``, ``fn:``) as they are."""
    if isinstance(value, np.ndarray):
        return convert(value)
    if type(value) in (list, tuple):
        return type(value)(map_arrays(v, convert) for v in value)
    if type(value) is dict:
        return {k: map_arrays(v, convert) for k, v in value.items()}
    if type(value) is ObjectInput:
        return ObjectInput(**{k: map_arrays(v, convert) for k, v in value.items()})
    return value


def is_array(value) -> bool:
    """An input that is an array (not a ``value:`` literal or a ``fn:`` function)."""
    return isinstance(value, np.ndarray)


def describe_input(value) -> str:
    """``(2, 3):float32`` for an array, ``value 4`` / ``fn identity`` for the others."""
    if is_array(value):
        return f"{tuple(value.shape)}:{value.dtype}"
    if isinstance(value, FunctionInput):
        return f"fn {value.name}"
    if type(value) in (list, tuple) and value and all(is_array(v) for v in value):
        inner = ", ".join(describe_input(v) for v in value)
        return f"[{inner}]" if type(value) is list else f"({inner})"
    if type(value) is dict and value and all(is_array(v) for v in value.values()):
        return "{" + ", ".join(f"{k}: {describe_input(v)}" for k, v in value.items()) + "}"
    if type(value) is ObjectInput:
        return repr(value)
    return f"value {value!r}"


def _split_items(text: str) -> list[str]:
    """``text`` split at its commas outside brackets: the items of a list, tuple or dict input, which may nest (an
    LSTM's state per layer: ``[(1x2x8:float32, 1x2x8:float32), (1x2x8:float32, 1x2x8:float32)]``)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    return [*items, text[start:]]


def parse_input_spec(text: str) -> InputSpec:
    text = text.strip()
    kind = "object" if text.startswith("obj{") else "dict"  # obj{x: 6x4:float32, ...}: read by attribute (data.x)
    body = text[3:] if kind == "object" else text
    if body[:1] + body[-1:] == "{}":  # a dict of arrays: {image: 2x3x32x32:float32, label: 2:int64:0:10}
        items = [t.strip().partition(":") for t in _split_items(body[1:-1]) if t.strip()]
        if not items or any(not k.strip() or not v.strip() for k, _, v in items):
            raise InputError(f"--input {text!r}: a {'dict' if kind == 'dict' else 'obj'} input takes KEY: SPEC "
                             "items ({image: 2x3x32x32:float32, ...}, obj{x: 6x4:float32, ...})")
        return InputSpec((), kind, value=tuple((k.strip().strip("'\""), parse_input_spec(v)) for k, _, v in items))
    if text[:1] + text[-1:] in ("[]", "()"):
        items = [t for t in _split_items(text[1:-1]) if t.strip()]
        if not items:
            raise InputError(f"--input {text!r}: a list input takes one spec or more ([2x3x32x32:float32, ...])")
        return InputSpec((), "list" if text[0] == "[" else "tuple", value=tuple(parse_input_spec(t) for t in items))
    if text.startswith("value:"):
        import ast

        try:
            return InputSpec((), "value", value=ast.literal_eval(text[len("value:"):].strip()))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise InputError(f"--input {text!r}: value:LITERAL takes a Python literal (value:4, value:'norm', "
                             "value:None, value:[1, 2])") from None
    if text.startswith("fn:"):
        if text != "fn:identity":
            raise InputError(f"--input {text!r}: the function inputs are: fn:identity")
        return InputSpec((), "fn", value="identity")
    if text.endswith((".npy", ".npz")):
        if not Path(text).is_file():
            raise InputError(f"input file {text} does not exist")
        return InputSpec((), "", path=text)
    parts = text.split(":")
    if len(parts) not in (2, 4) or not re.fullmatch(r"\d+(x\d+)*", parts[0]) or parts[1] not in _DTYPES:
        raise InputError(
            f"--input {text!r}: expected SHAPE:DTYPE (e.g. 2x3x32x32:float32) or SHAPE:DTYPE:LO:HI "
            f"(e.g. 2x16:int64:0:1000) or a .npy/.npz file; dtypes: {', '.join(sorted(_DTYPES))}")
    shape = tuple(int(v) for v in parts[0].split("x"))
    if len(parts) == 4:
        try:
            low, high = float(parts[2]), float(parts[3])
        except ValueError:
            raise InputError(f"--input {text!r}: LO and HI must be numbers") from None
        if high < low:
            raise InputError(f"--input {text!r}: HI must not be below LO (LO == HI: every value is LO)")
        return InputSpec(shape, parts[1], low, high)
    return InputSpec(shape, parts[1])


def make_inputs(specs: list[InputSpec], seed: int = 0) -> list[np.ndarray]:
    """Deterministic numpy arrays for the specs (the same arrays feed torch and MindSpore)."""
    return _draw(specs, np.random.default_rng(seed))


def _draw(specs: list[InputSpec], rng) -> list:
    arrays: list = []
    for spec in specs:
        if spec.dtype in _SEQUENCES:  # a list input: its arrays drawn in turn, from the same generator
            arrays.append(_SEQUENCES[spec.dtype](_draw(list(spec.value), rng)))
            continue
        if spec.dtype == "dict":  # a forward that reads its input by key (batch["image"]): drawn in key order
            arrays.append(dict(zip([k for k, _ in spec.value], _draw([v for _, v in spec.value], rng))))
            continue
        if spec.dtype == "object":  # by attribute (data.x): drawn in attribute order
            arrays.append(ObjectInput(**dict(zip([k for k, _ in spec.value], _draw([v for _, v in spec.value], rng)))))
            continue
        if spec.path:
            data = np.load(spec.path, allow_pickle=False)
            arrays.extend(data[k] for k in data.files) if hasattr(data, "files") else arrays.append(data)
            continue
        if spec.dtype == "value":  # a fresh copy each time: a forward that changes a list it is given
            import copy

            arrays.append(copy.deepcopy(spec.value))
            continue
        if spec.dtype == "fn":
            arrays.append(FunctionInput(str(spec.value)))
            continue
        if spec.dtype == "bool":
            arrays.append(rng.random(spec.shape) < 0.5)
        elif spec.low is not None and spec.low == spec.high:  # a constant: a mask of ones, lengths
            arrays.append(np.full(spec.shape, spec.low, dtype="float32" if spec.dtype == "bfloat16" else spec.dtype))
        elif spec.dtype.startswith(("int", "uint")):
            low = int(spec.low) if spec.low is not None else 0
            high = int(spec.high) if spec.high is not None else 10
            arrays.append(rng.integers(low, high, size=spec.shape).astype(spec.dtype))
        else:
            low, high = spec.low, spec.high
            values = rng.uniform(low, high, size=spec.shape) if low is not None else rng.standard_normal(spec.shape)
            dtype = "float32" if spec.dtype == "bfloat16" else spec.dtype
            arrays.append(values.astype(dtype))
    return arrays


_REF_HELP = ("expected FILE.py:Name, package/module.py:Name, PACKAGE_DIR:Name or pkg.module:Name (dotted, found "
             "under --root)")


@dataclass(frozen=True)
class ModelRef:
    text: str  # as given
    name: str
    module: str  # dotted module name ("" = a plain file, imported by path)
    search_path: Path  # goes first on sys.path
    file: Path | None = None
    package_dir: Path | None = None  # the file's package folder (last on sys.path: sibling-style imports)
    root_package: str = ""  # the search path is itself a package of this name (``_root_package``)

    @property
    def where(self) -> str:
        return str(self.file) if self.file is not None else f"module {self.module}"


def parse_model_ref(text: str) -> tuple[Path, str]:
    """``path/model.py:Name`` -> (path, Name) (the file forms only)."""
    ref = resolve_model_ref(text)
    if ref.file is None:
        raise InputError(f"model reference {text!r}: expected FILE.py:Name (a class or a factory function)")
    return ref.file, ref.name


def resolve_model_ref(text: str, root=None) -> ModelRef:
    """Where a reference's module lives and how to import it (nothing is imported here)."""
    target, sep, name = str(text).rpartition(":")
    if not sep or not target or not name.isidentifier():
        raise InputError(f"model reference {text!r}: {_REF_HELP}")
    base = Path(root) if root is not None else Path.cwd()
    path = Path(target)
    if not path.is_absolute() and not path.exists() and (base / path).exists():
        path = base / path
    if target.endswith(".py"):
        if not path.is_file():
            raise InputError(f"model file {target} does not exist")
        return _file_ref(text, path.resolve(), name)
    if target.endswith(".ipynb"):  # its definitions-only module (discovery/notebooks.py), imported by path
        if not path.is_file():
            raise InputError(f"notebook {target} does not exist")
        return ModelRef(text, name, "", path.resolve().parent, path.resolve())
    if path.is_dir():
        if not (path / "__init__.py").is_file():
            raise InputError(f"model reference {text!r}: {target} is a folder without __init__.py; {_REF_HELP}")
        return _file_ref(text, (path / "__init__.py").resolve(), name)
    parts = target.split(".")
    if not all(p.isidentifier() for p in parts):
        raise InputError(f"model reference {text!r}: {_REF_HELP}")
    base = base.resolve()
    for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return _rooted(ModelRef(text, name, target, base, candidate))
    raise InputError(f"model reference {text!r}: no module {target} under {base} (pass --root, the folder that "
                     f"holds {parts[0]}/)")


def _file_ref(text: str, path: Path, name: str) -> ModelRef:
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts or (len(parts) == 1 and folder == path.parent):  # not inside a package
        if path.name == "__init__.py":
            raise InputError(f"model reference {text!r}: {path.parent.name} is not an importable package name")
        return ModelRef(text, name, "", path.parent, path)
    return _rooted(ModelRef(text, name, ".".join(parts), folder, path, path.parent))


def _rooted(ref: ModelRef) -> ModelRef:
    """``ref`` with its search path as a package of its own when the files of its top package reach one level above
    it with a relative import (zijundeng/pytorch-semantic-segmentation's ``models/fcn8s.py``: ``from ..utils import
    get_upsampling_weight``, ``models/__init__.py`` importing every model; the repository root has no ``__init__.py``
    and is meant to be cloned into a project as a package). Imported as ``models.fcn8s``: "attempted relative import
    beyond top-level package". Then the module is ``<root>.models.fcn8s``, ``<root>`` a package over the search path
    (``_root_package``), and ``..utils`` is the root's ``utils``. The same reference otherwise."""
    top = ref.module.split(".")[0]
    if not _reaches_above(str(ref.search_path), top):
        return ref
    alias = _root_alias(ref.search_path)
    return ModelRef(ref.text, ref.name, f"{alias}.{ref.module}", ref.search_path, ref.file, ref.package_dir, alias)


_ABOVE: dict[tuple[str, str], bool] = {}
_RELATIVE = re.compile(r"^[ \t]*from[ \t]+(\.{2,})", re.M)


def _reaches_above(root: str, top: str) -> bool:
    """Does a file of the package (or namespace folder) ``root/top`` import relatively from one level above ``root``
    (``from ..x`` in ``top/a.py``, ``from ...x`` in ``top/sub/b.py``)? A relative import of level L in a module whose
    package has n parts needs L <= n; L == n + 1 reaches the root as a package. Read as text (cheap), once per
    folder."""
    key = (root, top)
    if key not in _ABOVE:
        found = False
        folder = Path(root) / top
        if folder.is_dir():
            for count, path in enumerate(folder.rglob("*.py")):
                if count > 2000:
                    break
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                depth = len(path.relative_to(root).parts) - 1  # the parts of the module's package
                if any(len(m.group(1)) == depth + 1 for m in _RELATIVE.finditer(text)):
                    found = True
                    break
        _ABOVE[key] = found
    return _ABOVE[key]


def _root_alias(root: Path) -> str:
    """The package name a root meant as a package is imported under: its folder's name as an identifier, made
    unique against every module this process has or could import (a root named ``torch`` must not replace it)."""
    import keyword

    name = re.sub(r"\W", "_", Path(root).name) or "root"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "_" + name
    while True:
        held = sys.modules.get(name)
        if held is not None:
            if list(getattr(held, "__path__", None) or []) == [str(root)]:
                return name
        else:
            try:
                free = importlib.util.find_spec(name) is None
            except (ImportError, ValueError):
                free = False
            if free:
                return name
        name = "_" + name


def _root_package(ref: ModelRef) -> None:
    """Make ``ref.root_package`` the package whose one folder is the search path (the root's own files and folders
    are its modules), unless it is that already (a package of another root by that name is forgotten first)."""
    held = sys.modules.get(ref.root_package)
    if held is not None and list(getattr(held, "__path__", None) or []) == [str(ref.search_path)]:
        return
    _forget_package(ref.root_package)
    spec = importlib.machinery.ModuleSpec(ref.root_package, None, is_package=True)
    spec.submodule_search_locations = [str(ref.search_path)]
    sys.modules[ref.root_package] = importlib.util.module_from_spec(spec)


def _same_file(module, path: Path | None) -> bool:
    file = getattr(module, "__file__", None)
    return path is not None and isinstance(file, str) and os.path.realpath(file) == os.path.realpath(path)


def _other_tree(module, expected: Path) -> bool:
    """A module of the project's own files that is not the package (or module) at ``expected`` (a folder, or the
    module file without its suffix): a same-named package of another folder; or a stand-in (:func:`_stand_in`)."""
    if _stand_in(module):
        return True
    locations = list(getattr(module, "__path__", None) or [])
    file = getattr(module, "__file__", None)
    if not locations and isinstance(file, str):
        locations = [os.path.splitext(file)[0]]
    real = os.path.realpath(expected)
    return bool(locations) and all(_project_file(os.path.join(loc, "__init__.py")) for loc in locations) \
        and all(os.path.realpath(loc) != real for loc in locations)


def import_ref(ref: ModelRef, isolated: bool = False):
    """Import the reference's module (see the module docstring for ``isolated``)."""
    if not ref.module:
        return import_file(ref.file, keep=isolated)
    top = ref.module.split(".")[0]
    if ref.root_package:  # the search path is a package itself (``_rooted``)
        if ref.module in sys.modules and not _same_file(sys.modules[ref.module], ref.file):
            _forget_package(top)
        _root_package(ref)
        if isolated:
            _add_path(str(ref.search_path), first=True)
            return _import_module(ref)
        try:
            return _import_module(ref)
        finally:
            _forget_package(top)
    if isolated:
        held = sys.modules.get(top)
        if held is not None and ref.module not in sys.modules and _other_tree(held, ref.search_path / top):
            # the package's name is held by another tree's package of the project, built before in this process
            # (baselines/Informer2020/models, then baselines/SCINet/models: "No module named 'models.SCINet'"):
            # forgotten, this tree's imported afresh, from its own folder first (a recording pass may have put the
            # other tree's folder before it on sys.path)
            _forget_package(top)
            if str(ref.search_path) in sys.path:
                sys.path.remove(str(ref.search_path))
        if ref.module in sys.modules and not _same_file(sys.modules[ref.module], ref.file):
            taken = getattr(sys.modules[ref.module], "__file__", None)
            if not _project_file(taken) and not _stand_in(sys.modules[ref.module]):
                raise InputError(f"{ref.where}: the module name {ref.module} is already taken in this process by "
                                 f"{taken or 'a built-in module'}")
            # another file of the project with the same dotted name (old_version/models/model.py after
            # models/model.py), built before in this process: its package is forgotten, this one imported afresh
            _forget_package(top)
            if str(ref.search_path) in sys.path:
                sys.path.remove(str(ref.search_path))
        _add_path(str(ref.search_path), first=True)
        for folder in _package_folders(ref):
            _add_path(folder, first=False)
        return _import_module(ref)
    # in-process: a fresh copy of the package, never a same-named package imported from another tree before
    _forget_package(top)
    sys.path.insert(0, str(ref.search_path))
    try:
        return _import_module(ref)
    finally:
        sys.path.remove(str(ref.search_path))
        _forget_package(top)


def _stand_in(module) -> bool:
    """A stand-in of ``--stub-missing`` (``mindport.discovery.stubs``) for a module nothing could import: a package
    the repository vendors in a sub-folder (PCT_Pytorch's ``pointnet2_ops_lib/pointnet2_ops``, installed by its
    setup.py) is a stand-in after a root file imported it, until one of its own files is built; then the files are
    the module ("the module name pointnet2_ops.pointnet2_modules is already taken in this process")."""
    kind = type(module)
    return kind.__name__ == "_StubModule" and kind.__module__ == "mindport.discovery.stubs"


def _project_file(file) -> bool:
    """A module file of the user's code, not of an installed library or the standard library."""
    if not isinstance(file, str):
        return False
    real = os.path.realpath(file)
    return not any(part in real for part in ("site-packages", "dist-packages")) and not real.startswith(
        os.path.realpath(sys.base_prefix) + os.sep)


def _package_folders(ref: ModelRef) -> list[str]:
    """The folders last on sys.path for a module of a package: its own package folder (sibling-style imports,
    ``import common`` beside it), then each enclosing package folder up to the search path (exclusive): a package
    folder that also holds the repository's scripts, whose files import its sub-packages by their own top-level name
    (yulunzhang/RCAN's ``RCAN_TrainCode/code/__init__.py`` beside ``main.py``; ``code/model/edsr.py`` does ``from
    model import common``, run from ``code/``). Last on sys.path, they resolve only a name nothing else resolves: an
    installed module or the standard library is never shadowed (``code`` stays the standard library's).

    A folder is left out when it holds a module named like a namespace package (a folder without ``__init__.py``)
    the files import by its top-level name: the search path itself, or one in it (jarviszhb/KnowledgeTracing's
    ``model/SAKT/model.py`` does ``from model.SAKT.attention import Encoder``; with ``model/SAKT`` on sys.path,
    ``model`` was that file, since a regular module anywhere on sys.path wins over a namespace package)."""
    if ref.package_dir is None:
        return []
    out, folder, stop = [str(ref.package_dir)], Path(ref.package_dir).parent, Path(ref.search_path)
    while folder != stop and stop in folder.parents and (folder / "__init__.py").is_file():
        out.append(str(folder))
        folder = folder.parent
    spaces = _namespace_names(stop)
    return [f for f in out if not any((Path(f) / f"{n}.py").is_file() or (Path(f) / n / "__init__.py").is_file()
                                      for n in spaces)]


def _namespace_names(search_path: Path) -> set[str]:
    """The names a namespace package may go by from ``search_path``: its own (a folder without ``__init__.py``,
    imported from its parent) and its folders without ``__init__.py``."""
    names = set() if (search_path / "__init__.py").is_file() else {search_path.name}
    try:
        names |= {p.name for p in search_path.iterdir()
                  if p.is_dir() and p.name.isidentifier() and not (p / "__init__.py").is_file()}
    except OSError:
        pass
    return names


def _add_path(folder: str, first: bool) -> None:
    if folder in sys.path:
        return
    if first:
        sys.path.insert(0, folder)
    else:
        sys.path.append(folder)


def _forget_package(top: str) -> None:
    for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
        del sys.modules[key]


def _import_module(ref: ModelRef):
    import importlib

    try:
        return importlib.import_module(ref.module)
    except Exception as exc:
        if _definitions_retry(exc):  # a project file's module-level code raised: its definitions, once more
            return _import_module(ref)
        bare: set[str] = set()
        failure = exc
        while _bare_packages(ref, failure, bare):
            try:
                return importlib.import_module(ref.module)
            except Exception as again:  # noqa: BLE001 - another package's __init__, or the file's own fault
                failure = again
        raise InputError(f"importing {ref.where} failed: {type(exc).__name__}: {exc}\n{_short_tb()}") from exc


def _bare_packages(ref: ModelRef, exc: BaseException, bare: set[str]) -> bool:
    """After ``exc`` stopped the import of ``ref.module`` in the ``__init__.py`` of packages above the file, before
    the file ran: those packages (with ``bare``, the ones made so before) put in ``sys.modules`` bare, their folder
    and no ``__init__`` run, so that the file imports as itself. Raumberg/crop-circles' ``lib/deeplib/__init__.py``
    imports its files as Python 2 did (``import deepdata``: a top-level module, found through the package folders
    last on sys.path), one of which imports relatively ("attempted relative import with no known parent package"):
    every model under ``lib/`` stopped there, in torch as in the port, their own files importing nothing that fails.
    False (nothing changed) when the file itself ran, or no package above it was where the import stopped."""
    if ref.file is None or not ref.module:
        return False
    files = {os.path.realpath(f.filename) for f in traceback.extract_tb(exc.__traceback__)}
    if os.path.realpath(ref.file) in files:
        return False  # the file's own import failed: its own fault, as in torch
    parts = ref.module.split(".")
    own = ref.file.parent if ref.file.name == "__init__.py" else ref.file
    folders = {".".join(parts[:i]): own.parents[len(parts) - 1 - i] for i in range(1, len(parts))}
    stopped = {name for name, folder in folders.items()
               if os.path.realpath(folder / "__init__.py") in files and name not in bare}
    if not stopped:
        return False
    bare |= stopped
    _forget_package(parts[0])
    if ref.root_package:  # the search path as a package (``_rooted``): itself again, its folder has no __init__
        _root_package(ref)
    for name in folders:  # each package above the file: bare if its __init__ failed, else imported as it is
        if name in bare:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(folders[name])]
            sys.modules[name] = importlib.util.module_from_spec(spec)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, sys.modules[name])
    return True


def _definitions_retry(exc: BaseException) -> bool:
    """In a process that reads scripts as their definitions (discovery.scripts: the builder, the proof's sides), a
    project file whose module-level code raised is read as its definitions and the import made again."""
    from mindport.discovery.scripts import failed_at_import

    return failed_at_import(exc)


def _found_elsewhere(path: Path) -> bool:
    """The file's name, imported now, would be another folder's file: its folder is on sys.path behind a sibling's
    with a file of the same name (agents/DDPG/policies.py and agents/SAC/policies.py, neither a package; the name
    forgotten by a one-off import there). Such a file is imported under a name of its own."""
    import importlib.machinery

    folder = str(path.parent)
    if path.stem in sys.modules or folder not in sys.path:
        return False
    try:
        spec = importlib.machinery.PathFinder.find_spec(path.stem, sys.path)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None)
    return isinstance(origin, str) and os.path.realpath(origin) != os.path.realpath(path)


def import_file(path: Path, keep: bool = False):
    """Import a user's module from its path, with its folder on sys.path (so its sibling imports work).

    ``keep`` (a process of its own): the module is imported under its own name (siblings that import it get the same
    module) and the folder stays on sys.path. Otherwise it gets a unique name and the folder's modules are forgotten
    afterwards, so another file with the same module names can be imported next.
    """
    path = Path(path).resolve()
    folder = str(path.parent)
    source = path
    if path.suffix == ".ipynb":  # a notebook: its definitions only, never its other cells (discovery/notebooks.py);
        # the notebook's folder on sys.path, as a kernel started there has it
        from mindport.discovery.notebooks import definitions_file

        try:
            source = definitions_file(path)
        except OSError as exc:
            raise InputError(f"cannot read the notebook {path}: {exc}") from exc
    elif keep and path.stem.isidentifier() and (path.stem not in sys.modules
                                                or _same_file(sys.modules[path.stem], path)) \
            and not _found_elsewhere(path):
        _add_path(folder, first=True)
        return _import_module(ModelRef(str(path), "", path.stem, path.parent, path))
    stem = re.sub(r"\W", "_", path.stem)  # a notebook's "1 - Neural Bag of Words"
    name = f"_mindport_user_{stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, source)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    # A converted project may reuse its module names (model.py on both sides): import each side fresh.
    # (string comparison: building a Path for each of the ~5000 loaded modules cost 0.1-0.2 s)
    stale = {k: v for k, v in list(sys.modules.items())
             if isinstance(getattr(v, "__file__", None), str) and os.path.dirname(v.__file__) == folder}
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        if _definitions_retry(exc):  # a project file's module-level code raised: its definitions, once more
            sys.modules.pop(name, None)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
                return module
            except Exception as again:
                exc = again
        raise InputError(f"importing {path} failed: {type(exc).__name__}: {exc}\n{_short_tb()}") from exc
    finally:
        if not keep:
            sys.path.remove(folder)
            for key in stale:
                sys.modules.pop(key, None)
    return module


def build_model(ref: str, ctor: str = "", root=None, isolated: bool = False, cwd=None):
    """Import the reference's module and call ``Name(<ctor>)`` in the module's own namespace. ``cwd``: the folder the
    process works in from now on (a repository's code reads ``./tokenizers/...`` from its own root, as it runs
    there: discovery's builder and proofs build each model in its repository's folder, torch's and the converted)."""
    if cwd is not None:
        os.chdir(cwd)
    model_ref = resolve_model_ref(ref, root)
    module = import_ref(model_ref, isolated)
    name = model_ref.name
    if not hasattr(module, name):
        available = sorted(n for n, v in vars(module).items() if isinstance(v, type) or callable(v))
        raise InputError(f"{model_ref.where} has no {name!r}; it defines: "
                         f"{', '.join(a for a in available if not a.startswith('_')) or 'nothing'}")
    namespace = vars(module)
    fixture = _fixture_function(namespace[name])
    if fixture is not None:  # a pytest fixture that returns a model (``@pytest.fixture def wavenet(): return
        namespace = dict(namespace, **{name: fixture})  # WaveNet(...)``): pytest refuses a direct call; its function
    try:  # the user's own constructor text, by design
        return eval(f"{name}({ctor})", namespace, _PortNames(vars(module)))
    except Exception as exc:
        raise _failed_at(f"building {name}({ctor}) from {model_ref.where} failed", exc) from exc


def _fixture_function(value):
    """The function a ``@pytest.fixture`` decorator wrapped (pytest 8.4 and later: ``FixtureFunctionDefinition``;
    earlier: the function itself, marked ``__pytest_wrapped__``), or None for anything else."""
    if type(value).__name__ == "FixtureFunctionDefinition" and hasattr(value, "_get_wrapped_function"):
        return value._get_wrapped_function()  # noqa: SLF001 - pytest's one way to the fixture's own function
    wrapped = getattr(value, "__pytest_wrapped__", None)
    return getattr(wrapped, "obj", None)


class _PortNames(dict):
    """The names a constructor text reads that its module lacks, looked up as the torch names they were: a converted
    module no longer binds ``Conv2d`` from ``from torch.nn import Conv2d`` (it holds the layer class as a value as
    ``TorchConv2d``, or reaches it through ``mp_adapt.api("torch.nn.Conv2d")``), while the constructor text, written
    from the torch module or the repository's own call (high-order-layers-torch's ``convolution=Conv2d``), names it
    so. Only for a name neither the module nor the builtins bind, and only in a process that runs MindSpore."""

    def __init__(self, namespace: dict):
        super().__init__()
        self._namespace = namespace

    def __missing__(self, key: str):
        import builtins

        if key in self._namespace or hasattr(builtins, key) or "mindspore" not in sys.modules:
            raise KeyError(key)
        own = self._namespace.get(f"Torch{key}")
        if isinstance(own, type):
            return own
        from mindport.runtime import adapt

        for torch_name in (f"torch.nn.{key}", f"torch.{key}", f"torch.nn.functional.{key}"):
            try:
                return adapt.api(torch_name)
            except LookupError:
                continue
        raise KeyError(key)


def _failed_at(what: str, exc: BaseException) -> InputError:
    """``what`` failed because of ``exc``: the message names the user's statement that raised (``file:line``, the
    innermost frame outside the frameworks), and so does its MP400 diagnostic."""
    from mindport.errors import Diagnostic
    from mindport.validators.parity.hooks import raise_site

    site = raise_site(exc)
    file, _, line = site.rpartition(":")
    message = f"{what} at {site}: {type(exc).__name__}: {exc}" if site else f"{what}: {type(exc).__name__}: {exc}"
    where = {"file": file, "line": int(line)} if file and line.isdigit() else {"file": "<model>"}
    return InputError(message, [Diagnostic("MP400", f"the statement that raised {type(exc).__name__}", **where)]
                      if site else [])


def _short_tb() -> str:
    return "".join(traceback.format_exc(limit=-3).splitlines(keepends=True)[-6:])
