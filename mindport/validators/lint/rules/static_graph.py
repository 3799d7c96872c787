"""MS4xx: Python that MindSpore's static graph (GRAPH_MODE, @jit) cannot compile, in `construct` of
Cell classes and in @jit functions (static_graph.rst@r2.5.0, verified in 2.10 GRAPH_MODE)."""
from __future__ import annotations

import ast
from typing import ClassVar

from mindport.validators.lint.context import FileContext, cell_instance_names, graph_nodes_of, walk_body
from mindport.validators.lint.rules.base import Rule

_CELL = "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
_JIT = "import mindspore as ms\n\n@ms.jit\ndef step(x):\n"


class GraphNodeRule(Rule):
    """Shared check: graph-function nodes of the listed types."""

    node_types: ClassVar[tuple[type, ...]]
    what: ClassVar[str]

    def check(self, ctx: FileContext):
        types = self.node_types
        for fn, node in graph_nodes_of(ctx):
            if isinstance(node, types):
                yield node, f"{self.what} is not supported in graph mode (`{fn.name}` is compiled)"


class GraphTry(GraphNodeRule):
    """Flags `try`/`except` in `construct` or a @jit function.

    ## Why is this bad?
    Graph mode rejects it: "Unsupported statement 'Try'" (verified in 2.10). The code works in PyNative
    and breaks the day someone switches to GRAPH_MODE for speed.

    ## Fix
    Validate inputs before calling the network, or move the guarded code out of `construct`.
    """

    code = "MS401"
    name = "graph-try"
    message = "try statement in a graph function"
    severity = "error"
    node_types = (ast.Try, getattr(ast, "TryStar", ast.Try))
    what = "`try`"
    VALID = (
        _CELL + "        return x * 2\n",
        "from mindspore import nn\n\ndef load(path):\n    try:\n        return open(path).read()\n"
        "    except OSError:\n        return ''\n",
    )
    INVALID = (
        _CELL + "        try:\n            return x * 2\n        except ValueError:\n            return x\n",
        _JIT + "    try:\n        return x + 1\n    finally:\n        pass\n",
    )


class GraphYield(GraphNodeRule):
    """Flags `yield` / `yield from` in `construct` or a @jit function.

    ## Why is this bad?
    Generators are not supported in static graphs ("Unsupported statement 'Yield'").

    ## Fix
    Return a tuple (or a `CellList` output) instead of yielding.
    """

    code = "MS402"
    name = "graph-yield"
    message = "yield in a graph function"
    severity = "error"
    node_types = (ast.Yield, ast.YieldFrom)
    what = "`yield`"
    VALID = (
        _CELL + "        return (x, x * 2)\n",
        "import mindspore as ms\n\ndef batches(data):\n    yield from data\n",
    )
    INVALID = (
        _CELL + "        for layer in self.layers:\n            yield layer(x)\n",
        _JIT + "    yield from (x, x)\n",
    )


class GraphDel(GraphNodeRule):
    """Flags `del` in `construct` or a @jit function.

    ## Why is this bad?
    `Delete` is an unsupported statement in static graphs.

    ## Fix
    Drop the `del`: graph memory is managed by the compiler. Rebind the name if it must not be reused.
    """

    code = "MS403"
    name = "graph-del"
    message = "del in a graph function"
    severity = "error"
    node_types = (ast.Delete,)
    what = "`del`"
    VALID = (
        _CELL + "        y = x + 1\n        return y\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        tmp = [1]\n        del tmp\n",
    )
    INVALID = (
        _CELL + "        y = x + 1\n        del x\n        return y\n",
        _JIT + "    cache = {'a': x}\n    del cache['a']\n    return x\n",
    )


