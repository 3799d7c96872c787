"""A peer project's torch snippets, converted by mindport and run under MindSpore: how many give torch's answer.

PaConvert (torch -> Paddle, https://github.com/PaddlePaddle/PaConvert) tests each API it maps with small torch
programs written by its contributors: ``tests/test_*.py`` hold functions with ``pytorch_code = textwrap.dedent(...)``
and ``obj.run(pytorch_code, ["result", ...], rtol=..., atol=..., check_value=..., check_dtype=..., unsupport=...)``.
This benchmark reads them from a snapshot at run time (a bare git directory as ``fetch`` leaves it; nothing of
theirs is copied into mindport), and for every case:

1. runs the torch snippet (a fresh namespace, seeded) and keeps the compared names' values;
2. converts it with ``mindport.convert_source`` (the real converter);
3. runs the converted code under MindSpore (PyNative, CPU; a fresh namespace, seeded);
4. compares each named value: shapes, values (the snippet's rtol/atol; where they fail, float tolerances of our own:
   float32 rtol 1e-5 atol 1e-6, float16 1e-3/1e-3, bfloat16 1e-2/1e-2, float64 1e-12/1e-15, the atol grown to
   rtol x the tensor's largest magnitude; counted apart as ``loose``), dtypes where the
   snippet checks them (its default), tuples/lists/dicts elementwise, Python scalars by kind (bool/int/float/complex).
   Where values differ, the torch snippet is run again under another seed: when torch itself answers otherwise, the
   snippet draws random numbers and only shapes and dtypes are compared (counted as ``random``).

Classes: ``pass``; ``flagged`` (the converter left a ``# mindport: MP...`` diagnostic or refused); ``raise`` (the
converted code raises, or its process dies or times out, with no diagnostic); ``silent-wrong`` (runs, no diagnostic,
another answer); ``torch-fails`` (the torch snippet itself fails here: CUDA, torchvision, a newer torch ... excluded
from the shares); ``excluded`` (a snippet the extractor cannot rebuild statically, or a text-only check of
PaConvert's output: not measured, counted). Objects neither side can compare (a distribution, a device) are not
compared, as PaConvert's default comparison does not compare them; the passing cases holding one are counted.

Snippets run in ``--jobs`` long-lived worker processes (MindSpore's import is slow), each case with a timeout; a
worker that dies or hangs is replaced and the case is classed by the phase it was in. A case that fails only because
an earlier case of the same worker already started MindSpore's runtime (a device setting at the snippet's top) runs
again in a new worker.

    python benchmarks/peer_snippets.py /work/.mirror/PaddlePaddle+PaConvert --jobs 2 --json build/peer.json
    python benchmarks/peer_snippets.py SNAPSHOT --only 'test_nn_functional_*' --limit 50
    python benchmarks/peer_snippets.py --show build/peer.json --class silent-wrong   # list cases of a saved run

Exit 1 when any case is silent-wrong.
"""
from __future__ import annotations

import argparse
import ast
import collections
import fnmatch
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ("pass", "flagged", "raise", "silent-wrong", "torch-fails", "excluded")
MEASURED = ("pass", "flagged", "raise", "silent-wrong")
MARK = "# mindport: MP"
# MindSpore's errors for a device/runtime setting made after the process ran kernels or set it once
FRESH_ONLY = ("runtime has been initialized", "'mindspore.set_device' can not be modified")
FAMILIES = (  # longest prefix first decides the family of an API name
    "torch.nn.functional", "torch.nn.utils", "torch.nn.init", "torch.nn.modules", "torch.nn.parameter", "torch.nn",
    "torch.Tensor", "torch.linalg", "torch.fft", "torch.special", "torch.distributions", "torch.optim",
    "torch.cuda", "torch.distributed", "torch.utils.data", "torch.utils", "torch.autograd", "torch.amp",
    "torch.backends", "torch.jit", "torch.testing", "torch.random", "torch.sparse", "torchvision", "torch",
)


# ------------------------------------------------------------------------------------------ extraction (stdlib ast)

@dataclass
class Case:
    id: str  # file::function#n
    file: str
    api: str
    code: str
    names: list = field(default_factory=list)
    rtol: float = 1e-6
    atol: float = 0.0
    check_value: bool = True
    check_dtype: bool = True
    check_shape: bool = True
    unsupport: bool = False  # PaConvert's own "we cannot convert this": still a torch program, measured alike
    own_compare: bool = False  # the peer's test class compares its own way (objects): ours compares what it can
    excluded: str = ""  # why this case is not measured


