"""Which mapping entries compile in a static graph: every supported entry's proof (its example, converted by the real
converter) compiled with ``ms.jit`` as GRAPH_MODE does, and compared with torch.

In ``make test`` only the runtime targets are proven in a graph (tests/mappings/test_proofs.py); this sweep covers
every entry and call style, to find what a converted model hits when it is compiled: a MindSpore method that takes
torch's keywords in PyNative but picks a kernel a CPU graph lacks (``x.split(2, dim=1)``: SplitTensor), or an
overload a graph resolves otherwise (``x.transpose(1, 2)``).

Usage: ``PYTHONPATH=. .venv/bin/python benchmarks/graph_sweep.py [--styles keyword,positional] [--only torch.Tensor.]
[--json out.json]``. Prints the failing entries grouped by the first line of their error.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--styles", default="keyword,positional", help="call styles to compile (comma-separated)")
    parser.add_argument("--only", default="", help="entries whose torch name starts with this")
    parser.add_argument("--batch", type=int, default=16, help="cases per compiled graph")
    parser.add_argument("--json", default="", help="write every failure here")
    args = parser.parse_args(argv)

    from mindport.mappings import load_registry
    from mindport.proofs.function import applicable_styles, prepare, prove_graph_batch

    os.chdir(tempfile.mkdtemp(prefix="graph-sweep-"))  # a failed compile writes rank_0/om/ into the working folder
    wanted = [s for s in args.styles.split(",") if s]
    seen, items = set(), []
    for entry in load_registry():
        if id(entry) in seen or not entry.supported or entry.example is None or entry.example.proof or entry.graph:
            continue
        seen.add(id(entry))
        if not entry.torch.startswith(args.only) or entry.target("nn") is None:
            continue
        styles = applicable_styles(entry)
        for style in [s for s in wanted if s in styles] or styles[:1]:
            items.append((entry, style))
    print(f"{len(items)} cases ({len(seen)} entries with an example)", flush=True)
    started = time.perf_counter()
    failures, passed = [], 0
    for i in range(0, len(items), args.batch):
        chunk, cases = [], []
        for entry, style in items[i:i + args.batch]:
            try:
                cases.append(prepare(entry, style, importable=True))
                chunk.append((entry, style))
            except Exception as exc:  # noqa: BLE001 - counted below
                failures.append((entry.torch, style, f"prepare: {type(exc).__name__}: {exc}"))
        for (entry, style), result in zip(chunk, prove_graph_batch(cases)):
            if isinstance(result, BaseException):
                failures.append((entry.torch, style, f"{type(result).__name__}: {result}"))
            else:
                passed += 1
        print(f"  {min(i + args.batch, len(items))}/{len(items)} cases, {len(failures)} failing, "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    groups = collections.defaultdict(list)
    for torch_name, style, error in failures:
        lines = [ln for ln in error.splitlines() if ln.strip() and not ln.startswith("-")]
        key = next((ln for ln in lines if "Unsupported op" in ln), lines[0] if lines else error)[:150]
        groups[key].append(f"{torch_name}[{style}]")
    print(f"\n{passed}/{len(items)} cases compile and match in a graph; {len(failures)} fail:")
    for key, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):4d}  {key}\n        {', '.join(names[:12])}{' ...' if len(names) > 12 else ''}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([{"torch": t, "style": s, "error": e[:2000]} for t, s, e in failures], handle, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
