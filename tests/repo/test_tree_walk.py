"""Walking the source tree: symlinks are never followed out of it, loops and dangling links are reported, FIFOs and
devices are never opened, unreadable files and folders are reported (exit 1). Nothing is silent, nothing is written
into the input.

The tests run as root in CI, and root reads files whatever their permissions. The unreadable cases therefore run
the command in a child process without the two capabilities that let root bypass permissions
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, dropped from the bounding set before exec): root-proof, no mock.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mindport.errors import InputError
from mindport.migrator.repo import convert_path
from mindport.migrator.tree import walk_tree

MODEL = """import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x
"""
SECRET = "SECRET-OUTSIDE-THE-TREE"
_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def _drop_permission_bypass() -> None:
    """preexec_fn: the child (and what it executes) obeys file permissions even as root."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_obeying_permissions(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, preexec_fn=_drop_permission_bypass, capture_output=True, text=True, **kwargs)


def require_permissions_enforced(unreadable: Path) -> None:
    try:
        probe = run_obeying_permissions([sys.executable, "-c", f"open({str(unreadable)!r}).read()"], timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"running as root without CAP_SETPCAP: cannot drop the permission bypass ({exc})")
    if probe.returncode == 0:
        pytest.skip("file permissions are not enforced here (root with the bypass kept): no unreadable file exists")


def snapshot(root: Path) -> dict:
    """Every entry below root: type, mode, size, mtime and content (regular files) or link text."""
    state = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = os.lstat(path)
            entry = (stat.S_IFMT(info.st_mode), info.st_mode, info.st_mtime_ns)
            if stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISREG(info.st_mode):
                entry += (hashlib.sha256(path.read_bytes()).hexdigest(),)
            state[path.relative_to(root).as_posix()] = entry
    return state


