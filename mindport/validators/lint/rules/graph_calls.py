"""MS4xx, what converted models hit in GRAPH_MODE (1 of 2): calls a compiled graph treats differently from PyNative
(named-tuple fields of runtime results, host-only runtime functions, tensor-method overloads, third-party calls,
`Tensor.device`); verified in MindSpore 2.10 GRAPH_MODE. The Python constructs are in graph_python.py."""
from __future__ import annotations

import ast

from mindport.validators.lint.context import FileContext, graph_nodes_of, walk_body
from mindport.validators.lint.rules.base import Rule
from mindport.validators.lint.rules.static_graph import _CELL, _JIT

# Fields of the named tuples mindport.runtime returns in PyNative (torch's return types), with their position when
# it is the same in every result that has the field.
_FIELD_POSITIONS = {"values": 0, "indices": 1, "mantissa": 0, "exponent": 1, "hist": 0, "bin_edges": 1,
                    "eigenvalues": 0, "eigenvectors": 1, "Vh": 2, "V": 2, "S": 1, "solution": 0, "info": None,
                    "inverse": 0, "pivots": 1, "residuals": 1, "rank": 2, "singular_values": 3,
                    "cloned_coefficient": 1, "result": 0, "LU": 0, "P": 0, "L": None, "U": None, "min": 0, "max": 1}


def _runtime_call(ctx: FileContext, node: ast.AST) -> str | None:
    """The `mindport.runtime.*` function a call calls, else None."""
    if isinstance(node, ast.Call):
        qualname = ctx.resolve(node.func)
        if qualname and qualname.startswith("mindport.runtime."):
            return qualname
    return None


