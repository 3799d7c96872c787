"""Facts from an observed torch run: what each call site of the project's code received when the original ran.

Some converted sites keep a run-time helper only because a fact is not in the code: ``torch.sigmoid(h)`` where ``h``
comes from a parameter becomes ``mp_math.sigmoid(h)``, which computes an integer input in float32 as torch promotes it
(MindSpore's kernel refuses integers). When the torch original can run, the fact can be observed instead: record the
run, then convert with it.

    with record("my_repo") as facts:            # torch functions and Tensor methods called from my_repo's files
        model(x)
    facts.save("facts.json")
    mindport convert my_repo -o out --facts facts.json      (or ``mindport observe``: build, run and record)

A *site* is a call expression of a file under the root, named by its file (relative to the root) and its source
span ``line:col-end_line:end_col`` (1-based lines, 0-based columns in characters, LibCST's positions of the call). Per
site the recorder keeps the torch API's name (``sigmoid``) and the dtypes of the first tensor argument it received
(the receiver of a Tensor method), over every call of the run. The converter uses a site's facts only when the API
name is the one it converts there and every observation agrees: ``mp_math.sigmoid`` becomes ``ops.sigmoid`` where
every input observed was floating point (``FACT_FLOAT``). A site the run never reached keeps its run-time helper.

What an observation proves is what ran: a port converted with facts assumes the inputs it will get are like the
observed ones (an integer tensor arriving where only floats were seen makes MindSpore's kernel refuse it, loudly).
Calls are seen through torch's ``TorchFunctionMode``: every call of a torch function or a Tensor method from the
root's files; a call on a NumPy array or another object is not a torch call and is never recorded, so facts are
only used for APIs no such object has (the int-to-float guards: ndarray has no ``sigmoid`` or ``exp`` method).
"""
from __future__ import annotations

import json
import linecache
import os
import sys
from pathlib import Path

FACTS_VERSION = 1
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})


