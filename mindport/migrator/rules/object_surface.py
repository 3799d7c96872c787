"""The converter rule ObjectSurfaceTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/object_surface.md shows both."""
from __future__ import annotations

import libcst as cst
import libcst.matchers  # noqa: F401  (cst.matchers)

from mindport.mappings.surface import load_surface
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.native_facts import unread_bindings
from mindport.migrator.rules.references import class_name_subject
from mindport.migrator.syntax import pure_read
from mindport.migrator.scopes import dotted_name, operand_kind, receiver_kind
from mindport.migrator.table import adapter_expr
from mindport.migrator.walk import find_all, read

_PRIVATE_DICTS = {"_modules": "_cells", "_parameters": "_params"}  # nn.Module's -> nn.Cell's (same items)
# nn.Module's _buffers read: register_buffer made each persistent buffer a non-trainable Parameter, which the Cell's own
# _buffers (its non-persistent buffers only) lacks; read as mindport.runtime.containers.named_buffers(m, recurse=False)
# in a dict. A write through it (m._buffers[k] = v, .update/.pop/...) stays the Cell's _buffers (a MindSpore buffer).
_BUFFERS = "_buffers"
_DICT_WRITES = frozenset({"update", "pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__"})


_COMPILED = ("construct", "forward")  # the method GRAPH_MODE compiles (torch's name before the rename)


class _BaseConstructCalls(cst.CSTTransformer):
    """In one method, ``Base.construct(self, ...)`` (a base class's construct called as a function given the Cell) ->
    ``self._mp_Base_construct(...)``; ``kept`` collects the attributes to bind in the class body."""

    def __init__(self, kept: dict[str, cst.BaseExpression], cls: str = "") -> None:
        super().__init__()
        self.kept = kept
        self.cls = cls
        self.receiver = ""
        self.method_name = ""
        self.explicit_super = 0

    def method(self, function: cst.FunctionDef) -> cst.FunctionDef:
        params = function.params.params
        if not params:
            return function
        self.receiver = params[0].name.value
        self.method_name = function.name.value
        if any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
               for d in function.decorators):
            self.receiver = ""
        return function.visit(self)

    def visit_ClassDef(self, node) -> bool:
        return False  # a nested class has its own

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        args = updated_node.args
        if not (isinstance(func, cst.Attribute) and func.attr.value == "construct" and args
                and isinstance(args[0].value, cst.Name) and args[0].value.value == self.receiver
                and args[0].keyword is None and not args[0].star):
            return updated_node
        owner = dotted_name(func.value)
        if owner is None or owner in (self.receiver, "super"):
            return updated_node
        attr = "_mp_" + owner.replace(".", "_") + "_construct"
        self.kept[attr] = func
        rest = list(args[1:])
        return updated_node.with_changes(
            func=cst.Attribute(value=cst.Name(self.receiver), attr=cst.Name(attr)),
            args=rest)


    def leave_Attribute(self, original_node, updated_node):
        """``super().construct`` (or any ``super().m`` in construct, the code GRAPH_MODE compiles) ->
        ``super(A, self).construct``: MindSpore compiles a zero-argument ``super()`` as ``super(type(self), self)``, so
        in a subclass that does not override construct (or a layer given weight_norm) the base's
        ``super().construct(x)`` called itself for ever; ``super(A, self)`` is the first class named ``A`` in the
        MRO, as Python means. Elsewhere (``__init__``, ``set_train``: Python runs them) ``super()`` stays."""
        call = updated_node.value
        if not (self.cls and self.receiver and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
                and call.func.value == "super" and not call.args
                and (updated_node.attr.value in _COMPILED or self.method_name in _COMPILED)):
            return updated_node
        self.explicit_super += 1
        return updated_node.with_changes(value=call.with_changes(args=[
            cst.Arg(cst.Name(self.cls), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.Name(self.receiver))]))


def _self_member(expr: cst.BaseExpression) -> bool:
    """``self.weight``, ``self.fc.weight`` (or its ``.data``): an attribute chain from ``self``."""
    expr = _without_data(expr)
    if not isinstance(expr, cst.Attribute):
        return False
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value == "self"


