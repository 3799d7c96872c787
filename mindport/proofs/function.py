"""Proof of a mapping entry: write a torch snippet from its example, convert it with the real converter, run both
frameworks on the same inputs (and, for layers, the same weights through the weight rule), compare.

Used by the generated test suite (``tests/mappings/test_proofs.py``) and by ``mindport mappings coverage``.

Input specs in an example's ``inputs``/``self`` (parsed, never evaluated):
  ``randn(2, 3)`` normal floats · ``rand(2, 3)`` uniform [0, 1) · ``randpos(2, 3)`` uniform [0.5, 2) ·
  ``randint(LO, HI, (2, 3))`` int64 in [LO, HI) · ``randbool(2, 3)`` · ``randsign(2, 3)`` -1.0/+1.0 ·
  ``randtail(2, 3)`` |x| uniform in [0.9, 0.9999) with either sign (the tails of inverse functions) · append ``:float64``/``:float16``/``:int32``
  to change the dtype · ``scalar(1.5)`` a Python number.
"""
from __future__ import annotations

import ast
import contextlib
import itertools
import linecache
import os
import re
import sys
import types
from dataclasses import dataclass

import numpy as np

from mindport.mappings import Entry

STYLES = ("positional", "keyword", "shuffled", "omitted", "variables", "adapter")
# "adapter": the arguments reach the call through ``*args``/``**kwargs`` (``torch.cat(*_args, **_kwargs)``), so the
# converter hands the call to the runtime adapter (mindport/runtime/adapt.py), which maps them when the call happens
PROGRAM_STYLE = "program"  # the example is a whole torch program (``example.program``)
_SNIPPETS = itertools.count()
_SPEC = re.compile(r"^(randn|rand|randpos|randint|randbool|randsign|randtail|scalar)\((.*)\)(?::(\w+))?$")


class ProofError(AssertionError):
    pass


def make_input(spec: str, rng: np.random.Generator):
    match = _SPEC.match(spec.replace(" ", ""))
    if not match:
        raise ValueError(f"bad input spec {spec!r}")
    kind, args_text, dtype = match.groups()
    args = ast.literal_eval(f"({args_text},)") if args_text else ()
    if kind == "scalar":
        return args[0]
    if kind == "randint":
        low, high, shape = args
        return rng.integers(low, high, size=shape).astype(dtype or "int64")
    shape = args
    if kind == "randbool":
        return rng.random(shape) < 0.5
    if kind == "randsign":  # labels of margin/hinge losses: -1 or +1
        return np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(dtype or "float32")
    if kind == "randtail":  # near +-1, where an inverse CDF/erfinv loses accuracy first
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        return (sign * rng.uniform(0.9, 0.9999, size=shape)).astype(dtype or "float32")
    if kind == "randn":
        values = rng.standard_normal(shape)
    elif kind == "rand":
        values = rng.random(shape)
    else:
        values = rng.uniform(0.5, 2.0, size=shape)
    return np.asarray(values).astype(dtype or "float32")


def _bind_example(entry: Entry) -> tuple[dict[str, str], list[str]]:
    """The example's arguments bound to the torch signature: ({param: source}, extra positional varargs)."""
    call = ast.parse(f"f({entry.example.args})", mode="eval").body
    params = list(entry.signature or ())
    positional = [p for p in params if p.kind == "positional"]
    bound: dict[str, str] = {}
    extra: list[str] = []
    for i, arg in enumerate(call.args):
        if i < len(positional):
            bound[positional[i].name] = ast.unparse(arg)
        else:
            extra.append(ast.unparse(arg))
    for kw in call.keywords:
        bound[kw.arg] = ast.unparse(kw.value)
    return bound, extra


def applicable_styles(entry: Entry) -> tuple[str, ...]:
    example = entry.example
    if example is None:
        return ()
    if example.program:
        return (PROGRAM_STYLE,)
    if example.styles:
        return (*example.styles, "adapter")
    bound, extra = _bind_example(entry)
    styles = ["positional", "variables", "adapter"]
    if not extra:
        styles += ["keyword", "shuffled"]
    params = {p.name: p for p in entry.signature or ()}
    if any(n in params and params[n].default is not None and src == params[n].default for n, src in bound.items()):
        styles.append("omitted")  # only differs from "positional" when the example spells out a default
    order = {s: i for i, s in enumerate(STYLES)}
    return tuple(sorted(set(styles), key=order.get))


