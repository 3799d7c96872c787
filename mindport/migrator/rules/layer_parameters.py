"""The converter rule LayerParameterNameTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/layer_parameters.md shows both."""
from __future__ import annotations

import functools

import libcst as cst

from mindport.mappings.surface import attribute_paths, load_shadowed, load_surface, load_writes
from mindport.migrator.native_facts import list_locals
from mindport.migrator.scopes import is_static
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import int_literal
from mindport.migrator.walk import read


class LayerParameterNameTransform(Rule):
    """``self.emb.weight`` -> ``self.emb.embedding_table`` when ``self.emb`` holds a torch layer whose weight rule
    renames the parameter (Embedding, BatchNorm, LayerNorm, PReLU …): tied weights
    (``self.head.weight = self.emb.weight``) and direct parameter use keep working after conversion.

    The same for a local name bound to such a layer (``bn = nn.BatchNorm2d(d)`` then ``nn.init.zeros_(bn.weight)``)
    and for a literal index of a ``Sequential`` built from a literal argument list (``net = nn.Sequential(emb, *blocks,
    head)`` then ``net[-1].weight = net[0].weight``: the index counts from the start before a ``*`` argument and from
    the end after it), and a key of a ``ModuleDict`` built from a literal dict (``self.transformer.wte.weight`` for
    ``ModuleDict(dict(wte=nn.Embedding(...)))``), any index of a ``ModuleList`` built from a comprehension
    (``self.embs = nn.ModuleList([nn.Embedding(1, d) for _ in range(4)])`` then ``self.embs[i].weight``) and a
    literal index of one built from a literal list, and a layer held by an instance of a class of the same file
    (``self.token_emb.emb.weight`` where ``self.token_emb = TokenEmbedding(...)`` holds ``self.emb = nn.Embedding``,
    also through a local name: ``token_emb = TokenEmbedding(...)`` then ``self.token_emb = token_emb``), and an
    instance of a class of the file derived from a torch layer (``class Scaled(nn.Embedding)``: ``self.emb.weight``).
    An attribute bound on several branches (``self.visual = ModifiedResNet(...)`` or ``VisionTransformer(...)``, or
    by a conditional expression: ``self.norm = nn.GroupNorm(2, c) if gn else nn.BatchNorm2d(c)``) is
    read through the bindings that can hold what follows (only one has ``attnpool``); when those disagree (an
    Embedding's ``weight`` is ``embedding_table``, a Linear's or an EmbeddingBag's is ``weight``) the read goes through
    ``mp_adapt.layer_attribute(self.inp, 'weight')``, decided by the object's class when it runs (outside ``forward``;
    in ``forward`` it is left alone). A local name bound to torch layers on several branches (``values =
    nn.EmbeddingBag(...)`` or ``nn.Embedding(...)``, then ``init_(values.weight)``) is read the same way. A local name
    bound once to such an attribute or item (``lookup_table = self.embedding`` then ``lookup_table.weight``) reads as
    that expression does. A local name bound to anything else in the same function is left alone.

    What a layer's members become is torch's object surface (``mindport/mappings/data/surface/``): the settings the
    Cell keeps under another name (``groups`` -> ``group``, ``AdaptiveAvgPool2d.output_size`` ->
    ``adaptive_avgpool2d.output_size``) are read there, one kept under another form is computed from the Cell
    (``self.drop.p`` of a Dropout2d is ``1 - self.drop.keep_prob``), one the Cell does not keep at all (the data's
    ``kept``: a pool's ``ceil_mode``, a ReLU's ``inplace``, a BatchNorm's ``affine``) is recorded on the Cell under
    torch's name right after ``self.pool = nn.MaxPool2d(2, ceil_mode=True)`` when the file uses that name
    (``self.pool.ceil_mode = True``; a value left at torch's default is not written; a construction inside an
    expression, ``nn.Sequential(..., nn.BatchNorm2d(c, affine=False))``, is wrapped as
    ``mp_nn.with_settings(nn.BatchNorm2d(...), affine=False)``, which sets the same attributes) and read as
    ``getattr(self.pool, 'ceil_mode', False)`` (a write stays a plain attribute), a convolution's size given by a
    name that may hold a list (EfficientNet's ``stride=[2]``, which torch keeps as ``(2,)`` and MindSpore expands) is
    recorded the same way as torch keeps it (``self.conv.stride = tuple(stride) if isinstance(stride, list) else
    self.conv.stride``) where the file reads that setting, a layer built by a torch function
    the surface data lists (``nn.Embedding.from_pretrained(t)``) reads as that layer, one torch holds as None in some configurations
    is None when the Cell's condition says so (``(None if self.bn.use_batch_statistics is True else
    self.bn.moving_mean)``), and a setting or method the Cell lacks
    (``self.fc.reset_parameters()``, ``self.conv.padding_mode``) is flagged MP104 with the reason. A sub-layer built
    from a class passed in (``self.conv = conv_module(c, c, 3)``) reads such a member through
    ``mp_adapt.layer_attribute(self.conv, "groups")``, which decides by the object's class when the code runs; in
    ``forward`` (which a static graph compiles, and the accessor does not compile there), and on a layer the file
    cannot see at all (``self.norm = norm`` passed in, a function's parameter), the read stays as written: the
    mapped MindSpore class answers torch's name (``mindport.runtime.torch_members``: a LayerNorm's ``weight`` is its
    ``gamma``), and a file importing no runtime module that loads it imports it by name. A setting some mapped
    MindSpore class holds under torch's very name with another value (``data/surface/shadowed_members.toml``,
    measured: a Conv1d's ``kernel_size`` is ``(1, 3)``, a MaxPool1d's ``stride`` ``(1, 2)``, a Conv2d's ``padding``
    an int), read on a layer of unknown class, goes through ``mp_adapt.layer_attribute`` outside ``forward`` (torch's
    value by the object's class, or AttributeError) and is remarked MP104 (a warning) in ``forward``, where no
    property can answer it (MindSpore's own code reads that member); a warning, since on most classes the read is
    right (a Conv2d's ``kernel_size``; a Conv1d is built as ``mp_nn.Conv1d``, torch's tuples, wherever the project
    reads its settings)."""

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
        Example(
            before="""
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self, vectors):
                        super().__init__()
                        self.emb = nn.Embedding.from_pretrained(vectors, freeze=False)
                        self.pool = nn.MaxPool2d(2, ceil_mode=True)

                    def forward(self, x):
                        return self.emb(x) * self.emb.weight.shape[0], self.pool.ceil_mode
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn


                class Block(nn.Cell):
                    def __init__(self, vectors):
                        super().__init__()
                        self.emb = mp_nn.embedding_from_pretrained(vectors, freeze=False)
                        self.pool = nn.MaxPool2d(kernel_size=2, ceil_mode=True, stride=2, pad_mode='pad')
                        self.pool.ceil_mode = True

                    def construct(self, x):
                        return self.emb(x) * self.emb.embedding_table.shape[0], getattr(self.pool, 'ceil_mode', False)
            """,
            note="A setting MindSpore's Cell does not keep (ceil_mode) is recorded on it where the file reads it; "
                 "a layer built by Embedding.from_pretrained reads as an Embedding.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Stem(nn.Module):
                    def __init__(self, groups):
                        super().__init__()
                        self.norm = nn.GroupNorm(groups, 8) if groups else nn.BatchNorm2d(8)

                    def forward(self, x):
                        return self.norm(x) * self.norm.weight.reshape(1, -1, 1, 1)
            """,
            after="""
                from mindspore import nn


                class Stem(nn.Cell):
                    def __init__(self, groups):
                        super().__init__()
                        self.norm = nn.GroupNorm(num_groups=groups, num_channels=8) if groups else nn.BatchNorm2d(num_features=8, eps=1e-05, momentum=0.9)

                    def construct(self, x):
                        return self.norm(x) * self.norm.gamma.reshape(1, -1, 1, 1)
            """,
            note="A conditional expression binds either layer: both keep torch's weight as gamma.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Downsample(nn.Module):
                    def __init__(self, pool):
                        super().__init__()
                        self.pool = pool
                        self.factor = self.pool.stride

                    def forward(self, x):
                        return self.pool(x), self.pool.kernel_size
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import adapt as mp_adapt


                class Downsample(nn.Cell):
                    def __init__(self, pool):
                        super().__init__()
                        self.pool = pool
                        self.factor = mp_adapt.layer_attribute(self.pool, 'stride')

                    def construct(self, x):
                        return self.pool(x), self.pool.kernel_size  # mindport: MP104 `.kernel_size` read in forward on a layer whose class the converter cannot see: MindSpore's AvgPool1d, FractionalMaxPool2d, FractionalMaxPool3d, MaxPool1d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d hold kernel_size with another value than torch's (MindSpore's AvgPool1d holds 3 where torch's holds (3,)); on another class the read is right
            """,
            note="A setting some MindSpore class holds under torch's name with another value (shadowed_members.toml), "
                 "on a layer of unknown class: read by its class outside forward, flagged in forward.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[dict] = []  # per enclosing class: self.X -> its candidate bindings
        self._functions: list[dict] = []  # per enclosing function (and the module): name -> its one binding
        self._file_classes: set[str] = set()  # the file's top-level classes
        self._class_layers: dict[str, dict] = {}  # class -> its self.X bindings (self.token_emb.emb.weight)
        self._layer_bases: dict[str, dict] = {}
        self._class_stack: list[str] = []  # the enclosing classes' names
        self._targets: set[int] = set()  # attributes assigned to: never read through the accessor
        self._called: set[int] = set()  # the func of every call (original nodes)
        self._outer_dims: set[int] = set()  # ``w.shape``/``w.size`` read at dimension 0, 1 or -1 (original nodes)
        self._function_calls: dict[int, str] = {}  # container.method -> its runtime function (_CONTAINER_FUNCTIONS)
        self._function_nodes: list[cst.FunctionDef] = []  # the enclosing functions (original nodes)
        self._class_names: frozenset[str] = frozenset()  # the block's names calling which builds a layer of any class
        self.torch_member_reads = False  # a member read left for mindport.runtime.torch_members (finalize_runtime)

    def visit_Module(self, node: cst.Module) -> None:
        self._used_names = _attribute_names(node)  # .inplace, .affine ...: the kept settings worth recording
        self._file_classes = {stmt.name.value for stmt in node.body if isinstance(stmt, cst.ClassDef)}
        self._layer_bases = {}  # a class of this file derived from a torch layer -> that layer's renames
        for stmt in node.body:
            if isinstance(stmt, cst.ClassDef):
                bases = [r for b in stmt.bases if (r := self._renames(cst.Call(func=b.value))) is not None]
                if len(bases) == 1:
                    self._layer_bases[stmt.name.value] = bases[0]
        self._class_layers = {stmt.name.value: self._attribute_bindings(stmt)
                              for stmt in node.body if isinstance(stmt, cst.ClassDef)}
        self._functions.append(self._local_bindings(_assignments(node)))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._attribute_bindings(node))
        self._class_stack.append(node.name.value)

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        self._class_stack.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._class_names = self._layer_class_names(node.body, set())  # a parameter called here may be a model
        self._functions.append(self._local_bindings(_assignments(node.body)))
        self._class_names = frozenset()
        self._function_nodes.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        self._function_nodes.pop()
        return updated_node

    # what a value is: a torch layer ({torch leaf: MindSpore leaf}), a Sequential or ModuleDict built in place
    # ({index or key: renames}), or an instance of a class of this file (("class", name))
    def _renames(self, value: cst.BaseExpression) -> dict[str, str] | None:
        """{torch leaf: MindSpore leaf} of a torch layer constructor call whose weight rule renames a parameter;
        ``_RUN_TIME`` for a call of a name the method binds to a layer class (``bn = nn.BatchNorm2d`` in one branch,
        ``nn.BatchNorm1d`` in another, then ``bn(c)``) or takes as a parameter: its class is known when it runs."""
        if not isinstance(value, cst.Call):
            return None
        if isinstance(value.func, cst.Name) and value.func.value in self._class_names:
            return _RUN_TIME
        qual = self.scope.resolve_torch(value.func)
        qual = load_surface().constructors.get(qual, qual)  # nn.Embedding.from_pretrained(t): an Embedding
        entry = self.ctx.registry.lookup(qual) if qual else None
        if entry is not None and entry.kind == "layer":
            if self.ctx.options.target != "nn":  # mint keeps torch's names but the parameters'
                return {k: v for k, v in entry.weights.items() if v and v != k}
            return _Layer(entry, {**_optional(entry, attribute_paths(entry)), **_flagged_members(entry),
                                  **_derived_members(entry)})
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
            if not renames:
                continue
            if i < first:
                indices[i] = renames
            if i > last:
                indices[i - len(args)] = renames
        return _Container({"items": indices}, "torch.nn.Sequential") if indices else None

    def _module_dict(self, value: cst.BaseExpression) -> dict | None:
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
        return _Container({"items": keys}, "torch.nn.ModuleDict") if keys else None

    def _module_list(self, value: cst.BaseExpression) -> dict | None:
        """``ModuleList([layer for ...])`` / ``Sequential(*[layer for ...])`` -> every index holds that layer's
        renames; ``ModuleList([a, b])`` -> {index: renames} of its literal items."""
        if not (isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None
                and self.scope.resolve_torch(value.func) in ("torch.nn.ModuleList", "torch.nn.Sequential")):
            return None
        items, star = value.args[0].value, value.args[0].star
        is_list = self.scope.resolve_torch(value.func) == "torch.nn.ModuleList"
        torch = "torch.nn.ModuleList" if is_list else "torch.nn.Sequential"
        if isinstance(items, (cst.ListComp, cst.GeneratorExp)) and (star == "*") != is_list:
            renames = self._renames(items.elt)
            return _Container({"items": _EveryIndex(renames)}, torch) if renames is not None else None
        if is_list and not star and isinstance(items, (cst.List, cst.Tuple)) \
                and not any(isinstance(e, cst.StarredElement) for e in items.elements):
            indices = {i: renames for i, e in enumerate(items.elements) if (renames := self._renames(e.value))}
            return _Container({"items": indices}, torch) if indices else None
        return None

    def _value(self, value: cst.BaseExpression):
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self._file_classes:
            layer = self._layer_bases.get(value.func.value)  # class Scaled(nn.Embedding): reads as the Embedding
            return layer if layer is not None else ("class", value.func.value)
        container = self._sequential(value) or self._module_dict(value) or self._module_list(value)
        return container if container is not None else self._renames(value)

    def _layer_class_names(self, block, given: set[str]) -> frozenset[str]:
        """The block's names bound to a torch layer class (``conv_nd = nn.Conv3d``) or to a partial of one
        (``norm_layer = partial(nn.LayerNorm, eps=1e-6)``), with the method's parameters ``given``
        (``conv_module``, a class passed in)."""
        names = set(given)
        for assign in _assignments(block):
            value = assign.value
            if isinstance(value, cst.Call) and value.args and self.scope.resolve(value.func) == "functools.partial":
                value = value.args[0].value
            qual = self.scope.resolve_torch(value)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is not None and entry.kind == "layer":
                names.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
        return frozenset(names)

    def _local_bindings(self, assigns) -> dict:
        """``X = <value>`` for plain names -> {X: value}. A name bound otherwise anywhere in the block is dropped. A
        name bound to torch layers of different classes in several places (``values = nn.EmbeddingBag(...)`` in one
        branch, ``nn.Embedding(...)`` in another) -> {X: _Either([each layer])}: a read means any of them."""
        found: dict[str, object] = {}
        dropped: set[str] = set()
        for assign in assigns:
            for target in assign.targets:
                if not isinstance(target.target, cst.Name):
                    continue
                name = target.target.value
                value = self._value(assign.value) if len(assign.targets) == 1 else None
                if value is None and len(assign.targets) == 1 and _self_chain_or_index(assign.value):
                    value = _Alias(assign.value)  # lookup_table = self.embedding: read as self.embedding is
                if value is None or name in dropped:
                    dropped.add(name)
                    continue
                before = found.get(name, value)
                if before == value:
                    found[name] = value
                elif _plain_layer(value) and all(_plain_layer(v) for v in _either(before)):
                    found[name] = _Either([*_either(before), value])  # another branch binds another layer class
                else:
                    dropped.add(name)
        return {k: v for k, v in found.items() if k not in dropped}

    def _attribute_bindings(self, node: cst.ClassDef) -> dict:
        """``self.X = <value>`` in a class's methods -> {X: [candidate values]}: each branch's binding
        (``self.visual = ModifiedResNet(...)`` or ``VisionTransformer(...)``), a method's local name read through
        (``token_emb = TokenEmbedding(...)`` then ``self.token_emb = token_emb``). Bindings to values of unknown kind
        are not candidates; which candidate a read means is decided where it is read (:meth:`_leaf_renames`)."""
        found: dict[str, list] = {}
        methods = [stmt for stmt in node.body.body if isinstance(stmt, cst.FunctionDef)]
        blocks = [stmt.body for stmt in methods]
        parameters = {id(stmt.body): {p.name.value for p in (*stmt.params.params, *stmt.params.kwonly_params)}
                      for stmt in methods}
        for block in [node.body, *blocks]:
            given = parameters.get(id(block), set())
            self._class_names = self._layer_class_names(block, given) if block is not node.body else frozenset()
            local = self._local_bindings(_assignments(block)) if block is not node.body else {}
            for assign in _assignments(block):
                for target in assign.targets:
                    target = target.target
                    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                            and target.value.value == "self") or len(assign.targets) != 1:
                        continue
                    for branch in _branches(assign.value):  # a ? b : c binds either: both are candidates
                        value = self._value(branch)
                        if value is None and isinstance(branch, cst.Name):
                            value = local.get(branch.value)
                        for one in _either(value) if value is not None else ():  # a local bound on branches: each
                            if one not in found.setdefault(target.attr.value, []):
                                found[target.attr.value].append(one)
        self._class_names = frozenset()
        return {k: v for k, v in found.items() if v}

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def _kept_passed(self, call) -> dict[str, cst.BaseExpression]:
        """The kept settings (object_surface.toml) a torch layer construction passes with a value other than torch's
        default, for the names the file uses (``.inplace``, ``.affine``), each a plain expression."""
        if self.ctx.options.target != "nn" or not isinstance(call, cst.Call):
            return {}
        qual = self.scope.resolve_torch(call.func)
        entry = self.ctx.registry.lookup(qual) if qual else None
        layer = load_surface().layer(entry.torch) if entry is not None and entry.kind == "layer" else None
        wanted = {n: d for n, d in layer.kept.items() if n in self._used_names} if layer is not None else {}
        if not wanted or entry.signature is None:
            return {}
        return {n: v for n, v in _passed(call, entry.signature, wanted).items() if _plain(v, self.scope)}

    def leave_SimpleStatementLine(self, original_node, updated_node):
        """``self.act = nn.ReLU(inplace=True)`` in a file that reads or writes ``.inplace``: the setting the Cell does
        not keep (object_surface.toml's ``kept``) is recorded on it under torch's name, ``self.act.inplace = True``,
        right after the construction (a setting left at torch's default is not written: a read gives the default)."""
        if len(original_node.body) != 1 or not isinstance(assign := original_node.body[0], cst.Assign) \
                or len(assign.targets) != 1 \
                or not isinstance(target := assign.targets[0].target, (cst.Name, cst.Attribute)):
            return updated_node
        lines = [updated_node]
        for name, value in self._kept_passed(assign.value).items():
            self.ctx.converted_sites += 1
            lines.append(cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(cst.Attribute(value=target.deep_clone(), attr=cst.Name(name)))],
                value=value.deep_clone())], leading_lines=()))
        for name, value in self._list_sizes_passed(assign.value).items():
            self.ctx.converted_sites += 1
            held = cst.Module([]).code_for_node(target)
            lines.append(cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(cst.Attribute(value=target.deep_clone(), attr=cst.Name(name)))],
                value=cst.parse_expression(f"tuple({value}) if isinstance({value}, list) else {held}.{name}"))],
                leading_lines=()))
        return cst.FlattenSentinel(lines) if len(lines) > 1 else updated_node

    def _list_sizes_passed(self, call) -> dict[str, str]:
        """``self.conv = nn.Conv2d(c, c, k, stride=stride)`` where ``stride`` may hold a list (native_facts.list_locals,
        the project's list names: EfficientNet's ``stride=[2]``) in a file that reads ``.stride``: torch's layer
        keeps ``tuple(stride)`` (``(2,)``, which EfficientDet's same-padding wrapper expands to ``[2, 2]`` and its
        feature extraction compares), the converted Cell the size it was built with (``(2, 2)``); recorded on the Cell
        under the same name right after the construction, as torch holds it. Only for the layers whose MindSpore
        construct never reads those settings (convolutions, not their transposes)."""
        if self.ctx.options.target != "nn" or not isinstance(call, cst.Call) or not self._function_nodes:
            return {}
        qual = self.scope.resolve_torch(call.func)
        wanted = {n: "" for n in _LIST_SIZE_ATTRIBUTES.get(qual, ()) if n in self._used_names}
        entry = self.ctx.registry.lookup(qual) if wanted else None
        if entry is None or entry.signature is None:
            return {}
        lists = list_locals(self._function_nodes[-1], project=self.ctx.options.list_names)
        return {n: v.value for n, v in _passed(call, entry.signature, wanted).items()
                if isinstance(v, cst.Name) and v.value in lists}

    # a construction inside an expression (an argument, an item, a returned value, a comprehension's element):
    # mp_nn.with_settings(<the Cell>, affine=False) records the same settings
    def _with_settings(self, original, updated, field: str):
        settings = self._kept_passed(getattr(original, field))
        if not settings:
            return updated
        self.ctx.converted_sites += 1
        args = [cst.Arg(getattr(updated, field))] + [
            cst.Arg(v.deep_clone(), keyword=cst.Name(n), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            for n, v in settings.items()]
        args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] \
            + args[-1:]
        return updated.with_changes(**{field: cst.Call(
            func=self.ctx.target_expr("mindport.runtime.layers.with_settings"), args=args)})

    def leave_Arg(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "value")

    def leave_Element(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "value")

    def leave_DictElement(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "value")

    def leave_Return(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "value") if original_node.value else updated_node

    def leave_ListComp(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "elt")

    def leave_GeneratorExp(self, original_node, updated_node):
        return self._with_settings(original_node, updated_node, "elt")

    def leave_Assign(self, original_node, updated_node):
        """``self.conv.weight.data = W`` of a Conv1d: MindSpore keeps the weight 4-D (the weight rule
        ``conv1d_reshape``), so the 3-D value is reshaped to the Parameter's shape (same elements)."""
        target = original_node.targets[0].target if len(original_node.targets) == 1 else None
        if not (isinstance(target, cst.Attribute) and target.attr.value == "data"
                and isinstance(target.value, cst.Attribute)):
            return updated_node
        candidates = self._candidates(target.value.value) or []
        leaf = target.value.attr.value
        if not candidates or not all(isinstance(c, _Layer) and c.entry.weight_transforms.get(leaf) == "conv1d_reshape"
                                     for c in candidates):
            return updated_node
        self.ctx.converted_sites += 1
        parameter = updated_node.targets[0].target.value
        return updated_node.with_changes(value=cst.Call(
            func=cst.Attribute(value=updated_node.value, attr=cst.Name("reshape")),
            args=[cst.Arg(cst.Attribute(value=parameter, attr=cst.Name("shape")))]))

    def _run_time(self, original_node, updated_node):
        """``self.conv.groups`` of a layer whose class was passed in: ``mp_adapt.layer_attribute(self.conv,
        "groups")``, the member under the name the object's class keeps it (or AttributeError with the reason). In
        ``forward`` (a static graph compiles it; the accessor does not compile there) the read stays as written: the
        mapped MindSpore class answers torch's name (:mod:`mindport.runtime.torch_members`, which the file then
        loads)."""
        name = original_node.attr.value
        if id(original_node) in self._targets or name not in _run_time_names() or self.ctx.options.target != "nn":
            return updated_node
        if self._in_forward():
            self.torch_member_reads = True
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.layer_attribute"), args=[
            cst.Arg(updated_node.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.SimpleString(repr(name)))])

    def _shadowed_read(self, node: cst.Attribute, candidates) -> bool:
        """A read of a setting some mapped MindSpore class holds under torch's name with another value
        (``shadowed_members.toml``: a Conv1d's ``kernel_size``, a MaxPool1d's ``stride``, a Conv2d's ``padding``) on a
        receiver whose class the converter cannot see (built by a class passed in, passed in, a ``forward``
        parameter no ``isinstance`` narrows)."""
        if id(node) in self._targets or id(node) in self._called or self.ctx.options.target != "nn" \
                or node.attr.value not in _shadowed_settings():
            return False
        if candidates:
            return all(c is _RUN_TIME for c in candidates)
        return self._unknown_layer(node, _shadowed_settings())

    def _shadowed(self, original_node, updated_node):
        """``self.conv.kernel_size`` on a layer of unknown class, a name MindSpore's Conv1d/MaxPool1d/... hold with
        another value: outside ``forward``, ``mp_adapt.layer_attribute(self.conv, 'kernel_size')`` (by the object's
        class when it runs: the surface's expression for torch's value, or AttributeError with the reason; a plain
        object's own attribute); in ``forward`` (a static graph does not compile the accessor) a warning MP104 naming
        the classes, the read as written (right on every other class)."""
        name = original_node.attr.value
        if not self._in_forward():
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.layer_attribute"), args=[
                cst.Arg(updated_node.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(cst.SimpleString(repr(name)))])
        self.torch_member_reads = True
        shadowed = _shadowing_layers()
        layers = sorted(layer.removeprefix("torch.nn.") for layer, rows in shadowed.items() if name in rows)
        example = next(rows[name] for layer, rows in sorted(shadowed.items()) if name in rows)
        self.remark(original_node, "MP104", f"`.{name}` read in forward on a layer whose class the converter cannot "
                  f"see: MindSpore's {', '.join(layers)} hold {name} with another value than torch's ({example}); "
                  "on another class the read is right",
                  f"read it where the layer's class is known, or outside forward (mp_adapt.layer_attribute decides "
                  f"by the class), or keep the value you passed to the layer", f"torch.nn.Module.{name}")
        return updated_node

    def _derived(self, original_node, updated_node, template: "_Derived"):
        """``self.drop.p`` of a Dropout2d: the surface data's expression over the converted layer
        (``1 - self.drop.keep_prob``), parenthesised where it is more than a name; assigned to: MP104."""
        name = original_node.attr.value
        if id(original_node) in self._targets and template.kept:
            return updated_node  # a kept setting written (m.inplace = True): the Cell's plain attribute, as written
        if id(original_node) in self._targets and name in load_writes().get(template.layer, {}):
            return updated_node  # a write measured against torch (layer_writes.toml): LayerWriteTransform decides
        if id(original_node) in self._targets:
            self.flag(original_node, "MP104", f"{template.layer}.{name}: MindSpore keeps it as {template}: set it "
                      "through the layer's constructor", "", template.layer)
            return updated_node
        self.ctx.converted_sites += 1
        return template_expr(template, updated_node.value)

    def knows(self, expr: cst.BaseExpression) -> bool:
        """Does this rule know what ``expr`` holds (a local name bound to a layer construction)?"""
        return bool(self._candidates(expr))

    def _candidates(self, expr: cst.BaseExpression) -> list | None:
        """What an expression may hold: ``self.X`` its class's candidates, a local name its binding, and each
        attribute or literal index of those (a class of this file's own ``self.Y``, a container's item)."""
        if isinstance(expr, cst.Name):
            bound = self._functions[-1].get(expr.value) if self._functions and expr.value != "self" else None
            if isinstance(bound, _Alias):
                return self._candidates(bound.node)
            return _either(bound) if bound is not None else None
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return self._classes[-1].get(expr.attr.value) if self._classes else None
            return _step(self._candidates(expr.value), expr.attr.value, self._class_layers)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = expr.slice[0].slice.value
            index = key.evaluated_value if isinstance(key, cst.SimpleString) else int_literal(key)
            return _step(self._candidates(expr.value), _ANY_INDEX if index is None else index, self._class_layers)
        return None

    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" and len(node.args) == 1 \
                and int_literal(node.args[0].value) in _OUTER_DIMS:
            self._outer_dims.add(id(node.func))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape" and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index) and int_literal(node.slice[0].slice.value) in _OUTER_DIMS:
            self._outer_dims.add(id(node.value))

    def leave_Call(self, original_node, updated_node):
        function = self._function_calls.pop(id(original_node.func), None)
        if function is None or not isinstance(updated_node.func, cst.Attribute):
            return updated_node
        self.ctx.converted_sites += 1
        receiver = cst.Arg(updated_node.func.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return cst.Call(func=self.ctx.target_expr(function), args=[receiver, *updated_node.args] if updated_node.args
                        else [receiver.with_changes(comma=cst.MaybeSentinel.DEFAULT)])

    def leave_Attribute(self, original_node, updated_node):
        candidates = self._candidates(original_node.value)
        function = _container_function(candidates, original_node.attr.value) if candidates else None
        if function is not None and id(original_node) in self._called:
            self._function_calls[id(original_node)] = function  # the call becomes function(container, ...)
            return updated_node
        if self._shadowed_read(original_node, candidates):
            return self._shadowed(original_node, updated_node)
        if candidates and all(c is _RUN_TIME for c in candidates):
            return self._run_time(original_node, updated_node)
        reason = self._flagged_tensor_shape(original_node)
        if reason:
            self.flag(original_node, "MP104", f"{reason.layer}.{original_node.attr.value}: {reason}", "", reason.layer)
            return updated_node
        leaf = _leaf(candidates, original_node.attr.value) if candidates else None
        if isinstance(leaf, _Derived):
            return self._derived(original_node, updated_node, leaf)
        if isinstance(leaf, _Flagged):
            self.flag(original_node, "MP104", f"{leaf.layer}.{original_node.attr.value}: {leaf}", "", leaf.layer)
            return updated_node
        if isinstance(leaf, _Optional) and id(original_node) not in self._targets and leaf.when:
            self.ctx.converted_sites += 1  # None where torch's layer holds None: decided when the read runs
            receiver = cst.Module([]).code_for_node(updated_node.value)
            return cst.parse_expression(f"(None if {leaf.when.replace('{layer}', receiver)} else {receiver}.{leaf})")
        if leaf is None and candidates and _disagree(candidates, original_node.attr.value) \
                and id(original_node) not in self._called \
                and not self._in_forward():
            return self._run_time(original_node, updated_node)  # an Embedding's weight or an EmbeddingBag's: by class
        if not candidates and self._unknown_layer(original_node):
            self.torch_member_reads = True  # the read as written: torch_members answers it on a mapped layer
        if leaf:
            self.ctx.converted_sites += 1
            *path, last = leaf.split(".")  # AdaptiveAvgPool2d's output_size: pool.adaptive_avgpool2d.output_size
            owner = updated_node.value
            for part in path:
                owner = cst.Attribute(value=owner, attr=cst.Name(part))
            return updated_node.with_changes(value=owner, attr=cst.Name(last))
        return updated_node


    def _in_forward(self) -> bool:
        """Inside ``forward`` (or a function nested in it): the code a static graph compiles."""
        return any(f.name.value == "forward" for f in self._function_nodes)

    def _unknown_layer(self, node: cst.Attribute, names: frozenset[str] | None = None) -> bool:
        """A read of a torch member name some mapped MindSpore class keeps under another name or form
        (:func:`_torch_member_names`) on a receiver that may be a layer of a class the converter cannot see: an
        attribute of ``self`` no rule knows (``self.norm.weight``, ``self.norm = norm``) or, in ``forward``, a
        parameter of the enclosing function no ``isinstance`` narrows; not a call (``x.dim()``), and not in a static
        ``forward`` (an ``autograd.Function``'s: ``ctx.stride`` is what the function stored on its context, the
        deformable convolutions' ``ctx.stride = _pair(stride)``)."""
        if node.attr.value not in (_torch_member_names() if names is None else names) or id(node) in self._called:
            return False
        receiver = node.value
        rules = getattr(getattr(self, "runner", None), "rules", ())
        if isinstance(receiver, cst.Attribute):
            root = receiver
            while isinstance(root, cst.Attribute):
                root = root.value
            return isinstance(root, cst.Name) and root.value == "self" \
                and not any(getattr(rule, "knows", None) and rule.knows(receiver) for rule in rules)
        if not isinstance(receiver, cst.Name) or receiver.value in ("self", "cls") or not self._function_nodes \
                or not self._in_forward():
            return False  # outside forward, ObjectSurfaceTransform reads a parameter's member by its class
        function = self._function_nodes[-1]
        if is_static(function):
            return False  # an autograd.Function's static forward(ctx, ...): ctx.stride is the value it stored
        params = function.params
        return receiver.value in {p.name.value for p in (*params.params, *params.posonly_params,
                                                           *params.kwonly_params)} \
            and not any(getattr(rule, "narrows", None) and rule.narrows(receiver.value) for rule in rules)

    def _flagged_tensor_shape(self, node: cst.Attribute) -> _Flagged | None:
        """``self.conv.weight.shape`` (``.ndim``, ``.size()``, ``.dim()``) of a layer whose surface flags that weight
        or buffer (a Conv1d's is 4-D in MindSpore), and ``self.weight.shape`` in a subclass of that layer: the
        weight itself converts (init calls, checkpoints), its shape read gives another answer, so the read is
        flagged with the surface's reason."""
        if node.attr.value not in _SHAPE_READS or not isinstance(node.value, cst.Attribute) \
                or id(node) in self._outer_dims:  # out, in/groups and the kernel length read the same
            return None
        member = node.value.attr.value
        if member not in _TENSOR_MEMBERS:
            return None
        candidates = self._candidates(node.value.value) or []
        owner = node.value.value
        if not candidates and isinstance(owner, cst.Name) and owner.value == "self" and self._class_stack \
                and self._class_stack[-1] in self._layer_bases:  # class C(nn.Conv1d): self.weight.shape[2]
            candidates = [self._layer_bases[self._class_stack[-1]]]
        for candidate in candidates:
            layer = load_surface().layer(candidate.entry.torch) if isinstance(candidate, _Layer) else None
            reason = layer.flagged.get(member) if layer is not None else None
            if reason:
                found = _Flagged(reason)
                found.layer = f"{candidate.entry.torch}.{member}"
                return found
        return None


_SHAPE_READS = {"shape", "ndim", "size", "dim"}
_OUTER_DIMS = (0, 1, -1)  # the dimensions a 4-D MindSpore Conv1d weight (out, in, 1, k) shares with torch's (out, in, k)


class _Layer(dict):
    """A torch layer's members -> MindSpore's names (its entry kept: the weight rules of assignments)."""

    def __init__(self, entry, members: dict) -> None:
        super().__init__(members)
        self.entry = entry


class _Container(dict):
    """A Sequential or ModuleDict built in place ({"items": {index or key: renames}}), with its torch class."""

    def __init__(self, items: dict, torch: str) -> None:
        super().__init__(items)
        self.torch = torch


_RUN_TIME = "<run time>"  # a sub-layer whose class is passed in (``self.conv = conv_module(...)``)


def _run_time_names() -> frozenset[str]:
    """The members some mapped layer holds under another name, or lacks: read through the run-time accessor on a
    layer whose class is known only when the code runs."""
    if not _RUN_TIME_NAMES:
        surface = load_surface()
        names = {name for layer in surface.layers.values()
                 for name in (*layer.paths(), *layer.flagged, *layer.derived)}
        _RUN_TIME_NAMES.append(frozenset(names - set(surface.methods)))
    return _RUN_TIME_NAMES[0]


_RUN_TIME_NAMES: list[frozenset[str]] = []


@functools.lru_cache(maxsize=1)
def _torch_member_names() -> frozenset[str]:
    """The torch member names :mod:`mindport.runtime.torch_members` may answer on a mapped MindSpore class: the
    renamed ones and the derived ones the Cell does not keep as a plain setting (``kept``)."""
    surface = load_surface()
    return frozenset(name for layer in surface.layers.values()
                     for name in (*layer.paths(), *(n for n in layer.derived if n not in layer.kept)))


@functools.lru_cache(maxsize=1)
def _shadowed_settings() -> frozenset[str]:
    """The settings (not weights or buffers) some mapped MindSpore class holds under torch's name with another value
    (``shadowed_members.toml``, measured)."""
    return frozenset(name for rows in _shadowing_layers().values() for name in rows
                     if name not in _TENSOR_MEMBERS and name != "class")


@functools.lru_cache(maxsize=1)
def _shadowing_layers() -> dict[str, dict[str, str]]:
    """``shadowed_members.toml`` without the layers a port builds as a runtime class reading its settings in torch's
    form wherever the project reads them (``mappings/settings_layers.py``: MindSpore's own Conv1d only where no code
    touches its settings, so a read never meets it)."""
    from mindport.mappings.settings_layers import SETTINGS_LAYERS

    native = {target.rsplit(".", 1)[-1] for target in SETTINGS_LAYERS.values()}
    return {layer: rows for layer, rows in load_shadowed().items()
            if not (rows.get("class", "").startswith("mindspore.") and rows.get("class", "").rsplit(".", 1)[-1] in native)}


class _Flagged(str):
    """A member of a torch layer with no MindSpore counterpart (object_surface.toml's ``flagged``): the reason."""

    layer: str = ""


_TENSOR_MEMBERS = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}

