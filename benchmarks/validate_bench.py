"""How much does `validate` cost beyond the work any parity check must do?

Two fresh processes on the same small ResNet-style model (converted by mindport):
  baseline: import torch + mindspore, build both models, one torch forward, one MindSpore PyNative forward and
            one GRAPH_MODE forward (compile + run), nothing else;
  validate: `mindport.validators.parity.compare.validate(...)` end to end (weights, hooks on every layer, comparisons,
            localisation, graph mode) plus writing the JSON and HTML reports.
overhead = (validate - baseline) / validate; the target is <= 25 %. Each side runs --repeat times; the minimum
counts (the machine may be shared).

    .venv/bin/python benchmarks/validate_bench.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TORCH_MODEL = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return self.relu(x + self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))))


class Net(nn.Module):
    def __init__(self, num_classes=10, width=32, depth=4):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))
'''

BASELINE = '''
import json, sys, time
t0 = time.perf_counter()
import numpy as np, torch, mindspore as ms
t1 = time.perf_counter()
sys.path.insert(0, {folder!r})
import model_torch, model_ms
torch.manual_seed(0); ms.set_seed(0)
tm = model_torch.Net().eval(); cell = model_ms.Net(); cell.set_train(False)
x = np.random.default_rng(0).standard_normal({shape}).astype(np.float32)
t2 = time.perf_counter()
with torch.no_grad():
    tm(torch.from_numpy(x)).numpy()
t3 = time.perf_counter()
cell(ms.Tensor(x)).asnumpy()
t4 = time.perf_counter()
ms.set_context(mode=ms.GRAPH_MODE); cell(ms.Tensor(x)).asnumpy(); ms.set_context(mode=ms.PYNATIVE_MODE)
t5 = time.perf_counter()
print(json.dumps({{"imports": t1 - t0, "build": t2 - t1, "torch_forward": t3 - t2, "ms_forward": t4 - t3,
                   "ms_graph_forward": t5 - t4, "total": t5 - t0}}))
'''

FULL = '''
import json, sys, time
t0 = time.perf_counter()
from mindport.validators.parity.compare import validate, write_reports
r = validate({torch_ref!r}, {ms_ref!r}, inputs=[{spec!r}])
write_reports(r, [{json_out!r}, {html_out!r}])
t1 = time.perf_counter()
print(json.dumps({{"ok": r.ok, "layers": len(r.layers), "timings": r.timings, "total": t1 - t0}}))
'''


def run(code: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in [str(REPO), os.environ.get("PYTHONPATH", "")] if x))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from mindport.migrator import convert_source

    shape = (8, 3, 32, 32)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "model_torch.py").write_text(TORCH_MODEL)
        (folder / "model_ms.py").write_text(convert_source(TORCH_MODEL, "model_torch.py").code)
        base_code = textwrap.dedent(BASELINE.format(folder=str(folder), shape=shape))
        full_code = FULL.format(torch_ref=f"{folder}/model_torch.py:Net", ms_ref=f"{folder}/model_ms.py:Net",
                                spec="x".join(map(str, shape)) + ":float32", json_out=str(folder / "r.json"),
                                html_out=str(folder / "r.html"))
        bases, fulls = [], []
        for _ in range(args.repeat):
            bases.append(run(base_code))
            fulls.append(run(full_code))
    base = min(bases, key=lambda b: b["total"])
    full = min(fulls, key=lambda f: f["total"])
    assert full["ok"], "the benchmark model should have parity"
    overhead = (full["total"] - base["total"]) / full["total"]
    print(f"model: ResNet-style, {full['layers']} layer calls, input {'x'.join(map(str, shape))}:float32, "
          f"best of {args.repeat}")
    print("baseline (no mindport): " + ", ".join(f"{k} {v:.3f}s" for k, v in base.items()))
    print(f"  imports + forwards (torch, PyNative, graph): {base['imports']:.3f}s + {base['torch_forward']:.3f}s + "
          f"{base['ms_forward']:.3f}s + {base['ms_graph_forward']:.3f}s")
    print("validate timings: " + ", ".join(f"{k} {v:.3f}s" for k, v in full["timings"].items()))
    print(f"validate total (incl. imports, JSON+HTML reports): {full['total']:.3f}s")
    print(f"mindport overhead: {full['total'] - base['total']:.3f}s = {overhead:.1%} of the total (target <= 25%)")
    return 0 if overhead <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
