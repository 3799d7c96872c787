"""The converter rule ReferenceTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/references.md shows both."""
from __future__ import annotations

import keyword

import libcst as cst

from mindport.mappings.settings_layers import SETTINGS_LAYERS
from mindport.mappings.surface import attribute_paths, load_surface
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.layer_parameters import template_expr
from mindport.migrator.rules.module_class import _self_assigned
from mindport.migrator.native_facts import type_test_tuples
from mindport.migrator.syntax import code_of
from mindport.migrator.table import value_expr
from mindport.migrator.walk import transform, walk

_TYPE_CHECKS = ("isinstance", "issubclass")
_NAMESPACE_READS = {("getattr", 2), ("getattr", 3), ("hasattr", 2)}  # (builtin, number of arguments)


class ReferenceTransform(Rule):
    """References to torch APIs that need no argument mapping, rewritten to the MindSpore name:

    * the class in a type check: ``isinstance(m, nn.Conv2d)`` / ``isinstance(m, (nn.Linear, nn.Conv1d))``, also
      through a tuple bound once to a local name the function only reads in type checks (``bn_types = (nn.BatchNorm1d,
      nn.BatchNorm2d)`` ... ``isinstance(m, bn_types)``, ``type(m) in bn_types``: ``native_facts.type_test_tuples``); inside
      such a narrowing, and one by class name (``classname = m.__class__.__name__; if classname.find('BatchNorm')
      != -1:``, ``'Norm' in type(m).__name__``), also a comprehension's filter (``[m.weight for m in
      self.modules() if isinstance(m, nn.LayerNorm)]``), ``m``'s parameters and renamed settings take MindSpore's names,
      and a setting kept under another form or not at all reads through the surface data's expression
      (``m.affine`` of a BatchNorm2d: ``getattr(m, 'affine', True)``; ``m.inplace = True`` stays a plain write);
    * a torch namespace read by a name known at run time, ``getattr(torch.nn, activation)``:
      ``mp_adapt.attribute("torch.nn", activation)``, the runtime adapter of that entry; and the feature test of code
      written for several torch versions, ``hasattr(F, "scaled_dot_product_attention")``: ``mp_adapt.has(
      "torch.nn.functional", "scaled_dot_product_attention")``, true when mindport maps that API; a name written as
      a string literal, ``getattr(F, 'tanh')(x)`` (vqa.pytorch's seq2vec), is the attribute itself: the converter
      reads it as ``F.tanh(x)`` before any rule runs (:func:`literal_namespace_reads`), so the call is mapped where it
      is written, with no lookup at run time (whose ``try`` a static graph refuses: "Unsupported statement 'Try'");
    * the value of a local alias, ``act = F.silu``: the MindSpore name when calls need no argument mapping; when
      they do (``act = F.relu``: ``inplace`` is dropped), a definition the file gets with torch's parameters, decided
      statically (TableCallTransform's value function ``torch_relu`` or value class ``TorchLeakyReLU``), else the
      runtime adapter of the entry (``mp_adapt.api("torch.nn.ELU")``), so every call ``act(x, inplace=True)`` keeps
      torch's arguments, whatever else ``act`` may hold on another path (the alias name itself is not a site). An alias bound once and only ever called in the file (``act = F.leaky_relu`` ... ``act(x,
      0.2)``) names the MindSpore function and each call is mapped where it is written: no adapter, so the code
      also compiles in GRAPH_MODE;
    * a torch namespace bound to a name, ``F = nn.functional``: the calls through ``F`` are mapped where they are
      written, and the name holds ``mp_adapt.namespace('torch.nn.functional')``, whose attributes are the entries'
      runtime adapters (for the reads no rule sees: ``getattr(F, name)``, ``F`` passed on), so no torch import stays;
    * a file's own function or class put on a torch class, ``torch.nn.Module.add = add_module``, and its reads: the
      MindSpore class of the entry (``nn.Cell.add = add_module``), so the patch reaches the converted objects.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn
                import torch.nn.functional as F


                def init(m):
                    if isinstance(m, nn.BatchNorm2d):
                        m.weight.data.fill_(1)


                gate = F.sigmoid
                act = F.relu
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import math as mp_math


                def init(m):
                    if isinstance(m, nn.BatchNorm2d):
                        mp_inplace.fill_(m.gamma, value=1)


                gate = mp_math.sigmoid


                def torch_relu(input, inplace=False):
                    \"\"\"torch.nn.functional.relu's parameters, calling MindSpore's ops.relu (inplace: mp_inplace.relu_inplace).\"\"\"
                    if inplace:
                        return mp_inplace.relu_inplace(input)
                    return ops.relu(input)


                act = torch_relu
            """,
            note='Inside an isinstance narrowing, m.weight of a BatchNorm is gamma; an alias of a torch function names '
                 'the MindSpore one, or a function with torch\'s parameters when calls need their arguments mapped '
                 '(relu drops inplace, whose True picks the in-place form).',
        ),
        Example(
            before="""
                import torch.nn as nn


                def is_head(m):
                    return isinstance(m, (nn.Linear, nn.Conv2d))
            """,
            after="""
                from mindspore import nn


                def is_head(m):
                    return isinstance(m, (nn.Dense, nn.Conv2d))
            """,
            note='Classes in a type check are renamed, each through its table entry.',
        ),
        Example(
            before="""
                import torch.nn as nn


                def norm_scales(model):
                    return [m.weight for m in model.modules() if isinstance(m, nn.LayerNorm)]
            """,
            after="""
                from mindspore import nn


                def norm_scales(model):
                    return [m.gamma for m in (_cell for _, _cell in model.cells_and_names()) if isinstance(m, nn.LayerNorm)]
            """,
            note='A comprehension filtered by an isinstance test narrows its element as an if statement does.',
        ),
        Example(
            before="""
                import torch.nn as nn


                def prepare(model):
                    for m in model.modules():
                        if isinstance(m, (nn.ReLU, nn.LeakyReLU)):
                            m.inplace = True
                        if isinstance(m, nn.BatchNorm2d):
                            print(m.affine)
            """,
            after="""
                from mindspore import nn


                def prepare(model):
                    for m in (_cell for _, _cell in model.cells_and_names()):
                        if isinstance(m, (nn.ReLU, nn.LeakyReLU)):
                            m.inplace = True
                        if isinstance(m, nn.BatchNorm2d):
                            print(getattr(m, 'affine', True))
            """,
            note="Settings MindSpore's Cells do not keep: written as plain attributes, read with torch's default "
                 "unless the converter recorded the value passed to the layer.",
        ),
        Example(
            before="""
                import torch.nn.functional as F

                act = F.leaky_relu


                def block(x):
                    return act(x, 0.2)
            """,
            after="""
                from mindspore import ops

                act = ops.leaky_relu


                def block(x):
                    return act(x, alpha=0.2)
            """,
            note='An alias only ever called names the MindSpore function; its calls are mapped where they are written.',
        ),
        Example(
            before="""
                import torch.nn as nn
                import torch.nn.functional as F

                FLASH = hasattr(F, "scaled_dot_product_attention")


                def make(name):
                    return getattr(nn, name)()


                def block(x):
                    return getattr(F, "gelu")(x, approximate="tanh")
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import adapt as mp_adapt

                FLASH = mp_adapt.has('torch.nn.functional', "scaled_dot_product_attention")


                def make(name):
                    return mp_adapt.attribute('torch.nn', name)()


                def block(x):
                    return ops.gelu(x, approximate="tanh")
            """,
            note='A feature test of a torch namespace asks whether mindport maps that API (no torch needed at run '
                 'time); a namespace read by a name known at run time gives the runtime adapter of the entry; a name '
                 'written as a literal is the attribute itself, and its call is mapped where it is written.',
        ),
        Example(
            before="""
                import torch.nn as nn

                F = nn.functional


                def head(x):
                    return F.relu(x)
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import adapt as mp_adapt

                F = mp_adapt.namespace('torch.nn.functional')


                def head(x):
                    return ops.relu(x)
            """,
            note='A namespace bound to a name: its calls are mapped where written, the name holds an adapter of the '
                 'namespace (it stayed torch.nn.functional, and the port imported torch).',
        ),
        Example(
            before="""
                import torch.nn as nn


                class Same(nn.MaxPool2d):
                    def forward(self, x):
                        return super().forward(x), self.padding
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import adapt as mp_adapt


                class Same(nn.MaxPool2d):
                    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
                        \"\"\"torch.nn.MaxPool2d's parameters.\"\"\"
                        kernel_size, stride, padding, dilation = mp_adapt.layer_sizes(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
                        super().__init__(kernel_size=kernel_size, stride=(stride if stride is not None else kernel_size), padding=padding, dilation=dilation, return_indices=return_indices, ceil_mode=ceil_mode, pad_mode='pad')

                    def construct(self, x):
                        return super(Same, self).forward(x), self.padding  # mindport: MP104 torch.nn.MaxPool2d.padding: MindSpore's MaxPool2d has no attribute of this name holding torch's value: keep what you passed to the layer
            """,
            note="A layer subclass's own setting that MindSpore's class holds with another value (its padding) is "
                 "flagged, as on self.pool; one kept in another form (a Conv2d's padding) reads through the surface's "
                 "expression, torch's value.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._refs: set[int] = set()
        self._alias_values: set[int] = set()  # ``F.relu`` in ``act = F.relu``
        self._fixed_values: set[int] = set()  # the same, for an alias only ever called (ctx.fixed_aliases)
        self._narrowed_blocks: dict[int, tuple[str, dict[str, str]]] = {}
        self._narrowing: list[tuple[str, dict[str, str]]] = []
        self._targets: set[int] = set()  # attributes assigned to (m.weight = ...): no run-time read there
        self._class_names: dict[str, str] = {}  # classname -> m, for ``classname = m.__class__.__name__``
        self._namespaces: set[str] | None = None  # torch modules holding entries (getattr(torch.nn, name))

    # Inside ``if isinstance(m, nn.BatchNorm2d):`` the parameters of ``m`` have MindSpore names: ``m.weight`` is
    # ``m.gamma`` there (the entry's weight rule), as init loops over ``self.modules()`` expect; so do the constructor
    # settings the layer keeps under a renamed attribute (``m.groups`` of a Conv2d is ``m.group``).
    def visit_If(self, node: cst.If) -> None:
        found = self._narrowed_by(node.test)
        if found is not None:
            self._narrowed_blocks[id(node.body)] = found

    def _narrowed_by(self, test: cst.BaseExpression):
        """(object name, torch attribute -> MindSpore path) for an isinstance or class-name test, else None."""
        by_name = self._class_name_test(test)
        if by_name is not None:
            subject, entries = by_name
        else:
            checked = _isinstance_test(test)
            if checked is None:
                return None
            subject, items = checked
            entries = []
            for item in items:
                qual = self.scope.resolve_torch(item)
                entry = self.ctx.registry.lookup(qual) if qual else None
                if entry is None or not (entry.weights or entry.rename or _derived(entry)):
                    return None
                entries.append(entry)
        narrowed = _narrowing([{**attribute_paths(entry), **_derived(entry)} for entry in entries])
        return (subject, narrowed) if narrowed else None

    # A comprehension filtered by such a test narrows its element (``[m.weight for m in self.modules() if
    # isinstance(m, nn.LayerNorm)]``: ``m.gamma``), as an if statement narrows its block.
    def _visit_comprehension(self, node) -> None:
        comp = node.for_in
        if comp.inner_for_in is not None or not isinstance(comp.target, cst.Name):
            return
        for condition in comp.ifs:
            found = self._narrowed_by(condition.test)
            if found is not None and found[0] == comp.target.value:
                self._narrowed_blocks[id(node)] = found
                self._narrowing.append(found)
                return

    def _leave_comprehension(self, original_node, updated_node):
        if self._narrowed_blocks.pop(id(original_node), None) is not None:
            self._narrowing.pop()
        return updated_node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = _leave_comprehension

    # ``classname = m.__class__.__name__`` then ``if classname.find('BatchNorm') != -1:`` (init functions given to
    # ``model.apply``): the block is narrowed to the torch layers whose class name passes the test (BatchNorm1d/2d/3d
    # ..., whose MindSpore classes have the same names), so ``m.weight`` is ``m.gamma`` there too.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._class_names = {}
        # bn_types = (nn.BatchNorm1d, nn.BatchNorm2d) only ever read by isinstance(m, bn_types): MindSpore's classes
        for classes in type_test_tuples(node):
            self._refs.update(id(e.value) for e in classes.elements if isinstance(e, cst.Element))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            subject = class_name_of(node.value)
            if subject is not None:
                self._class_names[node.targets[0].target.value] = subject
        self._note_alias(node)

    def _class_name_test(self, test: cst.BaseExpression):
        """(object name, layer entries) for a test of an object's class name against a literal, else None."""
        found = _class_name_comparison(test)
        if found is None:
            return None
        expr, text, how = found
        subject = class_name_of(expr)
        if subject is None and isinstance(expr, cst.Name):
            subject = self._class_names.get(expr.value)
        if subject is None:
            return None
        entries = []
        for entry in self.ctx.registry:
            leaf = entry.torch.rsplit(".", 1)[-1]
            if entry.kind != "layer" or entry.torch != f"torch.nn.{leaf}" or not entry.supported:
                continue
            if (how == "equal" and leaf == text) or (how == "prefix" and leaf.startswith(text)) \
                    or (how == "contains" and text in leaf):
                entries.append(entry)
        return (subject, entries) if entries else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """A subclass of one of torch's layers (``class Conv2dSame(nn.Conv2d)``) reads the layer's settings on
        ``self``: ``self.groups`` is ``self.group`` there, ``self.padding`` torch's tuple (the surface's derived
        template), as in an isinstance narrowing."""
        for base in node.bases:
            qual = self.scope.resolve_torch(base.value)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is not None and entry.kind == "layer" and isinstance(node.body, cst.IndentedBlock):
                # and the settings MindSpore keeps under another form (a Conv2d's padding is its 4-tuple): torch's
                # value from the template, as for self.conv.padding; not a kept setting (its template falls back to
                # torch's default, which a subclass built with another value would read silently: a subclass's
                # construction does not record it), nor a name the class itself defines or assigns;
                # and the settings MindSpore holds with no torch value are flagged (a ConvTranspose2d's
                # output_padding), as on self.conv
                assigned = _self_assigned(node) | _own_names(node)
                surface = load_surface().layer(entry.torch)
                kept = surface.kept if surface is not None else {}  # torch's default where not recorded: as written
                attributes = {**_flagged_settings(entry), **attribute_paths(entry),
                              **{k: v for k, v in _derived(entry).items() if k not in kept}}
                attributes = {k: v for k, v in attributes.items() if k not in assigned}
                if attributes:
                    self._narrowed_blocks[id(node.body)] = ("self", attributes)
                return

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if id(node) in self._narrowed_blocks:
            self._narrowing.append(self._narrowed_blocks[id(node)])

    def leave_IndentedBlock(self, original_node, updated_node):
        if id(original_node) in self._narrowed_blocks:
            self._narrowing.pop()
        return updated_node

    def narrows(self, name: str) -> bool:
        """Is ``name`` narrowed here to torch layer classes (``if isinstance(m, nn.Conv2d):``, a layer subclass's
        ``self``)? Its attributes are then decided statically."""
        return any(narrowed == name for narrowed, _ in self._narrowing)

    def _narrowed(self, node: cst.Attribute, original: cst.Attribute):
        if self._narrowing and isinstance(node.value, cst.Name):
            for name, leaves in reversed(self._narrowing):
                if name == node.value.value:
                    leaf = leaves.get(node.attr.value)
                    if not leaf:
                        return None
                    if isinstance(leaf, _FlaggedSetting):  # no torch value on the Cell: loud, kept as written
                        if id(original) not in self._targets:
                            self.flag(original, "MP104", f"{leaf.layer}.{node.attr.value}: {leaf}", "", leaf.layer)
                        return None
                    if isinstance(leaf, _Template):  # a setting kept under another form, or not at all
                        if id(node) in self._targets:
                            return None  # m.inplace = True: a plain attribute, as written
                        return template_expr(leaf, node.value)
                    if leaf is _RUN_TIME:  # the layers narrowed to disagree: the object's class decides
                        if id(node) in self._targets:
                            return None
                        return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.layer_attribute"), args=[
                            cst.Arg(node.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                            cst.Arg(cst.SimpleString(repr(node.attr.value)))])
                    # a nested path: BatchNorm3d's weight is m.bn2d.gamma (MindSpore's BatchNorm3d wraps a 2d one)
                    *path, last = leaf.split(".")
                    owner = node.value
                    for part in path:
                        owner = cst.Attribute(value=owner, attr=cst.Name(part))
                    return node.with_changes(value=owner, attr=cst.Name(last))
        return None

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets.add(id(node.target))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # ``x.Function`` is an attribute name, never the ``Function`` a ``from torch.autograd import`` bound
        self.ctx.handled.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._module_getattr(node) is not None:
            self.ctx.handled.add(id(node.args[0].value))  # the module is read by name at run time: not flagged
        if isinstance(func, cst.Name) and func.value in _TYPE_CHECKS and len(node.args) == 2 \
                and not self.scope.lookup(func.value)[0]:
            second = node.args[1].value
            items = [e.value for e in second.elements] if isinstance(second, cst.Tuple) else [second]
            self._refs.update(id(item) for item in items)

    def _note_alias(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and self.scope.resolve_torch(node.value) is not None:
            self._refs.add(id(node.value))
            self._alias_values.add(id(node.value))
            if node.targets[0].target.value in self.ctx.fixed_aliases:
                self._fixed_values.add(id(node.value))
            self.ctx.handled.add(id(node.targets[0].target))  # the alias name is not itself a torch reference

    def _rewrite(self, original_node, updated_node):
        if id(original_node) not in self._refs:
            return updated_node
        qual = self.scope.resolve_torch(original_node)
        entry = self.ctx.registry.lookup(qual) if qual else None
        if entry is None and id(original_node) in self._alias_values and self._is_namespace(qual):
            # ``F = nn.functional``: the calls through F are mapped where written; the name holds an adapter
            self.ctx.handled.add(id(original_node))
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.namespace"),
                            args=[cst.Arg(cst.SimpleString(repr(qual)))])
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
        if self.ctx.options.conv1d_settings_unread and target in SETTINGS_LAYERS:
            target = SETTINGS_LAYERS[target]  # the class the project's builds are (TableCallTransform)
        if target is None or not entry.supported or (target.startswith(".") and id(original_node) not in
                                                     self._alias_values):
            return updated_node  # the table flags it
        if id(original_node) in self._alias_values and (
                id(original_node) not in self._fixed_values or target.startswith(".")):
            value = value_expr(self.ctx, qual)
            if entry.kind in ("layer", "function") and "mp_adapt" in code_of(value):
                # calls need torch's arguments mapped: left to TableCallTransform, whose value class or function
                # (TorchLeakyReLU, torch_relu) takes torch's arguments as the adapter does, decided statically
                return updated_node
            self.ctx.handled.add(id(original_node))
            self.ctx.converted_sites += 1
            return value
        self.ctx.handled.add(id(original_node))
        self.ctx.converted_sites += 1
        return self.ctx.target_expr(target)

    def _is_namespace(self, qual: str | None) -> bool:
        """A torch module holding mapping entries (torch.nn, torch.nn.functional, torch.linalg ...)."""
        if qual is None:
            return False
        if self._namespaces is None:
            self._namespaces = {e.torch.rsplit(".", 1)[0] for e in self.ctx.registry}
        return qual in self._namespaces

    def _module_getattr(self, node: cst.Call) -> str | None:
        """``getattr(torch.nn, name[, default])``, ``hasattr(torch.nn, name)``: the torch namespace (one holding mapping
        entries), else None."""
        func = node.func
        if not (isinstance(func, cst.Name) and (func.value, len(node.args)) in _NAMESPACE_READS
                and not any(a.keyword or a.star for a in node.args) and not self.scope.lookup(func.value)[0]):
            return None
        qual = self.scope.resolve_torch(node.args[0].value)
        if qual is None:
            return None
        if self._namespaces is None:
            self._namespaces = {e.torch.rsplit(".", 1)[0] for e in self.ctx.registry}
        return qual if qual in self._namespaces else None

    def leave_Call(self, original_node, updated_node):
        module = self._module_getattr(original_node)
        if module is None:
            return updated_node
        self.ctx.converted_sites += 1
        rest = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(updated_node.args) - 2 else a
                for i, a in enumerate(updated_node.args[1:])]
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        helper = "has" if original_node.func.value == "hasattr" else "attribute"
        return cst.Call(func=self.ctx.target_expr(f"mindport.runtime.adapt.{helper}"),
                        args=[cst.Arg(cst.SimpleString(repr(module)), comma=comma), *rest])

    def _patched_owner(self, original_node, updated_node):
        """``torch.nn.Module.add = add_module`` (a file's own function put on a torch class, then ``net.add(m)``;
        DmitryUlyanov/deep-image-prior) and its reads: the class is the MindSpore class its entry names
        (``nn.Cell.add = add_module``), so the patch reaches the converted objects and the line reads no torch."""
        qual = self.scope.resolve(original_node)
        patched = self.scope.patched
        if qual is None or qual not in patched:
            return None
        owner = self.scope.resolve_torch(original_node.value)
        entry = self.ctx.registry.lookup(owner) if owner else None
        target = entry.target(self.ctx.options.target) if entry is not None else None
        if not target or not target.startswith("mindspore.") or entry.kind not in ("layer", "attribute"):
            return None
        self.ctx.converted_sites += 1
        return updated_node.with_changes(value=self.ctx.target_expr(target))

    def leave_Attribute(self, original_node, updated_node):
        patched = self._patched_owner(original_node, updated_node)
        if patched is not None:
            return patched
        narrowed = self._narrowed(updated_node, original_node)
        if narrowed is not None:
            self.ctx.converted_sites += 1
            return narrowed
        return self._rewrite(original_node, updated_node)

    def leave_Name(self, original_node, updated_node):
        return self._rewrite(original_node, updated_node)


