"""The converter rule ModuleMethodTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/module_methods.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.native_facts import own_nodes
from mindport.mappings.surface import member_values, module_members
from mindport.names import is_torch
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.training_loop import named_like_optimizer, named_like_scheduler
from mindport.migrator.scopes import dotted_name, receiver_kind
from mindport.migrator.syntax import code_of, method
from mindport.migrator.walk import parse_expression, parse_statement, read, walk


_RUNTIME_LAYERS = "mindport.runtime.layers"


class ModuleMethodTransform(Rule):
    """nn.Module methods -> Cell methods: train/eval mode, parameter and child iteration, state dicts.
    ``model.parameters()`` is ``trainable_params()``: MindSpore keeps buffers (``register_buffer``, BatchNorm's running
    statistics) as non-trainable Parameters, so ``get_parameters()`` would list them where torch does not. In a file
    that freezes any parameter (``p.requires_grad = False``, ``x.requires_grad_(False)``, a frozen-from-start
    ``nn.Parameter(t, requires_grad=False)``) torch's ``parameters()`` still lists the frozen ones (``for p in
    model.layer4.parameters(): p.requires_grad = True`` unfreezes a block; ``zip(ema.parameters(),
    model.parameters())`` updates an EMA copy): each ``parameters()`` there is ``mindport.runtime.containers.parameters``,
    the trainable Parameters and those frozen (``mindport.runtime.frozen`` marks a freeze), no buffer. One handed to an
    optimizer (``SGD(model.parameters())``, ``filter(lambda p: p.requires_grad, model.parameters())``, a param group)
    stays ``trainable_params()``: torch's step skips a frozen parameter (no grad), MindSpore's would decay it.

    A name bound to an object of a class the file defines that is not a module (``trainer = Trainer(model)``), or of
    a plain class of the project imported from another file (no base but ``object``: ``Options.object_classes``),
    keeps its calls as written: ``trainer.train()`` is the Trainer's method, not nn.Module's; so does ``self.train()``
    (``self.eval()``) inside such a class that defines ``train`` (``eval``) itself (an RL agent's update step).

    Hook registrations: the Cell has torch's public ones under the same names (forward, backward, state-dict hooks);
    torch's other spellings become the Cell's (``register_full_backward_hook`` -> ``register_backward_hook``,
    ``_register_state_dict_hook`` -> ``register_state_dict_post_hook``), and the private
    ``_register_load_state_dict_pre_hook(hook, with_module=False)`` goes through
    ``mindport.runtime.layers.register_load_state_dict_pre_hook``, which calls the hook as torch's private form does.

    ``state_dict()`` stays the Cell's own (MindSpore 2.10 has torch's): keys relative to the receiver
    (``parameters_dict()`` names every Parameter by its global name, so a child layer's keys would carry the parent's
    path: ``implicit_filter.0.weight`` where torch has ``weight``), persistent buffers included, the state-dict hooks
    run. One whose result is read by key (``sd[k]``, ``sd.get(k)``, ``k in sd``, at once or through the name it is
    bound to) is ``mindport.runtime.layers.state_dict``: the same keys and order, and torch's name of each entry
    answered too, so a key from ``named_parameters()`` (torch's ``norm.weight`` for the Cell's ``norm.gamma``) finds
    its tensor (an EMA updated by ``esd[k].copy_(...)`` over ``named_parameters()``). ``load_state_dict(sd, strict)`` goes through ``mindport.runtime.layers.load_state_dict``: the Cell's own
    (and ``mindspore.load_param_into_net``) give each Parameter new storage, so after an optimizer has stepped its
    updates no longer reach the model and training silently stops; the runtime writes the Parameters in place and
    keeps the Cell's key checks (a missing or unexpected key raises unless ``strict=False``). A receiver named like an
    optimizer is the training-loop rule's.

    ``named_buffers()``/``buffers()`` become ``mindport.runtime.containers``' functions: ``register_buffer`` made each
    buffer a non-trainable Parameter, which the Cell's own ``named_buffers()`` does not list. So does
    ``named_parameters()``: the Cell's ``parameters_and_names()`` names a MindSpore layer's Parameters by MindSpore's
    attributes (a LayerNorm's ``gamma``/``beta``, an Embedding's ``embedding_table``) and lists the buffers, so
    ``'bias' in name`` or a ``no_decay`` list would pick other tensors than torch's; the runtime's gives torch's names
    and the trainable Parameters (as ``parameters()``). ``get_submodule``/``get_parameter`` (the Cell has neither), ``get_buffer`` (the Cell's knows only
    non-persistent buffers: ``get_buffer('block.scale')`` raised "`scale` is not a buffer"),
    ``parameters(recurse=...)`` and ``named_modules(...)`` given arguments (``prefix``, ``recurse``, ``memo``,
    ``remove_duplicate``: the Cell's ``cells_and_names`` names them otherwise) are the runtime's too.

    ``model.forward(x)`` and ``loss.forward(fx, y)`` called outside a model class (tutorial training code) become
    ``construct``: a Cell's forward is its ``construct`` (``SequentialCell`` and MindSpore's losses have no
    ``forward``), and so does a bound ``model.forward`` handed to a function (``jacobian(pde.forward, x)``). Left
    alone in a file that defines a class with a ``forward`` method that is no nn.Module.

    A model class's own ``train(self, mode=True)`` (a backbone that keeps its BatchNorms frozen) is what torch's
    ``model.train()``/``model.eval()`` call, on the model and on every sub-module: it becomes the class's
    ``set_train``, what those calls convert to, marked ``@mp_nn.train_override``, and the Cell's ``set_train`` calls
    such an override in the sub-cells as torch's ``train`` calls each child's (``mindport.runtime.layers``). An
    override without ``mode`` (``def train(self)``) is called so; the class's own ``eval(self)`` is marked
    ``@mp_nn.eval_override``, which ``set_train(False)`` (what ``model.eval()`` converts to) calls on that model.

    ``next(self.parameters())`` in a model's method (for the device or dtype of its first weight) reads
    ``self._mp_first_parameter``, a class attribute the rule adds (``mindport.runtime.layers.FirstParameter``): the
    first of ``get_parameters()``, as ``next(self.get_parameters())`` takes it, but compiled by GRAPH_MODE, which
    resolves an attribute of ``self`` by Python's lookup and compiles no generator (``next(self.get_parameters())``,
    ``self.trainable_params()[0]`` and ``list(self.get_parameters())[0]`` all fail to compile in MindSpore 2.10).

    ``m.modules()`` in a model's forward and the methods it calls through ``self`` reads
    ``m._mp_modules``: a list of the Cells under ``m`` and ``m`` itself, in torch's order, that GRAPH_MODE compiles
    (``mindport.runtime.layers.Modules``, which that module installs on ``nn.Cell`` when it loads: the import stays
    for it); a graph refuses the generator over ``cells_and_names()`` ("Unsupported expression 'Yield'"), which
    every other method keeps (an ``_initialize_weights`` loop stays MindSpore's own iteration). So do
    ``m.parameters()``, ``m.buffers()``, ``m.named_parameters()`` and ``m.named_buffers()`` there: ``m._mp_parameters``
    (and ``_mp_buffers``, ...), a list of torch's members (``mindport.runtime.layers.MemberList``); a graph refuses
    ``trainable_params()`` in construct, which openai's diffusion UNets reach through
    ``checkpoint(self._forward, (x,), self.parameters(), self.use_checkpoint)``. ``next(m.buffers())`` (and of the
    other three but ``parameters()``) there is the list's first item: ``next()`` refuses a list (x-transformers'
    ``AlibiPositionalBias.device``, ``next(self.buffers()).device``).

    ``self.children()``/``self.named_children()`` in a model's forward read the Cell's ``_cells`` table (None left
    out): MindSpore 2.10's graph compiler crashes on ``cells()``/``name_cells()`` inside construct. A class that may
    hold one sub-module under two names keeps ``cells()`` (torch lists it once, the table twice).

    A model's ``__init__`` that adds a member to a container it holds (``self.net.add_module(...)``, ``append``,
    ``extend``, ``insert``) or keeps modules in a plain list, tuple or dict (``self.heads = [nn.Linear(4, 4), ...]``)
    ends with ``mindport.runtime.layers.own_names(self)``: every Parameter named by its path, as torch's state_dict
    keys. Modules in a plain Python container are not registered in torch (no state_dict entry, not in
    ``parameters()``, not switched by ``eval()``) nor in MindSpore; ``own_names`` keeps them so, names their
    Parameters by their path (a graph refuses two Parameters of one name: ``1.gamma`` of each Sequential) and puts
    them in torch's training mode, which the owner's ``eval()`` never reaches in torch (minemile's DeepLabv3 ASPP)."""

    EXAMPLES = (
        Example(
            before="""
                def report(model):
                    model.eval()
                    for name, p in model.named_parameters():
                        print(name, p.shape)
                    return model.state_dict()
            """,
            after="""
                from mindport.runtime import containers as mp_containers
                def report(model):
                    model.set_train(False)
                    for name, p in mp_containers.named_parameters(model):
                        print(name, p.shape)
                    return model.state_dict()
            """,
            note="Module methods become the Cell methods of the same meaning (state_dict is the Cell's own: keys "
                 "relative to the receiver, as torch's); named_parameters() gives torch's names (weight for a "
                 "LayerNorm's gamma).",
        ),
        Example(
            before="""
                import torch
                def ema_update(model, ema, decay):
                    keys = [k for k, _ in ema.named_parameters()]
                    msd, esd = model.state_dict(), ema.state_dict()
                    with torch.no_grad():
                        for k in keys:
                            esd[k].copy_(esd[k] * decay + (1 - decay) * msd[k])
                    torch.save(ema.state_dict(), "ema.pt")
            """,
            after="""
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import checkpoint as mp_checkpoint
                from mindport.runtime import containers as mp_containers
                from mindport.runtime import layers as mp_nn
                def ema_update(model, ema, decay):
                    keys = [k for k, _ in mp_containers.named_parameters(ema)]
                    msd, esd = mp_nn.state_dict(model), mp_nn.state_dict(ema)
                    for k in keys:
                        esd[k] = mp_inplace.copy_(esd[k], src=esd[k] * decay + (1 - decay) * msd[k])
                    mp_checkpoint.save(ema.state_dict(), "ema.pt")
            """,
            note="A state_dict read by key answers torch's names (a key from named_parameters(): a BatchNorm's "
                 "weight is the Cell's gamma); one only saved stays the Cell's own.",
        ),
        Example(
            before="""
                def param_dtype(model):
                    return next(model.parameters()).dtype
            """,
            after="""
                def param_dtype(model):
                    return next(model.get_parameters()).dtype
            """,
            note="next(m.parameters()) takes the first parameter of a generator: Cell.get_parameters() is one "
                 "(trainable_params(), what parameters() becomes elsewhere, is a list, which next() refuses).",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn

                class Encoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.rnn = nn.GRU(4, 8)

                    def forward(self, x):
                        h = torch.zeros(1, x.size(1), 8, dtype=next(self.parameters()).dtype)
                        return self.rnn(x, h)[0]
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import layers as mp_nn

                class Encoder(nn.Cell):
                    _mp_first_parameter = mp_nn.FirstParameter()

                    def __init__(self):
                        super().__init__()
                        self.rnn = mp_nn.GRU(input_size=4, hidden_size=8)

                    def construct(self, x):
                        h = ops.zeros((1, x.shape[1], 8), dtype=self._mp_first_parameter.dtype)
                        return self.rnn(x, h)[0]
            """,
            note="next(self.parameters()) in a model's method: a class attribute that GRAPH_MODE resolves to the "
                 "Cell's first Parameter (the generator does not compile there).",
        ),
        Example(
            before="""
                import torch.nn as nn

                def stage(n):
                    block = nn.Sequential()
                    for i in range(n):
                        block.add_module('unit_%d' % i, nn.ReLU())
                    return block
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                def stage(n):
                    block = nn.SequentialCell()
                    for i in range(n):
                        mp_nn.add_module(block, 'unit_%d' % i, nn.ReLU())
                    return block
            """,
            note="add_module/register_module go through mindport.runtime.layers.add_module: insert_child_to_cell "
                 "alone names the child but leaves a SequentialCell's run list empty, so the stage would run as "
                 "the identity.",
        ),
        Example(
            before="""
                import torch.nn as nn

                class MixConv(nn.Module):
                    def __init__(self, kernels):
                        super().__init__()
                        for i, k in enumerate(kernels):
                            self.add_module(name=str(i), module=nn.Conv2d(4, 4, k))
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                class MixConv(nn.Cell):
                    def __init__(self, kernels):
                        super().__init__()
                        for i, k in enumerate(kernels):
                            mp_nn.add_module(self, str(i), nn.Conv2d(in_channels=4, out_channels=4, kernel_size=k, has_bias=True, pad_mode='valid'))
            """,
            note="Arguments given by torch's keyword names (name=, module=, param=) are put in their places: the "
                 "Cell has no add_module method to take them (imgclsmob's MixConv).",
        ),
        Example(
            before="""
                import torch.nn as nn

                class Model(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.net_l = nn.Sequential()
                        self.net_l.add_module('layer_1', nn.Linear(1, 20))
                        self.net_h = nn.Sequential()
                        self.net_h.add_module('layer_1', nn.Linear(2, 10))
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                class Model(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.net_l = nn.SequentialCell()
                        mp_nn.add_module(self.net_l, 'layer_1', nn.Dense(in_channels=1, out_channels=20))
                        self.net_h = nn.SequentialCell()
                        mp_nn.add_module(self.net_h, 'layer_1', nn.Dense(in_channels=2, out_channels=10))
                        mp_nn.own_names(self)
            """,
            note="A member added to a container the model already holds (add_module, append, extend, insert) is named "
                 "by MindSpore without the container's path (layer_1.weight twice: an optimizer over the model raised "
                 "'already exists'); own_names at the end of __init__ names every Parameter by its path, as torch's "
                 "state_dict keys (net_l.layer_1.weight).",
        ),
        Example(
            before="""
                import torch.nn as nn

                class Attention(nn.Module):
                    def __init__(self, dim):
                        super().__init__()
                        self.wqkv = nn.Linear(dim, 3 * dim)
                        self._register_load_state_dict_pre_hook(self.load_hook)

                    def load_hook(self, state_dict, prefix, *args):
                        pass
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                class Attention(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.wqkv = nn.Dense(in_channels=dim, out_channels=3 * dim)
                        mp_nn.register_load_state_dict_pre_hook(self, self.load_hook)

                    def load_hook(self, state_dict, prefix, *args):
                        pass
            """,
            note="torch's private load_state_dict pre-hook: the Cell's public one, the hook called without the "
                 "module as torch's private form calls it.",
        ),
        Example(
            before="""
                import torch.nn as nn

                class Backbone(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.bn = nn.BatchNorm2d(4)

                    def train(self, mode=True):
                        super().train(mode)
                        self.bn.eval()
                        return self
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                class Backbone(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.bn = nn.BatchNorm2d(num_features=4, eps=1e-05, momentum=0.9)

                    @mp_nn.train_override
                    def set_train(self, mode=True):
                        super().set_train(mode)
                        self.bn.set_train(False)
                        return self
            """,
            note="A model's own train(mode) is what model.train()/eval() reach, on it and as a sub-module: the "
                 "Cell's set_train.",
        ),
        Example(
            before="""
                def train(model, loss, optimizer, x, y):
                    model.train()
                    fx = model.forward(x)
                    return loss.forward(fx, y)
            """,
            after="""
                def train(model, loss, optimizer, x, y):
                    model.set_train(True)
                    fx = model.construct(x)
                    return loss.construct(fx, y)
            """,
            note="An explicit forward call on a model or a loss is its construct.",
        ),
        Example(
            before="""
                import torch.nn as nn

                class Stem(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)
                        self.act = nn.ReLU()

                    def forward(self, x):
                        for layer in self.children():
                            x = layer(x)
                        return x
            """,
            after="""
                from mindspore import nn

                class Stem(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)
                        self.act = nn.ReLU()

                    def construct(self, x):
                        for layer in [_cell for _cell in self._cells.values() if _cell is not None]:
                            x = layer(x)
                        return x
            """,
            note="self.children() in forward: the Cell's own table of sub-cells, which GRAPH_MODE compiles "
                 "(self.cells() there crashes MindSpore 2.10's graph compiler); elsewhere it is cells().",
        ),
        Example(
            before="""
                import torch.nn as nn

                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.body = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.ReLU()))

                    def forward(self, x):
                        linears = [m for m in self.body.modules() if isinstance(m, nn.Linear)]
                        return linears[-1](x)
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn

                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.body = nn.SequentialCell(nn.Dense(in_channels=4, out_channels=4), nn.SequentialCell(nn.Dense(in_channels=4, out_channels=4), nn.ReLU()))

                    def construct(self, x):
                        linears = [m for m in self.body._mp_modules if isinstance(m, nn.Dense)]
                        return linears[-1](x)
            """,
            note="m.modules() in forward: a list of the cells that GRAPH_MODE compiles (mindport.runtime.layers "
                 "installs _mp_modules on nn.Cell); in __init__ it stays a generator over cells_and_names().",
        ),
    )

    RENAMES = {
        "named_parameters": "parameters_and_names",
        "named_modules": "cells_and_names",
        "register_parameter": "insert_param_to_cell",
        # nn.Module's hook registrations (tests/converter/test_module_hooks.py enumerates them from torch): the Cell
        # has torch's public ones under the same names; these are torch's other spellings of them
        "register_full_backward_hook": "register_backward_hook",
        "register_full_backward_pre_hook": "register_backward_pre_hook",
        "_register_state_dict_hook": "register_state_dict_post_hook",
    }

    # mindport.runtime.layers functions: insert_child_to_cell alone would leave a SequentialCell's run list empty
    # (it would run as the identity); insert_param_to_cell(name, None) keeps a None among the Cell's parameters,
    # which GRAPH_MODE's compile reads as a Parameter (AttributeError: 'NoneType' object has no attribute 'param_info')
    RUNTIME = {"add_module": "add_module", "register_module": "add_module", "register_parameter": "register_parameter"}
    # their parameters by torch's names (inspect.signature of nn.Module's; tests/converter/test_module_add_keywords.py
    # reads them from torch): imgclsmob's `self.add_module(name=str(i), module=nn.Conv2d(...))` passes both by keyword
    RUNTIME_PARAMETERS = {"add_module": ("name", "module"), "register_module": ("name", "module"),
                          "register_parameter": ("name", "param")}
    # torch's private form passes the module to the hook only with_module=True; the Cell's public one always does
    HOOKS = {"_register_load_state_dict_pre_hook": "register_load_state_dict_pre_hook"}

    # read in forward and the methods it calls: an attribute GRAPH_MODE resolves (mindport.runtime.layers.MemberList)
    MEMBER_LISTS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})
    BUFFERS = {"named_buffers", "buffers"}  # register_buffer became a non-trainable Parameter: the runtime lists them
    # torch's names for a MindSpore layer's Parameters (a LayerNorm's gamma is weight), buffers left out; the Cell has
    # no get_submodule/get_parameter
    # get_buffer: the Cell's own knows only non-persistent buffers (a persistent one became a non-trainable Parameter)
    TORCH_NAMES = {"named_parameters", "get_submodule", "get_parameter", "get_buffer"}
    # with arguments (prefix, recurse, remove_duplicate), which Cell.parameters_and_names names otherwise
    WITH_ARGUMENTS = {"named_modules", "parameters"}

    def __init__(self, ctx, module_classes: set[str] = frozenset()) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._module_classes = module_classes
        self._classes: list[tuple[bool, int]] = []  # (a model class, the function depth of its body)
        self._own_methods: list[set[str]] = []  # per class: the methods its body defines
        self._method_nodes: list[dict] = []  # per class: its methods by name
        self._depth = 0
        self._functions: list[str] = []  # the enclosing functions' names
        self._aliasing: list[bool] = []  # per enclosing class: may one sub-cell sit under two attribute names?
        self._compiled: list[frozenset[str]] = []  # per enclosing class: forward and the methods it calls on self
        self._fills: list[bool] = []  # per function: adds a member to a container held by self (own_names)
        self._lists: list[frozenset[str]] = []  # per function: in __init__, the self attributes made ModuleLists
        self._objects: list[set[str]] = [set()]  # per function: names holding an object of the project's own
        # non-module classes (trainer = Trainer(model)): their train()/eval()/parameters() are the class's own
        self._file_classes: set[str] = set()
        self._first_parameter: list[set[str]] = []  # per enclosing class: the paths self._mp_first_parameter* reads
        self._next_of: set[int] = set()  # the parameters() calls next(...) takes (the outer call rewrites them)
        self._called: set[int] = set()  # callees of calls and assignment targets: an attribute not among them is
        # a value read

    def visit_Call(self, node) -> None:
        self._called.add(id(node.func))
        if _is_next_of_parameters(node):
            self._next_of.add(id(node.args[0].value))  # next(m.parameters()): the outer call's rewrite takes it

    def visit_ClassDef(self, node) -> None:
        self._classes.append((node.name.value in self._module_classes, self._depth))
        self._own_methods.append({b.name.value for b in node.body.body if isinstance(b, cst.FunctionDef)}
                                 if isinstance(node.body, cst.IndentedBlock) else set())
        self._method_nodes.append({b.name.value: b for b in node.body.body if isinstance(b, cst.FunctionDef)}
                                  if isinstance(node.body, cst.IndentedBlock) else {})
        # the attributes the class sets on self (``self.buffers = []``): its own, no nn.Module method
        self._own_methods[-1] |= {t.attr.value for t in _self_targets(node)}
        self._aliasing.append(_may_alias_cells(node))
        self._compiled.append(_forward_methods(node))
        self._first_parameter.append(set())

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        self._own_methods.pop()
        self._method_nodes.pop()
        self._aliasing.pop()
        self._compiled.pop()
        paths = self._first_parameter.pop()
        if paths:
            return _with_first_parameter(updated_node, paths)
        return updated_node

    def visit_FunctionDef(self, node) -> None:
        self._depth += 1
        self._functions.append(node.name.value)
        self._objects.append(set())
        self._fills.append(False)
        self._lists.append(_module_list_attributes(node) if node.name.value == "__init__" else frozenset())

    def visit_Assign(self, node) -> None:
        if self._fills and self._functions[-1:] == ["__init__"] and self._classes \
                and self._classes[-1] == (True, self._depth - 1) and self._holds_modules(node.value) \
                and any(_self_path(t.target) for t in node.targets):
            # self.heads = [nn.Linear(...), ...]: members torch does not register, which need names of their own in
            # a graph and torch's training mode (mindport.runtime.layers.own_names)
            self._fills[-1] = True
        names = [t.target.value for t in node.targets if isinstance(t.target, cst.Name)]
        if self._own_object(node.value):
            self._objects[-1].update(names)
        else:
            self._objects[-1].difference_update(names)

    def _holds_modules(self, value) -> bool:
        """A list, tuple or dict display or comprehension that calls a torch.nn layer class or a module class of the
        file (``[nn.Linear(4, 4) for _ in range(2)]``): modules kept in a plain container."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and isinstance(value.func.value, cst.Name) and value.func.value.value == "self" and self._method_nodes:
            # self.res_blocks = self.stack_res_block(...) (golbin/WaveNet): an own method that returns a local list
            # it filled with modules (``blocks = []; blocks.append(Block(...)); return blocks``) or such a display
            method = self._method_nodes[-1].get(value.func.attr.value)
            return method is not None and self._returns_modules(method)
        if not isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.ListComp, cst.DictComp)):
            return False
        found = []
        scope, classes = self.scope, self._module_classes

        class _Find(cst.CSTVisitor):
            def visit_Call(self, node):
                if isinstance(node.func, (cst.Name, cst.Attribute)):
                    qual = scope.resolve(node.func) or ""
                    leaf = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
                    if (qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper()) or leaf in classes:
                        found.append(node)

        walk(value, _Find())
        return bool(found)

    def _returns_modules(self, method: cst.FunctionDef, single: bool = False, depth: int = 0) -> bool:
        """Does ``method`` return modules in a plain container: a display holding module calls, or a local name it
        binds to a display and fills with ``append``/``extend``/``insert`` of modules (``blocks = []``,
        ``blocks.append(block)``, ``return blocks``)? With ``single``: does it return one module (``block =
        ResidualBlock(...); return block``), which a container of the caller's may hold?"""
        if depth > 3:
            return False

        def module(expr) -> bool:
            if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                    and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self":
                other = self._method_nodes[-1].get(expr.func.attr.value)
                return other is not None and other is not method and self._returns_modules(other, True, depth + 1)
            return self._holds_modules(cst.List([cst.Element(expr)]))

        assigned = [(t.target.value, a.value) for a in own_nodes(method, cst.Assign) for t in a.targets
                    if isinstance(t.target, cst.Name)]
        made = {name for name, value in assigned if module(value)}
        returned = [r.value for r in own_nodes(method, cst.Return) if r.value is not None]
        if single:
            return bool(returned) and all(module(r) or isinstance(r, cst.Name) and r.value in made for r in returned)
        if any(self._holds_modules(r) for r in returned):
            return True
        displays = {name for name, value in assigned if isinstance(value, (cst.List, cst.Tuple, cst.Dict))}
        names = {r.value for r in returned if isinstance(r, cst.Name)} & displays
        for call in own_nodes(method, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert") \
                    and isinstance(func.value, cst.Name) and func.value.value in names and call.args:
                item = call.args[-1].value
                if isinstance(item, cst.Name) and item.value in made or module(item):
                    return True
        return False

    def _own_object(self, value) -> bool:
        """``Trainer(model)``: a call of a class this file defines that is not a module class, or of one imported
        from another file of the project that is none (``Options.object_classes``: convert_path knows them from every
        file's class bases; a file converted before those are known, a file that defines no class, is converted again
        with them where it calls one)."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return False
        qual = self.scope.resolve(value.func)
        if isinstance(value.func, cst.Name) and qual is None:
            name = value.func.value
            return name in self._file_classes and name not in self._module_classes
        name = (qual or "").rsplit(".", 1)[-1]
        return bool(qual) and not is_torch(qual) and name in self.ctx.options.object_classes \
            and name not in self._module_classes

    def leave_FunctionDef(self, original_node, updated_node):
        self._depth -= 1
        self._functions.pop()
        self._objects.pop()
        self._lists.pop()
        if self._fills.pop() and updated_node.name.value == "__init__" and updated_node.params.params \
                and isinstance(updated_node.body, cst.IndentedBlock):
            # a member added to a container the model already holds keeps a name without the container's path
            # (mindport.runtime.layers.own_names): the model's Parameters named by their paths once it is built
            owner = updated_node.params.params[0].name.value
            self.runtime_modules.add(_RUNTIME_LAYERS)
            named = parse_statement(f"{runtime_alias(_RUNTIME_LAYERS)}.own_names({owner})\n")
            body = updated_node.body.with_changes(body=[*updated_node.body.body, named])
            updated_node = updated_node.with_changes(body=body)
        if updated_node.name.value == "train" and self._classes and self._classes[-1] == (True, self._depth) \
                and _mode_parameters(updated_node.params):
            # the model's own train(mode): what model.train()/eval() (set_train) reach, on it and as a sub-cell
            self.runtime_modules.add(_RUNTIME_LAYERS)
            marker = cst.Decorator(parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.train_override"))
            return updated_node.with_changes(name=cst.Name("set_train"),
                                             decorators=[*updated_node.decorators, marker])
        if updated_node.name.value == "eval" and self._classes and self._classes[-1] == (True, self._depth) \
                and [p.name.value for p in updated_node.params.params] == ["self"] \
                and _mode_parameters(updated_node.params):
            # the model's own eval(): what model.eval() (set_train(False)) reaches on it
            self.runtime_modules.add(_RUNTIME_LAYERS)
            marker = cst.Decorator(parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.eval_override"))
            return updated_node.with_changes(decorators=[*updated_node.decorators, marker])
        return updated_node

    def visit_Module(self, node) -> None:
        self._file_classes = {c.name.value for c in node.body if isinstance(c, cst.ClassDef)}
        calls = walk_calls(node)
        # a file that freezes any parameter (p.requires_grad = False, x.requires_grad_(False), a frozen-from-start
        # nn.Parameter) lists frozen ones where torch does: every parameters() there goes through the runtime
        self._freezes = _freezes_any(node, calls)
        # parameters() handed to an optimizer (torch.optim.SGD(model.parameters()), param groups, filter(...)) stays
        # trainable_params(): torch's step skips a frozen parameter (its grad is None), MindSpore's would decay it
        optimizers = [call for call in calls if _is_optimizer(self.ctx.module_scope.resolve_torch(call.func) or "")]
        self._optimized = {id(c) for call in optimizers for c in walk_calls(call) if c is not call}
        if self._freezes and _unfreezes_any(node, calls):
            # ... unless the file also unfreezes: torch's optimizer holds every parameter it was given and trains one
            # unfrozen after it was built; the runtime's steps skip those frozen when they run (runtime/frozen.py)
            self._optimized = set()
        # state_dict() calls whose result is read by key (sd[k], sd.get(k), k in sd): torch's names answered too
        self._keyed_state_dicts = _state_dicts_read_by_key(node)
        # a class of the file with a forward method that is no nn.Module: x.forward(...) may be one of its objects
        self._plain_forward = any(
            any(isinstance(b, cst.FunctionDef) and b.name.value == "forward" for b in c.body.body)
            and not any(self.ctx.module_scope.resolve_torch(base.value) or "Module" in code_of(base.value)
                        for base in c.bases)
            for c in node.body if isinstance(c, cst.ClassDef))

    # torch's ways of adding a member to a container (Sequential, ModuleList, ModuleDict by name)
    FILLS = frozenset({"add_module", "register_module", "append", "extend", "insert"})

    def leave_Arg(self, original_node, updated_node):
        # a model's bound forward handed to a function (jacobian(pde.forward, x), functools.partial(model.forward,
        # ...)) is the Cell's construct, as the call model.forward(x) is: a Cell has no forward
        value = updated_node.value
        if isinstance(value, cst.Attribute) and value.attr.value == "forward" \
                and not getattr(self, "_plain_forward", False) \
                and self.scope.resolve_torch(original_node.value.value) is None:
            return updated_node.with_changes(value=value.with_changes(attr=cst.Name("construct")))
        return updated_node

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if isinstance(func, cst.Name) and func.value == "next" and self.scope.resolve(func) is None \
                and len(updated_node.args) == 1 and not updated_node.args[0].star \
                and updated_node.args[0].keyword is None and isinstance(updated_node.args[0].value, cst.Attribute) \
                and updated_node.args[0].value.attr.value in {f"_mp_{n}" for n in self.MEMBER_LISTS} \
                and isinstance(original_node.args[0].value, cst.Call):
            # next(self.buffers()) in forward and what it calls (x-transformers' AlibiPositionalBias.device): the
            # member list below is a list, which next() refuses ("'list' object is not an iterator"): its first item
            self.ctx.converted_sites += 1
            return cst.Subscript(value=updated_node.args[0].value,
                                 slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        if isinstance(original_node.func, cst.Attribute) and original_node.func.attr.value in self.FILLS \
                and self._fills and self._functions[-1:] == ["__init__"] and self._classes \
                and self._classes[-1] == (True, self._depth - 1) and _self_path(original_node.func.value) \
                and not (original_node.func.attr.value in ("append", "extend", "insert")
                         and _self_path(original_node.func.value) in self._lists[-1]):
            # self.net.add_module(...) in a model's __init__ (leave_FunctionDef); a ModuleList filled by append,
            # extend or insert is built in a local and named when assigned (native_facts.hoisted_list) or is the
            # runtime ModuleList, which names its members itself
            self._fills[-1] = True
        if _is_next_of_parameters(original_node) and self.scope.resolve(original_node.func) is None \
                and len(original_node.args) == 1 and self._in_model_method(original_node.args[0].value.func.value):
            # next(self.parameters()) in a model's method: GRAPH_MODE compiles no generator, but resolves an
            # attribute of self by Python's lookup (mindport.runtime.layers.FirstParameter, a class attribute)
            self._first_parameter[-1].add("")
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return parse_expression("self._mp_first_parameter")
        path = _self_path(original_node.args[0].value.func.value) if _is_next_of_parameters(original_node) else None
        if path and self.scope.resolve(original_node.func) is None and len(original_node.args) == 1 \
                and self._in_model_method(cst.Name("self")) and self._functions[-1:] \
                and self._functions[-1] in self._compiled[-1]:
            # next(self.blocks.parameters()) in forward and what it reaches (improved-diffusion's inner_dtype): a
            # graph reads a CellList as a tuple ('Tuple' object has no attribute 'get_parameters'); a class
            # attribute of the model gives the sub-module's first parameter by Python's lookup
            self._first_parameter[-1].add(path)
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return parse_expression(f"self.{_first_parameter_name(path)}")
        if _is_next_of_parameters(original_node) and self.scope.resolve(original_node.func) is None:
            # next(m.parameters()): torch's is a generator (trainable_params() is a list, next() refuses it)
            inner = updated_node.args[0].value
            if dotted_name(inner.func.value) == runtime_alias("mindport.runtime.containers") and inner.args:
                # mp_containers.parameters(m), in a file that freezes parameters: m.get_parameters() as elsewhere
                inner = parse_expression(f"{code_of(inner.args[0].value)}.parameters()")
            inner = inner.with_changes(func=inner.func.with_changes(attr=cst.Name("get_parameters")))
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=inner),
                                                   *updated_node.args[1:]])
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node  # module-level functions (np.eval, torch.load ...) are not methods
        name = func.attr.value
        args = updated_node.args
        if isinstance(func.value, cst.Name) and func.value.value in self._objects[-1]:
            return updated_node  # trainer.train(): the project's own class's method, not nn.Module's
        if self._own_object(original_node.func.value):
            return updated_node  # Trainer(model, opt).train(3): the same, on the object as it is made
        if name in ("train", "eval") and not (isinstance(func.value, cst.Name) and func.value.value == "self") \
                and receiver_kind(original_node.func.value, self.scope) == "object":
            return updated_node  # trainer = holder.make_trainer(); trainer.train(): a trainer class's own (project
            # return kind "object", project.trainer_classes: no torch base)
        if isinstance(func.value, cst.Name) and func.value.value == "self" and self._classes \
                and not self._classes[-1][0] and name in self._own_methods[-1]:
            return updated_node  # self.train() in an agent/trainer class defining train(): its own method
        if name == "eval" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("set_train")),
                                              args=[cst.Arg(cst.Name("False"))])
        if name == "train" and len(args) <= 1 and all(a.keyword is None or a.keyword.value == "mode" for a in args):
            value = args[0].value if args else cst.Name("True")
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("set_train")), args=[cst.Arg(value)])
        if name in self.MEMBER_LISTS and not args and self._in_model_method(cst.Name("self")) \
                and self._functions[-1:] and self._functions[-1] in self._compiled[-1] \
                and id(original_node) not in self._optimized and id(original_node) not in self._next_of:
            # in forward and what it calls: a list GRAPH_MODE compiles (mindport.runtime.layers.MemberList on
            # nn.Cell); trainable_params() and the runtime's generators do not compile in construct
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Attribute(value=func.value, attr=cst.Name(f"_mp_{name}"))
        if name == "parameters" and not args and getattr(self, "_freezes", False) \
                and id(original_node) not in self._optimized:
            self.runtime_modules.add("mindport.runtime.containers")  # a frozen module's parameters() lists them
            return parse_expression(f"{runtime_alias('mindport.runtime.containers')}.parameters("
                                    f"{code_of(func.value)})")
        if name == "parameters" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("trainable_params")))
        if name == "forward" and args and not getattr(self, "_plain_forward", False):
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("construct")))
        if name in ("children", "named_children") and not args and self._in_forward(func.value):
            return _own_cells(name == "named_children")
        if name == "children" and not args:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("cells")))
        if name == "named_children" and not args:
            inner = updated_node.with_changes(func=func.with_changes(attr=cst.Name("name_cells")))
            return method(inner, "items")
        if name == "modules" and not args and self._in_model_method(cst.Name("self")) \
                and self._functions[-1:] and self._functions[-1] in self._compiled[-1]:
            # in forward and what it calls: a list GRAPH_MODE compiles (mindport.runtime.layers.Modules on nn.Cell)
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Attribute(value=func.value, attr=cst.Name("_mp_modules"))
        if name == "modules" and not args:
            # Cell has no modules(): iterate cells_and_names() and keep the cells.
            pairs = updated_node.with_changes(func=func.with_changes(attr=cst.Name("cells_and_names")))
            return cst.GeneratorExp(
                elt=cst.Name("_cell"),
                for_in=cst.CompFor(target=cst.Tuple([cst.Element(cst.Name("_")), cst.Element(cst.Name("_cell"))],
                                                    lpar=[], rpar=[]), iter=pairs),
            )
        bound = _bound_positionally(args, self.RUNTIME_PARAMETERS[name]) if name in self.RUNTIME else None
        if bound is not None:
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.{self.RUNTIME[name]}"),
                            args=[cst.Arg(func.value), *[cst.Arg(value) for value in bound]])
        if name in self.RUNTIME and args and all(arg.keyword is None and arg.star != "**" for arg in args) \
                and any(arg.star == "*" for arg in args):
            # self.add_module(*stage): positions only, torch's order is the helper's (name, module) after the parent
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.{self.RUNTIME[name]}"),
                            args=[cst.Arg(func.value), *[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                                         for arg in args]])
        if name in self.HOOKS and args:
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.{self.HOOKS[name]}"),
                            args=[cst.Arg(func.value), *args])
        if name == "state_dict" and not args and id(original_node) in getattr(self, "_keyed_state_dicts", ()) \
                and not _optimizer_receiver(func.value):
            # read by key: a key from named_parameters() (torch's names: a LayerNorm's weight) finds the Cell's gamma
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.state_dict"),
                            args=[cst.Arg(func.value)])
        if name == "load_state_dict" and args and not _optimizer_receiver(func.value):
            # the Cell's own would give each Parameter new storage: an optimizer that stepped no longer reaches it
            self.runtime_modules.add(_RUNTIME_LAYERS)
            return cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME_LAYERS)}.load_state_dict"),
                            args=[cst.Arg(func.value), *args])
        if name in self.BUFFERS or name in self.TORCH_NAMES or (name in self.WITH_ARGUMENTS and args):
            self.runtime_modules.add("mindport.runtime.containers")
            alias = runtime_alias("mindport.runtime.containers")
            return cst.Call(func=parse_expression(f"{alias}.{name}"), args=[cst.Arg(func.value), *args])
        if name in self.RENAMES:
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name(self.RENAMES[name])))
        return updated_node


    # nn.Module's members taken as values, not called (mappings/data/surface/module_members.toml): a "bound" one is
    # mindport.runtime.containers.method_of(receiver, name), torch's meaning bound to the Cell; a "flag" one MP101
    METHOD_VALUES = member_values("bound")
    FLAGGED_VALUES = member_values("flag")

    def visit_AssignTarget(self, node) -> None:
        self._called.add(id(node.target))  # self.parameters = ...: a target, no value read

    def visit_AnnAssign(self, node) -> None:
        self._called.add(id(node.target))

    def visit_AugAssign(self, node) -> None:
        self._called.add(id(node.target))

    def leave_Attribute(self, original_node, updated_node):
        """``self.named_parameters`` taken as a value in a model's method (GMvandeVen/continual-learning's
        ``self.param_list = [self.named_parameters]``, called later as ``gen_params()``): the Cell has no such
        method; the runtime's function bound to the module, which lists and names them as torch does."""
        name = original_node.attr.value
        if id(original_node) in self._called or name not in self.METHOD_VALUES | self.FLAGGED_VALUES:
            return updated_node
        on_self = self._in_model_method(original_node.value) and name not in self._own_methods[-1]
        # a sub-module's (self.fc.train): the runtime gives a receiver that is no Cell, or whose own class defines
        # the name, its own attribute; not in what a graph compiles, where the receiver may be any object
        on_path = _self_path(original_node.value) is not None and self._in_model_method(cst.Name("self")) \
            and not (self._functions[-1:] and self._functions[-1] in self._compiled[-1])
        if name in self.FLAGGED_VALUES:
            if on_self:
                self.ctx.diagnose(original_node, "MP101", f"torch.nn.Module.{name} read as a value: "
                                  f"{module_members()[name]['how']}", api=f"torch.nn.Module.{name}")
            return updated_node
        if on_self or on_path:
            self.runtime_modules.add("mindport.runtime.containers")
            self.ctx.converted_sites += 1
            return cst.Call(func=parse_expression(f"{runtime_alias('mindport.runtime.containers')}.method_of"),
                            args=[cst.Arg(updated_node.value), cst.Arg(cst.SimpleString(repr(name)))])
        return updated_node

    def _in_model_method(self, receiver: cst.BaseExpression) -> bool:
        """``self`` in a method of a model class (its own body, not a function nested in it)."""
        return isinstance(receiver, cst.Name) and receiver.value == "self" and bool(self._classes) \
            and self._classes[-1] == (True, self._depth - 1)

    def _in_forward(self, receiver: cst.BaseExpression) -> bool:
        """``self.children()`` in a model class's forward (its construct), the class never holding one sub-module
        under two names."""
        return isinstance(receiver, cst.Name) and receiver.value == "self" and bool(self._classes) \
            and self._classes[-1] == (True, self._depth - 1) and self._functions[-1:] == ["forward"] \
            and not self._aliasing[-1]


def _forward_methods(cls: cst.ClassDef) -> frozenset[str]:
    """``forward`` and the methods of the class it calls through ``self`` or hands on as ``self.m``, transitively
    (what a graph compiles)."""
    methods = {b.name.value: b for b in cls.body.body if isinstance(b, cst.FunctionDef)}
    calls: dict[str, set[str]] = {}
    for name, method in methods.items():
        found: set[str] = set()

        class _Calls(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                # self.m(...) called, or self.m handed on (checkpoint(self._forward, ...) calls it in the graph)
                if isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value in methods:
                    found.add(node.attr.value)

        read(method, _Calls())
        calls[name] = found
    reached, todo = set(), ["forward"] if "forward" in methods else []
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(calls.get(name, ()))
    return frozenset(reached)


def _state_dicts_read_by_key(module: cst.Module) -> set[int]:
    """The ``x.state_dict()`` calls (no arguments) whose result is read by key: subscripted or ``.get``'s receiver
    at once (``model.state_dict()[k]``), or bound to a name (``esd = ema.state_dict()``) that the file subscripts,
    calls ``.get`` on or tests with ``in``. Such a key may be torch's name of a parameter (from
    ``named_parameters()``), which the Cell's own ``state_dict`` keys by MindSpore's (``gamma``)."""

    class Reads(cst.CSTVisitor):
        def __init__(self):
            self.calls: list[cst.Call] = []
            self.read: set[int] = set()  # expressions subscripted, .get's receiver or in's right operand
            self.read_names: set[str] = set()
            self.bound: dict[str, list[int]] = {}

        def _reads(self, value) -> None:
            self.read.add(id(value))
            if isinstance(value, cst.Name):
                self.read_names.add(value.value)

        def visit_Call(self, node) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "state_dict" and not node.args:
                self.calls.append(node)
            if isinstance(func, cst.Attribute) and func.attr.value == "get" and node.args:
                self._reads(func.value)

        def visit_Subscript(self, node) -> None:
            self._reads(node.value)

        def visit_ComparisonTarget(self, node) -> None:
            if isinstance(node.operator, (cst.In, cst.NotIn)):
                self._reads(node.comparator)

        def visit_Assign(self, node) -> None:
            for target in node.targets:
                pairs = [(target.target, node.value)]
                if isinstance(target.target, cst.Tuple) and isinstance(node.value, cst.Tuple) \
                        and len(target.target.elements) == len(node.value.elements):  # msd, esd = a.sd(), b.sd()
                    pairs = [(t.value, v.value) for t, v in zip(target.target.elements, node.value.elements)]
                for name, value in pairs:
                    if isinstance(name, cst.Name):
                        self.bound.setdefault(name.value, []).append(id(value))

    reads = Reads()
    walk(module, reads)
    keyed = {value for name in reads.read_names for value in reads.bound.get(name, ())}
    return {id(call) for call in reads.calls if id(call) in reads.read or id(call) in keyed}


def _optimizer_receiver(receiver: cst.BaseExpression) -> bool:
    """An optimizer's or a scheduler's ``load_state_dict`` is the training-loop rule's (``mindport.runtime.optim``)."""
    name = dotted_name(receiver)
    return name is not None and (named_like_optimizer(name) or named_like_scheduler(name))


def _first_parameter_name(path: str) -> str:
    """The class attribute ``next(self.<path>.parameters())`` reads: ``_mp_first_parameter`` for ``self`` itself,
    ``_mp_first_parameter__input_blocks`` for ``self.input_blocks``."""
    return "_mp_first_parameter" + "".join(f"__{part}" for part in path.split(".") if part)


def _with_first_parameter(cls: cst.ClassDef, paths) -> cst.ClassDef:
    """Adds ``_mp_first_parameter = mp_nn.FirstParameter()`` (and ``_mp_first_parameter__blocks =
    mp_nn.FirstParameter("blocks")`` per sub-module path) to a model class's body (after its docstring), what
    ``self._mp_first_parameter`` (torch's ``next(self.parameters())``) reads."""
    alias = runtime_alias(_RUNTIME_LAYERS)
    lines = [cst.parse_statement(f"{_first_parameter_name(path)} = {alias}.FirstParameter({repr(path) if path else ''})\n")
             for path in sorted(paths)]
    body = list(cls.body.body)
    at = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 \
        and isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value,
                                                                  (cst.SimpleString, cst.ConcatenatedString)) else 0
    rest = body[at:]
    if rest and isinstance(rest[0], (cst.FunctionDef, cst.ClassDef)) and not rest[0].leading_lines:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])  # a blank line before the first method
    return cls.with_changes(body=cls.body.with_changes(body=[*body[:at], *lines, *rest]))


def _module_list_attributes(init: cst.FunctionDef) -> frozenset[str]:
    """The ``self.<path>`` attributes an ``__init__`` assigns a ``ModuleList(...)`` (``nn.ModuleList``,
    ``torch.nn.ModuleList``, an imported ``ModuleList``)."""
    found: set[str] = set()

    class _Find(cst.CSTVisitor):
        def visit_Assign(self, node):
            value = node.value
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").split(".")[-1] == "ModuleList":
                found.update(p for t in node.targets if (p := _self_path(t.target)))

    walk(init, _Find())
    return frozenset(found)


def _self_path(node) -> str | None:
    """``self.a.b`` -> ``"a.b"``; None for anything else (``self`` itself, a call, a subscript)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not parts or not (isinstance(node, cst.Name) and node.value == "self"):
        return None
    return ".".join(reversed(parts))


def _own_cells(named: bool) -> cst.BaseExpression:
    """torch's ``self.children()`` / ``self.named_children()`` as MindSpore's graph compiler takes them: the Cell's
    own ``_cells`` table without the None a sub-cell set to None leaves there (``cells()``/``name_cells()`` crash
    the compile: "The pointer[node] is null", MindSpore 2.10). Like torch's, each sub-module once: the caller checked
    that no sub-module sits under two names."""
    if named:
        return parse_expression("[(_name, _cell) for _name, _cell in self._cells.items() if _cell is not None]")
    return parse_expression("[_cell for _cell in self._cells.values() if _cell is not None]")


def _may_alias_cells(cls: cst.ClassDef) -> bool:
    """Whether the class may set one object under two attribute names (``self.head = self.fc``, or one name
    assigned to two attributes): torch's ``children()`` lists such a sub-module once, ``_cells`` twice."""
    sources: dict[str, set[str]] = {}
    aliased = False

    class _Find(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal aliased
            value = node.value
            for target in node.targets:
                attr = target.target
                if not (isinstance(attr, cst.Attribute) and isinstance(attr.value, cst.Name)
                        and attr.value.value == "self"):
                    continue
                if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
                        and value.value.value == "self":
                    aliased = True
                elif isinstance(value, cst.Name) and value.value not in ("None", "True", "False"):
                    sources.setdefault(value.value, set()).add(attr.attr.value)
            if len(node.targets) > 1:
                aliased = True

    walk(cls, _Find())
    return aliased or any(len(names) > 1 for names in sources.values())


def _mode_parameters(params: cst.Parameters) -> bool:
    """``(self)`` or ``(self, mode)`` with or without a default: torch's ``Module.train`` signature."""
    names = [p.name.value for p in params.params]
    return (not params.posonly_params and not params.kwonly_params and params.star_arg is cst.MaybeSentinel.DEFAULT
            and params.star_kwarg is None and names[:1] == ["self"] and names[1:] in ([], ["mode"]))


def _is_next_of_parameters(node: cst.Call) -> bool:
    """``next(X.parameters())`` (with or without a default)."""
    if not (isinstance(node.func, cst.Name) and node.func.value == "next" and node.args
            and node.args[0].keyword is None and not node.args[0].star):
        return False
    inner = node.args[0].value
    return (isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute)
            and inner.func.attr.value == "parameters")


def walk_calls(node) -> list[cst.Call]:
    """Every call in ``node``, in source order (a read-only walk: nothing is rebuilt)."""
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call) -> None:
            found.append(call)

    walk(node, _Calls())
    return found


def _is_optimizer(torch_name: str) -> bool:
    """A torch.optim optimizer's constructor (a scheduler takes no parameters)."""
    return torch_name.startswith("torch.optim.") and ".lr_scheduler." not in torch_name


def _not_true(value: cst.BaseExpression) -> bool:
    return not (isinstance(value, cst.Name) and value.value == "True")


def _freezes_any(node, calls: list[cst.Call]) -> bool:
    """Does the file (``node``, whose calls are ``calls``) freeze a parameter: set a ``requires_grad`` to anything but
    True (``p.requires_grad = False``, ``= flag``), call ``x.requires_grad_(False)`` (or the runtime call it became,
    ``mp_inplace.requires_grad_(x, requires_grad=False)``), or make an ``nn.Parameter`` with such a flag (a parameter
    frozen from the start)."""
    for call in calls:
        receiver = _frozen_receiver(call)
        # a name (``model.requires_grad_(False)``) or a module made in place (``deepcopy(self.F).requires_grad_(False)``:
        # an EMA copy, frozen whole; its parameters() were trainable_params(), empty, and the EMA never moved)
        if receiver is not None and (dotted_name(receiver) or isinstance(receiver, cst.Call)):
            return True
        # nn.Parameter(t, requires_grad=False) / nn.Parameter(t, False), a parameter frozen from the start, and what
        # it became, mp_inplace.requires_grad_(ms.Parameter(t), requires_grad=False) (a buffer's
        # ms.Parameter(t, name=..., requires_grad=False) is none)
        if (dotted_name(call.func) or "").rsplit(".", 1)[-1] == "Parameter" and not any(
                a.keyword is not None and a.keyword.value == "name" for a in call.args) and any(
                (a.keyword is not None and a.keyword.value == "requires_grad" or a.keyword is None and i == 1)
                and _not_true(a.value) for i, a in enumerate(call.args)):
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and any(
                a.keyword is not None and a.keyword.value == "requires_grad" and _not_true(a.value)
                for a in call.args):
            return True

    class _Assigns(cst.CSTVisitor):
        found = False

        def visit_Assign(self, n) -> None:
            if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad"
                   for t in n.targets) and _not_true(n.value):
                self.found = True

    assigns = _Assigns()
    walk(node, assigns)
    return assigns.found