def _without_data(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``p`` of ``p.data``; anything else as it is."""
    return expr.value if isinstance(expr, cst.Attribute) and expr.attr.value == "data" else expr


def _same_tensor(expr: cst.BaseExpression, name: cst.Name) -> bool:
    """``h`` or ``h.data``."""
    expr = _without_data(expr)
    return isinstance(expr, cst.Name) and expr.value == name.value


class ObjectSurfaceTransform(Rule):
    """What model code does with Module, layer, Parameter and Tensor objects, beyond the functions it calls (torch's
    object surface, ``mindport/mappings/data/surface/object_surface.toml``):

    * an explicit base-class call in a torch layer subclass, ``nn.Conv2d.__init__(self, c, c, 3)``: the runtime
      adapter class of the layer's entry (the class's base after conversion) maps torch's arguments,
      ``mp_adapt.api("torch.nn.Conv2d").__init__(self, c, c, 3)``; ``nn.Conv2d.forward(self, x)`` is the MindSpore
      class's construct, kept in the class as ``_mp_nn_Conv2d_construct = nn.Conv2d.construct`` and called through
      ``self`` (``self._mp_nn_Conv2d_construct(x)``; so is a model's own ``Base.forward(self, x)``): GRAPH_MODE
      compiles a method called through ``self`` as graph code, but reads the attributes of a Cell handed to a function
      (``nn.Dense.construct(self, x)``) with Python's getattr while compiling, which froze a reparametrised weight
      (weight_norm's, spectral_norm's) into the graph as a constant; ``super().forward(x)`` (any zero-argument
      ``super()`` in construct) is ``super(A, self).construct(x)``, ``A`` the class it is written in:
      GRAPH_MODE compiles ``super()`` as ``super(type(self), self)``, so in a subclass that does not override the
      method (or a layer given weight_norm) the base's construct called itself for ever; ``nn.Linear.train(self, mode)`` its ``set_train(self, mode)``, and
      ``nn.Module.__init__(self)`` is ``nn.Cell.__init__(self)``, ``nn.Linear.reset_parameters(self)`` is
      ``mp_nn.reset_parameters(self, base=True)`` (the parameters drawn again as torch draws them; and
      ``conv.reset_parameters()`` is ``mp_nn.reset_parameters(conv)``, ``bn.reset_running_stats()``
      ``mp_nn.reset_running_stats(bn)``, the running statistics back to zeros and ones); another member the
      MindSpore class lacks is flagged MP104 with the reason;
    * ``x.requires_grad`` read: a MindSpore Tensor has no such attribute (a Parameter has),
      ``mp_tensor.requires_grad(x)`` reads the Parameter's flag, a tensor's own (set by ``requires_grad_``) or
      False;
    * a Tensor attribute a MindSpore Tensor lacks (object_surface.toml's Tensor members): its value where it has
      one (``x.is_sparse`` -> ``False``, ``x.is_cpu``, ``x.layout``), MP104 with the reason where it has none
      (``x.grad_fn``, ``x.is_leaf``); names common elsewhere (``layout``) only on a receiver known to be a tensor;
    * ``conv._conv_forward(x, weight, bias)``: ``mp_nn.conv_forward(conv, x, weight, bias)``, the layer's
      convolution with another kernel (a Conv2d's, by the object's class);
    * ``m._modules`` / ``m._parameters``: the Cell's ``_cells`` / ``_params`` (the same name -> object dicts),
      unless the file assigns that attribute itself (``self._parameters = {}`` in a class of its own: the
      program's attribute, read as written);
    * ``type(m).__name__`` / ``m.__class__.__name__``: ``mp_adapt.class_name(m)``, torch's class name for a
      MindSpore layer (a ``Dense`` is ``"Linear"``), so ``classname.find('Linear') != -1`` still holds;
    * ``with torch.device("cuda"):`` / ``with x.device:`` (the default device for the tensors made inside):
      placement is global in MindSpore, the block runs as it is;
    * a member some mapped layer keeps under another name or form (``running_var``, a BatchNorm's ``weight``, a
      pool's ``ceil_mode`` the Cell does not keep), read on a function's parameter whose class nothing says
      (``def fuse_bn(conv, bn): bn.running_var``) or on a layer reached through its attributes and items (a model
      passed in: ``gpt.decoder.embedding.weight``), or on an item of the model's own container at an index the text
      does not fix (``self.stem[i + 1].weight`` outside ``forward``: a conv or a BatchNorm by the run), or deeper in
      a member no rule of the file knows the class of (``self.net.level4[-1].act.num_parameters``, ``self.net`` a
      model of another file's class):
      ``mp_adapt.layer_attribute(bn, 'running_var')``, by the object's class at run time (a plain object's
      attribute reads as written); not in ``forward``, not under an ``isinstance`` narrowing (decided statically),
      not on a parameter annotated with a class whose attributes are its own (``def __init__(self, args: ModelArgs)``
      of a ``@dataclass``, ``attn_layers: AttentionLayers`` of a module class of the file deriving only from
      ``nn.Module``: ``args.dim`` reads as written), nor on a parameter read before on every path for a member no
      mapped torch layer has (nanoGPT's ``nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)``: torch
      would have raised at ``config.n_embd`` for a layer; the members are the surface's enumeration and nn.Module's);
    * ``self.up(x, output_size=skip.shape)``, a sub-layer called with an output size (a transposed convolution's):
      ``mp_nn.call_with_output_size(self.up, x, output_size=...)`` computes torch's ``output_padding`` for the layer
      (by its class at run time; any other callable is called as written);
    * ``p.data`` of a Parameter taken as a value outside ``forward`` and the methods it calls through ``self``
      (``w = self.fc.weight.data`` then
      ``w.mul_(0.5)``, ``bias_init(module.bias.data)``, ``return self.fc.weight.data``,
      ``[p.data for p in model.parameters()]``): the Parameter itself, so in-place updates reach it as torch's
      shared storage does (MindSpore's ``Parameter.data`` is a Tensor whose ``assign_value`` and ``mul_`` leave the
      Parameter as it was, and which has no ``set_data``); a function's parameter nothing types
      (``def scale_(t): w = t.data``) through ``mp_adapt.tensor_data(t)`` (a Parameter itself, anything else's
      ``.data``, by the object at run time); in ``forward`` and its helpers (MindSpore's ``.data`` stops gradients
      there as torch's does, measured in both modes), on an attribute not evidently a tensor
      (``self.dataset.data``), a call's result (``pack_padded_sequence(y, n).data``) and a local name
      (``values = sparse_mx.data``), ``.data`` stays;
    * ``h.data.masked_fill_(mask, -inf)`` / ``h.data.clamp_(0, 1)`` as a statement in ``forward`` (and the methods it
      calls), ``h`` a local name: torch writes the new values into ``h`` without recording the update for autograd
      (what follows reads the new values; the gradient reaches what computed ``h`` as if the update had not
      happened). MindSpore's ``.data`` there is another Tensor, so the update would be lost:
      ``h = mp_inplace.data_update(h, mp_inplace.masked_fill_(ops.stop_gradient(h), ...))`` writes the values and
      passes the gradient through (PyNative and GRAPH_MODE). Through an alias (``d = h.data; d.mul_(2)``) or an
      attribute (``self.h.data.clamp_()``) it is flagged MP102.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class SameConv(nn.Conv2d):
                    def __init__(self, c):
                        nn.Conv2d.__init__(self, c, c, 3, padding=1)

                    def forward(self, x):
                        return nn.Conv2d.forward(self, x) * 2


                def children(model):
                    return list(model._modules)
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


                def make_conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, dtype=None):
                    \"\"\"torch.nn.Conv2d's parameters, building MindSpore's nn.Conv2d (padding_mode in ('reflect', 'replicate', 'circular'): mp_nn.ModePaddedConv2d).\"\"\"
                    in_channels, out_channels, kernel_size, stride, padding, dilation = mp_adapt.layer_sizes(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
                    if padding_mode in ('reflect', 'replicate', 'circular'):
                        return mp_nn.ModePaddedConv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=((0, 0, 0, 0) if padding == 'valid' else 0 if isinstance(padding, str) else tuple(sum([[v, v] for v in padding], [])) if isinstance(padding, (tuple, list)) else padding), dilation=dilation, group=groups, has_bias=bias, pad_mode=('valid' if padding in (0, 'valid') else 'same' if padding == 'same' else 'pad'), padding_mode=padding_mode)
                    if padding_mode != 'zeros':
                        raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode={padding_mode!r}")
                    return nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=((0, 0, 0, 0) if padding == 'valid' else 0 if isinstance(padding, str) else tuple(sum([[v, v] for v in padding], [])) if isinstance(padding, (tuple, list)) else padding), dilation=dilation, group=groups, has_bias=bias, pad_mode=('valid' if padding in (0, 'valid') else 'same' if padding == 'same' else 'pad'))


                class TorchConv2d(nn.Conv2d, metaclass=TorchLayerType):
                    \"\"\"torch.nn.Conv2d as a value: called, make_conv2d(...) builds MindSpore's layer; a class derived from it
                    is built with torch's arguments.\"\"\"

                    _mp_value_class = True
                    _mp_torch_name = 'Conv2d'

                    def __new__(cls, *args, **kwargs):
                        if cls is TorchConv2d:
                            return make_conv2d(*args, **kwargs)
                        return super().__new__(cls, *args, **kwargs)

                    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, dtype=None):
                        \"\"\"torch.nn.Conv2d's parameters.\"\"\"
                        in_channels, out_channels, kernel_size, stride, padding, dilation = mp_adapt.layer_sizes(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
                        if padding_mode in ('reflect', 'replicate', 'circular'):
                            mp_nn.become(self, mp_nn.ModePaddedConv2d)
                            mp_nn.ModePaddedConv2d.__init__(self, in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=((0, 0, 0, 0) if padding == 'valid' else 0 if isinstance(padding, str) else tuple(sum([[v, v] for v in padding], [])) if isinstance(padding, (tuple, list)) else padding), dilation=dilation, group=groups, has_bias=bias, pad_mode=('valid' if padding in (0, 'valid') else 'same' if padding == 'same' else 'pad'), padding_mode=padding_mode)
                            self.padding_mode = padding_mode
                            return
                        if padding_mode != 'zeros':
                            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode={padding_mode!r}")
                        super().__init__(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=((0, 0, 0, 0) if padding == 'valid' else 0 if isinstance(padding, str) else tuple(sum([[v, v] for v in padding], [])) if isinstance(padding, (tuple, list)) else padding), dilation=dilation, group=groups, has_bias=bias, pad_mode=('valid' if padding in (0, 'valid') else 'same' if padding == 'same' else 'pad'))
                        self.padding_mode = padding_mode


                class SameConv(TorchConv2d):
                    _mp_nn_Conv2d_construct = nn.Conv2d.construct

                    def __init__(self, c):
                        mp_adapt.api("torch.nn.Conv2d").__init__(self, c, c, 3, padding=1)

                    def construct(self, x):
                        return self._mp_nn_Conv2d_construct(x) * 2


                def children(model):
                    return list(model._cells)
            """,
            note="The base class's own __init__ maps torch's arguments, its forward is the MindSpore class's "
                 "construct, called through self (GRAPH_MODE compiles it as a method); a Module's dict of children "
                 "is the Cell's.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Scaled(nn.Linear):
                    def forward(self, x):
                        return super().forward(x) * 2


                class Fixed(Scaled):
                    def __init__(self):
                        super().__init__(4, 3)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn


                class Scaled(nn.Dense):
                    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
                        \"\"\"torch.nn.Linear's parameters.\"\"\"
                        super().__init__(in_channels=in_features, out_channels=out_features, has_bias=bias, dtype=dtype or ms.float32)

                    def construct(self, x):
                        return super(Scaled, self).construct(x) * 2


                class Fixed(Scaled):
                    def __init__(self):
                        super().__init__(4, 3)
            """,
            note="GRAPH_MODE compiles a zero-argument super() as super(type(self), self): in Fixed, which does not "
                 "override construct, Scaled's super().construct(x) would call itself for ever. super(Scaled, self) "
                 "means what Python means; __init__ (Python runs it, not the graph) keeps super().",
        ),
        Example(
            before="""
                import torch


                def grad_state(x):
                    with x.device:
                        y = torch.zeros(2)
                    return x.requires_grad, y
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                def grad_state(x):
                    y = ops.zeros(2)
                    return mp_tensor.requires_grad(x), y
            """,
            note="A device as a context has nothing to place in MindSpore; a tensor's requires_grad is read safely.",
        ),
        Example(
            before="""
                def fuse_bn(conv, bn):
                    std = (bn.running_var + bn.eps) ** 0.5
                    return conv.weight * (bn.weight / std).reshape(-1, 1, 1, 1)
            """,
            after="""
                from mindport.runtime import adapt as mp_adapt
                def fuse_bn(conv, bn):
                    std = (mp_adapt.layer_attribute(bn, 'running_var') + mp_adapt.layer_attribute(bn, 'eps')) ** 0.5
                    return mp_adapt.layer_attribute(conv, 'weight') * (mp_adapt.layer_attribute(bn, 'weight') / std).reshape(-1, 1, 1, 1)
            """,
            note="Layers passed to a function: their members are read by their class when the code runs "
                 "(a BatchNorm2d's running_var is moving_variance, its weight gamma; a Conv2d's weight is weight).",
        ),
        Example(
            before="""
                import torch.nn as nn


                def halve(t):
                    w = t.data
                    w.mul_(0.5)


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 3)
                        w = self.fc.weight.data
                        w.mul_(0.5)
                        halve(self.fc.bias)
                        self.saved = [p.data for p in self.parameters()]
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import adapt as mp_adapt


                def halve(t):
                    w = mp_adapt.tensor_data(t)
                    w = mp_inplace.mul_(w, other=0.5)


                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=3)
                        w = self.fc.weight
                        w = mp_inplace.mul_(w, other=0.5)
                        halve(self.fc.bias)
                        self.saved = [p for p in self.trainable_params()]
            """,
            note="A Parameter's data taken as a value is the Parameter: the in-place updates scale the weight and "
                 "the bias, as in torch (MindSpore's Parameter.data would take them on a copy, silently).",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Attention(nn.Module):
                    def forward(self, logits, mask):
                        logits.data.masked_fill_(mask, -float("inf"))
                        return logits.softmax(-1)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import nn_functional as mp_F


                class Attention(nn.Cell):
                    def construct(self, logits, mask):
                        logits = mp_inplace.data_update(logits, mp_inplace.masked_fill_(ops.stop_gradient(logits), mask=mask, value=-float("inf")))
                        return mp_F.softmax(logits, dim=-1)
            """,
            note="An update through .data in forward: the new values, the gradient passed through as torch's is.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Clipped(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 3)

                    def forward(self, x):
                        self.fc.weight.data.clamp_(-1, 1)
                        return self.fc(x)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import framework as mp_framework


                class Clipped(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=3)

                    def construct(self, x):
                        mp_framework.set_data(self.fc.weight, mp_inplace.clamp_(ops.stop_gradient(self.fc.weight), min=-1, max=1))
                        return self.fc(x)
            """,
            note="A member updated through .data in forward is written in place (an assign in a graph), as torch's.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._targets: set[int] = set()  # attributes assigned to (x.requires_grad = True): left as written
        self._tensor_reads = load_surface().tensor_reads()
        self._methods: list[str] = []  # the enclosing functions' names
        self._functions: list[int] = []  # the enclosing functions' ids
        self._compiled: set[int] = set()  # ids of forward and the methods it calls through self (a graph's code)
        self._parameter_names: list[set[str]] = [set()]  # per enclosing function: names iterating .parameters()
        self._parameter_lambdas: set[int] = set()  # lambdas filter/map applies to .parameters()' items
        self._lambda_names: list[tuple[frozenset[str], bool]] = []  # enclosing lambdas: (their parameters, of those)
        self._own_typed: list[set[str]] = [set()]  # per enclosing function: parameters annotated with an own class
        self._function_nodes: list[cst.FunctionDef] = []
        self._class_names: set[int] = set()  # the mindport.runtime.adapt.class_name(x) calls this rule wrote
        self._own_classes: frozenset[str] | None = None
        self._evidence_names: frozenset[str] | None = None
        self._called: set[int] = set()  # attributes that are the callee of a call
        self._handed: set[int] = set()  # values bound to a name, returned, listed or passed to a program's function
        self._written_through: set[int] = set()  # p.data of an item assignment, p.data[...] = v
        self._statement_calls: set[int] = set()  # calls that are a whole statement (x.data.clamp_(0, 1))
        self._data_updates: set[int] = set()  # h.data.<in-place>_(...) statements in forward, written out of place
        self._member_updates: set[int] = set()  # self.w.data.<in-place>_(...) statements in forward: set_data
        self._kept_data: set[int] = set()  # values stored on an attribute, self.keep = p.data
        self._data_aliases: list[set[str]] = []  # per enclosing function: local names bound to X.data
        self._reached: set[int] = set()  # values read further (x.data.shape, x.data[0], x.data.fill_())
        # torch layer members some mapped layer holds under another name (running_var, weight of a BatchNorm ...)
        surface = load_surface()  # (a kept setting with a common name, a config's ``k``, stays as written here)
        self._renamed = frozenset(name for layer in surface.layers.values() for name in (*layer.paths(), *layer.derived)
                                  if name not in layer.kept or name not in surface.common_names)
        # every public member a mapped torch layer has (the surface's enumeration, and nn.Module's own)
        self._layer_members = frozenset(MODULE_MEMBERS).union(*(
            (*layer.same, *layer.renamed, *layer.flagged, *layer.derived, *layer.kept)
            for layer in surface.layers.values()), surface.methods)
        self._evidence_cache: dict[int, dict[int, int]] = {}

    def _tensor_read(self, original_node, updated_node, member):
        """A Tensor attribute a MindSpore Tensor lacks: its value (``x.is_sparse`` -> ``False``), or MP104."""
        if member.ambiguous and receiver_kind(original_node.value, self.scope) != "tensor":
            return updated_node  # x.layout of a config: only a known tensor's is torch's
        if member.ambiguous and member.ends == "flagged" and isinstance(original_node.value, cst.Name) \
                and operand_kind(original_node.value, self.scope) == "param" \
                and not self._annotated_tensor(original_node.value.value):
            # cfg.name of a function's parameter nothing says is a tensor (a dataclass config, a dataset): the
            # line stays as written either way, and flagging it as torch's named-tensor member is noise
            return updated_node
        if member.ends == "flagged":
            self.flag(original_node, "MP104", f"{member.torch}: {member.how}", "", member.torch)
            return updated_node
        self.ctx.converted_sites += 1
        if member.value.endswith("(x)"):
            return cst.Call(func=self.ctx.target_expr(member.value[:-3]), args=[cst.Arg(updated_node.value)])
        if "." in member.value:
            return self.ctx.target_expr(member.value)
        return cst.Name(member.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self._statement_calls.add(id(node.value))

    def leave_Expr(self, original_node, updated_node):
        """``h.data.clamp_(0, 1)`` in forward, ``h`` a local name: ``h = mp_inplace.data_update(h,
        mp_inplace.clamp_(ops.stop_gradient(h), ...))``, the update computed on a value that carries no gradient and
        written into ``h`` with the gradient passed through as if unchanged, as torch's update through ``.data``
        does. A member of the model (a Parameter or a buffer: PixelCNN's masked convolution ``self.weight.data.mul_(
        self.mask)`` before its ``super().forward(x)``, a max-norm ``self.fc.weight.data.clamp_(-c, c)``) is written
        in place as ``p.data = v`` is (``mp_framework.set_data``: an ``ops.assign`` in a graph, which later reads of
        the Parameter follow), with the new value computed on a copy that carries no gradient."""
        if id(original_node.value) in self._member_updates:
            found = self._detached_update(updated_node.value, _self_member)
            if found is None:
                return updated_node
            target, update = found
            return updated_node.with_changes(value=cst.Call(
                func=self.ctx.target_expr("mindport.runtime.framework.set_data"),
                args=[cst.Arg(target), cst.Arg(update)]))
        if id(original_node.value) not in self._data_updates:
            return updated_node
        name = original_node.value.func.value.value  # h of h.data.method_
        found = self._detached_update(updated_node.value, lambda e: _same_tensor(e, name))
        if found is None:
            return updated_node
        return cst.Assign(targets=[cst.AssignTarget(target=name)], value=cst.Call(
            func=self.ctx.target_expr("mindport.runtime.inplace.data_update"),
            args=[cst.Arg(name), cst.Arg(found[1])]))

    def _detached_update(self, call: cst.Call, is_updated) -> "tuple[cst.BaseExpression, cst.Call] | None":
        """(the updated tensor, the in-place ``call`` computed on ``ops.stop_gradient`` of it) for :meth:`leave_Expr`:
        the tensor is the call's first argument once converted (``mp_inplace.clamp_(h, ...)``), else the receiver of
        the method left as written; ``is_updated`` tells it (``h`` or ``h.data``, ``self.w`` or ``self.w.data``)."""
        first = call.args[0].value if call.args else None
        if isinstance(first, (cst.Name, cst.Attribute)) and is_updated(first):  # converted already
            target = _without_data(first)
            update = call.with_changes(args=[call.args[0].with_changes(value=self._stop_gradient(target)),
                                             *call.args[1:]])
        elif isinstance(call.func, cst.Attribute) and is_updated(call.func.value):  # a method left as written
            target = _without_data(call.func.value)
            update = call.with_changes(func=call.func.with_changes(value=self._stop_gradient(target)))
        else:
            return None
        self.ctx.converted_sites += 1
        return target, update

    def _stop_gradient(self, value: cst.BaseExpression) -> cst.Call:
        return cst.Call(func=self.ctx.target_expr("mindspore.ops.stop_gradient"), args=[cst.Arg(value)])

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        todo = [node.target]  # m.dilation, m.padding = ...: each element of an unpacking target is written too
        while todo:
            target = todo.pop()
            self._targets.add(id(target))
            if isinstance(target, (cst.Tuple, cst.List)):
                todo += [e.value for e in target.elements]
            elif isinstance(target, cst.StarredElement):
                todo.append(target.value)
        self._note_written_through(node.target)

    def _note_written_through(self, target) -> None:
        """``p.data[...] = v``, ``w.data[:, :k] = t``: an item assignment through ``.data``."""
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute) \
                and target.value.attr.value == "data":
            self._written_through.add(id(target.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets.add(id(node.target))
        self._note_written_through(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._targets.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))  # x.dim(): a method called, not a layer's setting read
        lam = parameter_items_lambda(node, self.scope)
        if lam is not None:
            self._parameter_lambdas.add(id(lam))
        self._flag_update_through_data(node)
        if isinstance(node.func, cst.Name) and self.scope.resolve_torch(node.func) is None:
            self._handed.update(id(a.value) for a in node.args)  # init(m.weight.data): the program's own function

    def _flag_update_through_data(self, node: cst.Call) -> None:
        """``h.data.clamp_(0, 1)``, ``d = h.data; d.mul_(2)`` in forward (and the methods it calls): torch updates
        ``h`` without recording the update for autograd; MindSpore's ``.data`` is another Tensor there, which the
        update fills, and ``h`` is left as it was, silently. Flagged (outside forward ``.data`` is the tensor itself,
        see :meth:`_parameter_data`); a fresh tensor's (``torch.zeros_like(p).data.fill_(v)``, read only through the
        call's result) is not."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value.endswith("_")
                and not func.attr.value.startswith("_") and func.attr.value not in ("requires_grad_", "share_memory_")
                and ("forward" in self._methods or self._compiled.intersection(self._functions))
                and getattr(self, "_torch_file", True)):
            return
        receiver = func.value
        through = (isinstance(receiver, cst.Attribute) and receiver.attr.value == "data"
                   and isinstance(receiver.value, (cst.Name, cst.Attribute))) or (
            isinstance(receiver, cst.Name) and self._data_aliases and receiver.value in self._data_aliases[-1])
        if through and isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) \
                and receiver.value.value != "self" and id(node) in self._statement_calls:
            self._data_updates.add(id(node))  # h.data.clamp_(0, 1) as a statement: h = data_update(h, ...)
            return
        if through and isinstance(receiver, cst.Attribute) and _self_member(receiver.value) \
                and id(node) in self._statement_calls:
            self._member_updates.add(id(node))  # self.weight.data.mul_(self.mask): set_data(self.weight, ...)
            return
        if through:
            self.flag(node, "MP102", f"torch.Tensor.{func.attr.value} through .data in forward: torch updates the "
                      "tensor without recording it for autograd, MindSpore's .data is another Tensor there and the "
                      "update would be lost", "write the new value out of place (h = ops.stop_gradient(...)) or move "
                      "the update out of forward", f"torch.Tensor.{func.attr.value}")

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._data_aliases:
            for t in node.targets:  # d = h.data: d is h's storage in torch
                if isinstance(t.target, cst.Name):
                    value = node.value
                    (self._data_aliases[-1].add if isinstance(value, cst.Attribute) and value.attr.value == "data"
                     else self._data_aliases[-1].discard)(t.target.value)
        if all(isinstance(t.target, cst.Name) for t in node.targets):
            self._handed.add(id(node.value))  # w = self.fc.weight.data
        elif any(isinstance(t.target, cst.Attribute) for t in node.targets):
            self._kept_data.add(id(node.value))  # self.keep = self.fc.weight.data

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._handed.add(id(node.value))

    def visit_Element(self, node: cst.Element) -> None:
        self._handed.add(id(node.value))  # [self.a.data, self.b.data]

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._handed.add(id(node.elt))  # [p.data for p in model.parameters()]
        comp = node.for_in  # read before the element, which libcst visits first
        while comp is not None:
            self._note_parameter_loop(comp.target, comp.iter)
            comp = comp.inner_for_in

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reached.add(id(node.value))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._reached.add(id(node.value))

    def visit_For(self, node: cst.For) -> None:
        self._note_parameter_loop(node.target, node.iter)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        params = node.params
        names = frozenset(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)) | {
            p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
        self._lambda_names.append((names, id(node) in self._parameter_lambdas))

    def leave_Lambda(self, original_node, updated_node):
        self._lambda_names.pop()
        return updated_node

    def _lambda_parameter(self, expr) -> bool:
        """Is ``expr`` the parameter of the nearest enclosing lambda binding its name, a lambda that ``filter``/``map``
        applies to a module's ``.parameters()`` (:func:`parameter_items_lambda`): a Parameter at every call."""
        if not isinstance(expr, cst.Name):
            return False
        for names, of_parameters in reversed(self._lambda_names):
            if expr.value in names:
                return of_parameters
        return False

    def _note_parameter_loop(self, target, iterable) -> None:
        """``for p in model.parameters()``, ``for name, p in model.named_parameters()``: ``p`` is a Parameter."""
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
                and iterable.func.attr.value in ("parameters", "named_parameters")):
            return
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            target = target.elements[1].value
        if isinstance(target, cst.Name):
            self._parameter_names[-1].add(target.value)

    def _parameter_data(self, original_node) -> str | None:
        """``p.data`` of a Parameter taken as a value outside ``forward`` and the methods it calls
        (``w = self.fc.weight.data``, ``bias_init(module.bias.data)``, ``return self.W.data``,
        ``[p.data for p in model.parameters()]``): in torch the value shares the Parameter's storage, so an in-place
        update of it (``w.mul_(0.5)``, an init function's fill) updates the Parameter. MindSpore's ``Parameter.data``
        is a Tensor that shares storage for ``d[0] = 5`` and ``d.copy_(t)`` but not for ``assign_value``
        (mindport.runtime.inplace's write) nor its own ``mul_``, and has no ``set_data``: the update was lost,
        silently. "parameter": the Parameter itself is the value (an attribute evidently a tensor, ``m.weight``, a
        registered ``self.W``, or an element of ``.parameters()``); "run time": a function's parameter nothing
        types, decided by the object (``mp_adapt.tensor_data``: a Parameter itself, else ``.data``); None: as
        written (a call's result, a PackedSequence's or a sparse matrix's ``.data``, ``self.dataset.data``)."""
        if original_node.attr.value != "data" or id(original_node) not in self._handed \
                or id(original_node) in self._reached or "forward" in self._methods \
                or self._compiled.intersection(self._functions) or not getattr(self, "_torch_file", True):
            return None
        receiver = original_node.value
        if isinstance(receiver, cst.Attribute):
            return "parameter" if receiver_kind(receiver, self.scope) == "tensor" else None
        if not isinstance(receiver, cst.Name) or receiver.value in ("self", "cls"):
            return None
        if any(receiver.value in names for names in self._parameter_names):
            return "parameter"
        # d = x.data of a local taken for a tensor: MindSpore's Tensor.data is another Tensor that a runtime update
        # (assign_value) does not reach (d.mul_(4) left x unchanged); decided by the object, as for a parameter
        # (a sparse matrix's .data, bound by a method call the kinds take for a tensor's, stays its own)
        return "run time" if operand_kind(receiver, self.scope) in ("param", "tensor") else None

    def _kept_parameter_data(self, original_node) -> bool:
        """``self.keep = self.fc.weight.data`` outside forward, of a Parameter (as :meth:`_parameter_data` knows
        one): an attribute holding a copy where torch's shares the Parameter's storage."""
        if "forward" in self._methods or self._compiled.intersection(self._functions) \
                or not getattr(self, "_torch_file", True):
            return False
        receiver = original_node.value
        if isinstance(receiver, cst.Attribute):
            return receiver_kind(receiver, self.scope) == "tensor"
        return isinstance(receiver, cst.Name) and any(receiver.value in names for names in self._parameter_names)

    def visit_Module(self, node: cst.Module) -> None:
        self._module_node = node
        # ``self._parameters = {}`` in a class of the program's own (fast-transformers' attention Registry): the
        # attribute is the program's, not nn.Module's dict; none of that name is renamed in this file
        stored = cst.matchers.Attribute(attr=cst.matchers.OneOf(*map(cst.matchers.Name, [*_PRIVATE_DICTS, _BUFFERS])))
        self._own_private = {t.target.attr.value for t in find_all(node, cst.matchers.OneOf(
            cst.matchers.AssignTarget(target=stored), cst.matchers.AnnAssign(target=stored)))}
        self._own_classes = None
        self._evidence_names = None
        self._buffers_written = _written_buffer_dicts(node)
        # not in MindSpore code (our own output converted again): a file importing mindspore and no torch holds
        # no torch layer to read
        roots = self.ctx.import_roots  # every import of the file, at any depth (a ``try: import torch`` too)
        self._torch_file = "torch" in roots or "mindspore" not in roots

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._methods.append(node.name.value)
        self._functions.append(id(node))
        self._parameter_names.append(set())
        self._own_typed.append(self._own_typed_parameters(node))
        self._function_nodes.append(node)
        self._data_aliases.append(set())

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._compiled |= _forward_reach(node)

    # --- Base.construct(self, x) -> self._mp_Base_construct(x), Base's construct kept as a class attribute
    def leave_ClassDef(self, original_node, updated_node):
        if not self._torch_file or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        kept: dict[str, cst.BaseExpression] = {}  # the attribute -> the base's construct
        calls = _BaseConstructCalls(kept, updated_node.name.value)
        body = [calls.method(stmt) if isinstance(stmt, cst.FunctionDef) else stmt for stmt in updated_node.body.body]
        self.ctx.converted_sites += calls.explicit_super
        if not kept:
            return updated_node.with_changes(body=updated_node.body.with_changes(body=body)) \
                if calls.explicit_super else updated_node
        self.ctx.converted_sites += len(kept)
        lines = [cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(attr))], value=value)])
                 for attr, value in kept.items()]
        at = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0  # the docstring
        if at < len(body) and isinstance(body[at], cst.FunctionDef) and not body[at].leading_lines:
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*body[:at], *lines, *body[at:]]))

    def leave_FunctionDef(self, original_node, updated_node):
        """``classname = m.__class__.__name__`` whose local the function never reads (akamaster's ResNet
        ``_weights_init``, its ``print(classname)`` commented out): the binding goes (native_facts.unread_bindings),
        reading a class's name having no effect."""
        self._methods.pop()
        self._functions.pop()
        self._parameter_names.pop()
        self._own_typed.pop()
        self._function_nodes.pop()
        self._data_aliases.pop()
        if not self._class_names:
            return updated_node
        return unread_bindings(updated_node, lambda value: id(value) in self._class_names
                               and pure_read(value.args[0].value))

    def _annotated_tensor(self, name: str) -> bool:
        """Is ``name`` a parameter of the enclosing function annotated as a tensor (``x: torch.Tensor``,
        ``Optional[Tensor]``)? Then the parameter says what it is: torch's tensor member, not a config's field."""
        function = self._function_nodes[-1] if self._function_nodes else None
        if function is None:
            return False
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name and param.annotation is not None:
                return "Tensor" in cst.Module(body=[]).code_for_node(param.annotation.annotation)
        return False

    def _own_typed_parameters(self, node: cst.FunctionDef) -> set[str]:
        """The parameters annotated with a class whose attributes are its own: a class of this file whose bases,
        followed through the file's classes, are only ``object``/``nn.Module`` (a ``@dataclass`` config, a model
        block: ``def __init__(self, args: ModelArgs)``, ``attn_layers: AttentionLayers``), or a plain class of the
        project (``object_classes``). No mapped torch layer is such an object, so ``args.dim`` reads as written."""
        if self._own_classes is None:
            self._own_classes = _own_classes(self._module_node, self.scope) | self.ctx.options.object_classes \
                if getattr(self, "_module_node", None) is not None else frozenset(self.ctx.options.object_classes)
        params = node.params
        found = set()
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation.annotation if param.annotation is not None else None
            name = annotation.value if isinstance(annotation, cst.Name) else annotation.evaluated_value \
                if isinstance(annotation, cst.SimpleString) else None
            if name in self._own_classes:
                found.add(param.name.value)
        return found

    def _read_no_layer_has(self, site: cst.Attribute, name: str) -> bool:
        """Is ``name`` (a parameter of the enclosing function, never rebound in it) read, before ``site`` on every
        path, for a member no mapped torch layer has (``config.n_embd``: not in the surface's enumeration of the layers'
        members nor nn.Module's, and assigned on ``self`` by no class of the file deriving from a torch layer)? torch
        raised AttributeError there for a layer, so whenever ``site`` runs ``name`` is no layer: ``config.bias``
        reads as written (nanoGPT's ``nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)``). Before on
        every path: an earlier top-level statement of the function (not an ``assert``, which ``-O`` drops), or an
        earlier argument of a call (or the left operand of an operation) the site is in; a part evaluated only
        conditionally (a branch, ``and``/``or``'s right side, a lambda, a comprehension) does not count."""
        function = self._function_nodes[-1] if self._function_nodes else None
        if function is None or not isinstance(function.body, cst.IndentedBlock):
            return False
        params = function.params
        if name not in {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}:
            return False
        if any(isinstance(t, cst.Name) and t.value == name for stmt in own_nodes_of(function, (cst.AssignTarget,
               cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr)) for t in _binding_name_nodes(stmt)):
            return False
        if self._evidence_names is None:
            self._evidence_names = self._layer_members | _layer_subclass_attributes(self._module_node, self.scope)
        for index, stmt in enumerate(function.body.body):
            path = _path_to(stmt, site)
            if path is None:
                continue
            earlier = [s for s in function.body.body[:index]
                       if isinstance(s, cst.SimpleStatementLine) and not any(isinstance(x, cst.Assert) for x in s.body)]
            before = _evaluated_before(path)
            return any(self._evidence(part, name) for part in (*earlier, *before))
        return False

    def _evidence(self, node: cst.CSTNode, name: str) -> bool:
        found = [False]
        members = self._evidence_names

        class _Find(cst.CSTVisitor):
            def on_visit(self, n):
                if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp,
                                  cst.GeneratorExp)):
                    return False
                if isinstance(n, cst.IfExp):
                    read(n.test, self)
                    return False
                if isinstance(n, cst.BooleanOperation):
                    read(n.left, self)
                    return False
                if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == name \
                        and not n.attr.value.startswith("_") and n.attr.value not in members:
                    found[0] = True
                return True

        read(node, _Find())
        return found[0]

    def _member_read_outside_graph(self, original_node) -> bool:
        """A read (not a write, not a call) of a member some mapped layer keeps under another name, in a method that
        no static graph compiles (not ``forward`` nor what it calls), in torch code converted to the nn target: where
        ``self.<...>.<member>`` may be read by the object's class at run time."""
        return getattr(self, "_torch_file", True) and self.ctx.options.target == "nn" \
            and original_node.attr.value in self._renamed and id(original_node) not in self._targets \
            and id(original_node) not in self._called and "forward" not in self._methods and bool(self._methods) \
            and not self._compiled.intersection(self._functions)

    def _indexed_member_read(self, original_node) -> bool:
        """``self.stem[i + 1].weight`` outside ``forward``: an item of the model's own container taken at an index
        the text does not fix, so which layer it is (a Conv2d's weight, a BatchNorm2d's gamma) is known only when the
        code runs (SelecSLS's ``prune_and_fuse`` walks conv, bn, relu triples by ``range(0, len(self.stem), 3)``)."""
        if not self._member_read_outside_graph(original_node):
            return False
        node = original_node.value
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if isinstance(node, cst.Subscript) and not (
                    len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
                    and isinstance(node.slice[0].slice.value, (cst.Integer, cst.UnaryOperation))):
                return True
            node = node.value
        return False

    def _unknown_member_read(self, original_node) -> bool:
        """``self.net.level4[-1].module_act.num_parameters`` outside ``forward``: a member of the model whose class no
        rule knows (``self.net = EESPNet(...)``, a class of another file) holds, somewhere down, the object whose
        torch member is read (ESPNetv2's segmentation head sizing itself from its backbone's PReLUs): by the object's
        class at run time. A member some rule knows (a layer built in this class, a class of this file) is decided
        statically, as before."""
        if not self._member_read_outside_graph(original_node):
            return False
        receiver = original_node.value
        if not isinstance(receiver.value if isinstance(receiver, (cst.Attribute, cst.Subscript)) else None,
                          (cst.Attribute, cst.Subscript)):
            return False  # self.x.weight: the model's own member, left to the rules that know its class
        return not any(getattr(rule, "knows", None) and rule.knows(receiver)
                       for rule in self.runner.rules)  # type: ignore[union-attr]

    def _unknown_layer_read(self, original_node, updated_node):
        """``bn.running_var`` where ``bn`` is a function's parameter (or a name bound in ways not followed) and
        nothing says its class (RepMLP's ``fuse_bn(conv, bn)``): a setting or weight some mapped layer holds under
        another name (object_surface.toml's renames: ``running_var`` -> ``moving_variance``) is read through
        ``mp_adapt.layer_attribute``, by the object's class at run time; a plain object's attribute is read as
        written by it. The same for a layer reached through such a name's attributes and items
        (``def __init__(self, gpt): gpt.decoder.embedding.weight``, a model passed in: the Embedding's
        ``embedding_table``). Not in ``forward`` nor in a method it calls through self (a static graph compiles them,
        and refuses the helper: mamba-tabular's ``batch_ensemble_linear(x, linear_layer, r, s)`` reading
        ``linear_layer.weight``, "Unsupported statement 'ImportFrom'"), nor on a receiver known to be a tensor,
        a Python value or a module."""
        node = _chain_root(original_node.value, self.scope)
        if isinstance(node, cst.Name) and node.value == "self" and (
                self._indexed_member_read(original_node) or self._unknown_member_read(original_node)):
            return self._layer_attribute_call(original_node, updated_node)
        if not getattr(self, "_torch_file", True) or not isinstance(node, cst.Name) or node.value in ("self", "cls") \
                or id(original_node) in self._targets or id(original_node) in self._called \
                or self.ctx.options.target != "nn" or original_node.attr.value not in self._renamed \
                or "forward" in self._methods or self._compiled.intersection(self._functions) or not self._methods \
                or self.scope.resolve(node) is not None \
                or operand_kind(node, self.scope) not in ("param", "other"):
            return None
        if original_node.value is node and (node.value in self._own_typed[-1]
                                            or self._read_no_layer_has(original_node, node.value)):
            return None  # def f(args: ModelArgs): args.dim is the config's own attribute
        for rule in self.runner.rules:  # type: ignore[union-attr]
            if getattr(rule, "narrows", None) and rule.narrows(node.value) \
                    or getattr(rule, "knows", None) and rule.knows(node):
                return None
        return self._layer_attribute_call(original_node, updated_node)

    def _layer_attribute_call(self, original_node, updated_node) -> cst.Call:
        """``mp_adapt.layer_attribute(receiver, 'name')``: the member read by the object's class at run time."""
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.layer_attribute"), args=[
            cst.Arg(updated_node.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.SimpleString(repr(original_node.attr.value)))])

    # --- explicit base-class calls: nn.Conv2d.__init__(self, ...), nn.Conv2d.forward(self, x)
    def leave_Call(self, original_node, updated_node):
        func = original_node.func
        if any(a.keyword is not None and a.keyword.value == "output_size" for a in original_node.args) \
                and self._layer_call(func):
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.layers.call_with_output_size"),
                            args=[cst.Arg(updated_node.func, comma=cst.Comma(
                                whitespace_after=cst.SimpleWhitespace(" "))), *updated_node.args])
        if isinstance(func, cst.Attribute) and func.attr.value in ("reset_parameters", "reset_running_stats") \
                and not original_node.args and not (isinstance(func.value, cst.Name) and func.value.value == "self") \
                and self.scope.resolve(func.value) is None:
            self.ctx.converted_sites += 1  # conv.reset_parameters(), bn.reset_running_stats(): by the object's class
            return cst.Call(func=self.ctx.target_expr(f"mindport.runtime.layers.{func.attr.value}"),
                            args=[cst.Arg(updated_node.func.value)])
        if isinstance(func, cst.Attribute) and func.attr.value == "_conv_forward" and len(original_node.args) in (
                2, 3) and not any(a.keyword or a.star for a in original_node.args) \
                and self.scope.resolve(func.value) is None:
            self.ctx.converted_sites += 1  # conv._conv_forward(x, w, b): the layer's convolution with w and b
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.layers.conv_forward"), args=[
                cst.Arg(updated_node.func.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                *updated_node.args])
        if not (isinstance(func, cst.Attribute) and original_node.args
                and isinstance(original_node.args[0].value, cst.Name) and original_node.args[0].value.value == "self"):
            return updated_node
        qual = self.scope.resolve_torch(func.value)
        entry = self.ctx.registry.lookup(qual) if qual else None
        if entry is None or not entry.supported or entry.kind not in ("layer", "attribute"):
            return updated_node
        target = entry.resolve(self.ctx.options.target)[0]
        name = func.attr.value
        if name == "reset_parameters" and entry.kind == "layer" and len(original_node.args) == 1:
            self.ctx.handled.update((id(original_node), id(func), id(func.value)))
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.layers.reset_parameters"), args=[
                cst.Arg(updated_node.args[0].value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(cst.Name("True"), keyword=cst.Name("base"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))])
        if not target or target.startswith(".") or name not in ("__init__", "forward", "train") and \
                not self._flag_base_method(original_node, entry, name):
            return updated_node
        self.ctx.handled.update((id(original_node), id(func), id(func.value)))
        self.ctx.converted_sites += 1
        if name in ("forward", "train"):  # the Cell's construct / set_train
            owner, method = self.ctx.target_expr(target), "construct" if name == "forward" else "set_train"
        else:
            owner = adapter_expr(self.ctx, qual) if entry.kind == "layer" else self.ctx.target_expr(target)
            method = "__init__"
        return updated_node.with_changes(func=cst.Attribute(value=owner, attr=cst.Name(method)))

    def _flag_base_method(self, node: cst.Call, entry, name: str) -> bool:
        """``nn.Linear.reset_parameters(self)``: a member of the layer's surface with no MindSpore counterpart is
        flagged with its reason (never converted: returns False)."""
        layer = load_surface().layer(entry.torch)
        reason = layer.flagged.get(name) if layer is not None else None
        if reason is None:
            return False
        self.ctx.handled.update((id(node), id(node.func), id(node.func.value)))
        self.flag(node, "MP104", f"{entry.torch}.{name}: {reason}", "", entry.torch)
        return False

    def _layer_call(self, func: cst.BaseExpression) -> bool:
        """A call of a sub-layer of a model (``self.up(...)``, ``self.ups[i](...)``), not of a function."""
        root = func
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        return func is not root and isinstance(root, cst.Name) and root.value == "self"

    # --- with torch.device(...): / with x.device:
    def leave_With(self, original_node, updated_node):
        kept = [new for old, new in zip(original_node.items, updated_node.items) if not self._device(old.item)]
        if len(kept) == len(updated_node.items):
            return updated_node
        self.ctx.converted_sites += 1
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(items=kept)
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock):
            return cst.FlattenSentinel(body.body)
        return cst.FlattenSentinel([cst.SimpleStatementLine(body=list(body.body))])

    def _device(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            return self.scope.resolve_torch(expr.func) == "torch.device"
        return isinstance(expr, cst.Attribute) and expr.attr.value == "device" and not self.scope.resolve_torch(expr)

    # --- attributes: x.requires_grad, m._modules
    def leave_Attribute(self, original_node, updated_node):
        name = original_node.attr.value
        if id(original_node) in self._targets or self.scope.resolve_torch(original_node):
            return updated_node
        if id(original_node) in self._written_through and "forward" not in self._methods \
                and not self._compiled.intersection(self._functions) and getattr(self, "_torch_file", True):
            # p.data[...] = v: MindSpore's Tensor.data is another Tensor, whose item assignment of the whole
            # (Ellipsis) reaches no Parameter (p.data[0] = v does); the item assignment on p itself writes p, as
            # torch's through .data does (outside forward: no gradient is recorded there)
            self.ctx.converted_sites += 1
            return updated_node.value
        if id(original_node) in self._kept_data and name == "data" and self._kept_parameter_data(original_node):
            self.flag(original_node, "MP104", "torch.nn.Parameter.data stored on an attribute: torch's attribute "
                      "shares the Parameter's storage (an update of either is seen by the other), MindSpore's "
                      "Parameter.data is a copy", "read the Parameter itself where the attribute is read",
                      "torch.nn.Parameter.data")
            return updated_node
        data = self._parameter_data(original_node)
        if data is not None:
            self.ctx.converted_sites += 1
            if data == "run time":
                return cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.tensor_data"),
                                args=[cst.Arg(updated_node.value)])
            return updated_node.value
        subject = class_name_subject(original_node)
        if subject is not None and not (isinstance(subject, cst.Name) and subject.value in ("self", "cls")):
            # the receiver as converted (self.seq[1:], self.head): the class_name_subject of updated_node
            self.ctx.converted_sites += 1
            written = cst.Call(func=self.ctx.target_expr("mindport.runtime.adapt.class_name"),
                               args=[cst.Arg(class_name_subject(updated_node) or subject)])
            self._class_names.add(id(written))
            return written
        member = self._tensor_reads.get(name)
        if member is not None and not (isinstance(original_node.value, cst.Name)
                                       and original_node.value.value == "self"):
            return self._tensor_read(original_node, updated_node, member)
        if name in _PRIVATE_DICTS and name not in getattr(self, "_own_private", ()):
            self.ctx.converted_sites += 1
            return updated_node.with_changes(attr=cst.Name(_PRIVATE_DICTS[name]))
        if name == _BUFFERS and name not in getattr(self, "_own_private", ()) \
                and id(original_node) not in getattr(self, "_buffers_written", ()):
            self.ctx.converted_sites += 1
            listed = cst.Call(func=self.ctx.target_expr("mindport.runtime.containers.named_buffers"),
                              args=[cst.Arg(updated_node.value),
                                    cst.Arg(cst.Name("False"), keyword=cst.Name("recurse"))])
            return cst.Call(func=cst.Name("dict"), args=[cst.Arg(listed)])
        if name == "requires_grad" and not (isinstance(original_node.value, cst.Name)
                                            and original_node.value.value == "self"):
            self.ctx.converted_sites += 1
            if self._lambda_parameter(original_node.value):
                # filter(lambda p: p.requires_grad, net.parameters()): a Parameter's own flag, read as it is (what
                # the runtime's requires_grad reads for a Parameter)
                return updated_node
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.requires_grad"),
                            args=[cst.Arg(updated_node.value)])
        return self._unknown_layer_read(original_node, updated_node) or updated_node