_RUN_TIME = object()  # a narrowed attribute the layers disagree on: mindport.runtime.adapt.layer_attribute


class _Template(str):
    """A narrowed member MindSpore keeps under another form (object_surface.toml's ``derived`` and ``kept``): the
    expression over the layer (``getattr({layer}, 'inplace', False)``)."""


class _FlaggedSetting(str):
    """A setting of a layer subclass's ``self`` whose torch value the Cell does not hold (object_surface.toml's
    ``flagged``, methods left out): the reason; ``layer`` the torch class."""

    layer: str = ""


def _flagged_settings(entry) -> dict[str, _FlaggedSetting]:
    surface = load_surface()
    layer = surface.layer(entry.torch)
    found = {}
    for name, reason in (layer.flagged.items() if layer is not None else ()):
        if name in surface.methods or name.startswith("_") or name in entry.weights:
            continue
        found[name] = _FlaggedSetting(reason)
        found[name].layer = entry.torch
    return found


def _own_names(node: cst.ClassDef) -> set[str]:
    """The methods (and nested classes) a class body defines. Not its class attributes: torch's layer __init__
    sets its settings on the instance, over a class attribute of the same name (``class Wide(nn.Linear):
    in_features = 7`` still reads the constructor's value), so those reads stay the layer's."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return {stmt.name.value for stmt in body if isinstance(stmt, (cst.FunctionDef, cst.ClassDef))}


def _derived(entry) -> dict[str, _Template]:
    layer = load_surface().layer(entry.torch)
    return {name: _Template(t) for name, t in layer.derived.items()} if layer is not None else {}


def _narrowing(maps: list[dict[str, str]]) -> dict:
    """torch attribute -> MindSpore path when every layer narrowed to agrees (``weight`` -> ``gamma`` for BatchNorm1d
    and 2d), or _RUN_TIME when they do not (BatchNorm3d's ``weight`` is ``bn2d.gamma``, GroupNorm's ``gamma``, a
    LayerNorm's stays ``weight``...)."""
    keys = {key for m in maps for key in m}
    return {key: values.pop() if len(values := {m.get(key) for m in maps}) == 1 else _RUN_TIME for key in keys}


def _isinstance_test(test: cst.BaseExpression):
    """(name, class expressions) for ``isinstance(m, X)``, ``isinstance(m, (X, Y))`` and ``isinstance(m, X) or
    isinstance(m, Y)`` (one name throughout), else None."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        left, right = _isinstance_test(test.left), _isinstance_test(test.right)
        if left is None or right is None or left[0] != right[0]:
            return None
        return left[0], left[1] + right[1]
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
        return None
    second = test.args[1].value
    return test.args[0].value.value, [e.value for e in second.elements] if isinstance(second, cst.Tuple) else [second]


def class_name_subject(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x.__class__.__name__`` / ``type(x).__name__`` -> ``x``, any expression (``self.head``, ``self.seq[1:]``)."""
    if not (isinstance(expr, cst.Attribute) and expr.attr.value == "__name__"):
        return None
    owner = expr.value
    if isinstance(owner, cst.Attribute) and owner.attr.value == "__class__":
        return owner.value
    if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "type" \
            and len(owner.args) == 1 and owner.args[0].keyword is None and not owner.args[0].star:
        return owner.args[0].value
    return None


def class_name_of(expr: cst.BaseExpression) -> str | None:
    """``m.__class__.__name__`` / ``type(m).__name__`` -> ``m``."""
    if not (isinstance(expr, cst.Attribute) and expr.attr.value == "__name__"):
        return None
    owner = expr.value
    if isinstance(owner, cst.Attribute) and owner.attr.value == "__class__" and isinstance(owner.value, cst.Name):
        return owner.value.value
    if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "type" \
            and len(owner.args) == 1 and isinstance(owner.args[0].value, cst.Name):
        return owner.args[0].value.value
    return None


def _string(expr: cst.BaseExpression) -> str | None:
    return expr.evaluated_value if isinstance(expr, cst.SimpleString) else None


def _class_name_comparison(test: cst.BaseExpression):
    """(name expression, text, how) for ``cn.find('X') != -1`` (also ``>= 0``, ``> -1``), ``'X' in cn``,
    ``cn.startswith('X')`` and ``cn == 'X'``; how is "contains", "prefix" or "equal"."""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" \
            and len(test.args) == 1 and _string(test.args[0].value) is not None:
        return test.func.value, _string(test.args[0].value), "prefix"
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    left = test.left
    if isinstance(op, cst.In) and _string(left) is not None:
        return right, _string(left), "contains"
    if isinstance(op, cst.Equal) and _string(right) is not None:
        return left, _string(right), "equal"
    if isinstance(left, cst.Call) and isinstance(left.func, cst.Attribute) and left.func.attr.value == "find" \
            and len(left.args) == 1 and _string(left.args[0].value) is not None:
        negative = isinstance(right, cst.UnaryOperation) and isinstance(right.operator, cst.Minus) \
            and isinstance(right.expression, cst.Integer)
        bound = right.value if isinstance(right, cst.Integer) else "-" + right.expression.value if negative else None
        if (isinstance(op, (cst.NotEqual, cst.GreaterThan)) and bound == "-1") \
                or (isinstance(op, cst.GreaterThanEqual) and bound == "0"):
            return left.func.value, _string(left.args[0].value), "contains"
    return None


def literal_namespace_reads(module: cst.Module) -> cst.Module:
    """``getattr(F, 'tanh')`` with a torch module imported at the file's top level (``import torch.nn.functional as
    F``, ``from torch import nn``) and a plain string literal naming an attribute: ``F.tanh``, which is what Python
    reads there, so every rule sees the torch API as written. Two arguments only (with a default, the name may be
    missing); a ``__name`` is left (inside a class, ``F.__name`` would be mangled); a file that defines its own
    ``getattr`` is left as written."""
    finder = _GetattrUses()
    walk(module, finder)  # every file passes here: the read-only walk, not LibCST's rebuilding visit
    if finder.probes and not finder.probe_defined:
        backends = _torch_backends_names(module)
        if backends:
            module = transform(module, _BackendsProbe(backends))
    if not finder.calls or finder.defined:
        return module
    roots = _torch_import_names(module)
    return transform(module, _LiteralGetattr(roots)) if roots else module


# torch.backends' submodules that ``hasattr(torch.backends, name)`` finds after ``import torch`` (torch 2.13, over
# pkgutil.iter_modules(torch.backends.__path__): xeon, xnnpack, _coreml and _nnapi are not loaded, so False)
_TORCH_BACKENDS = frozenset({"cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps",
                             "nnpack", "openmp", "opt_einsum", "python_native", "quantized"})


def _torch_backends_names(module: cst.Module) -> frozenset[str]:
    """The dotted names the file's top-level imports make ``torch.backends``: ``torch.backends`` (``import torch``),
    ``th.backends`` (``import torch as th``), ``backends`` / ``tb`` (``from torch import backends``, ``import
    torch.backends as tb``)."""
    names = set()
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    dotted = _dotted(alias.name) or ""
                    if alias.asname is None and dotted.split(".")[0] == "torch":
                        names.add("torch.backends")
                    elif alias.asname is not None and dotted in ("torch", "torch.backends"):
                        bound = alias.asname.name.value
                        names.add(f"{bound}.backends" if dotted == "torch" else bound)
            elif isinstance(stmt, cst.ImportFrom) and not stmt.relative and stmt.module is not None \
                    and _dotted(stmt.module) == "torch" and not isinstance(stmt.names, cst.ImportStar):
                for alias in stmt.names:
                    if alias.name.value == "backends":
                        names.add(alias.asname.name.value if alias.asname else "backends")
    return frozenset(names)


class _BackendsProbe(cst.CSTTransformer):
    """``hasattr(torch.backends, "mps")``, the probe before ``torch.backends.mps.is_available()`` (which the device
    rule answers False): torch's own answer, a constant, so the line reads no torch (the read of ``torch.backends``
    was MP104 and kept the port's ``import torch``: zeroling147/mini-transformer's device chooser)."""

    def __init__(self, backends: frozenset[str]) -> None:
        super().__init__()
        self.backends = backends

    def leave_Call(self, original_node, updated_node):
        func, args = updated_node.func, updated_node.args
        if not (isinstance(func, cst.Name) and func.value == "hasattr") or len(args) != 2 \
                or any(a.keyword or a.star for a in args) or not isinstance(args[1].value, cst.SimpleString) \
                or _dotted(args[0].value) not in self.backends:
            return updated_node
        name = args[1].value.evaluated_value
        return cst.Name(str(name in _TORCH_BACKENDS), lpar=updated_node.lpar, rpar=updated_node.rpar)


class _GetattrUses(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls = self.defined = self.probes = self.probe_defined = False

    def visit_Call(self, node):
        self.calls = self.calls or (isinstance(node.func, cst.Name) and node.func.value == "getattr")
        self.probes = self.probes or (isinstance(node.func, cst.Name) and node.func.value == "hasattr")

    def visit_FunctionDef(self, node):
        self.defined = self.defined or node.name.value == "getattr"
        self.probe_defined = self.probe_defined or node.name.value == "hasattr"

    def visit_AssignTarget(self, node):
        self.defined = self.defined or (isinstance(node.target, cst.Name) and node.target.value == "getattr")
        self.probe_defined = self.probe_defined or (isinstance(node.target, cst.Name)
                                                    and node.target.value == "hasattr")


def _torch_import_names(module: cst.Module) -> frozenset[str]:
    """The names the file's top-level imports bind to torch modules (``torch``, ``F``, ``nn``)."""
    return frozenset(torch_imports(module))


def torch_imports(module: cst.Module) -> dict[str, str]:
    """The names the file's top-level imports bind to torch modules or functions -> their dotted torch names
    (``F`` -> ``torch.nn.functional``, ``grad`` -> ``torch.autograd.grad``; ``import torch.nn`` binds ``torch``)."""
    names: dict[str, str] = {}
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    dotted = _dotted(alias.name)
                    if dotted and dotted.split(".")[0] == "torch":
                        if alias.asname is not None:
                            names[alias.asname.name.value] = dotted
                        else:
                            names["torch"] = "torch"
            elif isinstance(stmt, cst.ImportFrom) and not stmt.relative and stmt.module is not None \
                    and (_dotted(stmt.module) or "").split(".")[0] == "torch" and not isinstance(stmt.names, cst.ImportStar):
                for alias in stmt.names:
                    bound = alias.asname.name.value if alias.asname else alias.name.value
                    names[bound] = f"{_dotted(stmt.module)}.{_dotted(alias.name)}"
    return names


def _dotted(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class _LiteralGetattr(cst.CSTTransformer):
    def __init__(self, roots: frozenset[str]) -> None:
        super().__init__()
        self.roots = roots

    def leave_Call(self, original_node, updated_node):
        func, args = updated_node.func, updated_node.args
        if not (isinstance(func, cst.Name) and func.value == "getattr") or len(args) != 2 \
                or any(a.keyword or a.star for a in args) or not isinstance(args[1].value, cst.SimpleString):
            return updated_node
        name = args[1].value.evaluated_value
        owner = _dotted(args[0].value)
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__") \
                or owner is None or owner.split(".")[0] not in self.roots:
            return updated_node
        return cst.Attribute(value=args[0].value, attr=cst.Name(name), lpar=updated_node.lpar, rpar=updated_node.rpar)
