"""Hand entries against discovery: does ``mindport migrate REPO``, told nothing, prove the classes we wrote entries for?

Each trials entry (``benchmarks/trials/modern.json``) names a repository, a commit, a class, and the constructor and
inputs a person wrote for it; the harness proves it with those. A user runs ``mindport migrate REPO`` with no model
settings: discovery must find the class, build it from the repository's own calls, defaults or small values, guess
its inputs and prove it. For each id given, this script extracts the whole repository at the entry's commit from its
fetched snapshot (``/work/.mirror/OWNER+NAME/repo``; never copied into the project), runs
``python -m mindport migrate SRC -o OUT --models "*:<Class>" --force`` (the entry's class, by name in every
file: an entry's module may re-export it; everything else as a user gets it), and prints per entry the class's status (``proven``, ``diverged``, ``ms-failed``,
``not-built``, or ``not-discovered``) with its reason, then the counts. Results go to ``WORK/results.json``; an id
already there is not run again (delete the file to start over).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/hand_entries.py --work /tmp/hand \\
        --only halonet/halo_attention,las/encoder
    PYTHONPATH=$PWD .venv/bin/python benchmarks/hand_entries.py --work /tmp/hand --sample 4 --max-files 200

``--sample K`` takes every K-th entry of the manifest (one per repository); ``--max-files N`` leaves out
repositories with more than N Python files (a whole transformers copy converts for many minutes).

Session 51, first run (lead51 at 72686554; 13 entries of session 50's GRAPH_MODE sample, every 4th, all proven by
their hand entries): proven 6, diverged 1 (las/encoder: MindSpore's LSTM given ``seq_length``), ms-failed 1
(koopa/one_step in GRAPH_MODE), not built 5 (halonet: an unpack of the input's shape beside attributes; absa/ian: an
embedding matrix constructor argument; cswm: action ids; glow: its own channel assertion after a squeeze; ncrfpp: a
configuration object). After that session's fixes (c5c4d917): proven 8 (halonet, las), not built 4.
``--sample 25 --max-files 150`` on 30952b71: 50 entries, 32 not fetched on that machine; of 18: proven 11, ms-failed 2
(koopa, sknet: GRAPH_MODE classes), not built 3 (sam: its input; gptpt: a model argument; llamagen: memory),
inconclusive 1 (sngan at its own init: ill-conditioned, no float64 convolution), not discovered 1 (nflows_duan: the
class keyed to the entry's module, which re-exports it; since matched by name).

Session 52 (hand52): 14 of those not-fetched entries fetched; from an export of a6287a91 (``--work /tmp/hand52first
--max-files 200 --timeout 400 --only IDS``): proven 5, ms-failed 1 (mamba/cumsum: ``match`` in GRAPH_MODE), not built
7, not discovered 1 (memeff: this script's extraction; ``git archive | tar`` took tar's status, now pipefail). After
the discovery fixes (3f53d25f: FloatTensor sizes inside Parameter, a string handed on takes its callee's default,
pooled-away images grown, failures laid at the open module): proven 8, ms-failed 1, not built 5 (gru4rec, vqacount,
keonseq, mamba2min, maum_univnet); mamba/cumsum proven after the lead's MatchStatementTransform (``--work
/tmp/hand52lead --only mamba/cumsum``): proven 9 of 14. Snapshots are looked for beside the checkout, one level up (a worktree), then in
/work/.mirror, or in ``MINDPORT_SNAPSHOTS``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# /work/.mirror beside /work/main; a worktree (/work/wt/NAME) or an export sits one level deeper or elsewhere
MIRRORS = Path(os.environ.get("MINDPORT_SNAPSHOTS") or next(
    (p for p in (ROOT.parent / ".mirror", ROOT.parent.parent / ".mirror", Path("/work/.mirror")) if p.is_dir()),
    ROOT.parent / ".mirror"))


def _gitdir(repo: str) -> Path | None:
    base = MIRRORS / repo.replace("/", "+")
    for cand in (base / "repo", base / "repo" / ".git", base):
        if (cand / "objects").is_dir():
            return cand
    return None


def _git(gd: Path, *args: str, binary: bool = False):
    return subprocess.run(["git", "--git-dir", str(gd), *args], capture_output=True, text=not binary)


def extract(gd: Path, commit: str, dest: Path) -> None:
    """The repository at ``commit`` into ``dest``: ``git archive``, or file by file (a snapshot may lack a large
    blob, which stops ``archive``): its Python, configuration and text files."""
    dest.mkdir(parents=True)
    # the pipe's status is tar's: git archive stopped by a missing blob still left tar a partial tree (memeff: only
    # its LICENSE extracted, "not discovered"), hence pipefail
    archive = subprocess.run(["bash", "-o", "pipefail", "-c",
                              f"git --git-dir={gd} archive {commit} | tar -x -C {dest}"], capture_output=True)
    if archive.returncode == 0:
        return
    for name in _git(gd, "ls-tree", "-r", "--name-only", commit).stdout.split("\n"):
        if name.endswith((".py", ".yaml", ".yml", ".json", ".cfg", ".toml", ".txt")):
            blob = _git(gd, "show", f"{commit}:{name}", binary=True)
            if blob.returncode == 0:
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                (dest / name).write_bytes(blob.stdout)


def class_key(entry: dict) -> str:
    rel = entry["module"].replace(".", "/") + ".py"
    root = entry.get("import_root", ".")
    return f"{root}/{rel}" if root not in (".", "") else rel


def run_entry(entry: dict, work: Path, timeout: int) -> dict:
    gd = _gitdir(entry["repo"])
    if gd is None:
        return {"status": "not-fetched", "why": f"no snapshot of {entry['repo']} in {MIRRORS}"}
    name = entry["id"].replace("/", "__")
    src, out = work / "src" / name, work / "out" / name
    if not src.is_dir():
        extract(gd, entry["commit"], src)
    key = f"{class_key(entry)}:{entry['class']}"
    started = time.time()
    try:  # by name in every file: an entry's module may re-export a class another file defines
        proc = subprocess.run([sys.executable, "-m", "mindport", "migrate", str(src), "-o", str(out), "--models",
                               f"*:{entry['class']}", "--force"], capture_output=True, text=True, cwd=work, timeout=timeout,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        return {"key": key, "status": "timeout", "why": f"migrate ran past {timeout} s", "seconds": timeout}
    models = []
    if (out / "mindport-report.json").is_file():
        models = json.loads((out / "mindport-report.json").read_text()).get("models", [])
    found = next((m for m in models if m["class"] == key), None) or next(
        (m for m in models if m["class"].endswith(f":{entry['class']}")), None)
    if found is not None:
        key = found["class"]
    result = {"key": key, "rc": proc.returncode, "seconds": round(time.time() - started), "hand_ctor": entry.get("ctor")}
    if found is None:
        return {**result, "status": "not-discovered", "why": (proc.stderr.strip().splitlines() or [""])[-1][:300]}
    return {**result, "status": found["status"], "ctor": found.get("ctor"),
            "why": (found.get("error") or found.get("reason") or "")[:300]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", default=str(ROOT / "benchmarks" / "trials" / "modern.json"))
    parser.add_argument("--work", required=True, help="folder for the sources, the ports and results.json")
    parser.add_argument("--only", help="comma-separated entry ids")
    parser.add_argument("--sample", type=int, help="every K-th entry, one per repository")
    parser.add_argument("--max-files", type=int, default=0, help="skip repositories with more Python files")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per migrate")
    args = parser.parse_args(argv)
    entries = json.loads(Path(args.manifest).read_text())
    if args.only:
        wanted = args.only.split(",")
        by_id = {e["id"]: e for e in entries}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            parser.error(f"not in {args.manifest}: {', '.join(missing)}")
        chosen = [by_id[i] for i in wanted]
    elif args.sample:
        seen, chosen = set(), []
        for e in entries[::args.sample]:
            if e["repo"] not in seen:
                seen.add(e["repo"])
                chosen.append(e)
    else:
        parser.error("give --only IDS or --sample K")
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    store = work / "results.json"
    results = json.loads(store.read_text()) if store.is_file() else {}
    for n, entry in enumerate(chosen, 1):
        if entry["id"] in results:
            continue
        gd = _gitdir(entry["repo"])
        if args.max_files and gd is not None:
            files = _git(gd, "ls-tree", "-r", "--name-only", entry["commit"]).stdout.split("\n")
            if sum(f.endswith(".py") for f in files) > args.max_files:
                print(f"[{n}/{len(chosen)}] {entry['id']}: skipped (more than {args.max_files} Python files)")
                continue
        results[entry["id"]] = run_entry(entry, work, args.timeout)
        r = results[entry["id"]]
        print(f"[{n}/{len(chosen)}] {entry['id']}: {r['status']} {r.get('seconds', '')}s {r['why'][:160]}", flush=True)
        store.write_text(json.dumps(results, indent=1))
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("hand entries vs discovery: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f" (of {len(results)}; details: {store})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