class GraphSet(GraphNodeRule):
    """Flags set literals and set comprehensions in `construct` or a @jit function.

    ## Why is this bad?
    The static graph has no set type: `Set`/`SetComp` are unsupported syntax.

    ## Fix
    Use a tuple or list (and `in` on it), or compute the set outside `construct`.
    """

    code = "MS404"
    name = "graph-set"
    message = "set literal in a graph function"
    severity = "error"
    node_types = (ast.Set, ast.SetComp)
    what = "a set"
    VALID = (
        _CELL + "        keys = (1, 2)\n        return x if 1 in keys else -x\n",
        "import mindspore as ms\nALLOWED = {'a', 'b'}\n",
    )
    INVALID = (
        _CELL + "        keys = {1, 2}\n        return x\n",
        _JIT + "    seen = {i for i in range(3)}\n    return x\n",
    )


UNSUPPORTED_BUILTINS = frozenset({
    "sorted", "iter", "next", "id", "hash", "open", "input", "eval", "exec", "compile", "globals", "locals",
    "vars", "set", "frozenset", "memoryview", "bytearray", "delattr", "breakpoint", "aiter", "anext", "reversed",
})
# builtins with a graph-safe spelling
_BUILTIN_FIXES = {"reversed": "iterate `seq[::-1]` (a CellList, list or tuple slices in a graph)",
                  "sorted": "sort a configuration list in `__init__`, tensors with `ops.sort`"}


class GraphUnsupportedBuiltin(Rule):
    """Flags calls to builtins the static graph does not support (`sorted`, `iter`, `next`, `id`, `hash`,
    `set`, `open`, `eval`, `reversed`, ...) in `construct` or a @jit function. A local definition or import of the
    same name is respected.

    ## Why is this bad?
    static_graph.rst lists these builtins as unsupported; compilation fails with an unsupported-function
    error. `reversed(self.blocks)` over a CellList is worse: measured on 2.10 it fails ("Unsupported element
    type[unknown]") or, in a real decoder, runs the blocks in the wrong order (a GroupNorm channel mismatch).

    ## Fix
    Compute the value in `__init__` (e.g. sort a configuration list there) or use MindSpore ops
    (`ops.sort`); iterate `self.blocks[::-1]` instead of `reversed(self.blocks)`.
    """

    code = "MS405"
    name = "graph-unsupported-builtin"
    message = "unsupported builtin in a graph function"
    severity = "error"
    VALID = (
        _CELL + "        n = len(self.layers)\n        return x * n\n",
        "from mindspore import nn\n\ndef sorted(x):\n    return x\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        return sorted(x)\n",
    )
    INVALID = (
        _CELL + "        for k in sorted(self.keys):\n            x = x + k\n        return x\n",
        _JIT + "    it = iter((x, x))\n    return next(it)\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if (name in UNSUPPORTED_BUILTINS and name not in ctx.aliases and name not in ctx.functions
                        and name not in ctx.classes):
                    fix = _BUILTIN_FIXES.get(name)
                    yield node, (f"builtin `{name}()` is not supported in graph mode (`{fn.name}` is compiled)"
                                 + (f": {fix}" if fix else ""))


class ConstructFirstParamNotSelf(Rule):
    """Flags a Cell `construct` whose first parameter is not literally named `self`.

    ## Why is this bad?
    The graph compiler treats the first parameter as an input unless it is called `self`: GRAPH_MODE
    fails with "parameters number ... is 2, but ... provided arguments is 1" (verified in 2.10).

    ## Fix
    Name the first parameter `self`.
    """

    code = "MS406"
    name = "construct-first-param-not-self"
    message = "construct's first parameter is not `self`"
    severity = "error"
    VALID = (
        _CELL + "        return x\n",
        "class Helper:\n    def construct(this, x):  # not a Cell\n        return x\n",
    )
    INVALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(net, x):\n        return x\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(*inputs):\n        return inputs\n",
    )

    def check(self, ctx):
        for cls, fn in ctx.cell_methods:
            if fn.name != "construct":
                continue
            if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
                continue
            positional = [*fn.args.posonlyargs, *fn.args.args]
            if not positional or positional[0].arg != "self":
                found = positional[0].arg if positional else "nothing"
                yield fn, f"`{cls.name}.construct` must take `self` first (found {found}); graph mode fails otherwise"


