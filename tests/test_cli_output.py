"""What the CLI prints: a progress bar on stderr only when stderr is a terminal (a real pseudo-terminal here), and
tables never cut to 80 columns when the output is not a terminal (CI logs, files, pipes)."""
from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

CLI = [sys.executable, "-m", "mindport.cli"]
MODEL = """import torch
import torch.nn as nn


class Net{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.relu(self.fc(x)).view(x.size(0), -1)
"""


def make_tree(root: Path, count: int = 24) -> Path:
    (root / "a_package_with_a_rather_long_folder_name").mkdir(parents=True)
    for i in range(count):
        (root / "a_package_with_a_rather_long_folder_name" / f"module_{i:02d}.py").write_text(MODEL.format(i=i))
    return root


def run_with_terminal_stderr(args, cwd) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (120 columns) and stdout on a pipe: (exit code, stdout, terminal)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout = process.stdout.read().decode()
    return process.wait(timeout=600), stdout, b"".join(chunks).decode(errors="replace")


def test_a_progress_bar_on_a_terminal_and_none_elsewhere(tmp_path):
    src = make_tree(tmp_path / "src")
    code, stdout, terminal = run_with_terminal_stderr([*CLI, "convert", str(src), "-o", str(tmp_path / "out"),
                                                       "-j", "1"], tmp_path)
    assert code == 0, stdout + terminal
    assert "converting" in terminal and "/24" in terminal and "\x1b[" in terminal  # the bar, drawn and erased
    assert "converting" not in stdout and "\x1b[" not in stdout  # stdout (a pipe) gets the report only
    plain = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out2"), "-j", "1"],
                           capture_output=True, text=True)
    assert plain.returncode == 0
    assert "converting" not in plain.stderr and "\x1b[" not in plain.stderr + plain.stdout


def test_tables_are_never_cut_off_a_terminal(tmp_path):
    src = make_tree(tmp_path / "src", count=2)
    (src / "a_package_with_a_rather_long_folder_name" / "odd.py").write_text(
        "import torch\n\ny = torch.an_api_with_a_very_long_name_that_does_not_exist_anywhere_at_all(3)\n")
    run = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 1
    assert "…" not in run.stdout
    header = next(line for line in run.stdout.splitlines() if "files" in line and "python lines" in line)
    assert "API sites converted" in header and "left unconverted" in header
    assert "a_package_with_a_rather_long_folder_name/odd.py:3:5: MP103 " \
           "torch.an_api_with_a_very_long_name_that_does_not_exist_anywhere_at_all" in run.stdout


def test_tables_wrap_on_an_80_column_terminal_instead_of_cutting():
    """Issue 28: on an 80-column terminal the parity table read "outp…" (rich cut the cells)."""
    import io

    from rich.console import Console

    from mindport.validators.parity.report import print_report
    from mindport.validators.parity.results import OutputResult, ParityReport

    report = ParityReport(outcome="pass", reason="every output and layer compared agrees", ok=True,
                          reference={"ref": "model.py:Net"}, candidate={"ref": "converted/model.py:Net"})
    report.outputs = [OutputResult("output['logits']", "match", [2, 10], [2, 10], max_abs=1.2e-7, max_rel=3e-7,
                                   cosine=1.0, ratio_1e3=1.0, ratio_5e3=1.0, allclose=True, rtol=1e-5, atol=1e-6)]
    buffer = io.StringIO()
    print_report(report, Console(file=buffer, width=80, force_terminal=False, highlight=False))
    text = buffer.getvalue()
    assert "…" not in text and "match" in text and "2x10" in text  # folded onto more lines, never cut
    assert "lo" in text and "gits" in text


def test_the_report_path_is_one_path(tmp_path):
    """`migrate SRC -o OUT/` printed OUT//mindport-report.html."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL.format(i=0))
    run = subprocess.run([*CLI, "migrate", "src", "-o", "converted/"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "report: converted/mindport-report.html (and .json)" in run.stdout and "//" not in run.stdout


def test_text_like_an_emoji_code_prints_as_written(tmp_path):
    """rich replaces ``:name:`` with an emoji by default: a discovery reason quoting the input ``2:int64:0:100:...``
    printed ``2:int64:0💯...`` (jwzhanggy/Graph-Bert's report on the terminal). The CLI's console (and the parity
    report's default one) print the text as written."""
    import io

    from mindport.cli.app import _console

    console = _console()
    console.file = io.StringIO()
    console.print("inputs 2x3000:float32 2:int64:0:100:1 :smile: :+1:")
    assert console.file.getvalue().strip() == "inputs 2x3000:float32 2:int64:0:100:1 :smile: :+1:"


def test_python_dash_m_mindport_runs_the_cli(tmp_path):
    """`python -m mindport migrate REPO -o OUT` (a user without the script on PATH) said "No module named
    mindport.__main__; 'mindport' is a package and cannot be directly executed" (session 28's first contact)."""
    run = subprocess.run([sys.executable, "-m", "mindport", "convert", "--help"], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert run.returncode == 0, run.stderr
    assert "Usage:" in run.stdout and "convert" in run.stdout
