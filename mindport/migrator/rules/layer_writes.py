"""The converter rule LayerWriteTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/layer_writes.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.mappings.surface import load_surface, load_writes
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import read


class LayerWriteTransform(Rule):
    """A layer's setting written after construction: ``m.eps = 1e-3``, ``m.momentum = 0.03`` (YOLOv5's
    ``initialize_weights`` over ``model.modules()``), ``self.drop.p = 0.1`` (a drop-rate schedule),
    ``m.negative_slope = 0.2``.

    torch reads most settings when ``forward`` runs (``F.batch_norm(x, ..., self.momentum, self.eps)``); MindSpore
    bakes many of them into primitives in ``__init__`` (a BatchNorm2d's ``bn_infer`` keeps ``epsilon``), so the
    write as written changes nothing there: a silent difference (6.6e-4 on a BatchNorm2d's output for
    ``eps = 1e-3``), and a momentum written as torch's value is also 1 - MindSpore's. What each write of each mapped
    layer class becomes is measured against torch (``mindport/mappings/data/surface/layer_writes.toml``, by
    ``python -m mindport.proofs.writes --write``):

    * ``same``: the write as written gives torch's behaviour (a ReLU's ``inplace``, a Linear's ``in_features``,
      which neither framework reads again): left as written;
    * ``converted``: ``mp_adapt.set_layer_attribute(m, 'eps', 1e-3)``: the layer built again with its torch settings
      and the new value through the entry's argument mapping (``momentum`` -> ``1 - momentum``), its primitives
      moved onto the Cell (its Parameters stay); by the object's class at run time, so one call serves a loop over
      ``modules()`` whatever its ``isinstance`` / ``type(m) is`` tests say; a value MindSpore has no form for (a
      BatchNorm's ``momentum = None``, torch's cumulative average) raises there with the reason;
    * ``flagged`` (MP104) where the receiver's class is known and no conversion gives torch's behaviour (a
      BatchNorm's ``track_running_stats``): pass it to the constructor.

    A bias given to (or taken from) a Linear or a convolution after construction (``self.decoder =
    nn.Linear(h, vocab, bias=False)`` then ``self.decoder.bias = nn.Parameter(torch.zeros(vocab))``, BERT's prediction
    head; ``m.bias = None``) goes through the accessor too: torch's forward reads ``self.bias`` on every call, while
    MindSpore's Dense and convolutions add it only when ``has_bias`` was set in ``__init__`` (the written bias was
    never added; ``None`` on a layer built with one failed in ``BiasAdd``); the accessor switches ``has_bias`` with it.

    The class test such a loop writes, ``type(m) is nn.BatchNorm2d``, compares with the runtime adapter where the
    class stays a value (``mp_adapt.api("torch.nn.BatchNorm2d")``, a subclass of MindSpore's class that compares
    equal to it): ``is`` there becomes ``==`` (``is not``: ``!=``), which is what ``is`` meant for torch's class
    (measured: ``type(m) is mp_adapt.api("torch.nn.BatchNorm2d")`` was False for every BatchNorm2d, so YOLOv5's
    branch never ran).

    A receiver whose class is not known (a loop variable, a parameter) goes through the accessor when the setting's
    name is one some mapped layer's write needs converted (``eps``, ``momentum``, ``p``, ``stride``...); a plain
    object there (a config) takes the write as written. A name the function binds by assignment
    (``args = parser.parse_args()`` then ``args.momentum = 0.9``) or a configuration's usual name (``args``, ``cfg``,
    ``opt``) is left as written: a configuration's setting, not a layer's. ``self.X = v`` in a class's own methods, and writes inside
    ``forward``, are left as written (a static graph compiles ``forward``)."""

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                def initialize_weights(model):
                    for m in model.modules():
                        if type(m) is nn.BatchNorm2d:
                            m.eps = 1e-3
                            m.momentum = 0.03
                        elif type(m) in [nn.LeakyReLU, nn.ReLU]:
                            m.inplace = True
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn
                from mindport.runtime import adapt as mp_adapt


                class TorchLayerType(type):
                    \"\"\"isinstance, issubclass and == of a torch layer class used as a value: those of MindSpore's class.\"\"\"

                    def __init__(cls, name, bases, namespace, **kwargs):
                        super().__init__(name, bases, namespace, **kwargs)
                        if '_mp_torch_name' in namespace:
                            cls.__name__ = namespace['_mp_torch_name']

                    def __instancecheck__(cls, obj):
                        if '_mp_value_class' in vars(cls):
                            return isinstance(obj, cls.__bases__[0])
                        return super().__instancecheck__(obj)

                    def __subclasscheck__(cls, sub):
                        if '_mp_value_class' in vars(cls):
                            return issubclass(sub, cls.__bases__[0])
                        return super().__subclasscheck__(sub)

                    def __eq__(cls, other):
                        if '_mp_value_class' in vars(cls):
                            return other is cls or other is cls.__bases__[0]
                        return super().__eq__(other)

                    def __hash__(cls):
                        return hash(cls.__bases__[0]) if '_mp_value_class' in vars(cls) else super().__hash__()

                    @property
                    def __signature__(cls):
                        if '_mp_value_class' not in vars(cls):
                            return None
                        import inspect

                        init = inspect.signature(cls.__init__)
                        return init.replace(parameters=list(init.parameters.values())[1:])


                def make_batchnorm2d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
                    \"\"\"torch.nn.BatchNorm2d's parameters, building MindSpore's nn.BatchNorm2d.\"\"\"
                    return nn.BatchNorm2d(num_features=num_features, eps=float(eps), momentum=1 - (momentum), affine=affine, use_batch_statistics=None if track_running_stats else True)


                class TorchBatchNorm2d(nn.BatchNorm2d, metaclass=TorchLayerType):
                    \"\"\"torch.nn.BatchNorm2d as a value: called, make_batchnorm2d(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'BatchNorm2d'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchBatchNorm2d:
                            return make_batchnorm2d(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
                        \"\"\"torch.nn.BatchNorm2d's parameters.\"\"\"
                        super().__init__(num_features=num_features, eps=float(eps), momentum=1 - (momentum), affine=affine, use_batch_statistics=None if track_running_stats else True)
                        self.affine = affine


                def make_leakyrelu(negative_slope=0.01, inplace=False):
                    \"\"\"torch.nn.LeakyReLU's parameters, building MindSpore's nn.LeakyReLU (inplace: mp_nn.InplaceLeakyReLU).\"\"\"
                    if inplace:
                        return mp_nn.InplaceLeakyReLU(alpha=negative_slope)
                    return nn.LeakyReLU(alpha=negative_slope)


                class TorchLeakyReLU(nn.LeakyReLU, metaclass=TorchLayerType):
                    \"\"\"torch.nn.LeakyReLU as a value: called, make_leakyrelu(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'LeakyReLU'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchLeakyReLU:
                            return make_leakyrelu(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, negative_slope=0.01, inplace=False):
                        \"\"\"torch.nn.LeakyReLU's parameters.\"\"\"
                        if inplace:
                            mp_nn.become(self, mp_nn.InplaceLeakyReLU)
                            mp_nn.InplaceLeakyReLU.__init__(self, alpha=negative_slope)
                            self.inplace = inplace
                            return
                        super().__init__(alpha=negative_slope)
                        self.inplace = inplace


                def make_relu(inplace=False):
                    \"\"\"torch.nn.ReLU's parameters, building MindSpore's nn.ReLU (inplace: mp_nn.InplaceReLU).\"\"\"
                    if inplace:
                        return mp_nn.InplaceReLU()
                    return nn.ReLU()


                class TorchReLU(nn.ReLU, metaclass=TorchLayerType):
                    \"\"\"torch.nn.ReLU as a value: called, make_relu(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'ReLU'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchReLU:
                            return make_relu(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, inplace=False):
                        \"\"\"torch.nn.ReLU's parameters.\"\"\"
                        if inplace:
                            mp_nn.become(self, mp_nn.InplaceReLU)
                            mp_nn.InplaceReLU.__init__(self)
                            self.inplace = inplace
                            return
                        super().__init__()
                        self.inplace = inplace


                def initialize_weights(model):
                    for m in (_cell for _, _cell in model.cells_and_names()):
                        if type(m) == TorchBatchNorm2d:
                            mp_adapt.set_layer_attribute(m, 'eps', 1e-3)
                            mp_adapt.set_layer_attribute(m, 'momentum', 0.03)
                        elif type(m) in [TorchLeakyReLU, TorchReLU]:
                            m.inplace = True
            """,
            note="YOLOv5's initialize_weights: eps and momentum are baked into MindSpore's BatchNorm primitives; "
                 "inplace is a plain attribute in both frameworks.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._functions: list[str] = []
        self._assigned: list[frozenset] = []  # per enclosing function (and the module): names an Assign binds
        self._split: set[int] = set()  # unpacking writes made one write per target (their lines split)

    def visit_Module(self, node: cst.Module) -> None:
        self._assigned.append(_assigned_names(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node.name.value)
        self._assigned.append(_assigned_names(node.body))

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        self._assigned.pop()
        return updated_node

    def leave_Comparison(self, original_node, updated_node):
        """``type(m) is nn.BatchNorm2d`` -> ``type(m) == TorchBatchNorm2d`` (the file's value class, or the runtime
        adapter ``mp_adapt.api("torch.nn.BatchNorm2d")``; outside ``forward``: a static graph is not given a class
        comparison it has not been before)."""
        if "forward" in self._functions or "construct" in self._functions:
            return updated_node
        targets = []
        for item in updated_node.comparisons:
            if isinstance(item.operator, (cst.Is, cst.IsNot)) and (
                    self._class_value(item.comparator) or self._class_value(updated_node.left)):
                op = cst.Equal if isinstance(item.operator, cst.Is) else cst.NotEqual
                item = item.with_changes(operator=op(whitespace_before=item.operator.whitespace_before,
                                                     whitespace_after=item.operator.whitespace_after))
            targets.append(item)
        if all(a is b for a, b in zip(targets, updated_node.comparisons)):
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(comparisons=targets)

    def _class_value(self, node: cst.BaseExpression) -> bool:
        """The runtime adapter of a torch class, or the file's value class standing for one (``TorchBatchNorm2d``,
        factories.value_class_def), which compares equal to MindSpore's class as the adapter does."""
        return _is_adapter(node) or isinstance(node, cst.Name) and node.value in self.ctx.value_classes

    def leave_Assign(self, original_node, updated_node):
        if len(original_node.targets) != 1 or self.ctx.options.target != "nn" \
                or "forward" in self._functions or "construct" in self._functions:
            return updated_node
        target = original_node.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)):
            return self._unpacked_writes(original_node, updated_node)
        if not isinstance(target, cst.Attribute):
            return updated_node
        if not self._converts(original_node, target):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Expr(self._setter(updated_node.targets[0].target, updated_node.value))

    def _unpacked_writes(self, original_node, updated_node):
        """``m.dilation, m.padding, m.stride = (d, d), (d, d), (s, s)`` (a backbone's layers made dilated in a loop
        over ``named_modules()``): when one of the attributes written is a setting whose write is converted, the
        statement becomes one write per target, in order, each through :meth:`leave_Assign`'s form (the accessor for
        a converted setting, the plain write otherwise): a tuple of calls is no assignment target (the converted
        file did not parse and was copied unchanged). Python evaluates the whole right-hand side before it assigns
        any target, so the split is made only when the value is a tuple or list display of the same length whose
        items read no attribute, item or call (literals, names, tuples of them); another form (a swap
        ``m.padding, m.dilation = m.dilation, m.padding``, a call's result unpacked) is left as written and
        flagged (MP104): write each setting on its own line."""
        targets = [e.value for e in original_node.targets[0].target.elements]
        attributes = [t for t in targets if isinstance(t, cst.Attribute)]
        converted = [t for t in attributes if self._converts(original_node, t, flag=False)]
        if not converted:
            return updated_node
        value = original_node.value
        new_targets = [e.value for e in updated_node.targets[0].target.elements]
        plain = all(isinstance(t, (cst.Attribute, cst.Name)) for t in targets)
        if not (plain and isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(targets)
                and all(not isinstance(e, cst.StarredElement) and _plain_value(e.value) for e in value.elements)):
            self.flag(original_node, "MP104", "a layer setting written in an unpacking assignment whose value cannot "
                      "be split (" + ", ".join(t.attr.value for t in converted) + "): MindSpore bakes it into the "
                      "layer's primitives, the plain write changes nothing", "write each setting on its own line")
            return updated_node
        statements = []
        for target, new_target, element in zip(targets, new_targets, updated_node.value.elements):
            if any(target is c for c in converted):
                statements.append(cst.Expr(self._setter(new_target, element.value)))
            else:
                statements.append(cst.Assign(targets=[cst.AssignTarget(new_target)], value=element.value))
        self.ctx.converted_sites += len(converted)
        self._split.add(id(original_node))
        return cst.FlattenSentinel(statements)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        """A line whose unpacking write :meth:`_unpacked_writes` split: one statement per line."""
        if not any(id(s) in self._split for s in original_node.body) or len(updated_node.body) < 2:
            return updated_node
        lines = [cst.SimpleStatementLine(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                 for s in updated_node.body]
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        lines[-1] = lines[-1].with_changes(trailing_whitespace=updated_node.trailing_whitespace)
        return cst.FlattenSentinel(lines)

    def _setter(self, target: cst.Attribute, value: cst.BaseExpression) -> cst.Call:
        """``mp_adapt.set_layer_attribute(receiver, 'name', value)``."""
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.set_layer_attribute"), args=[
            cst.Arg(target.value, comma=_comma()),
            cst.Arg(cst.SimpleString(repr(target.attr.value)), comma=_comma()),
            cst.Arg(value)])

    def _converts(self, original_node, target: cst.Attribute, flag: bool = True) -> bool:
        """Whether the write of ``target`` goes through the accessor (a flagged write is flagged, when ``flag``)."""
        name = target.attr.value
        receiver = target.value
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return False
        entries = self._known(receiver)
        if name in _SWITCHED:  # a bias given or taken away after construction: the accessor switches has_bias
            return any(e.torch in _SWITCHED[name] for e in entries) if entries is not None \
                else self._unknown_ok(receiver)
        if entries is not None:  # the class is known: decided now
            outcomes = [load_writes().get(e.torch, {}).get(name) for e in entries]
            flagged = [(e, o) for e, o in zip(entries, outcomes) if o is not None and o[0] == "flagged"]
            if flagged:
                entry, (_, why) = flagged[0]
                if flag:
                    self.flag(original_node, "MP104", f"writing {entry.torch}.{name} after construction: {why}", "",
                              entry.torch)
                return False
            return any(o is not None and o[0] == "converted" for o in outcomes)
        return name in _converted_names() and self._unknown_ok(receiver)

    def _known(self, receiver: cst.BaseExpression):
        """The layer entries the receiver may be (the layer-parameter rule's bindings: ``self.bn``, a local name
        bound to a construction), None when not known."""
        from mindport.migrator.rules.layer_parameters import _RUN_TIME, _Layer

        for rule in self.runner.rules:  # type: ignore[union-attr]
            candidates = getattr(rule, "_candidates", None)
            if candidates is None or not hasattr(rule, "knows"):
                continue
            found = candidates(receiver)
            if found and any(c == _RUN_TIME for c in found if isinstance(c, str)):
                return None  # a layer whose class is passed in: known when the code runs
            if found and all(isinstance(c, _Layer) for c in found):
                return [c.entry for c in found]
            if found:
                return []  # a class of the file's own, a container: not a mapped layer's setting
        return None

    def _unknown_ok(self, receiver: cst.BaseExpression) -> bool:
        """A receiver of unknown class worth the accessor: a name or a chain of attributes and items ending at one
        that may hold a layer: a loop variable (``for m in model.modules()``), a parameter (an ``apply`` function's
        ``m``); not a name the function (or the module) binds by assignment (``args = parser.parse_args()``,
        ``cfg = get_cfg()``: a write there is a configuration's) nor a configuration's usual name (``args``,
        ``opt``, ``cfg``, ``config``, ``hparams``)."""
        node = receiver
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        if not isinstance(node, cst.Name) or node.value in _CONFIG_NAMES:
            return False
        return not any(node.value in names for names in self._assigned[-1:])


