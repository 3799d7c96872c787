"""How fast does a converted training script run, next to torch and to the same step written by hand in MindSpore?

For each script named here (entries of ``corpus.json``, with a shorter step budget given as extra ``patches``/``argv``
below) this runs, each in its own process, with ``OMP_NUM_THREADS=1``:

* **torch**: the original script (the corpus recipe's patches applied, then the budget);
* **port**: the script converted by ``mindport convert`` with the mindport tree given by ``--mindport`` (repeatable:
  ``--mindport /work/main --mindport $PWD`` times main's port and the branch's port side by side; each tree converts
  its own copy and runs it with its own runtime);
* **twin** (where ``twins/<name>.py`` exists): the same model and step written by hand in MindSpore
  (``mindspore.value_and_grad`` built once + a MindSpore optimizer), the same number of steps: MindSpore's own
  PyNative cost, which no port can go below; run as a MindSpore user writes it (asynchronous launch, MindSpore's
  default) and with ``launch_blocking`` first (as the converted loop's runtime runs on the CPU).

It reports each process's wall time and CPU time (user + sys of the child: on a shared machine CPU time is the
steadier figure; wall time grows with the load), and the CPU time of importing the framework alone (``import torch`` /
``import mindspore``), so that the step loop's own share can be read off. Nothing is asserted: this is a benchmark.

    cd /work/wt/<you> && PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/training/speed.py \
        --work /tmp/speed --mindport /work/main --mindport $PWD [--only ID,ID] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (the corpus runner: extract, apply_patches)

# id -> the budget (extra patches after the recipe's, argv replacing the recipe's) and the twin's argv
BUDGETS = {
    "seanie12/realnvp_moons": {
        "argv": ["--cpu", "--epochs", "100"], "twin": ["100"],
        "why": "101 steps of batch 128 (the recipe's 600 epochs), losses printed at steps 0 and 100"},
    "zhihanyang/wgan_gp_1d": {
        "patches": [["main.py", "    for i in range(300):", "    for i in range(20):", "budget: 20 generator steps"]],
        "why": "20 generator steps, 5 critic steps each with the gradient penalty (w printed at step 20)"},
    "mazzamani/lstm_collate": {
        "argv": ["--mode", "-epochs", "1", "-train_sample_no", "256", "-val_sample_no", "128", "-test_sample_no", "128"],
        "why": "one epoch: 256 training sequences, 128 validation, 128 test (drop_last batches)"},
    "junxiaosong/alphazero_gomoku": {
        "patches": [["train.py", "        self.game_batch_num = 24", "        self.game_batch_num = 1",
                     "budget: 1 self-play game (20 playouts a move) and one policy update"]],
        "why": "1 self-play game of 20 MCTS playouts a move, then one policy update"},
    "eyebrow/xor_deep": {
        "twin": ["1001"],
        "why": "the recipe's 1001 full-batch steps of a 2-10-10-10-1 sigmoid MLP on XOR (BCE, SGD)"},
    "dragen/himmelblau": {
        "patches": [["lesson22-优化小实例/main.py", "range(4001)", "range(1001)",
                     "budget: 1001 Adam steps"]],
        "twin": ["1001"],
        "why": "1001 Adam steps on one two-element leaf (the recipe's 4001)"},
    "north/sin_lstm": {
        "patches": [["main.py", "max_epoch = 41", "max_epoch = 11", "budget: 10 epochs"]],
        "twin": ["11"],
        "why": "10 epochs of 9 LSTM batches + 98 single test windows (the recipe's 40); the twin leaves out the "
               "script's prediction curve and plots"},
}


def timed(cmd: list[str], cwd: Path, env: dict, timeout: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -9, e.stdout if isinstance(e.stdout, str) else "", "timeout"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"rc": rc, "wall": round(time.time() - start, 1), "cpu": round(cpu, 1), "stdout": out,
            "error": run.error_line(err) if rc else ""}


def environment(pythonpath: list[str]) -> dict:
    return dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg", PYTHONHASHSEED="0",
                PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath))


def prepare(entry: dict, budget: dict, dest: Path) -> None:
    dest.mkdir(parents=True)
    run.extract(entry, Path(ARGS.mirrors), dest)
    run.apply_patches(entry, dest)
    run.apply_patches({"id": entry["id"], "patches": budget.get("patches", [])}, dest)
    run.write_data(entry, dest)
    for rel in entry["files"]:  # folders the script writes into (figures/)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)


def one(entry: dict, budget: dict, work: Path) -> dict:
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    src = work / "torch"
    prepare(entry, budget, src)
    argv = budget.get("argv", entry.get("argv", []))
    pattern = entry.get("loss", run.DEFAULT_LOSS)
    rows = {}
    t = timed([ARGS.python, entry["script"], *argv], src, environment([src]), ARGS.timeout)
    rows["torch"] = t
    for k, root in enumerate(ARGS.mindport):
        conv = work / f"port{k}"
        env = environment([root])
        p = subprocess.run([str(Path(ARGS.python).with_name("mindport")), "convert", str(src), "-o", str(conv)],
                           env=env, capture_output=True, text=True, timeout=600)
        if not conv.exists():
            rows[f"port:{root}"] = {"rc": p.returncode, "wall": 0, "cpu": 0, "stdout": "", "error": "no conversion"}
            continue
        run.write_data(entry, conv)
        rows[f"port:{root}"] = timed([ARGS.python, entry["script"], *argv], conv, environment([conv, root]),
                                     ARGS.timeout)
    twin = HERE / "twins" / (entry["id"].split("/")[1] + ".py")
    if twin.exists():
        for name, extra in (("twin", []), ("twin, launch_blocking", ["blocking"])):
            rows[name] = timed([ARGS.python, str(twin), *budget.get("twin", []), *extra], work, environment([]),
                               ARGS.timeout)
    for r in rows.values():
        r["losses"] = run.losses(r.pop("stdout"), pattern)
    return rows


def main(argv=None) -> int:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--mindport", action="append", default=[], help="a mindport tree (repeatable)")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--json", default="")
    ARGS = ap.parse_args(argv)
    ARGS.mindport = ARGS.mindport or [str(HERE.parent.parent)]
    entries = {e["id"]: e for e in json.loads((HERE / "corpus.json").read_text())}
    ids = [i for i in (ARGS.only.split(",") if ARGS.only else BUDGETS) if i]
    imports = {name: timed([ARGS.python, "-c", f"import {name}"], Path(ARGS.work).parent, environment([]), 600)
               for name in ("torch", "mindspore")}
    print(f"import alone: torch {imports['torch']['cpu']} s CPU ({imports['torch']['wall']} s wall), mindspore "
          f"{imports['mindspore']['cpu']} s CPU ({imports['mindspore']['wall']} s wall); load {os.getloadavg()[0]:.1f}")
    results = {}
    for id_ in ids:
        rows = one(entries[id_], BUDGETS[id_], Path(ARGS.work) / id_.replace("/", "__"))
        results[id_] = rows
        print(f"{id_} ({BUDGETS[id_]['why']}); load {os.getloadavg()[0]:.1f}")
        for name, r in rows.items():
            status = "ok" if r["rc"] == 0 else f"rc={r['rc']} {r['error']}"
            first_last = f"{r['losses'][0]} .. {r['losses'][-1]}" if r["losses"] else "-"
            print(f"  {name:<40} {r['cpu']:>8.1f} s CPU {r['wall']:>8.1f} s wall  {len(r['losses'])} losses "
                  f"({first_last})  {status}")
        sys.stdout.flush()
        if ARGS.json:
            Path(ARGS.json).write_text(json.dumps({"imports": imports, "results": results}, indent=1, default=str))
    return 0


ARGS = None

if __name__ == "__main__":
    sys.exit(main())