class GraphImport(GraphNodeRule):
    """Flags `import` statements inside `construct` or a @jit function.

    ## Why is this bad?
    `Import` is an unsupported statement in static graphs.

    ## Fix
    Import at module level.
    """

    code = "MS407"
    name = "graph-import"
    message = "import in a graph function"
    severity = "error"
    node_types = (ast.Import, ast.ImportFrom)
    what = "`import`"
    VALID = (
        "from mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return ops.relu(x)\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        import math\n        self.scale = math.sqrt(8)\n",
    )
    INVALID = (
        _CELL + "        from mindspore import ops\n        return ops.relu(x)\n",
        _JIT + "    import math\n    return x * math.pi\n",
    )


class GraphGlobalNonlocal(GraphNodeRule):
    """Flags `global` and `nonlocal` statements inside `construct` or a @jit function.

    ## Why is this bad?
    Both are unsupported in static graphs, and a graph cannot write Python state anyway: the value
    would be fixed at compile time.

    ## Fix
    Keep state in a `Parameter` (updated with `ops.assign`) or pass it as an argument.
    """

    code = "MS408"
    name = "graph-global-nonlocal"
    message = "global/nonlocal in a graph function"
    severity = "error"
    node_types = (ast.Global, ast.Nonlocal)
    what = "`global`/`nonlocal`"
    VALID = (
        "import mindspore as ms\nSTEP = 0\n\ndef bump():\n    global STEP\n    STEP += 1\n",
        _CELL + "        return x + self.offset\n",
    )
    INVALID = (
        "from mindspore import nn\nSTEP = 0\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        global STEP\n        STEP += 1\n        return x\n",
        "import mindspore as ms\n\ndef outer():\n    n = 0\n    @ms.jit\n    def step(x):\n        nonlocal n\n"
        "        return x + n\n    return step\n",
    )


_GRAD = frozenset({"grad", "value_and_grad"})