def family(api: str) -> str:
    return next((f for f in FAMILIES if api == f or api.startswith(f + ".")), "other")


def read_snapshot(snapshot: Path) -> dict[str, str]:
    """path -> text of HEAD's tests/*.py in a bare git snapshot (or a plain folder holding tests/)."""
    if (snapshot / "tests").is_dir():
        return {str(p.relative_to(snapshot)): p.read_text(encoding="utf-8") for p in (snapshot / "tests").rglob("*.py")}
    gitdir = next((d for d in (snapshot / "repo", snapshot) if (d / "objects").is_dir()), None)
    if gitdir is None:
        raise SystemExit(f"{snapshot}: neither a bare git snapshot nor a folder with tests/")
    git = ["git", "--git-dir", str(gitdir)]
    listing = subprocess.run([*git, "ls-tree", "-r", "HEAD", "tests"], capture_output=True, text=True,
                             check=True).stdout
    blobs = [(line.split()[2], line.split("\t", 1)[1]) for line in listing.splitlines()
             if line.split()[1] == "blob" and line.endswith(".py")]
    batch = subprocess.run([*git, "cat-file", "--batch"], input="".join(f"{s}\n" for s, _ in blobs).encode(),
                           capture_output=True, check=True).stdout
    files, pos = {}, 0
    for _sha, path in blobs:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        files[path] = batch[pos:pos + size].decode("utf-8", "replace")
        pos += size + 1
    return files


def _literal(node, default=None):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return default


def _string_builders(tree: ast.Module, files: dict[str, str], folder: str) -> dict[str, ast.FunctionDef]:
    """Functions that build snippets (``generate_optimizer_test_code(...)``): defined in the file or imported from a
    sibling module of the snapshot. Only these small pure string builders are ever executed, never a test."""
    found = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            text = files.get(f"{folder}/{node.module.replace('.', '/')}.py")
            if text is None:
                continue
            defs = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
            for alias in node.names:
                if alias.name in defs:
                    found[alias.asname or alias.name] = defs[alias.name]
    return found


def _snippet(value: ast.AST, builders: dict[str, ast.FunctionDef]) -> str | None:
    """The snippet text of ``textwrap.dedent(<string>)``, or None when it is built at run time from unknowns."""
    import textwrap

    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("textwrap.dedent", "dedent") and value.args:
        inner = _snippet(value.args[0], builders)
        return None if inner is None else textwrap.dedent(inner)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in builders:
        args = [_literal(a, KeyError) for a in value.args]
        kwargs = {k.arg: _literal(k.value, KeyError) for k in value.keywords if k.arg}
        if KeyError in args or KeyError in kwargs.values():
            return None
        module = ast.Module(body=[ast.Import(names=[ast.alias("textwrap")]), builders[value.func.id]],
                            type_ignores=[])
        ast.fix_missing_locations(module)
        space: dict = {}
        exec(compile(module, "<peer string builder>", "exec"), space)  # noqa: S102 - a pure string builder
        text = space[value.func.id](*args, **kwargs)
        return text if isinstance(text, str) else None
    return None


