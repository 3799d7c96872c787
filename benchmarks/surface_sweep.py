"""The full proof of torch's object surface (mindport/proofs/surface.py): every converted layer member read in a torch
program and its conversion (and through the run-time accessor), in PyNative and, inside construct, in GRAPH_MODE;
every Module/Parameter/Tensor program; and the accounting of every member of every mapped layer class.

    python benchmarks/surface_sweep.py              # everything (~10 min on 2 cores: a graph compile per member)
    python benchmarks/surface_sweep.py --no-graph   # PyNative only (~1 min)
    python benchmarks/surface_sweep.py --only torch.nn.Conv

Prints the coverage line (as ``mindport mappings coverage``), then each failing read with its error, and exits 1
when anything failed or is unaccounted. The suite (tests/mappings/test_surface.py) runs a seeded sample.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-graph", action="store_true", help="PyNative reads only")
    parser.add_argument("--only", action="append", default=[], help="layer classes whose name contains this")
    args = parser.parse_args(argv)
    os.environ.setdefault("GLOG_v", "3")
    from mindport.mappings.surface import load_surface
    from mindport.proofs import surface as proofs

    start = time.time()
    counts = proofs.counts()
    print(f"object surface: {counts['members']} members, {counts['proven']} proven, {counts['flagged']} flagged, "
          f"{counts['unsupported']} unsupported, {counts['unaccounted']} unaccounted")
    failures = [f"unaccounted: {layer}.{name}" for layer, names in proofs.unaccounted().items() for name in names]
    members = [(e, n) for e, n in proofs.proven_members() if not args.only or any(o in e.torch for o in args.only)]
    modes = [False] if args.no_graph else [False, True]
    runs = 0
    for graph in modes:
        for entry, name in members:
            if graph and ((entry.torch, name) in proofs.pynative_only() or not proofs.graph_readable(entry, name)):
                continue
            runs += 1
            try:
                proofs.prove_layer_member(entry, name, graph=graph)
            except Exception as exc:  # noqa: BLE001 - every failure is reported
                failures.append(f"{'graph' if graph else 'pynative'}: {entry.torch}.{name}: "
                                f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}")
    for program in sorted(load_surface().programs):
        runs += 1
        try:
            proofs.prove_program(program)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"program {program}: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}")
    print(f"{runs} reads and programs run in {time.time() - start:.0f} s: {runs - len(failures)} pass, "
          f"{len(failures)} fail")
    for line in failures:
        print("  " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