class Facts:
    """Per file, per site (``"line:col-end_line:end_col"``): {"api": name, "dtypes": [...], "calls": n}, and per
    run-time decision the site's calls made (``note``) {"seen": {decision: [values]}, "noted": {decision: n}}.
    ``builds``: per file, per build site of a layer torch takes unbatched inputs for (``mindport.mappings.unbatched.
    TORCH_CLASSES``): {"layer": torch class, "calls": n, "batched": [values]}. ``forwards``: per file, per nn.Module
    class of it whose ``forward`` it defines, the rank of each call's first input (``None``: not a tensor):
    {"calls": n, "ranks": [values]}."""

    def __init__(self, files: dict | None = None, builds: dict | None = None, forwards: dict | None = None):
        self.files: dict[str, dict[str, dict]] = files or {}
        self.builds: dict[str, dict[str, dict]] = builds or {}
        self.forwards: dict[str, dict[str, dict]] = forwards or {}

    def merge(self, other: "Facts") -> None:
        """Add another run's facts, site by site (two APIs at one span: ``"?"``; calls added; values united)."""
        for rel, sites in other.files.items():
            for span, site in sites.items():
                into = self.files.setdefault(rel, {}).setdefault(span, {"api": site["api"], "dtypes": [], "calls": 0})
                if into["api"] != site["api"]:
                    into["api"] = "?"
                into["calls"] += site.get("calls", 0)
                into["dtypes"] += [d for d in site["dtypes"] if d not in into["dtypes"]]
                if site.get("joined"):
                    into["joined"] = True
                for decision, values in site.get("seen", {}).items():
                    seen = into.setdefault("seen", {}).setdefault(decision, [])
                    seen += [v for v in values if v not in seen]
                for decision, n in site.get("noted", {}).items():
                    into.setdefault("noted", {})[decision] = into.get("noted", {}).get(decision, 0) + n
        for rel, sites in other.builds.items():
            for span, site in sites.items():
                into = self.builds.setdefault(rel, {}).setdefault(span, {"layer": site["layer"], "calls": 0,
                                                                         "batched": []})
                into["calls"] += site["calls"]
                into["batched"] += [v for v in site["batched"] if v not in into["batched"]]
        for rel, classes in other.forwards.items():
            for name, site in classes.items():
                into = self.forwards.setdefault(rel, {}).setdefault(name, {"calls": 0, "ranks": []})
                into["calls"] += site["calls"]
                into["ranks"] += [v for v in site["ranks"] if v not in into["ranks"]]

    def forward_called(self, rel: str, name: str, rank: int | None) -> None:
        """One call of the file's class ``name`` (its own ``forward``) on a first input of ``rank``."""
        site = self.forwards.setdefault(rel, {}).setdefault(name, {"calls": 0, "ranks": []})
        site["calls"] += 1
        if rank not in site["ranks"]:
            site["ranks"].append(rank)

    def note(self, rel: str, span: str, decision: str, value) -> None:
        """One call at a recorded site made ``decision`` with ``value`` (``nonempty``: the reduced extent held
        elements; ``unmasked``: the softmax input had no row of all -inf along its dim)."""
        site = self.files[rel][span]
        seen = site.setdefault("seen", {}).setdefault(decision, [])
        if value not in seen:
            seen.append(value)
        noted = site.setdefault("noted", {})
        noted[decision] = noted.get(decision, 0) + 1

    def built(self, rel: str, span: str, layer: str) -> None:
        self.builds.setdefault(rel, {}).setdefault(span, {"layer": layer, "calls": 0, "batched": []})

    def called(self, rel: str, span: str, batched: bool) -> None:
        site = self.builds[rel][span]
        site["calls"] += 1
        if batched not in site["batched"]:
            site["batched"].append(batched)

    def decided_sites(self, rel: str) -> tuple:
        """The sites of ``rel`` whose every call made one run-time decision the same way, as ((line, col, end_line,
        end_col, fact), ...): ``"nonempty:mean"``/``"nonempty:sum"`` (every reduced extent held elements),
        ``"unmasked:softmax"`` (no input row of all -inf along the dim), ``"plain:tensor"``/``"plain:as_tensor"`` (the
        data held no tensor inside a list or tuple; for as_tensor, was no tensor either), ``"nonnegative:pad"`` (every
        padding amount >= 0), ``"batched:avg_pool2d"`` (a functional pool's every input a batch of the rank MindSpore's
        op takes, mindport.mappings.unbatched.FUNCTIONS), and per layer build
        ``"built:<MindSpore class>:batched"`` (every call of every layer built there had a batch of the class's rank,
        a cell its ``hx`` given) or ``"built:<MindSpore class>:open"`` (the build ran; some call did not show that,
        or none ran), and per class of the file ``"input:<class>:<rank>"`` at (0, 0, 0, 0) (every call of its own
        ``forward`` had a first input tensor of that rank: mindport.migrator.native_facts.observed_input_ranks). A
        decision some call did not note (a site of two APIs, a dim not given) is no fact."""
        from mindport.mappings.unbatched import TORCH_CLASSES

        out = []
        for span, site in self.files.get(rel, {}).items():
            api = site["api"]
            for decision, value in (("nonempty", True), ("unmasked", True), ("plain", True), ("nonnegative", True),
                                    ("batched", True)):
                seen = site.get("seen", {}).get(decision)
                if api != "?" and seen == [value] and site.get("noted", {}).get(decision) == site["calls"]:
                    out.append((*_span(span), f"{decision}:{api}"))
        for span, site in self.builds.get(rel, {}).items():
            ok = site["calls"] > 0 and site["batched"] == [True]
            out.append((*_span(span), f"built:{TORCH_CLASSES[site['layer']]}:{'batched' if ok else 'open'}"))
        for name, site in self.forwards.get(rel, {}).items():
            if site["calls"] > 0 and len(site["ranks"]) == 1 and isinstance(site["ranks"][0], int):
                out.append((0, 0, 0, 0, f"input:{name}:{site['ranks'][0]}"))
        return tuple(sorted(out))

    def add(self, rel: str, span: str, api: str, dtype: str | None) -> None:
        site = self.files.setdefault(rel, {}).setdefault(span, {"api": api, "dtypes": [], "calls": 0})
        if site["api"] != api:  # two APIs at one span (a call and a torch call inside the layer it calls)
            site["api"] = "?"
        site["calls"] += 1
        if dtype not in site["dtypes"]:
            site["dtypes"].append(dtype)

    def uniform_sites(self, rel: str) -> tuple:
        """The sites of ``rel`` of a join of a sequence of tensors (``cat``, ``stack``, ...: the recorder notes each
        joined tensor's dtype) whose tensors had one dtype in every call: ((line, col, end_line, end_col), ...)."""
        out = []
        for span, site in self.files.get(rel, {}).items():
            if site["api"] != "?" and site.get("joined") and len(site["dtypes"]) == 1 and site["dtypes"][0]:
                out.append(_span(span))
        return tuple(sorted(out))

    def to_json(self) -> dict:
        out = {"mindport_facts": FACTS_VERSION, "files": self.files}
        out = {**out, "builds": self.builds} if self.builds else out
        return {**out, "forwards": self.forwards} if self.forwards else out

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def float_sites(self, rel: str) -> tuple:
        """The sites of ``rel`` every observed input of which was floating: ((line, col, end_line, end_col, api), ...)."""
        out = []
        for span, site in self.files.get(rel, {}).items():
            if site["api"] != "?" and site["dtypes"] and all(d in FLOATING for d in site["dtypes"]):
                out.append((*_span(span), site["api"]))
        return tuple(sorted(out))