# torch container methods the converted container lacks (object_surface.toml [methods]: extend, insert, pop), called
# through mindport.runtime.layers, which decides by the object's class when the code runs
_CONTAINER_FUNCTIONS = {"extend": "mindport.runtime.layers.extend", "insert": "mindport.runtime.layers.insert",
                        "pop": "mindport.runtime.layers.pop"}
# of those, the ones a ModuleList's conversion (mindspore.nn.CellList, or the runtime ModuleList, a CellList) has of its
# own, which the runtime function calls: on a container that is a ModuleList wherever it comes from, the call stays
_CELL_LIST_METHODS = frozenset({"extend", "insert"})


def _container_function(candidates: list, attr: str) -> str | None:
    """The runtime function of ``<container>.attr(...)`` when every candidate is a torch layer whose surface lists
    ``attr`` among its methods and the surface's [methods] converts it; None for a ModuleList's insert/extend (the
    CellList's own method, which the runtime function calls on it: _CELL_LIST_METHODS)."""
    function = _CONTAINER_FUNCTIONS.get(attr)
    if function is None or not all(isinstance(c, (_Layer, _Container)) for c in candidates):
        return None
    if attr in _CELL_LIST_METHODS and all(
            (c.entry.torch if isinstance(c, _Layer) else c.torch) == "torch.nn.ModuleList" for c in candidates):
        return None  # up.insert(0, block): the CellList's own, as the runtime function would call it
    surface = load_surface()
    if surface.methods.get(attr, ("",))[0] != "converted":
        return None
    for candidate in candidates:
        layer = surface.layer(candidate.torch if isinstance(candidate, _Container) else candidate.entry.torch)
        if layer is None or attr not in layer.same:
            return None
    return function


