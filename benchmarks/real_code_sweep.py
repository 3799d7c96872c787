"""How much of a real repository converts: ``mindport convert`` on a snapshot, then what is left.

The snapshot is a bare git directory as ``fetch`` leaves it (``/work/.mirror/OWNER+NAME/repo``, or its parent), whose
HEAD's ``.py`` files are copied to a temporary tree, or a plain source folder. The tree is converted with the
``mindport convert`` command (``--format json``), and the script prints:

* API sites converted and left (the MP1xx diagnostics, per code), and the share left;
* half-converted lines: a flagged simple statement (``# mindport: MP1xx``) that references a name the converted file
  binds to MindSpore or mindport's runtime (``nn`` of ``from mindspore import nn``, ``ops``, ``ms``, ``mp_*``), or a part
  of a flagged compound statement's header (a test, a parameter, a base ...) that references both a MindSpore name and
  a torch name: such a line is neither torch nor MindSpore. A flagged statement must keep its torch meaning (fully
  qualified torch names);
* converted files still importing torch (or torchvision/torchaudio), and the torch imports no diagnostic explains
  (an import is explained when a flagged statement uses a name it binds, or the import line itself is flagged);
* imports of torch-based third-party packages (timm, torchvision, einx, transformers ...) with no diagnostic;
* with ``--import-check``, each converted module imported in a fresh interpreter (the converted tree on ``sys.path``):
  how many import, and the most common errors.

* with ``--build EXPR`` (and ``--build-import``, ``--input-shape``), a model built from the torch tree and from the
  converted tree in two fresh interpreters, the torch weights moved with ``mindport.transfer_weights``, and the outputs
  compared (rel 1e-4). ``--stub PKG`` stands in for a package that is not installed (a permissive stub module, on
  both sides), e.g. torchvision for timm.

Usage: ``PYTHONPATH=. .venv/bin/python benchmarks/real_code_sweep.py /work/.mirror/huggingface+pytorch-image-models
[--jobs 2] [--keep DIR] [--import-check] [--stub torchvision --build-import 'import timm'
--build "timm.create_model('resnet18')"]``
"""
from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH_ROOTS = ("torch", "torchvision", "torchaudio")
MARK = "# mindport: MP"