def _span(text: str) -> tuple[int, int, int, int]:
    start, end = text.split("-")
    line, col = start.split(":")
    end_line, end_col = end.split(":")
    return int(line), int(col), int(end_line), int(end_col)


def load(path) -> Facts:
    """The facts a recorded run wrote; a file that is not one raises ValueError saying why."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a facts file ({exc})") from None
    if not isinstance(data, dict) or data.get("mindport_facts") != FACTS_VERSION or not isinstance(data.get("files"), dict):
        raise ValueError(f"{path}: not a facts file of this mindport (expected \"mindport_facts\": {FACTS_VERSION})")
    try:
        for sites in data["files"].values():
            for span, site in sites.items():
                _span(span)
                site["api"], site["dtypes"]  # noqa: B018 - the keys every site has
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a site is malformed ({type(exc).__name__}: {exc})") from None
    builds = data.get("builds", {})
    try:
        from mindport.mappings.unbatched import TORCH_CLASSES

        for sites in builds.values():
            for span, site in sites.items():
                _span(span)
                TORCH_CLASSES[site["layer"]], int(site["calls"]), list(site["batched"])  # noqa: B018
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a layer build is malformed ({type(exc).__name__}: {exc})") from None
    forwards = data.get("forwards", {})
    try:
        for classes in forwards.values():
            for site in classes.values():
                int(site["calls"]), list(site["ranks"])  # noqa: B018
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a class's forward record is malformed ({type(exc).__name__}: {exc})") from None
    return Facts(data["files"], builds, forwards)


def _char_col(filename: str, line: int, byte_col: int) -> int:
    """A byte offset of the code's positions -> the character column LibCST reports."""
    text = linecache.getline(filename, line)
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) if text else byte_col


