"""Weight conversion speed and memory on a large torch state_dict.

    .venv/bin/python benchmarks/weights_bench.py [--size-mb 600] [--dir /tmp] [--no-cell]

Prints, for each path, the throughput beside a plain copy of the same file on the same disk (target >= 70 %) and
the peak RSS beside the checkpoint size (target <= 1.3x). Every measurement runs in a fresh subprocess and reads
its own peak RSS from resource.getrusage, so imports and earlier runs do not blur the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDE = 2048  # one Linear(2048, 2048): 16 MiB of float32

CHILD = r"""
import json, os, resource, shutil, sys, time
mode, src, dst, layers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import torch  # every path pays for the same imports before the clock starts
if mode == "cell":
    import mindspore
t0 = time.perf_counter()
if mode == "copy":
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        shutil.copyfileobj(fi, fo, 16 * 1024 * 1024)
elif mode == "stream":
    from mindport.migrator.weights import convert_checkpoint
    convert_checkpoint(src, dst, {"net.": "cell."})
elif mode == "cell":
    import mindspore as ms
    from mindspore import nn
    from mindport.migrator.weights import plan_transfer, write_weights
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = nn.SequentialCell([nn.Dense(%d, %d) for _ in range(layers)])
    t_build = time.perf_counter()
    cell = Net()
    t0 += time.perf_counter() - t_build  # building the random-initialised model is not conversion work
    plan, report = plan_transfer(src, cell)
    assert report.ok, report.diagnostics[:3]
    write_weights(src, plan, dst)
elapsed = time.perf_counter() - t0
print(json.dumps({"seconds": elapsed, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
""" % (SIDE, SIDE)


MAKE = r"""
import sys, torch
src, layers, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gen = torch.Generator().manual_seed(0)
state = {}
for i in range(layers):
    state[f"net.{i}.weight"] = torch.randn(side, side, generator=gen)
    state[f"net.{i}.bias"] = torch.randn(side, generator=gen)
torch.save(state, src)
"""


def child(mode: str, src: Path, dst: Path, layers: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(src), str(dst), str(layers)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=600)
    parser.add_argument("--dir", default=None, help="folder on the disk to measure (default: a temp folder)")
    parser.add_argument("--no-cell", action="store_true", help="skip the path that builds the MindSpore model")
    parser.add_argument("--repeat", type=int, default=2, help="best of N for each timing")
    args = parser.parse_args()

    layers = max(1, round(args.size_mb * 2**20 / (SIDE * SIDE * 4 + SIDE * 4)))
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        folder = Path(folder)
        src = folder / "big.pt"
        # written by a subprocess: a child's ru_maxrss starts from its parent's at fork, so the parent stays small
        subprocess.run([sys.executable, "-c", MAKE, str(src), str(layers), str(SIDE)], check=True)
        size = src.stat().st_size
        print(f"checkpoint: {src.name}, {size / 2**20:.0f} MiB, {2 * layers} tensors")

        def best(mode, dst):
            runs = [child(mode, src, folder / dst, layers) for _ in range(args.repeat)]
            for name in os.listdir(folder):
                if name != src.name:
                    os.unlink(folder / name)
            return min(r["seconds"] for r in runs), max(r["peak_rss"] for r in runs)

        copy_s, copy_rss = best("copy", "copy.bin")
        copy_tp = size / copy_s / 2**20
        print(f"plain copy:             {copy_tp:8.0f} MiB/s  (reference)      peak RSS {copy_rss / 2**20:6.0f} MiB "
              f"(torch imported, nothing loaded)")
        paths = [("stream -> .safetensors", "stream", "out.safetensors"), ("stream -> .ckpt", "stream", "out.ckpt")]
        if not args.no_cell:
            paths.append(("Cell plan -> .ckpt", "cell", "out.ckpt"))
        for label, mode, dst in paths:
            seconds, rss = best(mode, dst)
            tp = size / seconds / 2**20
            print(f"{label:23} {tp:8.0f} MiB/s  = {tp / copy_tp:5.0%} of copy (>= 70%)   "
                  f"peak RSS {rss / 2**20:6.0f} MiB = {rss / size:4.2f}x checkpoint (<= 1.3x)")


if __name__ == "__main__":
    main()
