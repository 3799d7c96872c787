"""Proof of every discovered model: discovery (``scan.py``), construction and inputs in torch (``build.py``, one
process per repository), then per model the parity machinery ``validate`` uses (``validators/parity``: both sides
built from their references, the torch weights moved into the Cell, forward parity with the first divergent layer
and its source line, GRAPH_MODE), run twice:

1. at the model's own initialisation (BatchNorm running statistics seeded, as ``validate`` does);
2. at a second weight draw where every parameter and the running statistics are random at a scale where no layer is
   near the identity or near-linear (``TorchSide.randomize_all``).

A model is ``proven`` when both agree and no known trap is found in the layer settings (a static hyperparameter
difference such as the GELU approximation fails the proof: ``verdict.py``); ``diverged`` when the Cell runs but
differs; ``ms-failed`` when the Cell cannot be built, filled, run or compiled; ``not-built`` when no constructor
arguments or inputs were found that run in torch (``reason`` says what was tried).

Each worker owns one torch and one MindSpore side process, which build model after model (the frameworks are
imported once per worker, not once per model); a model that runs past its time costs its worker's processes, which
are started again for the next one. Results are cached in ``OUT/mindport-models-cache.json``, keyed by the content of
the model's file and every project file it imports, on both sides, and by mindport's own code: a re-run proves only
what changed.
"""
from __future__ import annotations

import fnmatch
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mindport import __version__

CACHE_NAME = "mindport-models-cache.json"
# inconclusive: the comparison could not tell (a constant output, no parameter to perturb); stopped: a time or memory
# limit ended the proof (on a busy machine: how busy it was, not what the model is). Neither is a verdict on the port.
STATUSES = ("proven", "diverged", "inconclusive", "ms-failed", "stopped", "not-built")
RANDOM_DRAW_SEED = 20260


@dataclass
class ProveSettings:
    rtol: float = 1e-5
    atol: float = 1e-6
    graph_mode: bool = True
    build_seconds: float = 30.0  # per constructor attempt / forward in the builder
    proof_seconds: float = 180.0  # per model, both draws
    memory_bytes: int = 6 * 1024 ** 3  # the builder's address-space limit
    seed: int = 0
    stub_missing: bool = False  # modules this machine lacks are stand-ins (mindport.discovery.stubs)
    observe: bool = False  # the builder records the torch calls' facts (mindport.observed) for prove_models' before_proof
    max_params: int = 100_000_000  # bigger models are not built (build.MAX_PARAMS: parity on CPU takes minutes)


def select(candidates: list, pattern: str | None, max_models: int | None, spread: bool = False,
           sample_seed: int | None = None) -> list:
    """``--models PATTERN`` (fnmatch on "path.py:Name", or a substring) and ``--max-models N`` (the first N, or with
    ``spread`` N evenly spaced over the repository's files, as the benchmark samples; or with ``sample_seed`` N drawn
    uniformly at random without replacement, ``random.Random(sample_seed)``, kept in discovery order: a sample of
    which the built share estimates the repository's, where the spread's evenly spaced picks follow the file order)."""
    if pattern:
        candidates = [c for c in candidates if fnmatch.fnmatch(c.key, pattern) or pattern in c.key]
    if max_models is not None and 0 <= max_models < len(candidates):
        if sample_seed is not None:
            import random

            picked = sorted(random.Random(sample_seed).sample(range(len(candidates)), max_models))
            candidates = [candidates[i] for i in picked]
        elif spread and max_models:
            step = len(candidates) / max_models
            candidates = [candidates[int(i * step)] for i in range(max_models)]
        else:
            candidates = candidates[:max_models]
    return candidates


# ------------------------------------------------------------------------------------------------------ building

def run_builder(root: Path, candidates: list, user_ctors: dict, work: Path, s: ProveSettings,
                on_result=None, context: list = ()) -> dict[str, dict]:
    """Build every candidate in torch, in one process (started again after a crash, without the candidate that
    crashed it). ``context``: other discovered candidates, not built, whose constructions the builder reads for the
    arguments they give the candidates (build.record_call_sites: a block's container left out by --max-models).
    Returns {key: result}."""
    results: dict[str, dict] = {}
    todo = [c for c in candidates]
    root, work = Path(root).resolve(), Path(work).resolve()  # the builder's cwd is root: paths it is given are absolute
    work.mkdir(parents=True, exist_ok=True)
    for old in work.glob("facts-*.json"):  # a former run's into the same log folder: never merged with this one's
        old.unlink()
    attempt = 0
    while todo:
        attempt += 1
        request = work / f"build-request-{attempt}.json"
        result_path = work / f"build-result-{attempt}.jsonl"
        request.write_text(json.dumps({"root": str(root), "candidates": [c.to_json() | {"rel": c.rel, "name": c.name}
                                                                          for c in todo],
                                       "context": [c.to_json() | {"rel": c.rel, "name": c.name} for c in context
                                                   if c.key not in {t.key for t in todo}],
                                       "ctors": user_ctors, "seconds": s.build_seconds, "work": str(work),
                                       "memory_bytes": s.memory_bytes, "stub_missing": s.stub_missing,
                                       "max_params": s.max_params,
                                       **({"facts": str(work / f"facts-{attempt}.json")} if s.observe else {})}),
                           encoding="utf-8")
        result_path.write_text("")
        log = open(work / "build.log", "ab")
        env = _env() | notebook_env(work)
        proc = subprocess.Popen([sys.executable, "-m", "mindport.discovery.build", str(request), str(result_path)],
                                cwd=str(root), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        seen = 0
        started = None  # the candidate the builder announced last (it builds containers before their blocks)
        last = time.monotonic()
        # a candidate's attempts each have the builder's time limit: allow several, then the process is stopped
        stall = s.build_seconds * 8 + 60
        while True:
            done = proc.poll() is not None
            lines = result_path.read_text(encoding="utf-8").splitlines()
            for line in lines[seen:]:
                try:
                    res = json.loads(line)
                except json.JSONDecodeError:
                    break
                seen += 1
                last = time.monotonic()
                if res.get("started"):
                    started = res["class"]
                    continue
                results[res["class"]] = res
                if on_result is not None:
                    on_result(res)
            if done:
                break
            if time.monotonic() - last > stall:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.2)
        log.close()
        finished = {c.key for c in todo if c.key in results}
        rest = [c for c in todo if c.key not in finished]
        if rest:  # the one it announced last (else the first unfinished one) stopped the process
            bad = next((c for c in rest if c.key == started), rest[0])
            code = proc.returncode
            results[bad.key] = {"class": bad.key, "status": "not-built",
                                "reason": f"the torch builder stopped on it (exit code {code}: a crash, the memory "
                                          f"limit or over {stall:g} s)"}
            if on_result is not None:
                on_result(results[bad.key])
            rest = [c for c in rest if c is not bad]
        todo = rest
    return results