class GraphNamedTupleField(Rule):
    """Flags a named-tuple field (`.values`, `.indices`, `.U` ...) read from the result of a `mindport.runtime`
    function in `construct` or a @jit function: directly (`mp_math.sort(x).values`) or through a name assigned from
    the call in the same function.

    ## Why is this bad?
    torch returns named tuples, and so does the runtime in PyNative. A named tuple built inside a static graph is
    not compiled: MindSpore keeps it as an interpreted Python object and later MindSpore functions fail on its items
    ("unsupported operand type(s) for +: 'range' and 'range'" from `ops.swapaxes`, measured on 2.10). So in a graph
    the runtime returns a plain tuple, which has no fields.

    ## Fix
    Read the result by position (`mp_math.sort(x)[0]` for `.values`, `[1]` for `.indices`) or unpack it
    (`values, indices = mp_math.sort(x)`); both work in PyNative too.
    """

    code = "MS413"
    name = "graph-named-tuple-field"
    message = "named-tuple field of a runtime result in a graph function"
    severity = "error"
    VALID = (
        "from mindspore import nn\nfrom mindport.runtime import math as mp_math\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        values, indices = mp_math.sort(x, 1)\n        return values + mp_math.topk(x, 2)[0]\n",
        "from mindport.runtime import math as mp_math\n\ndef top(x):\n    return mp_math.topk(x, 2).values\n",
    )
    INVALID = (
        "from mindspore import nn\nfrom mindport.runtime import math as mp_math\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        return mp_math.sort(x, 1).values\n",
        "import mindspore as ms\nfrom mindport.runtime import linalg as mp_linalg\n\n@ms.jit\ndef f(a):\n"
        "    result = mp_linalg.svd(a)\n    return result.U * result.S[..., None, :]\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            from_runtime: dict[str, str] = {}
            for node in walk_body(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    qualname = _runtime_call(ctx, node.value)
                    if qualname:
                        from_runtime[node.targets[0].id] = qualname
            for node in walk_body(fn):
                if not (isinstance(node, ast.Attribute) and node.attr in _FIELD_POSITIONS):
                    continue
                value = node.value
                qualname = _runtime_call(ctx, value) or (
                    from_runtime.get(value.id) if isinstance(value, ast.Name) else None)
                if qualname is None:
                    continue
                position = _FIELD_POSITIONS[node.attr]
                use = f"[{position}]" if position is not None else "its position"
                yield node, (f"`.{node.attr}` of a {qualname.rsplit('.', 1)[1]}() result in `{fn.name}`: in a static "
                             f"graph the runtime returns a plain tuple; use {use} or unpack it")


_GRAPH_REASONS: dict[str, str] | None = None


def _graph_reasons() -> dict[str, str]:
    """runtime target -> why it can't run in a static graph (the `graph` text of its mapping entries)."""
    global _GRAPH_REASONS
    if _GRAPH_REASONS is None:
        from mindport.mappings import load_registry

        _GRAPH_REASONS = {}
        for entry in load_registry():
            if entry.graph:
                for target in entry.targets.values():
                    _GRAPH_REASONS.setdefault(target, entry.graph)
    return _GRAPH_REASONS


class GraphHostOnlyRuntime(Rule):
    """Flags a call, in `construct` or a @jit function, to a `mindport.runtime` function that can't run in a static
    graph: the ones whose mapping entry says `graph = "..."` (the message quotes it).

    ## Why is this bad?
    These functions need the host or a Python object graph code can't have: torch's shape-changing in-place
    methods (`x.unsqueeze_(0)`: a graph can't change a tensor's shape in place), `Tensor.apply_`/`map_` (a Python
    function per element), `torch.nn.init.*` (they fill a Parameter on the host). In a graph they raise a mindport
    error saying so; in PyNative they work.

    ## Fix
    What the message says: rebind the name (`x = x.unsqueeze(0)`), write the element function with MindSpore ops,
    initialise in `__init__`.
    """

    code = "MS414"
    name = "graph-host-only-runtime"
    message = "runtime function that can't run in a static graph"
    severity = "error"
    VALID = (
        "from mindspore import nn\nfrom mindport.runtime import inplace as mp_inplace\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        x = x.unsqueeze(0)\n        return mp_inplace.add_(x, 1)\n",
        "from mindspore import nn\nfrom mindport.runtime import init as mp_init\n\nclass Net(nn.Cell):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Dense(4, 4)\n"
        "        mp_init.normal_(self.fc.weight, std=0.02)\n",
    )
    INVALID = (
        "from mindspore import nn\nfrom mindport.runtime import inplace as mp_inplace\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        mp_inplace.unsqueeze_(x, 0)\n        return x\n",
        "import mindspore as ms\nfrom mindport.runtime import init as mp_init\n\n@ms.jit\ndef reset(w):\n"
        "    return mp_init.normal_(w, std=0.02)\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            qualname = _runtime_call(ctx, node)
            if qualname is None:
                continue
            reason = _graph_reasons().get(qualname)
            if reason:
                yield node, f"{qualname.rsplit('.', 1)[1]}() in `{fn.name}` can't run in a static graph: {reason}"


# method -> (what graph mode does with the torch-style call, the fix); measured on MindSpore 2.10 CPU
_DIM_KEYWORD_METHODS = ("chunk", "split", "std", "cumsum", "sort", "argsort", "median")


class GraphTensorMethodOverload(Rule):
    """Flags torch-style Tensor method calls that MindSpore 2.10 runs in PyNative but compiles differently in a static
    graph (measured on 2.10 CPU, PyNative against `ms.jit` of the same function):

    * `x.transpose(a, b)`: PyNative swaps two axes like torch; the graph takes the two numbers as a full
      permutation: an error for other than 2-D tensors ("the number of axes must be equal to the dimension of
      Tensor"), and for a 2-D tensor `x.transpose(0, 1)` silently returns `x` unchanged;
    * `x.max(d)` / `x.min(d)` with the dimension as the only argument: PyNative returns torch's (values, indices),
      the graph the values alone, so `x.max(1)[0]` is the first row in a graph, silently;
    * `x.expand(n, -1, -1)` and `x.expand((n, -1, -1))`: the graph rejects sizes as numbers or a tuple;
    * `chunk`, `split`, `std`, `cumsum`, `sort`, `argsort`, `median` with the keyword `dim=`: the graph rejects the
      keyword (the positional dimension, or `axis=`, compiles).

    ## Why is this bad?
    The converted model matches torch in PyNative and fails, or is silently wrong, the day it runs under
    `GRAPH_MODE` or `@jit`.

    ## Fix
    `x.swapaxes(a, b)`; `x.max(dim=d)` (values and indices in both modes) or `x.amax(d)` (values);
    `ops.broadcast_to(x, shape)` (-1 keeps a dimension); the dimension positionally (`x.chunk(2, -1)`).
    """

    code = "MS416"
    name = "graph-tensor-method-overload"
    message = "Tensor method call that compiles differently in a static graph"
    severity = "error"
    VALID = (
        _CELL + "        q = x.swapaxes(1, 2)\n        m = x.max(dim=1)[0]\n        a, b = x.chunk(2, -1)\n"
        "        return q, m, a, ops.broadcast_to(self.cls, (x.shape[0], -1, -1))\n",
        "import numpy as np\nfrom mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return ops.max(x, 1)[0] + x.transpose(1, 0, 2).sum()\n\ndef host(a):\n    return a.transpose(1, 0)\n",
    )
    INVALID = (
        _CELL + "        return x.transpose(1, 2)\n",
        _CELL + "        return x.max(1)[0]\n",
        _CELL + "        return self.cls.expand(x.shape[0], -1, -1)\n",
        _CELL + "        a, b = x.chunk(2, dim=-1)\n        return a * b\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver, method = node.func.value, node.func.attr
            if ctx.resolve(receiver) is not None or (isinstance(receiver, ast.Name) and receiver.id == "self"):
                continue  # ops.max(x, 1), np.transpose(...): a module function, not a Tensor method
            args, keywords = node.args, {k.arg for k in node.keywords}
            if any(isinstance(a, ast.Starred) for a in args) or None in keywords:
                continue
            what = None
            if method == "transpose" and len(args) == 2 and not keywords:
                what = ("`.transpose(a, b)` swaps two axes in PyNative but is a full permutation in a static graph "
                        "(an error, or a silent no-op for (0, 1) on 2-D): use `.swapaxes(a, b)`")
            elif method in ("max", "min") and len(args) == 1 and not keywords and not isinstance(args[0], ast.Name):
                what = (f"`.{method}(dim)` is (values, indices) in PyNative but the values alone in a static graph "
                        f"(`[0]` then picks a row, silently): use `.{method}(dim=...)` or `.a{method}(...)`")
            elif method == "expand" and (len(args) > 1 or (len(args) == 1 and isinstance(args[0], (ast.Tuple,
                                                                                                    ast.List)))):
                what = "`.expand(sizes)` does not compile in a static graph: use `ops.broadcast_to(x, shape)`"
            elif method in _DIM_KEYWORD_METHODS and "dim" in keywords:
                what = (f"`.{method}(..., dim=...)` does not compile in a static graph: pass the dimension "
                        f"positionally (or as `axis=`)")
            if what:
                yield node, f"{what} (`{fn.name}` is compiled)"


# modules whose functions compile in a graph (or are host-side constants the graph folds)
_GRAPH_MODULES = ("mindspore", "mindport.runtime", "math", "operator", "typing", "functools", "collections",
                  "itertools", "builtins", "numpy", "torch", "torchvision", "torchaudio")


class GraphThirdPartyCall(Rule):
    """Flags, in `construct` or a @jit function, a call into an imported library other than MindSpore, the
    mindport runtime and the standard library's pure helpers (`math`, `operator`, `functools` ...): a tracker or
    logger (`labml.tracker.debug(...)`), `einops.rearrange`, anything the graph compiler can't see into.
    numpy and torch have their own rules (MS410, MS3xx).

    ## Why is this bad?
    The graph compiler parses every function `construct` calls; a library function written in plain Python
    (try/except, class registries, host I/O) does not compile. Measured on 2.10: einops inside `construct` fails
    ("Unsupported statement 'Try'", its backend lookup), a stubbed tracker fails ("'_Dummy' object is not iterable").

    ## Fix
    Move host-side work (logging, tracking, debugging) out of `construct`. For einops: `mindport convert`
    compiles literal patterns into MindSpore ops; other calls go through `mindport.runtime.einops_backend`
    (`rearrange`/`reduce`/`repeat`, which compile in a graph).
    """

    code = "MS418"
    name = "graph-third-party-call"
    message = "third-party library call in a graph function"
    VALID = (
        "import math\nfrom mindspore import nn, ops\nfrom mindport.runtime import einops_backend as mp_einops\n\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n"
        "        return mp_einops.rearrange(x, 'b c -> c b') * math.sqrt(2.0)\n",
        "from labml import tracker\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        return x * 2\n\ndef log(x):\n    tracker.debug('x', x)\n",
    )
    INVALID = (
        "from einops import rearrange\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return rearrange(x, 'b c -> c b')\n",
        "from labml import tracker\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        tracker.debug('attn', x)\n        return x\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if not isinstance(node, ast.Call):
                continue
            qualname = ctx.resolve(node.func)
            if not qualname or "." not in qualname:
                continue
            top = qualname.split(".", 1)[0]
            if qualname.startswith(_GRAPH_MODULES) or top in ctx.classes or top in ctx.functions:
                continue
            if top == "einops":
                fix = "; compile literal patterns into ops, or call mindport.runtime.einops_backend." + \
                      qualname.rsplit(".", 1)[1]
            else:
                fix = "; move it out of the compiled code"
            yield node, f"`{qualname}()` in `{fn.name}`: the graph compiler can't compile this library{fix}"


class GraphTensorDevice(Rule):
    """Flags reading `.device` of a tensor in `construct` or a @jit function (torch's `device = x.device`, kept for
    `torch.ones(..., device=device)`).

    ## Why is this bad?
    A MindSpore tensor's device is a host string; the graph compiler cannot compile it and falls back to the Python
    interpreter for the statement and for everything computed from its values. Measured on 2.10: after
    `n, device, h = x.shape[-2], x.device, self.heads`, the later `y * h` and reshapes ran interpreted and failed at
    run time ("operands could not be broadcast", "__len__() should return >= 0" in a real conformer block), while
    the same code without `x.device` compiles.

    ## Fix
    Drop the device from graph code: MindSpore places every tensor on the device chosen with `ms.set_device`, so
    `device=` arguments have nothing to say.
    """

    code = "MS420"
    name = "graph-tensor-device"
    message = "tensor .device read in a graph function"
    severity = "error"
    VALID = (
        _CELL + "        n, h = x.shape[-2], self.heads\n        return x.reshape(n, h, -1)\n",
        "import mindspore as ms\n\ndef where(x):\n    return x.device\n",
    )
    INVALID = (
        _CELL + "        n, device, h = x.shape[-2], x.device, self.heads\n        return x.reshape(n, h, -1)\n",
        _JIT + "    device = x.device\n    return x + 1\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            for node in walk_body(fn):
                if (isinstance(node, ast.Attribute) and node.attr == "device" and isinstance(node.ctx, ast.Load)
                        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
                        and ctx.resolve(node.value) is None):
                    yield node, (f"`{ast.unparse(node)}` in `{fn.name}`: a tensor's device is a host value the graph "
                                 f"can't compile (the statement and what it feeds run interpreted); drop device "
                                 f"handling from graph code")