def extract(files: dict[str, str]) -> list[Case]:
    """Every ``obj.run(pytorch_code, [...], ...)`` of the top-level tests/test_*.py files."""
    cases: list[Case] = []
    for path in sorted(files):
        folder, _, base = path.rpartition("/")
        if folder != "tests" or not base.startswith("test_"):
            continue
        try:
            tree = ast.parse(files[path])
        except SyntaxError:
            continue
        builders = _string_builders(tree, files, folder)
        custom = {n.name for n in tree.body if isinstance(n, ast.ClassDef)
                  and any(isinstance(b, ast.FunctionDef) and b.name == "compare" for b in n.body)}
        objects: dict[str, tuple[str, bool]] = {}  # variable -> (torch API, compares its own way)
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args
                    and isinstance(node.value.func, ast.Name)):
                api = _literal(node.value.args[0])
                if isinstance(api, str):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            objects[target.id] = (api, node.value.func.id in custom)
        for func in tree.body:
            if not (isinstance(func, ast.FunctionDef) and func.name.startswith("test")):
                continue
            snippets: dict[str, str | None] = {}
            n = 0
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    if isinstance(node.value, (ast.Call, ast.Constant, ast.JoinedStr)):
                        text = _snippet(node.value, builders)
                        if text is not None or "pytorch_code" in node.targets[0].id:
                            snippets[node.targets[0].id] = text
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run"
                        and isinstance(node.func.value, ast.Name) and node.func.value.id in objects and node.args):
                    continue
                api, own_compare = objects[node.func.value.id]
                n += 1
                case = Case(id=f"{base[:-3]}::{func.name}#{n}", file=base, api=api, code="")
                first = node.args[0]
                code = snippets.get(first.id) if isinstance(first, ast.Name) else _snippet(first, builders)
                names = _literal(node.args[1]) if len(node.args) > 1 else None
                kw = {k.arg: k.value for k in node.keywords if k.arg}
                if names is None and "compared_tensor_names" in kw:
                    names = _literal(kw["compared_tensor_names"])
                case.names = list(names) if isinstance(names, (list, tuple)) else []
                for name in ("rtol", "atol"):
                    if name in kw and isinstance(_literal(kw[name]), (int, float)):
                        setattr(case, name, float(_literal(kw[name])))
                for name in ("check_value", "check_dtype", "check_shape", "unsupport"):
                    if name in kw and isinstance(_literal(kw[name]), bool):
                        setattr(case, name, _literal(kw[name]))
                if code is None:
                    case.excluded = "snippet built at run time from values the extractor cannot know"
                else:
                    case.code = code
                    case.own_compare = own_compare
                    if "expect_paddle_code" in kw and not case.names:
                        case.excluded = "a text-only check of PaConvert's output (nothing to run or compare)"
                cases.append(case)
    return cases


# ------------------------------------------------------------------------------------------ values and comparison

def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "").lower().replace("bool_", "bool")


