"""The full differential sweep of the mapping tables (mindport/proofs/differential/): every case of every entry.

    python benchmarks/differential_sweep.py                 # all entries, 2 worker processes
    python benchmarks/differential_sweep.py --only torch.nn.functional --json build/sweep.json
    python benchmarks/differential_sweep.py --compare build/sweep-before.json build/sweep.json

Prints: cases generated, rejected by torch (not cases), cases run, outcomes by kind (pass, flagged, and the
mismatches: value, dtype, shape, count, inplace, ms_error, convert_error, crash), the entries with mismatches, and
the stale ``sweep.known`` variants (documented, yet every case of them now passes: the entry's docs are out of date).
Entries run in worker processes; an entry that kills its worker (a MindSpore kernel crash) or runs past --timeout is
reported as ``crash`` and the sweep goes on. ``--json`` keeps every outcome for ``--compare``.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SILENT = ("value", "dtype", "shape", "count", "inplace", "convert_error")  # runs without a word, gives another answer
LOUD = ("ms_error", "crash")  # MindSpore raises, or its process dies, where torch computes
MISMATCHES = SILENT + LOUD


def _entry_names(only: list[str], variants=(), labels=()) -> list[str]:
    from mindport.mappings import load_registry
    from mindport.proofs.differential import cases

    registry, seen, names = load_registry(), set(), []
    for entry in registry:
        if id(entry) in seen:
            continue
        seen.add(id(entry))
        if only and not any(o in entry.torch for o in only):
            continue
        if any((not variants or c.variant in variants) and (not labels or c.label.startswith(tuple(labels)))
               for c in cases(entry, registry)):
            names.append(entry.torch)
    return names


def _worker(names_file: str, out_file: str, limit: int | None, seed: int, variants=(), labels=()) -> None:
    os.environ.setdefault("GLOG_v", "3")
    import torch

    from mindport.mappings import load_registry
    from mindport.proofs.differential import sweep_entry

    torch.set_num_threads(1)
    registry = load_registry()
    todo = json.loads(Path(names_file).read_text())
    with open(out_file, "a", encoding="utf-8") as out:
        def progress(i, outcome):
            out.write(json.dumps({"case": i} if outcome is None else {"done": i, "outcome": outcome}) + "\n")
            out.flush()

        for name in todo["names"]:
            out.write(json.dumps({"start": name}) + "\n")
            out.flush()
            known = {int(i): outcome for i, outcome in todo["known"].get(name, {}).items()}
            report = sweep_entry(registry.lookup(name), registry, limit=limit, seed=seed, known=known,
                                 progress=progress, variants=variants, labels=labels)
            out.write(json.dumps({"entry": name, "outcomes": report.outcomes}) + "\n")
            out.flush()


def _read(out_file: Path) -> tuple[dict, str | None, int | None, dict]:
    """(finished entries, the entry under way, the case under way, that entry's finished cases)."""
    done, started, case, cases = {}, None, None, {}
    if out_file.exists():
        for line in out_file.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "start" in rec:
                started, case, cases = rec["start"], None, {}
            elif "case" in rec:
                case = rec["case"]
            elif "done" in rec:
                cases[str(rec["done"])], case = rec["outcome"], None
            else:
                done[rec["entry"]] = rec["outcomes"]
                started, case, cases = None, None, {}
    return done, started, case, cases


def sweep(names: list[str], workers: int, limit: int | None, seed: int, timeout: float,
          variants=(), labels=()) -> dict[str, list]:
    """Outcomes per entry, run in ``workers`` processes that are restarted past a crash or a timeout."""
    tmp = Path(tempfile.mkdtemp(prefix="mindport-sweep-"))
    chunks = [names[i::workers] for i in range(workers)]
    results: dict[str, list] = {}
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "GLOG_v": "3"}
    running = []
    for i, chunk in enumerate(chunks):
        if chunk:
            running.append({"id": i, "todo": list(chunk), "proc": None})
    while running:
        for w in running:
            if w["proc"] is None:
                w["restarts"] = w.get("restarts", -1) + 1
                names_file = tmp / f"w{w['id']}-{w['restarts']}.txt"
                out_file = tmp / f"w{w['id']}-{w['restarts']}.jsonl"
                names_file.write_text(json.dumps({"names": w["todo"], "known": w.setdefault("known", {})}))
                out_file.write_text("")
                cmd = [sys.executable, __file__, "--worker", str(names_file), str(out_file), "--seed", str(seed)]
                if limit is not None:
                    cmd += ["--limit", str(limit)]
                cmd += [a for v in variants for a in ("--variant", v)] + [a for v in labels for a in ("--label", v)]
                w.update(proc=subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
                         out=out_file, last=time.time(), seen=None)
        time.sleep(1.0)
        for w in list(running):
            done, started, case, finished = _read(w["out"])
            mark = (len(done), started, case, len(finished))
            if mark != w["seen"]:
                w["seen"], w["last"] = mark, time.time()
            code = w["proc"].poll()
            stuck = code is None and started is not None and time.time() - w["last"] > timeout
            if code is None and not stuck:
                continue
            if stuck:
                w["proc"].kill()
                w["proc"].wait()
            results.update(done)
            w["todo"] = [n for n in w["todo"] if n not in done]
            if started is not None and started in w["todo"]:
                why = f"timeout after {timeout:.0f} s" if stuck else f"the process died (exit {code})"
                known = w["known"].setdefault(started, {})
                known.update(finished)
                if case is None:  # died outside a case: give the entry up
                    results[started] = [["*", "*", "crash", why]]
                    w["todo"].remove(started)
                else:  # the case that killed it is a crash; the entry's other cases run in a new worker
                    known[str(case)] = ["*", "*", "crash", why]
            w["proc"] = None
            if not w["todo"]:
                running.remove(w)
            print(f"  {len(results)}/{len(names)} entries", file=sys.stderr, flush=True)
    return results