# builtins that call a function on each item of an iterable (their first argument, the iterable second)
_ITEM_CALLERS = frozenset({"filter", "map"})


def parameter_items_lambda(call: cst.Call, scope) -> "cst.Lambda | None":
    """``filter(lambda p: ..., net.parameters())`` / ``map(...)`` (the builtins, not rebound) whose lambda takes one
    positional parameter and whose iterable is a ``.parameters()`` call of any receiver, given no argument or only
    ``recurse``: the lambda, whose parameter is a Parameter at every call; None otherwise."""
    func = call.func
    if not (isinstance(func, cst.Name) and func.value in _ITEM_CALLERS and scope.resolve(func) is None
            and len(call.args) == 2 and not any(a.star or a.keyword is not None for a in call.args)):
        return None
    lam, items = call.args[0].value, call.args[1].value
    if not (isinstance(lam, cst.Lambda) and len(lam.params.params) == 1 and not lam.params.posonly_params
            and not lam.params.kwonly_params and not isinstance(lam.params.star_arg, cst.Param)
            and lam.params.star_kwarg is None and lam.params.params[0].default is None):
        return None
    if not (isinstance(items, cst.Call) and isinstance(items.func, cst.Attribute)
            and items.func.attr.value == "parameters" and all(
                a.keyword is not None and a.keyword.value == "recurse" and not a.star for a in items.args)):
        return None
    return lam