def plain(value, depth: int = 0):
    """A value as plain data: ("array", ndarray, dtype name, is_numpy) / ("seq", kind, [...]) / ("dict", [(k, v)]) /
    ("scalar", kind, value) / ("dtype", name) / ("str", s) / ("none",) / ("object", type name)."""
    import numpy as np

    if depth > 6:
        return ("object", "nested too deep")
    if value is None:
        return ("none",)
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "detach") and hasattr(value, "numpy"):
        t = value.detach().cpu()
        if str(t.layout) != "torch.strided":
            t = t.to_dense()
        t = t.resolve_conj().resolve_neg()
        name = _dtype_name(t.dtype)
        if name == "bfloat16":
            t = t.float()
        return ("array", t.numpy().copy(), name, False)
    if hasattr(value, "asnumpy"):  # a MindSpore Tensor or Parameter (whose class lives in module "abc")
        name = _dtype_name(value.dtype)
        v = value.float() if name == "bfloat16" else value
        return ("array", np.asarray(v.asnumpy()).copy(), name, False)
    if isinstance(value, np.ndarray):
        return ("array", value.copy(), str(value.dtype), True)
    if isinstance(value, (bool, np.bool_)):
        return ("scalar", "bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("scalar", "int", int(value))
    if isinstance(value, (float, np.floating)):
        return ("scalar", "float", float(value))
    if isinstance(value, (complex, np.complexfloating)):
        return ("scalar", "complex", complex(value))
    if isinstance(value, str):
        return ("str", value)
    if module.startswith("torch") and type(value).__name__ == "device":
        return ("str", str(value))  # mindport writes a device as its designation ("cpu", "cuda:0")
    if module.startswith("torch") and type(value).__name__ == "dtype" or module.startswith("mindspore") and (
            type(value).__name__ in ("Type", "Number", "Bool", "Int", "UInt", "Float", "Complex", "BFloat")):
        return ("dtype", _dtype_name(value))
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return ("dtype", np.dtype(value).name)
    if isinstance(value, dict):
        return ("dict", [(plain(k, depth + 1), plain(v, depth + 1)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):  # torch.Size, named tuples (torch.return_types) and lists alike
        return ("seq", [plain(v, depth + 1) for v in value])
    return ("object", f"{module}.{type(value).__name__}")


# our float tolerances (rtol, atol), tried where the snippet's fail; the atol grows with the tensor's largest magnitude
# (rtol x max |torch|): a kernel's rounding error scales with the values it reduces, not with each element (MindSpore's
# log_softmax is 3e-6 off on -0.0486 when the row holds -3.05), so an element near 0 is not held to its own size
LOOSE = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6), "complex64": (1e-5, 1e-6),
         "float64": (1e-12, 1e-15), "complex128": (1e-12, 1e-15)}


def compare(t, m, case: dict, where: str = "") -> tuple[str | None, set]:
    """(what differs or None, notes: "loose" when values matched only with our looser float tolerance, "object" when
    an object neither side can compare was met)."""
    import numpy as np

    if t[0] != m[0]:
        return f"{where or 'value'}: torch gives {_kind(t)}, MindSpore gives {_kind(m)}", set()
    kind = t[0]
    if kind == "array":
        a, b = t[1], m[1]
        if t[3] != m[3]:
            return f"{where or 'value'}: torch gives {'a numpy array' if t[3] else 'a tensor'}, MindSpore " \
                   f"{'a numpy array' if m[3] else 'a tensor'}", set()
        if case["check_dtype"] and t[2] != m[2]:
            return f"{where or 'value'}: dtype {t[2]} vs {m[2]}", set()
        if not case["check_shape"]:
            a, b = a.reshape(-1), b.reshape(-1)
        if not case["check_value"]:
            return (None if a.shape == b.shape else f"{where or 'value'}: shape {a.shape} vs {b.shape}"), set()
        if a.shape != b.shape:
            return f"{where or 'value'}: shape {a.shape} vs {b.shape}", set()
        return _close(a, b, case, where, t[2])
    if kind == "seq":
        if len(t[1]) != len(m[1]):
            return f"{where or 'value'}: {len(t[1])} items vs {len(m[1])}", set()
        notes = set()
        for i, (x, y) in enumerate(zip(t[1], m[1])):
            why, more = compare(x, y, case, f"{where}[{i}]")
            if why:
                return why, notes
            notes |= more
        return None, notes
    if kind == "dict":
        return compare(("seq", [("seq", [k, v]) for k, v in t[1]]), ("seq", [("seq", [k, v]) for k, v in m[1]]),
                       case, where)
    if kind == "scalar":
        if t[1] != m[1]:
            return f"{where or 'value'}: Python {t[1]} vs {m[1]} ({t[2]!r} vs {m[2]!r})", set()
        if not case["check_value"]:
            return None, set()
        return _close(np.asarray(t[2]), np.asarray(m[2]), case, where, t[1])
    if kind == "object":  # PaConvert does not compare these either: both sides have one
        return None, {"object"}
    return (None if t == m or not case["check_value"] and kind == "str" else
            f"{where or 'value'}: {t[1:]!r} vs {m[1:]!r}"[:300]), set()


def _kind(p) -> str:
    return {"array": "an array", "seq": "a sequence", "dict": "a dict", "scalar": f"a Python {p[1]}" if p[0] ==
            "scalar" else "", "dtype": "a dtype", "str": "a str", "none": "None"}.get(p[0], f"an object {p[-1]}")


def _close(a, b, case: dict, where: str, dtype: str) -> tuple[str | None, bool]:
    import numpy as np

    if a.dtype == bool or b.dtype == bool or a.dtype.kind in "iuSUO" and b.dtype.kind in "iuSUO":
        same = a.shape == b.shape and bool(np.all(a == b))
        return (None if same else f"{where or 'value'}: {_diff(a, b)}"), set()
    try:
        if np.allclose(a, b, rtol=case["rtol"], atol=case["atol"], equal_nan=True):
            return None, set()
        rtol, atol = LOOSE.get(dtype, (case["rtol"], case["atol"]))
        finite = np.abs(a[np.isfinite(a)]) if a.size else np.zeros(0)
        atol = max(atol, rtol * float(finite.max()) if finite.size else 0.0)
        if np.allclose(a, b, rtol=max(rtol, case["rtol"]), atol=max(atol, case["atol"]), equal_nan=True):
            return None, {"loose"}
    except (TypeError, ValueError) as exc:
        return f"{where or 'value'}: not comparable ({exc})", set()
    return f"{where or 'value'}: {_diff(a, b)}", set()


def _diff(a, b) -> str:
    import numpy as np

    try:
        d = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
        return f"max abs diff {np.nanmax(d) if d.size else 0:.3g} (torch {np.array2string(a.reshape(-1)[:4])} " \
               f"vs {np.array2string(b.reshape(-1)[:4])})"
    except (TypeError, ValueError):
        return f"torch {a.reshape(-1)[:4]} vs {b.reshape(-1)[:4]}"


# ------------------------------------------------------------------------------------------ the worker

def _seed(seed: int = 0) -> None:
    import numpy as np
    import torch

    import mindspore as ms

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    ms.set_seed(seed)


def _torch_values(case: dict, seed: int) -> dict:
    import warnings

    _reset()
    _seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            space = _exec(case["code"], f"<torch {case['id']}>")
        missing = [n for n in case["names"] if n not in space]
        if missing:
            raise NameError(f"the snippet binds no {missing[0]!r}")
        return {n: plain(space[n]) for n in case["names"]}
    finally:
        _reset()


def _random(case: dict, expected: dict) -> bool:
    """The snippet draws random numbers: torch itself answers otherwise under another seed."""
    try:
        again = _torch_values(case, 1)
    except BaseException:  # noqa: BLE001
        return False
    return any(compare(expected[n], again[n], {**case, "check_dtype": False}, n)[0] for n in case["names"])


def _reset() -> None:
    """What a snippet may have changed globally."""
    import torch

    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    try:
        torch.set_default_device(None)
    except (AttributeError, RuntimeError):
        pass


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:240] if text else ''}"


