"""Discovery + proof over many public repositories: our main real-code loop (the wild and trials corpora stay as
regression sets).

For each repository of the manifest (``benchmarks/discovery/manifest.txt``: ``owner/name domain`` per line; none
may be in ``../shared/reserved-repos.txt``, checked here), read from its fetched snapshot
(``/work/.mirror/OWNER+NAME/repo``, brought by the search tool's ``fetch``: the snapshot is never copied into the
project), export HEAD to a scratch folder, convert it once (``convert_path``), then discover, build and prove its
models (``mindport.discovery.prove.prove_models``: one torch builder process and one torch/MindSpore side pair per
repository). Prints per repository discovered / built / proven and the failure classes, then the totals and the
throughput (models proven per minute, wall clock), and writes every model's entry to ``--json``.

    python benchmarks/discovery_sweep.py --max-models 8 --json /tmp/discovery/run.json
    python benchmarks/discovery_sweep.py --only lucidrains/imagen-pytorch --max-models 20
    python benchmarks/discovery_sweep.py --time-budget 30   # stop starting repositories after 30 minutes
    python benchmarks/discovery_sweep.py --build-only --max-models 15 --stub-missing --json /tmp/build.json

``--build-only``: discover and build in torch only (the same builder process, constructor guessing, input inference
and deterministic finite eval forward as ``prove_models``, through ``prove_models(..., build_only=True)``), with no
conversion and no MindSpore: per repository discovered / tried / built and the not-built failure classes, totals and
throughput. Its built figure is the first half of the proof's; it says nothing of the proven share.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "discovery" / "manifest.txt"
MIRROR = Path("/work/.mirror")
RESERVED = Path("/work/shared/reserved-repos.txt")

# failure classes. A model not built carries the reasons of every constructor attempt (" | "); it is classed by the
# attempt that went furthest: one that built and met no input that ran (classed by the forward's error), else the
# constructor's error. Within a status the first matching pattern wins.
_INPUT_CLASSES = [
    (r'missing the required "forward"', "not a model: no forward (abstract base)"),
    (r"cannot compare an output of type|returned no (floating )?tensor",
     "inputs: the forward returns no tensor (a distribution, an object)"),
    (r"not deterministic", "inputs: the eval forward is not deterministic"),
    (r"non-finite", "inputs: the eval forward gives non-finite values"),
    # a stub's call returns an instance of its class "result": "must be Tensor, not result", "for +: 'result' and"
    (r"_StubMeta|mindport_stub|_Stub\b|, not result\b|'result'", "stubbed module used in the forward"),
    (r"scalar type Long|Long, Int|long int != float|same dtype|dtype|Float but found Long|not implemented for 'Long'",
     "inputs: the input's dtype (integer vs float)"),
    (r"missing \d+ required positional|takes \d+ positional|unexpected keyword",
     "inputs: the forward needs other arguments"),
    (r"mat1 and mat2|channels|size of tensor|Dimension out of range|not enough values to unpack|too many values to "
     r"unpack|shape|Kernel size|expected .*\d-?D|[0-9]D input|dimension|Expected .* input|invalid for input of size"
     r"|out of range|index|hx|hidden", "inputs: shape or rank the model does not take"),
    (r".", "inputs: the forward raised (other)"),
]
_CTOR_CLASSES = [
    (r"over --max-convert-files", "sweep: the model's import closure is over the conversion cap"),
    (r"No module named '([\w.]+)'", "missing module {0}"),
    (r"_StubMeta|_StubModule|mindport_stub|expected np.ndarray \(got \w+\)|type '\w+' is not subscriptable",
     "stubbed module used while building"),
    (r"relative import beyond top-level", "import error: relative import beyond the top-level package"),
    (r"ImportError|cannot import name", "import error"),
    (r"network access is disabled|urlopen|download|HTTP", "needs the network (pretrained weights)"),
    (r"No such file or directory|FileNotFoundError", "needs a file (config, weights, data)"),
    (r"no constructor arguments could be chosen", "ctor: required arguments of unknown kind"),
    (r"not a torch.nn.Module", "ctor: the call builds no nn.Module"),
    (r"a layer of width 0", "ctor: the small sizes give a layer of width 0"),
    (r"parameters \(over", "too large"),
    (r"builder stopped", "builder crash or time limit"),
    (r"took over|Timeout", "time limit"),
    (r"'(int|float)' object (has no attribute|is not (callable|iterable|subscriptable))|must be a mapping, not int|"
     r"not (int|float)\b|of type '?(int|float)\b|'(int|float)' object",
     "ctor: a guessed number where an object, list or mapping was needed"),
    (r"'NoneType'|NoneType", "ctor: a None default the constructor does not take alone"),
    (r"missing \d+ required|required positional|unexpected keyword|takes \d+ positional",
     "ctor: arguments rejected"),
    (r"converted counterpart", "file not converted"),
    (r"failed(?: at \S+)?: (\w+):", "ctor: raised while building ({0})"),
    (r"(\w+(?:Error|Exception|Interrupt)):", "ctor: raised while building ({0})"),
    (r".", "ctor: raised while building (other)"),
]
CLASSES = [
    ("ms-failed", r"^not converted: ", "sweep: the model's file was not converted (time limit or converter failure)"),
    ("diverged", r"^not converted: ", "sweep: the model's file was not converted (time limit or converter failure)"),
    ("ms-failed", r"building the MindSpore Cell failed: importing", "MindSpore: converted module does not import"),
    ("ms-failed", r"building the MindSpore Cell failed", "MindSpore: Cell does not build"),
    ("ms-failed", r"moving the weights failed", "MindSpore: weights do not map"),
    ("ms-failed", r"GRAPH_MODE failed", "MindSpore: GRAPH_MODE does not compile"),
    ("ms-failed", r"draw sequence diverged", "MindSpore: draws otherwise than torch (replayed draws)"),
    ("ms-failed", r"Cell raised", "MindSpore: forward raises"),
    ("ms-failed", r"over .* s \(stopped\)", "proof time limit"),
    ("ms-failed", r".", "MindSpore: other"),
    ("diverged", r"known trap", "diverged: known trap in the settings"),
    ("diverged", r"random draw", "diverged: at the random draw only"),
    ("diverged", r"GRAPH_MODE outputs differ", "diverged: GRAPH_MODE vs PyNative"),
    ("diverged", r"vacuous", "diverged: vacuous"),
    ("diverged", r"re-check on perturbed weights", "diverged: only the re-check of a constant output on perturbed weights"),
    ("diverged", r".", "diverged: outputs differ"),
]


def _first(table, text: str) -> str:
    for pattern, name in table:
        m = re.search(pattern, text)
        if m:
            return name.format(*(g.split(".")[0] for g in m.groups() if g))
    return "other"


def failure_class(entry: dict) -> str | None:
    status = entry["status"]
    if status == "proven":
        return None
    text = entry.get("error") or entry.get("reason") or ""
    if status == "not-built":
        attempts = text.split(" | ")
        ran = [a for a in attempts if "built; no input" in a]
        if all(re.search(r"parameters \(over", a) for a in attempts):
            return "too large"
        if ran:
            if "no input form known" in ran[0]:
                return "inputs: no input form known"
            return _first(_INPUT_CLASSES, ran[0].split("no input ran:", 1)[-1])
        big = [a for a in attempts if not re.search(r"parameters \(over", a)]
        return _first(_CTOR_CLASSES, (big or attempts)[0])
    for st, pattern, name in CLASSES:
        if st == status and re.search(pattern, text):
            return name
    return status


def read_manifest(path: Path) -> list[tuple[str, str]]:
    reserved = {line.strip() for line in RESERVED.read_text().splitlines()
                if line.strip() and not line.startswith("#")} if RESERVED.is_file() else set()
    rows = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        repo, domain = (line.split() + ["?"])[:2]
        if repo in reserved:
            raise SystemExit(f"{path}: {repo} is reserved ({RESERVED}): remove it")
        rows.append((repo, domain))
    return rows


def git_dir(repo: str) -> Path | None:
    base = MIRROR / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def export(repo: str, into: Path) -> str:
    """HEAD's files into ``into`` (a snapshot lacks its files of 4 MiB and more: those are left out; symlinks too)."""
    gd = str(git_dir(repo))
    commit = subprocess.run(["git", "--git-dir", gd, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    listing = subprocess.run(["git", "--git-dir", gd, "ls-tree", "-r", "-z", "HEAD"], capture_output=True,
                             check=True).stdout.split(b"\0")
    blobs = []
    for item in listing:
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            blobs.append((sha, path.decode("utf-8", "replace")))
    into.mkdir(parents=True)
    proc = subprocess.run(["git", "--git-dir", gd, "cat-file", "--batch"], input=b"".join(s + b"\n" for s, _ in blobs),
                          capture_output=True, check=True)
    data, pos = proc.stdout, 0
    for sha, path in blobs:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":  # missing from the snapshot
            continue
        size = int(header[2])
        target = into / path
        if ".." not in Path(path).parts:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data[pos:pos + size])
        pos += size + 1
    return commit


def conversion_plan(src: Path, rels: list[str], files: list[str], cap: int) -> tuple[set[str], dict[str, int]]:
    """The files to convert for the chosen models' files ``rels``: each one with every project file it imports and
    their packages' ``__init__.py``; a model file whose closure is over ``cap`` files (0: no cap) is left out and
    returned with its count (microsoft/LoRA's models under its copy of transformers import the package's
    ``__init__``, which imports 364 files: 31+ minutes of conversion for one repository).
    With each model file come the files that import it directly (its users) and what they import, when that stays
    within ``cap``: the builder takes a constructor from the repository's own calls (its users'), and the text it
    records names the objects built there by their modules (``Encoder([EncoderLayer(__import__('layers.
    AutoCorrelation', ...).AutoCorrelationLayer(...))])``, thuml/Autoformer). A module the model file itself never
    imports was left unconverted, the MindSpore side's import of it found no file and ``--stub-missing`` gave a
    stand-in layer without parameters: "torch tensors unmatched: attn_layers.0.attention.query_projection.weight"
    (Autoformer ``Encoder``, FEDformer ``DecoderLayer``: weights that never map, in the sweep only; migrate converts
    every file)."""
    from mindport.discovery.scan import imported_files

    needed: set[str] = set()
    over_cap: dict[str, int] = {}
    trees: dict = {}
    direct: dict[str, set[str]] = {}

    def with_packages(closure: set[str]) -> set[str]:
        for f in list(closure):
            parts = f.split("/")[:-1]
            closure |= {"/".join(parts[:i] + ["__init__.py"]) for i in range(1, len(parts) + 1)}
        return {f for f in closure if (src / f).is_file()}

    for rel in dict.fromkeys(rels):
        closure = with_packages(set(imported_files(src, [rel], files, trees)))
        if cap and len(closure) > cap:
            over_cap[rel] = len(closure)
            continue
        needed |= closure
        for f in files:
            if f not in direct:
                direct[f] = set(imported_files(src, [f], files, trees, hops=1)) - {f}
        users = [f for f in files if rel in direct[f]]
        used = with_packages(set(imported_files(src, users, files, trees))) if users else set()
        if not cap or len(closure | used) <= cap:
            needed |= used
    return needed, over_cap


def _settings(args):
    from mindport.discovery.prove import ProveSettings

    return ProveSettings(graph_mode=not args.no_graph, build_seconds=args.build_seconds,
                         proof_seconds=args.proof_seconds, stub_missing=args.stub_missing,
                         **({"max_params": args.max_params} if args.max_params else {}))


def run_repo(repo: str, domain: str, work: Path, args) -> dict:
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    t0 = time.perf_counter()
    folder = work / repo.replace("/", "+")
    shutil.rmtree(folder, ignore_errors=True)
    src, out = folder / "src", folder / "out"
    row = {"repo": repo, "domain": domain}
    try:
        row["commit"] = export(repo, src)
    except (subprocess.CalledProcessError, OSError) as exc:
        return row | {"error": f"export failed: {exc}", "seconds": round(time.perf_counter() - t0, 1)}
    if args.build_only:
        return row | build_repo(src, folder, args) | {"seconds": round(time.perf_counter() - t0, 1)}
    t = time.perf_counter()
    exclude: tuple[str, ...] = ()
    over_cap: dict[str, int] = {}  # model file -> files it needs, over --max-convert-files: not converted
    if not args.convert_all:  # the files the chosen models need, and their packages' __init__.py: converted once
        from mindport.discovery.prove import select
        from mindport.discovery.scan import discover, python_files

        files = python_files(src, notebooks=True)  # a notebook's models too
        chosen = select(discover(src, files), None, args.max_models, spread=True, sample_seed=args.sample_seed)
        needed, over_cap = conversion_plan(src, [c.rel for c in chosen], files, args.max_convert_files)
        # (an exclude pattern matches from the right: never one that would also drop a needed file)
        exclude = tuple(f for f in files if f not in needed and not any(Path(n).match(f) for n in needed))
    conversion = convert_path(src, out, jobs=args.jobs, force=True, timeout=args.convert_seconds, exclude=exclude)
    row["convert_seconds"] = round(time.perf_counter() - t, 1)
    row["files"] = len(conversion.files)
    models, summary = prove_models(src, out, max_models=args.max_models, workers=args.workers, settings=_settings(args),
                                   cache=False, log_dir=folder / "logs", spread=True, sample_seed=args.sample_seed)
    for m in models:
        rel = m["class"].rpartition(":")[0]
        if rel in over_cap and m["status"] == "not-built":
            m["reason"] = (f"not converted: {rel} and the project files it imports are {over_cap[rel]} files (over "
                           f"--max-convert-files {args.max_convert_files})")
    row["unconverted"] = mark_unconverted(models, conversion)
    row.update(summary=summary, models=models, seconds=round(time.perf_counter() - t0, 1))
    if not args.keep:
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return row


def build_repo(src: Path, folder: Path, args) -> dict:
    """``--build-only``: discover and build ``src``'s models in torch (``prove_models(..., build_only=True)``: the
    builder process the proof uses, no conversion, no MindSpore). Returns the row's summary and models (a model built
    has the status "built")."""
    from mindport.discovery.prove import prove_models

    models, summary = prove_models(src, None, max_models=args.max_models, settings=_settings(args), cache=False,
                                   log_dir=folder / "logs", spread=True, build_only=True,
                                   sample_seed=args.sample_seed)
    if not args.keep:
        shutil.rmtree(src, ignore_errors=True)
    return {"build_only": True, "summary": summary, "models": models}


def mark_unconverted(models: list[dict], conversion) -> dict[str, str]:
    """The files the conversion copied unchanged (MP299: past the per-file time limit, or the converter failed), and
    each model of such a file that reached the MindSpore side and failed there says so first: that side ran the
    torch source ("built a CrossAttention, not a mindspore.nn.Cell": imagen-pytorch's 96 kB and 62 kB files took over
    60 s each at a load average of 20 on 2 cores), which is the sweep's conversion, not the model. Returns file ->
    message."""
    failed = {f.path: next((d.message for d in f.diagnostics if d.code == "MP299"), f.status)
              for f in conversion.files if f.status == "failed"}
    for m in models:
        rel = m["class"].rpartition(":")[0]
        if rel in failed and m["status"] in ("ms-failed", "diverged"):  # (a torch-side failure stays as it is)
            key = "error" if m.get("error") else "reason"
            m[key] = f"not converted: {rel} was copied unchanged ({failed[rel]}); " + (m.get(key) or "")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--only", action="append", help="owner/name (repeatable)")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N repositories of the manifest")
    parser.add_argument("--repos", type=int, default=None, help="at most N repositories")
    parser.add_argument("--max-models", type=int, default=8, help="models per repository (spread over its files)")
    parser.add_argument("--sample-seed", type=int, default=None, metavar="N",
                        help="draw each repository's --max-models uniformly at random from its discovered classes "
                             "(seed N, prove.select) instead of the spread: the summary's estimate of built %% of "
                             "discovered is then unbiased")
    parser.add_argument("--workers", type=int, default=1, help="torch/MindSpore side pairs per repository")
    parser.add_argument("--jobs", type=int, default=1, help="conversion workers")
    parser.add_argument("--build-seconds", type=float, default=20.0)
    parser.add_argument("--proof-seconds", type=float, default=120.0)
    parser.add_argument("--convert-seconds", type=float, default=240.0,
                        help="per-file conversion time limit, wall clock (a file over it is copied unchanged and its "
                             "models are reported as not converted); 60 before: a busy machine stopped 100 kB files")
    parser.add_argument("--no-graph", action="store_true")
    parser.add_argument("--max-params", type=int, default=None,
                        help="models over this are not built (default: migrate's own cap, ProveSettings.max_params, "
                             "40,000,000; the sweeps before session 26 used 10,000,000)")
    parser.add_argument("--time-budget", type=float, default=None, metavar="MINUTES",
                        help="start no repository after this many minutes")
    parser.add_argument("--work", type=Path, default=Path("/tmp/discovery-sweep"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep each repository's source and conversion")
    parser.add_argument("--stub-missing", action="store_true",
                        help="modules this machine lacks are stand-ins (mindport.discovery.stubs): a model that "
                             "needs one fails when it uses it; the entries name the stubbed modules")
    parser.add_argument("--max-convert-files", type=int, default=150, metavar="N",
                        help="a chosen model whose file imports more than N project files (a vendored library's "
                             "package __init__) is not converted; it is reported as such (0: no cap)")
    parser.add_argument("--convert-all", action="store_true",
                        help="convert every file (default: the chosen models' files and what they import)")
    parser.add_argument("--build-only", action="store_true",
                        help="discover and build in torch only (no conversion, no MindSpore, no proof): discovered / "
                             "tried / built and the not-built failure classes")
    parser.add_argument("--reclassify", type=Path, default=None, metavar="JSON",
                        help="print the totals and failure classes of an earlier run's --json again (no run)")
    args = parser.parse_args()

    if args.reclassify is not None:
        data = json.loads(args.reclassify.read_text(encoding="utf-8"))
        if args.only:
            data["repositories"] = [r for r in data["repositories"] if r["repo"] in args.only]
        for i, row in enumerate(data["repositories"], 1):
            _print_row(i, len(data["repositories"]), row)
        _print_totals(data["repositories"], data.get("not_fetched", []), None, data.get("minutes"),
                      sampled=data.get("sample_seed") is not None if "sample_seed" in data else None)
        return 0
    rows = read_manifest(args.manifest)
    if args.only:
        rows = [r for r in rows if r[0] in args.only]
    rows = rows[args.skip:]
    if args.repos is not None:
        rows = rows[:args.repos]
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = []
    missing = []
    for i, (repo, domain) in enumerate(rows, 1):
        if args.time_budget is not None and time.perf_counter() - started > args.time_budget * 60:
            print(f"time budget reached: {len(rows) - i + 1} repositories not started", flush=True)
            break
        if git_dir(repo) is None:
            missing.append(repo)
            print(f"[{i}/{len(rows)}] {repo}: not fetched (fetch it with the search tool's fetch)", flush=True)
            continue
        try:
            row = run_repo(repo, domain, args.work, args)
        except Exception as exc:  # noqa: BLE001 - one repository's failure is a row
            row = {"repo": repo, "domain": domain, "error": f"{type(exc).__name__}: {exc}"}
        results.append(row)
        _print_row(i, len(rows), row)
        if args.json:
            _write(args.json, results, missing, started, args.sample_seed)
    _print_totals(results, missing, started, sampled=args.sample_seed is not None)
    if args.json:
        _write(args.json, results, missing, started, args.sample_seed)
    return 0


def _print_row(i: int, n: int, row: dict) -> None:
    if "summary" not in row:
        print(f"[{i}/{n}] {row['repo']}: {row.get('error')}", flush=True)
        return
    s = row["summary"]
    classes = Counter(failure_class(m) for m in row["models"] if m["status"] not in ("proven", "built"))
    done = (f"in {row['seconds']:.0f} s (build only)" if row.get("build_only") else
            f"{s['proven']} proven in {row['seconds']:.0f} s (convert {row['convert_seconds']:.0f} s)")
    print(f"[{i}/{n}] {row['repo']} ({row['domain']}): {s['discovered']} discovered, {s['selected']} tried, "
          f"{s['built']} built, {done}"
          + ("; " + ", ".join(f"{k} {v}" for k, v in classes.most_common()) if classes else ""), flush=True)


def totals(results: list[dict]) -> dict:
    done = [r for r in results if "summary" in r]
    keys = ("discovered", "selected", "built", "proven", "diverged", "ms_failed", "not_built")
    total = {k: sum(r["summary"][k] for r in done) for k in keys}
    total["excluded"] = sum(r["summary"].get("excluded", 0) for r in done)
    total["repositories"] = len(done)
    total["repositories_failed"] = len(results) - len(done)
    total["failure_classes"] = dict(Counter(failure_class(m) for r in done for m in r["models"]
                                            if m["status"] not in ("proven", "built")).most_common())
    total["build_only"] = bool(done) and all(r.get("build_only") for r in done)
    return total


def built_share_estimate(results: list[dict], resamples: int = 2000, seed: int = 0
                         ) -> tuple[float, float, float] | None:
    """Built % of discovered from each repository's tried sample: sum_r discovered_r x built_r / tried_r over
    sum_r discovered_r (a ratio estimator; unbiased in the sampling only when the tried classes are a uniform draw,
    ``--sample-seed``), with a 95 % interval by bootstrap over repositories (repositories resampled with replacement,
    ``resamples`` times, the 2.5th and 97.5th percentiles). Classes the builder found abstract among the tried are
    not models: a repository's discovered count (abstract tried already left out) is scaled by its tried share of
    non-abstract. Returns (estimate, low, high) in %, or None without a repository that ran."""
    import random

    parts = []
    for r in results:
        if "summary" not in r:
            continue
        s = r["summary"]
        a = s.get("abstract_tried", 0)
        drawn = s["selected"] + a
        if not drawn:
            parts.append((0.0, float(s["discovered"])))
            continue
        raw = s["discovered"] + a
        parts.append((raw * s["built"] / drawn, raw * s["selected"] / drawn))
    if not parts:
        return None

    def ratio(rows):
        den = sum(d for _, d in rows)
        return 100 * sum(b for b, _ in rows) / den if den else 0.0

    rng = random.Random(seed)
    boot = sorted(ratio([parts[rng.randrange(len(parts))] for _ in parts]) for _ in range(resamples))
    return ratio(parts), boot[int(0.025 * (resamples - 1))], boot[int(0.975 * (resamples - 1))]


def _estimate_line(results: list[dict], sampled: bool | None) -> str:
    est = built_share_estimate(results)
    if est is None:
        return ""
    how = ("the tried classes a uniform draw (--sample-seed)" if sampled else
           "the tried classes NOT a random draw (the spread or the first N): biased" if sampled is False else
           "as valid as the draw of the tried classes")
    return (f"estimated built % of discovered (each repository's built share of its tried classes applied to its "
            f"discovered; {how}): {est[0]:.1f} %, 95 % bootstrap interval over repositories {est[1]:.1f}-{est[2]:.1f} %")


def _print_totals(results: list[dict], missing: list[str], started: float | None, minutes: float | None = None,
                  sampled: bool | None = None) -> None:
    t = totals(results)
    if started is not None:
        minutes = (time.perf_counter() - started) / 60
    print(f"\n{t['repositories']} repositories ({t['repositories_failed']} failed to run, {len(missing)} not fetched) "
          f"in {minutes:.1f} min")
    if t["build_only"]:
        print(f"models (build only: no conversion, no proof): {t['discovered']} discovered ({t['excluded']} abstract "
              f"bases left out), {t['selected']} tried, {t['built']} built ({_pct(t['built'], t['discovered'])} of "
              f"discovered, {_pct(t['built'], t['selected'])} of tried), {t['not_built']} not built")
        print(_estimate_line(results, sampled))
        print(f"throughput: {t['built'] / minutes if minutes else 0:.2f} models built per minute, "
              f"{t['selected'] / minutes if minutes else 0:.2f} models tried per minute, "
              f"{t['repositories'] / minutes if minutes else 0:.2f} repositories per minute (wall clock)")
        print("not-built failure classes:")
        for name, count in t["failure_classes"].items():
            print(f"  {count:5d}  {name}")
        return
    print(f"models: {t['discovered']} discovered ({t['excluded']} abstract bases left out), {t['selected']} tried, {t['built']} built "
          f"({_pct(t['built'], t['selected'])} of tried), {t['proven']} proven ({_pct(t['proven'], t['built'])} of built),"
          f" {t['diverged']} diverged, {t['ms_failed']} failed in MindSpore, {t['not_built']} not built")
    print(_estimate_line(results, sampled))
    print(f"throughput: {t['proven'] / minutes if minutes else 0:.2f} models proven per minute, "
          f"{t['selected'] / minutes if minutes else 0:.2f} models tried per minute (wall clock)")
    print("failure classes:")
    for name, count in t["failure_classes"].items():
        print(f"  {count:5d}  {name}")


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f} %" if b else "-"


def _write(path: Path, results: list[dict], missing: list[str], started: float, sample_seed: int | None = None
           ) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    minutes = (time.perf_counter() - started) / 60
    path.write_text(json.dumps({"minutes": round(minutes, 2), "totals": totals(results), "not_fetched": missing,
                                "sample_seed": sample_seed, "repositories": results}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    sys.exit(main())