def _flagged_members(entry) -> dict[str, _Flagged]:
    """The flagged settings and methods of a layer (its parameters and buffers are not flagged where used: init
    calls and checkpoints convert them, see object_surface.toml)."""
    layer = load_surface().layer(entry.torch)
    found = {}
    for name, reason in (layer.flagged.items() if layer is not None else ()):
        if name in entry.weights or name in _TENSOR_MEMBERS:
            continue
        found[name] = _Flagged(reason)
        found[name].layer = entry.torch
    return found


class _Optional(str):
    """A member torch holds as None in some configurations (object_surface.toml's ``none_when``): its path, and the
    condition over the converted layer."""

    when: str = ""


def _optional(entry, paths: dict) -> dict:
    layer = load_surface().layer(entry.torch)
    found = dict(paths)
    for name, when in (layer.none_when.items() if layer is not None else ()):
        found[name] = _Optional(paths.get(name, name))
        found[name].when = when
    return found


class _Derived(str):
    """A setting MindSpore keeps under another form (object_surface.toml's ``derived``): the expression template;
    ``kept``: a setting the Cell does not keep, recorded on it under torch's name (written as a plain attribute)."""

    layer: str = ""
    kept: bool = False


def _derived_members(entry) -> dict[str, _Derived]:
    layer = load_surface().layer(entry.torch)
    found = {}
    for name, template in (layer.derived.items() if layer is not None else ()):
        found[name] = _Derived(template)
        found[name].layer = entry.torch
        found[name].kept = name in layer.kept
    return found


