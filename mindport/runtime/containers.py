"""Containers that keep torch's names and accept what torch's accept.

``mindspore.ParameterTuple`` registers its members under their own names (``Parameter$1``), so a torch
``scales.0`` has nothing to land on; ``ParameterList``/``ParameterDict`` insert each parameter under its index or key
instead. ``ModuleDict`` holds any Cell under its key (``mindspore.nn.CellDict`` refuses a CellList value).
"""
from __future__ import annotations

import functools
import operator

from mindspore import Parameter, Tensor, nn

from mindport.runtime._graph import host_only, in_graph
from mindport.runtime import numpy_ints  # noqa: F401 - numpy integers as indices and sizes, as torch takes them
from mindport.runtime import numpy_stream  # noqa: F401 - MindSpore's layers leave numpy's stream alone
from mindport.runtime import sequential_members  # noqa: F401 - a layer set on a SequentialCell by attribute runs
from mindport.runtime import container_slices  # noqa: F401 - a container's slice keeps its layers' parameter names
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs


def _as_parameter(value) -> Parameter:
    return value if isinstance(value, Parameter) else Parameter(Tensor(value))


class ParameterList(nn.Cell):
    def __init__(self, values=None) -> None:
        super().__init__()
        self._count = 0
        for value in values or ():
            self.append(value)

    def append(self, value):
        self.insert_param_to_cell(str(self._count), _as_parameter(value))
        self._count += 1
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index: int) -> Parameter:
        if isinstance(index, slice):  # torch's params[1:]: the same Parameters, in order (a list: each keeps its name)
            return [getattr(self, str(i)) for i in range(self._count)[index]]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return getattr(self, str(index))

    def __setitem__(self, index: int, value) -> None:
        """``params[i] = p`` as torch's ParameterList takes it (Pathformer's ``reset_parameters`` writes
        ``self.B[i] = init.uniform_(self.B[i], ...)`` once the in-place init is converted): the member at ``i`` is
        replaced under the same name (a tensor is wrapped in a Parameter); the member itself written back changes
        nothing. In ``__init__``: inside construct/@jit it raises (a static graph compiles the members once)."""
        index = operator.index(index)
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        current = getattr(self, str(index))
        if value is current:
            return
        host_only(_CHANGED_IN_GRAPH.format(method="__setitem__"))
        new = _as_parameter(value)
        new.name = current.name  # torch's state_dict key (``B.0``) stays where transfer_weights looks for it
        self.insert_param_to_cell(str(index), new)

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self._count))


_CHANGED_IN_GRAPH = ("{method}() changes the container's members, which a static graph (construct under GRAPH_MODE, "
                     "@jit) compiles once: call it in __init__")


class _Keyed(nn.Cell):
    """What ParameterDict and ModuleDict share: members are attributes of the Cell under their keys, in ``_keys``'
    order (a static graph reads ``d[key]``, ``key in d``, ``len(d)``, ``d.items()``)."""

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def keys(self):
        return list(self._keys)

    def values(self):
        return [getattr(self, k) for k in self._keys]

    def items(self):
        return [(k, getattr(self, k)) for k in self._keys]

    def update(self, values) -> None:
        """``d.update(mapping)`` or ``d.update(pairs)``, each member set as ``d[key] = value`` (NGCF grows its
        ParameterDict of layer weights by ``weight_dict.update({...})``). In ``__init__``: inside construct/@jit it
        raises (a static graph compiles the members once: one added there would be added once, at compile time)."""
        host_only(_CHANGED_IN_GRAPH.format(method="update"))
        for key, value in (values.items() if hasattr(values, "items") else values):
            self[key] = value


class ParameterDict(_Keyed):
    def __init__(self, values=None) -> None:
        super().__init__()
        self._keys: list[str] = []
        self.update(values or {})

    def __setitem__(self, key: str, value) -> None:
        self.insert_param_to_cell(key, _as_parameter(value))
        if key not in self._keys:
            self._keys.append(key)



