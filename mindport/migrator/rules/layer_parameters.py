"""The converter rule LayerParameterNameTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/layer_parameters.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class LayerParameterNameTransform(Rule):
    """``self.emb.weight`` -> ``self.emb.embedding_table`` when ``self.emb`` holds a torch layer whose weight rule
    renames the parameter (Embedding, BatchNorm, LayerNorm, PReLU …): tied weights
    (``self.head.weight = self.emb.weight``) and direct parameter use keep working after conversion.

    The same for a local name bound to such a layer (``bn = nn.BatchNorm2d(d)`` then ``nn.init.zeros_(bn.weight)``)
    and for a literal index of a ``Sequential`` built from a literal argument list (``net = nn.Sequential(emb, *blocks,
    head)`` then ``net[-1].weight = net[0].weight``: the index counts from the start before a ``*`` argument and from
    the end after it), and a key of a ``ModuleDict`` built from a literal dict (``self.transformer.wte.weight`` for
    ``ModuleDict(dict(wte=nn.Embedding(...)))``), and a layer held by an instance of a class of the same file
    (``self.token_emb.emb.weight`` where ``self.token_emb = TokenEmbedding(...)`` holds ``self.emb = nn.Embedding``).
    A name bound to anything else in the same function is left alone."""

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class LM(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.emb = nn.Embedding(100, 16)
                        self.head = nn.Linear(16, 100, bias=False)
                        self.head.weight = self.emb.weight
            """,
            after="""
                import mindspore as ms
                from mindspore import nn


                class LM(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.emb = nn.Embedding(vocab_size=100, embedding_size=16, embedding_table=ms.common.initializer.Normal(sigma=1.0))
                        self.head = nn.Dense(in_channels=16, out_channels=100, has_bias=False)
                        self.head.weight = self.emb.embedding_table
            """,
            note="Tied weights: an Embedding's weight is embedding_table in MindSpore.",
        ),
        Example(
            before="""
                import torch.nn as nn


                def lm(blocks):
                    net = nn.Sequential(nn.Embedding(100, 16), *blocks, nn.Linear(16, 100, bias=False))
                    net[-1].weight = net[0].weight
                    return net
            """,
            after="""
                import mindspore as ms
                from mindspore import nn


                def lm(blocks):
                    net = nn.SequentialCell(nn.Embedding(vocab_size=100, embedding_size=16, embedding_table=ms.common.initializer.Normal(sigma=1.0)), *blocks, nn.Dense(in_channels=16, out_channels=100, has_bias=False))
                    net[-1].weight = net[0].embedding_table
                    return net
            """,
            note="A literal index of a Sequential built in place: net[0] is the Embedding.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[dict] = []
        self._functions: list[dict] = []
        self._file_classes: set[str] = set()  # the file's top-level classes
        self._class_layers: dict[str, dict] = {}  # class -> its self.X layer bindings (self.emb.emb.weight)

    def visit_Module(self, node: cst.Module) -> None:
        self._file_classes = {stmt.name.value for stmt in node.body if isinstance(stmt, cst.ClassDef)}
        self._class_layers = {stmt.name.value: self._layer_bindings(_assignments(stmt.body), local=False)
                              for stmt in node.body if isinstance(stmt, cst.ClassDef)}
        self._functions.append(self._layer_bindings(_assignments(node), local=True))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._layer_bindings(_assignments(node.body), local=False))

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(self._layer_bindings(_assignments(node.body), local=True))

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return updated_node

    def _renames(self, value: cst.BaseExpression) -> dict[str, str] | None:
        """{torch leaf: MindSpore leaf} of a torch layer constructor call whose weight rule renames a parameter."""
        if not isinstance(value, cst.Call):
            return None
        qual = self.scope.resolve_torch(value.func)
        entry = self.ctx.registry.lookup(qual) if qual else None
        if entry is not None and entry.kind == "layer":
            renames = {k: v for k, v in entry.weights.items() if v and v != k and "." not in v}
            attributes = entry.attributes if self.ctx.options.target == "nn" else {}  # mint keeps torch's names
            return {**attributes, **renames} or None
        return None

    def _sequential(self, value: cst.BaseExpression) -> dict[int, dict[str, str]] | None:
        """A ``Sequential(a, b, *rest, c)`` call -> {index: renames} for its literal positions (negative after a
        ``*`` argument)."""
        if not (isinstance(value, cst.Call) and self.scope.resolve_torch(value.func) == "torch.nn.Sequential"):
            return None
        args = list(value.args)
        if any(a.keyword is not None or a.star == "**" for a in args):
            return None
        stars = [i for i, a in enumerate(args) if a.star]
        first, last = (stars[0], stars[-1]) if stars else (len(args), -1)
        indices: dict[int, dict[str, str]] = {}
        for i, arg in enumerate(args):
            renames = None if arg.star else self._renames(arg.value)
            if renames is None:
                continue
            if i < first:
                indices[i] = renames
            if i > last:
                indices[i - len(args)] = renames
        return indices or None

    def _module_dict(self, value: cst.BaseExpression) -> dict[str, dict[str, str]] | None:
        """A ``ModuleDict(dict(k=layer, ...))`` / ``ModuleDict({'k': layer})`` call -> {key: renames}."""
        if not (isinstance(value, cst.Call) and self.scope.resolve_torch(value.func) == "torch.nn.ModuleDict"
                and len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star):
            return None
        items = value.args[0].value
        pairs = []
        if isinstance(items, cst.Call) and isinstance(items.func, cst.Name) and items.func.value == "dict":
            pairs = [(a.keyword.value, a.value) for a in items.args if a.keyword is not None]
        elif isinstance(items, cst.Dict):
            pairs = [(e.key.evaluated_value, e.value) for e in items.elements
                     if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
        keys = {key: renames for key, layer in pairs if (renames := self._renames(layer))}
        return keys or None

    def _file_class(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        """``TokenEmbedding(...)``, a class of this file: ("class", its name), read through its own bindings."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self._file_classes:
            return ("class", value.func.value)
        return None

    def _chain_renames(self, chain: list[str]) -> dict[str, str] | None:
        """``self.visual.attnpool.c_proj``: each step an attribute of an instance of a class of this file (or a
        ModuleDict's key), the last one a layer."""
        bound = self._classes[-1].get(chain[0]) if self._classes else None
        for name in chain[1:]:
            if isinstance(bound, tuple):
                bound = self._class_layers.get(bound[1], {}).get(name)
            elif isinstance(bound, dict) and all(isinstance(v, dict) for v in bound.values()):
                bound = bound.get(name)
            else:
                return None
        return bound if isinstance(bound, dict) and bound and all(isinstance(v, str) for v in bound.values()) \
            else None

    def _layer_bindings(self, assigns, local: bool) -> dict:
        """``X = <torch layer>(...)`` (``self.X`` in a class, a plain name in a function) -> {X: renames}, and
        ``X = Sequential(...)`` -> {X: {index: renames}}. A name bound otherwise anywhere in the block is dropped."""
        found: dict[str, object] = {}
        for assign in assigns:
            for target in assign.targets:
                target = target.target
                if local:
                    if not isinstance(target, cst.Name):
                        continue
                    name = target.value
                elif (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == "self"):
                    name = target.attr.value
                else:
                    continue
                value = (self._renames(assign.value) or self._sequential(assign.value)
                         or self._module_dict(assign.value) or self._file_class(assign.value)) \
                    if len(assign.targets) == 1 else None
                if name in found and found[name] != value:
                    value = None
                found[name] = value
        return {k: v for k, v in found.items() if v is not None}

    def _owner_renames(self, owner: cst.BaseExpression) -> dict[str, str] | None:
        chain = _self_chain(owner)
        if chain is not None and len(chain) > 2:
            return self._chain_renames(chain)
        index = None
        if isinstance(owner, cst.Subscript) and len(owner.slice) == 1 \
                and isinstance(owner.slice[0].slice, cst.Index):
            key = owner.slice[0].slice.value
            index = key.evaluated_value if isinstance(key, cst.SimpleString) else _int_literal(key)
            if index is None:
                return None
            owner = owner.value
        elif isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Attribute) \
                and isinstance(owner.value.value, cst.Name) and owner.value.value.value == "self":
            index, owner = owner.attr.value, owner.value  # self.transformer.wte: a ModuleDict's key
        bound = None
        if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self":
            bound = self._classes[-1].get(owner.attr.value) if self._classes else None
        elif isinstance(owner, cst.Name) and self._functions:
            bound = self._functions[-1].get(owner.value)
        if isinstance(bound, tuple):  # an instance of a class of this file: its own self.<index> binding
            inner = self._class_layers.get(bound[1], {}).get(index) if index is not None else None
            return inner if isinstance(inner, dict) and all(isinstance(v, str) for v in inner.values()) else None
        if not bound:
            return None
        is_container = all(isinstance(v, dict) for v in bound.values())  # {index or key: renames}
        if index is None:
            return None if is_container else bound
        return bound.get(index) if is_container else None

    def leave_Attribute(self, original_node, updated_node):
        renames = self._owner_renames(original_node.value)
        leaf = renames.get(original_node.attr.value) if renames else None
        if leaf:
            self.ctx.converted_sites += 1
            return updated_node.with_changes(attr=cst.Name(leaf))
        return updated_node


def _self_chain(expr: cst.BaseExpression) -> list[str] | None:
    """``self.visual.attnpool.c_proj`` -> ["visual", "attnpool", "c_proj"]; None when not rooted at ``self``."""
    names = []
    while isinstance(expr, cst.Attribute):
        names.append(expr.attr.value)
        expr = expr.value
    return names[::-1] if isinstance(expr, cst.Name) and expr.value == "self" else None


def _int_literal(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
            and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value)
    return None


def _assignments(block):
    """Every ``Assign`` statement in a block, nested blocks included (statements only, no expressions)."""
    body = block.body if isinstance(block, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from (small for small in stmt.body if isinstance(small, cst.Assign))
        elif isinstance(stmt, cst.Assign):
            yield stmt
        else:
            for part in ("body", "orelse", "finalbody"):
                child = getattr(stmt, part, None)
                while isinstance(child, (cst.If, cst.Else)):  # elif chains
                    yield from _assignments(child.body)
                    child = getattr(child, "orelse", None)
                if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    yield from _assignments(child)
                elif child is not None and hasattr(child, "body"):
                    yield from _assignments(child.body)
            for handler in getattr(stmt, "handlers", ()):
                yield from _assignments(handler.body)
            for case in getattr(stmt, "cases", ()):
                yield from _assignments(case.body)