def stale_known(results: dict[str, list]) -> dict[str, list[str]]:
    """Input variants an entry documents in ``sweep.known`` whose cases all ran and none mismatched: the entry's
    documentation is stale (MindSpore or mindport changed); remove the variant from the entry."""
    from mindport.mappings import load_registry

    registry, stale = load_registry(), {}
    for name, outcomes in results.items():
        entry = registry.lookup(name)
        known = entry.example.sweep.get("known", {}) if entry is not None and entry.example else {}
        for variant in known:
            kinds = [kind for _label, v, kind, _detail in outcomes if v in (variant, "*") and kind != "rejected"]
            if kinds and not any(k.startswith("known:") or k in MISMATCHES for k in kinds):
                stale.setdefault(name, []).append(variant)
    return stale


def summarize(results: dict[str, list]) -> dict:
    kinds = collections.Counter()
    by_entry: dict[str, collections.Counter] = {}
    for name, outcomes in results.items():
        for _label, _variant, kind, _detail in outcomes:
            known = kind.startswith("known:")
            if known:
                kind = kind[len("known:"):]
                kinds["known"] += 1
                kinds["known_silent"] += kind in SILENT
            kinds[kind] += 1
            if kind in MISMATCHES:
                by_entry.setdefault(name, collections.Counter())[kind] += 1
    generated = sum(n for kind, n in kinds.items() if kind not in ("known", "known_silent"))  # tallies, not cases
    return {"entries": len(results), "generated": generated, "rejected_by_torch": kinds["rejected"],
            "run": generated - kinds["rejected"], "kinds": dict(kinds),
            "mismatches": sum(kinds[k] for k in MISMATCHES),
            "silent": sum(kinds[k] for k in SILENT), "loud": sum(kinds[k] for k in LOUD),
            "entries_with_silent": sum(1 for c in by_entry.values() if any(k in SILENT for k in c)),
            "entries_with_mismatches": len(by_entry),
            "by_entry": {n: dict(c) for n, c in sorted(by_entry.items())},
            "stale_known": stale_known(results)}


def show(summary: dict, details: dict[str, list] | None = None, top: int = 0) -> None:
    k = summary["kinds"]
    print(f"entries swept           {summary['entries']}")
    print(f"cases generated         {summary['generated']}")
    print(f"rejected by torch       {summary['rejected_by_torch']}  (not cases)")
    print(f"cases run               {summary['run']}")
    print(f"  pass                  {k.get('pass', 0)}")
    print(f"  flagged (MP1xx)       {k.get('flagged', 0)}")
    print(f"  mismatches            {summary['mismatches']}  in {summary['entries_with_mismatches']} entries")
    print(f"    silent              {summary['silent']}  in {summary['entries_with_silent']} entries")
    for kind in SILENT:
        print(f"      {kind:18s}{k.get(kind, 0)}")
    print(f"    loud                {summary['loud']}")
    for kind in LOUD:
        print(f"      {kind:18s}{k.get(kind, 0)}")
    print(f"    of which known      {k.get('known', 0)}  (input variants an entry documents in sweep.known; "
          f"{k.get('known_silent', 0)} of them silent)")
    print(f"  silent, not documented  {summary['silent'] - k.get('known_silent', 0)}")
    stale = summary.get("stale_known", {})
    print(f"  stale known variants    {sum(map(len, stale.values()))}  (documented in sweep.known, every case of "
          f"them now passes: remove them from the entry)")
    for name, variants in sorted(stale.items()):
        print(f"      {name}: {', '.join(variants)}")
    if details and top:
        print("\nentries with mismatches (first detail of each kind):")
        for name, counts in summary["by_entry"].items():
            print(f"  {name}: {counts}")
            shown = set()
            for label, variant, kind, detail in details[name]:
                if kind in MISMATCHES and kind not in shown:
                    shown.add(kind)
                    print(f"      {kind} [{label} {variant}] {detail[:top]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], help="entries whose torch name contains this")
    parser.add_argument("--entries", help="a file of exact torch names, one a line (e.g. the entries that had mismatches)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases per entry (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one case may take")
    parser.add_argument("--variant", action="append", default=[],
                        help="only the cases of this input variant (complex64, float16, empty, ...)")
    parser.add_argument("--label", action="append", default=[],
                        help="only the cases whose label starts with this (example/ = the example's argument set)")
    parser.add_argument("--json", help="write every outcome here")
    parser.add_argument("--details", type=int, default=160, help="print mismatch details (characters; 0 = none)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --json files")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(*args.worker, args.limit, args.seed, args.variant, args.label)
        return 0
    if args.compare:
        for label, path in zip(("before", "after"), args.compare):
            data = json.loads(Path(path).read_text())
            print(f"== {label}: {path}")
            show(summarize(data["results"]))
        return 0
    sys.path.insert(0, str(ROOT))
    start = time.time()
    names = _entry_names(args.only, args.variant, args.label)
    if args.entries:
        wanted = set(Path(args.entries).read_text().split())
        names = [n for n in names if n in wanted]
    results = sweep(names, args.workers, args.limit, args.seed, args.timeout, args.variant, args.label)
    summary = summarize(results)
    show(summary, results, args.details)
    print(f"\n{summary['run']} cases in {time.time() - start:.0f} s on {args.workers} workers")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"summary": summary, "results": results}))
    return 1 if summary["silent"] else 0


if __name__ == "__main__":
    sys.exit(main())
