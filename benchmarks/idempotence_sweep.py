"""Idempotence sweep: convert generated programs twice and count crashes and second-pass changes.

* torch-style programs (``tests/converter/torch_programs.py``: models, forward chains, helpers, training steps):
  converting the converted code must change nothing;
* programs that mention no torch name (same module, ``plain_program``): the output must be the input, byte for
  byte, and the file must not count as changed;
* hypothesmith programs (``--hypothesmith N``, grammar-generated Python with torch imported): no crash, converting
  the output again changes nothing.

Prints the figures and, for each failure class (the first changed line of the second pass, numbers masked), its
count and the shortest example. Deterministic: program ``i`` comes from ``random.Random(seed * 1_000_003 + i)``.

Usage: ``.venv/bin/python benchmarks/idempotence_sweep.py [--count 2000] [--plain 500] [--hypothesmith 300]
[--seed 0] [--jobs 2] [--skip-known]``
"""
from __future__ import annotations

import argparse
import collections
import difflib
import multiprocessing
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "converter"))
sys.path.insert(0, str(ROOT))

from torch_programs import known_bug_templates, plain_program, torch_program  # noqa: E402


def check(code: str, plain: bool = False) -> tuple[str, str] | None:
    """None when the program behaves; else (failure class, detail)."""
    import ast

    from mindport.migrator import convert_source

    try:
        ast.parse(code)
    except SyntaxError as exc:
        return "the generator wrote invalid Python", str(exc)
    try:
        first = convert_source(code, "gen.py")
    except Exception as exc:  # noqa: BLE001 - a crash is what the sweep counts
        return f"crash: {type(exc).__name__}", str(exc)[:200]
    if plain:
        if first.code != code or first.changed:
            matcher = difflib.SequenceMatcher(None, code, first.code, autojunk=False)
            changes = [(code[i1:i2], first.code[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]
            if changes and all(not a.strip() and not b.strip() for a, b in changes):
                return "plain file changed: blank lines lost (LibCST footer)", f"{code[-40:]!r} -> {first.code[-40:]!r}"
            return "plain file changed", _first_change(code, first.code)
        return None
    try:
        ast.parse(first.code)
    except SyntaxError as exc:
        return "output does not parse", str(exc)
    try:
        second = convert_source(first.code, "gen.py")
    except Exception as exc:  # noqa: BLE001
        return f"crash on the second pass: {type(exc).__name__}", str(exc)[:200]
    if second.code != first.code:
        return "second pass changed", _first_change(first.code, second.code)
    return None


def _first_change(before: str, after: str) -> str:
    removed = [line[1:] for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
             if line.startswith("+") and not line.startswith("+++")]
    return f"{(removed or [''])[0].strip()!r} -> {(added or [''])[0].strip()!r}"


def _class(kind: str, detail: str) -> str:
    """The failure class: the crash type, or what the second pass did to the first changed line (a comment it
    added, or the changed part of the line), numbers masked."""
    if not kind.startswith("second pass") and not kind.startswith("plain"):
        return kind
    if "LibCST footer" in kind:
        return kind
    before, _, after = detail.partition(" -> ")
    if "# mindport: " in after and "# mindport: " not in before:
        return kind + ": adds # mindport: " + re.sub(r"\d+", "N", after.split("# mindport: ", 1)[1].rstrip("'\""))
    matcher = difflib.SequenceMatcher(None, before, after)
    parts = [f"{before[i1:i2]!r}->{after[j1:j2]!r}" for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]
    return kind + ": " + re.sub(r"\d+", "N", ", ".join(parts))[:160]


def _run(args: tuple[str, int, int, bool]):
    kind, seed, index, skip_known = args
    rng = random.Random(seed * 1_000_003 + index)
    if kind == "torch":
        code = torch_program(rng, known_bug_templates() if skip_known else ())
    else:
        code = plain_program(rng, spaces_in_footer=not skip_known)
    return kind, index, code, check(code, plain=kind == "plain")


def _hypothesmith(count: int, seed: int) -> list:
    import ast

    import hypothesmith
    from hypothesis import HealthCheck, given, settings

    found = []
    prefix = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_node())
    def sweep(code):
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            return
        found.append((prefix + code, check(prefix + code)))

    sweep()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="torch-style programs")
    parser.add_argument("--plain", type=int, default=500, help="programs without torch")
    parser.add_argument("--hypothesmith", type=int, default=300, help="hypothesmith programs (torch imported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-known", action="store_true",
                        help="leave out what triggers the known bugs (torch_programs.KNOWN_CONVERTER_BUGS), as the "
                             "test suite does")
    args = parser.parse_args()
    started = time.perf_counter()
    jobs = [(kind, args.seed, i, args.skip_known) for kind, count in (("torch", args.count), ("plain", args.plain))
            for i in range(count)]
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(_run, jobs, chunksize=20)
    hyp = _hypothesmith(args.hypothesmith, args.seed) if args.hypothesmith else []
    classes: dict[str, list] = collections.defaultdict(list)
    totals = collections.Counter()
    for kind, index, code, failure in results:
        totals[kind] += 1
        if failure:
            totals[f"{kind} failed"] += 1
            if failure[0].startswith("crash"):
                totals[f"{kind} crashes"] += 1
            classes[_class(*failure)].append((len(code), f"{kind} #{index}", code, failure[1]))
    for code, failure in hyp:
        totals["hypothesmith"] += 1
        if failure:
            totals["hypothesmith failed"] += 1
            if failure[0].startswith("crash"):
                totals["hypothesmith crashes"] += 1
            classes[_class(*failure)].append((len(code), "hypothesmith", code, failure[1]))
    seconds = time.perf_counter() - started
    print(f"idempotence sweep (seed {args.seed}{', known bugs left out' if args.skip_known else ''}), "
          f"{seconds:.0f} s")
    for kind in ("torch", "plain", "hypothesmith"):
        if totals[kind]:
            print(f"  {kind:13} {totals[kind]:5} programs: {totals[kind + ' crashes']} crashes, "
                  f"{totals[kind + ' failed'] - totals[kind + ' crashes']} changed on the second pass / not "
                  f"byte-identical")
    for name, cases in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        size, where, code, detail = min(cases)
        print(f"\n[{len(cases)}] {name}\n  shortest: {where}: {detail}")
        if "-v" in sys.argv:
            print("  " + code.replace("\n", "\n  "))
    sys.exit(1 if classes else 0)


if __name__ == "__main__":
    main()
