"""MS4xx: Python that MindSpore's static graph (GRAPH_MODE, @jit) cannot compile, in `construct` of
Cell classes and in @jit functions (static_graph.rst@r2.5.0, verified in 2.10 GRAPH_MODE). What converted models hit
in GRAPH_MODE beyond that is in graph_calls.py and graph_python.py."""
from __future__ import annotations

import ast
from typing import ClassVar

from mindport.validators.lint.context import FileContext, cell_instance_names, graph_nodes_of
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