def is_parameter(param) -> bool:
    """Whether a Cell's Parameter is one of torch's parameters rather than a buffer: the converter makes each persistent
    ``register_buffer`` (and MindSpore keeps BatchNorm's statistics as) a non-trainable Parameter, so a trainable one
    is a parameter, and so is a frozen one, marked ``_mp_frozen``: by ``p.requires_grad = False``
    (:mod:`mindport.runtime.frozen`), by :func:`mindport.runtime.inplace.requires_grad_` (an EMA copy's weights), or
    made frozen (``nn.Parameter(t, requires_grad=False)``); all of them torch's ``parameters()`` lists."""
    return param.requires_grad or getattr(param, "_mp_frozen", False)


def named_parameters(cell, prefix="", recurse=True, remove_duplicate=True):
    """``module.named_parameters(prefix, recurse, remove_duplicate)`` (``Cell.parameters_and_names`` names a
    MindSpore layer's Parameters by MindSpore's attributes and lists the buffers): the Cell's trainable Parameters in
    torch's order (each module's own, then its children's, depth first), each named by its path under torch's member
    name (a LayerNorm's ``gamma`` is ``weight``, an Embedding's ``embedding_table`` is ``weight``: the layer entry's
    surface paths), so ``'bias' in name`` and ``no_decay`` lists select what they select in torch. Those :func:`is_parameter` says are
    parameters; the other non-trainable ones are :func:`named_buffers`'."""
    seen = set()
    for name, param in _torch_named_parameters(cell, prefix, recurse, set() if remove_duplicate else None):
        if param is None or not is_parameter(param) or (remove_duplicate and id(param) in seen):
            continue
        seen.add(id(param))
        yield name, param


def parameters(cell, recurse=True):
    """``module.parameters(recurse)`` given arguments, or of a module the script froze (``ema_model.requires_grad_(False)``:
    ``trainable_params()`` would list none of an EMA copy's weights, which ``zip(ema.parameters(), model.parameters())``
    updates in torch): the values of :func:`named_parameters`."""
    for _, param in named_parameters(cell, recurse=recurse):
        yield param


# nn.Module's members read as values, not called (mappings/data/surface/module_members.toml, value = "bound"):
# torch's meaning by name, each taking the module first (``method_of``)
def _placed(cell, *args, **kwargs):
    return cell  # cpu()/cuda()/xpu()/ipu()/mtia(): placement is global in MindSpore


def _cast_to(dtype_name):
    def cast(cell):
        import mindspore as ms

        from mindport.runtime.tensor import to

        return to(cell, getattr(ms, dtype_name))
    return cast


def _set_train(cell, mode=True):
    if not isinstance(mode, bool):
        raise ValueError("training mode is expected to be boolean")
    cell.set_train(mode)
    return cell


def _requires_grad(cell, requires_grad=True):
    for param in cell.get_parameters():
        param.requires_grad = requires_grad
    return cell


def _children(cell):
    return iter([child for child in cell._cells.values() if child is not None])  # noqa: SLF001


def _named_children(cell):
    return iter([(name, child) for name, child in cell._cells.items() if child is not None])  # noqa: SLF001


def _modules(cell):
    return iter([sub for _, sub in named_modules(cell)])


def set_submodule(cell, target: str, module, strict: bool = False):
    """``module.set_submodule('block.fc', new)``: the sub-cell at that dotted path replaced (named by its path, as
    setting it as an attribute names it); AttributeError naming the missing part, as torch's."""
    if not target:
        raise ValueError("Cannot set the submodule without a target name!")
    *path, name = target.split(".")
    parent = get_submodule(cell, ".".join(path))
    if strict and name not in parent._cells:  # noqa: SLF001
        raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
    setattr(parent, name, module)


def _layers(name):
    def call(cell, *args, **kwargs):
        from mindport.runtime import layers

        return getattr(layers, name)(cell, *args, **kwargs)
    return call


