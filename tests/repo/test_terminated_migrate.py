"""``kill PID`` of a running ``migrate`` (SIGTERM: a CI job's time limit, a supervisor) unwinds as Ctrl-C does, with
exit code 143, and leaves no process behind. fresh27 stopped a ``migrate`` during its proofs with SIGTERM: the CLI
ended, and its two proof side processes went on running until they were killed by pid. Real processes, real
signals, sent to the CLI alone (not its process group: its children are not told)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SLOW = """import time

import torch
import torch.nn as nn


class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        time.sleep(2)
        return self.fc(x)


if __name__ == "__main__":
    Slow()(torch.randn(2, 4))
"""


def _processes_naming(path: Path) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if str(path).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
    return found


def test_sigterm_ends_migrate_with_143_and_no_process_outlives_it(tmp_path):
    repo, out = tmp_path / "repo", tmp_path / "out"
    repo.mkdir()
    (repo / "slow.py").write_text(SLOW)
    run = subprocess.Popen([sys.executable, "-m", "mindport.cli", "migrate", str(repo), "-o", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        # the proof side processes run with the run's log folder (under OUT) on their command line
        while time.monotonic() < deadline and run.poll() is None and len(_processes_naming(out)) < 2:
            time.sleep(0.2)
        assert run.poll() is None, "migrate ended before it could be stopped: " + run.stderr.read()
        assert len(_processes_naming(out)) >= 2, "no side process started"
        time.sleep(1)
        os.kill(run.pid, signal.SIGTERM)
        code = run.wait(timeout=90)
        stderr = run.stderr.read()
        assert code == 143, stderr
        assert "interrupted" in stderr and "Traceback" not in stderr
        left = _processes_naming(out)
        for _ in range(50):  # each child watches its parent once a second
            if not left:
                break
            time.sleep(0.2)
            left = _processes_naming(out)
        assert left == [], "processes outlived the stopped migrate"
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        for pid in _processes_naming(out):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