def _builder_facts(work: Path):
    """The facts every builder process of this run recorded (one file per process: a crash starts another), merged
    site by site; None when there are none."""
    from mindport.observed import Facts, load

    merged = Facts()
    for path in sorted(work.glob("facts-*.json")):
        try:
            merged.merge(load(path))
        except ValueError:
            continue
    return merged if merged.files or merged.builds or merged.forwards else None


def notebook_env(work: Path) -> dict:
    """Where the processes of a proof write a notebook's definitions-only module (discovery/notebooks.py): the log
    folder, where the report's source lines of a notebook class point."""
    from mindport.discovery.notebooks import MODULES_ENV

    return {MODULES_ENV: str(Path(work) / "notebooks")}


def _env() -> dict:
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[key] = "http://127.0.0.1:9"  # no network for the project's code: connections are refused
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    return env


# ------------------------------------------------------------------------------------------------------ proving

def stub_env(log: Path, roots) -> dict:
    """The environment of a process that stubs what ``roots``' files import and this machine lacks
    (``stubsite/sitecustomize.py``), logging the stubbed modules."""
    from mindport.discovery.stubs import ENV, ROOTS_ENV

    return {"PYTHONPATH": str(Path(__file__).resolve().parent / "stubsite"), ENV: str(log),
            ROOTS_ENV: os.pathsep.join(str(r) for r in roots)}


class _Worker:
    """One torch and one MindSpore side process, reused model after model."""

    def __init__(self, workdir: Path, index: int, stub_roots=(), src_root=None, out_root=None):
        self.workdir = workdir / f"worker-{index}"
        self.env = stub_env(self.workdir / "stubbed.txt", stub_roots) if stub_roots else None
        # the torch side runs CUDA-only code on the CPU (cuda_cpu.py); the converted code has no device
        from mindport.discovery.cuda_cpu import ENV as CUDA_ENV

        self.torch_env = (self.env or {"PYTHONPATH": str(Path(__file__).resolve().parent / "stubsite")}) | {
            CUDA_ENV: "1"}
        # each side imports from its tree's root as the builder does (build.main: sys.path.insert(0, root)):
        # locuslab/TCN's TCN/adding_problem/model.py (a folder without __init__.py) imports ``from TCN.tcn import
        # TemporalConvNet``; built in the builder, the proof's torch side could not import TCN, the stub finder
        # gave it a stand-in ("'result' object is not subscriptable") and later models "TCN.tcn is already taken"
        # and the folders its shell scripts export and its own imports need after it (script_paths.py), each side
        # in its own tree
        from mindport.discovery.script_paths import import_roots

        extra = import_roots(src_root) if src_root is not None else []
        if src_root is not None:
            self.torch_env = self.torch_env | {"PYTHONPATH": os.pathsep.join(
                [self.torch_env["PYTHONPATH"], str(src_root), *(str(Path(src_root) / rel) for rel in extra)])}
        if out_root is not None:
            base = self.env or {}
            self.env = base | {"PYTHONPATH": os.pathsep.join(filter(None, [
                base.get("PYTHONPATH"), str(out_root), *(str(Path(out_root) / rel) for rel in extra)]))}
        self.torch_env = self.torch_env | notebook_env(workdir)
        self.env = (self.env or {}) | notebook_env(workdir)
        # both sides import a script that trains at module level as its definitions (scripts.py), as the builder does
        from mindport.discovery.scripts import ENV as SCRIPTS_ENV

        site = str(Path(__file__).resolve().parent / "stubsite")
        self.env = self.env | {SCRIPTS_ENV: "1", "PYTHONPATH": os.pathsep.join(
            [site, *[p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p and p != site]])}
        self.torch_env = self.torch_env | {SCRIPTS_ENV: "1"}
        self.ref = self.ms = None
        self.timed_out = False

    def sides(self):
        from mindport.validators.parity.sides import _checked, both
        from mindport.validators.parity.worker import RemoteSide

        if self.ref is None or self.ref.proc.poll() is not None or self.ms.proc.poll() is not None:
            self.close()
            # (copies: the worker's _env pops PYTHONPATH from the dict it is given; a side restarted after a time
            # limit lost its stubs and its root)
            self.ms = RemoteSide("mindspore", self.workdir, "MindSpore", env=dict(self.env) if self.env else None)
            self.ref = RemoteSide("torch", self.workdir, "torch", env=dict(self.torch_env))
            _checked(both, self.ref, self.ms, "hello")
        return self.ref, self.ms

    def kill(self) -> None:
        self.timed_out = True
        for side in (self.ref, self.ms):
            if side is not None and side.proc.poll() is None:
                side.proc.kill()

    def close(self) -> None:
        for side in (self.ref, self.ms):
            if side is not None:
                try:
                    side.close()
                except Exception:  # noqa: BLE001 - a dead side: nothing to close
                    pass
        self.ref = self.ms = None