def _unfreezes_any(node, calls: list[cst.Call]) -> bool:
    """Does the file set a ``requires_grad`` to True (``p.requires_grad = True``) or call ``x.requires_grad_()`` /
    ``x.requires_grad_(True)`` (progressive unfreezing, a fine-tuning stage that trains the backbone too)."""
    for call in calls:
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_":
            flags = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "requires_grad"
                     or a.keyword is None and dotted_name(call.func.value) not in ("mp_inplace",
                                                                                   "mindport.runtime.inplace")]
            if not flags or not _not_true(flags[0]):
                return True

    class _Assigns(cst.CSTVisitor):
        found = False

        def visit_Assign(self, n) -> None:
            if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad"
                   for t in n.targets) and not _not_true(n.value):
                self.found = True

    assigns = _Assigns()
    walk(node, assigns)
    return assigns.found


def _frozen_receiver(call: cst.Call):
    """``x.requires_grad_(False)`` -> x; ``mp_inplace.requires_grad_(x, requires_grad=False)`` -> x; else None."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "requires_grad_":
        return None
    args = list(call.args)
    if dotted_name(func.value) in ("mp_inplace", "mindport.runtime.inplace") and args:
        receiver, args = args[0].value, args[1:]
    else:
        receiver = func.value
    flag = args[0].value if args else None
    if not (isinstance(flag, cst.Name) and flag.value == "False"):
        return None
    return receiver


def _bound_positionally(args, names) -> list | None:
    """The values of a call's arguments in the order of ``names`` (torch's parameter names), whether passed by
    position or keyword; None when any is missing, repeated, starred or unknown."""
    values: dict[str, cst.BaseExpression] = {}
    for position, arg in enumerate(args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else (names[position] if position < len(names) else None)
        if key not in names or key in values:
            return None
        values[key] = arg.value
    return [values[n] for n in names] if len(values) == len(names) else None


def _self_targets(node: cst.ClassDef) -> list:
    """The ``self.name`` attributes a class's body assigns (plain, annotated or augmented)."""
    found = []

    class _Targets(cst.CSTVisitor):
        def _add(self, target) -> None:
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                found.append(target)

        def visit_AssignTarget(self, n) -> None:
            # a tuple's items are Elements (their .value the target); an Attribute's .value is its receiver
            for t in (n.target.elements if isinstance(n.target, (cst.Tuple, cst.List)) else [n.target]):
                self._add(t.value if isinstance(t, cst.BaseElement) else t)

        def visit_AnnAssign(self, n) -> None:
            self._add(n.target)

        def visit_AugAssign(self, n) -> None:
            self._add(n.target)

    node.visit(_Targets())
    return found