def template_expr(template: str, receiver: cst.BaseExpression) -> cst.BaseExpression:
    """A surface template over ``{layer}`` (``1 - {layer}.keep_prob``, ``getattr({layer}, 'inplace', False)``) with
    the receiver's code in place, parenthesised where it is more than a name, an attribute, an item or a call."""
    text = template.replace("{layer}", cst.Module([]).code_for_node(receiver))
    expr = cst.parse_expression(text)
    return expr if isinstance(expr, (cst.Attribute, cst.Name, cst.Subscript, cst.Call, cst.Integer, cst.Float)) \
        or isinstance(expr, cst.Tuple) and expr.lpar else cst.parse_expression(f"({text})")


def _attribute_names(node: cst.CSTNode) -> set[str]:
    """Every attribute name the file reads or writes (``m.inplace``, ``self.bn.affine``)."""
    names: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            names.add(attribute.attr.value)

    read(node, _Names())
    return names


# the torch layers whose size settings a one-element list leaves as a 1-tuple (``_pair([2])`` is ``(2,)``) where the
# MindSpore Cell keeps the expanded size, and whose MindSpore construct never reads them (they may be set afterwards)
_LIST_SIZE_ATTRIBUTES = dict.fromkeys(("torch.nn.Conv2d", "torch.nn.Conv3d"), ("kernel_size", "stride", "dilation"))