def render_call(entry: Entry, style: str) -> tuple[str, list[str]]:
    """(call argument source, setup lines) for one call style."""
    if style == "adapter":
        args, setup = render_call(entry, "positional")
        call = ast.parse(f"f({args})", mode="eval").body
        positional = "".join(f"{ast.unparse(a)}, " for a in call.args)
        keywords = ", ".join(f"{k.arg!r}: {ast.unparse(k.value)}" for k in call.keywords)
        return "*_args, **_kwargs", [*setup, f"_args = ({positional})", f"_kwargs = {{{keywords}}}"]
    bound, extra = _bind_example(entry)
    params = list(entry.signature or ())
    inputs = set(entry.example.inputs)
    setup: list[str] = []
    if style == "variables":
        for name, src in list(bound.items()):
            if src not in inputs:
                setup.append(f"v_{name} = {src}")
                bound[name] = f"v_{name}"
    if style == "omitted":
        defaults = {p.name: p.default for p in params}
        bound = {n: s for n, s in bound.items() if defaults.get(n) is None or s != defaults[n]}
    parts: list[str] = []
    if style in ("positional", "variables", "omitted"):
        keyword_from = None
        for p in params:
            if p.kind != "positional":
                break
            if p.name not in bound:
                keyword_from = p.name
                break
        positional_done = True
        for p in params:
            if p.kind == "positional" and p.name in bound and positional_done and keyword_from != p.name:
                parts.append(bound.pop(p.name))
            elif p.kind == "positional":
                positional_done = False
        parts.extend(extra)
        parts.extend(f"{n}={s}" for n, s in bound.items())
    elif style == "keyword":
        parts = [f"{n}={s}" for n, s in bound.items()]
    elif style == "shuffled":
        parts = [f"{n}={s}" for n, s in reversed(list(bound.items()))]
    return ", ".join(parts), setup


def torch_snippet(entry: Entry, style: str) -> str:
    """A small torch module: ``build()`` for layers, ``run(...)`` for functions and methods; a program example as
    written."""
    if style == PROGRAM_STYLE:
        return entry.example.program.strip("\n") + "\n"
    args, setup = render_call(entry, style)
    module = entry.torch.rsplit(".", 1)[0] if entry.kind != "method" else "torch"
    head = "import torch\n" + (f"import {module}\n" if not module.startswith("torch.") and module != "torch" else "")
    head += "\n\n"
    body = "".join(f"    {line}\n" for line in setup)
    inputs = list(entry.example.inputs)
    if entry.kind == "layer":
        return head + f"def build():\n{body}    return {entry.torch}({args})\n"
    if entry.kind == "method":
        method = entry.torch.rsplit(".", 1)[1]
        params = ", ".join(["self_", *inputs])
        return head + f"def run({params}):\n{body}    return self_.{method}({args})\n"
    return head + f"def run({', '.join(inputs)}):\n{body}    return {entry.torch}({args})\n"


_SNIPPET_DIR: list[str] = []


def _snippet_dir() -> str:
    """A per-process folder for snippets that must be real files (removed at exit)."""
    if not _SNIPPET_DIR:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="mindport-proofs-")
        atexit.register(shutil.rmtree, folder, True)
        _SNIPPET_DIR.append(folder)
    return _SNIPPET_DIR[0]


def _load(code: str, name: str, importable: bool = False) -> types.ModuleType:
    """Run a snippet as a module. Its source is registered with ``linecache`` under a unique file name, so code
    that reads the source of its own functions (``torch.jit.script``, ``inspect.getsource``) works as from a file.
    ``importable``: written as a real file, under a unique name in ``sys.modules``, which MindSpore's graph compiler
    needs (it reads a function's source file and resolves globals by module name)."""
    if not importable:
        filename = f"<{name} {next(_SNIPPETS)}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        module = types.ModuleType(name)
        exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - generated test snippets
        return module
    name = f"_mindport_proof_{name}_{os.getpid()}_{next(_SNIPPETS)}"
    path = os.path.join(_snippet_dir(), f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(code)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(code, path, "exec"), module.__dict__)  # noqa: S102 - generated test snippets
    return module


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().resolve_conj().resolve_neg()  # conjugate/negative views (torch.fft.ifft of real input)
        if value.dtype.is_floating_point and str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def _build_pair(t_mod, m_mod, train: bool, t_args=(), m_args=(), part=lambda model: model):
    """``build()`` in both snippets; the torch weights reach the Cell through the weight rules. A torch model with
    lazy layers (``nn.LazyLinear``: sizes read from the first input) has no weights until its first call: both run
    once on the example's inputs (``t_args``/``m_args``, the dry run torch users do) before the weights go over
    (``part``: the sub-layer of the model that takes them)."""
    import torch

    from mindport.migrator.weights import transfer_weights

    t_model, m_model = t_mod.build(), m_mod.build()
    t_model.train(train)
    m_model.set_train(train)
    if t_args and any(isinstance(p, torch.nn.parameter.UninitializedTensorMixin)
                      for p in list(t_model.parameters()) + list(t_model.buffers())):
        with torch.no_grad():
            part(t_model)(*t_args)
        part(m_model)(*m_args)
    state = t_model.state_dict()
    if state:
        transfer_weights(state, m_model)
    return t_model, m_model