class record:  # noqa: N801 - used as a context manager, like open
    """Record the torch calls the root's files make while the block runs (see the module's docstring)."""

    def __init__(self, root, facts: Facts | None = None):
        self.root = os.path.realpath(root)
        self.facts = facts or Facts()
        self._mode = None

    def __enter__(self) -> Facts:
        import torch
        from torch.overrides import TorchFunctionMode

        from mindport.mappings.unbatched import TORCH_CELLS, TORCH_CLASSES, TORCH_RANK

        torch_dir = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep
        root = self.root + os.sep
        facts = self.facts
        real = {}

        def resolved(filename: str) -> str:
            path = real.get(filename)
            if path is None:
                path = real[filename] = os.path.realpath(filename)
            return path

        def under_root(filename: str) -> str | None:
            path = resolved(filename)
            return path[len(root):].replace(os.sep, "/") if path.startswith(root) else None

        def site_of(frame):
            """(file under the root, span of the call executing in it) of the first frame outside torch, or None."""
            while frame is not None and resolved(frame.f_code.co_filename).startswith(torch_dir):
                frame = frame.f_back
            rel = under_root(frame.f_code.co_filename) if frame is not None else None
            if rel is None or frame.f_lasti < 0:
                return None
            pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
            if None in pos:
                return None
            line, end_line, col, end_col = pos
            name = frame.f_code.co_filename
            return rel, f"{line}:{_char_col(name, line, col)}-{end_line}:{_char_col(name, end_line, end_col)}"

        class _Recorder(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                where = site_of(sys._getframe(1))
                if where is not None:
                    rel, span = where
                    first = next((a for a in (*args, *(kwargs or {}).values()) if isinstance(a, torch.Tensor)),
                                 None)
                    api = getattr(func, "__name__", str(func))
                    joined = args[0] if first is None and args and isinstance(args[0], (list, tuple)) else ()
                    if joined and all(isinstance(t, torch.Tensor) for t in joined):
                        # a join of a sequence of tensors (torch.cat, stack): each one's dtype (uniform_sites)
                        for t in joined:
                            facts.add(rel, span, api, str(t.dtype).replace("torch.", ""))
                        facts.files[rel][span]["joined"] = True
                    else:
                        dtype = str(first.dtype).replace("torch.", "") if first is not None else None
                        facts.add(rel, span, api, dtype)
                        _decisions(facts, rel, span, api, first, args, kwargs or {})
                return func(*args, **(kwargs or {}))

        # the layers torch takes unbatched inputs for: where each was built, and the rank of each call's input
        classes = {getattr(torch.nn, name): name for name in TORCH_CLASSES if hasattr(torch.nn, name)}
        module_init = torch.nn.Module.__init__

        def init(module, *args, **kwargs):
            module_init(module, *args, **kwargs)
            name = classes.get(type(module))  # exactly the class: a project's subclass is built in its own code
            where = site_of(sys._getframe(1)) if name is not None else None
            if where is not None:
                object.__setattr__(module, "_mindport_built", where)
                facts.built(*where, name)

        own: dict[type, str | None] = {}  # class -> its file under the root, where the class defines forward

        def own_file(cls) -> str | None:
            if cls not in own:
                forward = cls.__dict__.get("forward")
                code = getattr(forward, "__code__", None)
                own[cls] = under_root(code.co_filename) if code is not None else None
            return own[cls]

        def pre_hook(module, inputs):
            rel = own_file(type(module))
            if rel is not None:  # the project's own class: the rank of each call's first input
                x = inputs[0] if inputs else None
                facts.forward_called(rel, type(module).__name__, x.dim() if isinstance(x, torch.Tensor) else None)
            where = module.__dict__.get("_mindport_built")
            if where is not None and where[0] in facts.builds and where[1] in facts.builds[where[0]]:
                name = classes[type(module)]
                x = inputs[0] if inputs else None
                batched = isinstance(x, torch.Tensor) and x.dim() == TORCH_RANK[name] and (
                    name not in TORCH_CELLS or (len(inputs) > 1 and inputs[1] is not None))
                facts.called(*where, batched)

        self._restore = (torch.nn.Module, module_init)
        torch.nn.Module.__init__ = init
        self._hook = torch.nn.modules.module.register_module_forward_pre_hook(pre_hook)
        self._mode = _Recorder()
        self._mode.__enter__()
        return facts

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        self._hook.remove()
        cls, init = self._restore
        cls.__init__ = init


_REDUCTIONS = frozenset({"mean", "sum"})


def _batch_functions() -> dict:
    """torch's functional pools whose MindSpore op takes only a batch, with its rank (mappings.unbatched.FUNCTIONS:
    their names are torch's too); imported when a run is recorded, as the module's other table reads are."""
    from mindport.mappings.unbatched import FUNCTIONS

    return FUNCTIONS
_CONSTRUCTORS = frozenset({"tensor", "as_tensor"})


def _holds_tensor(data, depth: int) -> bool:
    """A tensor at ``depth`` or deeper in ``data`` (nested lists and tuples)."""
    import torch

    if isinstance(data, torch.Tensor):
        return depth <= 0
    if isinstance(data, (list, tuple)):
        return any(_holds_tensor(item, depth - 1) for item in data)
    return False


def _decisions(facts: Facts, rel: str, span: str, api: str, first, args, kwargs) -> None:
    """The run-time decisions a call at a recorded site made (``Facts.note``): a reduction's extent held elements
    (``mean``/``sum``: the runtime's value over an empty extent is never needed), a softmax input had no row of all
    -inf along its dim (``softmax``: MindSpore's CPU kernel's defect never met), a tensor constructor's data held no
    tensor (``tensor``/``as_tensor``: the runtime's reading of tensors inside a list never needed), a pad's amounts
    were none negative (``pad``: the runtime's cropping, for MindSpore's defect on a negative amount, never needed), a
    functional pool's input was a batch (``avg_pool2d``...: the runtime's added batch axis never needed). Computed with torch's own ops; the
    recorder's mode is off inside its handler, so they are not recorded themselves."""
    import torch

    if api in _CONSTRUCTORS:
        data = args[0] if args else kwargs.get("data", kwargs.get("input_data"))
        # torch.tensor of a tensor is a copy either way; as_tensor gives a tensor back itself (the runtime's case)
        facts.note(rel, span, "plain", not _holds_tensor(data, 0 if api == "as_tensor" else 1))
        return
    if first is None or (args and args[0] is not first):
        return
    if api == "pad":
        padding = args[1] if len(args) > 1 else kwargs.get("pad")
        try:
            facts.note(rel, span, "nonnegative", all(int(p) >= 0 for p in padding))
        except (TypeError, ValueError):
            facts.note(rel, span, "nonnegative", False)
    elif api in _REDUCTIONS:
        facts.note(rel, span, "nonempty", first.numel() > 0)
    elif (rank := _batch_functions().get(api)) is not None:  # one table lookup per recorded call
        facts.note(rel, span, "batched", first.dim() == rank)
    elif api == "softmax":
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if isinstance(dim, int) and first.is_floating_point() and first.dim() > 0:
            with torch.no_grad():
                facts.note(rel, span, "unmasked", not bool(torch.isneginf(first).all(dim=dim).any()))