def _passed(call: cst.Call, signature, wanted: dict[str, str]) -> dict[str, cst.BaseExpression]:
    """The arguments of a torch layer construction bound to the kept settings in ``wanted`` (by keyword or by
    position in torch's signature), those given a value other than torch's default literal."""
    positional = [p.name for p in signature if p.kind == "positional"]
    found = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return {}  # nn.ReLU(**cfg): what is passed is known when it runs
        name = arg.keyword.value if arg.keyword is not None else positional[i] if i < len(positional) else None
        if name in wanted and cst.Module([]).code_for_node(arg.value) != wanted[name]:
            found[name] = arg.value
    return found


def _plain(expr: cst.BaseExpression, scope) -> bool:
    """A value that reads the same when evaluated again after the construction: a literal, a name, an attribute or
    item of one, and operators over those (no call, no torch API)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Name):
        return scope.resolve_torch(expr) is None
    if isinstance(expr, cst.Attribute):
        return scope.resolve_torch(expr) is None and _plain(expr.value, scope)
    if isinstance(expr, cst.Subscript):
        return _plain(expr.value, scope) and all(
            isinstance(e.slice, cst.Index) and _plain(e.slice.value, scope) for e in expr.slice)
    if isinstance(expr, cst.UnaryOperation):
        return _plain(expr.expression, scope)
    if isinstance(expr, cst.BinaryOperation):
        return _plain(expr.left, scope) and _plain(expr.right, scope)
    if isinstance(expr, cst.Tuple):
        return all(not isinstance(e, cst.StarredElement) and _plain(e.value, scope) for e in expr.elements)
    return False


_ANY_INDEX = object()  # an index known only at run time (``self.embs[i]``): only a comprehension's items agree


class _EveryIndex:
    """The items of a container built from a comprehension: every integer index holds the same layer."""

    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def __contains__(self, key) -> bool:
        return isinstance(key, int) or key is _ANY_INDEX

    def __getitem__(self, key) -> dict[str, str]:
        return self.renames

    def __eq__(self, other) -> bool:
        return isinstance(other, _EveryIndex) and other.renames == self.renames

    __hash__ = None


class _Alias:
    """A local name bound once to an attribute or item chain of ``self`` (``lookup_table = self.embedding``,
    ``layer = self.blocks[0]``): it holds what that expression holds where it is read."""

    def __init__(self, node: cst.BaseExpression) -> None:
        self.node = node
        self.code = cst.Module([]).code_for_node(node)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Alias) and other.code == self.code

    def __hash__(self) -> int:
        return hash(self.code)


def _branches(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a conditional expression may give (``nn.GroupNorm(2, c) if gn else nn.BatchNorm2d(c)``: both),
    else the value itself."""
    if isinstance(value, cst.IfExp):
        return [*_branches(value.body), *_branches(value.orelse)]
    return [value]


