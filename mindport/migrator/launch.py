"""Launch commands for distributed MindSpore scripts, run with ``msrun``: ``migrate`` writes, for each converted
entry script that calls ``init_process_group`` (a torchrun script), a ``launch_<name>.sh`` beside the train/eval
scripts, and ``scaffold --distributed`` one for its data-parallel ``train.py`` (``write_launch_script``, the one
writer): the command for one host and how to run it across hosts."""
from __future__ import annotations

import re
from pathlib import Path

from mindport.migrator.tree import atomic_write

_INIT = re.compile(r"\binit_process_group\s*\(")
_MAIN = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")

_SCRIPT = """#!/bin/sh
# {origin}.
# It runs data-parallel under msrun, which starts the workers and hands each its rank (mindspore.communication.init()).
#   one host, N workers:   NPROC=N sh {name}{torchrun}
#   several hosts:         on each host, msrun --worker_num=<all workers> --local_worker_num=<workers on this host>
#                          --master_addr=<host 0's address> --master_port=8118 --node_rank=<this host's index> {rel}
# Each worker's output goes to msrun_log/worker_<rank>.log. See docs/distributed.md.
NPROC=${{NPROC:-2}}
cd "$(dirname "$0")/{up}" || exit 2
exec msrun --worker_num="$NPROC" --local_worker_num="$NPROC" --master_port="${{MASTER_PORT:-8118}}" --join=True \\
    {rel} "$@"
"""


def distributed_entry_scripts(src: Path, files) -> list[str]:
    """The converted Python files (relative paths) that start a torch process group and run as scripts."""
    found = []
    for report in files:
        if not report.path.endswith(".py") or report.status not in ("converted", "cached"):
            continue
        path = src / report.path if src.is_dir() else src
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _INIT.search(text) and _MAIN.search(text):
            found.append(report.path)
    return found


def write_launch_script(folder: Path, rel: str, up: str, origin: str, torchrun: bool = True) -> Path:
    """``folder/launch_<stem of rel>.sh``: msrun runs ``rel`` (a path from ``folder/up``, where the script changes
    to) in ``NPROC`` workers; ``origin`` opens its comment (why the script is distributed). Returns its path."""
    name = f"launch_{Path(rel).stem}.sh"
    path = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, _SCRIPT.format(rel=rel, name=name, up=up, origin=origin,
                                      torchrun=f"            (torchrun --nproc_per_node=N {rel})" if torchrun
                                      else "").encode())
    path.chmod(0o755)
    return path


def write_launch_scripts(src: Path, out: Path, scripts_dir: str, conversion) -> list[str]:
    """``OUT/<scripts_dir>/launch_<stem>.sh`` for each distributed entry script; returns the paths written."""
    root = out if src.is_dir() else out.parent
    return [str(write_launch_script(root / scripts_dir, rel if src.is_dir() else Path(rel).name, "..",
                                    f"{rel} called torch.distributed.init_process_group (a torchrun script), so "
                                    "does its MindSpore conversion"))
            for rel in distributed_entry_scripts(src, conversion.files if conversion is not None else ())]