def _written_buffer_dicts(module: cst.Module) -> set[int]:
    """Ids of the ``m._buffers`` attributes written through (``m._buffers[k] = v``, ``del m._buffers[k]``,
    ``m._buffers.update(...)``): those stay the Cell's own dict."""
    written: set[int] = set()

    class _Find(cst.CSTVisitor):
        def _target(self, target: cst.BaseExpression) -> None:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute) \
                    and target.value.attr.value == _BUFFERS:
                written.add(id(target.value))

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

        def visit_Del(self, node: cst.Del) -> None:
            self._target(node.target)

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _DICT_WRITES \
                    and isinstance(func.value, cst.Attribute) and func.value.attr.value == _BUFFERS:
                written.add(id(func.value))

    module.visit(_Find())
    return written


def _chain_root(expr: cst.BaseExpression, scope) -> cst.BaseExpression | None:
    """The name ``gpt`` of ``gpt.decoder.embedding`` / ``model.layers[0]`` (attributes and items of a name, none of
    them evidently a tensor, a size or a Python value); the expression itself when it is a name; else None."""
    if isinstance(expr, cst.Name):
        return expr
    node = expr
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node if isinstance(node, cst.Name) and receiver_kind(expr, scope) == "other" else None


def _forward_reach(node: cst.ClassDef) -> set[int]:
    """Ids of a class's ``forward`` and the methods it calls through ``self``, transitively: the code a graph
    compiles and autodiff differentiates, where torch's ``.data`` detaches (as MindSpore's does, measured)."""
    if not isinstance(node.body, cst.IndentedBlock):
        return set()
    methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
    reached, todo = set(), ["forward"] if "forward" in methods else []
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        for call in find_all(methods[name], cst.matchers.Call(func=cst.matchers.Attribute(
                value=cst.matchers.Name("self")))):
            callee = call.func.attr.value  # type: ignore[attr-defined]
            if callee in methods and callee != "__init__":
                todo.append(callee)
    return {id(methods[name]) for name in reached}


