"""The open training corpus: real training scripts converted with zero edits and run in both frameworks.

Each entry of ``corpus.json`` points at a script in a public repository (repo, commit, files) and gives a recipe:
``argv``/``env`` for the run, ``patches`` (exact substitutions in the run's copy of the torch files, each with
its reason, made before conversion so both sides run the same code: a short step budget, or a fix the torch side
needs to run at all today), ``data`` (synthetic files written where the script reads
a dataset it would download), ``loss`` (the regular expression whose first group is a printed loss) and
``deterministic`` (run both sides with the same data and initial weights: see ``boot.py``), ``streams`` /
``segments`` (several loss curves printed interleaved on a line, or one model after another). No code is copied into
the project; the fetched snapshot is read from ``--mirrors`` at run time.

For each script the runner converts the torch tree with ``mindport convert``, runs the torch original and the
MindSpore port, and reports
- **runs**: the port exits 0 and prints as many losses as torch (at least one);
- **learns**: its loss falls at least half as much, relatively, as torch's ((first - last) / |first|); an entry
  whose torch curve does not learn (``flat``: the reason, e.g. shuffled per-batch losses of a model that cannot fit)
  only has to stay finite;
- **tracks** (deterministic entries): every loss within 1e-4 relative of torch's, or, where it is not, within the
  float32 noise of the script: the torch script is run a third time in float64 from the same weights and data
  (``boot.py control``), and each MindSpore loss must stay within NOISE_FACTOR (mindport/validators/parity/noise.py) times the largest relative difference
  between torch's float32 and float64 losses so far on its curve (float32 rounding, which training amplifies, is not
  a port's divergence; a difference beyond it is). Where that does not cover it, a fourth run, torch in float32 from
  initial weights each one ulp away (``boot.py nudge``), is a second control (a kink crossed: a ReLU input within
  rounding of zero flips on one side and not the other); a script whose nudged run ends >= 1e-2 away is reported
  ``chaotic`` (no float32 implementation tracks it step for step; it still counts as not tracking).

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/training/run.py --work /tmp/tc [--only ID,ID] [--repo O/N]
    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/training/run.py --totals RUN1/results.json RUN2/results.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_LOSS = r"loss\W{0,3}\s*[:=]?\s*(?:tensor\()?\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
TRACK_RTOL = 1e-4
# a script whose torch run, started one ulp away from its own initial weights, ends this far (relative) from it is
# chaotic at float32: no float32 implementation can track it step for step (reported, still not "tracks")
CHAOTIC = 1e-2
WORDS = ("the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches and "
         "every night the river runs under old stone bridges toward the sea").split()


def git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def extract(entry: dict, mirrors: Path, dest: Path) -> None:
    gd = git_dir(mirrors, entry["repo"])
    for rel in entry["files"]:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        blob = subprocess.run(["git", "--git-dir", str(gd), "show", f"{entry['commit']}:{rel}"],
                              capture_output=True, check=True).stdout
        out.write_bytes(blob)


def apply_patches(entry: dict, tree: Path) -> None:
    """The recipe's substitutions in the run's copy of the torch files (a step budget, or a fix the torch side needs
    to run at all, each with its reason), made before conversion so both sides run the same code; a stale recipe
    fails loudly."""
    for rel, old, new, _why in entry.get("patches", []):
        path = tree / rel
        text = path.read_text()
        if old not in text:
            raise SystemExit(f"{entry['id']}: patch text {old!r} not in {rel} (recipe stale)")
        path.write_text(text.replace(old, new, 1))


def write_data(entry: dict, tree: Path) -> None:
    """Synthetic stand-ins for the datasets a script would download or read."""
    rng = random.Random(0)
    for spec in entry.get("data", []):
        path = tree / spec["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec["kind"] == "text":
            lines = []
            for _ in range(spec.get("lines", 400)):
                lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))))
            path.write_text("\n".join(lines) + "\n")
        elif spec["kind"] == "pairs_jsonl":
            # JSON lines of token-list pairs: `src` random words, `tgt` the same words reversed (learnable)
            with path.open("w") as f:
                for _ in range(spec.get("lines", 200)):
                    src = [rng.choice(WORDS) for _ in range(rng.randint(3, 7))]
                    f.write(json.dumps({spec["src"]: src, spec["tgt"]: src[::-1]}) + "\n")
        elif spec["kind"] == "mnist_idx":
            write_mnist(path, spec.get("train", 1000), spec.get("test", 200), spec.get("gz", True), spec.get("raw", False))
        elif spec["kind"] == "checkerboard_pt":
            write_checkerboard(path, spec.get("n", 20000))
        elif spec["kind"] == "image_folder":
            write_image_folder(path, spec.get("classes", 10), spec.get("train", 320), spec.get("val", 64),
                               spec.get("size", 32), spec.get("lists"), tree)
        else:
            raise SystemExit(f"{entry['id']}: unknown data kind {spec['kind']}")


def write_mnist(folder: Path, n_train: int, n_test: int, gz: bool, raw: bool) -> None:
    """MNIST's four idx files (gzipped and/or raw), with synthetic digits: ten fixed 28x28 blob patterns, one per
    class, plus noise, so a classifier has something to learn. The headers give the counts, as MNIST's do."""
    import gzip
    import struct

    import numpy as np

    rng = np.random.RandomState(0)
    protos = (rng.random_sample((10, 28, 28)) > 0.7).astype(np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.randint(0, 10, n).astype(np.uint8)
        images = np.clip(protos[labels] * 200 + rng.normal(0, 40, (n, 28, 28)), 0, 255).astype(np.uint8)
        blobs = {f"{split}-images-idx3-ubyte": struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes(),
                 f"{split}-labels-idx1-ubyte": struct.pack(">II", 2049, n) + labels.tobytes()}
        for name, blob in blobs.items():
            if gz:
                (folder / (name + ".gz")).write_bytes(gzip.compress(blob, compresslevel=1))
            if raw:
                (folder / name).write_bytes(blob)


def write_image_folder(root: Path, classes: int, n_train: int, n_val: int, size: int, lists: dict | None = None,
                       tree: Path | None = None) -> None:
    """An ImageNet-style folder: ``train/`` and ``val/`` PNG images (RGB, size x size) with ``meta/train.txt`` and
    ``meta/val.txt`` listing "relative/path label" a line, as ImageNet's meta files do. One fixed colour pattern per
    class plus noise, so a classifier has something to learn. ``lists`` ({"train": path, "val": path,
    "relative_to": dir}, paths in the tree) also writes "image-path label" lists whose image paths are relative to
    ``relative_to`` (the script's working directory), as a tutorial's generated txt lists are."""
    import numpy as np
    from PIL import Image

    rng = np.random.RandomState(0)
    protos = rng.uniform(0, 255, (classes, size, size, 3))
    (root / "meta").mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("val", n_val)):
        lines = []
        for i in range(n):
            label = int(rng.randint(0, classes))
            img = np.clip(0.6 * protos[label] + 0.4 * rng.uniform(0, 255, (size, size, 3)), 0, 255).astype(np.uint8)
            rel = f"n{label:03d}/{split}_{i:05d}.png"
            (root / split / rel).parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(img).save(root / split / rel)
            lines.append(f"{rel} {label}")
        (root / "meta" / f"{split}.txt").write_text("\n".join(lines) + "\n")
        if lists and split in lists:
            base = tree / lists.get("relative_to", ".")
            rows = [f"{os.path.relpath(root / split / line.rsplit(' ', 1)[0], base)} {line.rsplit(' ', 1)[1]}"
                    for line in lines]
            (tree / lists[split]).parent.mkdir(parents=True, exist_ok=True)
            (tree / lists[split]).write_text("\n".join(rows) + "\n")