def _self_chain_or_index(expr: cst.BaseExpression) -> bool:
    """``self.X``, ``self.X.Y``, ``self.X[0]``, ``self.X["k"]``: an expression rooted at ``self`` through attributes
    and one-element subscripts only."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Subscript) and len(expr.slice) != 1:
            return False
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value == "self"


def _step(candidates: list | None, name, class_layers: dict) -> list | None:
    """The candidates of ``<owner>.name`` (or ``<owner>[name]``): a file class's own ``self.name`` bindings, a
    container's item. Owners that cannot hold ``name`` drop out (``self.visual`` may be a ModifiedResNet or a
    VisionTransformer; only the first has ``attnpool``)."""
    if not candidates:
        return None
    found = []
    for value in candidates:
        if isinstance(value, tuple):
            found.extend(class_layers.get(value[1], {}).get(name, ()))
        elif isinstance(value, dict) and "items" in value and name in value["items"]:
            found.append(value["items"][name])
    return found or None


class _Either(list):
    """The torch layers a local name is bound to in different places (``values = nn.EmbeddingBag(...)`` in one
    branch, ``values = nn.Embedding(...)`` in another): a read of the name may mean any of them."""


def _either(value) -> list:
    """The candidates one binding stands for: each layer of an _Either, else the binding itself."""
    return list(value) if isinstance(value, _Either) else [value]


def _plain_layer(value) -> bool:
    """A torch layer's renames (not a container, not a class of the file, not an alias, not a run-time class)."""
    return isinstance(value, dict) and "items" not in value


