"""MS101-MS102: the first two "Considerations for MindSpore Network Authoring" of the migration guide
(model_development.rst@r2.5.0): what flows through the data pipeline and through a graph (data-dependent shapes).
The other five are in pitfalls.py."""
from __future__ import annotations

import ast

from mindport.validators.lint.context import FileContext
from mindport.validators.lint.rules.base import Rule

_SOURCE_METHODS = ("__getitem__", "__iter__", "__next__", "__call__")


def _short(qualname: str | None, node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse is total on parsed trees
        return qualname or "?"


class MsOpInDatasetPipeline(Rule):
    """Flags MindSpore operators, layers and `Tensor(...)` used inside a dataset pipeline: the source of a
    `GeneratorDataset`, the `operations` of `.map(...)`, or a `.batch(per_batch_map=...)` function. Lambdas,
    functions of the same file (and the functions they call, one level deep) and the
    `__getitem__`/`__iter__`/`__next__`/`__call__` methods of source classes are followed.

    ## Why is this bad?
    The migration guide: "ops or nn operators of MindSpore cannot be used during dataset loading and data
    augmentation". Pipelines run in worker threads or processes; with `python_multiprocessing=True` a
    MindSpore op in a `map` function hangs once the parent process has run a MindSpore op (verified on
    2.10 CPU). Iterator output must also be numpy, not Tensors.

    ## Fix
    Use numpy, PIL, cv2 or `mindspore.dataset.vision`/`transforms` operations in the pipeline, and move
    MindSpore ops into the network's `construct`.
    """

    code = "MS101"
    name = "ms-op-in-dataset-pipeline"
    message = "MindSpore operator inside a dataset pipeline"
    severity = "error"
    VALID = (
        "import numpy as np\nimport mindspore.dataset as ds\n\n"
        "def norm(x):\n    return (x / 255.0).astype(np.float32)\n\n"
        "data = ds.GeneratorDataset(source, column_names=['image'])\n"
        "data = data.map(operations=norm, input_columns=['image'])\n",
        "import numpy as np\nfrom mindspore import dataset as ds, ops\n\n"
        "class Source:\n    def __getitem__(self, i):\n        return np.ones(3, np.float32)\n"
        "    def __len__(self):\n        return 4\n\n"
        "data = ds.GeneratorDataset(Source(), column_names=['x'])\n"
        "data = data.batch(2, per_batch_map=lambda x, info: (np.stack(x),))\n"
        "y = ops.relu(ms_tensor)  # outside the pipeline: fine\n",
    )
    INVALID = (
        "import mindspore.dataset as ds\nfrom mindspore import ops, Tensor\n\n"
        "data = ds.GeneratorDataset(source, column_names=['x'])\n"
        "data = data.map(operations=lambda x: ops.relu(Tensor(x)), input_columns=['x'])\n",
        "import numpy as np\nimport mindspore as ms\nimport mindspore.dataset as ds\n\n"
        "class Source:\n    def __getitem__(self, i):\n        return ms.ops.ones((3,), ms.float32)\n"
        "    def __len__(self):\n        return 4\n\n"
        "data = ds.GeneratorDataset(source=Source(), column_names=['x'])\n",
        "import mindspore.dataset as ds\nfrom mindspore import ops\n\n"
        "def helper(x):\n    return ops.clip_by_value(x, 0, 1)\n\n"
        "def pad_batch(cols, info):\n    return (helper(cols),)\n\n"
        "data = data.batch(8, per_batch_map=pad_batch, input_columns=['x'])\n",
    )

    def check(self, ctx: FileContext):
        if not ctx.imports_mindspore:
            return
        targets: list[tuple[ast.AST, str]] = []
        for c in ctx.by_ms.get("GeneratorDataset", ()):
            src = ctx.argument(c.node, "source", 0)
            if src is not None:
                targets.append((src, "GeneratorDataset source"))
        for c in ctx.by_attr.get("map", ()):
            node = c.node
            if c.qualname is None and any(ctx.keyword(node, k) for k in ("operations", "input_columns", "output_columns")):
                ops_arg = ctx.argument(node, "operations", 0)
                if ops_arg is not None:
                    targets.append((ops_arg, "dataset `.map` operation"))
        for c in ctx.by_attr.get("batch", ()):
            k = ctx.keyword(c.node, "per_batch_map")
            if c.qualname is None and k is not None:
                targets.append((k.value, "`per_batch_map` function"))
        seen: set[int] = set()
        for expr, where in targets:
            for bad in self._offenders(ctx, expr, depth=0, visited=set()):
                if id(bad) not in seen:
                    seen.add(id(bad))
                    name = _short(None, bad)
                    yield bad, (
                        f"MindSpore operator `{name}` inside a {where}; use numpy/PIL/cv2 or "
                        "mindspore.dataset transforms there (MindSpore ops can hang pipeline workers)"
                    )

    def _offenders(self, ctx: FileContext, expr: ast.AST, depth: int, visited: set[int]):
        if isinstance(expr, (ast.List, ast.Tuple)):
            for e in expr.elts:
                yield from self._offenders(ctx, e, depth, visited)
            return
        if isinstance(expr, ast.Lambda):
            yield from self._scan(ctx, [expr.body], depth, visited)
            return
        if isinstance(expr, ast.Call):
            if ctx.is_ms_op(ctx.resolve(expr.func)):
                yield expr  # e.g. operations=[ops.ReLU()]
                return
            if isinstance(expr.func, ast.Name) and expr.func.id in ctx.classes:
                yield from self._scan_class(ctx, ctx.classes[expr.func.id], depth, visited)
            return
        if isinstance(expr, (ast.Name, ast.Attribute)):
            if ctx.is_ms_op(ctx.resolve(expr)):
                yield expr
                return
            if isinstance(expr, ast.Name):
                if expr.id in ctx.functions:
                    yield from self._scan_function(ctx, ctx.functions[expr.id], depth, visited)
                elif expr.id in ctx.classes:
                    yield from self._scan_class(ctx, ctx.classes[expr.id], depth, visited)

    def _scan_class(self, ctx, cls: ast.ClassDef, depth, visited):
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name in _SOURCE_METHODS:
                yield from self._scan_function(ctx, stmt, depth, visited)

    def _scan_function(self, ctx, fn, depth, visited):
        if id(fn) in visited:
            return
        visited.add(id(fn))
        yield from self._scan(ctx, fn.body, depth, visited)

    def _scan(self, ctx: FileContext, body, depth, visited):
        for stmt in body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                qn = ctx.resolve(node.func)
                if ctx.is_ms_op(qn) or (
                    isinstance(node.func, ast.Name) and node.func.id in ctx.cell_classes
                ):
                    yield node
                elif depth == 0 and isinstance(node.func, ast.Name) and node.func.id in ctx.functions:
                    yield from self._scan_function(ctx, ctx.functions[node.func.id], depth + 1, visited)


# ---- MS102 ------------------------------------------------------------------------------------------

_DYNAMIC_CALLS = frozenset({"masked_select", "nonzero", "unique", "unique_consecutive", "MaskedSelect",
                            "NonZero", "Unique", "argwhere"})
_STATIC_CALLS = frozenset({"len", "int", "min", "max", "abs", "range", "tuple", "shape", "Shape", "rank"})


class _Statics:
    """Which names of a graph function hold compile-time constants (literals, shapes, self attributes)."""

    def __init__(self, fn: ast.FunctionDef, is_method: bool, nodes: list[ast.AST]):
        args = fn.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if is_method and params:
            params = params[1:]
        if args.vararg:
            params.append(args.vararg.arg)
        self.dynamic: set[str] = set(params)
        for node in nodes:
            if isinstance(node, ast.Assign):
                targets = [n for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                static = self.is_static(node.value)
                for t in targets:
                    if not static:
                        self.dynamic.add(t.id)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                if node.value is None or not self.is_static(node.value):
                    self.dynamic.add(node.target.id)
            elif isinstance(node, ast.For):
                if not self.is_static(node.iter):
                    for n in ast.walk(node.target):
                        if isinstance(n, ast.Name):
                            self.dynamic.add(n.id)

    def is_static(self, e: ast.AST | None) -> bool:
        if e is None:
            return True
        t = type(e)
        if t is ast.Constant:
            return True
        if t is ast.Name:
            return e.id not in self.dynamic
        if t is ast.Attribute:
            if e.attr in ("shape", "ndim", "dtype"):
                return True
            base = e.value
            while isinstance(base, ast.Attribute):
                base = base.value
            return isinstance(base, ast.Name) and (base.id == "self" or base.id not in self.dynamic)
        if t is ast.Subscript:
            return self.is_static(e.value) and self.is_static(e.slice)
        if t is ast.Slice:
            return self.is_static(e.lower) and self.is_static(e.upper) and self.is_static(e.step)
        if t in (ast.Tuple, ast.List):
            return all(self.is_static(x) for x in e.elts)
        if t is ast.BinOp:
            return self.is_static(e.left) and self.is_static(e.right)
        if t is ast.UnaryOp:
            return self.is_static(e.operand)
        if t is ast.IfExp:
            return self.is_static(e.test) and self.is_static(e.body) and self.is_static(e.orelse)
        if t is ast.Compare:
            return self.is_static(e.left) and all(self.is_static(x) for x in e.comparators)
        if t is ast.BoolOp:
            return all(self.is_static(x) for x in e.values)
        if t is ast.Call:
            f = e.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("shape", "Shape", "rank") or (isinstance(f, ast.Call) and self.is_static(f)):
                return True
            return name in _STATIC_CALLS and all(self.is_static(a) for a in e.args)
        return False


def _literal_slice(s: ast.Slice) -> bool:
    return all(b is None or b.__class__ is ast.Constant for b in (s.lower, s.upper, s.step))


class DynamicShapeInGraph(Rule):
    """Flags causes of dynamic shape in `construct` and `@jit` functions: slices whose bound is a
    runtime value (`x[:k]` with `k` an argument or computed from tensor values), boolean-mask indexing
    (`x[x > 0]`), and shape-changing ops (`masked_select`, `nonzero`, `unique`, one-argument `where`,
    `topk` with a variable `k`).

    Bounds built from literals, `self` attributes, `.shape`, `len()` and loop counters over such ranges
    are compile-time constants and are not flagged.

    ## Why is this bad?
    The migration guide lists "slicing with a variable subscript" as a dynamic-shape cause. In graph mode
    a dynamic shape forces recompilation or a slow dynamic-shape path, and on Ascend some ops have no
    dynamic-shape kernel.

    ## Fix
    Pad or mask to a fixed (or bucketed) shape: slice with a constant maximum and multiply by a mask,
    use a fixed `k` plus a mask for `topk`, and `ops.select` instead of boolean indexing.
    """

    code = "MS102"
    name = "dynamic-shape-in-graph"
    message = "dynamic shape in a graph function"
    VALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.k = 4\n    def construct(self, x):\n        n = x.shape[1] // 2\n"
        "        return x[:, :n] + x[:, : self.k].sum()\n",
        "from mindspore import nn, ops\n\nclass Head(nn.Cell):\n    def construct(self, x, mask):\n"
        "        for i in range(3):\n            x = x[i:]\n        return ops.select(mask, x, ops.zeros_like(x))\n",
        "from mindspore import nn\n\nclass Fold(nn.Cell):\n    def construct(self, x, axis):\n"
        "        pos = axis if axis < x.ndim else 1\n        return x.reshape(x.shape[:pos] + (-1,))\n",
    )
    INVALID = (
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x, seq_len):\n"
        "        return x[:, :seq_len]\n",
        "import mindspore as ms\n\n@ms.jit\ndef positives(x):\n    return x[x > 0]\n",
        "from mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        k = ops.argmax(x)\n        return ops.masked_select(x, x > 0), x[:k]\n",
        "from mindspore import nn\n\nclass Pos(nn.Cell):\n    def construct(self, x, n):\n"
        "        return x + self.table[:n]\n",
    )

    def check(self, ctx: FileContext):
        methods = {id(m) for _, m in ctx.cell_methods}
        for fn in ctx.graph_functions:
            nodes = ctx.body_nodes(fn)
            statics = None  # built on first need: most subscripts have literal bounds
            for node in nodes:
                if node.__class__ is ast.Subscript:
                    sl = node.slice
                    parts = sl.elts if sl.__class__ is ast.Tuple else (sl,)
                    suspicious = [p for p in parts if (p.__class__ is ast.Slice and not _literal_slice(p))
                                  or p.__class__ is ast.Compare]
                    if not suspicious:
                        continue
                    if statics is None:
                        statics = _Statics(fn, id(fn) in methods, nodes)
                    value = node.value
                    if statics.is_static(value) and not (
                        isinstance(value, ast.Attribute) and value.attr not in ("shape", "ndim")
                    ):
                        continue  # slicing a shape tuple or a constant is resolved at compile time
                    for p in suspicious:
                        if isinstance(p, ast.Slice) and not statics.is_static(p):
                            yield node, "slice with a runtime bound makes the shape dynamic; slice to a fixed size and mask"
                            break
                        if isinstance(p, ast.Compare):
                            yield node, "boolean-mask indexing makes the shape dynamic; use ops.select with a mask"
                            break
                elif isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                    qn = ctx.resolve(f)
                    ms_or_method = qn is None and isinstance(f, ast.Attribute) or (qn or "").startswith("mindspore.")
                    if not ms_or_method:
                        continue
                    if name in _DYNAMIC_CALLS:
                        yield node, f"`{name}` returns a data-dependent shape; use a fixed-size result plus a mask"
                    elif name == "where" and qn and len(node.args) == 1 and not node.keywords:
                        yield node, "one-argument `where` returns a data-dependent shape; use the three-argument form"
                    elif name == "topk":
                        k = ctx.argument(node, "k", 1 if qn else 0)
                        if statics is None:
                            statics = _Statics(fn, id(fn) in methods, nodes)
                        if k is not None and not statics.is_static(k):
                            yield node, "`topk` with a runtime `k` makes the shape dynamic; use a fixed maximum k"


# ---- MS103 ------------------------------------------------------------------------------------------