def _to(cell, *args, **kwargs):
    from mindport.runtime.tensor import to

    return to(cell, *args, **kwargs)


def _zero_grad(cell, set_to_none=True):
    from mindport.runtime.training import zero_grad

    zero_grad(cell, set_to_none=set_to_none)


_BOUND = {
    "named_parameters": lambda cell: functools.partial(named_parameters, cell),
    "parameters": lambda cell: functools.partial(parameters, cell),
    "named_buffers": lambda cell: functools.partial(named_buffers, cell),
    "buffers": lambda cell: functools.partial(buffers, cell),
    "named_modules": lambda cell: functools.partial(named_modules, cell),
    "modules": lambda cell: functools.partial(_modules, cell),
    "children": lambda cell: functools.partial(_children, cell),
    "named_children": lambda cell: functools.partial(_named_children, cell),
    "get_submodule": lambda cell: functools.partial(get_submodule, cell),
    "get_parameter": lambda cell: functools.partial(get_parameter, cell),
    "get_buffer": lambda cell: functools.partial(get_buffer, cell),
    "set_submodule": lambda cell: functools.partial(set_submodule, cell),
    "train": lambda cell: functools.partial(_set_train, cell),
    "eval": lambda cell: functools.partial(_set_train, cell, False),
    "requires_grad_": lambda cell: functools.partial(_requires_grad, cell),
    "zero_grad": lambda cell: functools.partial(_zero_grad, cell),
    "cpu": lambda cell: functools.partial(_placed, cell),
    "cuda": lambda cell: functools.partial(_placed, cell),
    "xpu": lambda cell: functools.partial(_placed, cell),
    "ipu": lambda cell: functools.partial(_placed, cell),
    "mtia": lambda cell: functools.partial(_placed, cell),
    "float": lambda cell: functools.partial(_cast_to("float32"), cell),
    "double": lambda cell: functools.partial(_cast_to("float64"), cell),
    "half": lambda cell: functools.partial(_cast_to("float16"), cell),
    "bfloat16": lambda cell: functools.partial(_cast_to("bfloat16"), cell),
    "to": lambda cell: functools.partial(_to, cell),
    "add_module": lambda cell: functools.partial(_layers("add_module"), cell),
    "register_module": lambda cell: functools.partial(_layers("add_module"), cell),
    "register_parameter": lambda cell: functools.partial(_layers("register_parameter"), cell),
    "load_state_dict": lambda cell: functools.partial(_layers("load_state_dict"), cell),
    "register_full_backward_hook": lambda cell: cell.register_backward_hook,
    "register_full_backward_pre_hook": lambda cell: cell.register_backward_pre_hook,
    "call_super_init": lambda cell: False,  # torch's class attributes
    "dump_patches": lambda cell: False,
}


def method_of(cell, name: str):
    """``module.train`` (``named_parameters``, ``eval`` ...) taken as a value, not called (GMvandeVen/continual-
    learning's ``self.param_list = [self.named_parameters]``, each item called later; RS-CNN's RandomDropout passing
    ``self.train`` on as a flag): torch's meaning of that member bound to ``cell``, as torch's bound method is
    (callable and truthy; the Cell has no such member, or one of MindSpore's meaning). A receiver that is not a Cell,
    or whose own class (the project's, not MindSpore's or mindport's) defines the name, gives its own attribute.
    The names are module_members.toml's ``bound`` ones. In a static graph (read in ``construct``) no bound method
    exists: the value is True, its truth in torch (RS-CNN's use: a flag tested in a function it is handed to)."""
    if in_graph():
        return True
    return _bound(cell, name)


def _bound(cell, name: str):
    if not isinstance(cell, nn.Cell) or _own_member(cell, name):
        return getattr(cell, name)
    if name not in _BOUND:
        raise AttributeError(f"mindport.runtime.containers has no nn.Module member {name!r} to bind")
    return _BOUND[name](cell)


