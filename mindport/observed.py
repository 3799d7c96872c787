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
    """Per file, per site (``"line:col-end_line:end_col"``): {"api": name, "dtypes": [...], "calls": n}."""

    def __init__(self, files: dict | None = None):
        self.files: dict[str, dict[str, dict]] = files or {}

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
        return {"mindport_facts": FACTS_VERSION, "files": self.files}

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
    return Facts(data["files"])


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

        class _Recorder(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                frame = sys._getframe(1)
                while frame is not None and resolved(frame.f_code.co_filename).startswith(torch_dir):
                    frame = frame.f_back
                rel = under_root(frame.f_code.co_filename) if frame is not None else None
                if rel is not None and frame.f_lasti >= 0:
                    pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
                    if None not in pos:
                        line, end_line, col, end_col = pos
                        name = frame.f_code.co_filename
                        span = (f"{line}:{_char_col(name, line, col)}-"
                                f"{end_line}:{_char_col(name, end_line, end_col)}")
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
                return func(*args, **(kwargs or {}))

        self._mode = _Recorder()
        self._mode.__enter__()
        return facts

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
