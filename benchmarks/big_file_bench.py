"""Memory and time of one big generated model file: why `convert` has a size limit (--max-file-size, MP204).

Each measurement runs in a fresh subprocess and reports its peak RSS (resource.getrusage, the subprocess and its
children) minus the same subprocess's peak without the file:

* ``ast.parse`` of the file;
* ``libcst.parse_module`` + ``.code`` (what a whole-file LibCST converter cannot do with less);
* ``mindport.convert_source`` (the converter as it is);
* ``mindport.convert_path`` on a tree holding the file, with the default size limit (the file is refused, copied).

Usage: ``.venv/bin/python benchmarks/big_file_bench.py [--sizes 0.25,0.5,1] [--limit-size 5]``
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = textwrap.dedent("""
    class Block{i}(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(64, 64)  # layer
            self.conv = nn.Conv2d(3, 16, 3, padding=1)

        def forward(self, x):
            y = torch.relu(self.conv(x)).view(x.size(0), -1)
            return F.softmax(self.fc(y), dim=1) + torch.zeros(3).sum()
    """)
PROBE = r"""
import json, resource, sys, time
from pathlib import Path
kind, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
import libcst, ast
from mindport.migrator import convert_source
from mindport.migrator.repo import convert_path
from mindport.mappings import load_registry
load_registry()
text = Path(path).read_text() if kind != "tree" and path != "-" else "x = 1\n"
start = time.perf_counter()
if kind == "ast":
    ast.parse(text)
elif kind == "libcst":
    libcst.parse_module(text).code
elif kind == "convert":
    convert_source(text)
elif kind == "tree":
    report = convert_path(Path(path).parent if path != "-" else Path(out).parent / "empty", out, jobs=1,
                          use_cache=False)
seconds = time.perf_counter() - start
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "peak": peak * 1024}))
"""


def generate(size: int) -> str:
    parts = ["import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"]
    total, i = len(parts[0]), 0
    while total < size:
        parts.append(BLOCK.format(i=i))
        total += len(parts[-1])
        i += 1
    return "".join(parts)


def probe(kind: str, path: str, out: str) -> dict:
    run = subprocess.run([sys.executable, "-c", PROBE, kind, path, out], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT)}, timeout=3600)
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.25,0.5,1", help="MB, comma-separated, for ast/libcst/convert")
    parser.add_argument("--limit-size", type=float, default=5.0, help="MB of the file convert_path refuses")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "empty").mkdir()
        (tmp / "empty" / "m.py").write_text("x = 1\n")
        base = probe("ast", "-", str(tmp / "o"))["peak"]
        print(f"baseline process (mindport, libcst and the tables loaded): {base / 1e6:.0f} MB")
        for mb in (float(s) for s in args.sizes.split(",")):
            path = tmp / f"gen{mb}" / "big.py"
            path.parent.mkdir()
            text = generate(int(mb * 1e6))
            path.write_text(text)
            size = len(text.encode())
            for kind in ("ast", "libcst", "convert"):
                result = probe(kind, str(path), str(tmp / "o"))
                if "error" in result:
                    print(f"{size / 1e6:5.2f} MB  {kind:8} failed: {result['error']}")
                    continue
                grown = result["peak"] - base
                print(f"{size / 1e6:5.2f} MB  {kind:8} {result['seconds']:7.2f} s  peak +{grown / 1e6:7.0f} MB "
                      f"({grown / size:6.0f}x the file)")
        path = tmp / "limit" / "big.py"
        path.parent.mkdir()
        text = generate(int(args.limit_size * 1e6))
        path.write_text(text)
        size = len(text.encode())
        empty = probe("tree", "-", str(tmp / "o-empty"))
        result = probe("tree", str(path), str(tmp / "o-limit"))
        grown = result["peak"] - empty["peak"]
        print(f"{size / 1e6:5.2f} MB  convert_path with the default size limit: {result['seconds']:.2f} s, peak "
              f"+{grown / 1e6:.1f} MB ({grown / size:.2f}x the file) over a tree without it")


if __name__ == "__main__":
    main()