def _own_member(obj, name: str) -> bool:
    for klass in type(obj).__mro__:
        module = (getattr(klass, "__module__", "") or "").split(".")[0]
        if module not in ("mindspore", "mindport", "builtins") and name in vars(klass):
            return True
    return name in vars(obj)


def _torch_member_names(cell) -> dict[str, str]:
    """MindSpore attribute path -> torch member name, for a MindSpore layer of a torch layer entry (``gamma`` ->
    ``weight``); empty for any other Cell."""
    from mindport.runtime.adapt import _surface_paths, layer_entry

    entry = layer_entry(cell)
    if entry is None:
        return {}
    return {ms_path: torch_name for torch_name, ms_path in _surface_paths(entry).items()}


def _join(prefix, name):
    return prefix + ("." if prefix else "") + name


def _torch_named_parameters(cell, prefix, recurse, memo):
    names = _torch_member_names(cell)
    for name, param in getattr(cell, "_params", {}).items():
        yield _join(prefix, names.get(name, name)), param
    if not recurse:
        return
    for child_name, child in getattr(cell, "_cells", {}).items():
        if child is None:
            continue
        inner = {path[len(child_name) + 1:]: torch_name for path, torch_name in names.items()
                 if path.startswith(child_name + ".")}
        if inner:  # a MindSpore layer's inner cell holding torch's own members (BatchNorm3d's bn2d.gamma)
            for name, param in getattr(child, "_params", {}).items():
                yield _join(prefix, inner.get(name, name)), param
            continue
        if memo is not None:
            if id(child) in memo:
                continue
            memo.add(id(child))
        yield from _torch_named_parameters(child, _join(prefix, child_name), recurse, memo)


def get_submodule(cell, target: str):
    """``module.get_submodule('block.fc')``: the Cell at that dotted path ('' is the Cell itself); AttributeError
    naming the missing part, as torch's."""
    if not target:
        return cell
    for part in target.split("."):
        child = getattr(cell, "_cells", {}).get(part)
        if child is None:
            raise AttributeError(f"{type(cell).__name__} has no attribute `{part}`")
        cell = child
    return cell


def get_parameter(cell, target: str):
    """``module.get_parameter('block.fc.weight')``: the Parameter at that dotted path, its last part torch's member
    name (a LayerNorm's ``weight`` is its ``gamma``)."""
    module_path, _, name = target.rpartition(".")
    owner = get_submodule(cell, module_path)
    for path, param in _torch_named_parameters(owner, "", False, None):
        if path == name:
            return param
    raise AttributeError(f"{type(owner).__name__} has no parameter `{name}`")


def get_buffer(cell, target: str):
    """``module.get_buffer('block.scale')``: the buffer at that dotted path, as :func:`named_buffers` lists them
    (a persistent ``register_buffer`` is a non-trainable Parameter, which the Cell's own ``get_buffer`` refuses:
    "`scale` is not a buffer"); AttributeError naming it otherwise, as torch's."""
    module_path, _, name = target.rpartition(".")
    owner = get_submodule(cell, module_path)
    for path, buffer in named_buffers(owner, recurse=False):
        if path == name:
            return buffer
    raise AttributeError(f"`{name}` is not a buffer")


def named_modules(cell, memo=None, prefix="", remove_duplicate=True):
    """``module.named_modules(memo, prefix, remove_duplicate)`` with arguments (``Cell.cells_and_names`` takes
    ``cells``/``name_prefix``): the Cell and its descendants, depth first, named by path, each once unless
    ``remove_duplicate=False``; ``memo`` is the set of those already met, as in torch."""
    if memo is None:
        memo = set()
    if cell in memo:
        return
    if remove_duplicate:
        memo.add(cell)
    yield prefix, cell
    # Cell._cells, not name_cells(): that one lists a Cell held under two names once (torch: under both)
    for name, child in getattr(cell, "_cells", cell.name_cells()).items():
        if child is not None:
            yield from named_modules(child, memo, prefix + ("." if prefix else "") + name, remove_duplicate)