def _start(worker: _Worker) -> None:
    try:
        worker.sides()
    except Exception:  # noqa: BLE001 - started again (and its error reported) when a model needs it
        worker.close()


def prove_one(worker: _Worker, entry: dict, src_root: Path, out_root: Path, s: ProveSettings) -> dict:
    """Both draws of one built model; fills ``entry`` (status, max_rel, first_divergent, error)."""
    from mindport.errors import InputError
    from mindport.validators.parity.compare import _apply_transfer, _resolve_inputs
    from mindport.validators.parity.results import ParityReport
    from mindport.validators.parity.run import _run
    from mindport.validators.parity.settings import Settings
    from mindport.validators.parity.sides import SideError, _checked

    from mindport.discovery.scan import model_ref

    rel, _, name = entry["class"].rpartition(":")
    torch_ref = model_ref(src_root, rel, name, entry.get("module", ""))
    ms_ref = model_ref(out_root, rel, name, entry.get("module", ""))
    ctor = entry["ctor"]
    worker.timed_out = False
    limit = proof_seconds(s, entry.get("params"))
    timer = threading.Timer(limit, worker.kill)
    timer.start()
    stage = "starting the side processes"
    try:
        ref, ms = worker.sides()
        stage = "building"
        # in the repository's folder, as the builder built it (cwd=root) and as its code reads relative paths
        p_ref = ref.submit("build", torch_ref, ctor, s.seed, str(src_root), cwd=str(src_root))
        p_ms = ms.submit("build", ms_ref, ms_ctor(ctor), s.seed, str(out_root), cwd=str(out_root))
        try:
            _checked(p_ref.result)
        except (InputError, SideError) as exc:
            _answer(p_ms)
            return _fail(entry, "not-built", "reason", f"the torch model did not build again: {_msg(exc)}")
        try:
            _checked(p_ms.result)
        except (InputError, SideError) as exc:
            return _fail(entry, "ms-failed", "error", f"building the MindSpore Cell failed: {_msg(exc)}")
        ref.call("replay_draws", True)  # a forward that draws is proven on torch's draws, replayed (run.share_draws)
        # a forward without arguments (a learned table the module gives) is called with none
        arrays = _resolve_inputs(entry["inputs"], s.seed)[1] if entry["inputs"] else []
        draws = []
        for draw in ("own init", "random draw"):
            stage = f"parity at the {draw}"
            report = ParityReport()
            report.reference.update({"kind": "torch", "ref": torch_ref, "ctor": ctor})
            report.candidate.update({"ref": ms_ref, "ctor": ctor})
            if draw == "own init":
                ref.call("randomize_norms", s.seed)
            else:
                ref.call("randomize_all", RANDOM_DRAW_SEED + s.seed, arrays)
                why = _not_deterministic(ref, arrays)
                if why:  # a random forward that a zero-initialised scale silenced at the own init (NoiseInjection)
                    # (worded as the builder's own "built; no input ran: ..." reasons, which the sweep classes)
                    return _fail(entry, "not-built", "reason", f"built; no input ran: the eval forward is not "
                                 f"deterministic at the random draw ({why}): its own init hid the randomness")
            # the absolute tolerance follows the largest value the forward computes, in any layer, at either draw
            # (float32 rounding grows with it: a large pre-activation rounded, then squashed by a final Tanh, shows
            # there; STGCN's TimeBlock sums three 64-channel convolutions at its own init and a ReLU output near zero
            # keeps their 2e-6 rounding), the relative one stays. Run before the weights move: a model that initialises
            # itself on its first forward (NODE's data-aware thresholds, drawn with numpy) is proven from the state
            # that forward left, which the MindSpore side takes without running its own initialisation
            atol = s.atol * max(1.0, _scale(_checked(ref.call, "forward", arrays, True)))
            plan = _apply_transfer(report, ms, state=ref.call("state"), source=f"torch model ({draw})")
            if not report.weights.get("ok", False):
                w = report.weights
                why = w.get("error") or (f"MindSpore parameters left unfilled: {', '.join(w.get('missing', [])[:5])}"
                                         if w.get("missing") else
                                         f"torch tensors unmatched: {', '.join(w.get('unexpected', [])[:5])}")
                return _fail(entry, "ms-failed", "error", f"moving the weights failed: {why}")
            ref.call("snapshot")
            settings = Settings(s.rtol, atol, s.seed, True, s.graph_mode and draw == "own init", atol_per_unit=s.atol)
            _run(report, ref, ms, arrays, settings, plan, None)
            report.settings["atol"] = atol
            if not report.ok:
                _noise_control(report, ref, ms, arrays)
            draws.append((draw, report))
            if not report.ok:
                break
        entry = _verdict(entry, draws)
        if worker.timed_out and entry.get("status") != "proven":
            # the time limit killed the sides mid-comparison: the comparison saw a dead process ("the MindSpore Cell
            # raised (own init): the MindSpore process stopped (exit code -9)", the layer it was in named as the
            # cause), which says nothing of the port: the verdict says the limit, and no layer is blamed
            entry["error"] = f"over {limit:g} s (stopped): {entry.get('error') or 'the comparison did not finish'}"
            entry["first_divergent"] = None
        return entry
    except InputError as exc:
        return _fail(entry, "not-built", "reason", f"{stage}: the torch model raised: {_msg(exc)}")
    except (SideError, OSError, EOFError) as exc:
        worker.close()
        text = f"over {limit:g} s (stopped)" if worker.timed_out else _msg(exc)
        side = getattr(exc, "side", "")
        status = "ms-failed" if side == "MindSpore" or worker.timed_out else "not-built"
        return _fail(entry, status, "error" if status == "ms-failed" else "reason", f"{stage}: {text}")
    finally:
        timer.cancel()


def proof_seconds(s: ProveSettings, params: int | None) -> float:
    """The time a model's proof may take: ``s.proof_seconds``, scaled up for a model over 20 M parameters (both
    draws move every weight twice and GRAPH_MODE compiles it: an AlexNet of 61 M was stopped at 180 s on a loaded
    2-core machine)."""
    return s.proof_seconds * max(1.0, (params or 0) / 20_000_000)