def _exec(code: str, filename: str) -> dict:
    import linecache

    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    space = {"__name__": "__main__", "__file__": filename}
    exec(compile(code, filename, "exec"), space)  # noqa: S102 - the benchmark's purpose
    return space


def run_case(case: dict, say) -> dict:
    """One case in this process: torch, convert, MindSpore, compare. ``say(phase)`` reports progress."""
    import warnings

    from mindport import convert_source

    out = {"id": case["id"]}
    say("torch")
    try:
        expected = _torch_values(case, 0)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and friends from a snippet included
        return {**out, "class": "torch-fails", "reason": _first_line(exc)}
    say("convert")
    try:
        result = convert_source(case["code"], f"{case['file']}")
    except Exception as exc:  # noqa: BLE001
        return {**out, "class": "raise", "reason": f"the converter failed: {_first_line(exc)}"}
    flags = sorted({d.code for d in result.diagnostics if d.severity in ("error", "warning")})
    if MARK in result.code and not flags:
        flags = ["MP?"]
    out["converted"] = result.code
    out["flags"] = flags
    diag = "; ".join(f"{d.code} {d.message}" for d in result.diagnostics if d.severity in ("error", "warning"))
    say("mindspore")
    _seed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            space = _exec(result.code, f"<mindspore {case['id']}>")
        missing = [n for n in case["names"] if n not in space]
        if missing:
            raise NameError(f"the converted code binds no {missing[0]!r}")
        got = {n: plain(space[n]) for n in case["names"]}
    except BaseException as exc:  # noqa: BLE001
        if flags:
            return {**out, "class": "flagged", "reason": diag[:400], "then": f"raises {_first_line(exc)}"}
        return {**out, "class": "raise", "reason": _first_line(exc)}
    finally:
        _reset()
    notes = set()
    for name in case["names"]:
        why, more = compare(expected[name], got[name], case, name)
        if why and case["check_value"] and _random(case, expected):
            # a random draw: the two frameworks' generators differ, so shapes and dtypes are what can agree
            case = {**case, "check_value": False}
            notes.add("random")
            why, more = compare(expected[name], got[name], case, name)
        notes |= more
        if why:
            if flags:
                return {**out, "class": "flagged", "reason": diag[:400], "then": f"differs: {why}"}
            return {**out, "class": "silent-wrong", "reason": why}
    if flags:
        return {**out, "class": "flagged", "reason": diag[:400], "then": "matches"}
    return {**out, "class": "pass", "notes": sorted(notes)}