def make_corpus(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Two good files and every kind of bad entry; returns (src, {bad entry: the code it must get})."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "good.py").write_text(MODEL)
    (src / "pkg" / "good2.py").write_text(MODEL)
    (tmp_path / "outside.txt").write_text(SECRET)
    os.symlink(tmp_path / "outside.txt", src / "outside.py")
    os.symlink("missing.py", src / "dangling.py")
    os.symlink("loop_b.py", src / "loop_a.py")
    os.symlink("loop_a.py", src / "loop_b.py")
    os.mkfifo(src / "fifo.py")
    (src / "unreadable.py").write_text("import torch\n")
    (src / "unreadable.py").chmod(0)
    (src / "locked").mkdir()
    (src / "locked" / "hidden.py").write_text("import torch\n")
    (src / "locked").chmod(0)
    chain = " + ".join(["a"] * 40_000)  # deeper than the converter's recursion limit
    (src / "deep.py").write_text(f"import torch\nx = {chain}\n")
    bad = {"outside.py": "MP205", "dangling.py": "MP205", "loop_a.py": "MP205", "loop_b.py": "MP205",
           "fifo.py": "MP206", "unreadable.py": "MP207", "locked": "MP207", "deep.py": "MP299"}
    return src, bad


@pytest.fixture
def corpus(tmp_path):
    src, bad = make_corpus(tmp_path)
    yield src, bad
    (src / "locked").chmod(0o755)  # let pytest clean up
    (src / "unreadable.py").chmod(0o644)


def test_the_bad_input_corpus(tmp_path, corpus):
    """One line per bad entry, the good files converted, exit 1, nothing written into the input; the FIFO never
    blocks the run (the subprocess has a timeout)."""
    src, bad = corpus
    require_permissions_enforced(src / "unreadable.py")
    before = snapshot(src)
    out = tmp_path / "out"
    run = run_obeying_permissions([sys.executable, "-m", "mindport.cli", "convert", str(src), "-o", str(out),
                                   "--timeout", "15", "-j", "2"], timeout=600, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert snapshot(src) == before
    lines = [line for line in run.stdout.splitlines() if ":1:1: MP2" in line]
    for name, code in bad.items():
        mine = [line for line in lines if line.startswith(f"{name}:1:1: ")]
        assert len(mine) == 1 and f" {code} " in mine[0], (name, mine, run.stdout)
    assert len(lines) == len(bad), run.stdout
    report = json.loads((out / "mindport-report.json").read_text())
    files = {f["path"]: f for f in report["files"]}
    for name, code in bad.items():
        assert [d["code"] for d in files[name]["diagnostics"]] == [code]
    assert files["good.py"]["status"] == files["pkg/good2.py"]["status"] == "converted"
    assert "nn.Cell" in (out / "good.py").read_text() and "nn.Cell" in (out / "pkg" / "good2.py").read_text()
    written = [p for p in out.rglob("*") if not p.is_symlink() and p.is_file()]
    assert not any(SECRET in p.read_text(errors="replace") for p in written)
    for name in ("outside.py", "dangling.py", "loop_a.py", "loop_b.py", "fifo.py", "unreadable.py", "locked"):
        assert not os.path.lexists(out / name)
    assert (out / "deep.py").read_bytes() == (src / "deep.py").read_bytes()  # refused: copied unchanged


def test_links_inside_the_tree_are_mirrored_as_links(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "model.py").write_text(MODEL)
    os.symlink("pkg/model.py", src / "alias.py")
    os.symlink(src / "pkg", src / "pkg_link")  # absolute, but inside the tree
    os.symlink(".", src / "pkg" / "self")  # a link to its own folder: walking it would never end
    report = convert_path(src, out, jobs=1)
    assert report.ok, [d.format() for d in report.diagnostics]
    statuses = {f.path: f.status for f in report.files}
    assert statuses == {"pkg/model.py": "converted", "alias.py": "linked", "pkg_link": "linked",
                        "pkg/self": "linked"}
    assert os.readlink(out / "alias.py") == "pkg/model.py" and os.readlink(out / "pkg_link") == "pkg"
    assert os.readlink(out / "pkg" / "self") == "."
    assert "nn.Cell" in (out / "alias.py").read_text()  # the link leads to the converted file
    again = convert_path(src, out, jobs=1)  # a second run replaces nothing it need not
    assert {f.path: f.status for f in again.files}["alias.py"] == "linked"


def test_walk_reports_sockets_and_fifos_without_opening_them(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    os.mkfifo(src / "pipe.py")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(src / "sock.py"))
        entries, problems = walk_tree(src)
    finally:
        server.close()
    assert entries == []
    messages = {p.path: p.diagnostics[0].message for p in problems}
    assert "a FIFO" in messages["pipe.py"] and "a socket" in messages["sock.py"]
    assert all(p.status == "skipped" and p.diagnostics[0].code == "MP206" for p in problems)


def test_a_fifo_given_as_the_source_is_an_input_error(tmp_path):
    os.mkfifo(tmp_path / "model.py")
    with pytest.raises(InputError, match="not a regular file"):
        convert_path(tmp_path / "model.py", tmp_path / "out.py")


API_PROBE = """
import sys
from mindport.errors import InputError
from mindport.migrator.repo import convert_path
try:
    convert_path(sys.argv[1], sys.argv[2])
except InputError as exc:
    print(exc)
"""


def test_an_unreadable_single_file_is_an_input_error(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    path.chmod(0)
    try:
        require_permissions_enforced(path)
        cli = run_obeying_permissions([sys.executable, "-m", "mindport.cli", "convert", str(path), "-o",
                                       str(tmp_path / "out.py")], timeout=300)
        api = run_obeying_permissions([sys.executable, "-c", API_PROBE, str(path), str(tmp_path / "out.py")],
                                      timeout=300)
    finally:
        path.chmod(0o644)
    assert cli.returncode == 2 and "not readable" in cli.stderr, cli.stderr
    assert api.returncode == 0 and "cannot read: Permission denied" in api.stdout, api.stdout + api.stderr
    assert not (tmp_path / "out.py").exists()


def test_excluded_and_tool_folders_are_skipped_silently(tmp_path):
    src = tmp_path / "src"
    for folder in (".git", "__pycache__", "tests", "pkg"):
        (src / folder).mkdir(parents=True)
        (src / folder / "m.py").write_text(MODEL)
    entries, problems = walk_tree(src, ("tests/*",))
    assert [e.rel for e in entries] == ["pkg/m.py"] and problems == []