def ms_ctor(ctor: str) -> str:
    """The constructor text for the converted model: torch objects in it (a repository's
    ``LNN(nn.Sequential(nn.Linear(2, 64), nn.Tanh()))``, the builder's ``Passthrough()`` for a sub-module argument)
    converted like the repository's code, since it is evaluated in the converted module, where ``nn`` is MindSpore's."""
    import re

    from mindport.discovery.build import _ACTIVATION, _IDENTITY, _MS_ACTIVATION, _MS_IDENTITY, _MS_TABLE, _TABLE

    text = ctor.replace(_IDENTITY, _MS_IDENTITY).replace(_ACTIVATION, _MS_ACTIVATION).replace(_TABLE, _MS_TABLE)
    if not re.search(r"(?<![\w.'])(nn|torch|F)\.", text):
        return text
    from mindport.migrator import convert_source

    head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    result = convert_source(f"{head}_mindport_ctor = _mindport_call({text})\n")
    # the names the conversion imports (``mp_nn.Tanh()``: mindport.runtime.layers) may be unbound in the model's
    # module: each one is spelled as its import
    modules = {}
    for line in result.code.splitlines():
        m = re.fullmatch(r"from ([\w.]+) import (\w+)(?: as (\w+))?", line) or re.fullmatch(
            r"import ([\w.]+) as (\w+)()", line)
        if m:
            module = f"{m.group(1)}.{m.group(2)}" if line.startswith("from ") else m.group(1)
            modules[m.group(3) or m.group(2)] = f"__import__({module!r}, fromlist=['_'])"
    if re.search(r"^(class|def) ", result.code, re.M):
        # the conversion wrote definitions the call uses (a torch layer class handed as a value, ``activation=
        # nn.Hardswish``, is ``TorchHardswish``, a class of the converted text; unbound in the model's module: "name
        # 'TorchHardswish' is not defined"): the whole converted text runs in a copy of the module's namespace
        call = f"__import__('mindport.discovery.passthrough_ms', fromlist=['_']).converted_call({result.code!r}, " \
               "globals())"
        return f"*{call}[0], **{call}[1]"
    for line in result.code.splitlines():
        if line.startswith("_mindport_ctor = _mindport_call(") and line.endswith(")"):
            out = line[len("_mindport_ctor = _mindport_call("):-1]
            return re.sub(r"(?<![\w.'])(\w+)(?=\.)", lambda m: modules.get(m.group(1), m.group(1)), out)
    return text


def _not_deterministic(ref, arrays) -> str:
    """Which output of two torch forwards on the same inputs differs, or "". The builder keeps inputs under which
    the eval forward is deterministic, at the model's own init; a forward that draws noise and scales it by a
    parameter that starts at zero (StyleGAN2's ``NoiseInjection``: ``image + self.weight * noise``, CUT's copy
    diverged "at the random draw only", max rel 2.9e3) is deterministic there and random once the draw makes that
    scale nonzero: the two sides draw different noise, which is no divergence of the port."""
    import numpy as np

    from mindport.validators.parity.sides import _checked

    # each from the same state: a forward that writes the model's own state at every call (a spectral norm's power
    # iteration: heykeetae/Self-Attention-GAN) is deterministic given it, as the builder's check has it
    ref.call("snapshot")
    runs = []
    for _ in range(2):
        runs.append(_checked(ref.call, "forward", arrays, False))
        ref.call("restore")
    for (key, a), (_, b) in zip(runs[0].get("outputs") or [], runs[1].get("outputs") or []):
        if a is not None and (a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)):
            return f"output {key}"
    return ""


