"""Writes: unique temporary names and atomic renames, so two runs into one output never collide and an
interrupted run (Ctrl-C) leaves no partial file and exits 130. Real processes, real signals."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mindport.migrator.repo import convert_path
from mindport.migrator.tree import CACHE_NAME, TMP_SUFFIX, atomic_write

from test_file_isolation import big_model_file

MODEL = """import torch
import torch.nn as nn


class Net{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear({i} + 2, 2)

    def forward(self, x):
        return torch.relu(self.fc(x)).view(x.size(0), -1)
"""
CLI = [sys.executable, "-m", "mindport.cli"]


def temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX)]


def tree_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in (CACHE_NAME, "mindport-report.json")}


def test_two_processes_converting_into_one_output(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    for i in range(40):
        (src / "pkg" / f"m{i:02d}.py").write_text(MODEL.format(i=i))
        (src / f"data{i:02d}.txt").write_text(f"row {i}\n" * 50)
    reference = tmp_path / "reference"
    convert_path(src, reference, jobs=1, use_cache=False)
    expected = tree_files(reference)
    for round_ in range(3):
        out = tmp_path / f"out{round_}"
        runs = [subprocess.Popen([*CLI, "convert", str(src), "-o", str(out), "-j", "1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(run.wait(timeout=600), run.stdout.read(), run.stderr.read()) for run in runs]
        for code, stdout, stderr in results:
            assert code == 0, stdout + stderr
            assert "Traceback" not in stderr
        assert tree_files(out) == expected
        assert temporaries(out) == []
        json.loads((out / CACHE_NAME).read_text())  # whole, whichever run wrote it last


def test_atomic_writes_replace_whole_files_and_leave_no_temporary(tmp_path):
    target = tmp_path / "deep" / "file.py"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two" and temporaries(tmp_path) == []


HAMMER = """
import sys
from pathlib import Path
from mindport.migrator.tree import atomic_write
target, mark = Path(sys.argv[1]), sys.argv[2].encode()
payload = mark * 200_000
for _ in range(300):
    atomic_write(target, payload)
    data = target.read_bytes()
    assert len(data) == len(payload) and data in (b"A" * len(payload), b"B" * len(payload)), "torn file"
"""


def test_two_processes_writing_one_file_never_collide(tmp_path):
    """The write primitive under a real race: two processes replace the same file 300 times each, reading it back
    every time. A fixed temporary name makes one of them fail (its temporary renamed away by the other)."""
    target = tmp_path / "out" / "model.py"
    runs = [subprocess.Popen([sys.executable, "-c", HAMMER, str(target), mark], stderr=subprocess.PIPE, text=True)
            for mark in "AB"]
    for run in runs:
        assert run.wait(timeout=600) == 0, run.stderr.read()[-2000:]
    assert target.read_bytes() in (b"A" * 200_000, b"B" * 200_000)
    assert temporaries(tmp_path) == []


def notebook(code: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": code.splitlines(keepends=True)}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_ctrl_c_exits_130_and_leaves_no_partial_file(tmp_path):
    """Ctrl-C as a terminal sends it: SIGINT to the whole process group (the CLI and its workers). Notebooks are
    written one by one as they are converted, so the signal lands while files are being written."""
    templates = [notebook(big_model_file(12_000 + 1_000 * k)) for k in range(3)]
    small = tmp_path / "small"
    small.mkdir()
    for k, text in enumerate(templates):
        (small / f"t{k}.ipynb").write_text(text)
    reference = tmp_path / "reference"
    convert_path(small, reference, jobs=1, use_cache=False)
    expected = {k: (reference / f"t{k}.ipynb").read_bytes() for k in range(3)}
    count = 20  # enough to be interrupted after the first three (each a 12-14k-line model): 80 took 3 min in CI
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for i in range(count):
        (src / f"f{i:03d}_t{i % 3}.ipynb").write_text(templates[i % 3])
    run = subprocess.Popen([*CLI, "convert", str(src), "-o", str(out), "-j", "2"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and run.poll() is None:
        if out.is_dir() and len(list(out.glob("*.ipynb"))) >= 3:
            break
        time.sleep(0.02)
    assert run.poll() is None, "the conversion ended before it could be interrupted: " + run.stderr.read()
    os.killpg(run.pid, signal.SIGINT)
    code = run.wait(timeout=120)
    stderr = run.stderr.read()
    assert code == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr and "Aborted" not in stderr
    written = sorted(out.glob("*.ipynb"))
    assert 3 <= len(written) < count
    for path in written:  # every file is whole: the converted text of its template
        assert path.read_bytes() == expected[int(path.stem[-1])], path.name
    assert temporaries(out) == []
    time.sleep(0.5)
    leftovers = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if str(src).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    leftovers.append(pid)
            except OSError:
                pass
    assert leftovers == [], "worker processes outlived the interrupted run"
    again = subprocess.run([*CLI, "convert", str(src), "-o", str(out), "-j", "2"], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr  # the next run finishes the job
    assert len(list(out.glob("*.ipynb"))) == count