def _own_classes(module: cst.Module, scope) -> frozenset[str]:
    """Top-level classes of the file whose bases, followed through the file's classes, are only ``object`` or
    torch's ``nn.Module`` (none a mapped layer): their instances' attributes are their own."""
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, cls in classes.items():
            if name in found:
                continue
            ok = True
            for base in cls.bases:
                if base.keyword is not None:
                    continue  # metaclass=...
                value = base.value
                if isinstance(value, cst.Name) and (value.value == "object" or value.value in found):
                    continue
                if scope.resolve(value) in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                    continue
                ok = False
                break
            if ok:
                found.add(name)
                changed = True
    return frozenset(found)


# nn.Module's public members (dir(torch.nn.Module()); tests/converter/test_own_class_attributes.py checks them
# against the installed torch)
MODULE_MEMBERS = (
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "training", "type", "xpu", "zero_grad")


def own_nodes_of(function: cst.FunctionDef, kinds: tuple) -> list:
    """The nodes of ``kinds`` anywhere in the function (nested scopes too: a closure rebinding counts)."""
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kinds):
                found.append(node)
            return True

    read(function.body, _Find())
    return found


def _binding_name_nodes(node) -> list:
    """The Name nodes a binding construct binds (through tuples and lists)."""
    target = node.target if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                              cst.NamedExpr)) else node.name if isinstance(node, cst.AsName) else None
    out, todo = [], [target]
    while todo:
        t = todo.pop()
        if isinstance(t, cst.Name):
            out.append(t)
        elif isinstance(t, (cst.Tuple, cst.List)):
            todo += [e.value for e in t.elements]
        elif isinstance(t, cst.StarredElement):
            todo.append(t.value)
    return out


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> list | None:
    """The nodes from ``root`` down to ``target`` (both included), or None when ``target`` is not under ``root``."""
    stack: list = []
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node):
            if found:
                return False
            stack.append(node)
            if node is target:
                found.extend(stack)
                return False
            return True

        def on_leave(self, node):
            if stack and stack[-1] is node:
                stack.pop()

    read(root, _Find())
    return found or None