def named_buffers(cell, prefix="", recurse=True, remove_duplicate=True):
    """``module.named_buffers()``: the converter makes each persistent ``register_buffer`` a non-trainable Parameter,
    which a Cell's own ``named_buffers()`` does not list; these are the Cell's non-trainable Parameters, named by their
    path (a MindSpore layer's own statistics under MindSpore's names: ``moving_mean`` for torch's ``running_mean``),
    then its non-persistent buffers (``next(self.buffers()).device`` on a Cell that holds only those)."""
    seen = set()
    for name, param in cell.parameters_and_names(name_prefix=prefix, expand=recurse):
        if is_parameter(param) or (remove_duplicate and id(param) in seen):
            continue
        seen.add(id(param))
        yield name, param
    # non-persistent buffers stay MindSpore buffers (Cell.register_buffer): listed after the Parameters
    for name, buffer in cell.named_buffers(prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate):
        if buffer is not None and id(buffer) not in seen:
            seen.add(id(buffer))
            yield name, buffer


def buffers(cell, recurse=True):
    """``module.buffers()``: the values of :func:`named_buffers`."""
    for _, param in named_buffers(cell, recurse=recurse):
        yield param


class _NamesLaterMembers(nn.Cell):
    """A container whose owner names it before it has members (``self.layers = ModuleDict()`` or ``ModuleList()``,
    filled afterwards): the prefix the owner gives it is remembered, so a member added later is named
    ``layers.fc1.weight`` like torch's, not ``weight``/``0.weight`` (names that clash with every other member's or
    another container's: an optimizer refuses the parameter list, "name 'weight' already exists")."""

    def update_parameters_name(self, prefix="", recurse=True):
        self._member_prefix = prefix
        super().update_parameters_name(prefix, recurse)


class ModuleDict(_Keyed, _NamesLaterMembers):
    """``torch.nn.ModuleDict``: Cells by key, any Cell (a CellList, a SequentialCell or another ModuleDict too).

    ``mindspore.nn.CellDict`` refuses a CellList/SequentialCell/CellDict value ("the type of cell can not be CellDict,
    CellList or SequentialCell"), which GPT-style models hold (``transformer = ModuleDict(dict(h=ModuleList(...)))``),
    and a static graph reads a CellDict as a dictionary, so ``self.transformer.wte`` fails there. Each value here is a
    child Cell under its key: parameters are named ``transformer.h.0.…`` like torch's, and a graph reads
    ``d.key``, ``d["key"]``, ``"key" in d``, ``len(d)`` and ``d.items()``.
    """

    def __init__(self, modules=None) -> None:
        super().__init__()
        self._keys: list[str] = []
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, cell) -> None:
        if not isinstance(cell, nn.Cell):
            raise TypeError(f"ModuleDict holds Cells, got {type(cell).__name__} under {key!r}")
        self.insert_child_to_cell(key, cell)
        if self._auto_prefix:  # as Cell.__setattr__ names a child, under the dict's own prefix
            cell.update_parameters_name(getattr(self, "_member_prefix", "") + key + ".")
        if key not in self._keys:
            self._keys.append(key)

    def __delitem__(self, key: str) -> None:
        if key not in self._keys:
            raise KeyError(key)
        self._keys.remove(key)
        del self._cells[key]

    def pop(self, key: str):
        cell = self[key]
        del self[key]
        return cell

    def clear(self) -> None:
        """Every member removed, with its parameters. In ``__init__``: inside construct/@jit it raises (MindSpore's
        graph compiler refuses the ``del``: "Unsupported statement 'Delete'")."""
        host_only(_CHANGED_IN_GRAPH.format(method="clear"))
        for key in list(self._keys):
            self.__delitem__(key)  # not a del statement: a static graph refuses those before the guard runs