@contextlib.contextmanager
def _torch_state_kept():
    """torch's process-wide state as the block found it: a proof's torch snippet runs in the test process and may
    change it, at import or in ``run`` (``torch.set_default_device`` pushes a TorchFunctionMode that stays on the
    stack; ``set_default_dtype``; ``use_deterministic_algorithms(True)``), and every later torch call of the process
    would run under it: torch 2.13's ``F.l1_loss`` drops ``weight=`` whenever any such mode is active, and its
    max_unpool raises "does not have a deterministic implementation" (the full suite's workers failed
    test_weighted_losses and 30 max_unpool proofs after those entries' proofs)."""
    import torch

    dtype = torch.get_default_dtype()
    modes = len(torch.overrides._get_current_function_mode_stack())
    deterministic = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        yield
    finally:
        if len(torch.overrides._get_current_function_mode_stack()) > modes:
            torch.set_default_device(None)  # the default device's mode goes; none was there before
        torch.set_default_dtype(dtype)
        torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])


def _torch_run(t_mod, t_args):
    """The torch snippet's ``run(*t_args)``, without autograd."""
    import torch

    with torch.no_grad():
        return t_mod.run(*t_args)


def _run_program(t_mod, m_mod, arrays, t_val, m_val, example):
    """A program example: ``run(*inputs)``, or ``run(model, *inputs)`` when the program defines ``build()`` (the
    torch model's weights reach the Cell through the weight rules; both run in inference mode unless ``train``).
    Returns (torch output, the MindSpore function, its arguments)."""
    t_args = [t_val(arrays[n]) for n in example.inputs]
    m_args = [m_val(arrays[n]) for n in example.inputs]
    if hasattr(t_mod, "build"):
        t_model, m_model = _build_pair(t_mod, m_mod, example.train, t_args, m_args)
        t_args.insert(0, t_model)
        m_args.insert(0, m_model)
    t_out = _torch_run(t_mod, t_args)
    return t_out, m_mod.run, m_args


@dataclass
class ProofResult:
    torch_code: str
    ms_code: str
    max_abs: float


@dataclass
class ProofCase:
    """A proof up to the MindSpore call: the torch output, and what to call on the MindSpore side (the converted
    ``run`` function or layer) with which arguments."""

    entry: Entry
    style: str
    torch_code: str
    ms_code: str
    torch_out: object
    call: object
    args: list


def prepare(entry: Entry, style: str, profile: str = "nn", seed: int = 0, importable: bool = False) -> ProofCase:
    """Convert the example, build both sides' inputs (and layers), run torch. ``importable``: the converted snippet
    is loaded so that MindSpore's graph compiler can read it (see :func:`prove`'s ``graph``). torch's process-wide
    state is left as it was (:func:`_torch_state_kept`)."""
    with _torch_state_kept():
        return _prepare(entry, style, profile, seed, importable)


def _prepare(entry: Entry, style: str, profile: str, seed: int, importable: bool) -> ProofCase:
    import mindspore as ms
    import torch

    from mindport.migrator import convert_source

    from mindport.discovery import legacy_torch

    legacy_torch.install()  # torch._six's entries: the torch side has the module torch 1.x had (removed in 2.0)
    example = entry.example
    torch_code = torch_snippet(entry, style)
    result = convert_source(torch_code, f"<proof {entry.torch}>", target=profile)
    if result.diagnostics:
        raise ProofError(f"conversion left diagnostics: {[d.format() for d in result.diagnostics]}\n{result.code}")
    ms_code = result.code
    rng = np.random.default_rng(seed)
    arrays = {name: make_input(spec, rng) for name, spec in example.inputs.items()}
    self_array = make_input(example.self, rng) if entry.kind == "method" and style != PROGRAM_STYLE else None
    t_mod = _load(torch_code, "torch_snippet")
    m_mod = _load(ms_code, "ms_snippet", importable=importable)

    def t_val(a):
        return torch.tensor(a) if isinstance(a, np.ndarray) else a

    def m_val(a):
        return ms.Tensor(a) if isinstance(a, np.ndarray) else a

    if style == PROGRAM_STYLE:
        t_out, call, m_args = _run_program(t_mod, m_mod, arrays, t_val, m_val, example)
    elif entry.kind == "layer":
        call_names = [n.strip() for n in (example.call or ",".join(example.inputs)).split(",") if n.strip()]
        t_layer, call = _build_pair(t_mod, m_mod, example.train, [t_val(arrays[n]) for n in call_names],
                                    [m_val(arrays[n]) for n in call_names])
        with torch.no_grad():
            t_out = t_layer(*[t_val(arrays[n]) for n in call_names])
        m_args = [m_val(arrays[n]) for n in call_names]
    else:
        t_args = [t_val(arrays[n]) for n in example.inputs]
        m_args = [m_val(arrays[n]) for n in example.inputs]
        if entry.kind == "method":
            t_args.insert(0, t_val(self_array))
            m_args.insert(0, m_val(self_array))
        t_out = _torch_run(t_mod, t_args)
        call = m_mod.run
    return ProofCase(entry, style, torch_code, ms_code, t_out, call, m_args)