def _evaluated_before(path: list) -> list:
    """Parts of the statement evaluated before the path's last node on every path through it: the earlier arguments
    of each call, and the left operand of each operation (or comparison), the path goes through; a branch the path
    is in stops the search (what precedes it ran only conditionally... or not at all)."""
    before: list = []
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp,
                               cst.DictComp, cst.GeneratorExp)):
            break
        if isinstance(parent, cst.Call) and isinstance(child, cst.Arg):
            before.append(parent.func)
            at = next(i for i, a in enumerate(parent.args) if a is child)
            before += [a.value for a in parent.args[:at]]
        elif isinstance(parent, cst.BinaryOperation) and child is parent.right:
            before.append(parent.left)
        elif isinstance(parent, cst.Comparison) and child is not parent.left:
            before.append(parent.left)
    return before


def _layer_subclass_attributes(module: cst.Module, scope) -> frozenset[str]:
    """Attributes assigned on ``self`` in the file's classes that derive from something other than ``object`` /
    ``nn.Module`` (through the file's classes): a subclass of a torch layer may hold them."""
    own = _own_classes(module, scope)
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value not in own:
            for target in own_nodes_of_class(stmt):
                names.add(target)
    return frozenset(names)


def own_nodes_of_class(cls: cst.ClassDef) -> set[str]:
    found: set[str] = set()

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                found.add(node.attr.value)

    read(cls, _Find())
    return found
