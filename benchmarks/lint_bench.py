"""How fast is `mindport lint`? Prints figures; not a timed test.

    python benchmarks/lint_bench.py [--files 1500] [--runs 15]

1. One-file wall time: `mindport lint one_file.py` in a fresh interpreter (median of --runs), the way
   an editor or pre-commit calls it. Bytecode caching is on, as in any installed package (a first,
   untimed run writes the .pyc files even where PYTHONDONTWRITEBYTECODE=1 is set). Target: <= 150 ms.
2. Throughput on a large generated corpus (rule examples + MindSpore model/training code with
   variation), in-process through `lint_paths` and end to end through the CLI. Target: >= 50,000 lines/s.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODEL = '''"""A ResNet-style classifier and its training script, variant {v}."""
import numpy as np
import mindspore as ms
from mindspore import nn, ops
from mindspore.common.initializer import Normal
import mindspore.dataset as ds


class Block{v}(nn.Cell):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride={s}, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(cout, momentum=0.9)
        self.conv2 = nn.Conv2d(cout, cout, 3, pad_mode="same", has_bias=False)
        self.bn2 = nn.BatchNorm2d(cout, momentum={m})
        self.relu = nn.ReLU()
        self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride={s}, pad_mode="valid", has_bias=False),
                                       nn.BatchNorm2d(cout)])

    def construct(self, x):
        identity = self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Net{v}(nn.Cell):
    def __init__(self, num_classes={nc}):
        super().__init__()
        self.stem = nn.Conv2d(3, {w}, 3, pad_mode="pad", padding=1, has_bias=True)
        self.blocks = nn.CellList([Block{v}({w}, {w}) for _ in range({depth})])
        self.pool = nn.AvgPool2d(kernel_size=4, stride=4)
        self.flatten = nn.Flatten()
        self.drop = nn.Dropout(p=0.{d})
        self.norm = nn.LayerNorm(({w},), epsilon=1e-5)
        self.act = nn.GELU(approximate=False)
        self.head = nn.Dense({w} * 4, num_classes)
        self.embed = nn.Embedding(100, {w}, embedding_table=Normal(1.0))

    def construct(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = self.flatten(self.pool(x))
        n = x.shape[0]
        x = self.drop(x[:n])
        return self.head(x)


def make_dataset(n={n}):
    data = np.random.randn(n, 3, 16, 16).astype(np.float32)
    labels = np.random.randint(0, {nc}, size=(n,)).astype(np.int32)

    def scale(img):
        return (img * {k}.0).astype(np.float32)

    dataset = ds.NumpySlicesDataset({{"image": data, "label": labels}}, shuffle=True)
    dataset = dataset.map(operations=scale, input_columns=["image"])
    return dataset.batch({bs}, drop_remainder=True)


def train(epochs={e}):
    ms.set_seed({seed})
    net = Net{v}()
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.0{k}, momentum=0.9)

    def forward(x, y):
        logits = net(x)
        return loss_fn(logits, y), logits

    grad_fn = ms.value_and_grad(forward, None, opt.parameters, has_aux=True)

    @ms.jit
    def step(x, y):
        (loss, _), grads = grad_fn(x, y)
        opt(grads)
        return loss

    net.set_train(True)
    for epoch in range(epochs):
        for x, y in make_dataset().create_tuple_iterator():
            loss = step(x, y)
        print(f"epoch {{epoch}} loss {{loss}}")
    ms.save_checkpoint(net, "net{v}.ckpt")
'''


def real_mindspore_sources() -> list[str]:
    """Real MindSpore code (layers, losses, optimizers, training wrappers) from the installed package,
    read as text only (mindspore is never imported). Empty when the package is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("mindspore")
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(list(spec.submodule_search_locations)[0])
    files = sorted(p for d in ("nn/layer", "nn/loss", "nn/optim", "nn/wrap", "train") for p in (base / d).rglob("*.py"))
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


def build_corpus(root: Path, n_files: int, seed: int = 0, real: bool = True) -> int:
    """Write the corpus; return its line count. Files alternate between generated model/training code
    (a third of them with rule examples glued on) and real MindSpore source with a varied header."""
    from mindport.validators.lint import all_rules

    rng = random.Random(seed)
    examples = [src for r in all_rules() if r.code != "MS001" for src in (*r.VALID, *r.INVALID)]
    reals = real_mindspore_sources() if real else []
    lines = 0
    for i in range(n_files):
        if reals and i % 2 == 1:
            text = f"# corpus variant {i}: {rng.random():.6f}\n" + reals[(i // 2) % len(reals)]
            sub = root / f"pkg{i % 20}"
            sub.mkdir(exist_ok=True)
            (sub / f"real_{i}.py").write_text(text)
            lines += text.count("\n") + 1
            continue
        parts = []
        if i % 3 == 0:  # a third of the files: several rule examples glued together
            picks = rng.sample(examples, 6)
            parts.extend(p.replace("class Net(", f"class Net{i}_{j}(") for j, p in enumerate(picks))
        parts.append(MODEL.format(v=i, s=rng.choice([1, 2]), m=rng.choice([0.9, 0.99, 0.1]), nc=rng.randint(2, 100),
                                  w=rng.choice([16, 32, 64]), depth=rng.randint(1, 4), d=rng.randint(1, 5),
                                  n=rng.randint(64, 512), k=rng.randint(1, 9), bs=rng.choice([8, 16, 32]),
                                  e=rng.randint(1, 5), seed=rng.randint(0, 99)))
        text = "\n\n".join(parts)
        sub = root / f"pkg{i % 20}"
        sub.mkdir(exist_ok=True)
        (sub / f"model_{i}.py").write_text(text)
        lines += text.count("\n") + 1
    return lines


def one_file_ms(path: Path, runs: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "mindport.cli", "lint", str(path)]
    subprocess.run(cmd, capture_output=True, env=env)  # warm the OS cache (and write .pyc)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    from mindport.validators.lint import lint_paths

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        total_lines = build_corpus(root, args.files)
        one = root / "pkg0" / "model_0.py"
        one_lines = one.read_text().count("\n") + 1

        bare = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True)
            bare.append((time.perf_counter() - t) * 1000)
        warm = one_file_ms(one, args.runs)

        import ast

        sources = [p.read_text() for p in root.rglob("*.py")]
        parse_best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            for src in sources:
                ast.parse(src)
            parse_best = min(parse_best, time.perf_counter() - t)
        lint_paths([root], use_config=False)  # warm the file cache
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            result = lint_paths([root], use_config=False)
            best = min(best, time.perf_counter() - t)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mindport.cli", "lint", str(root), "--isolated"], capture_output=True, env=env)
        cli_s = time.perf_counter() - t

    print(f"mindport lint benchmark (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"  one file (a {one_lines}-line model file), median of {args.runs} runs:")
    print(f"    wall time                   : {warm:7.1f} ms   (target <= 150 ms; bare `python -c pass`: {statistics.median(bare):.1f} ms)")
    print(f"  corpus: {args.files} files, {total_lines:,} lines, {len(result.findings):,} findings "
          f"({'generated + real MindSpore source' if real_mindspore_sources() else 'generated only'})")
    print(f"    ast.parse alone (the floor) : {total_lines / parse_best:10,.0f} lines/s")
    print(f"    in-process lint_paths       : {total_lines / best:10,.0f} lines/s  ({best:.2f} s, target >= 50,000)")
    print(f"    CLI end to end              : {total_lines / cli_s:10,.0f} lines/s  ({cli_s:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