def write_checkerboard(path: Path, n: int) -> None:
    """A float32 (n, 2) tensor saved by torch.save, as a data script writes its samples for a training script to
    torch.load: points uniform in [-4, 4)^2 whose floor coordinates sum to an even number (a checkerboard). Both trees
    get the same torch file: the port reads what torch wrote, as a user's converted script reads the user's data."""
    import numpy as np
    import torch

    rng = np.random.RandomState(0)
    pts = rng.uniform(-4, 4, (4 * n, 2))
    pts = pts[np.floor(pts).sum(axis=1) % 2 == 0][:n]
    torch.save(torch.tensor(pts, dtype=torch.float32), path)


def convert(python: str, src: Path, out: Path) -> tuple[int, str]:
    cmd = [str(Path(python).with_name("mindport")), "convert", str(src), "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout[-3000:] + p.stderr[-3000:]


def run_side(python: str, side: str, mode: str, tree: Path, state: Path, entry: dict, timeout: int) -> dict:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0", **entry.get("env", {}))
    env["PYTHONPATH"] = os.pathsep.join(x for x in [str(tree / entry.get("import_root", ".")),
                                                    os.environ.get("PYTHONPATH", "")] if x)
    script = tree / entry["script"]
    cmd = [python, str(HERE / "boot.py"), side, mode, str(state), str(script)] + entry.get("argv", [])
    start = time.time()
    try:
        p = subprocess.run(cmd, cwd=script.parent, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:  # what it printed by then is kept: slow (losses coming) or stuck?
        rc, out, err = -9, _text(e.stdout), _text(e.stderr) + "\ntimeout"
    return {"rc": rc, "stdout": out, "stderr": err, "seconds": round(time.time() - start, 1)}


def fresh_tree(work: Path) -> Path:
    """A copy of the torch tree as it was before the first run, for a control run: what the script's first run left
    behind (an output directory it refuses to overwrite, a checkpoint it would resume from) is not there, as it was
    not for the runs the control measures."""
    tree = work / "control_tree"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(work / "pristine", tree, symlinks=True)
    return tree


def _text(stream) -> str:
    return (stream or b"").decode(errors="replace") if isinstance(stream, bytes) else (stream or "")


def side_error(entry: dict, side: dict, torch_side: dict | None = None) -> str:
    """The line that says why a side failed; for a time-out, how far it got (losses printed by then, of torch's)."""
    if side["rc"] == -9:
        pat = entry.get("loss", DEFAULT_LOSS)
        got = len(losses(printed(entry, side), pat))
        of = f" of {len(losses(printed(entry, torch_side), pat))}" if torch_side is not None else ""
        return f"timeout after {side['seconds']} s: {got}{of} losses printed"
    return error_line(side["stderr"]) if side["rc"] else ""


def losses(text: str, pattern: str) -> list[str]:
    """Every group of every match, in order, as printed (the text keeps the printed precision)."""
    vals = []
    for m in re.finditer(pattern, text, flags=re.MULTILINE):
        vals.extend(g for g in m.groups() if g is not None)
    return vals


def drop(vals: list[float]) -> float:
    if len(vals) < 2 or not all(map(math.isfinite, vals)) or vals[0] == 0:
        return float("nan")
    return (vals[0] - vals[-1]) / abs(vals[0])


def series(vals: list[float], entry: dict) -> list[list[float]]:
    """The loss curves a script prints: ``streams`` interleaved (several losses a line) and ``segments`` one after
    another (several models trained in turn)."""
    k = entry.get("streams", 1)
    out = [vals[i::k] for i in range(k)]
    n = entry.get("segments", 1)
    if n > 1:
        out = [s[j * len(s) // n:(j + 1) * len(s) // n] for s in out for j in range(n)]
    return out


def close(a: str, b: str) -> bool:
    """Within 1e-4 relative, or within one unit of the last digit printed (a script that prints 4 decimals cannot
    show more agreement than that)."""
    x, y = float(a), float(b)
    if abs(x - y) <= TRACK_RTOL * max(abs(x), 1e-12):
        return True
    decimals = len(a.split(".")[1].split("e")[0].split("E")[0]) if "." in a else 0
    return "e" not in a.lower() and abs(x - y) <= 10.0 ** -decimals * 1.0001


def noise_tracks(entry: dict, st: list[str], sm: list[str], *controls: list[str]) -> tuple[bool, float]:
    """Every MindSpore loss within 1e-4 (``close``) or within the float32 noise (``within_noise``) so far on its
    curve: the largest relative difference between torch's float32 losses (st) and a control's (torch in float64;
    torch from initial weights one ulp away: the larger of the two at each step) up to that step.
    Returns (tracks, the largest difference of the first control)."""
    from mindport.validators.parity.noise import within_noise

    if any(len(sc) != len(st) for sc in controls):
        return False, float("nan")
    ok = True
    for curve in series(list(range(len(st))), entry):
        quiet = [False] * len(curve)
        for sc in controls:
            noise = within_noise([float(st[i]) for i in curve], [float(sc[i]) for i in curve],
                                 [float(sm[i]) for i in curve])
            quiet = [a or b for a, b in zip(quiet, noise)]
        ok = ok and all(close(st[i], sm[i]) or q for i, q in zip(curve, quiet))
    return ok, max_rel(st, controls[0])


def max_rel(st: list[str], other: list[str]) -> float:
    """The largest relative difference of ``other``'s losses from torch's float32 losses ``st``."""
    from mindport.validators.parity.noise import rel

    return max((rel(float(a), float(b)) for a, b in zip(st, other)), default=0.0)


def error_line(stderr: str) -> str:
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^[A-Za-z_.]+(Error|Exception|Interrupt)\b|^[A-Za-z_.]+Error:", l):
            return l.strip()[:300]
    return (lines[-1].strip()[:300] if lines else "")


def printed(entry: dict, side: dict) -> str:
    """The stream the script prints its losses on: stdout, or stderr for a script that logs them
    (``loss_stream``: ``logging`` writes to stderr)."""
    return side["stderr" if entry.get("loss_stream") == "stderr" else "stdout"]


def judge(entry: dict, t: dict, m: dict) -> dict:
    pat = entry.get("loss", DEFAULT_LOSS)
    return judge_losses(entry, losses(printed(entry, t), pat), losses(printed(entry, m), pat), m["rc"])


def judge_losses(entry: dict, st: list[str], sm: list[str], m_rc: int) -> dict:
    lt, lm = [float(v) for v in st], [float(v) for v in sm]
    runs = m_rc == 0 and len(lm) == len(lt) and len(lt) > 0
    learns = runs
    drops = []
    if runs:
        for ct, cm in zip(series(lt, entry), series(lm, entry)):
            dt, dm = drop(ct), drop(cm)
            drops.append([dt, dm])
            if dt > 0 and not entry.get("flat"):
                learns = learns and dm >= 0.5 * dt
            else:                 # torch itself does not fall over the budget: the port must stay finite
                learns = learns and all(map(math.isfinite, cm))
    res = {"runs": runs, "learns": learns, "torch_losses": lt, "ms_losses": lm, "drops": drops}
    if entry.get("deterministic"):
        if runs:
            rel = [abs(a - b) / max(abs(a), 1e-12) for a, b in zip(lt, lm)]
            res["max_rel"] = max(rel)
            res["per_step_rel"] = rel
            res["tracks"] = all(close(a, b) for a, b in zip(st, sm))
        else:
            res["tracks"] = False
        if entry.get("chaotic"):
            # declared in the recipe, with its measurement: torch's own float32 run does not reproduce itself step for
            # step (1 ulp of its initial weights, or float32 rounding of a mathematically zero quantity, moves it
            # >= CHAOTIC): no implementation can track it. Still run with the shared data and weights (learns is
            # judged on the same trajectory, max_rel reported), but not counted among the tracking entries
            res["tracks_declared_chaotic"] = res.pop("tracks")
    return res


def count_within_noise_candidate(entry: dict, res: dict, m: dict) -> bool:
    """A deterministic single-curve entry whose port ran to the end and printed a few losses more or fewer than
    torch (at most one in 50, at least 20 printed): the count may be a tolerance test's decision on a chaotic
    curve (see run_entry)."""
    lt, lm = res.get("torch_losses", []), res.get("ms_losses", [])
    return (bool(entry.get("deterministic")) and m["rc"] == 0 and not res.get("runs") and len(lm) >= 20
            and entry.get("streams", 1) == 1 and entry.get("segments", 1) == 1
            and 0 < abs(len(lt) - len(lm)) <= max(1, len(lt) // 50))


def flags(conv: Path) -> list[str]:
    found = []
    for f in sorted(conv.rglob("*.py")):
        for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = re.search(r"# mindport: (MP\d+)", line)
            if m:
                found.append(f"{f.relative_to(conv)}:{i}:{m.group(1)}")
    return found


def run_entry(entry: dict, args) -> dict:
    work = Path(args.work) / entry["id"].replace("/", "__")
    shutil.rmtree(work, ignore_errors=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    src, conv, state = work / "torch", work / "ms", work / "state"
    for d in (src, state):
        d.mkdir(parents=True)
    extract(entry, Path(args.mirrors), src)
    apply_patches(entry, src)
    rc, conv_log = convert(args.python, src, conv)
    write_data(entry, src)
    write_data(entry, conv)
    shutil.copytree(src, work / "pristine", symlinks=True)  # the torch tree before any run, for the controls
    mode = "track" if entry.get("deterministic") else "plain"
    res = {"id": entry["id"], "repo": entry["repo"], "kind": entry.get("kind", ""), "convert_rc": rc,
           "started": started,
           "flags": flags(conv) if conv.exists() else []}
    t = run_side(args.python, "torch", mode, src, state, entry, args.timeout)
    res["torch"] = {"rc": t["rc"], "seconds": t["seconds"], "error": side_error(entry, t)}
    if t["rc"] != 0:
        res.update(runs=False, learns=False, status="torch-failed")
        (work / "torch.log").write_text(t["stdout"] + "\n---stderr---\n" + t["stderr"])
        return res
    m = run_side(args.python, "mindspore", mode, conv, state, entry, args.timeout) if conv.exists() else \
        {"rc": -1, "stdout": "", "stderr": "conversion wrote nothing\n" + conv_log, "seconds": 0}
    (work / "torch.log").write_text(t["stdout"] + "\n---stderr---\n" + t["stderr"])
    (work / "ms.log").write_text(m["stdout"] + "\n---stderr---\n" + m["stderr"])
    res["ms"] = {"rc": m["rc"], "seconds": m["seconds"], "error": side_error(entry, m, t)}
    res.update(judge(entry, t, m))
    if count_within_noise_candidate(entry, res, m):
        # A deterministic script whose number of losses is decided by a tolerance test (L-BFGS's line search and
        # stopping tests: 75 closure calls against torch's 76) on a chaotic curve: judged on the losses both printed
        # if every port loss there is within torch's own float32 noise (its float64 control); the count is recorded.
        c = run_side(args.python, "torch", "control", fresh_tree(work), state, entry, args.timeout)
        (work / "control.log").write_text(c["stdout"] + "\n---stderr---\n" + c["stderr"])
        pat = entry.get("loss", DEFAULT_LOSS)
        st, sm, sc = (losses(printed(entry, x), pat) for x in (t, m, c))
        n = min(len(st), len(sm), len(sc))
        if c["rc"] == 0:
            ok, noise = noise_tracks(entry, st[:n], sm[:n], sc[:n])
            if ok:
                counts = (len(st), len(sm))
                res.update(judge_losses(entry, st[:n], sm[:n], m["rc"]))
                res.update(tracks=True, tracked_by=f"noise (count {counts[1]} of torch's {counts[0]}, within noise "
                           f"over the {n} both printed)", control_max_rel=noise, loss_counts=counts)
    if res.get("runs") and res.get("tracks") is False:  # beyond 1e-4: is it the script's float32 noise?
        c = run_side(args.python, "torch", "control", fresh_tree(work), state, entry, args.timeout)
        (work / "control.log").write_text(c["stdout"] + "\n---stderr---\n" + c["stderr"])
        pat = entry.get("loss", DEFAULT_LOSS)
        if c["rc"] == 0:
            ok, noise = noise_tracks(entry, *(losses(printed(entry, x), pat) for x in (t, m, c)))
            res.update(tracks=ok, tracked_by="noise" if ok else "", control_max_rel=noise)
        else:
            res["control_error"] = error_line(c["stderr"])
        if c["rc"] == 0 and not res["tracks"]:  # a kink crossed (a ReLU input within rounding of zero)? torch 1 ulp away
            n = run_side(args.python, "torch", "nudge", fresh_tree(work), state, entry, args.timeout)
            (work / "nudge.log").write_text(n["stdout"] + "\n---stderr---\n" + n["stderr"])
            if n["rc"] == 0:
                st, sm, sc, sn = (losses(printed(entry, x), pat) for x in (t, m, c, n))
                ok, _ = noise_tracks(entry, st, sm, sc, sn)
                nudge = max_rel(st, sn)
                res.update(tracks=ok, tracked_by="noise (nudged control)" if ok else "", nudge_max_rel=nudge,
                           chaotic=nudge >= CHAOTIC)
    res["status"] = "ok" if res["runs"] and res["learns"] and res.get("tracks", True) else "fail"
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(HERE / "corpus.json"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--work", help="where to run (required unless --totals)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="")
    ap.add_argument("--repo", default="")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--resume", action="store_true",
                    help="keep the entries --work/results.json already holds and run the rest, in order")
    ap.add_argument("--totals", nargs="+", metavar="RESULTS_JSON",
                    help="run nothing: print the manifest's totals from these results.json files (a later file's "
                         "result of an entry replaces an earlier one) and the entries never run")
    args = ap.parse_args(argv)
    entries = json.loads(Path(args.manifest).read_text())
    if args.totals:
        return totals(entries, args.totals)
    if not args.work:
        ap.error("--work is required to run entries")
    if args.only:
        keep = set(args.only.split(","))
        entries = [e for e in entries if e["id"] in keep]
    if args.repo:
        entries = [e for e in entries if e["repo"] == args.repo]
    Path(args.work).mkdir(parents=True, exist_ok=True)
    results = []
    done_file = Path(args.work) / "results.json"
    if args.resume and done_file.exists():
        results = json.loads(done_file.read_text())
        done = {r["id"] for r in results}
        entries = [e for e in entries if e["id"] not in done]
    for e in entries:
        r = run_entry(e, args)
        results.append(r)
        extra = f" max_rel={r['max_rel']:.2e}" if "max_rel" in r else ""
        if "control_max_rel" in r:
            extra += f" f32-vs-f64={r['control_max_rel']:.2e}" + (" (within noise)" if r.get("tracks") else "")
        elif "control_error" in r:
            extra += " control failed: " + r["control_error"][:80]
        if "nudge_max_rel" in r:
            extra += f" torch-1ulp-away={r['nudge_max_rel']:.2e}" + (" (chaotic)" if r.get("chaotic") else "")
        err = (r.get("ms") or {}).get("error") or (r.get("torch") or {}).get("error") or ""
        print(f"{r['status']:13} runs={int(r['runs'])} learns={int(r['learns'])} "
              f"tracks={r.get('tracks', '-')!s:5} {e['id']}{extra}  {err[:160]}", flush=True)
        (Path(args.work) / "results.json").write_text(json.dumps(results, indent=1))
    print("\n" + summary(results))
    return 0 if all(r["status"] == "ok" for r in results) else 1


def chaotic_note(valid) -> str:
    declared = [r for r in valid if "tracks_declared_chaotic" in r]
    return f"; {len(declared)} declared chaotic in their recipes, not counted" if declared else ""


def summary(results) -> str:
    """The totals line: valid scripts, run, run and learn, deterministic tracking, torch-side failures."""
    valid = [r for r in results if r["status"] != "torch-failed"]
    det = [r for r in valid if "tracks" in r]
    return (f"{len(valid)} scripts ({len({r['repo'] for r in valid})} repositories): "
            f"{sum(r['runs'] for r in valid)} run, {sum(r['runs'] and r['learns'] for r in valid)} run and learn, "
            f"{sum(r['tracks'] for r in det)}/{len(det)} deterministic track"
            f" ({sum(bool(r.get('chaotic')) and not r['tracks'] for r in det)} of the rest chaotic"
            f"{chaotic_note(valid)}); "
            f"{len(results) - len(valid)} torch-failed (recipe problem)")


def totals(manifest, result_files) -> int:
    """Whole-manifest totals from runs on record: each entry's LAST result in the order the files are given (a later
    run of an entry replaces an earlier one), entries never run listed. Exit 0 only if every entry ran and is ok."""
    ids = [e["id"] for e in manifest]
    latest, source = {}, {}
    for f in result_files:
        for r in json.loads(Path(f).read_text()):
            if r["id"] in ids:
                latest[r["id"]], source[r["id"]] = r, f
    results = [latest[i] for i in ids if i in latest]
    unreached = [i for i in ids if i not in latest]
    for r in results:
        if r["status"] != "ok":
            err = (r.get("ms") or {}).get("error") or (r.get("torch") or {}).get("error") or ""
            print(f"{r['status']:13} runs={int(r['runs'])} learns={int(r['learns'])} tracks={r.get('tracks', '-')!s:5} "
                  f"{r['id']}  [{source[r['id']]}]  {err[:120]}")
    print(f"{len(ids)} entries in the manifest, {len(results)} with a result, {len(unreached)} never run"
          + (": " + ", ".join(unreached) if unreached else ""))
    print(summary(results))
    return 0 if not unreached and all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