def extract_snapshot(snapshot: Path, dest: Path) -> int:
    """HEAD's .py files of a bare git snapshot into dest (a blob missing from the snapshot is skipped); returns the
    number of files written."""
    gitdir = next((d for d in (snapshot / "repo", snapshot) if (d / "objects").is_dir()), None)
    if gitdir is None:
        raise SystemExit(f"{snapshot}: not a bare git snapshot (no objects/ folder)")
    git = ["git", "--git-dir", str(gitdir)]
    listing = subprocess.run([*git, "ls-tree", "-r", "HEAD"], capture_output=True, text=True, check=True).stdout
    blobs = [(line.split()[2], line.split("\t", 1)[1]) for line in listing.splitlines()
             if line.split()[1] == "blob" and line.endswith(".py")]
    batch = subprocess.run([*git, "cat-file", "--batch"], input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
                           capture_output=True, check=True).stdout
    pos = written = 0
    for _sha, path in blobs:
        header_end = batch.index(b"\n", pos)
        header = batch[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # "<sha> missing"
        size = int(header[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        pos += size + 1
        written += 1
    return written


# ------------------------------------------------------------------------------------------ the output checks

def _flag_lines(code: str) -> dict[int, str]:
    """line -> the mindport comment on it."""
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT and MARK in tok.string:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _import_bindings(tree: ast.Module) -> dict[str, str]:
    """Name -> module of every import in the file (any depth; converted code imports at the top)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                bound[a.asname or a.name] = f"{node.module}.{a.name}"
    return bound


def _is_ms(module: str) -> bool:
    return module.split(".")[0] == "mindspore" or module.startswith("mindport.runtime")


def _is_torch(module: str) -> bool:
    return module.split(".")[0] in TORCH_ROOTS


_HEADER_FIELDS = {
    ast.If: ("test",), ast.While: ("test",), ast.For: ("target", "iter"), ast.AsyncFor: ("target", "iter"),
    ast.With: ("items",), ast.AsyncWith: ("items",), ast.FunctionDef: ("decorator_list", "args", "returns"),
    ast.AsyncFunctionDef: ("decorator_list", "args", "returns"), ast.ClassDef: ("decorator_list", "bases", "keywords"),
    ast.Try: (), ast.Match: ("subject",),
}


def _local_names(func: ast.AST) -> set[str]:
    names = set()
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = func.args
        names |= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


class FileCheck:
    """The figures of one converted file."""

    def __init__(self, code: str, local: frozenset[str] = frozenset()) -> None:
        self.half: list[tuple[int, str]] = []  # (line, text) of half-converted flagged statements
        self.flagged_statements = 0
        self.torch_imports: list[tuple[int, str, bool]] = []  # (line, module, diagnosed)
        self.package_imports: list[tuple[int, str, bool]] = []
        try:
            tree = ast.parse(code)
        except SyntaxError:
            self.syntax_error = True
            return
        self.syntax_error = False
        lines = code.splitlines()
        flags = _flag_lines(code)
        bound = _import_bindings(tree)
        ms_names = {n for n, m in bound.items() if _is_ms(m)}
        torch_names = {n for n, m in bound.items() if _is_torch(m)}
        used_by_flagged: set[str] = set()

        def header_parts(stmt):
            """A simple statement is one part; a compound statement's header, one part per test, iterable, with
            item, decorator, parameter (annotation and default), base or keyword."""
            fields = _HEADER_FIELDS.get(type(stmt))
            if fields is None:
                return [stmt]
            out = []
            for name in fields:
                value = getattr(stmt, name, None)
                if isinstance(value, ast.arguments):
                    params = [*value.posonlyargs, *value.args, *value.kwonlyargs, value.vararg, value.kwarg]
                    defaults = [*value.defaults, *[d for d in value.kw_defaults if d is not None]]
                    out.extend(p.annotation for p in params if p is not None and p.annotation is not None)
                    out.extend(defaults)
                else:
                    items = value if isinstance(value, list) else [value] if value is not None else []
                    out.extend(i.context_expr if isinstance(i, ast.withitem) else i for i in items)
            if isinstance(stmt, ast.Try):
                out.extend(h.type for h in stmt.handlers if h.type is not None)
            return out

        def names_in(node) -> set[str]:
            return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

        def flagged(stmt) -> bool:
            if type(stmt) in _HEADER_FIELDS:
                first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
                line = first - 1
                while line >= 1 and lines[line - 1].strip().startswith("#"):
                    if line in flags:
                        return True
                    line -= 1
                body = getattr(stmt, "body", None)
                end = body[0].lineno - 1 if body else stmt.lineno
                return any(first <= n <= end for n in flags)
            return any(stmt.lineno <= n <= stmt.end_lineno for n in flags)

        def visit(body, locals_: set[str]):
            for stmt in body:
                if flagged(stmt):
                    self.flagged_statements += 1
                    simple = type(stmt) not in _HEADER_FIELDS
                    for part in header_parts(stmt):
                        refs = names_in(part) - locals_
                        used_by_flagged.update(refs)
                        # a simple statement must be all torch; a header part must not mix torch and MindSpore
                        if refs & ms_names and (simple or refs & torch_names):
                            self.half.append((part.lineno, lines[part.lineno - 1].strip()))
                            break
                inner = locals_
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inner = locals_ | _local_names(stmt)
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, name, []) or [], inner)
                for handler in getattr(stmt, "handlers", []) or []:
                    visit(handler.body, inner)
                for case in getattr(stmt, "cases", []) or []:
                    visit(case.body, inner)

        visit(tree.body, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                items = [(a.name, a.asname or a.name.split(".")[0]) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                items = [(node.module, a.asname or a.name) for a in node.names]
            else:
                continue
            line_flagged = any(node.lineno <= n <= node.end_lineno for n in flags)
            for module, name in items:
                diagnosed = line_flagged or name in used_by_flagged
                if _is_torch(module):
                    self.torch_imports.append((node.lineno, module, diagnosed))
                elif module.split(".")[0] in TORCH_PACKAGES and module.split(".")[0] not in local:
                    self.package_imports.append((node.lineno, module, diagnosed))


def _torch_packages() -> tuple[str, ...]:
    try:
        sys.path.insert(0, str(ROOT))
        from mindport.names import TORCH_PACKAGES as known

        return tuple(p for p in known if p not in TORCH_ROOTS)
    except ImportError:
        return ("timm", "einx", "transformers", "diffusers", "torchmetrics", "lightning", "pytorch_lightning")


TORCH_PACKAGES = _torch_packages()


_STUBS = r"""
import importlib.abc, importlib.machinery, sys, types


class _Meta(type):  # a stub class: any attribute is another stub class, so `class T(transforms.ToTensor)` works
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (_Stub,), {})

    def __hash__(cls):
        return id(cls)


class _Stub(metaclass=_Meta):
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return self


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Meta(name, (_Stub,), {})
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


STUBS = [r for r in sys.argv[2].split(",") if r]
if STUBS:
    sys.meta_path.insert(0, _Finder(STUBS))
"""

_IMPORT_SCRIPT = _STUBS + r"""
import importlib, json, collections
sys.path.insert(0, sys.argv[1])
mods = json.loads(sys.stdin.read())
ok, errors = 0, collections.Counter()
for m in mods:
    try:
        importlib.import_module(m)
        ok += 1
    except BaseException as exc:  # noqa: BLE001 - a converted module may raise anything
        errors[f"{type(exc).__name__}: {str(exc).splitlines()[0][:140] if str(exc) else ''}"] += 1
print(json.dumps({"ok": ok, "errors": errors.most_common(8)}))
"""

# One side of a build check: build the model from the tree on sys.path, run it on the saved input; the torch side
# saves its weights, input and output, the MindSpore side loads the weights (mindport.transfer_weights) and compares.
_BUILD_SCRIPT = _STUBS + r"""
import json
import numpy as np
tree, side, imports, expr, shape, work = sys.argv[1], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
sys.path.insert(0, tree)
namespace = {}
exec(imports, namespace)
try:
    if side == "torch":
        import torch
        torch.manual_seed(0)
        model = eval(expr, namespace).eval()
        x = np.random.default_rng(0).standard_normal([int(n) for n in shape.split(",")]).astype(np.float32)
        with torch.no_grad():
            y = model(torch.tensor(x))
        torch.save(model.state_dict(), f"{work}/state.pt")
        np.save(f"{work}/x.npy", x)
        np.save(f"{work}/y.npy", y.numpy())
        print(json.dumps({"ok": True}))
    else:
        import mindspore as ms
        import torch
        from mindport import transfer_weights
        model = eval(expr, namespace)
        model.set_train(False)
        transfer_weights(torch.load(f"{work}/state.pt"), model)
        z = model(ms.Tensor(np.load(f"{work}/x.npy"))).asnumpy()
        y = np.load(f"{work}/y.npy")
        rel = float(np.abs(z - y).max() / (np.abs(y).max() + 1e-12)) if z.shape == y.shape else None
        print(json.dumps({"ok": rel is not None and rel < 1e-4, "rel": rel}))
except BaseException as exc:  # noqa: BLE001
    print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"}))
"""


def _env() -> dict:
    """This checkout's mindport first on the path of the interpreters the checks start."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in [str(ROOT), os.environ.get("PYTHONPATH", "")] if x))


def import_check(out: Path, files: list[str], stubs: str) -> dict:
    mods = []
    for rel in files:
        parts = Path(rel).with_suffix("").parts
        if all((out.joinpath(*parts[:i]) / "__init__.py").exists() for i in range(1, len(parts))):
            mods.append(".".join(p for p in parts if p != "__init__") or parts[0])
    done = subprocess.run([sys.executable, "-c", _IMPORT_SCRIPT, str(out), stubs], input=json.dumps(mods), text=True,
                          capture_output=True, timeout=3600, env=_env())
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {"ok": 0, "errors": [[done.stderr[-300:], len(mods)]]}
    result["tried"] = len(mods)
    return result


def build_check(src: Path, out: Path, imports: str, expr: str, shape: str, stubs: str) -> dict:
    """Build ``expr`` from the torch tree and from the converted tree, move the weights, compare the outputs."""
    with tempfile.TemporaryDirectory() as work:
        results = {}
        for side, tree in (("torch", src), ("mindspore", out)):
            done = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT, str(tree), stubs, side, imports, expr, shape,
                                   work], capture_output=True, text=True, timeout=1800, env=_env())
            try:
                results[side] = json.loads(done.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                results[side] = {"ok": False, "error": done.stderr.strip().splitlines()[-1:]}
            if not results[side].get("ok"):
                break
        return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path, help="a fetched snapshot (bare git dir or its parent) or a source folder")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the source and converted trees in this folder")
    parser.add_argument("--import-check", action="store_true", help="import every converted module (slow)")
    parser.add_argument("--stub", action="append", default=[],
                        help="a package that is not installed (torchvision): imported as a permissive stub in the "
                             "import and build checks (repeatable)")
    parser.add_argument("--build-import", default="", help="statement run before --build, e.g. 'import timm'")
    parser.add_argument("--build", action="append", default=[],
                        help="an expression building a model from the tree (torch) and the converted tree (MindSpore), "
                             "e.g. \"timm.create_model('resnet18')\"; the weights move, the outputs are compared")
    parser.add_argument("--input-shape", default="1,3,64,64", help="the model input for --build (float32)")
    parser.add_argument("--show", type=int, default=5, help="examples of half-converted lines to print")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="mindport-sweep-"))
    src, out = work / "src", work / "out"
    try:
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        if (args.snapshot / "objects").is_dir() or (args.snapshot / "repo" / "objects").is_dir():
            extract_snapshot(args.snapshot, src)
        else:
            shutil.copytree(args.snapshot, src, ignore=shutil.ignore_patterns(".git"))
        cmd = [sys.executable, "-c", "import sys; from mindport.cli import main; sys.exit(main())", "convert",
               str(src), "-o", str(out), "--jobs", str(args.jobs), "--format", "json"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=_env())
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:])
            return 2
        report = json.loads((out / "mindport-report.json").read_text(encoding="utf-8"))
        local = frozenset(p.name if p.is_dir() else p.stem for p in src.iterdir()
                          if p.suffix == ".py" or p.is_dir() and any(p.rglob("*.py")))
        files = report["files"]
        lines = sum(f.get("lines", 0) for f in files)
        converted = sum(f.get("converted_sites", 0) for f in files)
        codes = collections.Counter(d["code"] for f in files for d in f["diagnostics"])
        site_codes = {c: n for c, n in codes.items() if c.startswith("MP1")}
        left = sum(site_codes.values())
        total = converted + left
        print(f"snapshot: {args.snapshot} ({len(files)} files, {lines:,} lines)")
        print(f"command: mindport convert SRC -o OUT --jobs {args.jobs} --format json")
        print(f"API sites: {total:,}; converted {converted:,}; left {left:,} "
              f"({100 * left / max(total, 1):.1f} %): "
              + ", ".join(f"{c} {n:,}" for c, n in sorted(site_codes.items())))
        other = {c: n for c, n in codes.items() if not c.startswith("MP1")}
        if other:
            print("other diagnostics: " + ", ".join(f"{c} {n:,}" for c, n in sorted(other.items())))

        half_total = flagged_total = syntax = 0
        converted_files = torch_files = 0
        torch_imports = torch_undiagnosed = pkg_imports = pkg_undiagnosed = 0
        examples: list[str] = []
        undiagnosed_examples: list[str] = []
        for f in files:
            path = out / f["path"]
            if not path.suffix == ".py" or f["status"] not in ("converted", "unchanged", "cached"):
                continue
            check = FileCheck(path.read_text(encoding="utf-8", errors="replace"), local)
            if check.syntax_error:
                syntax += 1
                continue
            half_total += len(check.half)
            flagged_total += check.flagged_statements
            examples.extend(f"{f['path']}:{n}: {text[:150]}" for n, text in check.half)
            if f["status"] == "converted":
                converted_files += 1
                torch_files += bool(check.torch_imports)
            torch_imports += len(check.torch_imports)
            bad = [(n, m) for n, m, ok in check.torch_imports if not ok]
            torch_undiagnosed += len(bad)
            undiagnosed_examples.extend(f"{f['path']}:{n}: {m}" for n, m in bad)
            pkg_imports += len(check.package_imports)
            pkg_undiagnosed += sum(not ok for *_, ok in check.package_imports)
        print(f"flagged statements: {flagged_total:,}; half-converted lines: {half_total:,}")
        for line in examples[:args.show]:
            print(f"    {line}")
        print(f"converted files still importing torch: {torch_files}/{converted_files}; torch imports left "
              f"{torch_imports:,}, undiagnosed {torch_undiagnosed:,}")
        for line in undiagnosed_examples[:args.show]:
            print(f"    {line}")
        print(f"imports of torch-based packages (not the project's own): {pkg_imports:,}, "
              f"undiagnosed {pkg_undiagnosed:,}")
        if syntax:
            print(f"converted files that do not parse: {syntax}")
        stubs = ",".join(args.stub)
        if args.import_check:
            result = import_check(out, [f["path"] for f in files if f["path"].endswith(".py")], stubs)
            print(f"import check: {result['ok']}/{result['tried']} converted modules import"
                  + (f" (stubbed: {stubs})" if stubs else ""))
            for message, n in result["errors"]:
                print(f"    {n:5d}  {message}")
        if args.build:
            passed = 0
            for expr in args.build:
                result = build_check(src, out, args.build_import, expr, args.input_shape, stubs)
                ms_side = result.get("mindspore", {})
                passed += bool(ms_side.get("ok"))
                status = ("PASS" if ms_side.get("ok") else "FAIL") + (f" rel {ms_side['rel']:.2e}" if ms_side.get("rel")
                                                                       is not None else "")
                error = next((r["error"] for r in result.values() if r.get("error")), "")
                side = next((k for k, r in result.items() if r.get("error")), "")
                print(f"    build {expr}: {status}" + (f" ({side}: {error})" if error else ""))
            print(f"build check: {passed}/{len(args.build)} models build, load the torch weights and match (rel 1e-4)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