def worker_main() -> None:
    """Cases as JSON lines on stdin; ``{"phase": ...}`` and result lines on the original stdout. The snippets' own
    output (Python's and C's) goes to /dev/null."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    sys.stderr = sys.stdout
    os.environ.setdefault("GLOG_v", "3")
    import torch

    import mindspore as ms

    torch.set_num_threads(1)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    from mindport import convert_source

    convert_source("import torch\n")  # load the tables before the first case
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        case = json.loads(line)
        result = run_case(case, lambda phase: proto.write(json.dumps({"phase": phase}) + "\n"))
        proto.write(json.dumps(result) + "\n")


# ------------------------------------------------------------------------------------------ the parent

class Worker:
    def __init__(self, env: dict) -> None:
        self.env = env
        self.proc = None
        self.lines: queue.Queue = queue.Queue()

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], env=self.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = queue.Queue()
        proc, lines = self.proc, self.lines

        def pump():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self._read(600.0, until="ready")

    def _read(self, timeout: float, until: str):
        deadline = time.time() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.05, deadline - time.time()))
            except queue.Empty:
                return None
            if line is None:
                return None
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if until in rec:
                return rec
            if "phase" in rec:
                self.phase = rec["phase"]

    def run(self, case: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.phase = "start"
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc = None
            return self.run(case, timeout)
        rec = self._read(timeout, until="id")
        if rec is not None:
            text = f"{rec.get('reason', '')} {rec.get('then', '')}"
            if any(m in text for m in FRESH_ONLY) and not case.get("fresh"):
                # process-wide settings (device, runtime) a script makes at its start: not a port's failure when an
                # earlier snippet of this worker already ran kernels, so the case runs again in a new worker
                self.stop()
                return self.run({**case, "fresh": True}, timeout)
            return rec
        died = self.proc.poll() is not None
        self.stop()
        what = f"the worker died (exit {self.proc_code})" if died else f"timeout after {timeout:.0f} s"
        cls = "torch-fails" if self.phase in ("start", "torch") else "raise"
        return {"id": case["id"], "class": cls, "reason": f"{what} in the {self.phase} phase"}

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc_code = self.proc.returncode
            self.proc = None


def run_all(cases: list[Case], jobs: int, timeout: float, progress: bool = True) -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "GLOG_v": "3",
           "OMP_NUM_THREADS": "1"}
    todo: queue.Queue = queue.Queue()
    results: dict[str, dict] = {}
    for c in cases:
        if c.excluded:
            results[c.id] = {"id": c.id, "class": "excluded", "reason": c.excluded}
        else:
            todo.put(asdict(c))
    total, lock, start = todo.qsize(), threading.Lock(), time.time()

    def serve():
        w = Worker(env)
        try:
            while True:
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    return
                rec = w.run(case, timeout)
                with lock:
                    results[case["id"]] = rec
                    done = sum(1 for r in results.values() if r["class"] != "excluded")
                    if progress and (done % 200 == 0 or done == total):
                        print(f"  {done}/{total} cases, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
        finally:
            w.stop()

    threads = [threading.Thread(target=serve) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def summarize(cases: list[Case], results: dict[str, dict]) -> dict:
    by_class = collections.Counter(r["class"] for r in results.values())
    fam: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    api = {c.id: c.api for c in cases}
    for r in results.values():
        fam[family(api.get(r["id"], ""))][r["class"]] += 1
    measured = sum(by_class[k] for k in MEASURED)
    flagged_then = collections.Counter((r.get("then") or "").split(":")[0].split(" ")[0] for r in results.values()
                                       if r["class"] == "flagged")
    return {"cases": len(results), "measured": measured, "classes": dict(by_class),
            "shares": {k: round(100 * by_class[k] / measured, 1) if measured else 0.0 for k in MEASURED},
            "loose": sum(1 for r in results.values() if "loose" in r.get("notes", ())),
            "objects": sum(1 for r in results.values() if "object" in r.get("notes", ())),
            "random": sum(1 for r in results.values() if "random" in r.get("notes", ())),
            "flagged_then": dict(flagged_then),
            "families": {f: dict(c) for f, c in sorted(fam.items(), key=lambda kv: -sum(kv[1].values()))}}


def show(summary: dict) -> None:
    c = summary["classes"]
    print(f"cases {summary['cases']}: measured {summary['measured']}, torch-fails {c.get('torch-fails', 0)}, "
          f"excluded {c.get('excluded', 0)}")
    for k in MEASURED:
        print(f"  {k:13s}{c.get(k, 0):6d}  {summary['shares'][k]:5.1f} %")
    print(f"  (pass with our looser float tolerance only: {summary['loose']}; pass holding an object neither side "
          f"compares: {summary['objects']}; random draws, compared by shape and dtype: {summary.get('random', 0)};\n"
          f"   flagged whose code then "
          f"{', '.join(f'{k or chr(63)} {v}' for k, v in sorted(summary['flagged_then'].items()))})")
    print("\nby API family (measured cases):")
    print(f"  {'family':22s}{'pass':>7s}{'flagged':>9s}{'raise':>7s}{'silent':>8s}{'pass %':>8s}"
          f"{'torch-fails':>13s}{'excluded':>10s}")
    for f, k in summary["families"].items():
        m = sum(k.get(x, 0) for x in MEASURED)
        share = f"{100 * k.get('pass', 0) / m:.0f}" if m else "-"
        print(f"  {f:22s}{k.get('pass', 0):7d}{k.get('flagged', 0):9d}{k.get('raise', 0):7d}"
              f"{k.get('silent-wrong', 0):8d}{share:>8s}{k.get('torch-fails', 0):13d}{k.get('excluded', 0):10d}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", nargs="?", help="the PaConvert snapshot (bare git dir, its parent, or a folder)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--limit", type=int, help="at most this many cases (a seeded sample)")
    parser.add_argument("--only", action="append", default=[],
                        help="test files (test_abs) or case ids matching this glob; repeatable")
    parser.add_argument("--api", action="append", default=[], help="cases whose API starts with this; repeatable")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write every case's class and reason here")
    parser.add_argument("--show", help="print the cases of a saved --json run (with --class) instead of running")
    parser.add_argument("--again", help="run only the cases of this saved --json run (with --class: of that class)")
    parser.add_argument("--class", dest="cls", action="append", default=[],
                        help="with --show or --again: only this class; repeatable")
    parser.add_argument("--code", action="store_true", help="with --show: print the snippet and converted code")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    if args.show:
        data = json.loads(Path(args.show).read_text())
        for rec in data["cases"]:
            if args.cls and rec["class"] not in args.cls:
                continue
            if args.only and not any(fnmatch.fnmatch(rec["id"], p) or fnmatch.fnmatch(rec["id"].split("::")[0], p)
                                     for p in args.only):
                continue
            print(f"{rec['class']:12s} {rec['id']}  [{rec.get('api')}]  {rec.get('reason', '')}"
                  f"{'  -> ' + rec['then'] if rec.get('then') else ''}")
            if args.code:
                print(rec.get("code", ""), "\n--- converted ---\n", rec.get("converted", ""), "\n")
        show(data["summary"])
        return 0
    if not args.snapshot:
        parser.error("give the snapshot (or --show FILE)")
    start = time.time()
    cases = extract(read_snapshot(Path(args.snapshot)))
    if args.only:
        cases = [c for c in cases if any(fnmatch.fnmatch(c.id, p) or fnmatch.fnmatch(c.file[:-3], p)
                                         for p in args.only)]
    if args.api:
        cases = [c for c in cases if any(c.api.startswith(a) for a in args.api)]
    if args.again:
        wanted = {r["id"] for r in json.loads(Path(args.again).read_text())["cases"]
                  if not args.cls or r["class"] in args.cls}
        cases = [c for c in cases if c.id in wanted]
    if args.limit is not None and len(cases) > args.limit:
        cases = sorted(random.Random(args.seed).sample(cases, args.limit), key=lambda c: c.id)
    print(f"{len(cases)} cases from the snapshot ({time.time() - start:.1f} s)", file=sys.stderr)
    results = run_all(cases, args.jobs, args.timeout)
    summary = summarize(cases, results)
    show(summary)
    print(f"\n{summary['cases']} cases in {time.time() - start:.0f} s on {args.jobs} workers")
    if args.json:
        by_id = {c.id: c for c in cases}
        recs = [{**results[c.id], "api": c.api, "family": family(c.api), "code": by_id[c.id].code,
                 "names": c.names} for c in cases]
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"summary": summary, "cases": recs}, indent=0))
    return 1 if summary["classes"].get("silent-wrong") else 0


if __name__ == "__main__":
    sys.exit(main())
