"""Launch commands for converted distributed scripts: a torch script that calls ``init_process_group`` (run with
``torchrun``) becomes a MindSpore script run with ``msrun``; ``migrate`` writes, for each such entry script, a
``launch_<name>.sh`` beside the train/eval scripts with the command for one host and how to run it across hosts."""
from __future__ import annotations

import re
from pathlib import Path

from mindport.migrator.tree import atomic_write

_INIT = re.compile(r"\binit_process_group\s*\(")
_MAIN = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")

_SCRIPT = """#!/bin/sh
# {rel} called torch.distributed.init_process_group (a torchrun script): its MindSpore conversion runs data-parallel
# under msrun, which starts the workers and hands each its rank (mindspore.communication.init()).
#   one host, N workers:   NPROC=N sh {name}            (torchrun --nproc_per_node=N {rel})
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


def write_launch_scripts(src: Path, out: Path, scripts_dir: str, conversion) -> list[str]:
    """``OUT/<scripts_dir>/launch_<stem>.sh`` for each distributed entry script; returns the paths written."""
    written = []
    root = out if src.is_dir() else out.parent
    for rel in distributed_entry_scripts(src, conversion.files if conversion is not None else ()):
        name = f"launch_{Path(rel).stem}.sh"
        path = root / scripts_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, _SCRIPT.format(rel=rel if src.is_dir() else Path(rel).name, name=name, up="..").encode())
        path.chmod(0o755)
        written.append(str(path))
    return written