class _ListMembers:
    """What ModuleList and ModuleListLayer share: members by position, ``None`` kept in place, each member named
    under the prefix the owner gave the list (torch's ``blocks.0.fc.weight``)."""

    def _prefix(self) -> str:
        from mindspore.nn.layer.container import _get_prefix_and_index  # the prefix CellList names members with

        if hasattr(self, "_member_prefix"):  # the owner named the list: its members are named under that prefix
            return self._member_prefix  # (CellList's guess from its members' names is wrong for nested sequences)
        members = {k: c for k, c in self._cells.items() if c is not None}
        if not any(True for c in members.values() for _ in c.get_parameters()):
            return ""
        return _get_prefix_and_index(members)[0]

    def append(self, cell):
        if cell is not None:
            if not isinstance(cell, nn.Cell):
                kept = " (a line mindport flagged kept torch's layer: convert it by hand)" \
                    if type(cell).__module__.split(".")[0] == "torch" else ""
                raise TypeError(f"ModuleList holds Cells (or None), got {type(cell).__name__}{kept}")
            if self._auto_prefix:
                cell.update_parameters_name(self._prefix() + str(len(self)) + ".")
        self._cells[str(len(self))] = cell
        return self

    def extend(self, cells):
        for cell in cells:
            self.append(cell)
        return self

    def __getitem__(self, index):
        """The member at a position, whatever its key: ``add_module('a', ...)`` on a ModuleList keys a member by
        name, which ``CellList.__getitem__`` (``_cells[str(index)]``) misses when a static graph walks the list
        ("KeyError: '0'")."""
        if not isinstance(index, int) or isinstance(index, bool):
            return super().__getitem__(index)
        cells = list(self._cells.values())
        if not -len(cells) <= index < len(cells):
            raise IndexError(f"index {index} is out of range for a ModuleList of {len(cells)}")
        return cells[index]

    def set_grad(self, flag=True):
        self.requires_grad = flag
        for cell in self._cells.values():
            if cell is not None:
                cell.set_grad(flag)


class ModuleList(_ListMembers, nn.CellList, _NamesLaterMembers):
    """``torch.nn.ModuleList``: a CellList that also holds ``None`` (torch keeps a None member: x-transformers builds
    ``ModuleList([pre_norm, post_norm, None])`` and unpacks it in forward; ``mindspore.nn.CellList`` refuses it).
    Built from any iterable (a tuple, a generator). A None member is kept in place, yields None, has no parameters;
    it reads the same in a static graph."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)


class ModuleListLayer(_ListMembers, nn.SequentialCell, _NamesLaterMembers):
    """The base of a ``torch.nn.ModuleList`` subclass that defines its own ``forward`` and is called as a layer
    (dinov2's ``BlockChunk``: ``for b in self: x = b(x)``). A static graph reads every CellList, a subclass too, as a
    tuple of its members, so calling one failed to compile ("The object is not callable", MindSpore 2.10), reached
    directly or from a list; a SequentialCell subclass is compiled as a Cell (its ``construct``) and is iterated in
    it as a list. Members, names and indexing as :class:`ModuleList`'s."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if isinstance(modules, dict):  # a slice: SequentialCell builds one from an OrderedDict of the members
            modules = modules.values()
        if modules is not None:
            self.extend(modules)

    def append(self, cell):
        super().append(cell)
        self.cell_list = list(self._cells.values())  # what SequentialCell's iteration in a graph reads
        return self


def buffer(value, name: str):
    """``self.register_buffer(name, value)`` of a value that may be None only on some runs (``mask if cond else
    None``, a value read from a name): torch registers None (the attribute reads None, the state_dict leaves it out),
    so None stays None; a tensor becomes the non-trainable Parameter a persistent buffer is (the checkpoint carries
    it)."""
    if value is None:
        return None
    return Parameter(value, name=name, requires_grad=False)