def _noise_control(report, ref, ms, arrays) -> None:
    """A draw whose outputs miss the fixed tolerance by no more than float32 rounding explains passes (noise.py's
    control, as training parity has it): per differing output, MindSpore's distance to torch within NOISE_FACTOR
    times torch's own float32-to-float64 distance on the same weights and inputs, that distance not a sizeable share
    of the output; where it is (an ill-conditioned draw), the port is judged against the float64 run itself
    (``ill_conditioned_within_noise``: no further from torch than torch float32 is from float64, and the port run in
    float64 within the proof's tolerance of torch's float64 run); where it is not but MindSpore misses by more than
    that rounding, within its own kernels' float32 accuracy and with the port in float64 within the tolerance of
    torch's float64 run (``kernel_accuracy_within``: zhuofupan's Exp_sq, exp(x) - x - 1, MindSpore's exp 8 ulp from
    torch's); where the port cannot run in float64 (MindSpore's CPU Conv2D has no float64 kernel), within both float32
    bounds (``kernel_accuracy_without_float64``: an SSD head's 3x3 convolutions over 1024 channels, 10.5x torch's own
    rounding); where the draw is ill-conditioned and the port cannot run in float64, no verdict ("inconclusive", the
    limitation said) while the port is within twice torch's own float32 distance to float64 (TransUNet's
    ResNetV2: tests/discovery/test_ill_conditioned_no_float64_50.py); else it stays diverged and its error says
    so. Only a plain value mismatch is judged: a MindSpore error, a GRAPH_MODE failure or mismatch, a known trap, a
    structure or NaN/Inf difference, a vacuous comparison keep their verdict. PCT's Point_Transformer_Last at the
    random draw: softmax of large attention energies, torch float32 8.9e-4 from float64 where the tolerance was
    4e-5: "diverged" (max rel 5.3e-3) although MindSpore was no further from torch than that. Anomaly-Transformer's
    prior at the random draw: torch float32 1.6e-4 of the output from float64 (ill-conditioned), the port 6.8e-5
    from torch."""
    from mindport.validators.parity.noise import (
        ILL_CONDITIONED,
        forward_within_noise,
        ill_conditioned_within_noise,
        kernel_accuracy_within,
        kernel_accuracy_without_float64,
        lacks_float64_kernel,
    )
    from mindport.validators.parity.sides import _checked

    if (report.ms_error or report.graph.status in ("failed", "mismatch") or report.config_findings
            or not report.structure.get("ok", True) or (report.vacuous and not report.vacuous.get("resolved", True))):
        return
    bad = [o for o in report.outputs if not o.allclose]
    if not bad or any(o.status != "mismatch" or o.max_abs is None or not o.nonfinite.get("same_places", True)
                      for o in bad):
        return
    ref.call("restore")  # the weights the comparison ran on (a vacuous re-check perturbs them)
    gaps = _checked(ref.call, "float64_gap", arrays)
    control = {}
    golden = None
    undecided = ""  # an ill-conditioned output the port could not be run in float64 for
    for o in bad:
        if o.key not in gaps:
            return
        noise, scale = gaps[o.key]
        control[o.key] = {"ms_abs": o.max_abs, "torch_float32_vs_float64_abs": noise, "scale": scale}
        if forward_within_noise(o.max_abs, noise, scale):
            continue
        well_conditioned = noise <= ILL_CONDITIONED * max(scale, 1e-30)
        if golden is None:  # the port run in float64 at these weights, against torch's float64 run
            _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (restored)")
            run = ms.call("forward64", arrays)
            golden = {} if run.get("error") else _checked(ref.call, "float64_gap", arrays, run.get("outputs") or [],
                                                          report.settings.get("rtol", 0.0),
                                                          report.settings.get("atol", 0.0))
            if run.get("error"):
                control["float64_port_error"] = run["error"][:300]
        g = golden.get(o.key)
        if well_conditioned and g is None and lacks_float64_kernel(control.get("float64_port_error")):
            # no float64 run of the port (a CPU kernel has none): both float32 bounds at once
            if not kernel_accuracy_without_float64(o.max_abs, noise, scale):
                return
            control[o.key].update(rule="MindSpore kernel accuracy: no float64 run of the port (a kernel has no "
                                       "float64), judged in float32 against both bounds")
            continue
        if well_conditioned:  # past torch's rounding: MindSpore's kernels' own float32 accuracy, the formula
            # checked in float64
            if g is None or not kernel_accuracy_within(o.max_abs, scale, g["port64_close"]):
                return
            control[o.key].update(rule="MindSpore kernel accuracy: the port judged in float64",
                                  port64_vs_torch64_abs=g["port64_abs"], port64_within_tolerance=g["port64_close"])
            continue
        if g is not None:
            control[o.key].update(rule="ill-conditioned: the port judged in float64", port64_vs_torch64_abs=g[
                "port64_abs"], port64_within_tolerance=g["port64_close"])
        if g is None and lacks_float64_kernel(control.get("float64_port_error")) \
                and o.max_abs <= 2.0 * noise:
            # ill-conditioned, and the port cannot run in float64 (a MindSpore CPU kernel has none): within twice
            # torch's own float32 distance to float64 (a port no further from float64 than torch is, msprobe's ratio
            # at most 1, is at most that far from torch: both sides' rounding adds), the proof cannot tell a formula
            # difference from rounding here: no verdict, the limitation said (TransUNet's ResNetV2 was "diverged"
            # so: the port 0.0156 from torch, torch float32 0.0118 from float64). Past that it stays "diverged"
            undecided = (
                f"torch float32 itself is {noise / scale:.2g} of the output from float64 at this draw "
                f"(ill-conditioned), the port {o.max_abs:.3g} from torch (within twice torch's own {noise:.3g}); no "
                f"float64 run of the port, which would decide it (a MindSpore CPU kernel has no float64): "
                f"{control.get('float64_port_error', '')}")
            continue  # (every other differing output still judged: one past its bounds keeps "diverged")
        if g is None or not ill_conditioned_within_noise(o.max_abs, noise, g["port64_close"]):
            report.settings["ill_conditioned"] = (
                f"torch float32 itself is {noise / scale:.2g} of the output from float64 at this draw "
                f"(ill-conditioned)" + (f"; port vs torch {o.max_abs:.3g}, torch float32 vs float64 {noise:.3g}; no "
                                        f"float64 run of the port: {control.get('float64_port_error', '')}"
                                        if g is None else
                                        f"; port vs torch {o.max_abs:.3g}, in float64 {g['port64_abs']:.3g} (within "
                                        f"the tolerance: {'yes' if g['port64_close'] else 'no'})"))
            return
    if undecided:
        report.settings["no_float64_control"] = undecided
        return
    report.ok, report.outcome = True, "pass"
    report.reason = "proven within float32 noise (torch float32 vs float64 control)"
    report.settings["float32_noise"] = control


def _scale(run: dict) -> float:
    """The largest finite magnitude of a forward run's floating outputs and recorded layer outputs."""
    from mindport.validators.parity.metrics import largest_value

    return largest_value(run)


def _answer(pending) -> None:
    try:
        pending.result()
    except Exception:  # noqa: BLE001 - already failing
        pass


