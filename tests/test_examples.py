"""Every example in the commands' --help, in README.md and in docs/quickstart.md runs, as written, in a sandbox
that holds what the examples name: a torch project `my_repo/` (model.py:Net, mindport.toml, my_maps.toml, tests/),
its conversion `converted/`, the checkpoint `net.pt` (and `net.safetensors`), `net.onnx`, `x.npy`,
`my_maps.toml`, and the bundled example with its trained checkpoint. The examples are read from the texts
themselves: a new example is tested without touching this file, and one that no longer works fails here.

An example passes when it exits 0, or 1 for findings (what is left to do, lint findings): never 2 (usage or input
error), never a traceback. Examples of one block run in order in one copy of the sandbox (scaffold, then the
scripts it wrote); a command written in several places runs once (see ``to_run``).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    """A small CNN for 32x32 RGB images."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)
'''
TEST = "import torch\n\nfrom model import Net\n\n\ndef test_shape():\n    assert Net()(torch.randn(2, 3, 32, 32)).shape == (2, 10)\n"
CONFIG = '''[migrate]
model = "model.py:Net"
ctor = "num_classes=10"
input = ["2x3x32x32:float32"]

[mappings]
extra = ["my_maps.toml"]
'''
MY_MAPS = '''[[api]]
torch = "torch.special.xlogy"
signature = "(input, other)"
nn = "mindspore.ops.xlogy"
positional = ["input", "other"]
example = { args = "x, y", inputs = { x = "randpos(2, 3)", y = "randpos(2, 3)" } }
'''


# ------------------------------------------------------------------------------------------ finding the examples

def help_examples() -> dict[str, list[str]]:
    """{"mindport convert --help": [commands ...]} from the rendered help of every command."""
    from mindport.cli import main

    found: dict[str, list[str]] = {}

    def walk(command: click.Command, path: list[str]) -> None:
        ctx = click.Context(command, info_name=" ".join(path), terminal_width=100, max_content_width=100)
        commands = _indented_examples(command.get_help(ctx))
        if commands:
            found[" ".join(path) + " --help"] = commands
        if isinstance(command, click.Group):
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])

    walk(main, ["mindport"])
    return found


def _indented_examples(text: str) -> list[str]:
    commands: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip().startswith(("Example:", "Examples:", "Example (", "The whole job, in one command:")):
            continue
        indent = len(line) - len(line.lstrip())
        pending = ""
        for follow in lines[i + 1:]:
            if not follow.strip() or len(follow) - len(follow.lstrip()) <= indent:
                break
            part = follow.strip()
            if pending:
                part = pending + " " + part
                pending = ""
            if part.endswith("\\"):
                pending = part[:-1].rstrip()
                continue
            if part.startswith(("mindport ", "python ")):
                commands.append(re.split(r"\s{2,}", part)[0])  # what follows two spaces is a description
    return commands


def doc_examples(path: Path) -> list[str]:
    """Commands in the sh code blocks of a markdown file, and (README) in its inline code spans."""
    text = path.read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        pending = ""
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:]
            if pending:
                line, pending = pending + " " + line, ""
            if line.endswith("\\"):
                pending = line[:-1].rstrip()
                continue
            if line.startswith(("mindport ", "python ")):
                commands.append(re.split(r"\s{2,}#", line)[0].strip())
    if path.name == "README.md":
        table = text.split("## What it does", 1)[1].split("\n## ", 1)[0]
        commands += [span for span in re.findall(r"`(mindport [^`]+)`", table)]
    return commands


def all_examples() -> dict[str, list[str]]:
    examples = help_examples()
    for name in ("README.md", "docs/quickstart.md"):
        examples[name] = doc_examples(ROOT / name)
    return examples


def _outputs(command: str) -> list[str]:
    """What a command writes (its -o/--out), as it would be named by a later command."""
    words = command.split()
    return [words[i + 1].rstrip("/") for i, word in enumerate(words[:-1]) if word in ("-o", "--out")]


def to_run(examples: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each block's commands not already run by an earlier block (help texts, then README, then the quickstart),
    with the commands before them in the block that write what they read (`weights -o net.ckpt` before
    `export --checkpoint net.ckpt`, `scaffold -o scripts/` before `python scripts/train.py`)."""
    seen: set[str] = set()
    plan = {}
    for source, commands in examples.items():
        keep = {i for i, command in enumerate(commands) if command not in seen}
        for i in sorted(keep, reverse=True):
            for j in range(i):
                if any(out and out in commands[i].replace(" -o " + out, " ") for out in _outputs(commands[j])):
                    keep.add(j)
        plan[source] = [commands[i] for i in sorted(keep)]
        seen.update(commands)
    return plan


EXAMPLES = all_examples()
PLAN = to_run(EXAMPLES)


def test_the_examples_are_found():
    """The extraction itself: the examples the issue names are among them, and nothing is a placeholder."""
    flat = [command for commands in EXAMPLES.values() for command in commands]
    assert "mindport convert my_repo/ --diff | less" in flat
    assert any(c.startswith("mindport export ") for c in flat) and any(c.startswith("python scripts/") for c in flat)
    assert any(c.startswith("mindport mappings prove") for c in flat)
    assert len(EXAMPLES["README.md"]) >= 8 and len(EXAMPLES["docs/quickstart.md"]) >= 7
    for command in flat:
        assert not re.search(r"\b(SRC|OUT|PATHS|CKPT)\b|\.\.\.", command), command
    assert {c for commands in PLAN.values() for c in commands} == set(flat)  # every example runs somewhere


# ------------------------------------------------------------------------------------------ the sandbox

@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    import numpy as np
    import torch
    from safetensors.torch import save_file

    root = tmp_path_factory.mktemp("examples")
    repo = root / "my_repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "model.py").write_text(MODEL)
    (repo / "tests" / "test_model.py").write_text(TEST)
    (repo / "mindport.toml").write_text(CONFIG)
    (repo / "my_maps.toml").write_text(MY_MAPS)
    (root / "my_maps.toml").write_text(MY_MAPS)
    namespace: dict = {}
    exec(compile(MODEL, "model.py", "exec"), namespace)  # noqa: S102 - the sandbox's own model
    torch.manual_seed(0)
    net = namespace["Net"](num_classes=10).eval()
    state = net.state_dict()
    torch.save(state, root / "net.pt")
    save_file({k: v.contiguous() for k, v in state.items()}, str(root / "net.safetensors"))
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.save(root / "x.npy", x)
    torch.onnx.export(net, (torch.from_numpy(x),), str(root / "net.onnx"), dynamo=False, input_names=["x"])
    shutil.copytree(ROOT / "examples" / "cifar_resnet", root / "examples" / "cifar_resnet")
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    (bin_dir / "mindport").write_text(f"#!/bin/sh\nexec {sys.executable} -m mindport.cli \"$@\"\n")
    (bin_dir / "mindport").chmod(0o755)
    (bin_dir / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")  # this venv's interpreter
    (bin_dir / "python").chmod(0o755)
    for setup in (["mindport", "convert", "my_repo/", "-o", "converted/"],
                  ["python", "examples/cifar_resnet/train.py", "--steps", "3", "--save", "build/demo-torch/model.pt"]):
        run = subprocess.run(" ".join(f"'{a}'" for a in setup), shell=True, cwd=root, env=_env(root),
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return root


def _env(root: Path) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{root / '.bin'}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


# ------------------------------------------------------------------------------------------ running them

@pytest.mark.slow
@pytest.mark.parametrize("source", [source for source, commands in PLAN.items() if commands])
def test_every_example_runs(source, sandbox, tmp_path):
    if any("| less" in command for command in PLAN[source]) and shutil.which("less") is None:
        pytest.skip("`less` is not installed: the `--diff | less` example cannot run as written")
    work = tmp_path / "sandbox"
    shutil.copytree(sandbox, work, symlinks=True)
    for command in PLAN[source]:
        run = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=_env(work),
                             capture_output=True, text=True, timeout=900)
        output = run.stdout + run.stderr
        assert run.returncode in (0, 1), f"{source}: `{command}` exited {run.returncode}\n{output[-3000:]}"
        assert "Traceback" not in output, f"{source}: `{command}`\n{output[-3000:]}"
        check = CHECKS.get(command)
        if check is not None:
            check(work, run)


def _diff_shown(work: Path, run) -> None:
    assert run.returncode == 0 and "+class Net(nn.Cell):" in run.stdout and "-class Net(nn.Module):" in run.stdout


def _mindir_checked(work: Path, run) -> None:
    assert run.returncode == 0 and (work / "net.mindir").is_file() and "outputs match the Cell" in run.stdout


def _proved(work: Path, run) -> None:
    assert run.returncode == 0 and "PASS torch.special.xlogy" in run.stdout


CHECKS = {
    "mindport convert my_repo/ --diff | less": _diff_shown,
    "mindport mappings prove my_maps.toml": _proved,
}
for _commands in EXAMPLES.values():
    for _command in _commands:
        if _command.startswith("mindport export ") and "-o net.mindir" in _command:
            CHECKS[_command] = _mindir_checked