# a Parameter written on a layer whose MindSpore class switches it with a flag fixed in __init__ (Dense's and the
# convolutions' ``has_bias``): the layers whose write goes through the accessor, by torch name
_SWITCHED = {"bias": frozenset(f"torch.nn.{c}" for c in ("Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                                                         "ConvTranspose2d", "ConvTranspose3d"))}

_CONFIG_NAMES = frozenset({"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "options", "flags",
                           "FLAGS", "settings", "params", "kwargs"})


def _plain_value(node: cst.BaseExpression) -> bool:
    """A value whose evaluation reads no attribute, item or call: literals, names, tuples/lists and arithmetic of
    them (what an unpacking write's split may evaluate one item at a time)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(not isinstance(e, cst.StarredElement) and _plain_value(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation):
        return _plain_value(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return _plain_value(node.left) and _plain_value(node.right)
    return False


def _assigned_names(block) -> frozenset:
    """The plain names an ``Assign`` / ``AnnAssign`` in the block binds (nested blocks included, nested functions
    and classes not)."""
    names: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name) and node.value is not None:
                names.add(node.target.value)

    body = block.body if isinstance(block, cst.Module) else getattr(block, "body", ())
    for stmt in body if isinstance(body, (list, tuple)) else ():
        read(stmt, Collect())
    return frozenset(names)


def _is_adapter(node: cst.BaseExpression) -> bool:
    """``mp_adapt.api("torch.nn.X")``: the runtime adapter of a torch class."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "api" \
        and isinstance(node.func.value, cst.Name) and node.func.value.value.endswith("adapt")


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


_NAMES: list[frozenset] = []


def _converted_names() -> frozenset:
    """The settings some mapped layer's write needs converted or flagged (``eps``, ``momentum``, ``p``), less the
    names common on other objects (``alpha``, ``k``: object_surface.toml's common_names)."""
    if not _NAMES:
        names = {n for table in load_writes().values() for n, (end, _) in table.items() if end != "same"}
        _NAMES.append(frozenset(names - load_surface().common_names))
    return _NAMES[0]