def _msg(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    return brief_reason(text.strip().splitlines()[0], 400) if text.strip() else type(exc).__name__


def _closing(text: str, start: int) -> int:
    """The index of the bracket closing the one at ``start`` (brackets of any kind counted, strings not parsed), or
    -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def brief_reason(text: str, limit: int = 200) -> str:
    """``text`` (a model's reason or error) in at most ``limit`` characters with its cause kept: the constructor
    call quoted before the cause is what gets cut. A reason is ``ATTEMPT (CTOR): CAUSE | ATTEMPT (CTOR): CAUSE ...``
    (the builder's) and an error ``building NAME(CTOR) from FILE failed at SITE: CAUSE`` (the proof's): cut at the
    limit, a long CTOR hid the cause (AmazingDD/DeepFM-pytorch: "small values (args={'gpuid': 16, ... 'deep_layer_act':
    'relu', " on the terminal, never "TypeError: str expected, not int (at deepfm.py:13)"; the report's error ended
    "failed at /tmp/.../DeepFM-pytorch_aft", before "ValueError: For 'Dropout', the 'p' must be ... in range [0, 1)")."""
    if len(text) <= limit:
        return text
    note = re.search(r" \(its module imports packages not installed here, given stand-ins: [^()]*\)$", text)
    if note and len(note.group(0)) < limit // 2:  # the builder's note on the whole reason (build._stand_ins_of): kept
        return brief_reason(text[:note.start()], limit - len(note.group(0))) + note.group(0)
    attempts = text.split(" | ")
    more = f" | (+{len(attempts) - 1} more)" if len(attempts) > 1 else ""
    first = attempts[0]
    room = max(limit - len(more), 40)
    if len(first) > room:
        at = re.search(r" failed at (\S+?:\d+): ", first)
        if at:  # the proof's error: the cause, its site's file name, then as much of the call as fits
            cause = f"{first[at.end():]} (at {os.path.basename(at.group(1))})"
            head = first[:at.start()]
            first = cause if len(cause) + 10 >= room else f"{cause}; {head[:room - len(cause) - 3]}…"
        else:
            open_at = first.find("(")
            close = _closing(first, open_at) if open_at >= 0 else -1
            if close > 0 and first[close + 1:close + 3] == ": ":
                label, inner, cause = first[:open_at], first[open_at + 1:close], first[close + 1:]
                keep = room - len(label) - len(cause) - 3
                if keep >= 12:
                    first = f"{label}({inner[:keep]}…){cause}"
                else:
                    first = f"{label.strip()}{cause}"
    return (first[:room - 1] + "…" if len(first) > room else first) + more


def _fail(entry: dict, status: str, key: str, text: str) -> dict:
    entry["status"] = status
    entry[key] = text
    return entry


def _verdict(entry: dict, draws: list) -> dict:
    entry["draws"] = []
    for draw, report in draws:
        rels = [o.max_rel for o in report.outputs if o.max_rel is not None]
        entry["draws"].append({"draw": draw, "ok": report.ok, "max_rel": max(rels) if rels else None,
                               "graph": report.graph.status, "atol": report.settings.get("atol")})
        if report.settings.get("float32_noise"):  # passed by the float64 control, not by the fixed tolerance
            entry["draws"][-1]["float32_noise"] = report.settings["float32_noise"]
    entry["max_rel"] = max((d["max_rel"] for d in entry["draws"] if d["max_rel"] is not None), default=None)
    draw, report = draws[-1]
    notes = [r.graph.note for _, r in draws if r.graph.note]
    if notes:  # compiled only past a default (the call depth): the user's GRAPH_MODE needs the same
        entry["graph_note"] = notes[0]
    if report.ok and len(draws) == 2:
        entry["status"] = "proven"
        noisy = [d["draw"] for d in entry["draws"] if d.get("float32_noise")]
        if noisy:  # passed by the float64 control at these draws, not by the fixed tolerance
            entry["proof"] = f"proven within float32 noise at the {' and the '.join(noisy)}"
        return entry
    fd = report.first_divergent
    if fd is not None:
        site = fd.ms_site or fd.ms_def or ""
        file, _, line = site.rpartition(":")
        entry["first_divergent"] = {"layer": fd.path or "<root>", "torch_type": fd.torch_type,
                                    "ms_type": fd.ms_type, "file": file, "line": int(line) if line.isdigit() else None,
                                    "cause": fd.cause or fd.note}
    findings = [f"{c['path'] or '<root>'}: {c['cause']}" for c in report.config_findings]
    if report.ms_error:
        entry["status"] = "ms-failed"
        entry["error"] = f"the MindSpore Cell raised ({draw}): {report.ms_error.splitlines()[0][:400]}"
    elif report.graph.status == "failed":
        entry["status"] = "ms-failed"
        entry["error"] = "GRAPH_MODE failed: " + (report.graph.error.splitlines() or [""])[0][:400]
    else:
        entry["status"] = "diverged"
        if findings:
            entry["error"] = f"known trap in the settings ({draw}): " + "; ".join(findings[:3])
        elif report.graph.status == "mismatch":
            entry["error"] = "GRAPH_MODE outputs differ from PyNative"
        elif report.vacuous and not report.vacuous.get("resolved", True):
            entry["error"] = f"{_VACUOUS} ({draw}): {report.vacuous.get('note', '')}"
        else:
            bad = [o for o in report.outputs if not o.allclose]
            what = (f"{bad[0].key}: max rel {bad[0].max_rel or 0:.3g}" if bad else
                    "; ".join(report.structure.get("problems", [])[:2]) or f"{report.outcome}: {report.reason}")
            entry["error"] = f"outputs differ ({draw}): {what}"
            if report.settings.get("no_float64_control"):  # no verdict: MindSpore lacks the float64 kernel
                entry["status"] = "inconclusive"
                entry["error"] += f"; {report.settings['no_float64_control']}"
            if report.settings.get("ill_conditioned"):
                entry["error"] += f"; {report.settings['ill_conditioned']}"
    return entry


# ------------------------------------------------------------------------------------------------------ the job

def _containers(found: list, todo: list, src_root: Path) -> list:
    """The discovered candidates not asked for whose constructions may give the asked-for ones their arguments
    (``run_builder``'s ``context``): those of the asked-for classes' files first, then those of the files that name
    one of them (a model file importing its layers: Autoformer's ``Model`` in models/ builds
    ``Encoder([EncoderLayer(...) for l in range(e_layers)])`` of layers/, which no small value builds)."""
    asked = {t.key for t in todo}
    files = {t.rel for t in todo}
    rest = [c for c in found if c.key not in asked]
    names = sorted({t.name for t in todo if t.kind == "class"})
    naming: dict[str, bool] = {}
    if names:
        named = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
        for rel in {c.rel for c in rest} - files:
            try:
                naming[rel] = bool(named.search((src_root / rel).read_text(encoding="utf-8", errors="replace")))
            except OSError:
                naming[rel] = False
    return [c for c in rest if c.rel in files] + [c for c in rest if naming.get(c.rel)]


def prove_models(src_root, out_root, *, pattern: str | None = None, max_models: int | None = None,
                 workers: int = 1, user_ctors: dict | None = None, user_inputs: dict | None = None,
                 settings: ProveSettings | None = None, progress=None, cache: bool = True,
                 log_dir=None, spread: bool = False, before_proof=None, build_only: bool = False,
                 sample_seed: int | None = None) -> tuple[list[dict], dict]:
    """Discover, build and prove every model of ``src_root`` against its conversion in ``out_root``.
    ``build_only``: discover and build in torch only (no conversion is read, ``out_root`` may be None; no MindSpore
    side, no proof, no cache): a model built keeps the status "built" (the discovery sweep's ``--build-only``).
    ``sample_seed``: ``max_models`` drawn uniformly at random (``select``), not the first or the spread.
    ``progress(done, total, entry)`` after each model. With ``settings.observe``, ``before_proof(facts)`` is called
    once every candidate was built in torch and before any proof, with the facts the builder recorded
    (``mindport.observed.Facts``, over every build and forward; None when it recorded nothing): migrate converts
    ``out_root`` again with them, so that the port proven is the one written. Returns (models, summary)."""
    from mindport.discovery.scan import discover, files_hash, python_files

    s = settings or ProveSettings()
    src_root = Path(src_root).resolve()
    out_root = Path(out_root).resolve() if out_root is not None else None
    if build_only:
        cache = False
    t0 = time.perf_counter()
    files = python_files(src_root, notebooks=True)  # a notebook's models too (notebooks.py)
    excluded: list[str] = []
    found = discover(src_root, files, excluded)
    chosen = list(select(found, pattern, max_models, spread, sample_seed))  # its own list: found loses abstract classes below
    for c in chosen:
        extra = (user_inputs or {}).get(c.key)
        if extra:
            c.inputs.insert(0, list(extra))
    out_files = set(python_files(out_root, notebooks=True)) if out_root is not None and out_root.is_dir() else set()
    cache_path = out_root / CACHE_NAME if out_root is not None else None
    old = _read_cache(cache_path) if cache else {}
    trees: dict = {}
    out_trees: dict = {}
    keys = {}
    for c in chosen if cache else ():
        keys[c.key] = "|".join([__version__, _own_code(), files_hash(src_root, c.rel, files, trees),
                                files_hash(out_root, c.rel, sorted(out_files), out_trees),
                                (user_ctors or {}).get(c.key, ""), json.dumps((user_inputs or {}).get(c.key)),
                                json.dumps([s.rtol, s.atol, s.graph_mode])])
    entries: dict[str, dict] = {}
    total = len(chosen)
    done = 0

    def report(entry):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, entry)

    todo = []
    for c in chosen:
        hit = old.get(c.key)
        if hit is not None and hit.get("key") == keys[c.key]:
            entries[c.key] = dict(hit["entry"], cached=True)
            report(entries[c.key])
        else:
            todo.append(c)
    # absolute: the builder runs in the repository's folder (cwd=root) and is handed paths in this one; a relative
    # ``-o converted`` gave it 'converted/mindport-logs/models/build-request-1.json' to open from the repository, and
    # every model was "not built" (pbloem/former, first contact: 11 discovered, 0 built)
    work = (Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="mindport-models-"))).resolve()
    # the side processes import their frameworks while the builder runs (they are independent)
    roots = (src_root, out_root) if s.stub_missing else ()
    pool = [_Worker(work, i, roots, src_root, out_root) for i in range(max(1, min(workers, len(todo))))
            ] if todo and not build_only else []
    starting = [threading.Thread(target=_start, args=(w,), daemon=True) for w in pool]
    for t in starting:
        t.start()
    t_build = time.perf_counter()
    context = _containers(found, todo, src_root)
    built = run_builder(src_root, todo, user_ctors or {}, work, s, context=context) if todo else {}
    for t in starting:
        t.join()
    if s.observe and before_proof is not None and todo:
        before_proof(_builder_facts(work))
    build_seconds = time.perf_counter() - t_build
    to_prove = []
    for c in [c for c in todo if built.get(c.key, {}).get("abstract")]:  # abstract at run time: left out, as the
        excluded.append(c.key)  # abstract bases discover() leaves out are
        found.remove(c)
        chosen.remove(c)
    abstract_tried = len(todo) - len([c for c in todo if c in chosen])
    todo = [c for c in todo if c in chosen]
    total = len(chosen)  # the progress counts what is tried
    for c in todo:
        res = built.get(c.key, {"status": "not-built", "reason": "not tried"})
        entry = {"class": c.key, "kind": c.kind, "line": c.line, "status": "not-built", "ctor": res.get("ctor"),
                 "ctor_source": res.get("ctor_source"), "inputs": res.get("inputs"),
                 "input_source": res.get("input_source"), "params": res.get("params"), "max_rel": None,
                 "first_divergent": None, **({"stubbed": res["stubbed"]} if res.get("stubbed") else {}),
                 **({"module": c.dotted} if c.dotted else {})}
        if c.rel not in out_files and not build_only:
            entry["reason"] = f"{c.rel} has no converted counterpart in the output"
        elif res.get("status") != "built":
            entry["reason"] = res.get("reason", "not built")
        else:
            entry["status"] = "built"
            if not build_only:
                to_prove.append(entry)
        entries[c.key] = entry
        if entry["status"] == "not-built" or build_only:
            report(entry)
    t_prove = time.perf_counter()
    if to_prove:
        q: queue.Queue = queue.Queue()
        for entry in to_prove:
            q.put(entry)
        lock = threading.Lock()

        def run(index: int) -> None:
            worker = pool[index]
            try:
                while True:
                    try:
                        entry = q.get_nowait()
                    except queue.Empty:
                        return
                    start = time.perf_counter()
                    try:
                        prove_one(worker, entry, src_root, out_root, s)
                    except Exception as exc:  # noqa: BLE001 - one model's failure is its entry, not the run's
                        _fail(entry, "ms-failed", "error", f"the proof could not run: {type(exc).__name__}: {exc}")
                        worker.close()
                    _no_verdict(entry)
                    entry["seconds"] = round(time.perf_counter() - start, 2)
                    with lock:
                        report(entry)
            finally:
                worker.close()

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(min(len(pool), len(to_prove)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for w in pool:
        w.close()
    prove_seconds = time.perf_counter() - t_prove
    models = [entries[c.key] for c in chosen]
    for m in models:
        if m["status"] == "built" and not build_only:  # never reached a verdict
            _fail(m, "ms-failed", "error", "the proof did not finish")
        _no_verdict(m)
    if cache:
        new = {k: v for k, v in old.items()}
        for c in chosen:
            if _stopped(entries[c.key]):
                new.pop(c.key, None)  # proven again next run, not read back as this run's answer
                continue
            new[c.key] = {"key": keys[c.key], "entry": {k: v for k, v in entries[c.key].items() if k != "cached"}}
        _write_cache(cache_path, new)
    summary = summarize(models, len(found))
    summary["excluded"] = len(excluded)  # abstract bases: not models (scan.discover's rule)
    summary["abstract_tried"] = abstract_tried  # of them, chosen and found abstract by the builder (in "excluded")
    summary["seconds"] = {"total": round(time.perf_counter() - t0, 2), "build": round(build_seconds, 2),
                          "prove": round(prove_seconds, 2)}
    summary["cached"] = sum(1 for m in models if m.get("cached"))
    return models, summary


def summarize(models: list[dict], discovered: int) -> dict:
    counts = {status: sum(1 for m in models if m["status"] == status) for status in STATUSES}
    built = len(models) - counts["not-built"]
    return {"discovered": discovered, "selected": len(models), "built": built, "proven": counts["proven"],
            "diverged": counts["diverged"], "inconclusive": counts["inconclusive"], "ms_failed": counts["ms-failed"],
            "stopped": counts["stopped"], "not_built": counts["not-built"]}


def summary_line(summary: dict) -> str:
    left_out = f" ({summary['excluded']} abstract bases left out)" if summary.get("excluded") else ""
    inconclusive = f"{summary['inconclusive']} inconclusive, " if summary.get("inconclusive") else ""
    stopped = f"{summary['stopped']} stopped by a time or memory limit, " if summary.get("stopped") else ""
    return (f"models: {summary['discovered']} discovered{left_out}, {summary['selected']} tried, "
            f"{summary['built']} built, "
            f"{summary['proven']} proven, {summary['diverged']} diverged, {inconclusive}"
            f"{summary['ms_failed']} failed in MindSpore, {stopped}{summary['not_built']} not built")


_VACUOUS = "vacuous comparison"
_KILLED = re.compile(r"process stopped \(exit code -9\)|\(stopped\)")


def _no_verdict(entry: dict) -> dict:
    """A proof that reached no verdict on the port says so in its status: ``stopped`` when a time limit or the
    memory limit (SIGKILL, the OOM killer) ended it ("over 180 s (stopped)", "the MindSpore process stopped (exit code
    -9)": centernet-pytorch at load 25 had 3 of 6 models "failed in MindSpore" so, PSMNet's feature_extraction at
    load 22 one, whose hand-made proof passes), ``inconclusive`` for a comparison of a constant output that no
    perturbation of the weights could resolve (SparseTSF's parameterless Arima/SArima/GBRT: "diverged" with the
    error "vacuous comparison"). Other signals (a segfault's -11) and other differences keep their verdict."""
    why = entry.get("error") or ""
    if entry["status"] == "ms-failed" and _KILLED.search(why):
        entry["status"] = "stopped"
    elif entry["status"] == "not-built" and entry.get("ctor") is not None and _KILLED.search(entry.get("reason", "")):
        # built, and the torch side of its proof was killed (AWSRN's awsrnd MODEL at load 23: "parity at the random
        # draw: the torch model raised: the torch side failed: the torch process stopped (exit code -9)")
        entry["status"] = "stopped"
        entry["error"] = entry.pop("reason")
    elif entry["status"] == "diverged" and why.startswith(_VACUOUS):
        entry["status"] = "inconclusive"
    return entry


_STOPPED = re.compile(r"process stopped \(exit code -\d+\)|\(stopped\)|builder stopped on it")


def _stopped(entry: dict) -> bool:
    """Was the model's verdict that a process was stopped (a signal: the memory limit, the machine's OOM killer,
    a time limit)? That says how busy the machine was, not what the model is: a re-run tries it again (pbloem/former
    under load ~34: 'the MindSpore process stopped (exit code -9)', then read back from the cache on every re-run)."""
    return any(isinstance(v, str) and _STOPPED.search(v) for v in entry.values())


_OWN_CODE: str | None = None


def _own_code() -> str:
    """A digest of mindport's own code and tables (its .py and .toml files, ~0.02 s): a cached proof is mindport's
    answer of the time, so a changed mindport (a fix in the builder or the converter between two runs, without a new
    version number) proves again. Before, a re-run after such a change read the old answers back."""
    global _OWN_CODE
    if _OWN_CODE is None:
        import hashlib

        root = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256()
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts and path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
        _OWN_CODE = digest.hexdigest()[:16]
    return _OWN_CODE


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data.get("models", {}) if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(path: Path, models: dict) -> None:
    from mindport.migrator.tree import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps({"version": __version__, "models": models}, indent=1, default=str) + "\n"
                        ).encode("utf-8"))