def _disagree(candidates: list, attr: str) -> bool:
    """Every candidate is a torch layer and they keep ``attr`` under different names (an Embedding's ``weight`` is
    ``embedding_table``, an EmbeddingBag's or a Linear's is ``weight``): only the object's class, when the code
    runs, says which."""
    if not all(_plain_layer(v) for v in candidates):
        return False
    return len({str(value.get(attr, attr)) for value in candidates}) > 1


def _leaf(candidates: list, attr: str) -> str | None:
    """MindSpore's name for ``<owner>.attr`` when every candidate owner is a torch layer and all rename ``attr`` the
    same way (an Embedding and a Linear disagree on ``weight``: left alone)."""
    if not all(isinstance(v, dict) and "items" not in v for v in candidates):
        return None
    leaves = {value.get(attr, attr) for value in candidates}
    leaf = leaves.pop() if len(leaves) == 1 else None
    return leaf if leaf != attr or isinstance(leaf, _Optional) else None


def _self_chain(expr: cst.BaseExpression) -> list[str] | None:
    """``self.visual.attnpool.c_proj`` -> ["visual", "attnpool", "c_proj"]; None when not rooted at ``self``."""
    names = []
    while isinstance(expr, cst.Attribute):
        names.append(expr.attr.value)
        expr = expr.value
    return names[::-1] if isinstance(expr, cst.Name) and expr.value == "self" else None


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