def prove(entry: Entry, style: str, profile: str = "nn", seed: int = 0, graph: bool = False) -> ProofResult:
    """Run one proof; raises ProofError with a precise message when the frameworks disagree.

    ``graph``: the MindSpore side runs compiled as a static graph (``ms.jit`` of the converted ``run`` function, or
    of the converted layer), as under ``GRAPH_MODE``: the proof that the target compiles and still matches."""
    import mindspore as ms

    case = prepare(entry, style, profile, seed, importable=graph)
    call = ms.jit(case.call) if graph else case.call
    return compare(case, call(*case.args))


def prove_graph_batch(cases: list[ProofCase]) -> list[ProofResult | BaseException]:
    """Many prepared cases compiled as ONE static graph (compiling is the cost: one graph for many cases takes about
    half the time of one graph each), each output compared with torch. When the batch does not compile or run,
    each case is compiled alone, so every failure is its own case's. Returns a result or the exception per case."""
    import mindspore as ms

    params, calls, flat = [], [], []
    for i, case in enumerate(cases):
        names = [f"a{i}_{k}" for k in range(len(case.args))]
        params += names
        flat += case.args
        calls.append(f"c{i}({', '.join(names)})")
    code = f"def batch({', '.join(params)}):\n    return ({', '.join(calls)},)\n"
    module = _load(code, "graph_batch", importable=True)
    for i, case in enumerate(cases):
        setattr(module, f"c{i}", case.call)
    try:
        outputs = ms.jit(module.batch)(*flat)
    except Exception:  # noqa: BLE001 - one case broke the batch: find out which, one graph each
        outputs = None
    results: list[ProofResult | BaseException] = []
    for i, case in enumerate(cases):
        try:
            results.append(compare(case, outputs[i] if outputs is not None else ms.jit(case.call)(*case.args)))
        except Exception as exc:  # noqa: BLE001 - a failure is this case's result
            results.append(exc)
    return results


def compare(case: ProofCase, m_out) -> ProofResult:
    """The MindSpore output against torch's: count, shapes, dtypes, then values within the example's tolerance."""
    example, ms_code, torch_code = case.entry.example, case.ms_code, case.torch_code
    t_leaves, m_leaves = _flatten(case.torch_out), _flatten(m_out)
    if len(t_leaves) != len(m_leaves):
        raise ProofError(f"torch returned {len(t_leaves)} values, MindSpore {len(m_leaves)}\n{ms_code}")
    worst = 0.0
    for i, (t, m) in enumerate(zip(t_leaves, m_leaves)):
        t, m = _to_numpy(t), _to_numpy(m)
        if t.shape != m.shape:
            raise ProofError(f"output {i}: shape {t.shape} (torch) != {m.shape} (MindSpore)\n{ms_code}")
        if t.dtype != m.dtype:
            raise ProofError(f"output {i}: dtype {t.dtype} (torch) != {m.dtype} (MindSpore)\n{ms_code}")
        if example.compare == "shape" or t.dtype == np.bool_ and t.size == 0:
            continue
        if np.iscomplexobj(t):  # compare real and imaginary parts, never the real part alone
            t, m = np.stack([t.real, t.imag]), np.stack([m.real, m.imag])
        tf, mf = t.astype(np.float64), m.astype(np.float64)
        if not np.array_equal(np.isnan(tf), np.isnan(mf)):
            raise ProofError(f"output {i}: NaN positions differ\n{ms_code}")
        if not np.array_equal(np.isinf(tf) & (tf > 0), np.isinf(mf) & (mf > 0)) or \
                not np.array_equal(np.isinf(tf) & (tf < 0), np.isinf(mf) & (mf < 0)):
            raise ProofError(f"output {i}: Inf positions differ\n{ms_code}")
        finite = np.isfinite(tf)
        diff = np.abs(tf[finite] - mf[finite]) if finite.any() else np.zeros(1)
        worst = max(worst, float(diff.max(initial=0.0)))
        if not np.allclose(mf[finite], tf[finite], rtol=example.rtol, atol=example.atol):
            raise ProofError(f"output {i}: max abs diff {diff.max():.3g} exceeds rtol={example.rtol} "
                             f"atol={example.atol}\n--- torch\n{torch_code}--- mindspore\n{ms_code}")
    return ProofResult(torch_code, ms_code, worst)

