"""A uniform random draw of the classes tried (agg54, issue 29's bar: built % of DISCOVERED). ``--max-models N`` with
``spread`` takes N evenly spaced classes in discovery (file) order: whatever the file order correlates with (a
vendored library sorted in one folder, a file of blocks before a file of models) is over- or under-sampled, and the
built share of the tried classes is not an estimate of the built share of the discovered ones. ``sample_seed`` draws
N uniformly at random without replacement (``prove.select``, the selection migrate and the sweep use), reproducibly;
the sweep's summary applies each repository's built share of its draw to its discovered classes, with a bootstrap
interval over repositories."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from itertools import combinations
from math import comb, sqrt

from tests.discovery.test_sweep_fixes4 import _sweep

# twelve small models over three files (each a real model: a forward that computes)
_CLASS = '''
class {name}(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x){tail}
'''


def _repository(root, names_per_file, tail=lambda name: ""):
    for rel, names in names_per_file.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\nimport torch.nn as nn\n" + "".join(
            _CLASS.format(name=n, tail=tail(n)) for n in names))


FILES = {"a/blocks.py": ["A0", "A1", "A2", "A3", "A4"], "b/models.py": ["B0", "B1", "B2", "B3"],
         "c/heads.py": ["C0", "C1", "C2"]}


def _found(tmp_path):
    from mindport.discovery.scan import discover, python_files

    _repository(tmp_path, FILES)
    found = discover(tmp_path, python_files(tmp_path, notebooks=True))
    assert sorted(c.name for c in found) == sorted(n for names in FILES.values() for n in names)
    return found


def test_draw_is_reproducible_capped_and_in_discovery_order(tmp_path):
    from mindport.discovery.prove import select

    found = _found(tmp_path)
    order = [c.key for c in found]
    first = [c.key for c in select(found, None, 4, spread=True, sample_seed=54)]
    assert first == [c.key for c in select(list(found), None, 4, spread=True, sample_seed=54)]  # reproducible
    assert len(first) == len(set(first)) == 4 and set(first) <= set(order)  # capped, no repeat
    assert first == sorted(first, key=order.index)  # kept in discovery order
    assert len({tuple(c.key for c in select(found, None, 4, sample_seed=s)) for s in range(20)}) > 10  # seeded
    # the cap only: fewer classes than N are all tried, N = 0 tries none
    assert [c.key for c in select(found, None, 50, sample_seed=3)] == order
    assert select(found, None, 0, sample_seed=3) == []
    # without a seed the spread is unchanged: 4 of 12 evenly spaced, the 1st, 4th, 7th and 10th
    assert [c.key for c in select(found, None, 4, spread=True)] == [order[i] for i in (0, 3, 6, 9)]


def test_draw_is_uniform_over_the_discovered_classes(tmp_path):
    """Over 3000 seeds, each class is drawn in 4 of 12 (probability 1/3) and each pair together with probability
    C(10, 2) / C(12, 4) = 1/11, as a uniform draw without replacement gives (the spread never draws two
    neighbours): every count within 5 standard deviations of its binomial expectation."""
    from mindport.discovery.prove import select

    found = _found(tmp_path)
    order = [c.key for c in found]
    runs, n, k = 3000, len(order), 4
    singles, pairs = Counter(), Counter()
    for seed in range(runs):
        drawn = [c.key for c in select(found, None, k, spread=True, sample_seed=seed)]
        singles.update(drawn)
        pairs.update(combinations(sorted(drawn, key=order.index), 2))
    p1 = k / n
    p2 = comb(n - 2, k - 2) / comb(n, k)
    assert abs(p2 - 1 / 11) < 1e-12
    for key in order:
        assert abs(singles[key] - runs * p1) < 5 * sqrt(runs * p1 * (1 - p1)), (key, singles[key])
    for pair in combinations(order, 2):
        assert abs(pairs[pair] - runs * p2) < 5 * sqrt(runs * p2 * (1 - p2)), (pair, pairs[pair])
    spread = [c.key for c in select(found, None, k, spread=True)]
    assert not any(order.index(b) - order.index(a) == 1 for a, b in combinations(spread, 2))


def _row(discovered, tried, built, abstract_tried=0):
    return {"repo": "x/y", "summary": {"discovered": discovered, "selected": tried, "built": built,
                                       "abstract_tried": abstract_tried}}


def test_built_share_estimate_and_bootstrap_interval():
    estimate = _sweep().built_share_estimate
    # A: 10 discovered, 5 tried, 4 built -> 8 of 10; B: all 4 tried, 1 built -> 1 of 4: 9 of 14
    est, low, high = estimate([_row(10, 5, 4), _row(4, 4, 1), {"repo": "failed", "error": "export failed"}])
    assert abs(est - 100 * 9 / 14) < 1e-9
    assert low <= est <= high and low >= 100 * 1 / 4 - 1e-9 and high <= 100 * 8 / 10 + 1e-9
    # the builder found 1 of the 5 drawn abstract (left out of discovered: 9 remain, 4 tried): of the 10 classes,
    # 4/5 are models (8) and 2/5 built (4): 50 %, not 9 x 2/4 / 9
    est, low, high = estimate([_row(9, 4, 2, abstract_tried=1)])
    assert abs(est - 50.0) < 1e-9 and low == high == est  # one repository: every resample is itself
    # identical repositories: no spread between them
    assert estimate([_row(12, 6, 3)] * 5) == (50.0, 50.0, 50.0)
    assert estimate([{"repo": "failed", "error": "x"}]) is None


MIXED = '''
import torch
import torch.nn as nn


class Good{i}(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


class NeedsFile{i}(nn.Module):  # its constructor reads a file the repository does not hold
    def __init__(self):
        super().__init__()
        with open("weights/table.txt") as f:
            self.n = int(f.read())
        self.fc = nn.Linear(self.n, 2)

    def forward(self, x):
        return self.fc(x)
'''


def test_sweep_build_only_tries_the_seeded_draw_and_prints_the_estimate(tmp_path):
    from mindport.discovery.prove import select
    from mindport.discovery.scan import discover, python_files

    src = tmp_path / "tree"
    src.mkdir()
    for i in range(3):
        (src / f"m{i}.py").write_text(MIXED.format(i=i))
    found = discover(src, python_files(src, notebooks=True))
    assert len(found) == 6
    expected = {c.key for c in select(found, None, 3, spread=True, sample_seed=54)}
    repo = tmp_path / "mirror" / "fixture+mixed" / "repo"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(src)]
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "fixture"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(repo)], check=True)
    manifest = tmp_path / "manifest.txt"
    manifest.write_text("fixture/mixed vision\n")
    out = tmp_path / "run.json"
    argv = ["sweep", "--manifest", str(manifest), "--build-only", "--max-models", "3", "--sample-seed", "54",
            "--work", str(tmp_path / "work"), "--json", str(out)]
    code = (f"import sys; sys.argv = {argv!r}\n"
            f"import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('sweep', {_sweep().__file__!r})\n"
            f"m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"m.MIRROR = __import__('pathlib').Path({str(tmp_path / 'mirror')!r})\n"
            f"sys.exit(m.main())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["sample_seed"] == 54
    (row,) = data["repositories"]
    status = {m["class"]: m["status"] for m in row["models"]}
    assert set(status) == expected  # the sweep tried select's draw
    built = sum(1 for key in expected if key.split(":")[1].startswith("Good"))
    assert status == {k: "built" if k.split(":")[1].startswith("Good") else "not-built" for k in expected}
    s = row["summary"]
    assert (s["discovered"], s["selected"], s["built"], s["abstract_tried"]) == (6, 3, built, 0)
    share = f"{100 * built / 3:.1f} %"  # 6 discovered x built / 3 tried, over 6
    assert (f"estimated built % of discovered (each repository's built share of its tried classes applied to its "
            f"discovered; the tried classes a uniform draw (--sample-seed)): {share}") in proc.stdout, proc.stdout