def _numpy_uses(ctx: FileContext, fn: ast.AST):
    for node in ctx.body_nodes(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "asnumpy":
                yield node, "`.asnumpy()`"
            else:
                qn = ctx.resolve(f)
                if qn and (qn == "numpy" or qn.startswith("numpy.")):
                    yield node, f"numpy `{ast.unparse(f)}()`"


class NumpyInGradPath(Rule):
    """Flags `.asnumpy()` and numpy calls in a function differentiated by `ms.grad`/`ms.value_and_grad`
    (the function passed to it, the functions of this file it calls, and the `construct` of Cells of
    this file it calls or differentiates).

    ## Why is this bad?
    Leaving the graph through numpy cuts the gradient, like `detach()` in torch (model_and_cell.md,
    "Dynamic and Static Graphs"): the parameters before that point get zero gradients, silently.

    ## Fix
    Use MindSpore ops (`ops.*`, Tensor methods) in the differentiated path; if a numpy computation is
    unavoidable, give the Cell a custom `bprop`.
    """

    code = "MS409"
    name = "numpy-in-grad-path"
    message = "numpy/asnumpy in a differentiated function"
    severity = "error"
    VALID = (
        "import mindspore as ms\nimport numpy as np\n\ndef forward(x, y):\n    return ((net(x) - y) ** 2).mean()\n\n"
        "grad_fn = ms.value_and_grad(forward, None, opt.parameters)\nlog = np.mean([1.0])\n",
        "import mindspore as ms\n\ndef forward(x):\n    return net(x).sum()\n\n"
        "def report(loss):\n    print(loss.asnumpy())\n\ngrad_fn = ms.grad(forward)\n",
    )
    INVALID = (
        "import mindspore as ms\nimport numpy as np\n\ndef forward(x, y):\n    p = net(x).asnumpy()\n"
        "    return ms.Tensor(np.mean((p - y) ** 2))\n\ngrad_fn = ms.value_and_grad(forward, None, opt.parameters)\n",
        "import mindspore as ms\nimport numpy as np\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n"
        "    def construct(self, x):\n        return x * 2\n\ndef scale(x):\n    return ms.Tensor(np.tanh(x.asnumpy()))\n\n"
        "def forward(x):\n    return scale(x).sum()\n\nnet = Net()\ngrad_fn = ms.grad(forward)\n",
    )

    def check(self, ctx):
        if not ctx.imports_mindspore:
            return
        roots: list[ast.AST] = []
        instances = None
        for c in (*ctx.by_ms.get("grad", ()), *ctx.by_ms.get("value_and_grad", ())):
            target = ctx.argument(c.node, "fn", 0)
            if isinstance(target, ast.Lambda):
                roots.append(target)
            elif isinstance(target, ast.Name):
                if target.id in ctx.functions:
                    roots.append(ctx.functions[target.id])
                else:
                    instances = cell_instance_names(ctx) if instances is None else instances
                    cls = ctx.cell_classes.get(instances.get(target.id, ""))
                    if cls is not None:
                        roots.extend(s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "construct")
        graph = ctx.graph_function_ids
        visited: set[int] = set()
        for root in roots:
            for fn in self._reached(ctx, root):
                if id(fn) in visited or id(fn) in graph:
                    continue  # construct bodies are MS410's
                visited.add(id(fn))
                for node, what in _numpy_uses(ctx, fn):
                    yield node, f"{what} in a function differentiated by grad/value_and_grad cuts the gradient"

    @staticmethod
    def _reached(ctx: FileContext, root: ast.AST):
        yield root
        for node in ctx.body_nodes(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ctx.functions:
                yield ctx.functions[node.func.id]


class NumpyInConstruct(Rule):
    """Flags numpy calls and `.asnumpy()` inside `construct` or a @jit function.

    ## Why is this bad?
    model_and_cell.md: no third-party libraries such as numpy in `construct`. In graph mode (STRICT) it
    fails to compile; in LAX mode and PyNative it runs on the host, synchronises the device and cuts the
    gradient (like torch `detach()`).

    ## Fix
    Use `ops.*` / Tensor methods, or precompute numpy constants in `__init__`.
    """

    code = "MS410"
    name = "numpy-in-construct"
    message = "numpy in a graph function"
    VALID = (
        "import numpy as np\nimport mindspore as ms\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n"
        "    def __init__(self):\n        super().__init__()\n        self.w = ms.Tensor(np.ones(3, np.float32))\n"
        "    def construct(self, x):\n        return x * self.w\n",
        "import numpy as np\nfrom mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return ops.tanh(x)\n\ndef post(y):\n    return np.argmax(y.asnumpy())\n",
    )
    INVALID = (
        "import numpy as np\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return np.tanh(x)\n",
        _CELL + "        if x.asnumpy().sum() > 0:\n            return x\n        return -x\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            for node, what in _numpy_uses(ctx, fn):
                yield node, f"{what} in `{fn.name}` (graph code): use ops/Tensor methods; it breaks graph mode and gradients"


class CellKwargsInGraph(Rule):
    """Flags Cells constructed with keyword arguments inside `construct` or a @jit function.

    ## Why is this bad?
    static_graph.rst: Cells constructed inside the graph accept positional arguments only; keywords fail
    to compile. Constructing layers per call also re-creates their parameters.

    ## Fix
    Build the Cell once in `__init__` (keywords are fine there) and call it in `construct`.
    """

    code = "MS411"
    name = "cell-kwargs-in-graph"
    message = "Cell constructed with keywords in a graph function"
    severity = "error"
    VALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.sm = nn.Softmax(axis=1)\n    def construct(self, x):\n        return self.sm(x)\n",
        _CELL + "        return nn.Softmax(1)(x)\n",
    )
    INVALID = (
        _CELL + "        return nn.Softmax(axis=1)(x)\n",
        "from mindspore import nn\n\nclass Gate(nn.Cell):\n    def __init__(self, dim=1):\n        super().__init__()\n"
        "    def construct(self, x):\n        return x\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        return Gate(dim=2)(x)\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if isinstance(node, ast.Call) and node.keywords and ctx.is_cell_call(node):
                yield node, "Cells built inside graph code take positional arguments only; build it in __init__"


class GraphUnsupportedSyntax(Rule):
    """Flags other syntax the static graph rejects in `construct`/@jit functions: `match`, the walrus
    operator `:=`, `await`, `async for` and `async with`.

    ## Why is this bad?
    static_graph.rst lists Match, NamedExpr, Await and async statements as unsupported; compilation fails.

    ## Fix
    Rewrite with `if`/`elif` and plain assignments.
    """

    code = "MS412"
    name = "graph-unsupported-syntax"
    message = "unsupported syntax in a graph function"
    severity = "error"
    VALID = (
        _CELL + "        y = x + 1\n        if y is not None:\n            return y\n        return x\n",
        "import mindspore as ms\n\ndef parse(cfg):\n    match cfg:\n        case {'lr': lr}:\n            return lr\n",
    )
    INVALID = (
        _CELL + "        if (y := x + 1) is not None:\n            return y\n        return x\n",
        _CELL + "        match self.mode:\n            case 'a':\n                return x\n        return -x\n",
    )

    _NAMES = {ast.NamedExpr: "the walrus operator `:=`", ast.Await: "`await`", ast.AsyncFor: "`async for`",
              ast.AsyncWith: "`async with`"}

    def check(self, ctx):
        names = dict(self._NAMES)
        if hasattr(ast, "Match"):
            names[ast.Match] = "`match`"
        for fn, node in graph_nodes_of(ctx):
            what = names.get(type(node))
            if what:
                yield node, f"{what} is not supported in graph mode (`{fn.name}` is compiled)"


# --- what converted models hit in GRAPH_MODE ----------------------------------------------------------------------

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


class GraphPossiblyUnbound(Rule):
    """Flags a local variable of `construct` or a @jit function read where it may be unassigned: assigned only in
    some branches of an `if` (or only inside a loop) before the read.

    ## Why is this bad?
    Python only fails if the path without the assignment runs; the graph compiler rejects the function outright,
    even when the condition is a constant such as `self.flag` (measured on 2.10: "The local variable 'x1' is not
    defined in false branch, but defined in true branch", "The local variable 'out' defined in the 'for' loop body
    cannot be used outside of the loop body", "The name 'out' is not defined"). Real models do this: a first
    iteration that seeds a value (`if i == 0: x1 = conv(x)`), a result kept from the last loop iteration, a value
    assigned in one branch and read under the same condition.

    ## Fix
    Assign `name = None` at the start of the function (`--fix` does): the graph compiles, and every path that ran
    in Python gives the same result (measured on the three real models above). Or assign the value the variable
    should have on the other path.
    """

    code = "MS415"
    name = "graph-possibly-unbound"
    message = "variable may be unassigned here in a graph function"
    severity = "error"
    fixable = True
    FIXES = (
        (_CELL + "        for layer in self.layers:\n            out = layer(x)\n        return out\n",
         _CELL + "        out = None\n        for layer in self.layers:\n            out = layer(x)\n        return out\n"),
        ("from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        \"\"\"Doc.\"\"\"\n"
         "        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n",
         "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        \"\"\"Doc.\"\"\"\n"
         "        y = None\n        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n"),
    )
    VALID = (
        _CELL + "        out = x\n        for layer in self.layers:\n            out = layer(out)\n        return out\n",
        _CELL + "        if self.flag:\n            y = x * 2\n        else:\n            y = x\n        return y\n",
    )
    INVALID = (
        _CELL + "        for layer in self.layers:\n            out = layer(x)\n        return out\n",
        _CELL + "        for i in range(2):\n            if i == 0:\n                h = self.conv(x)\n"
        "            h = self.conv(x + h)\n        return h\n",
        _CELL + "        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            yield from _UnboundChecker(fn).run()


class _UnboundChecker:
    """Definite assignment over one function body (straight-line code, if/else, loops, with)."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.fn = fn
        args = fn.args
        self.params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        self.params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        self.locals = {n.id for n in walk_body(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.locals -= self.params
        self.reported: set[str] = set()
        self.findings: list[tuple[ast.AST, str]] = []
        self.loop_only: set[str] = set()  # assigned only inside a loop body so far

    def run(self):
        self.block(self.fn.body, set(self.params))
        return self.findings

    def uses(self, node: ast.AST | None, defined: set[str]) -> None:
        if node is None:
            return
        bound_inside: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                bound_inside |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                if isinstance(sub, ast.Lambda):
                    bound_inside |= {a.arg for a in sub.args.args}
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in self.locals
                    and sub.id not in defined and sub.id not in bound_inside and sub.id not in self.reported):
                self.reported.add(sub.id)
                where = "only inside a loop" if sub.id in self.loop_only else "only on some paths"
                self.findings.append((sub, f"`{sub.id}` may be unassigned here: it is assigned {where} before this "
                                           f"read; graph mode rejects `{self.fn.name}` (assign `{sub.id} = None` "
                                           f"at its start)"))

    @staticmethod
    def targets(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def block(self, body: list[ast.stmt], defined: set[str]) -> set[str] | None:
        """The names definitely assigned after ``body``; None when it never falls through."""
        defined = set(defined)
        for stmt in body:
            result = self.stmt(stmt, defined)
            if result is None:
                return None
            defined = result
        return defined

    def stmt(self, stmt: ast.stmt, defined: set[str]) -> set[str] | None:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            self.uses(getattr(stmt, "value", None) or getattr(stmt, "exc", None), defined)
            return None
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return None
        if isinstance(stmt, ast.Assign):
            self.uses(stmt.value, defined)
            for t in stmt.targets:
                self.uses_in_target(t, defined)
            return defined | set().union(*(self.targets(t) for t in stmt.targets))
        if isinstance(stmt, ast.AugAssign):
            self.uses(stmt.value, defined)
            if isinstance(stmt.target, ast.Name):
                self.uses(ast.Name(stmt.target.id, ast.Load(), lineno=stmt.lineno, col_offset=stmt.col_offset),
                          defined)
            return defined | self.targets(stmt.target)
        if isinstance(stmt, ast.AnnAssign):
            self.uses(stmt.value, defined)
            return defined | (self.targets(stmt.target) if stmt.value is not None else set())
        if isinstance(stmt, ast.If):
            self.uses(stmt.test, defined)
            branches = [self.block(stmt.body, defined), self.block(stmt.orelse, defined)]
            falling = [b for b in branches if b is not None]
            return set.intersection(*falling) if falling else None
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.uses(stmt.iter, defined)
            inner = self.targets(stmt.target)
            assigned = {n for s in stmt.body for n in self.targets(s)} - defined
            self.loop_only |= assigned
            self.block(stmt.body, defined | inner)
            after = self.block(stmt.orelse, defined)
            return defined if after is None else after
        if isinstance(stmt, ast.While):
            self.uses(stmt.test, defined)
            self.loop_only |= {n for s in stmt.body for n in self.targets(s)} - defined
            self.block(stmt.body, defined)
            after = self.block(stmt.orelse, defined)
            return defined if after is None else after
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.uses(item.context_expr, defined)
                if item.optional_vars is not None:
                    defined = defined | self.targets(item.optional_vars)
            return self.block(stmt.body, defined)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return defined | {stmt.name}
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return defined | {(a.asname or a.name).split(".")[0] for a in stmt.names}
        if isinstance(stmt, ast.Try):
            after = self.block(stmt.body, defined)
            return defined if after is None else after
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.uses(child, defined)
        return defined

    def uses_in_target(self, target: ast.AST, defined: set[str]) -> None:
        """`a[i] = v`, `a.b = v`: the container and the index are read."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.uses(target.value, defined)
            if isinstance(target, ast.Subscript):
                self.uses(target.slice, defined)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.uses_in_target(elt, defined)


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


def _free_names(lam: ast.Lambda) -> set[str]:
    params = {a.arg for a in (*lam.args.posonlyargs, *lam.args.args, *lam.args.kwonlyargs)}
    params |= {a.arg for a in (lam.args.vararg, lam.args.kwarg) if a is not None}
    return {n.id for n in ast.walk(lam.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - params


class GraphMapClosure(Rule):
    """Flags `map(lambda ...: ..., seq)` in `construct` or a @jit function when the lambda reads a local of the
    function (`h`, `self`): a closure.

    ## Why is this bad?
    The graph compiler rejects it: "The Map operator don't support Closure with free variable yet" (measured on
    2.10, in the conformer and Perceiver attention of real models: `q, k, v = map(lambda t: rearrange(t, ...,
    h=h), (q, k, v))`). A lambda reading only module-level names compiles.

    ## Fix
    A list comprehension, which compiles and unpacks the same way: `q, k, v = [f(t) for t in (q, k, v)]`
    (`--fix` rewrites a one-sequence `map(lambda ...)`).
    """

    code = "MS417"
    name = "graph-map-closure"
    message = "map over a closure in a graph function"
    severity = "error"
    fixable = True
    VALID = (
        _CELL + "        h = self.heads\n        q, k = [t.reshape(t.shape[0], h, -1) for t in (x, x)]\n        return q + k\n",
        "from mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        a, b = map(lambda t: ops.relu(t), (x, x))\n        return a + b\n",
    )
    INVALID = (
        _CELL + "        h = self.heads\n        q, k = map(lambda t: t.reshape(t.shape[0], h, -1), (x, x))\n        return q + k\n",
        _CELL + "        return tuple(map(lambda t: self.proj(t), (x, x)))\n",
    )
    FIXES = (
        (_CELL + "        h = self.heads\n        q, k = map(lambda t: t.reshape(t.shape[0], h, -1), (x, x))\n        return q + k\n",
         _CELL + "        h = self.heads\n        q, k = [t.reshape(t.shape[0], h, -1) for t in (x, x)]\n        return q + k\n"),
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map"
                    and "map" not in ctx.aliases and "map" not in ctx.functions and node.args
                    and isinstance(node.args[0], ast.Lambda)):
                continue
            lam = node.args[0]
            args = fn.args
            local = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            local |= {n.id for n in walk_body(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            free = sorted(_free_names(lam) & local)
            if not free:
                continue
            simple = (len(node.args) == 2 and not node.keywords and len(lam.args.args) == 1
                      and not lam.args.posonlyargs and not lam.args.kwonlyargs and not lam.args.vararg
                      and not lam.args.kwarg and not lam.args.defaults)
            yield node, (f"`map(lambda ...)` reads {', '.join(f'`{n}`' for n in free)} from `{fn.name}`: graph mode "
                         f"rejects a map over a closure; use a list comprehension"), simple


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


class GraphListPop(Rule):
    """Flags `list.pop()` in `construct` or a @jit function.

    ## Why is this bad?
    Under the default syntax level (LAX), an in-place `pop` of a Python list inside the loops of `construct` runs
    through MindSpore's interpreted fallback; measured on 2.10 with a real DDPM U-Net (skip connections pushed by
    the down path and popped by the up path), the compiled network fails at run time ("index 2 is out of bounds
    for dimension with size 2") while the same code compiles with the STRICT syntax level and with `h[-1]` /
    `h = h[:-1]`.

    ## Fix
    Read the last item and drop it by slicing: `s = h[-1]` then `h = h[:-1]`.
    """

    code = "MS419"
    name = "graph-list-pop"
    message = "list.pop() in a graph function"
    VALID = (
        _CELL + "        h = [x]\n        for m in self.down:\n            x = m(x)\n            h.append(x)\n"
        "        for m in self.up:\n            s = h[-1]\n            h = h[:-1]\n            x = m(x + s)\n        return x\n",
        "from mindspore import nn\n\ndef host(items):\n    return items.pop()\n",
    )
    INVALID = (
        _CELL + "        h = [x]\n        for m in self.down:\n            x = m(x)\n            h.append(x)\n"
        "        for m in self.up:\n            x = m(x + h.pop())\n        return x\n",
        _JIT + "    stack = [x, x * 2]\n    top = stack.pop()\n    return top + stack[0]\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop"
                    and isinstance(node.func.value, ast.Name) and not node.args and not node.keywords
                    and ctx.resolve(node.func.value) is None):
                yield node, (f"`{node.func.value.id}.pop()` in `{fn.name}`: in-place list ops in graph loops run "
                             f"interpreted and can fail at run time; use `{node.func.value.id}[-1]` then "
                             f"`{node.func.value.id} = {node.func.value.id}[:-1]`")


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
