"""The proof of the torch.distributed entries (``example.proof = "distributed"``): collectives need several
processes, so one job runs every entry's example program in 2 real processes on each side, torch under ``torchrun``
(gloo) and the converted program under ``msrun`` (MindSpore's CPU collectives), and each rank's results are compared
with the generic proof's comparison (count, shapes, dtypes, values within the example's tolerance).

Each worker first runs a prelude that starts the process group, torch's ``dist.init_process_group("gloo")`` on one
side and its conversion by the real converter on the other (so every job also proves ``init_process_group``), then
each example's ``run(*inputs)``, its inputs drawn from the input specs with a seed per rank (ranks hold different
data, both frameworks the same), and ends with the converted ``destroy_process_group()``. One job for all entries:
a launch costs seconds, an entry milliseconds.

Used by tests/distributed/test_collective_entries.py. The worker side is this module run as a script.
"""
from __future__ import annotations

import json
import os
import pickle
import socket
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

WORKERS = 2
PRELUDE = 'import torch.distributed as dist\n\ndist.init_process_group(backend="gloo")\n'
EPILOGUE = "import torch.distributed as dist\n\ndist.destroy_process_group()\n"
TIMEOUT = 300  # seconds per launch: a rank that fails a collective leaves its peer waiting


class LaunchError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _venv_env() -> dict:
    from mindport.cpu_kernels import capped

    """The environment for the launchers: this interpreter's folder first on PATH (msrun starts ``python``)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds the mindport package
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    env.setdefault("GLOG_v", "3")  # MindSpore's own logging: errors only
    return capped(env)  # MindSpore's convolutions on the fast oneDNN path (mindport/cpu_kernels.py)


def launch_command(side: str, script: Path, args: list[str], job: Path, workers: int = WORKERS) -> list[str]:
    """torchrun or msrun on one host with ``workers`` processes."""
    bindir = Path(sys.executable).parent
    if side == "torch":
        return [str(bindir / "torchrun"), "--standalone", f"--nproc_per_node={workers}", str(script), *args]
    return [str(bindir / "msrun"), f"--worker_num={workers}", f"--local_worker_num={workers}",
            f"--master_port={_free_port()}", f"--log_dir={job / 'msrun-log'}", "--join=True", str(script), *args]


def run_job(side: str, script: Path, args: list[str], job: Path, workers: int = WORKERS) -> str:
    """Launch ``script`` in ``workers`` processes; the launcher's output, or LaunchError with the workers' logs."""
    for attempt in range(2):  # a second launch only when the first fails (a port taken between pick and bind)
        done = subprocess.run(launch_command(side, script, args, job, workers), cwd=job, env=_venv_env(),
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
        if done.returncode == 0:
            break
    if done.returncode != 0:
        logs = "".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                       for p in sorted((job / "msrun-log").glob("worker_*.log"))) if side != "torch" else ""
        raise LaunchError(f"{side} job exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}{logs}")
    return done.stdout


def prove_entries(entries, job: Path, workers: int = WORKERS) -> dict[str, str | None]:
    """Prove each entry's program example in ``workers`` processes per framework: {torch name: None when every
    rank matches, else what failed}."""
    from mindport.migrator import convert_source
    from mindport.proofs.function import ProofCase, compare

    job.mkdir(parents=True, exist_ok=True)
    results: dict[str, str | None] = {}
    spec, codes = [], {}
    for side in ("torch", "ms"):
        (job / side).mkdir(exist_ok=True)
    for name, code in (("prelude", PRELUDE), ("epilogue", EPILOGUE)):
        converted = convert_source(code, f"<distributed {name}>")
        if converted.diagnostics:
            raise LaunchError(f"the {name} did not convert: {[d.format() for d in converted.diagnostics]}")
        (job / "torch" / f"{name}.py").write_text(code, encoding="utf-8")
        (job / "ms" / f"{name}.py").write_text(converted.code, encoding="utf-8")
    for i, entry in enumerate(entries):
        torch_code = entry.example.program.strip("\n") + "\n"
        converted = convert_source(torch_code, f"<proof {entry.torch}>")
        if converted.diagnostics:
            results[entry.torch] = (f"conversion left diagnostics: {[d.format() for d in converted.diagnostics]}"
                                    f"\n{converted.code}")
            continue
        module = f"entry_{i}"
        (job / "torch" / f"{module}.py").write_text(torch_code, encoding="utf-8")
        (job / "ms" / f"{module}.py").write_text(converted.code, encoding="utf-8")
        spec.append({"name": entry.torch, "module": module, "inputs": dict(entry.example.inputs)})
        codes[entry.torch] = (entry, torch_code, converted.code)
    (job / "spec.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    script = job / "worker.py"
    script.write_text("import sys\n\nfrom mindport.proofs.distributed import worker_main\n\n"
                      "worker_main(sys.argv[1], sys.argv[2])\n", encoding="utf-8")
    for side in ("torch", "ms"):
        run_job(side, script, [side, str(job)], job, workers)
    outputs = {side: [pickle.loads((job / f"{side}-rank{r}.pkl").read_bytes()) for r in range(workers)]
               for side in ("torch", "ms")}
    for name, (entry, torch_code, ms_code) in codes.items():
        failure = None
        for rank in range(workers):
            t_out, m_out = outputs["torch"][rank][name], outputs["ms"][rank][name]
            if "error" in t_out or "error" in m_out:
                failure = f"rank {rank}: " + (f"torch raised {t_out['error']}" if "error" in t_out
                                              else f"MindSpore raised {m_out['error']}\n{ms_code}")
                break
            try:
                compare(ProofCase(entry, "program", torch_code, ms_code, t_out["ok"], None, []), m_out["ok"])
            except AssertionError as exc:
                failure = f"rank {rank}: {exc}"
                break
        results[name] = failure
    return results


def _leaves(value) -> list:
    from mindport.proofs.function import _flatten, _to_numpy

    return [_to_numpy(leaf) for leaf in _flatten(value)]


def worker_main(side: str, job_dir: str) -> None:
    """One rank of the job: the prelude, every example in the spec's order, the epilogue; results pickled."""
    import importlib

    from mindport.proofs.function import make_input

    job = Path(job_dir)
    sys.path.insert(0, str(job / side))
    importlib.import_module("prelude")
    if side == "torch":
        import torch
        import torch.distributed as dist

        rank = dist.get_rank()

        def tensor(a):
            return torch.tensor(a) if isinstance(a, np.ndarray) else a
    else:
        import mindspore as ms
        from mindspore.communication import get_rank

        rank = get_rank()

        def tensor(a):
            return ms.Tensor(a) if isinstance(a, np.ndarray) else a
    results = {}
    for item in json.loads((job / "spec.json").read_text(encoding="utf-8")):
        rng = np.random.default_rng(1000 + rank)  # each rank its own data, the same in both frameworks
        args = [tensor(make_input(spec, rng)) for spec in item["inputs"].values()]
        try:
            results[item["name"]] = {"ok": _leaves(importlib.import_module(item["module"]).run(*args))}
        except Exception:  # noqa: BLE001 - the entry's failure is its result
            results[item["name"]] = {"error": traceback.format_exc()[-2000:]}
    importlib.import_module("epilogue")
    (job / f"{side}-rank{rank}.pkl").write_bytes(pickle.dumps(results))
