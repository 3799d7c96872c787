"""Conversion throughput on a generated corpus of model code.

The corpus (>= 100,000 lines by default) is built from the zoo fixtures (tests/zoo/models) with variation: class
and function names suffixed per copy, integer literals shifted, several fixtures per file. It prints:

* cold conversion: ``mindport.convert_path(src, dst, jobs=N)`` (a multiprocessing pool over ``convert_source``
  when ``convert_path`` is unavailable), in lines/s wall;
* warm re-run on the unchanged tree (content-hash cache), in lines/s;
* ``ast.parse`` throughput on the same corpus (one process), and the ratio conversion / parse;
* ``libcst.parse_module`` + code generation throughput (one process): a rewriter that parses every file it changes
  with LibCST cannot pass this times the number of jobs; that is why the converter has a fast path on ``ast``;
* the fast path's share (files and top-level statements it hands to LibCST) and its one-core speed, with the
  per-call memo shared across files as in a run, and cleared for every file (the corpus repeats its fixtures'
  calls more than a real repository does, so the second figure is the conservative one).

Usage: ``.venv/bin/python benchmarks/convert_bench.py [--lines 100000] [--jobs 2] [--profile]``
"""
from __future__ import annotations

import argparse
import ast
import cProfile
import io
import os
import pstats
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo" / "models"


def _vary(code: str, suffix: str, rng: random.Random) -> str:
    names = re.findall(r"^(?:class|def) (\w+)", code, flags=re.M)
    for name in sorted(set(names), key=len, reverse=True):
        code = re.sub(rf"\b{name}\b", f"{name}{suffix}", code)
    return re.sub(r"(?<![\w.])([2-9]|1[0-9])(?![\w.])", lambda m: str(int(m.group(1)) + rng.randint(0, 3)), code)


def build_corpus(dest: Path, min_lines: int, seed: int = 0) -> tuple[int, int]:
    rng = random.Random(seed)
    fixtures = [p.read_text(encoding="utf-8") for p in sorted(ZOO.glob("*.py"))]
    lines = files = 0
    while lines < min_lines:
        chosen = rng.sample(fixtures, 4)
        code = "\n\n".join(_vary(c, f"_{files}_{i}", rng) for i, c in enumerate(chosen))
        pkg = dest / f"pkg{files // 50}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / f"model_{files}.py").write_text(code, encoding="utf-8")
        lines += code.count("\n") + 1
        files += 1
    return lines, files


def _convert_file(args):
    src, dst = args
    from mindport import convert_source

    result = convert_source(Path(src).read_text(encoding="utf-8"), src)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    Path(dst).write_text(result.code, encoding="utf-8")
    return len(result.diagnostics)


def convert_tree(src: Path, dst: Path, jobs: int):
    try:
        from mindport import convert_path
    except (ImportError, AttributeError):
        convert_path = None
    if convert_path is not None:
        return convert_path(src, dst, jobs=jobs)
    from multiprocessing import Pool

    pairs = [(str(p), str(dst / p.relative_to(src))) for p in sorted(src.rglob("*.py"))]
    with Pool(jobs) as pool:
        return sum(pool.map(_convert_file, pairs, chunksize=8))


def profile_convert_source(src: Path, n_files: int = 40) -> str:
    from mindport import convert_source

    texts = [p.read_text(encoding="utf-8") for p in sorted(src.rglob("*.py"))[:n_files]]
    convert_source(texts[0])  # warm: registry load, imports
    prof = cProfile.Profile()
    prof.enable()
    for t in texts:
        convert_source(t)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
    return out.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="also cProfile convert_source on 40 files")
    parser.add_argument("--keep", help="build the corpus here and keep it")
    args = parser.parse_args(argv)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mindport-bench-"))
    src, dst = work / "src", work / "out"
    shutil.rmtree(work, ignore_errors=True)
    lines, files = build_corpus(src, args.lines)
    texts = [p.read_text(encoding="utf-8") for p in sorted(src.rglob("*.py"))]
    print(f"corpus: {lines:,} lines in {files} files ({src}); {os.cpu_count()} CPUs, --jobs {args.jobs}")

    t0 = time.perf_counter()
    for t in texts:
        ast.parse(t)
    parse_s = time.perf_counter() - t0
    parse_rate = lines / parse_s

    import libcst as cst

    t0 = time.perf_counter()
    for t in texts:
        cst.parse_module(t).code
    cst_s = time.perf_counter() - t0
    cst_rate = lines / cst_s

    t0 = time.perf_counter()
    convert_tree(src, dst, args.jobs)
    cold_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    convert_tree(src, dst, args.jobs)
    warm_s = time.perf_counter() - t0

    cold, warm = lines / cold_s, lines / warm_s
    print(f"ast.parse (1 process):     {parse_rate:12,.0f} lines/s  ({parse_s:.2f} s)")
    print(f"libcst parse+print (1 p.): {cst_rate:12,.0f} lines/s  ({cst_s:.2f} s)   "
          f"a LibCST-only rewriter's ceiling with --jobs {args.jobs}: {cst_rate * args.jobs:,.0f} lines/s")
    print(f"convert, cold (jobs={args.jobs}):   {cold:12,.0f} lines/s  ({cold_s:.2f} s)   "
          f"= {cold / parse_rate:.3f} x ast.parse   target >= 20,000")
    print(f"convert, re-run (cached):  {warm:12,.0f} lines/s  ({warm_s:.2f} s)   "
          f"= {warm / parse_rate:.3f} x ast.parse   target >= 200,000")
    if args.profile:
        print(profile_convert_source(src))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
