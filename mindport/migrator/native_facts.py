"""Facts read from a model class's code that let a torch call become MindSpore's own layer instead of a
``mindport.runtime`` one (``rules/table_calls.py`` asks; nothing here rewrites code).

* **In-place activations** (``nn.ReLU(inplace=True)`` and the other entries whose ``inplace`` switches to a runtime
  ``Inplace*`` Cell): torch writes the result into the input, which matters only when that input is read afterwards.
  A construction is native (MindSpore's out-of-place layer) when every use of the layer is proven to leave no reader
  of its input: ``self.act = nn.ReLU(inplace=True)`` whose every use in the class is a call ``self.act(E)`` where E is
  a fresh tensor (a layer's or an operator's result, such as ``self.bn1(self.conv1(x))`` or ``out + identity``), or a
  local name bound only to fresh values, never aliased, and not read after the call unless the call rebinds it
  (``out = self.act(out)``); and, inside ``self.body = nn.Sequential(...)`` whose every use is a call, an activation
  that follows a layer with a fresh output (only that layer's output, internal to the sequence, is overwritten; a
  sequence iterated or indexed, ``for m in self.features: x = m(x); feats.append(x)``, shows those outputs). A
  parameter of the method (unless a top-level statement before the call rebinds it, ``x = self.bn(x)``: then it is a
  local name like any other), a name the method hands on (``feats.append(x)``, ``y = x``), a use in a loop that does not
  rebind the name, the class being subclassed in the file, the attribute read on another object (``model.relu``) or
  any other use of it keeps the runtime Cell.
* **ModuleList**: ``nn.ModuleList([a, b])`` (a non-empty list display with no ``None`` member), and
  ``self.blocks = nn.ModuleList([... for ...])`` (a comprehension, which may be empty) never appended, extended,
  inserted into or added to by name anywhere in the file, is MindSpore's own ``nn.CellList`` (the runtime ModuleList
  exists for None members, tuples and generators). So is one of those every ``append``/``insert``/``extend`` of
  which, anywhere in the file, adds layer constructions (or local names bound only to them; a call of a module-level
  function that returns one on every path, ``make_attn(c)``, and ``nn.Module()`` count as constructions), and a local
  ``block = nn.ModuleList()`` filled that way in its method (named when it joins its owner): CellList's own methods
  name the members by the prefix its members already carry. An empty ``self.blocks = nn.ModuleList()`` added to
  later has none (CellList names the members ``0.weight``, clashing with every other such list): the runtime
  ModuleList. ``add_module``, item assignment or ``+=`` keep the runtime ModuleList.
* **Legacy empty tensors in torch.cat** (``empty_cat_members``): torch.cat skips a 1-D tensor of no elements
  (``acc = torch.tensor([])`` then ``acc = torch.cat((acc, x), dim=1)`` in a loop); MindSpore's Concat refuses the
  rank mismatch. Only a cat one of whose listed members is such a construction, a local name the function binds to
  one, or a ``self.NAME`` some method binds to one goes through the runtime's cat; every other cat is ``ops.cat``.
* **Softmax** (``UnmaskedFacts``): the runtime softmax exists for MindSpore's CPU kernel defect on a row of all
  ``-inf``; an input that cannot hold one is ``ops.softmax``, and a ``self.attend = nn.Softmax(dim=-1)`` every call
  of which in the class is on such an input is ``nn.Softmax`` (``ClassFacts.native_softmax``).
* **Bool tensors** (``BoolFacts``, ``mask_argument``): ``~x`` is the runtime bitwise_not (bit inversion for an integer
  ``x``) unless ``x`` is bool by construction or is the mask of ``masked_fill`` (torch refuses any other): MindSpore's
  own ``~``.
* **Unread bindings** (``unread_bindings``): ``n, device = x.shape[1], x.device`` whose ``device`` no converted line
  reads (``device=`` arguments vanish in MindSpore) loses the binding (``rules/device.py`` asks).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst
import libcst.matchers as matchers

from mindport.migrator.syntax import bindings_in_scope, code_of, self_attribute_name, target_name_nodes, target_names
from mindport.migrator.walk import find_all, read, transform, walk

Resolve = Callable[[cst.BaseExpression], "str | None"]

# torch layers whose output is a new tensor (never their input or a view of it)
FRESH_LAYERS = frozenset(
    f"torch.nn.{name}" for name in (
        "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear", "Bilinear",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm1d",
        "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "RMSNorm", "Embedding", "MaxPool1d", "MaxPool2d",
        "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
        "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample",
        "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d",
        "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad2d",
        "Softmax", "LogSoftmax", "GELU", "Sigmoid", "Tanh", "Softplus"))
_LIST_ADDERS = frozenset({"append", "extend", "insert", "add_module", "register_module", "__setitem__"})
_READS_OK = frozenset({"shape", "dtype", "ndim", "size", "dim", "numel", "device"})  # reading these aliases nothing


def inplace_switch(entry) -> bool:
    """Does the entry send ``inplace=True`` to a runtime Cell or function?"""
    return "True" in entry.switch.get("inplace", {})


class ClassFacts:
    """The facts of one class (its whole body); ``native_inplace`` and ``native_lists`` hold ids of call nodes."""

    def partial_layer(self, call: cst.Call, file: "FileFacts") -> cst.Call:
        """``self.fc = LinearNoBias(d, k)`` of a module-level ``LinearNoBias = functools.partial(nn.Linear,
        bias=False)`` (:func:`_module_partials`): the layer is an ``nn.Linear``; read as a call of that class
        (``nn.Linear(d, k)``, a node of its own: no rewrite is keyed to it) so a layer's output is known as such
        (``self.fc(x).softmax(-1)`` is ``ops.softmax``). Any other call is itself."""
        bound = file.partials.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if bound is None or self._resolve_any(bound.func) != "functools.partial":
            return call
        return partial_applied(bound, call.args)

    def __init__(self, cls: cst.ClassDef, resolve: Resolve, is_inplace: Callable[[cst.Call], bool],
                 file: FileFacts, builds_cell: Callable[[cst.BaseExpression], bool],
                 resolve_any: "Resolve | None" = None) -> None:
        self.builds_cell = builds_cell
        self._resolve_any = resolve_any or resolve  # any import's qualified name (einops.rearrange)
        self.native_inplace: set[int] = set()
        self.native_lists: set[int] = set()
        self.runtime_lists: set[int] = set()  # lists displayed with Cells but added to by name: the runtime's
        self.hoisted: dict[str, str] = {}  # self.<attr> = nn.ModuleList([]) filled in __init__ -> its local's name
        self.native_softmax: set[int] = set()  # nn.Softmax layers only ever called on an input with no -inf row
        self.causal: dict[str, str] = {}  # self.NAME -> the kind of causal mask its buffer holds (causal_buffers)
        self._resolve = resolve
        self._cls = cls
        self._changed = file.appended | file.named | file.foreign
        self._file = file
        self._layers: dict[str, list[cst.Call]] = {}  # self.NAME -> the calls assigned to it
        methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] \
            if isinstance(cls.body, cst.IndentedBlock) else []
        for method in methods:
            for stmt in _assignments(method, annotated=True):
                target = stmt.targets[0].target if len(stmt.targets) == 1 else None
                if _self_attr(target) and isinstance(stmt.value, cst.Call):
                    self._layers.setdefault(target.attr.value, []).append(self.partial_layer(stmt.value, file))
                    if resolve(stmt.value.func) == "torch.nn.ModuleList" \
                            and _plain_list_argument(stmt.value, builds_cell, empty=True):
                        if target.attr.value in file.named:
                            self.runtime_lists.add(id(stmt.value))
                        elif file.adds.get(target.attr.value):
                            # members appended to a CellList its owner holds are named by a prefix CellList guesses
                            # from its members' parameter names: none for an empty list (``0.weight``), a wrong one
                            # when the first member is itself a sequence (``blocks.0.1.0.weight`` for torch's
                            # ``blocks.1.0.weight``: improved-diffusion's TimestepEmbedSequential blocks, duplicate
                            # names in a graph). Built in a local and assigned after the last add (hoisted_list),
                            # they are named as torch names them; else the runtime's ModuleList, which takes the
                            # prefix its owner gave it
                            local = hoisted_list(cls, method, target.attr.value, file, builds_cell) \
                                if method.name.value == "__init__" else None
                            if local is not None:
                                self.native_lists.add(id(stmt.value))
                                self.hoisted[target.attr.value] = local
                            elif _leaf_layer_first(stmt.value, resolve):
                                self.native_lists.add(id(stmt.value))  # its members' names give the right prefix
                            else:
                                self.runtime_lists.add(id(stmt.value))
                        else:
                            self.native_lists.add(id(stmt.value))
                elif isinstance(target, cst.Name) and isinstance(stmt.value, cst.Call) \
                        and resolve(stmt.value.func) == "torch.nn.ModuleList" \
                        and _plain_list_argument(stmt.value, builds_cell, empty=True) \
                        and _local_list_adds_cells(method, target.value, builds_cell):
                    self.native_lists.add(id(stmt.value))  # block = nn.ModuleList(); block.append(Conv(...))
            # nn.ModuleList(blocks) of a local list of Cells; one its owner adds to later keeps the runtime's (CellList
            # would take the new members' prefix from the old ones')
            added = {id(s.value) for s in _assignments(method, annotated=True) if len(s.targets) == 1
                     and _self_attr(s.targets[0].target)
                     and s.targets[0].target.attr.value in (file.appended | file.named | file.foreign)}
            cells = method_cells(method, builds_cell, self._resolve_any)
            owned = {id(s.value) for s in _assignments(method, annotated=True) if len(s.targets) == 1
                     and _self_attr(s.targets[0].target)}
            for call in own_nodes(method, cst.Call):
                if id(call) in added or resolve(call.func) != "torch.nn.ModuleList":
                    continue
                if listed_cells(method, call, resolve, builds_cell) \
                        or (id(call) not in owned and cells_display(call, named_cells(method, call, cells))):
                    self.native_lists.add(id(call))  # an anonymous display: named by the list it joins
        if cls.name.value in file.subclassed:
            return
        self.causal = {name: kind for name, kind in causal_buffers(cls, resolve).items()
                       if name not in file.foreign_written}
        for name, calls in self._layers.items():
            if name in file.foreign or name in file.appended:
                continue
            inplace = [c for c in calls if is_inplace(c)]
            if inplace and len(inplace) == len(calls) and all(self._uses_safe(m, name) for m in methods):
                self.native_inplace.update(id(c) for c in inplace)
            softmaxes = [c for c in calls if resolve(c.func) == "torch.nn.Softmax"]
            if softmaxes and len(softmaxes) == len(calls) and all(self._called_unmasked(m, name) for m in methods):
                self.native_softmax.update(id(c) for c in softmaxes)
            sequences = [c for c in calls if resolve(c.func) == "torch.nn.Sequential"]
            if sequences and len(sequences) == len(calls) and all(self._only_called(m, name) for m in methods):
                for sequence in sequences:
                    self.native_inplace |= sequential_inplace(sequence, resolve, is_inplace)
                leading = [s for s in map(self._leading_softmax, sequences) if s is not None]
                if leading and all(self._called_unmasked(m, name) for m in methods):
                    self.native_softmax.update(id(c) for c in leading)

    def _leading_softmax(self, sequence: cst.Call) -> "cst.Call | None":
        """The ``nn.Softmax(...)`` member of ``nn.Sequential(...)`` that gets the sequence's own input: the first
        member, or one after members that only hand it on (dropout, Identity: ``nn.Sequential(nn.Softmax(dim=-1),
        nn.Dropout(p))``, lucidrains' ``self.attend``); None if there is none, or the members are not a plain display."""
        for arg in sequence.args:
            if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.Call):
                return None
            qual = self._resolve(arg.value.func)
            if qual == "torch.nn.Softmax":
                return arg.value
            if qual not in _PASSING:
                return None
        return None

    @staticmethod
    def _only_called(method: cst.FunctionDef, name: str) -> bool:
        """Is every reference to ``self.<name>`` in the method its assignment or a call (not iterated, indexed or
        handed on)?"""
        return all(ref.assigned or ref.call is not None for ref in _order(method).attribute_refs(name))

    def _called_unmasked(self, method: cst.FunctionDef, name: str) -> bool:
        """Is every reference to ``self.<name>`` in the method its assignment or a call on one input that can hold
        no row of all -inf (``UnmaskedFacts``: ``self.attend(q @ k.transpose(-1, -2) * self.scale)``), and none in a
        nested function or lambda?"""
        refs = _order(method).attribute_refs(name)
        every = [a for a in all_nodes(method, cst.Attribute) if _self_attr(a) and a.attr.value == name]
        if len(every) != len(refs):
            return False  # a reference in a nested function or lambda: not read here
        if all(ref.assigned for ref in refs):
            return True
        facts = UnmaskedFacts(method, self._resolve, self._layers, self._resolve_any, self.causal,
                              own_methods(self._cls))
        return all(ref.assigned or ref.call is not None and len(ref.call.args) == 1 and ref.call.args[0].keyword is None
                   and not ref.call.args[0].star and facts.unmasked(ref.call.args[0].value) for ref in refs)

    @property
    def float_layers(self) -> dict[str, list[cst.Call]]:
        """self.NAME -> every value assigned to it, for the dtype facts: both calls of ``A() if c else B()``; no
        entry for a name that is also assigned something other than a call (``self.fc = None``). A ModuleList the
        class fills by ``self.NAME.append(Layer(...))`` alone (:func:`appended_module_lists`) is read as the list
        of what it is given."""
        layers = class_float_layers(self._cls, self._changed)
        layers.update(appended_module_lists(self._cls, self._file, self._resolve))
        return layers

    @property
    def layers(self) -> dict[str, list[cst.Call]]:
        """self.NAME -> the calls assigned to it, in any method."""
        return self._layers

    def fresh(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` a new tensor no other name holds: an arithmetic result, or the call of a layer attribute
        whose class gives a new tensor?"""
        if isinstance(expr, cst.BinaryOperation):
            return True
        if isinstance(expr, cst.Call) and _self_attr(expr.func):
            calls = self._layers.get(expr.func.attr.value, [])
            return bool(calls) and all(self._fresh_layer(c) for c in calls)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Subscript) and _self_attr(expr.func.value):
            calls = self._layers.get(expr.func.value.attr.value, [])  # self.convs[0](x) of a list of fresh layers
            return bool(calls) and all(self._resolve(c.func) == "torch.nn.ModuleList" and _members_fresh(c, self)
                                       for c in calls)
        return False

    def _fresh_layer(self, call: cst.Call) -> bool:
        return self._resolve(call.func) in FRESH_LAYERS

    def _uses_safe(self, method: cst.FunctionDef, name: str) -> bool:
        """Every reference to ``self.<name>`` in the method is a call whose input has no reader afterwards."""
        order = _order(method)
        params = {p.name.value for p in (*method.params.posonly_params, *method.params.params,
                                         *method.params.kwonly_params)}
        for p in (method.params.star_arg, method.params.star_kwarg):
            if isinstance(p, cst.Param):
                params.add(p.name.value)
        for ref in order.attribute_refs(name):
            if ref.assigned:  # self.act = nn.ReLU(...): the construction itself
                continue
            call = ref.call
            if call is None or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                return False
            arg = call.args[0].value
            if self.fresh(arg):
                continue
            if not isinstance(arg, cst.Name) or (arg.value in params and not _rebound_first(method, arg.value, call)) \
                    or not self._local_safe(order, arg, call, name):
                return False
        return True

    def _local_safe(self, order: "_Order", arg: cst.Name, call: cst.Call, name: str) -> bool:
        var = arg.value
        rebinds = order.statement_target(call) == var
        if order.in_loop(call) and not rebinds:
            return False
        reaching = order.reaching_binding(var, call)
        if reaching is not None and self.fresh(reaching[1]):
            return self._straight_safe(order, arg, call, name, reaching[0], rebinds)
        for binding in order.bindings(var):
            if binding is None:  # bound by for/with/except/import/augmented-as/...: not a plain value
                return False
            value = binding
            if self.fresh(value):
                continue
            # out = self.act(out): the object stays the one the call received, itself checked here
            if isinstance(value, cst.Call) and _self_attr(value.func) and value.func.attr.value == name \
                    and len(value.args) == 1 and (self.fresh(value.args[0].value)
                                                  or (isinstance(value.args[0].value, cst.Name)
                                                      and value.args[0].value.value == var)):
                continue
            return False
        call_pos, call_stmt = order.position(call), order.statement_of(call)
        for read, parent, grand, stmt in order.reads(var):
            if read is arg:
                continue
            if parent is None or stmt == call_stmt:
                return False  # read in a closure, or in the call's own statement (before or after it runs)
            if order.position(read) > call_pos and not rebinds:
                return False  # the input read after the call: torch's reader sees the result
            if order.position(read) < call_pos and not self._reading_only(parent, grand, read, name):
                return False  # handed on (y = x, feats.append(x), a view x.view(...)) before the call
        return True

    def _straight_safe(self, order: "_Order", arg: cst.Name, call: cst.Call, name: str, bound: int,
                       rebinds: bool) -> bool:
        """Straight-line code (``x = self.bn(x); x = self.relu(x)`` with ``x = self.layer(x)`` before and after):
        the call's input is the new tensor of the one binding that reaches it (statement ``bound``), so only the
        reads between that binding and the call, and after the call, can see it; reads before it see other
        tensors."""
        var = arg.value
        call_pos, call_stmt = order.position(call), order.statement_of(call)
        start = order.statement_position(bound)
        for read, parent, grand, stmt in order.reads(var):
            if read is arg:
                continue
            if parent is None or stmt == call_stmt:
                return False  # read in a closure, or in the call's own statement
            if order.statement_position(stmt) <= start:
                continue  # the binding's own value (x = self.bn(x) reads the tensor before) or earlier
            if order.position(read) > call_pos and not rebinds:
                return False
            if order.position(read) < call_pos and not self._reading_only(parent, grand, read, name):
                return False
        return True

    def _reading_only(self, parent, grand, read: cst.Name, name: str) -> bool:
        """A read that keeps no reference to the tensor: an operand, ``x += y``, a fresh layer's input,
        ``x.shape``."""
        if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation,
                               cst.AugAssign)):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in _READS_OK:
            return True
        if isinstance(parent, cst.Arg) and parent.keyword is None and isinstance(grand, cst.Call):
            return self.fresh(grand) or (_self_attr(grand.func) and grand.func.attr.value == name)
        return False


def _rebound_first(method: cst.FunctionDef, var: str, call: cst.Call) -> bool:
    """A parameter one of the method's own top-level statements before the call's rebinds (``x = self.bn(x)`` ...
    ``x = self.relu(x)``): at the call the name holds a value of the method's, not the caller's tensor (every binding
    is then checked like a local's)."""
    for stmt in method.body.body if isinstance(method.body, cst.IndentedBlock) else ():
        if any(c is call for c in all_nodes(stmt, cst.Call)):
            return False
        if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name)
                and s.targets[0].target.value == var for s in stmt.body):
            return True
    return False


_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
# torch activation layers that write into their input only when asked (``inplace=True``)
_ACTIVATIONS = frozenset(f"torch.nn.{name}" for name in (
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid", "Hardtanh"))


def _maybe_inplace(call: cst.Call) -> bool:
    """May the activation's construction ask for ``inplace``: an ``inplace=`` other than False, or a positional
    argument that is no number (``nn.ReLU(True)``, ``nn.LeakyReLU(0.2, flag)``)?"""
    for arg in call.args:
        if arg.star:
            return True
        if arg.keyword is None and not isinstance(arg.value, (cst.Integer, cst.Float, cst.UnaryOperation)):
            return True
        if arg.keyword is not None and arg.keyword.value == "inplace" \
                and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return True
    return False


def unshared_augmented(cls: cst.ClassDef, resolve: Resolve, file: "FileFacts") -> frozenset[int]:
    """Ids of the augmented assignments ``x += e`` (also ``-=``, ``*=``, ``/=``) in the class's methods but
    ``__init__`` whose ``x`` holds a tensor nothing else shares, so that writing into it (torch) and binding ``x`` to
    the result (``x = x + e``) are one (``rules/aug_rebind.py`` asks; :func:`unaliased_local_update` decides): every
    binding of ``x`` is a new tensor, an arithmetic result or the call of a layer attribute whose class gives one
    (:data:`FRESH_LAYERS`; an activation not asked to work in place; one that may be, on a new tensor or on ``x``
    itself: ``out = self.relu(out)``), and every read before the update keeps no reference (an operand, such a
    layer's input, ``x.shape``). Python numbers (``steps = 0``) are no such binding; a class the file subclasses (a
    subclass may give the layer attribute another class) has none."""
    if cls.name.value in file.subclassed or not isinstance(cls.body, cst.IndentedBlock):
        return frozenset()
    layers = class_float_layers(cls, file.appended | file.named | file.foreign)

    def fresh(expr, var: str = "") -> bool:
        if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)):
            return True
        if not (isinstance(expr, cst.Call) and _self_attr(expr.func)):
            return False
        calls = layers.get(expr.func.attr.value, [])
        quals = [resolve(c.func) for c in calls]
        if not calls or not all(q in FRESH_LAYERS | _ACTIVATIONS for q in quals):
            return False
        if all(q in FRESH_LAYERS or not _maybe_inplace(c) for q, c in zip(quals, calls)):
            return True
        # an activation that may write into its input gives that input: new if it was, or var's own tensor
        arg = expr.args[0].value if len(expr.args) == 1 and expr.args[0].keyword is None \
            and not expr.args[0].star else None
        return arg is not None and (fresh(arg) or bool(var) and isinstance(arg, cst.Name) and arg.value == var)

    found: set[int] = set()
    for method in cls.body.body:
        if not isinstance(method, cst.FunctionDef) or method.name.value == "__init__":
            continue
        order = _order(method)
        for aug in own_nodes(method, cst.AugAssign):
            var = aug.target.value if isinstance(aug.target, cst.Name) else ""

            def consumer(call: cst.Call, var=var) -> bool:
                # a layer's input: a new result, or ``x = self.relu(x)`` giving x's own tensor back to x
                return fresh(call) or fresh(call, var) and order.statement_target(call) == var

            if var and isinstance(aug.operator, _AUGMENTED) \
                    and unaliased_local_update(method, aug, var, lambda value, var=var: fresh(value, var), consumer):
                found.add(id(aug))
    return frozenset(found)


def layer_gives_new(call: cst.Call, resolve: Resolve) -> bool:
    """Does the layer this construction builds give a new tensor object on every call, one that holds none of its
    input (so a change of its shape alone, ``layer(x).unsqueeze_(1)``, is seen by no one else)? A layer of
    :data:`FRESH_LAYERS`, an activation of :data:`_ACTIVATIONS` never asked to work in place, or an
    ``nn.Sequential`` of such members given one by one whose last member is one (an empty Sequential, ``nn.Identity``
    or ``nn.Dropout`` give their input itself: no)."""
    qual = resolve(call.func)
    if qual in FRESH_LAYERS:
        return True
    if qual in _ACTIVATIONS:
        return not _maybe_inplace(call)
    if qual == "torch.nn.Sequential":
        args = call.args
        return bool(args) and not any(a.star or a.keyword is not None for a in args) \
            and isinstance(args[-1].value, cst.Call) and layer_gives_new(args[-1].value, resolve)
    return False


def list_members_give_new(call: cst.Call, resolve: Resolve) -> bool:
    """``nn.ModuleList([...])`` (a display of calls, or a comprehension of one) every member of which gives a new
    tensor (:func:`layer_gives_new`); :func:`appended_module_lists` synthesises such a display for a list filled by
    ``self.NAME.append(Layer(...))`` alone."""
    if resolve(call.func) != "torch.nn.ModuleList" or len(call.args) != 1 or call.args[0].star \
            or call.args[0].keyword is not None:
        return False
    value = call.args[0].value
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        members = [value.elt]
    elif isinstance(value, (cst.List, cst.Tuple)):
        members = [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
        if len(members) != len(value.elements):
            return False
    else:
        return False
    return bool(members) and all(isinstance(m, cst.Call) and layer_gives_new(m, resolve) for m in members)


def class_float_layers(cls: cst.ClassDef, changed: frozenset[str] = frozenset()) -> dict[str, list[cst.Call]]:
    """self.NAME -> every value any method of the class assigns to it, for the dtype facts: a call, or both calls
    of ``A(...) if c else B(...)``, ``None`` aside (:func:`_branch_calls`; a name only ever assigned ``None`` has no
    entry); no entry for a name that is also assigned anything else (``self.fc = 0``, ``self.fc = fn``) or
    that the file may change otherwise (``changed``: FileFacts' appended, named and foreign attributes, a
    ModuleList given other members)."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] \
        if isinstance(cls.body, cst.IndentedBlock) else []
    values: dict[str, list[cst.Call]] = {}
    other: set[str] = set()
    for method in methods:
        for stmt in _assignments(method):
            for target in stmt.targets:
                if not _self_attr(target.target):
                    for node in all_nodes(target.target, cst.Attribute):
                        if _self_attr(node):
                            other.add(node.attr.value)  # self.a, self.b = ...: not a plain value
                    continue
                calls = _branch_calls(stmt.value) if len(stmt.targets) == 1 else None
                if calls is None:
                    other.add(target.target.attr.value)
                else:
                    values.setdefault(target.target.attr.value, []).extend(_spread_list(c, method) for c in calls)
        for node in own_nodes(method, cst.AugAssign) + own_nodes(method, cst.AnnAssign):
            if _self_attr(node.target):
                other.add(node.target.attr.value)
    return {name: calls for name, calls in values.items() if calls and name not in other and name not in changed}


def appended_module_lists(cls: cst.ClassDef, file: "FileFacts", resolve: Resolve) -> dict[str, list[cst.Call]]:
    """self.NAME -> ``[nn.ModuleList([A(...), B(...)])]`` for a ModuleList the class builds empty (or of a display of
    calls) once, as ``self.NAME = nn.ModuleList([])``, and fills with ``self.NAME.append(A(...))`` calls only
    (crossformer's multi-scale ``self.convs.append(nn.Conv2d(...))`` in a loop): every such add in the whole file is
    an ``append`` of one call on ``self.NAME`` in a method of this class (FileFacts.adds/add_classes; no
    ``extend``/``insert``/``add_module``/item assignment, no ``obj.NAME`` read elsewhere, the class subclassed
    nowhere), so every member the list can hold is one of those calls (the order and the count do not matter to the
    dtype facts, which ask what kind every member has). The ModuleList call is synthesised with those calls as its
    display, a node of its own that no rewrite is keyed to."""
    if cls.name.value in file.subclassed or not isinstance(cls.body, cst.IndentedBlock):
        return {}
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    own = {id(m) for m in methods}
    out: dict[str, list[cst.Call]] = {}
    for name in file.appended - file.named - file.foreign:
        adds = file.adds.get(name, [])
        members = []
        for call, function in adds:
            func = call.func
            if func.attr.value != "append" or not _self_attr(func.value) or id(function) not in own \
                    or file.add_classes.get(id(call)) != cls.name.value or len(call.args) != 1 \
                    or call.args[0].keyword is not None or call.args[0].star \
                    or not isinstance(call.args[0].value, cst.Call):
                break
            members.append(call.args[0].value)
        else:
            built = []
            for method in methods:
                for stmt in _assignments(method, annotated=True):
                    for target in stmt.targets:
                        for attr in all_nodes(target.target, cst.Attribute):
                            if _self_attr(attr) and attr.attr.value == name:
                                built.append((stmt, target))
            if not members or len(built) != 1 or len(built[0][0].targets) != 1 \
                    or not _self_attr(built[0][1].target):
                continue
            value = built[0][0].value
            if not isinstance(value, cst.Call) or resolve(value.func) != "torch.nn.ModuleList" or len(value.args) > 1:
                continue
            held = []
            if value.args:
                arg = value.args[0]
                if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.List) \
                        or any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Call)
                               for e in arg.value.elements):
                    continue
                held = [e.value for e in arg.value.elements]
            display = cst.List([cst.Element(m) for m in (*held, *members)])
            out[name] = [value.with_changes(args=[cst.Arg(display)])]
    return out


def _spread_list(call: cst.Call, method: cst.FunctionDef) -> cst.Call:
    """``nn.Sequential(*layers)`` after ``layers = [Conv3(i, o), nn.MaxPool2d(2)]`` (the method's only binding of
    ``layers``, a display of no starred element, at its top level, read nowhere else): the call with the display's
    elements as its arguments, for the dtype facts to read the members; the call itself otherwise."""
    if len(call.args) != 1 or call.args[0].star != "*" or call.args[0].keyword is not None \
            or not isinstance(call.args[0].value, cst.Name) or not isinstance(method.body, cst.IndentedBlock):
        return call
    name = call.args[0].value.value
    displays = [s.body[0].value for s in method.body.body
                if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
                and s.body[0].targets[0].target.value == name]
    if len(displays) != 1 or not isinstance(displays[0], (cst.List, cst.Tuple)) \
            or any(isinstance(e, cst.StarredElement) for e in displays[0].elements) \
            or sum(_binds(s, name) for s in method.body.body) != 1 \
            or sum(1 for n in all_nodes(method, cst.Name) if n.value == name) != 2:
        return _appended_tail(call, method, name)  # bound once, read only in the spread (else an append may change it)
    return call.with_changes(args=[cst.Arg(e.value) for e in displays[0].elements])


def _appended_tail(call: cst.Call, method: cst.FunctionDef, name: str) -> cst.Call:
    """``nn.Sequential(*layers)`` whose statement, at the method's top level, comes right after ``layers.append(
    nn.Linear(d, e))`` (t2t's ``layers.extend([...])`` in a loop, then the head appended), ``layers`` a name the
    method only binds to list displays, grows (``append``/``extend``) and spreads there: the call as ``nn.Sequential(*layers, nn.Linear(d, e))`` (the
    list's members unknown, its last one the appended call), for the dtype facts to read the sequence's last member
    (:meth:`FloatFacts._sequential_kind`); the call itself otherwise."""
    body = method.body.body
    at = next((i for i, s in enumerate(body) if any(c is call for c in all_nodes(s, cst.Call))), None)
    if not at or not isinstance(body[at - 1], cst.SimpleStatementLine) or len(body[at - 1].body) != 1 \
            or not isinstance(body[at - 1].body[0], cst.Expr):
        return call
    append = body[at - 1].body[0].value
    if not (isinstance(append, cst.Call) and isinstance(append.func, cst.Attribute)
            and isinstance(append.func.value, cst.Name) and append.func.value.value == name
            and append.func.attr.value == "append" and len(append.args) == 1 and append.args[0].keyword is None
            and not append.args[0].star and isinstance(append.args[0].value, cst.Call)):
        return call
    lists = {id(a.targets[0].target) for a in all_nodes(method, cst.Assign)
             if len(a.targets) == 1 and isinstance(a.value, cst.List)}
    grown = {id(c.func.value) for c in all_nodes(method, cst.Call)
             if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("append", "extend")}
    spread = call.args[0].value if call.args and call.args[0].star == "*" else None
    if not any(id(n) in lists for n in all_nodes(method, cst.Name) if n.value == name) \
            or any(id(n) not in lists | grown and n is not spread for n in all_nodes(method, cst.Name)
                   if n.value == name):
        return call  # the name used otherwise than bound to a list display, grown, spread: it may hold another object
    return call.with_changes(args=[call.args[0], cst.Arg(append.args[0].value), *call.args[1:]])


def _branch_calls(value) -> "list[cst.Call] | None":
    """The calls of ``A(...) if c else B(...)`` (nested too); none for ``None`` (``self.gate = None``, ``nn.Linear(d,
    h) if gate else None``: the facts read such an attribute only as a call of it, an attribute of it, an iteration
    of it or a torch operation's operand, and torch raises on ``None`` at each, so a read that runs reads one of the
    calls); None when a branch is anything else."""
    if isinstance(value, cst.Call):
        return [value]
    if isinstance(value, cst.IfExp):
        body, orelse = _branch_calls(value.body), _branch_calls(value.orelse)
        return None if body is None or orelse is None else body + orelse
    if isinstance(value, cst.Name) and value.value == "None":
        return []
    return None


def _self_attr(expr) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def _assignments(method: cst.FunctionDef, annotated: bool = False):
    """The method's own ``x = v`` statements; with ``annotated``, ``x: T = v`` too, as ``x = v`` (whisper's
    ``self.blocks: Iterable[Block] = nn.ModuleList(...)``)."""
    found = own_nodes(method, cst.Assign)
    if annotated:
        found += [cst.Assign(targets=[cst.AssignTarget(a.target)], value=a.value)
                  for a in own_nodes(method, cst.AnnAssign) if a.value is not None]
    return found


def own_nodes(function: cst.FunctionDef, kind: type) -> list:
    """The nodes of ``kind`` in the function's own body (not in a nested function or lambda)."""
    return _memoised("own", function, kind, _own_nodes)


def _remember(key, node, found: list) -> None:
    if len(_NODES) >= 8192:
        _NODES.clear()
    _NODES[key] = (node, found)


def clear_caches() -> None:
    """Forget the per-node caches (:func:`_order`, :func:`module_parents`, :func:`own_nodes`, :func:`all_nodes`): run
    at each file's start and end, so a worker holds no tree of a file it finished."""
    _ORDERS.clear()
    _MODULE_PARENTS.clear()
    _NODES.clear()


# (kind of query, id(node), node kind) -> (node, the nodes found): the facts ask the same questions of the same
# method many times (unets.py: all_nodes 957 times, own_nodes 407 times); a node is immutable and held here, so its
# id stays its own. Callers get a copy of the list (``_assignments`` extends it).
_NODES: dict[tuple, tuple] = {}


def _own_nodes(function: cst.FunctionDef, kind: type) -> list:
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kind):
                found.append(node)
            return not isinstance(node, cst.Lambda) and (not isinstance(node, cst.FunctionDef) or node is function)

    walk(function, _Find())
    return found


def cells_display(call: cst.Call, builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """``nn.ModuleList([nn.Linear(4, 4), Block()])``: a non-empty list display of layer constructions. CellList holds
    it as torch does wherever it is built (appended to later, its members already give the prefix new ones are named
    with; an anonymous one, ``layers.append(nn.ModuleList([attn, ff]))``, is named by the list it joins). A member
    that is a name or any other expression may be None (``ModuleList([norm, None])``, ``[pre_norm, post_norm]`` with
    ``post_norm = None``), which CellList refuses: the runtime ModuleList."""
    return _plain_list_argument(call, builds_cell) and isinstance(call.args[0].value, cst.List)


def named_cells(method: cst.FunctionDef, call: cst.Call,
                cells: Callable[[cst.BaseExpression], bool]) -> Callable[[cst.BaseExpression], bool]:
    """``cells`` for the members of the display ``nn.ModuleList([embed, norm, layers])`` in ``method``, which also
    takes a local name (segformer's MiT stages: ``get_overlap_patches = nn.Unfold(...)``, ``overlap_patch_embed =
    nn.Conv2d(...)``, ``layers = nn.ModuleList([])`` then ``stages.append(nn.ModuleList([get_overlap_patches,
    overlap_patch_embed, layers]))``) every binding of which in the method is a plain ``name = value`` of a Cell
    construction (never None, which CellList refuses), not a parameter, not declared global/nonlocal, and read only
    there and as the receiver of ``name.append/extend/insert(...)``: no other holder of the same Cell (``self.embed
    = embed`` as well would put one Cell under two names)."""
    params = _param_names(method)
    if all_nodes(method, (cst.Global, cst.Nonlocal)):
        return cells
    order = _order(method)
    elements = {id(e.value) for arg in call.args if isinstance(arg.value, cst.List)
                for e in arg.value.elements if isinstance(e, cst.Element)}

    def member(expr) -> bool:
        if cells(expr):
            return True
        if not isinstance(expr, cst.Name) or expr.value in params:
            return False
        bindings = order.bindings(expr.value)
        if not bindings or any(v is None or not cells(v) for v in bindings):
            return False
        for read, parent, grand, _stmt in order.reads(expr.value):
            if id(read) in elements and read is expr:
                continue
            if isinstance(parent, cst.Attribute) and parent.value is read \
                    and parent.attr.value in ("append", "extend", "insert") \
                    and isinstance(grand, cst.Call) and grand.func is parent:
                continue
            return False  # read elsewhere (or in a nested scope, parent None)
        return True

    return member


def member_list(call: cst.Call, key: str | None, file: "FileFacts",
                builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """``nn.ModuleDict(dict(h=nn.ModuleList([Block(c) for _ in range(n)])))`` (nanoGPT, minGPT, nanochat): a list of
    layer constructions (a comprehension too) that is the member ``key`` of a dict given to ModuleDict, never added
    to anywhere in the file (no ``X.<key>.append/extend/insert``, ``add_module``, item assignment or ``+=``, and no
    ``X[...].append(...)`` on an item read by key): CellList holds it as torch does (its members are named when it
    is built, before its owner holds it)."""
    return key is not None and key not in file.appended and key not in file.named and not file.item_adds \
        and _plain_list_argument(call, builds_cell)


_SEQUENCES = {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"}


def _leaf_layer_first(call: cst.Call, resolve) -> bool:
    """``nn.ModuleList([nn.Linear(3, 3), ...])``: the first member is one of torch's own layers, not a container, so
    its parameters are named ``0.weight`` under the list, from which CellList takes the right prefix for members
    appended later (a sequence or a model class first may hold a ``0`` of its own: the prefix comes out wrong)."""
    if not call.args or not isinstance(call.args[0].value, cst.List) or not call.args[0].value.elements:
        return False
    first = call.args[0].value.elements[0].value
    if not isinstance(first, cst.Call):
        return False
    qual = resolve(first.func) or ""
    return qual.startswith("torch.nn.") and qual.count(".") == 2 and qual not in _SEQUENCES


def _empty_list(call: cst.Call) -> bool:
    """``nn.ModuleList()`` / ``nn.ModuleList([])``. MindSpore's CellList names a member appended to it by the prefix
    of the members it already holds: appended to an empty one that its owner holds as ``self.blocks``, the members are
    named ``0.weight``, not ``blocks.0.weight`` (two such lists clash: a list of their Parameters stored on the Cell,
    a checkpoint's keys). The runtime ModuleList remembers the prefix its owner gives it."""
    return not call.args or (len(call.args) == 1 and isinstance(call.args[0].value, cst.List)
                             and not call.args[0].value.elements and call.args[0].keyword is None)


def _plain_list_argument(call: cst.Call, builds_cell: Callable[[cst.BaseExpression], bool],
                         empty: bool = False) -> bool:
    """``nn.ModuleList([...])`` with a list display, or a list comprehension, of layer constructions only (or a
    generator expression, ``nn.ModuleList(nn.Linear(n, k) for n, k in zip(a, b))``: ModuleList consumes it when
    built, CellList takes the list comprehension written for it, TableCallTransform._native_list_argument); with
    ``empty``, also ``nn.ModuleList()`` and ``nn.ModuleList([])``."""
    if empty and (not call.args or (len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None
                                    and isinstance(call.args[0].value, cst.List)
                                    and not call.args[0].value.elements)):
        return True
    if len(call.args) != 1 or call.args[0].keyword not in (None,) or call.args[0].star:
        if not (len(call.args) == 1 and call.args[0].keyword is not None and call.args[0].keyword.value == "modules"):
            return False
    value = call.args[0].value
    if isinstance(value, cst.List):
        return bool(value.elements) and all(isinstance(e, cst.Element) and builds_cell(e.value)
                                            for e in value.elements)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return builds_cell(value.elt)
    return False


def _cell_value(expr, function: cst.FunctionDef | None, builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """Is ``expr`` a Cell (never None): a layer construction, or a local name of ``function`` every binding of which
    is one (``block = nn.ModuleList(); ...; self.blocks.append(block)``)?"""
    if builds_cell(expr):
        return True
    if not isinstance(expr, cst.Name) or function is None:
        return False
    bindings = _order(function).bindings(expr.value)
    return bool(bindings) and all(value is not None and builds_cell(value) for value in bindings)


def _adds_cell(add: cst.Call, function: cst.FunctionDef | None,
               builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """Does ``X.append(cell)`` / ``X.insert(i, cell)`` / ``X.extend([cells])`` add only Cells, as CellList's own
    methods take them (``extend`` takes a list only)?"""
    method = add.func.attr.value
    args = [a for a in add.args if not a.star and a.keyword is None]
    if len(args) != len(add.args):
        return False
    if method == "append" and len(args) == 1:
        return _cell_value(args[0].value, function, builds_cell)
    if method == "insert" and len(args) == 2:
        return _cell_value(args[1].value, function, builds_cell)
    if method == "extend" and len(args) == 1:
        value = args[0].value
        if isinstance(value, cst.List):
            return all(isinstance(e, cst.Element) and _cell_value(e.value, function, builds_cell)
                       for e in value.elements)
        return isinstance(value, cst.ListComp) and builds_cell(value.elt)
    return False


def _local_list_adds_cells(method: cst.FunctionDef, name: str,
                           builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """``block = nn.ModuleList()`` in ``method``: is the name bound only to such lists, and every ``block.append/
    insert/extend(...)`` in the method (none in a nested function) given Cells, nothing added by name or by index?"""
    bindings = _order(method).bindings(name)
    if not bindings or any(not isinstance(value, cst.Call) or not _plain_list_argument(value, builds_cell, empty=True)
                           for value in bindings) \
            or any(name in {n.value for n in all_nodes(inner, cst.Name)} for inner in _nested_scopes(method)):
        return False  # every binding an nn.ModuleList(...) of Cells (one per loop pass, say), read by no closure
    ok = True

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node):
            nonlocal ok
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name \
                    and func.attr.value in _LIST_ADDERS:
                ok = ok and _adds_cell(node, method, builds_cell)

        def visit_AugAssign(self, node):
            nonlocal ok
            if isinstance(node.target, cst.Name) and node.target.value == name:
                ok = False

        def visit_AssignTarget(self, node):
            nonlocal ok
            if isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name) \
                    and node.target.value.value == name:
                ok = False

    walk(method.body, _Find())
    return ok


def _nested_cell_functions(method: cst.FunctionDef, builds_cell: Callable[[cst.BaseExpression], bool]) -> frozenset[str]:
    """Functions defined straight in the method's body that always return a layer construction (S4's Sashimi:
    ``def s4_block(dim): layer = S4Block(...); return ResidualBlock(d_model=dim, layer=layer)``), each name bound by
    its ``def`` alone (no other binding in the method, not a parameter, no decorator): a call of one is a Cell."""
    body = method.body.body if isinstance(method.body, cst.IndentedBlock) else ()
    defs = [s for s in body if isinstance(s, cst.FunctionDef)]
    names = [d.name.value for d in defs]
    order = _order(method)
    found = set()
    for d in defs:
        name = d.name.value
        if names.count(name) != 1 or name in _param_names(method) or order.bindings(name) or d.decorators \
                or d.asynchronous is not None or not _always_returns(d.body.body):
            continue
        returns = own_nodes(d, cst.Return)
        if returns and all(r.value is not None and _cell_value(r.value, d, builds_cell) for r in returns):
            found.add(name)  # return ResidualBlock(...), or a local bound only to constructions
    return frozenset(found)


def method_cells(method: cst.FunctionDef, builds_cell: Callable[[cst.BaseExpression], bool],
                 resolve_any: "Resolve | None" = None) -> Callable[[cst.BaseExpression], bool]:
    """``builds_cell`` for expressions of ``method``, which also knows the method's own builders: a call of a function
    defined in it that always returns a Cell (:func:`_nested_cell_functions`), and a call of a local name every
    binding of which in the method is a layer class or a choice of layer classes (denoising-diffusion-pytorch's
    ``attn_klass = FullAttention if layer_full_attn else LinearAttention`` then ``attn_klass(dim_in, heads=h)``; not
    a parameter, not bound otherwise). With ``resolve_any`` (any import's qualified name), a local name every binding
    of which is ``functools.partial`` of a layer class with keywords only (the same file's ``FullAttention =
    partial(Attention, flash=flash_attn)``, ``resnet_block = partial(ResnetBlock, time_emb_dim=t)``) counts as that
    class: its call is the class's call with the partial's keywords."""
    nested = _nested_cell_functions(method, builds_cell)
    order = _order(method)
    params = _param_names(method)

    def partial_class(value, args=()) -> bool:
        """``partial(X, k=v, ...)`` whose call with ``args`` builds a Cell (X not a name of the method's own)."""
        if resolve_any is None or not isinstance(value, cst.Call) or resolve_any(value.func) != "functools.partial" \
                or not value.args or value.args[0].keyword is not None or value.args[0].star \
                or any(a.keyword is None for a in value.args[1:]):
            return False
        inner = value.args[0].value
        if isinstance(inner, cst.Name) and (inner.value in params or order.bindings(inner.value)):
            return False  # a local or a parameter: not the file's class of that name
        return builds_cell(partial_applied(value, args))

    def local_partial(name: str, args=()) -> bool:
        bindings = order.bindings(name)
        return name not in params and bool(bindings) and all(partial_class(v, args) for v in bindings)

    def a_class(expr) -> bool:
        if isinstance(expr, cst.IfExp):
            return a_class(expr.body) and a_class(expr.orelse)
        if isinstance(expr, cst.Name) and (expr.value in params or order.bindings(expr.value)):
            return local_partial(expr.value)  # a local: a partial of a layer class, not the file's class of that name
        return isinstance(expr, (cst.Name, cst.Attribute)) and builds_cell(cst.Call(func=expr))

    def cells(expr) -> bool:
        if builds_cell(expr):
            return True
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
            return False
        name = expr.func.value
        if name in nested or local_partial(name, expr.args):
            return True
        bindings = order.bindings(name)
        return name not in params and bool(bindings) and all(v is not None and a_class(v) for v in bindings)

    return cells


def _param_names(function: cst.FunctionDef) -> set[str]:
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    names.update(p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))
    return names


def _cells_display(value, cells: Callable[[cst.BaseExpression], bool]) -> bool:
    """``[]``, ``[Block(c), nn.Linear(4, 4)]`` or ``[Block(c) for c in cs]``: a Python list that holds Cells only."""
    if isinstance(value, cst.List):
        return all(isinstance(e, cst.Element) and cells(e.value) for e in value.elements)
    return isinstance(value, cst.ListComp) and cells(value.elt)


def listed_cells(method: cst.FunctionDef, call: cst.Call, resolve: Resolve,
                 builds_cell: Callable[[cst.BaseExpression], bool]) -> bool:
    """``nn.ModuleList(blocks)`` where ``blocks`` is a local Python list of Cells (S4's Sashimi, latent-diffusion's
    ``blocks = []; for m in ch_mult: blocks.append(ResnetBlock(...)); self.model = nn.ModuleList(blocks)``):
    MindSpore's CellList takes it as torch's ModuleList does (a list, its members Cells: none is None), and names
    the members when its owner assigns it, as torch does. Every binding of the name in the method is a list display
    or comprehension of layer constructions (a call of a function of the method that always returns one counts,
    :func:`_nested_cell_functions`), and every other read of it is an ``append``/``insert``/``extend`` of Cells,
    ``len(blocks)`` or another such ``nn.ModuleList(blocks)``: no read in a nested function or lambda, no other use
    (an item assignment, ``+=``, a loop over it, a call it is handed to) that could put something else in it."""
    if len(call.args) != 1 or call.args[0].star or (
            call.args[0].keyword is not None and call.args[0].keyword.value != "modules"):
        return False
    value = call.args[0].value
    if not isinstance(value, cst.Name) or value.value in _param_names(method):
        return False
    name = value.value
    cells = method_cells(method, builds_cell)
    order = _order(method)
    bindings = order.bindings(name)
    if not bindings or any(v is None or not _cells_display(v, cells) for v in bindings):
        return False
    for node, parent, grand, _ in order.reads(name):
        if parent is None:
            return False  # read in a nested scope: at any time
        if isinstance(parent, cst.Attribute) and parent.value is node and isinstance(grand, cst.Call) \
                and grand.func is parent and parent.attr.value in ("append", "insert", "extend"):
            if not _adds_cell(grand, method, cells):
                return False
            continue
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and len(grand.args) == 1 \
                and not parent.star and (
                    (isinstance(grand.func, cst.Name) and grand.func.value == "len" and parent.keyword is None)
                    or resolve(grand.func) == "torch.nn.ModuleList"):
            continue
        return False
    return True


def _nested_scopes(method: cst.FunctionDef):
    found = []

    class _Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            found.append(node)
            return False

        def visit_Lambda(self, node):
            found.append(node)
            return False

        def visit_ClassDef(self, node):
            found.append(node)
            return False

    walk(method.body, _Find())
    return found


def _members_fresh(call: cst.Call, facts: ClassFacts) -> bool:
    """``nn.ModuleList([...])`` whose every member is built by a layer class with a fresh output."""
    if not _plain_list_argument(call, facts.builds_cell):
        return False
    value = call.args[0].value
    members = [value.elt] if isinstance(value, (cst.ListComp, cst.GeneratorExp)) else [e.value for e in value.elements]
    return all(isinstance(m, cst.Call) and facts._fresh_layer(m) for m in members)  # noqa: SLF001


class _Ref:
    __slots__ = ("call", "assigned")

    def __init__(self, call, assigned) -> None:
        self.call, self.assigned = call, assigned


def _unpacked_element(node: cst.Assign, target, name: cst.Name):
    """``a, b = u, v`` (one target, a tuple or list of plain names, a display of as many plain elements): the element
    bound to ``name`` (its reaching value, :meth:`_Order.reaching_binding`); None for any other target."""
    if len(node.targets) != 1 or not isinstance(target, (cst.Tuple, cst.List)) \
            or not isinstance(node.value, (cst.Tuple, cst.List)) \
            or len(target.elements) != len(node.value.elements) \
            or any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements) \
            or any(isinstance(e, cst.StarredElement) for e in node.value.elements):
        return None
    for element, value in zip(target.elements, node.value.elements):
        if element.value is name:
            return value.value
    return None


def _unpacking_target(target, name: cst.Name) -> bool:
    """Is ``name`` a plain (not starred, not nested) element of the tuple or list target ``target``?"""
    return isinstance(target, (cst.Tuple, cst.List)) and any(
        not isinstance(e, cst.StarredElement) and e.value is name for e in target.elements)


_ORDERS: dict[int, tuple] = {}  # id(method) -> (method, its _Order): the method held, so the id stays its own


def _order(method: cst.FunctionDef) -> "_Order":
    """The method's :class:`_Order`, built once per method node: the facts ask for it per class, per layer name and
    per call (``_only_called``, ``method_cells``, ``unread_bindings`` ...), and each build walks the whole method
    (unets.py: 104 builds of 27 methods). LibCST nodes are immutable and an _Order is only queried, so one serves
    every asker of the same node."""
    return _node_cached(_ORDERS, method, 2048, _Order)


def _node_cached(store: dict, node, limit: int, build):
    """``build(node)`` once per node object: ``store`` maps ``id(node)`` to ``(node, value)`` (the node held, so the
    id stays its own), cleared when it reaches ``limit`` entries and by :func:`clear_caches`."""
    hit = store.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if len(store) >= limit:
        store.clear()
    value = build(node)
    store[id(node)] = (node, value)
    return value


class _Order(cst.CSTVisitor):
    """One method in source order: each node's position, names' reads (with their parent) and bindings, references
    to ``self.<attr>``, and which nodes sit in a loop."""

    def __init__(self, method: cst.FunctionDef) -> None:
        super().__init__()
        self._pos: dict[int, int] = {}
        self._stack: list[cst.CSTNode] = []
        self._loops = 0
        self._in_loop: set[int] = set()
        self._reads: dict[str, list[tuple]] = {}  # name -> (node, parent, grandparent, statement id)
        self._statement: list[int] = []
        self._stmt_of: dict[int, int] = {}
        self._bindings: dict[str, list] = {}
        self._placed: dict[str, list] = {}  # name -> (position, value or None) of every binding, in source order
        # name -> (statement id, value) per binding; value None for one that is not ``name = value`` at the
        # method's top level (in a block, a loop, a with, a tuple target ...)
        self._binding_stmts: dict[str, list] = {}
        self._stmt_target: dict[int, str | None] = {}
        # name -> the whole value of each ``a, b = value`` binding it (a plain element of one tuple or list target)
        self._unpacked: dict[str, list] = {}
        self._attr_refs: dict[str, list[_Ref]] = {}
        self._current_stmt_target: list[str | None] = []
        self._store: set[int] = set()
        self._top: set[int] = set()  # the method's top-level simple statements
        self._method = method
        walk(method.body, self)  # its hooks look at syntax nodes only: walk's nodes, in LibCST's order

    # positions and parents
    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            # a nested scope may read a name when it runs, at any time: each name in it is an unsafe read
            for name in all_nodes(node, cst.Name):
                self._reads.setdefault(name.value, []).append((name, None, None, -1))
            return False
        self._pos[id(node)] = len(self._pos)
        if self._loops:
            self._in_loop.add(id(node))
        if isinstance(node, (cst.For, cst.While)):
            self._loops += 1
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            if not self._statement and isinstance(node, cst.SimpleStatementLine):
                self._top.add(id(node))
            self._statement.append(id(node))
        if self._statement:
            self._stmt_of[id(node)] = self._statement[-1]
        if isinstance(node, cst.SimpleStatementLine):
            target = None
            body = node.body[0] if len(node.body) == 1 else None
            if isinstance(body, cst.Assign) and len(body.targets) == 1 and isinstance(body.targets[0].target, cst.Name):
                target = body.targets[0].target.value
            self._current_stmt_target.append(target)
        self._visit_node(node)
        self._stack.append(node)
        return True

    def on_leave(self, original_node) -> None:
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return
        self._stack.pop()
        if isinstance(original_node, (cst.For, cst.While)):
            self._loops -= 1
        if isinstance(original_node, cst.SimpleStatementLine):
            self._current_stmt_target.pop()
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._statement.pop()

    def _visit_node(self, node) -> None:
        parent = self._stack[-1] if self._stack else None
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for name in target_name_nodes(t.target):
                    self._store.add(id(name))
                    plain = isinstance(t.target, cst.Name) and len(node.targets) == 1
                    self._bindings.setdefault(name.value, []).append(node.value if plain else None)
                    if not plain and len(node.targets) == 1 and _unpacking_target(t.target, name):
                        self._unpacked.setdefault(name.value, []).append(node.value)
                    value = node.value if plain else _unpacked_element(node, t.target, name)
                    self._bind(name.value, value if len(self._statement) == 1 else None, node.value if plain else None)
        elif isinstance(node, cst.AnnAssign):
            if isinstance(node.target, cst.Name):
                self._store.add(id(node.target))
                self._bindings.setdefault(node.target.value, []).append(node.value)
                self._bind(node.target.value, node.value if len(self._statement) == 1 else None, node.value)
        elif isinstance(node, cst.AugAssign):
            # x += y: torch adds into x (a read of x, which keeps x's object: no new binding)
            if isinstance(node.target, cst.Name):
                self._store.add(id(node.target))
                self._reads.setdefault(node.target.value, []).append(
                    (node.target, node, parent, self._statement[-1] if self._statement else -1))
        elif isinstance(node, (cst.For, cst.CompFor)):
            for name in target_name_nodes(node.target):
                self._store.add(id(name))
                self._bindings.setdefault(name.value, []).append(None)
                self._bind(name.value, None)
        elif isinstance(node, (cst.AsName, cst.NamedExpr)):
            target = node.name if isinstance(node, cst.AsName) else node.target
            for name in target_name_nodes(target):
                self._store.add(id(name))
                self._bindings.setdefault(name.value, []).append(None)
                self._bind(name.value, None)
        elif isinstance(node, cst.Name) and id(node) not in self._store:
            if not (isinstance(parent, cst.Attribute) and parent.attr is node) \
                    and not (isinstance(parent, cst.Arg) and parent.keyword is node):
                grand = self._stack[-2] if len(self._stack) > 1 else None
                self._reads.setdefault(node.value, []).append(
                    (node, parent, grand, self._statement[-1] if self._statement else -1))
        elif isinstance(node, cst.Attribute) and _self_attr(node):
            call = parent if isinstance(parent, cst.Call) and parent.func is node else None
            assigned = isinstance(parent, cst.AssignTarget)
            self._attr_refs.setdefault(node.attr.value, []).append(_Ref(call, assigned))
        if isinstance(node, cst.Call) and self._current_stmt_target:
            self._stmt_target[id(node)] = self._current_stmt_target[-1]

    def _bind(self, name: str, value, placed=None) -> None:
        self._binding_stmts.setdefault(name, []).append((self._statement[-1] if self._statement else -1, value))
        self._placed.setdefault(name, []).append(
            (self._pos.get(self._statement[-1], -1) if self._statement else -1, placed))

    # queries
    def reaching_binding(self, name: str, call: cst.Call):
        """In straight-line code, the statement id and value of the binding of ``name`` the call reads: the last
        ``name = value`` before the call's statement when the call's statement and every binding of ``name`` are
        plain statements of the method's top level; None otherwise (or when no binding comes before)."""
        stmt = self.statement_of(call)
        bindings = self._binding_stmts.get(name, [])
        if stmt not in self._top or any(value is None for _, value in bindings):
            return None
        before = [(s, v) for s, v in bindings if self._pos.get(s, -1) < self._pos.get(stmt, -1)]
        return before[-1] if before else None

    def dominating_binding(self, name: str, node):
        """The statement id and value of the plain top-level ``name = value`` the node reads, where the node's
        statement is a plain statement of the method's top level and that binding is the last of ``name`` before it
        (any binding after it and before the node, nested in a block or loop or a tuple target, gives None): in
        straight-line code it dominates the read, whatever other bindings the method has (``y, x =
        torch.meshgrid(...)`` then ``x = x.flatten()[:, None] * omega``: the read of ``x`` after that is the
        product). Unlike :meth:`reaching_binding`, other bindings of the name need not be plain."""
        stmt = self.statement_of(node)
        bindings = self._binding_stmts.get(name, [])
        if stmt not in self._top or any(s == stmt and v is None for s, v in bindings):
            return None  # a comprehension's variable or a := in the node's own statement
        before = [(s, v) for s, v in bindings if self._pos.get(s, -1) < self._pos.get(stmt, -1)]
        if not before or before[-1][1] is None or before[-1][0] not in self._top:
            return None
        return before[-1]

    def reaching_values(self, name: str, node):
        """The values every binding of ``name`` that may reach the read ``node`` gives, where the read is in a
        top-level statement S of the method (in a loop or branch of it too): the last plain top-level ``name =
        value`` before S, and every binding after it up to the end of S (a branch's, a loop's: a superset of the
        bindings that reach, each a plain assignment). With the statement's id: ``(S, values)``. None where a binding
        there is not a plain assignment (a loop target, an unpacking, ``with ... as``, ``:=``), the name is
        declared global or nonlocal, or no top-level binding comes before S."""
        top = self._top_of(node)
        if top is None or any(name in [n.name.value for n in g.names]
                              for g in all_nodes(self._method, (cst.Global, cst.Nonlocal))):
            return None
        start, end = self._pos.get(top, -1), self._end_of(top)
        before = [(s, v) for s, v in self._binding_stmts.get(name, [])
                  if s in self._top and self._pos.get(s, -1) < start]
        if not before or before[-1][1] is None:
            return None
        first = self._pos.get(before[-1][0], -1)
        values = [before[-1][1]]
        for position, value in self._placed.get(name, []):
            if first < position <= end:
                if value is None:
                    return None
                values.append(value)
        return top, values

    def _top_of(self, node) -> "int | None":
        """The id of the top-level statement of the method that holds ``node``."""
        if id(node) not in self._pos:
            return None
        for top in self._top_ids():
            if self._pos.get(top, -1) <= self._pos.get(id(node), -1) <= self._end_of(top):
                return top
        return None

    def _top_ids(self) -> list:
        if not hasattr(self, "_tops"):
            self._tops = [id(s) for s in self._method.body.body] if isinstance(self._method.body, cst.IndentedBlock) \
                else []
            self._ends = {}
            body = self._method.body.body if isinstance(self._method.body, cst.IndentedBlock) else []
            for stmt in body:
                last = id(stmt)
                for inner in all_nodes(stmt, cst.CSTNode):
                    if id(inner) in self._pos and self._pos[id(inner)] > self._pos.get(last, -1):
                        last = id(inner)
                self._ends[id(stmt)] = self._pos.get(last, -1)
        return self._tops

    def _end_of(self, top: int) -> int:
        self._top_ids()
        return self._ends.get(top, -1)

    def statement_position(self, stmt: int) -> int:
        return self._pos.get(stmt, -1)

    def statement_of(self, node) -> int:
        return self._stmt_of.get(id(node), -2)

    def position(self, node) -> int:
        return self._pos.get(id(node), -1)

    def in_loop(self, node) -> bool:
        return id(node) in self._in_loop

    def reads(self, name: str):
        return self._reads.get(name, [])

    def bindings(self, name: str):
        return self._bindings.get(name, [])

    def placed(self, name: str):
        """(position of the statement, value or None) of every binding of ``name``, in source order: the value of a
        plain ``name = value``, None for any other binding (a loop target, an unpacking, ``with ... as``, ``:=``)."""
        return self._placed.get(name, [])

    def unpacked(self, name: str):
        """The whole value of each binding of ``name`` as a plain element of a tuple or list target (``q, k, v =
        value``); :meth:`bindings` has None for those."""
        return self._unpacked.get(name, [])

    def attribute_refs(self, name: str):
        return self._attr_refs.get(name, [])

    def statement_target(self, call: cst.Call) -> str | None:
        """The name the call's statement assigns when the statement is ``name = <this call>``."""
        return self._stmt_target.get(id(call))


def all_nodes(node, kind: type) -> list:
    """Every node of ``kind`` in the node, nested functions and lambdas included."""
    return _memoised("all", node, kind, _all_nodes)


def _memoised(tag: str, node, kind: type, compute) -> list:
    """``compute(node, kind)`` once per node of this file (a copy each call: callers may change their list)."""
    key = (tag, id(node), kind)
    hit = _NODES.get(key)
    if hit is not None and hit[0] is node:
        return list(hit[1])
    found = compute(node, kind)
    _remember(key, node, found)
    return list(found)


def _all_nodes(node, kind: type) -> list:
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, child) -> bool:
            if isinstance(child, kind):
                found.append(child)
            return True

    walk(node, _Find())
    return found


class FileFacts:
    """What the whole file says about attributes: ``appended`` (``X.<name>.append/extend/insert/add_module(...)``;
    ``named``: the add_module/register_module ones),
    ``foreign`` (``obj.<name>`` read on something other than ``self`` or an imported module: another class's code may
    use the layer otherwise), ``subclassed`` (names used as a base class: a subclass may use the attributes
    otherwise)."""

    def __init__(self, module: cst.Module) -> None:
        appended: set[str] = set()
        named: set[str] = set()
        classes: set[str] = set()
        foreign: set[str] = set()
        subclassed: set[str] = set()
        imported: set[str] = set()
        attributes: list[cst.Attribute] = []

        adds: dict[str, list] = {}
        add_classes: dict[int, str] = {}  # id(add call) -> the name of the class it is written in
        bases: dict[str, set[str]] = {}  # class name -> the names of its bases
        item_adds: list[cst.Call] = []
        functions: list[cst.FunctionDef] = []
        class_stack: list[str] = []
        in_imports: set[int] = set()

        written: set[str] = set()  # obj.<name> written (assigned, or updated by an in-place method) on another object

        def _written(target) -> None:
            for attr in all_nodes(target, cst.Attribute):
                if not _self_attr(attr):
                    written.add(attr.attr.value)

        class _Find(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                functions.append(node)

            def leave_FunctionDef(self, node):
                functions.pop()

            def visit_Call(self, node):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") \
                        and isinstance(func.value, cst.Attribute) and not _self_attr(func.value):
                    written.add(func.value.attr.value)  # block.attn.bias.fill_(0)
                if isinstance(func, cst.Attribute) and func.attr.value in _LIST_ADDERS \
                        and isinstance(func.value, cst.Subscript):
                    item_adds.append(node)  # self.blocks["h"].append(...)
                if isinstance(func, cst.Attribute) and func.attr.value in _LIST_ADDERS \
                        and isinstance(func.value, cst.Attribute):
                    appended.add(func.value.attr.value)
                    adds.setdefault(func.value.attr.value, []).append((node, functions[-1] if functions else None))
                    if class_stack:
                        add_classes[id(node)] = class_stack[-1]
                    if func.attr.value in ("add_module", "register_module", "__setitem__"):
                        named.add(func.value.attr.value)

            def visit_AugAssign(self, node):
                _written(node.target)
                if isinstance(node.target, cst.Attribute):  # self.layers += [...]
                    named.add(node.target.attr.value)

            def visit_AssignTarget(self, node):
                _written(node.target)
                if isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Attribute):
                    named.add(node.target.value.attr.value)  # self.layers[i] = ...

            def visit_Attribute(self, node):
                attributes.append(node)

            def visit_Import(self, node):
                in_imports.update(id(a) for a in all_nodes(node, cst.Attribute))

            def visit_ImportFrom(self, node):  # from einops.layers.torch import ...: a module path, not a read
                in_imports.update(id(a) for a in all_nodes(node, cst.Attribute))

            def visit_ClassDef(self, node):
                classes.add(node.name.value)
                class_stack.append(node.name.value)
                for base in node.bases:
                    if isinstance(base.value, cst.Name):
                        subclassed.add(base.value.value)
                        bases.setdefault(node.name.value, set()).add(base.value.value)
                    elif isinstance(base.value, cst.Attribute):
                        subclassed.add(base.value.attr.value)
                        bases.setdefault(node.name.value, set()).add(base.value.attr.value)

            def leave_ClassDef(self, node):
                class_stack.pop()

            def visit_ImportAlias(self, node):
                bound = node.asname.name if node.asname is not None else node.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                if isinstance(bound, cst.Name):
                    imported.add(bound.value)

        walk(module, _Find())
        for node in attributes:
            if id(node) in in_imports:
                continue
            root = node.value
            while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
                root = root.value if not isinstance(root, cst.Call) else root.func
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                continue
            if isinstance(root, cst.Name) and root.value in imported:
                continue  # nn.ReLU, F.relu: a module's name, not a layer attribute
            foreign.add(node.attr.value)
        self.appended = frozenset(appended)
        self.item_adds = tuple(item_adds)  # X[...].append/extend/insert/add_module(...): added to by key
        self.adds = adds  # attribute name -> [(X.<name>.append/extend/insert(...) call, its enclosing function)]
        self.named = frozenset(named)  # add_module/register_module, item assignment, +=: the runtime ModuleList
        self.classes = frozenset(classes)  # the classes the file defines
        self.foreign = frozenset(foreign)
        self.foreign_written = frozenset(written)  # causal buffers: a read elsewhere (config.bias) changes nothing
        self.subclassed = frozenset(subclassed)
        self.add_classes = add_classes
        self.bases = bases
        self.partials = _module_partials(module)


    def family(self, name: str) -> set[str]:
        """The class ``name`` and every class of the file that derives from it (through the file's classes)."""
        found, grew = {name}, True
        while grew:
            grew = False
            for cls, names in self.bases.items():
                if cls not in found and names & found:
                    found.add(cls)
                    grew = True
        return found


def sequential_inplace(call: cst.Call, resolve: Resolve, is_inplace: Callable[[cst.Call], bool]) -> set[int]:
    """Ids of the in-place activations among ``nn.Sequential(...)``'s arguments (and those of the Sequentials nested in
    it) that follow a layer with a fresh output: what they overwrite is that layer's output, which only the sequence
    sees (the caller checks that the sequence is only ever called, never iterated or indexed)."""
    safe: set[int] = set()
    fresh_before = False
    for arg in call.args:
        if arg.star or arg.keyword is not None:
            return set()
        value = arg.value
        if isinstance(value, cst.Call) and is_inplace(value):
            if fresh_before:
                safe.add(id(value))
            continue
        if isinstance(value, cst.Call) and resolve(value.func) == "torch.nn.Sequential":
            safe |= sequential_inplace(value, resolve, is_inplace)
        fresh_before = isinstance(value, cst.Call) and resolve(value.func) in FRESH_LAYERS
    return safe


# ------------------------------------------------------------------------------------------- floating-point inputs

# torch layers whose output is floating point whatever they are given (they refuse integer inputs, or embed them)
_FLOAT_LAYERS = frozenset(
    f"torch.nn.{name}" for name in (
        "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear", "Bilinear",
        "LazyLinear", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm",
        "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "Embedding"))
# torch functions whose result is floating point: draws, and (with no dtype given) the float-default constructors
_FLOAT_FUNCTIONS = frozenset({"torch.randn", "torch.rand", "torch.randn_like", "torch.rand_like", "torch.linspace",
                              "torch.logspace", "torch.zeros", "torch.ones", "torch.empty", "torch.normal"})
# methods whose result has the receiver's dtype (a float receiver gives a float result)
_SAME_DTYPE_METHODS = frozenset({
    "view", "reshape", "permute", "transpose", "flatten", "unflatten", "unsqueeze", "squeeze", "contiguous", "expand",
    "expand_as", "repeat", "clone", "detach", "narrow", "chunk", "split", "flip", "roll", "t", "mean", "softmax",
    "log_softmax", "relu", "abs", "neg", "clamp", "clip", "masked_fill", "view_as", "reshape_as",
    "tril", "triu", "cumsum", "sum", "amax", "amin", "norm", "pow", "square"})
# torch / torch.nn.functional functions whose result has their first argument's dtype
_SAME_DTYPE_FUNCTIONS = _SAME_DTYPE_METHODS | frozenset({
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "hardtanh", "hardswish",
    "dropout", "dropout2d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad", "interpolate", "layer_norm",
    "group_norm", "batch_norm", "normalize"})
# einops functions whose result has their first argument's dtype
_KEEPING_FUNCTIONS = frozenset({"einops.rearrange", "einops.repeat"})
# torch.nn layers that, given a float, do not give a single float tensor (integer inputs, tuples, containers)
_NOT_KEEPING_LAYERS = frozenset(f"torch.nn.{name}" for name in (
    "Embedding", "EmbeddingBag", "MultiheadAttention", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Module", "Parameter", "Sequential"))
_KEEPING_LAYERS_OUTSIDE = frozenset({"einops.layers.torch.Rearrange", "einops.layers.torch.Reduce"})
_FLOAT_METHODS = frozenset({"float", "double", "half", "bfloat16"})
# the layers computing those functions (nn.GELU is F.gelu): a floating output, or torch raises
_FLOAT_OR_RAISE_LAYERS = frozenset(f"torch.nn.{name}" for name in (
    "GELU", "Mish", "ELU", "SELU", "CELU", "Softplus", "LogSigmoid", "Hardswish", "Hardsigmoid", "LeakyReLU", "Softmax",
    "LogSoftmax"))
# torch's matrix products: operands of one dtype only (a float32 against an int64, a float64 or a bool operand raises:
# "expected m1 and m2 to have the same dtype"; einsum: "expected scalar type Float but found Long"), the result theirs
_ONE_DTYPE_PRODUCTS = frozenset({"torch.matmul", "torch.mm", "torch.bmm", "torch.einsum"})
# functions and methods torch computes for real floating inputs only (an integer, bool or complex input raises:
# "softmax_lastdim_kernel_impl not implemented for 'Long'"; measured on torch 2.13 for each), so their result is real
# floating point in every program torch runs (silu, normalize and rms_norm take complex inputs: not here)
_FLOAT_OR_RAISE = frozenset({"softmax", "log_softmax", "gelu", "mish", "elu", "selu", "celu", "softplus", "logsigmoid",
                             "hardswish", "hardsigmoid", "leaky_relu", "layer_norm", "group_norm"})
_STATISTICS = frozenset({"mean", "var", "std"})  # never an integer result (FloatFacts.non_integer)
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"})  # float when every member is
_FLOAT_DTYPES = frozenset(f"torch.{name}" for name in ("float", "float32", "float64", "double", "float16", "half",
                                                       "bfloat16"))
# torch constructors whose result has the dtype their dtype= names
_DTYPE_RESULTS = frozenset({"arange", "zeros", "ones", "empty", "full", "tensor", "as_tensor", "linspace", "logspace",
                            "randn", "rand", "zeros_like", "ones_like", "empty_like", "full_like", "randn_like",
                            "rand_like", "eye"})


def _members_float(call: cst.Call, facts: "FloatFacts") -> bool:
    """``nn.ModuleList([...])`` whose every member is built by a layer class with a floating-point output (a torch
    layer of floating weights, or a class of the file whose forward returns floats: :class:`OwnOutputs`)."""
    return _members_kind(call, facts) == "float"


def _members_kind(call: cst.Call, facts: "FloatFacts") -> "str | None":
    """The kind (:meth:`FloatFacts.layer_kind`) every member of ``nn.ModuleList([...])`` / ``nn.Sequential``'s
    list has: "float" when each is, "keep" when each gives a float at least for a float."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    value = call.args[0].value
    members = [value.elt] if isinstance(value, (cst.ListComp, cst.GeneratorExp)) else \
        [e.value for e in value.elements] if isinstance(value, cst.List) else []
    if not members or not all(isinstance(m, cst.Call) for m in members):
        return None
    kinds = {facts.layer_kind(m) for m in members}
    return "float" if kinds == {"float"} else "keep" if kinds <= {"float", "keep"} else None


def _python_float(call: cst.Call, order) -> bool:
    """``float(v)`` of the builtin (no binding of ``float`` in the function): a Python float, which makes an
    arithmetic with a tensor floating point as a float literal does (torch's promotion: an integer tensor times a
    Python float is float32)."""
    return isinstance(call.func, cst.Name) and call.func.value == "float" and len(call.args) == 1 \
        and call.args[0].keyword is None and not call.args[0].star \
        and (order is None or not order.bindings("float"))


def _slices_only(subscript: cst.Subscript) -> bool:
    """``x[:, 1:]``, ``x[..., :d]``: slices and an ellipsis only (the result keeps the tensor's dtype and rank)."""
    return bool(subscript.slice) and all(
        isinstance(e.slice, cst.Slice) or isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis)
        for e in subscript.slice)


def _PARAMETER_FACTS(facts: "FloatFacts") -> "FloatFacts":  # noqa: N802
    """Facts for the argument of an ``nn.Parameter(...)`` assigned in another method: no local names known there."""
    return FloatFacts(None, facts._resolve, facts._layers, facts._float_only, facts._own)  # noqa: SLF001


class OwnOutputs:
    """What the forward of each class the file defines (once, at its top level) gives: "float" when every return is
    floating point by construction whatever the inputs (``PatchEmbed``: ``return self.proj(x).flatten(2)`` of an
    ``nn.Conv2d``), "keep" when every return is floating point given a floating first input (a block of norms,
    activations and residual sums), None otherwise (a class read recursively, while its own answer is asked, is
    None: the facts only ever claim less)."""

    def __init__(self, module: cst.Module, resolve: Resolve, float_only: frozenset[str],
                 resolve_any: "Resolve | None" = None, changed: frozenset[str] = frozenset()) -> None:
        self._resolve = resolve
        self.changed = changed  # attributes the file may change otherwise (class_float_layers)
        self.resolve_any = resolve_any or resolve  # any import's qualified name (einops.repeat)
        self._float_only = float_only
        counts: dict[str, int] = {}
        for node in all_nodes(module, cst.ClassDef):
            counts[node.name.value] = counts.get(node.name.value, 0) + 1
        for node in all_nodes(module, cst.ImportAlias):  # a name also imported may be another class
            bound = node.asname.name if node.asname is not None else node.name
            if isinstance(bound, cst.Name):
                counts[bound.value] = counts.get(bound.value, 0) + 2
        for node in all_nodes(module, cst.AssignTarget):
            for name in target_name_nodes(node.target):
                counts[name.value] = counts.get(name.value, 0) + 2
        self._classes = {s.name.value: s for s in module.body
                         if isinstance(s, cst.ClassDef) and counts[s.name.value] == 1}
        for node in all_nodes(module, cst.FunctionDef):
            counts[node.name.value] = counts.get(node.name.value, 0) + 1
        self.factories = {s.name.value: call for s in module.body if isinstance(s, cst.FunctionDef)
                          and counts[s.name.value] == 1 and (call := _factory_call(s)) is not None}
        self._memo: dict[str, str | None] = {}

    def pieces(self, name: str) -> bool:
        """Does the class's forward return pieces of one tensor: one ``return`` of a tuple display whose every element
        is an index of the same parameter, never rebound (ShuffleNetV2's ``SplitBlock``: ``return x[:, :c], x[:, c:]``)?
        Its pieces then have one dtype."""
        cls = self._classes.get(name)
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return False
        forwards = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"]
        if len(forwards) != 1 or forwards[0].decorators:
            return False
        returns = own_nodes(forwards[0], cst.Return)
        params = {p.name.value for p in forwards[0].params.params[1:]}
        if len(returns) != 1 or not isinstance(returns[0].value, cst.Tuple) or len(returns[0].value.elements) < 2:
            return False
        roots = set()
        for element in returns[0].value.elements:
            value = element.value if not isinstance(element, cst.StarredElement) else None
            if not isinstance(value, cst.Subscript) or not isinstance(value.value, cst.Name):
                return False
            roots.add(value.value.value)
        if len(roots) != 1 or not roots <= params:
            return False
        root = roots.pop()
        return not any(_binds(s, root) for s in all_nodes(forwards[0].body, cst.SimpleStatementLine)) \
            and not any(root in [n.value for n in all_nodes(getattr(f, "target", f), cst.Name)]
                        for f in all_nodes(forwards[0], (cst.For, cst.CompFor, cst.AsName)))

    def kind(self, name: str) -> "str | None":
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = None  # while it is asked
        self._memo[name] = self._kind(self._classes.get(name))
        return self._memo[name]

    def _kind(self, cls: "cst.ClassDef | None") -> "str | None":
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return None
        forwards = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"]
        if len(forwards) != 1 or forwards[0].decorators or own_nodes(forwards[0], cst.Yield):
            return None
        forward = forwards[0]
        returns = own_nodes(forward, cst.Return)
        if not returns or any(r.value is None for r in returns) or not _always_returns(forward.body.body):
            return None
        layers = class_float_layers(cls, self.changed)
        facts = FlowFloats(forward, self._resolve, layers, self._float_only, self)  # through reaching bindings
        if all(facts.is_float(r.value) for r in returns):
            return "float"
        params = forward.params.params
        if len(params) < 2 or params[0].name.value != "self":
            return None
        facts = FlowFloats(forward, self._resolve, layers, self._float_only, self,
                           assumed=frozenset({params[1].name.value}))
        return "keep" if all(facts.is_float(r.value) for r in returns) else None


def _factory_call(function: cst.FunctionDef) -> "cst.Call | None":
    """A module-level layer factory: a function, not decorated, whose body is one ``return <call>`` of a
    class call (``def conv_1x1_bn(inp, oup): return nn.Sequential(nn.Conv2d(inp, oup, 1), nn.BatchNorm2d(oup))``):
    that call, whose layer every call of the function builds (FloatFacts.layer_kind reads it as the layer);
    None otherwise."""
    if function.decorators or not isinstance(function.body, cst.IndentedBlock):
        return None
    body = [s for s in function.body.body
            if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
                    and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]  # docstring
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1 \
            or not isinstance(body[0].body[0], cst.Return) or not isinstance(body[0].body[0].value, cst.Call):
        return None
    return body[0].body[0].value


class _FunctionFacts:
    """What the dtype facts read of one function: its names' bindings, and its parameters (and its lambdas', which
    shadow its names inside them: ``lambda m: ~m``), whose values the function does not show."""

    def __init__(self, function: cst.FunctionDef | None, resolve: Resolve) -> None:
        self._resolve = resolve
        self._order = _order(function) if function is not None else None
        self._params: set[str] = set()
        if function is not None:
            params = function.params
            self._params = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
            self._params |= {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
            self._params |= {p.name.value for node in own_nodes(function, cst.Lambda) for p in node.params.params}
        self._unpacked: dict[str, list] = {}
        for node in own_nodes(function, cst.Assign) if function is not None else ():
            self._unpack(node)

    def _unpack(self, node: cst.Assign) -> None:
        """``a, b = u, v`` (a: u, b: v) and ``x1, x2 = x.chunk(2, -1)`` (each: a piece of the call's sequence, which
        has one dtype: the facts of the call are its pieces' facts); also ``gx, gy = torch.meshgrid(h, w)`` (torch
        refuses tensors of mixed dtypes there, so its grids have one)."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        if not isinstance(target, (cst.Tuple, cst.List)) \
                or any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements):
            return
        names = [e.value.value for e in target.elements]
        value = node.value
        if isinstance(value, (cst.Tuple, cst.List)):
            if len(value.elements) != len(names) or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return
            values = [e.value for e in value.elements]
        elif isinstance(value, cst.Call) and (
                self._resolve(value.func) in ("torch.chunk", "torch.split", "torch.unbind", "torch.tensor_split",
                                              "torch.meshgrid")
                or self._resolve(value.func) is None and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in ("chunk", "split", "unbind", "tensor_split")):
            values = [value] * len(names)
        else:
            return
        for name, one in zip(names, values):
            self._unpacked.setdefault(name, []).append(one)

    def _binding_values(self, name: str) -> list:
        """The values the function binds ``name`` to (None for one not shown), tuple unpackings shown
        (:meth:`_unpack`) when they are all of the name's bindings not otherwise shown."""
        bindings = self._order.bindings(name) if self._order is not None else []
        unpacked = self._unpacked.get(name, [])
        if unpacked and sum(v is None for v in bindings) == len(unpacked):
            return [v for v in bindings if v is not None] + unpacked
        return bindings

    def piece_of(self, name: str) -> "cst.Call | None":
        """The chunk/split/unbind call whose pieces the name's only binding unpacks (``x1, x2 = x.chunk(2, -1)``),
        or None: names cut by one call have one dtype."""
        values = self._binding_values(name)
        if name in self._params or len(values) != 1 or self._unpacked.get(name) != values \
                or not isinstance(values[0], cst.Call):
            return None
        return values[0]

    def one_promotion(self, members: list, call: cst.Call) -> bool:
        """Do the members of a join have one dtype by torch's promotion, whatever their operands' dtypes? Each member
        (or the value of its only binding, a plain top-level statement before the join's) is the same tree of
        ``+``, ``-``, ``*`` and unary signs over the same operands, up to the order of each binary operation's two
        operands (llama2.c's rotary ``xq_r * cos - xq_i * sin`` and ``xq_r * sin + xq_i * cos``): torch gives a
        binary ``+``/``-``/``*`` the common type of its two operands, which does not depend on their order, and a
        sign keeps its operand's dtype. An operand is a name (slices of it, which keep its dtype and rank, count
        as it), a piece of one chunk/split/unbind call or of one tuple display of slices of one name (pieces of one
        tensor), or a Python number; every read of one is the same object: the join's statement and the bindings
        read are plain top-level statements and no operand is bound from the first of them to the join."""
        order = self._order
        if order is None or len(members) < 2:
            return False
        join = order.statement_of(call)
        if join not in order._top:  # noqa: SLF001
            return False
        times, leaves, forms = [order.statement_position(join)], set(), set()
        for member in members:
            expr, time = member, times[0]
            if isinstance(member, cst.Name) and member.value not in self._params:
                found = order._binding_stmts.get(member.value, [])  # noqa: SLF001
                if len(found) == 1 and found[0][1] is not None and found[0][0] in order._top \
                        and order.statement_position(found[0][0]) < times[0]:  # noqa: SLF001
                    expr, time = found[0][1], order.statement_position(found[0][0])
            form = self._promotion_form(expr, leaves)
            if form is None:
                return False
            forms.add(form)
            times.append(time)
        if len(forms) != 1:
            return False
        low, high = min(times), max(times)
        return not any(low <= order.statement_position(stmt) <= high
                       for name in leaves for stmt, _ in order._binding_stmts.get(name, []))  # noqa: SLF001

    def _promotion_form(self, expr, leaves: set):
        """The tree :meth:`one_promotion` compares (operands of each ``+ - *`` sorted), or None."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._promotion_form(expr.expression, leaves)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            left, right = self._promotion_form(expr.left, leaves), self._promotion_form(expr.right, leaves)
            return None if left is None or right is None else ("op",) + tuple(sorted((left, right), key=repr))
        if isinstance(expr, cst.Integer):
            return ("int",)
        if isinstance(expr, cst.Float):
            return ("float",)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and _slices_only(expr):
            expr = expr.value  # x[:, 1:]: x's dtype and rank
        if not isinstance(expr, cst.Name) or expr.value in ("True", "False", "None"):
            return None
        name = expr.value
        leaves.add(name)
        piece = self.piece_of(name)
        if piece is not None:  # x1, x2 = x.unbind(-1)
            return ("piece", id(piece))
        found = self._order._binding_stmts.get(name, [])  # noqa: SLF001
        if name not in self._params and len(found) == 1 and found[0][0] in self._order._top \
                and isinstance(found[0][1], cst.Subscript) and isinstance(found[0][1].value, cst.Name) \
                and _slices_only(found[0][1]) and self._order.unpacked(name):  # x1, x2 = x[..., :d], x[..., d:]
            return ("slice", found[0][1].value.value, found[0][0])
        return ("name", name)

    def _every_binding(self, name: str, seen: frozenset[str], test) -> bool:
        """Does ``test`` hold of every value the function binds ``name`` to (a parameter: no)?"""
        if name in seen:
            return True  # x = x * 2: the other assignments decide (co-inductively)
        bindings = self._binding_values(name)
        if not bindings or name in self._params:
            return False
        return all(value is not None and test(value, seen | {name}) for value in bindings)


class FloatFacts(_FunctionFacts):
    """Is an expression a floating-point tensor (or number) by construction? Read from the code of one function:
    a float literal, a true division, arithmetic with a float operand, a layer that only gives floats
    (``self.fc(x)`` of an ``nn.Linear``, ``self.fcs[i](x)`` of a ModuleList of them), a Parameter built from a float
    tensor (``self.alpha = nn.Parameter(torch.zeros(n))``), a draw or a float-default constructor without ``dtype``,
    a constructor given a float ``dtype=``, ``arange`` with a float argument, a floating-only function (``exp``,
    ``sigmoid``), ``.float()``, ``.to(torch.float)``, ``torch.tensor`` of floating data (:meth:`_float_data`), a
    dtype-keeping method or index of a float (``.to(device=...)`` too), ``torch.cat``/``stack`` of floats, or a local
    name every assignment of which is one of these. A parameter (unless every call in the file gives it a float:
    :class:`CallerFloats`), an attribute or anything else is unknown: the int-to-float guard stays.

    Also (issue 30's joins): einops' ``repeat``/``rearrange`` of a float; a layer that keeps floats (torch.nn's but
    :data:`_NOT_KEEPING_LAYERS`, einops' Rearrange) given a float; an ``nn.Sequential`` whose last floating-output
    member is followed only by keeping ones; a class of the file whose forward returns floats or keeps them
    (:class:`OwnOutputs`), called as an attribute, through a ModuleList or as the variable of a loop over one; a
    parameter given to a layer of floating weights before any rebinding (:meth:`_param_layer_input`; not an
    Embedding's input) whose other bindings are floats; a local list only ever given floats, its elements and
    ``pop()``; names of a tuple unpacking (:meth:`_unpack`). Attributes also assigned something other than a call,
    or changed elsewhere in the file, are unknown (:func:`class_float_layers`)."""

    def __init__(self, function: cst.FunctionDef | None, resolve: Resolve, layer_calls: dict[str, list[cst.Call]],
                 float_only: frozenset[str], own: "OwnOutputs | None" = None,
                 assumed: frozenset[str] = frozenset()) -> None:
        super().__init__(function, resolve)
        self._resolve_any = own.resolve_any if own is not None else resolve  # einops' names too
        self._layers = layer_calls
        self._float_only = float_only  # names of the floating-only functions (exp, sigmoid, ...)
        self._own = own  # what the file's own classes give (self.patch_embed = PatchEmbed(...))
        self._assumed = assumed  # parameters taken as floating (OwnOutputs asks whether a forward keeps floats)
        self._function = function

    def is_float(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.Float):
            return True
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Divide):
                return True
            return self.is_float(expr.left, seen) or self.is_float(expr.right, seen)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.is_float(expr.expression, seen)
        if isinstance(expr, cst.Subscript):
            return self.is_float(expr.value, seen)
        if isinstance(expr, cst.Name):
            return self._name_float(expr.value, seen)
        if isinstance(expr, cst.List):  # a list of floats (features = [x]; torch.cat(features, 1))
            return all(not isinstance(e, cst.StarredElement) and self.is_float(e.value, seen) for e in expr.elements)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):  # [self.fc(t) for t in ts]
            return self._comprehension_layers(expr, seen) or self.is_float(expr.elt, seen)
        if isinstance(expr, cst.Call) and _python_float(expr, self._order):
            return True  # y * float(self.swish): a Python float, as a literal 1.5 is
        if isinstance(expr, cst.Call):
            return self._call_float(expr, seen)
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("weight", "bias") and _self_attr(expr.value):
            # self.iou_token.weight of an nn.Embedding: a torch layer's floating Parameter (an assignment to it,
            # self.head.weight = ..., takes the layer out of the class's layers: class_float_layers)
            calls = self._layers.get(expr.value.attr.value, [])
            return bool(calls) and all(self._resolve(c.func) in _FLOAT_LAYERS for c in calls)
        if _self_attr(expr):  # self.alpha = nn.Parameter(torch.zeros(n)): a float Parameter
            calls = self._layers.get(expr.attr.value, [])
            return bool(calls) and all(self._resolve(c.func) == "torch.nn.Parameter" and c.args
                                       and c.args[0].keyword is None and _PARAMETER_FACTS(self).is_float(c.args[0].value)
                                       for c in calls)
        return False

    def _name_float(self, name: str, seen: frozenset[str]) -> bool:
        if name in self._params and name not in seen and self._order is not None \
                and (name in self._assumed or self._param_layer_input(name)):
            # a parameter torch only takes floating (given to a layer of floating weights before any rebinding):
            # floating when every other binding of the name is too
            return all(value is not None and self.is_float(value, seen | {name})
                       for value in self._binding_values(name))
        if not self._every_binding(name, seen, self.is_float):
            return False
        if name in seen or not any(isinstance(v, (cst.List, cst.ListComp)) or isinstance(v, cst.Call)
                                   and isinstance(v.func, cst.Name) and v.func.value == "list"
                                   for v in self._order.bindings(name)):
            return True
        return self._float_list_uses(name, seen | {name})

    def _float_list_uses(self, name: str, seen: frozenset[str]) -> bool:
        """A local list of floats (``features = [x]``) stays one: every read of it adds floats
        (``features.append(self.conv(x))``, ``insert``, ``extend``, ``+=``), reads it (``features[-1]``,
        ``features.pop()``, a loop over it, ``len``) or joins it; handed anywhere else (a call, another name, a
        return) it may gain anything."""
        for read, parent, grand, _ in self._order.reads(name):
            if isinstance(parent, cst.Attribute) and parent.value is read:
                method = parent.attr.value
                if method in ("append", "insert", "extend"):
                    if not (isinstance(grand, cst.Call) and grand.func is parent and grand.args
                            and all(a.keyword is None and not a.star for a in grand.args)):
                        return False
                    added = grand.args[1 if method == "insert" else 0].value if len(grand.args) > (
                        method == "insert") else None
                    if added is None or not self._added_float(added, seen):
                        return False
                elif method not in ("pop", "index", "count", "copy", "reverse") \
                        or not (isinstance(grand, cst.Call) and grand.func is parent):
                    return False
            elif isinstance(parent, cst.AugAssign) and parent.target is read:
                if not isinstance(parent.operator, cst.AddAssign) or not self.is_float(parent.value, seen):
                    return False
            elif isinstance(parent, cst.Subscript) and parent.value is read:
                if isinstance(grand, (cst.AssignTarget, cst.AugAssign, cst.Del)):
                    return False  # features[i] = v
            elif isinstance(parent, cst.For) and parent.iter is read:
                continue
            elif isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and parent.keyword is None \
                    and not parent.star and grand.args and grand.args[0] is parent:
                qual = self._resolve(grand.func)
                if qual not in _JOINS | {"torch.hstack", "torch.vstack", "torch.dstack", "torch.column_stack",
                                         "torch.row_stack"} \
                        and not (isinstance(grand.func, cst.Name) and grand.func.value in ("len", "tuple", "reversed")):
                    return False
            else:
                return False
        return True

    def _param_layer_input(self, name: str) -> bool:
        """Does the function give the parameter's own value (read before any rebinding of it, outside a loop that
        rebinds it) as the input of a layer of floating weights (not an Embedding: its input is an integer)? torch
        refuses any input there but one of the layer's floating dtype."""
        bindings = [s for s, _ in self._order._binding_stmts.get(name, [])]  # noqa: SLF001
        first = min((self._order.statement_position(s) for s in bindings), default=None)
        for read, parent, call, stmt in self._order.reads(name):
            if not (isinstance(parent, cst.Arg) and isinstance(call, cst.Call) and call.args
                    and call.args[0] is parent and parent.keyword is None and not parent.star):
                continue
            if bindings and (self._order.in_loop(read) or self._order.statement_position(stmt) > first):
                continue  # x = self.conv(x) reads the parameter; a read after a rebinding may not
            layers = self._layers.get(call.func.attr.value, []) if _self_attr(call.func) else []
            if layers and all(self._weighted_input(c) for c in layers):
                return True
        return False

    def _factory(self, layer: cst.Call) -> cst.Call:
        """The layer call a module-level factory of the file returns (``conv_nxn_bn(c, c, 3)`` -> its
        ``nn.Sequential(nn.Conv2d(...), ...)``: OwnOutputs.factories), or the call itself."""
        if self._own is not None and isinstance(layer.func, cst.Name) and self._resolve(layer.func) is None:
            return self._own.factories.get(layer.func.value, layer)
        return layer

    def _weighted_input(self, layer: cst.Call) -> bool:
        """A layer whose input torch takes only in the dtype of its floating weights: a torch layer of floating
        weights but an Embedding, or an ``nn.Sequential`` whose first member is one (built directly, or by a
        module-level factory of the file: :meth:`_factory`)."""
        layer = self._factory(layer)
        qual = self._resolve(layer.func)
        if qual in _FLOAT_LAYERS - {"torch.nn.Embedding"}:
            return True
        return qual == "torch.nn.Sequential" and bool(layer.args) and layer.args[0].keyword is None \
            and not layer.args[0].star and isinstance(layer.args[0].value, cst.Call) \
            and self._resolve(layer.args[0].value.func) in _FLOAT_LAYERS - {"torch.nn.Embedding"}

    def layer_kind(self, layer: cst.Call) -> "str | None":
        """What a layer built by this call gives: "float" whatever its input (a torch layer of floating weights, one
        torch computes for floating inputs only (_FLOAT_OR_RAISE_LAYERS: nn.GELU, nn.Softmax ...), a Sequential
        ending in one and then layers that keep floats, a class of the file whose forward returns floats),
        "keep" a float for a float (other torch.nn layers but those of :data:`_NOT_KEEPING_LAYERS`, einops'
        Rearrange/Reduce, a class of the file whose forward keeps floats), None when unknown. A module-level
        factory's call is read as the layer call it returns (:meth:`_factory`)."""
        layer = self._factory(layer)
        qual = self._resolve(layer.func)
        if qual in _FLOAT_LAYERS or qual in _FLOAT_OR_RAISE_LAYERS:
            return "float"
        if qual == "torch.nn.Sequential":
            return self._sequential_kind(layer)
        if qual in ("torch.nn.ModuleList", "torch.nn.ModuleDict"):
            return None
        if qual is not None:
            module, _, name = qual.rpartition(".")
            keeping = module == "torch.nn" and name[:1].isupper() and qual not in _NOT_KEEPING_LAYERS
            if keeping and not any(a.keyword is not None and a.keyword.value == "return_indices" for a in layer.args):
                return "keep"
            return None
        if self._resolve_any(layer.func) in _KEEPING_LAYERS_OUTSIDE:
            return "keep"
        if isinstance(layer.func, cst.Name) and self._own is not None:
            return self._own.kind(layer.func.value)
        return None

    def _sequential_kind(self, call: cst.Call) -> "str | None":
        """``nn.Sequential(Rearrange(...), nn.LayerNorm(d), nn.Linear(d, e))``: "float" when a member gives floats
        whatever its input and every member after it keeps floats; "keep" when every member keeps floats."""
        if not call.args or any(a.keyword is not None or a.star == "**" for a in call.args):
            return None
        kind = "keep"
        for arg in call.args:
            if arg.star:  # the members of a list (_appended_tail): unknown, unless a later member gives floats
                kind = None
                continue
            if not isinstance(arg.value, cst.Call):
                return None
            member = self.layer_kind(arg.value)
            if member is None:
                return None
            if member == "float":
                kind = "float"
        return kind  # every member after the last "float" one keeps floats

    def _float_sequential(self, call: cst.Call) -> bool:
        """``nn.Sequential(nn.Conv2d(...), nn.BatchNorm2d(o), nn.ReLU())``: :meth:`_sequential_kind` "float"."""
        return self._resolve(call.func) == "torch.nn.Sequential" and self._sequential_kind(call) == "float"

    def _applied(self, kind: "str | None", call: cst.Call, seen: frozenset[str]) -> bool:
        """A layer of ``kind`` called: floating when it gives floats, or keeps them and its input is floating."""
        if kind == "float":
            return True
        return kind == "keep" and bool(call.args) and call.args[0].keyword is None and not call.args[0].star \
            and self.is_float(call.args[0].value, seen)

    def _loop_layer(self, name: str) -> "str | None":
        """``for blk in self.blocks: x = blk(x)``: the kind every member of the ModuleList/Sequential attribute the
        function's only binding of ``name`` iterates has."""
        if self._function is None or name in self._params:
            return None
        bindings = self._order.bindings(name)
        loops = [f for f in own_nodes(self._function, cst.For)
                 if isinstance(f.target, cst.Name) and f.target.value == name]
        if len(loops) != 1 or len(bindings) != 1 or not _self_attr(loops[0].iter):
            return None
        return self._members_of(loops[0].iter.attr.value)

    def _members_of(self, attribute: str) -> "str | None":
        """The kind every member of the ModuleList/Sequential the class binds to ``self.<attribute>`` has."""
        calls = self._layers.get(attribute, [])
        kinds = set()
        for c in calls:
            qual = self._resolve(c.func)
            if qual == "torch.nn.ModuleList":
                kinds.add(_members_kind(c, self))
            elif qual == "torch.nn.Sequential" and c.args and all(a.keyword is None and not a.star for a in c.args):
                kinds |= {self.layer_kind(a.value) if isinstance(a.value, cst.Call) else None for a in c.args}
            else:
                kinds.add(None)
        return None if not kinds or None in kinds else "float" if kinds == {"float"} else "keep"

    def _comprehension_layers(self, comp, seen: frozenset[str]) -> bool:
        """``[conv(x) for conv in self.convs]`` (or a generator of it): one ``for`` over a ModuleList/Sequential
        attribute whose every member gives floats (or keeps them, given a float argument), its element a call of the
        loop's name whose arguments do not read that name: every element is floating (crossformer's multi-scale
        ``tuple([conv(x) for conv in self.convs])``)."""
        loop = comp.for_in
        if loop.inner_for_in is not None or not isinstance(loop.target, cst.Name) or not _self_attr(loop.iter) \
                or loop.asynchronous is not None:
            return False
        elt, name = comp.elt, loop.target.value
        if not isinstance(elt, cst.Call) or not isinstance(elt.func, cst.Name) or elt.func.value != name \
                or any(n.value == name for a in elt.args for n in all_nodes(a, cst.Name)):
            return False
        return self._applied(self._members_of(loop.iter.attr.value), elt, seen)

    def _mapped_comprehension(self, call: cst.Call) -> "cst.GeneratorExp | None":
        """``map(lambda conv: conv(x), self.convs)`` of Python's builtin (no binding of ``map`` in the function, no
        import of it): the generator ``(conv(x) for conv in self.convs)`` it yields the elements of, for
        :meth:`_comprehension_layers` only (the lambda's one plain parameter is the loop's name; its body the
        element). None for anything else (several iterables, a named function, a lambda of other parameters)."""
        if not isinstance(call.func, cst.Name) or call.func.value != "map" or self._resolve(call.func) is not None \
                or self._resolve_any(call.func) is not None or len(call.args) != 2 \
                or any(a.keyword is not None or a.star for a in call.args) \
                or (self._order is not None and self._order.bindings("map")) or "map" in self._params:
            return None
        fn, items = call.args[0].value, call.args[1].value
        if not isinstance(fn, cst.Lambda):
            return None
        params = fn.params
        if len(params.params) != 1 or params.posonly_params or params.kwonly_params \
                or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None \
                or params.params[0].default is not None:
            return None
        return cst.GeneratorExp(elt=fn.body, for_in=cst.CompFor(target=cst.Name(params.params[0].name.value),
                                                                 iter=items))

    def _container(self, call: cst.Call) -> bool:
        """``tuple(xs)`` / ``list(xs)``: Python's builtins (no binding of the name in the function), one positional
        argument: the same elements."""
        return isinstance(call.func, cst.Name) and call.func.value in ("tuple", "list") \
            and self._resolve(call.func) is None and len(call.args) == 1 and call.args[0].keyword is None \
            and not call.args[0].star and (self._order is None or not self._order.bindings(call.func.value)) \
            and call.func.value not in self._params

    def _block_binding(self, read: cst.Name):
        """The value the name read by a plain statement gets from the last earlier statement of the same block that
        binds it, when that statement is a plain ``name = value`` and no statement in between (compound ones
        included) binds the name (``y = x.sum(-1)`` then ``ys.append(y)`` in a loop body, whatever ``y = None``
        before the loop said); None otherwise."""
        if self._function is None:
            return None
        parents = _function_parents(self._function)
        node = read
        while node is not None and not isinstance(node, cst.SimpleStatementLine):
            if isinstance(node, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp,
                                 cst.NamedExpr)):
                return None
            node = parents.get(id(node))
        block = parents.get(id(node)) if node is not None else None
        if not isinstance(block, cst.IndentedBlock):
            return None
        body = list(block.body)
        name = read.value
        for earlier in reversed(body[:body.index(node)]):
            targets = [n.value for t in all_nodes(earlier, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                                            cst.CompFor, cst.AsName, cst.NamedExpr, cst.With))
                       for n in all_nodes(getattr(t, "target", getattr(t, "name", t)), cst.Name)]
            global_names = [n.value for g in all_nodes(earlier, (cst.Global, cst.Nonlocal, cst.Del, cst.FunctionDef,
                                                                 cst.ClassDef, cst.Import, cst.ImportFrom))
                            for n in all_nodes(g, cst.Name)]
            if name not in targets and name not in global_names:
                continue
            if isinstance(earlier, cst.SimpleStatementLine) and len(earlier.body) == 1 \
                    and isinstance(earlier.body[0], cst.Assign) and len(earlier.body[0].targets) == 1 \
                    and isinstance(earlier.body[0].targets[0].target, cst.Name) \
                    and earlier.body[0].targets[0].target.value == name and name not in global_names:
                return earlier.body[0].value
            return None
        return None

    def _added_float(self, added, seen: frozenset[str]) -> bool:
        """What a list is given (``ys.append(y)``) is floating: by the facts, or a name whose binding in the same
        block (:meth:`_block_binding`) is."""
        if self.is_float(added, seen):
            return True
        value = self._block_binding(added) if isinstance(added, cst.Name) else None
        return value is not None and not isinstance(value, MUTABLE_DISPLAYS) and self.is_float(value, seen)

    def reaching_float(self, expr, call: cst.Call) -> bool:
        """A name whose binding the call reads, in straight-line code, is floating point by construction
        (``x = self.squeeze(x)`` then ``torch.cat([self.expand(x), x], 1)``)."""
        if not isinstance(expr, cst.Name) or self._order is None:
            return False
        reaching = self._order.reaching_binding(expr.value, call)
        return reaching is not None and reaching[1] is not None and self.is_float(reaching[1])

    def piece_float(self, expr) -> bool:
        """A name bound once, at the function's top level, by unpacking the pieces of one tensor an own class's layer
        returns (``x1, x2 = self.split(x)``, OwnOutputs.pieces), one of which (bound there only too) the function
        gives to a layer of floating weights (``self.conv1(x2)``): torch takes only the weights' dtype there, and the
        pieces have one dtype, so every piece is floating (ShuffleNetV2's ``torch.cat([x1, out], 1)``)."""
        if not isinstance(expr, cst.Name) or self._function is None or self._own is None or self._order is None \
                or expr.value in self._params:
            return False
        body = self._function.body.body if isinstance(self._function.body, cst.IndentedBlock) else ()
        found = [s.body[0] for s in body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                 and isinstance(s.body[0], cst.Assign) and len(s.body[0].targets) == 1
                 and isinstance(s.body[0].targets[0].target, cst.Tuple)
                 and expr.value in [e.value.value for e in s.body[0].targets[0].target.elements
                                    if isinstance(e.value, cst.Name)]]
        if len(found) != 1:
            return False
        assign = found[0]
        target, call = assign.targets[0].target, assign.value
        if any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements) \
                or not isinstance(call, cst.Call) or not _self_attr(call.func):
            return False
        layers = self._layers.get(call.func.attr.value, [])
        if not layers or not all(isinstance(c.func, cst.Name) and self._own.pieces(c.func.value) for c in layers):
            return False
        names = [e.value.value for e in target.elements]
        if any(len(self._order.bindings(n)) != 1 or n in self._params for n in names):
            return False
        for sibling in names:
            for read, parent, user, _ in self._order.reads(sibling):
                if isinstance(parent, cst.Arg) and isinstance(user, cst.Call) and _self_attr(user.func) \
                        and user.args and user.args[0] is parent and parent.keyword is None and not parent.star:
                    calls = self._layers.get(user.func.attr.value, [])
                    if calls and all(self._weighted_input(c) for c in calls):
                        return True
        return False

    def layer_input(self, expr) -> bool:
        """A parameter of the function, never rebound in it, that it gives to a layer of floating weights
        (``self.bn(x)`` of an ``nn.BatchNorm2d``; not an Embedding): torch refuses any input there but one of the
        layer's dtype, so the parameter has the dtype of the model's floating weights (DenseNet's
        ``torch.cat([F.relu(self.bn(x)), x], 1)``: both members float32)."""
        if not isinstance(expr, cst.Name) or expr.value not in self._params or self._order is None \
                or self._order.bindings(expr.value):
            return False
        for read, parent, call, _ in self._order.reads(expr.value):
            if isinstance(parent, cst.Arg) and isinstance(call, cst.Call) and _self_attr(call.func) \
                    and call.args and call.args[0] is parent and parent.keyword is None and not parent.star:
                calls = self._layers.get(call.func.attr.value, [])
                if calls and all(self._resolve(c.func) in _FLOAT_LAYERS - {"torch.nn.Embedding"} for c in calls):
                    return True
        return False

    def non_integer(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        """Is an expression never an integer or bool tensor (floating or complex)? What the int-to-float guards need
        (their runtime only casts integer and bool inputs). Floating by :meth:`is_float`; a mean, variance or
        standard deviation (``torch.mean/var/std`` and the methods: torch refuses integer inputs there, and numpy's
        give floats); arithmetic with such an operand (torch's promotion never lowers the category), a true
        division; a local name every binding of which is one."""
        if self.is_float(expr):
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply,
                                                                                cst.Divide, cst.Power)):
            return isinstance(expr.operator, cst.Divide) or self.non_integer(expr.left, seen) \
                or self.non_integer(expr.right, seen)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.non_integer(expr.expression, seen)
        if isinstance(expr, cst.Name) and self._order is not None:
            return self._every_binding(expr.value, seen, self.non_integer)
        if isinstance(expr, cst.Call):
            qual = self._resolve(expr.func)
            if qual in ("torch.mean", "torch.var", "torch.std"):
                return True
            return qual is None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _STATISTICS
        return False

    def _float_data(self, data, seen: frozenset[str]) -> bool:
        """Does ``torch.tensor(data)`` (no dtype) give a floating tensor? Data floating by the facts (``start / tau``,
        a float tensor: its dtype kept), or a list/tuple display (nested ones too) with a floating element and every
        other element floating or a number literal (``[scale, 1]``: torch infers the default float dtype when any
        element is a float; an element of unknown kind could be complex)."""
        if not isinstance(data, (cst.List, cst.Tuple)):
            return self.is_float(data, seen)
        floating = False
        for element in data.elements:
            if isinstance(element, cst.StarredElement):
                return False
            value = element.value
            if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
                value = value.expression
            if isinstance(value, cst.Integer):
                continue
            if isinstance(value, (cst.List, cst.Tuple)) and self._float_data(value, seen) \
                    or not isinstance(value, (cst.List, cst.Tuple)) and self.is_float(value, seen):
                floating = True
                continue
            if isinstance(value, (cst.List, cst.Tuple)) and all(
                    isinstance(e, cst.Element) and isinstance(e.value, cst.Integer) for e in value.elements):
                continue  # [[s, 1], [0, 1]]: a row of integer literals beside a floating one
            return False
        return floating

    def _call_float(self, call: cst.Call, seen: frozenset[str]) -> bool:
        func = call.func
        if _self_attr(func):  # self.fc(x): a layer of floating output, or one that keeps floats given a float
            calls = self._layers.get(func.attr.value, [])
            return bool(calls) and all(self._applied(self.layer_kind(c), call, seen) for c in calls)
        if isinstance(func, cst.Subscript) and _self_attr(func.value):  # self.fcs[i](x) of a list of float layers
            calls = self._layers.get(func.value.attr.value, [])
            return bool(calls) and all(self._resolve(c.func) == "torch.nn.ModuleList"
                                       and self._applied(_members_kind(c, self), call, seen) for c in calls)
        if self._container(call):  # tuple([conv(x) for conv in self.convs]): the same elements
            return self.is_float(call.args[0].value, seen)
        mapped = self._mapped_comprehension(call)
        if mapped is not None:  # map(lambda conv: conv(x), self.convs): [conv(x) for conv in self.convs]
            return self._comprehension_layers(mapped, seen)
        if isinstance(func, cst.Name) and self._resolve(func) is None and self._order is not None:
            kind = self._loop_layer(func.value)  # for blk in self.blocks: x = blk(x)
            if kind is not None:
                return self._applied(kind, call, seen)
        qual = self._resolve(func)
        if qual is None and self._resolve_any(func) in _KEEPING_FUNCTIONS and call.args \
                and call.args[0].keyword is None and not call.args[0].star:
            return self.is_float(call.args[0].value, seen)  # einops' repeat(self.cls_token, '() n d -> b n d', b=b)
        if qual is not None and any(a.keyword is not None and a.keyword.value == "dtype"
                                    and self._resolve(a.value) in _FLOAT_DTYPES for a in call.args):
            return qual.startswith("torch.") and qual.rpartition(".")[2] in _DTYPE_RESULTS  # arange(..., dtype=torch.float32)
        if qual is not None:
            keywords = {a.keyword.value for a in call.args if a.keyword is not None}
            if qual.rpartition(".")[0] in ("torch", "torch.special", "torch.nn.functional") \
                    and (qual.rpartition(".")[2] in self._float_only or qual.rpartition(".")[2] in _FLOAT_OR_RAISE):
                return True
            if qual in ("torch.tensor", "torch.as_tensor") and "dtype" not in keywords and call.args \
                    and call.args[0].keyword is None and not call.args[0].star:
                return self._float_data(call.args[0].value, seen)  # torch.tensor(start / tau), torch.tensor([s, 1])
            if qual in _FLOAT_FUNCTIONS:
                return "dtype" not in keywords and not any(a.star for a in call.args)
            if qual in _ONE_DTYPE_PRODUCTS and not any(a.star for a in call.args):
                # torch.einsum('b i d, b j d -> b i j', q, k): torch's matrix products take operands of one dtype
                # only (expected m1 and m2 to have the same dtype), so one floating operand makes the result floating
                operands = call.args[1:] if qual == "torch.einsum" else call.args
                return any(a.keyword is None and self.is_float(a.value, seen) for a in operands)
            if qual.rpartition(".")[0] in ("torch", "torch.nn.functional") \
                    and qual.rpartition(".")[2] in _SAME_DTYPE_FUNCTIONS and "dtype" not in keywords \
                    and call.args and call.args[0].keyword is None and not call.args[0].star:
                return self.is_float(call.args[0].value, seen)  # F.relu(self.bn(x)): the input's dtype
            if qual == "torch.arange":
                return "dtype" not in keywords and any(isinstance(a.value, cst.Float) for a in call.args)
            if qual in _JOINS and call.args and call.args[0].keyword is None \
                    and isinstance(call.args[0].value, (cst.List, cst.Tuple)) and call.args[0].value.elements:
                # torch.cat((emb.sin(), emb.cos()), dim=-1): every member float
                return all(not isinstance(e, cst.StarredElement) and self.is_float(e.value, seen)
                           for e in call.args[0].value.elements)
            return False
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _FLOAT_METHODS and not call.args:
                return True
            if method == "pop" and isinstance(func.value, cst.Name):  # skips.pop() of a list of floats
                return self.is_float(func.value, seen)
            if method in self._float_only and not call.args:
                return True  # x.exp(), x.sigmoid(): floating point whatever x holds
            if method in _FLOAT_OR_RAISE:
                return True  # x.softmax(-1): floating point, or torch raises
            if method in _SAME_DTYPE_METHODS and not any(a.keyword and a.keyword.value == "dtype" for a in call.args):
                return self.is_float(func.value, seen)
            if method == "to" and call.args and all(a.keyword is not None and a.keyword.value in ("device", "non_blocking")
                                                    for a in call.args):  # emb.to(device=t.device): a move
                return self.is_float(func.value, seen)
            if method in ("to", "type") and not any(a.star for a in call.args) and any(
                    (a is call.args[0] and a.keyword is None or a.keyword is not None and a.keyword.value == "dtype")
                    and self._resolve(a.value) in _FLOAT_DTYPES for a in call.args):
                return True  # coords.to(torch.float), x.type(torch.float32): the dtype named
        return False


# values a later statement may change in place without rebinding the name (``feats.append(idx)``): never read
# through their reaching binding (FloatFacts checks every use of a list)
MUTABLE_DISPLAYS = (cst.List, cst.ListComp, cst.Dict, cst.DictComp, cst.Set, cst.SetComp)


class FlowFloats(FloatFacts):
    """:class:`FloatFacts` read through reaching bindings: a name read in a top-level statement of straight-line code
    is the value its reaching binding gives (:meth:`_Order.reaching_binding`, tuple displays unpacked element by
    element), recursively (each step goes to an earlier statement, so it ends); elsewhere the name is read as
    FloatFacts reads it (every binding). PiT's ``cls_token, tokens = x[:, :1], x[:, 1:]``, each then rebound through
    a layer (``tokens = self.downsample(tokens)``), are floating at ``torch.cat((cls_token, tokens), 1)`` whatever
    ``x`` held; MobileViT's ``y = x.clone()`` of a parameter given to a convolution is. A list, dict or set display
    is not followed (a later statement may add to it: ``feats.append(idx)``): FloatFacts reads it, with every use."""

    def is_float(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.Name) and self._order is not None:
            reaching = self._order.reaching_binding(expr.value, expr) or self._order.dominating_binding(expr.value, expr)
            if reaching is not None and reaching[1] is not None and not isinstance(reaching[1], MUTABLE_DISPLAYS):
                return super().is_float(reaching[1], seen)
            if self._reaching_float(expr, seen):
                return True
        return super().is_float(expr, seen)

    def _reaching_float(self, name: cst.Name, seen: frozenset[str]) -> bool:
        """A read in a loop or branch of a top-level statement: floating when every value that may reach it is
        (:meth:`_Order.reaching_values`: the last top-level binding before the statement and every binding from there
        to the statement's end; DDPM's ``x = torch.cat((x, h.pop()), dim=1)`` in its up-sampling loop, after ``x =
        self.mid_block2(x, t)``). A read of the name inside those values whose reaching values are the same ones (the
        loop's own bindings) is taken as floating while they are checked: each of them runs after the first, a
        floating value, or after another of them."""
        found = self._order.reaching_values(name.value, name)
        if found is None:
            return False
        key = f"\0{name.value}@{found[0]}"
        if key in seen:
            return True
        values = found[1]
        return not any(isinstance(v, MUTABLE_DISPLAYS) for v in values) \
            and all(self.is_float(v, seen | {key}) for v in values)


# ------------------------------------------------------------------------------------------- bool tensors

# torch functions (and the same-named tensor methods) whose result is bool whatever their input
_BOOL_FUNCTIONS = frozenset({
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "logical_and", "logical_or",
    "logical_not", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
    "less_equal", "not_equal", "isin", "isclose"})
# any/all: bool, except for a uint8 input, whose result is uint8 (torch's own exception): bool when the input is
_BOOL_IF_BOOL = frozenset({"any", "all"})
# methods (and torch functions) that move, select or copy values: a bool receiver (first argument) gives a bool result
_BOOL_MOVES = frozenset({
    "view", "reshape", "permute", "transpose", "flatten", "unflatten", "unsqueeze", "squeeze", "contiguous", "expand",
    "expand_as", "repeat", "clone", "detach", "narrow", "flip", "roll", "t", "tril", "triu", "view_as", "reshape_as",
    "movedim", "swapaxes", "diagonal"})
_MASK_METHODS = frozenset({"masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"})


def mask_argument(call: cst.Call, resolve: Resolve):
    """The mask argument of a ``masked_fill``/``masked_select``/``masked_scatter`` call (torch refuses any mask but a
    bool one: "masked_fill_ only supports boolean masks"), or None. ``x.masked_fill(m, v)`` (first argument or
    ``mask=``) and ``torch.masked_fill(x, m, v)`` (second)."""
    qual = resolve(call.func)
    if qual is not None:
        if qual.rpartition(".")[0] != "torch" or qual.rpartition(".")[2] not in _MASK_METHODS:
            return None
        position = 1
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in _MASK_METHODS:
        position = 0
    else:
        return None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None
    keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "mask"), None)
    return keyword if keyword is not None else positional[position].value if len(positional) > position else None


class BoolFacts(_FunctionFacts):
    """Is an expression a bool tensor (or a Python bool) by construction? Read from the code of one function: a
    comparison, ``not``, ``&``/``|``/``^``/``~`` of bools, a function or method whose result is bool (``isnan``,
    ``logical_and``, ``eq``, ``.bool()``, ``.to(torch.bool)``; ``any``/``all`` of a bool), a constructor given
    ``dtype=torch.bool``, a move of a bool (``view``, ``unsqueeze``, ``triu``, an index, ``F.pad``), or a local name
    every assignment of which is one of these. A parameter, an attribute or anything else is unknown.

    Given the file's module-level functions (``functions``, :func:`module_functions`) and the enclosing class
    (``cls``): a call of such a function every return of which is bool by its own code (``create_causal_mask(i,
    j)``), and ``self.NAME(...)`` where the class's ``__init__`` binds ``self.NAME`` in its own top-level statements and
    every ``self.NAME = ...`` of the file is such a function or a conditional choice between them (x-transformers'
    ``self.create_causal_mask = onnx_create_causal_mask if onnxable else create_causal_mask``)."""

    def __init__(self, function, resolve: Resolve, functions: "dict[str, cst.FunctionDef] | None" = None,
                 cls: "cst.ClassDef | None" = None, module: "cst.Module | None" = None,
                 visiting: frozenset[str] = frozenset()) -> None:
        super().__init__(function, resolve)
        self._functions = functions or {}
        self._cls, self._module, self._visiting = cls, module, visiting

    def _bool_function(self, name: str) -> bool:
        """Does every return of the file's module-level function ``name`` give a bool (by its own code)?"""
        function = self._functions.get(name)
        if function is None or name in self._visiting:
            return False
        returns = own_nodes(function, cst.Return)
        if not returns or any(r.value is None for r in returns):
            return False
        inner = BoolFacts(function, self._resolve, self._functions, None, self._module, self._visiting | {name})
        return all(inner.is_bool(r.value) for r in returns)

    def _function_choice(self, expr) -> bool:
        """A module-level function of the file returning bool, or ``a if c else b`` of such."""
        if isinstance(expr, cst.IfExp):
            return self._function_choice(expr.body) and self._function_choice(expr.orelse)
        return isinstance(expr, cst.Name) and self._resolve(expr) is None and self._bool_function(expr.value)

    def _bool_attribute(self, name: str) -> bool:
        """``self.NAME`` holds a module-level function returning bool (see the class's docstring)."""
        if self._cls is None or self._module is None or not isinstance(self._cls.body, cst.IndentedBlock):
            return False
        init = next((s for s in self._cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                    None)
        if init is None or not isinstance(init.body, cst.IndentedBlock) or any(
                isinstance(s, cst.FunctionDef) and s.name.value == name
                for c in all_nodes(self._module, cst.ClassDef) if isinstance(c.body, cst.IndentedBlock)
                for s in c.body.body):
            return False  # a method of that name in some class of the file
        top = [line.targets for s in init.body.body if isinstance(s, cst.SimpleStatementLine)
               for line in s.body if isinstance(line, cst.Assign)]
        if not any(_self_attr(t.target) and t.target.attr.value == name for targets in top for t in targets):
            return False
        values = []
        for node in all_nodes(self._module, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, (cst.Tuple, cst.List)) and any(
                        _self_attr(e.value) and e.value.attr.value == name for e in target.elements):
                    return False
                if _self_attr(target) and target.attr.value == name:
                    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                        return False
                    values.append(node.value)
        return bool(values) and all(self._function_choice(v) for v in values)

    def is_bool(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.Comparison) or isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, cst.Not) \
                or isinstance(expr.operator, cst.BitInvert) and self.is_bool(expr.expression, seen)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) \
                and self.is_bool(expr.left, seen) and self.is_bool(expr.right, seen)
        if isinstance(expr, cst.Subscript):
            return self.is_bool(expr.value, seen)
        if isinstance(expr, cst.Name):
            return self._name_bool(expr.value, seen)
        if isinstance(expr, cst.Call):
            return self._call_bool(expr, seen)
        return False

    def _name_bool(self, name: str, seen: frozenset[str]) -> bool:
        return self._every_binding(name, seen, self.is_bool)

    def _call_bool(self, call: cst.Call, seen: frozenset[str]) -> bool:
        if any(a.star for a in call.args):
            return False
        qual = self._resolve(call.func)
        first = call.args[0].value if call.args and call.args[0].keyword is None else None
        if qual is None and isinstance(call.func, cst.Name) and call.func.value in self._functions \
                and call.func.value not in self._params and not self._binding_values(call.func.value):
            return self._bool_function(call.func.value)  # create_causal_mask(i, j, device): its returns'
        if qual is None and _self_attr(call.func) and self._bool_attribute(call.func.attr.value):
            return True
        if qual == "torch.nn.functional.pad":  # a constant pad keeps the dtype: a bool pads into a bool
            return first is not None and self.is_bool(first, seen)
        if qual is not None:
            module, _, name = qual.rpartition(".")
            if module != "torch":
                return False
            dtype = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"), None)
            if dtype is not None:
                return name in _DTYPE_RESULTS and self._resolve(dtype) == "torch.bool"
            if name in _BOOL_FUNCTIONS:
                return True
            return name in (_BOOL_IF_BOOL | _BOOL_MOVES) and first is not None and self.is_bool(first, seen)
        if not isinstance(call.func, cst.Attribute):
            return False
        method, receiver = call.func.attr.value, call.func.value
        if method == "bool" and not call.args:
            return True
        if method in ("to", "type"):  # x.to(torch.bool), x.to(dtype=torch.bool), x.type(torch.bool)
            dtype = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "dtype"), None)
            return dtype is not None and self._resolve(dtype) == "torch.bool"
        if method in _BOOL_FUNCTIONS:
            return True
        return method in (_BOOL_IF_BOOL | _BOOL_MOVES) and self.is_bool(receiver, seen)


# ------------------------------------------------------------------------------------------- rows never all -inf

# the torch functions whose result has no -inf row when their inputs are products of finite tensors
_PRODUCTS = frozenset({"torch.matmul", "torch.bmm", "torch.mm", "torch.einsum", "torch.mul", "torch.div",
                       "torch.baddbmm"})
# tensor methods that move or cast values without making new ones (a -inf row stays one, none appears)
_MOVES = frozenset({"view", "reshape", "permute", "transpose", "flatten", "unflatten", "unsqueeze", "squeeze",
                    "contiguous", "expand", "expand_as", "clone", "detach", "float", "double", "half", "type_as",
                    "view_as", "reshape_as", "t", "mT", "chunk", "split", "to"})
# layers and functions that hand their input on, or a copy of it with some values zeroed and the rest scaled (dropout):
# a row of all -inf comes out only where one went in (timm's and DINO's ``attn = self.attn_drop(attn)``)
_PASSING = frozenset(f"torch.nn.{name}" for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                                     "FeatureAlphaDropout", "Identity")) | frozenset(
    f"torch.nn.functional.{name}" for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"))
_NONFINITE = frozenset({"inf", "nan", "NINF", "Inf"})
_BOUNDED = frozenset({"softmax", "sigmoid", "tanh"})  # results in a bounded range: never -inf
# the _PRODUCTS that contract their operands (matrix products), not elementwise ones
_MATRIX_PRODUCTS = frozenset({"torch.matmul", "torch.bmm", "torch.mm", "torch.einsum", "torch.baddbmm"})
# tensors of zeros or ones: no -inf at all (sooftware/attentions' relative positions pad a score with
# pos_score.new_zeros(...) before a cat)
_FINITE_CONSTANTS = frozenset({"torch.zeros", "torch.ones", "torch.zeros_like", "torch.ones_like"})
_FINITE_CONSTANT_METHODS = frozenset({"new_zeros", "new_ones"})
# joins whose every row, along any axis, is a row of one member or a run of members' rows (never one element of each
# member, as stack's new axis would be): no row of all -inf where no member has one
_ROW_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate"})


def module_functions(module: "cst.Module | None") -> dict[str, cst.FunctionDef]:
    """The file's module-level plain functions (``def name(...)``, no decorator, not async), by name, whose name the
    file binds nowhere else (no other def, class, import or assignment of it, in any scope): what ``name(...)`` runs
    wherever the calling function binds no local of that name."""
    if module is None:
        return {}
    cached = _MODULE_FUNCTIONS.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    counts: dict[str, int] = {}
    for node in all_nodes(module, (cst.FunctionDef, cst.ClassDef)):
        counts[node.name.value] = counts.get(node.name.value, 0) + 1
    for node in all_nodes(module, cst.ImportAlias):
        bound = node.asname.name if node.asname is not None else node.name
        if isinstance(bound, cst.Name):
            counts[bound.value] = counts.get(bound.value, 0) + 2
    for node in all_nodes(module, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor,
                                   cst.AsName, cst.NamedExpr, cst.Global, cst.Nonlocal)):
        target = node.names if isinstance(node, (cst.Global, cst.Nonlocal)) else (
            node.name if isinstance(node, cst.AsName) else node.target)
        names = [n.name for n in target] if isinstance(node, (cst.Global, cst.Nonlocal)) else target_name_nodes(target)
        for name in names:
            counts[name.value] = counts.get(name.value, 0) + 2
    found = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef) and not s.decorators
             and s.asynchronous is None and counts.get(s.name.value) == 1}
    if len(_MODULE_FUNCTIONS) > 64:
        _MODULE_FUNCTIONS.clear()
    _MODULE_FUNCTIONS[id(module)] = (module, found)
    return found


_MODULE_FUNCTIONS: dict[int, tuple] = {}


def own_methods(cls: "cst.ClassDef | None") -> dict[str, cst.FunctionDef]:
    """The class's own plain methods (``def name(self, ...)``, no decorator), by name, that no code of the class
    assigns as ``self.<name>`` (an instance attribute would shadow the method): what ``self.name(...)`` runs in an
    instance of this class (a subclass that overrides it: the facts' callers skip classes the file subclasses)."""
    if cls is None or not isinstance(cls.body, cst.IndentedBlock):
        return {}
    defs = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    found = {d.name.value: d for d in defs if not d.decorators and d.asynchronous is None}
    counts: dict[str, int] = {}
    for d in defs:
        counts[d.name.value] = counts.get(d.name.value, 0) + 1
    return {name: d for name, d in found.items() if counts[name] == 1
            and not any(ref.assigned for m in defs for ref in _order(m).attribute_refs(name))}


class UnmaskedFacts:
    """Can the input of a softmax hold a row of all ``-inf`` (a fully masked query)? MindSpore 2.10's CPU softmax
    kernel gives the other rows wrong values then (``mindport.runtime.nn_functional.softmax`` writes it out); an
    input that cannot is MindSpore's own ``ops.softmax``. Read from the code of one function: the input is a layer's
    output (``self.fc(x)``), einops' ``rearrange``/``repeat`` of such a value, a product (``q @ k.transpose(-2, -1) * self.scale``, ``torch.einsum``, ``torch.matmul``,
    ``w * (int(c) ** -0.5)``) of anything, a softmax's or sigmoid's result, zeros or ones (``x.new_zeros(...)``), ``torch.cat`` of a display of such values, a value moved or cast (``.view``, ``.transpose``, ``.float()``, an index), a dropout of such a value
    (``self.attn_drop(attn)``, ``F.dropout``: zeroes and scales, makes no -inf), a sum of such values, or
    ``masked_fill`` of one with a finite fill (``-1e9``, ``-torch.finfo(x.dtype).max``), or a local name every
    assignment of which is one of these and never updated in place. A function that writes ``inf`` anywhere
    (``float("-inf")``, ``math.inf``), a parameter of the function (the caller may have masked it), an attribute
    (a buffer may hold ``-inf``), ``where`` or anything else keeps the runtime softmax. A call of an own method of
    the class (``methods``: :func:`own_methods`; LeViT's ``dots = self.apply_pos_bias(dots)``) is such a value when its
    arguments are and every return of the method is one, given that its parameters are (read in the method, which
    writes no ``inf`` and never rebinds or updates a parameter)."""

    def __init__(self, function: cst.FunctionDef | None, resolve: Resolve, layer_calls: dict[str, list[cst.Call]],
                 resolve_any: "Resolve | None" = None, causal: "dict[str, str] | None" = None,
                 methods: "dict[str, cst.FunctionDef] | None" = None, visiting: frozenset[str] = frozenset(),
                 functions: "dict[str, cst.FunctionDef] | None" = None):
        self._resolve = resolve
        self._methods = methods or {}
        self._functions = functions or {}  # the file's module-level functions (module_functions)
        self._visiting = visiting  # own methods being followed (a recursive method is not followed again)
        self._resolve_any = resolve_any or resolve  # any import's qualified name (einops.rearrange)
        self._layers = layer_calls
        self._causal = causal or {}  # the class's causal mask buffers (causal_buffers): self.NAME -> kind
        self._inf_fills: set[int] = set()  # masked_fill calls writing -inf through a causal mask (_causal_fill)
        self._order = _order(function) if function is not None else None
        self._params: set[str] = set()
        self._mutated: set[str] = set()
        self._nonfinite = function is None
        if function is None:
            return
        params = function.params
        self._params = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        self._params |= {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
        mutated, nonfinite = self._mutated, []

        class _Find(cst.CSTVisitor):
            def visit_Name(self, node):
                if node.value in _NONFINITE:
                    nonfinite.append(node)

            def visit_SimpleString(self, node):
                if "inf" in node.value.lower() or "nan" in node.value.lower():
                    nonfinite.append(node)

            def visit_AugAssign(self, node):
                if isinstance(node.target, cst.Name):
                    mutated.add(node.target.value)

            def visit_AssignTarget(self, node):
                base = node.target
                while isinstance(base, (cst.Subscript, cst.Attribute)):
                    base = base.value
                if isinstance(base, cst.Name) and base is not node.target:
                    mutated.add(base.value)  # x[mask] = ..., x.data = ...

            def visit_Call(self, node):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") \
                        and isinstance(func.value, cst.Name):
                    if func.attr.value == "masked_fill_":
                        fills.append((func.value.value, node))  # decided below: a finite fill keeps no -inf row
                    else:
                        mutated.add(func.value.value)  # x.add_(...)

        fills: list = []
        walk(function, _Find())
        self._nonfinite = bool(nonfinite)
        if nonfinite and self._causal:
            # -inf written only by masked_fill through a causal mask (nanoGPT's att.masked_fill(self.bias[:, :, :T,
            # :T] == 0, float('-inf'))): every row keeps its diagonal; the filled value is followed (_carries_inf)
            exempt: set[int] = set()
            for call in all_nodes(function, cst.Call):
                fill = self._causal_fill_value(call)
                if fill is not None:
                    self._inf_fills.add(id(call))
                    exempt.update(id(n) for n in all_nodes(fill, cst.CSTNode))
            self._nonfinite = any(id(n) not in exempt for n in nonfinite)
        for name, call in fills:
            value = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "value"] \
                or [a.value for a in call.args[1:2] if a.keyword is None and not a.star]
            if len(call.args) != 2 or len(value) != 1 or not self._finite_fill(value[0]):
                mutated.add(name)  # x.masked_fill_(mask, float('-inf')), or a fill not known finite

    def unmasked(self, expr, seen: frozenset[str] = frozenset(), dim: "int | None" = None) -> bool:
        """No row of all -inf can reach ``expr`` (a softmax's input; ``dim``: the softmax's, a literal int, when
        known)."""
        if self._nonfinite:
            return False
        return self._row_shifted(expr, dim) or self._value(expr, seen)

    def _row_shifted(self, expr, dim: "int | None") -> bool:
        """``s - s.amax(dim=d, keepdim=True)`` over the softmax's ``dim`` (``.detach()``-ed or not; ``torch.amax``,
        ``s.max(d, keepdim=True).values`` / ``[0]``), given as the input or as the plain binding of the name read there
        that dominates the read (:meth:`_Order.dominating_binding`; a name never updated in place): each row along
        ``dim`` holds a 0 at its maximum where that is finite, NaN throughout where the row was all -inf, so no row is
        all -inf whatever ``s`` holds. Not followed through moves (a transpose makes columns rows)."""
        if dim is None or self._order is None:
            return False
        if isinstance(expr, cst.Name):
            if expr.value in self._mutated:
                return False
            found = self._order.dominating_binding(expr.value, expr)
            if found is None:
                return False
            expr = found[1]
        return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract) \
            and isinstance(expr.left, cst.Name) and self._row_max(expr.right, expr.left.value, dim)

    def _row_max(self, expr, name: str, dim: int) -> bool:
        """``name.amax(dim=dim, keepdim=True)``, ``torch.amax(name, dim, keepdim=True)``, ``name.max(dim,
        keepdim=True).values`` / ``[0]`` (``torch.max`` alike), each maybe ``.detach()``-ed: the maximum of each row
        of ``name`` along ``dim``, kept as an axis of 1."""
        while isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "detach" and self._resolve(expr.func) is None:
            expr = expr.func.value
        kinds = ("amax",)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "values":
            expr, kinds = expr.value, ("max",)
        elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, cst.Integer) and expr.slice[0].slice.value.value == "0":
            expr, kinds = expr.value, ("max",)
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
            return False
        func, args = expr.func, list(expr.args)
        qual = self._resolve(func)
        if qual is None and isinstance(func, cst.Attribute) and func.attr.value in kinds:
            receiver = func.value
        elif qual in {f"torch.{k}" for k in kinds} and args and args[0].keyword is None:
            receiver, args = args[0].value, args[1:]
        else:
            return False
        if not (isinstance(receiver, cst.Name) and receiver.value == name):
            return False
        plain = [a.value for a in args if a.keyword is None]
        named = {a.keyword.value: a.value for a in args if a.keyword is not None}
        if len(plain) > 2 or set(named) - {"dim", "keepdim"} or len(plain) + len(named) != 2:
            return False
        given_dim = plain[0] if plain else named.get("dim")
        keep = plain[1] if len(plain) > 1 else named.get("keepdim")
        return _literal_int(given_dim) == dim and isinstance(keep, cst.Name) and keep.value == "True"

    def _value(self, expr, seen) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.Name):
            if expr.value in seen:
                return True
            if expr.value in self._params or expr.value in self._mutated:
                return False
            bindings = self._order.bindings(expr.value)
            unpacked = self._order.unpacked(expr.value)
            if not bindings or sum(v is None for v in bindings) != len(unpacked):
                return False  # a binding by a loop, a with, a starred or nested target ...
            inner = seen | {expr.value}
            return all(self._value(v, inner) for v in bindings if v is not None) \
                and all(self._elements(v, inner) for v in unpacked)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._value(expr.expression, seen) and not (isinstance(expr.operator, cst.Minus)
                                                               and self._carries_inf(expr.expression))
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, (cst.Multiply, cst.Divide, cst.MatrixMultiply)):
                matmul = isinstance(expr.operator, cst.MatrixMultiply)
                return self._factor(expr.left, seen, matmul) and self._factor(expr.right, seen, matmul)
            if isinstance(expr.operator, cst.Add):  # scores + self.mask[:, :, :T, :T] (llama2.c): an additive mask
                return (self._value(expr.left, seen) or self._additive(expr.left)) \
                    and (self._value(expr.right, seen) or self._additive(expr.right))
            if isinstance(expr.operator, cst.Subtract):
                return self._value(expr.left, seen) and self._value(expr.right, seen) \
                    and not self._carries_inf(expr.right)
            return False
        if isinstance(expr, cst.Subscript):
            return self._value(expr.value, seen)
        if isinstance(expr, cst.Call):
            return self._call(expr, seen)
        return False

    def _elements(self, expr, seen) -> bool:
        """No row of all -inf in any element of a value unpacked into names (``q, k, v = value``): a display of
        such values; a comprehension (one ``for``) or ``map(lambda t: ..., iterable)`` whose iterable's elements are
        such values and whose element expression is one given that (``[rearrange(t, ...) for t in qkv]``, lucidrains'
        ``map(lambda t: rearrange(t, ...), (q, k, v))``); or a tensor (or a tuple of tensors) that is one
        (``self.to_qkv(x).chunk(3, dim=-1)``, ``qkv.permute(2, 0, 3, 1, 4)``): its parts along any axis are."""
        if isinstance(expr, (cst.Tuple, cst.List)):
            return all(not isinstance(e, cst.StarredElement) and self._value(e.value, seen) for e in expr.elements)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            loop = expr.for_in
            if loop.inner_for_in is not None or loop.asynchronous is not None \
                    or not isinstance(loop.target, cst.Name) or not self._elements(loop.iter, seen):
                return False
            return self._value(expr.elt, seen | {loop.target.value})
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "map" \
                and self._resolve(expr.func) is None and len(expr.args) == 2 \
                and all(a.keyword is None and not a.star for a in expr.args) \
                and isinstance(expr.args[0].value, cst.Lambda):
            fn = expr.args[0].value
            params = fn.params
            if len(params.params) != 1 or params.posonly_params or params.kwonly_params \
                    or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None \
                    or params.params[0].default is not None:
                return False
            return self._elements(expr.args[1].value, seen) \
                and self._value(fn.body, seen | {params.params[0].name.value})
        return self._value(expr, seen)

    def _factor(self, expr, seen, matmul: bool = False) -> bool:
        """An operand of a product: any name or attribute not updated in place, a product of those, and for a matrix
        product (``matmul``: ``@``, ``torch.matmul``...) a sum or difference of those too (a masking is an addition
        or a fill before the softmax, which :meth:`_value` follows; a product of tensors makes no row of all
        -inf)."""
        if isinstance(expr, cst.Attribute):
            return True
        if isinstance(expr, cst.Name):
            return expr.value not in self._mutated and not self._carries_inf(expr)
        if isinstance(expr, cst.Subscript):
            return self._factor(expr.value, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide, cst.Power,
                                                                                cst.MatrixMultiply)):
            return self._factor(expr.left, seen) and self._factor(expr.right, seen)  # (int(c) ** -0.5)
        if matmul and isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
            # Transformer-XL's (query + self.u_bias) @ key: a matrix product's operand, as its names are (a masking
            # adds to the scores, never to an operand a product contracts); an elementwise product's keeps _value's
            return self._factor(expr.left, seen, matmul) and self._factor(expr.right, seen, matmul)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("int", "float") \
                and self._resolve(expr.func) is None:
            return True
        if isinstance(expr, cst.Call) and self._resolve(expr.func) is None \
                and (self._resolve_any(expr.func) or "").startswith("math."):
            return True  # (1.0 / math.sqrt(k.size(-1))): a Python number (math raises where it would not be finite)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _MOVES \
                and self._resolve(expr.func) is None:
            return self._factor(expr.func.value, seen, matmul)  # k.transpose(-2, -1)
        return self._value(expr, seen)

    def _call(self, call: cst.Call, seen) -> bool:
        func = call.func
        args = [a for a in call.args if a.keyword is None and not a.star]
        if _self_attr(func) and func.attr.value not in self._layers and func.attr.value in self._methods:
            return self._own_method(call, seen)
        if isinstance(func, cst.Name) and func.value in self._functions and self._resolve(func) is None \
                and func.value not in self._params and not self._order.bindings(func.value):
            return self._own_function(call, seen)
        if _self_attr(func):
            calls = self._layers.get(func.attr.value, [])
            if calls and all(self._resolve(c.func) in _PASSING for c in calls):  # self.attn_drop(attn): its input's
                return len(call.args) == 1 and len(args) == 1 and self._value(args[0].value, seen)
            return bool(calls) and all(self._fresh_layer(c) for c in calls)
        qual = self._resolve(func)
        if qual is not None:
            if qual in _PASSING and args:  # F.dropout(attn, p, training): its input's rows
                return self._value(args[0].value, seen)
            if qual.rpartition(".")[2] in _BOUNDED and qual.rpartition(".")[0] in ("torch", "torch.nn.functional"):
                return True  # a softmax's or sigmoid's result: no -inf at all
            if qual in _PRODUCTS:
                operands = args[1:] if qual == "torch.einsum" else args
                matmul = qual in _MATRIX_PRODUCTS
                return all(self._factor(a.value, seen, matmul) for a in operands)
            if qual in _FINITE_CONSTANTS:
                return True
            if qual in _ROW_JOINS and args and call.args[0] is args[0] \
                    and isinstance(args[0].value, (cst.List, cst.Tuple)):
                return self._elements(args[0].value, seen)  # torch.cat([zeros, pos_score], dim=-1)
            if qual == "torch.masked_fill" and len(args) == 3:
                return self._value(args[0].value, seen) \
                    and (self._finite_fill(args[2].value) or id(call) in self._inf_fills)
            return False
        if self._resolve_any(func) in _KEEPING_FUNCTIONS and args and call.args[0] is args[0]:
            return self._value(args[0].value, seen)  # einops.rearrange(w_, 'b i j -> b j i'): values moved
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _MOVES:
                return self._value(func.value, seen)
            if method in _BOUNDED or method in _FINITE_CONSTANT_METHODS:
                return True
            if method == "masked_fill" and len(call.args) == 2:
                return self._value(func.value, seen) \
                    and (self._finite_fill(call.args[1].value) or id(call) in self._inf_fills)
        return False

    def _fresh_layer(self, build: cst.Call, depth: int = 0) -> bool:
        """A layer whose output is taken as a layer's (``self.fc(x)``): a torch layer of :data:`FRESH_LAYERS` (or
        :data:`_FLOAT_LAYERS`), or an ``nn.Sequential`` of listed members, built directly or by a module-level factory
        of the file (:func:`_factory_call` of :func:`module_functions`: CrossFormer's ``DynamicPositionBias(dim)``),
        whose last member that does more than pass or move values (dropout, ``nn.Identity``, einops' ``Rearrange``)
        is such a layer: the sequence's output is that member's, moved."""
        qual = self._resolve(build.func)
        if qual in _FLOAT_LAYERS | FRESH_LAYERS:
            return True
        if qual is None and isinstance(build.func, cst.Name) and build.func.value in self._functions:
            made = _factory_call(self._functions[build.func.value])
            if made is None:
                return False
            build, qual = made, self._resolve(made.func)
        if qual != "torch.nn.Sequential" or depth > 8 or any(a.star or a.keyword is not None for a in build.args):
            return False
        for member in reversed(build.args):
            value = member.value
            if not isinstance(value, cst.Call):
                return False
            if self._resolve(value.func) in _PASSING or self._resolve_any(value.func) == "einops.layers.torch.Rearrange":
                continue
            return self._fresh_layer(value, depth + 1)
        return False

    def _own_method(self, call: cst.Call, seen) -> bool:
        """``self.apply_pos_bias(dots)``: a call of an own method of the class (:meth:`_followed`, ``self`` aside)."""
        name = call.func.attr.value
        method = self._methods[name]
        params = method.params.params
        if not params or params[0].name.value != "self":
            return False
        return self._followed(call, method, name, params[1:], seen, self._layers, self._causal, self._methods)

    def _own_function(self, call: cst.Call, seen) -> bool:
        """``add_decomposed_rel_pos(attn, q, self.rel_pos_h, ...)``: a call of a module-level function of the file
        (:func:`module_functions`; :meth:`_followed`, with no class layers, masks or methods of its own)."""
        name = call.func.value
        function = self._functions[name]
        return self._followed(call, function, f"<function>{name}", function.params.params, seen, {}, {}, {})

    def _followed(self, call: cst.Call, function: cst.FunctionDef, key: str, params, seen, layers, causal,
                  methods) -> bool:
        """Every return of the called function is a value with no row of all -inf given the parameters its call hands
        such values (each argument given positionally to a plain parameter: no default, no ``*``): those are assumed
        (a parameter counts as such while the function never updates it in place or unpacks into it, and every
        value it is rebound to is one given the same: sooftware/attentions' ``pos_score = padded[:, :,
        1:].view_as(pos_score)``); a parameter handed anything else stays a parameter of unknown rows, harmless where
        it is only a product's operand (segment-anything's ``torch.einsum("bhwc,hkc->bhwk", r_q, Rh)`` of ``Rh =
        get_rel_pos(q_h, k_h, rel_pos_h)``), read as the value it is not one. A function that writes ``inf``, or
        one being followed already (recursion), is not one."""
        if key in self._visiting:
            return False
        signature = function.params
        if signature.posonly_params or signature.kwonly_params or isinstance(signature.star_arg, cst.Param) \
                or signature.star_kwarg is not None or any(p.default is not None for p in signature.params):
            return False
        names = [p.name.value for p in params]
        if len(call.args) != len(names) or any(a.star or a.keyword is not None for a in call.args):
            return False
        given = [n for n, a in zip(names, call.args) if self._value(a.value, seen)]
        inner = UnmaskedFacts(function, self._resolve, layers, self._resolve_any, causal, methods,
                              self._visiting | {key}, self._functions)
        order = inner._order
        if inner._nonfinite or any(n in inner._mutated or order.unpacked(n) for n in given):
            return False
        for n in given:  # a parameter rebound (sooftware/attentions' pos_score = padded[:, :, 1:].view_as(pos_score))
            bindings = order.bindings(n)  # keeps the reading only when every value it takes is one given the others
            if any(v is None for v in bindings) \
                    or not all(inner._value(v, frozenset(given)) for v in bindings):
                return False
        returns = own_nodes(function, cst.Return)
        if not returns or own_nodes(function, cst.Yield) or any(r.value is None for r in returns):
            return False
        return all(inner._value(r.value, frozenset(given)) for r in returns)

    # -- causal masks: every row keeps its diagonal, so no row is all -inf
    def _causal_fill_value(self, call: cst.Call):
        """The -inf fill of ``x.masked_fill(MASK, float('-inf'))`` / ``torch.masked_fill(x, MASK, -math.inf)`` whose
        MASK is a causal mask (:meth:`_causal_mask`), or None."""
        if any(a.star for a in call.args):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "masked_fill" and self._resolve(func) is None:
            named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            plain = [a.value for a in call.args if a.keyword is None]
            mask = plain[0] if plain else named.get("mask")
            value = plain[1] if len(plain) > 1 else named.get("value")
        elif self._resolve(func) == "torch.masked_fill" and len(call.args) == 3 \
                and all(a.keyword is None for a in call.args):
            mask, value = call.args[1].value, call.args[2].value
        else:
            return None
        return value if mask is not None and value is not None and _neg_inf(value) \
            and self._causal_mask(mask, frozenset()) else None

    def _buffer_kind(self, expr) -> str | None:
        """The causal kind of ``self.NAME[<the top-left square>]`` (or the whole buffer), else None."""
        if _self_attr(expr):
            return self._causal.get(expr.attr.value)
        if isinstance(expr, cst.Subscript) and _self_attr(expr.value) and _causal_slice(expr):
            return self._causal.get(expr.value.attr.value)
        return None

    def _causal_mask(self, expr, seen: frozenset[str]) -> bool:
        """True above the diagonal only: ``self.bias[:, :, :T, :T] == 0`` of a ``lower`` buffer, the square of an
        ``upper`` one (or its ``.bool()``), or a local name every binding of which is one."""
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 \
                and isinstance(expr.comparisons[0].operator, cst.Equal):
            zero = expr.comparisons[0].comparator
            return isinstance(zero, (cst.Integer, cst.Float)) and float(zero.value) == 0 \
                and self._buffer_kind(expr.left) == "lower"
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "bool" \
                and not expr.args:
            return self._buffer_kind(expr.func.value) == "upper"
        if isinstance(expr, cst.Name) and expr.value not in self._params and expr.value not in self._mutated \
                and expr.value not in seen and self._order is not None:
            bindings = self._order.bindings(expr.value)
            return bool(bindings) and all(v is not None and self._causal_mask(v, seen | {expr.value})
                                          for v in bindings)
        return self._buffer_kind(expr) == "upper"

    def _additive(self, expr) -> bool:
        """``self.mask[:, :, :T, :T]`` of an ``additive`` buffer (0 on and below the diagonal, -inf above)."""
        return self._buffer_kind(expr) == "additive"

    def _carries_inf(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        """May ``expr`` hold the -inf a causal mask wrote (a causal fill or an additive buffer in it, or in the
        bindings of a name it reads)? A product or negation of it could make a row of -inf (or +inf)."""
        if not self._causal:
            return False
        nodes = all_nodes(expr, cst.CSTNode)
        labels = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)} \
            | {id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
        for node in nodes:
            if id(node) in labels:  # self.qk, dim=: not names read
                continue
            if isinstance(node, cst.Call) and id(node) in self._inf_fills:
                return True
            if isinstance(node, (cst.Attribute, cst.Subscript)) and self._buffer_kind(node) == "additive":
                return True
            if isinstance(node, cst.Name) and node.value not in seen and self._order is not None:
                inner = seen | {node.value}
                if any(v is not None and self._carries_inf(v, inner)
                       for v in self._order.bindings(node.value) + self._order.unpacked(node.value)):
                    return True
        return False

    def _finite_fill(self, expr) -> bool:
        """A fill value that is a finite number: ``-1e9``, ``0``, ``-torch.finfo(x.dtype).max``,
        ``torch.finfo(t).min``, or a local name bound only to one (``mask_value = -torch.finfo(sim.dtype).max``)."""
        if isinstance(expr, cst.Name) and expr.value not in self._params and expr.value not in self._mutated:
            bindings = self._order.bindings(expr.value)
            return bool(bindings) and all(v is not None and _finite_number(v) for v in bindings)
        return _finite_number(expr)


def _finite_number(expr) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    return isinstance(expr, cst.Attribute) and expr.attr.value in ("max", "min") \
        and isinstance(expr.value, cst.Call) and isinstance(expr.value.func, cst.Attribute) \
        and expr.value.func.attr.value in ("finfo", "iinfo")


# ------------------------------------------------------------------------------------------- causal mask buffers

# what a causal buffer holds (causal_buffers): ``lower`` is 1 on and below the diagonal and 0 above it
# (``torch.tril(torch.ones(n, n))``: masked where ``== 0``); ``upper`` is true strictly above it and false on and below
# (``torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)``: the mask itself); ``additive`` is 0 on and below it
# and -inf above (``torch.triu(torch.full((n, n), float('-inf')), diagonal=1)``: added to the scores)
_CAUSAL_KINDS = ("lower", "upper", "additive")


def _neg_inf(expr) -> bool:
    """``float('-inf')``, ``-float('inf')``, ``-math.inf``, ``-torch.inf``, ``-np.inf``."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = expr.expression
        if isinstance(inner, cst.Attribute) and inner.attr.value == "inf" \
                and isinstance(inner.value, cst.Name) and inner.value.value in ("math", "torch", "np", "numpy"):
            return True
        return _float_call(inner) in ("inf", "infinity")
    return _float_call(expr) in ("-inf", "-infinity")


def _float_call(expr) -> str | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "float" \
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star \
            and isinstance(expr.args[0].value, cst.SimpleString):
        return expr.args[0].value.evaluated_value.strip().lower()
    return None


def _same_code(a, b) -> bool:
    return a is not None and b is not None and a.deep_equals(b)


def _square(args) -> bool:
    """A size given as ``(n, n)``, ``n, n`` or ``(1, 1, n, n)``: its last two the same expression, any other 1."""
    plain = [a for a in args if a.keyword is None]
    if any(a.star for a in plain):
        return False
    sizes = [a.value for a in plain]
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in sizes[0].elements):
            return False
        sizes = [e.value for e in sizes[0].elements]
    return len(sizes) >= 2 and _same_code(sizes[-1], sizes[-2]) \
        and all(isinstance(s, cst.Integer) and s.value == "1" for s in sizes[:-2])


def _diagonal(call: cst.Call, first: int) -> int | None:
    """The literal ``diagonal`` of a tril/triu call (positional after ``first`` arguments, or by keyword), 0 when not
    given, None when not a literal."""
    given = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "diagonal"] \
        or [a.value for a in call.args[first:first + 1] if a.keyword is None]
    if not given:
        return 0
    value = given[0]
    sign = 1
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        sign, value = -1, value.expression
    return sign * int(value.value) if isinstance(value, cst.Integer) else None


class _CausalReader:
    """The kind (``_CAUSAL_KINDS``) of a value built in ``__init__``, or None: ``tril``/``triu`` (function or method,
    in place or not) of a square ``ones`` (a ``lower``/``upper`` mask) or a square ``full`` of -inf, or an ``empty``
    filled with -inf (``additive``), then moved by ``view``/``reshape`` to ``(1, 1, n, n)``, ``.bool()`` or
    ``.float()``; a local name read at the statement it is bound at the latest before, in the same block."""

    def __init__(self, resolve: Resolve, block: list, index: int) -> None:
        self._resolve, self._block, self._index = resolve, block, index

    def kind(self, expr, index: int | None = None) -> str | None:
        index = self._index if index is None else index
        if isinstance(expr, cst.Name):
            for i in range(index - 1, -1, -1):
                stmt = self._block[i]
                for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                            and isinstance(small.targets[0].target, cst.Name) \
                            and small.targets[0].target.value == expr.value:
                        return self.kind(small.value, i)
                if not isinstance(stmt, cst.SimpleStatementLine) and _binds(stmt, expr.value):
                    return None
            return None
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
            return None
        qual = self._resolve(expr.func)
        if qual in ("torch.tril", "torch.triu") and expr.args and expr.args[0].keyword is None:
            return self._band(qual.rpartition(".")[2], self.kind(expr.args[0].value, index), _diagonal(expr, 1))
        if qual in ("torch.ones", "torch.full", "torch.empty"):
            if qual == "torch.full":
                plain = [a for a in expr.args if a.keyword is None]
                fill = [a.value for a in expr.args if a.keyword is not None and a.keyword.value == "fill_value"] \
                    or [a.value for a in plain[1:2]]
                return "full-inf" if len(plain) >= 1 and fill and _neg_inf(fill[0]) and _square(plain[:1]) else None
            if any(a.keyword is not None and a.keyword.value not in ("dtype", "device") for a in expr.args):
                return None
            return ("ones" if qual == "torch.ones" else "empty") if _square(expr.args) else None
        if qual is not None or not isinstance(expr.func, cst.Attribute):
            return None
        method, inner = expr.func.attr.value, self.kind(expr.func.value, index)
        if method in ("tril", "triu", "tril_", "triu_"):
            return self._band(method.rstrip("_"), inner, _diagonal(expr, 0))
        if method == "fill_" and inner == "empty" and len(expr.args) == 1 and _neg_inf(expr.args[0].value):
            return "full-inf"
        if method in ("view", "reshape") and inner in _CAUSAL_KINDS and _square(expr.args):
            return inner
        if method in ("bool", "float") and not expr.args and inner in ("lower", "upper"):
            return inner
        return None

    @staticmethod
    def _band(which: str, inner: str | None, diagonal: int | None) -> str | None:
        if diagonal is None:
            return None
        if which == "tril" and inner == "ones" and diagonal == 0:
            return "lower"
        if which == "triu" and inner == "ones" and diagonal >= 1:
            return "upper"
        if which == "triu" and inner == "full-inf" and diagonal >= 1:
            return "additive"
        return None


def causal_buffers(cls: cst.ClassDef, resolve: Resolve) -> dict[str, str]:
    """``self.register_buffer("NAME", value)`` in ``__init__`` whose value is a causal mask (``_CausalReader``:
    nanoGPT's ``torch.tril(torch.ones(n, n)).view(1, 1, n, n)``, llama2.c's ``torch.triu(torch.full((1, 1, n, n),
    float("-inf")), diagonal=1)``) -> its kind, for a NAME the class binds nowhere else and writes nowhere in place
    (the caller leaves out a class subclassed in the file and names read on other objects)."""
    if not isinstance(cls.body, cst.IndentedBlock):
        return {}
    found: dict[str, str] = {}
    bound: dict[str, int] = {}
    written: set[str] = set()
    for node in all_nodes(cls, cst.CSTNode):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "register_buffer" and node.args \
                    and isinstance(node.args[0].value, cst.SimpleString):
                name = node.args[0].value.evaluated_value
                bound[name] = bound.get(name, 0) + 1
            elif node.func.attr.value.endswith("_") and _self_attr(node.func.value):
                written.add(node.func.value.attr.value)  # self.mask.fill_(...)
            elif node.func.attr.value in ("setattr", "__setattr__", "register_parameter"):
                return {}
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr",
                                                                                                   "delattr"):
            return {}
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            target = node.target
            while isinstance(target, cst.Subscript):
                target = target.value
            for attr in all_nodes(target, cst.Attribute) if not _self_attr(target) else (target,):
                if _self_attr(attr):
                    bound[attr.attr.value] = bound.get(attr.attr.value, 0) + 1
    inits = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
    for init in inits:
        for block in all_nodes(init, cst.IndentedBlock):
            for index, stmt in enumerate(block.body):
                if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                        or not isinstance(stmt.body[0], cst.Expr):
                    continue
                call = stmt.body[0].value
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "register_buffer"
                        and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
                        and len(call.args) >= 2 and isinstance(call.args[0].value, cst.SimpleString)
                        and call.args[1].keyword is None and not call.args[1].star):
                    continue
                name = call.args[0].value.evaluated_value
                kind = _CausalReader(resolve, list(block.body), index).kind(call.args[1].value)
                if kind in _CAUSAL_KINDS and bound.get(name) == 1 and name not in written:
                    found[name] = kind
    return found


def _causal_slice(subscript) -> bool:
    """``B[:, :, :T, :T]``, ``B[:n, :n]``: full slices, then the last two from the start to one bound (or both
    whole): the top-left square of the buffer, whose diagonal is the buffer's."""
    elements = subscript.slice
    if len(elements) < 2 or any(not isinstance(e.slice, cst.Slice) for e in elements):
        return False
    for e in elements[:-2]:
        s = e.slice
        if s.lower is not None or s.upper is not None or s.step is not None:
            return False
    a, b = elements[-2].slice, elements[-1].slice
    if a.lower is not None or b.lower is not None or a.step is not None or b.step is not None:
        return False
    return (a.upper is None and b.upper is None) or _same_code(a.upper, b.upper)


# ------------------------------------------------------------------------------------------- layer classes as values

class ValueFlow:
    """Where a layer class passed as a value (``act_layer=nn.GELU``, the default of a parameter or a keyword of a call
    of a class or function of the file) is called, and how: :meth:`call_shape` follows the parameter through the
    function's body (and on into the parameters of the file's classes and functions it is handed to,
    ``Mlp(act_layer=act_layer)``) and gives the one shape every call has, ``(positional count, keyword names)``, or
    None when the parameter is used any other way (compared, stored, handed elsewhere, called with ``*args``, in a
    nested function) or called with different shapes. A value whose every call is known can be built by MindSpore's
    own layer with its arguments bound statically."""

    def __init__(self, module: cst.Module) -> None:
        self.functions: dict[str, cst.FunctionDef] = {}  # module-level function name / class name -> the callee
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                self.functions[stmt.name.value] = stmt
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                init = [s for s in stmt.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
                if len(init) == 1:
                    self.functions[stmt.name.value] = init[0]
        self._memo: dict[tuple[int, str], object] = {}
        self._module = module
        self._positions: dict[int, tuple] | None = None  # a value -> where it is bound (value_shape)

    def callee(self, func) -> cst.FunctionDef | None:
        return self.functions.get(func.value) if isinstance(func, cst.Name) else None

    def call_shape(self, function: cst.FunctionDef, param: str, depth: int = 0):
        key = (id(function), param)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle: unknown
        shape = self._shape(function, param, depth) if depth < 6 else None
        self._memo[key] = shape
        return shape

    def _shape(self, function: cst.FunctionDef, param: str, depth: int):
        params = function.params
        if param not in {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}:
            return None
        shapes: set = set()
        uses = _param_uses(function, param)
        if uses is None or not uses:
            return None
        for parent, node, call in uses:
            if isinstance(parent, cst.Call) and parent.func is node:
                if any(a.star for a in parent.args):
                    return None
                positional = sum(1 for a in parent.args if a.keyword is None)
                if any(a.keyword is None for a in parent.args[positional:]):
                    return None
                shapes.add((positional, tuple(a.keyword.value for a in parent.args if a.keyword is not None)))
                continue
            if isinstance(parent, cst.Arg) and not parent.star and isinstance(call, cst.Call):
                target = self.callee(call.func)
                if target is None:
                    return None
                name = parent.keyword.value if parent.keyword is not None else _positional_param(target, call, parent)
                if name is None:
                    return None
                shape = self.call_shape(target, name, depth + 1)
                if shape is None:
                    return None
                shapes.add(shape)
                continue
            return None
        return next(iter(shapes)) if len(shapes) == 1 else None


    def value_shape(self, node: cst.CSTNode, depth: int = 0):
        """The one call shape of a value bound somewhere other than a parameter (``call_shape`` does those), or None:
        ``self.act = F.relu`` (or a branch of ``F.silu if c else F.relu``) in a method of a class that is not
        subclassed in the file, every read of ``.act`` in the file being a call ``self.act(...)`` in that class;
        ``act = F.relu`` in a function (bound once), every read a call or handed to a parameter of the file's classes
        and functions (``call_shape``); ``return F.relu`` in a module-level function read only by calls each bound
        that way (``self.activation = _get_activation_fn(name)``)."""
        if self._positions is None:
            self._positions = _value_positions(self._module)
        position = self._positions.get(id(node))
        if position is None or depth > 6:
            return None
        key = (id(node), "value")
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle: unknown
        kind, owner, name = position
        if kind == "attr":
            shape = _attribute_shape(self._module, owner, name)
        elif kind == "local":
            shape = self._local_shape(owner, name, depth)
        else:
            shape = self._return_shape(name, depth)
        self._memo[key] = shape
        return shape

    def _local_shape(self, function: cst.FunctionDef, name: str, depth: int):
        shapes: set = set()
        bindings, bad = [0], [False]

        def read(stack: list, node: cst.Name) -> None:
            parent = stack[-1]
            if isinstance(parent, cst.AssignTarget):
                bindings[0] += 1
            elif isinstance(parent, (cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr, cst.AnnAssign,
                                     cst.Tuple, cst.List, cst.StarredElement)):
                bad[0] = True
            elif isinstance(parent, cst.Arg) and parent.keyword is node:
                pass
            else:
                shape = _call_use_shape(parent, node)
                if shape is None and isinstance(parent, cst.Arg) and not parent.star and len(stack) > 1 \
                        and isinstance(stack[-2], cst.Call):
                    call = stack[-2]
                    target = self.callee(call.func)
                    param = None if target is None else (
                        parent.keyword.value if parent.keyword is not None else _positional_param(target, call, parent))
                    shape = None if param is None else self.call_shape(target, param, depth + 1)
                if shape is None:
                    bad[0] = True
                else:
                    shapes.add(shape)

        _name_reads(function, {name}, lambda _: bad.__setitem__(0, True), read)
        if bad[0] or bindings[0] != 1 or len(shapes) != 1:
            return None
        return next(iter(shapes))

    def _return_shape(self, name: str, depth: int):
        function = self.functions.get(name)
        if function is None or self._positions is None:
            return None
        shapes: set = set()
        ok = [True]

        class _Find(cst.CSTVisitor):
            def __init__(self):
                self.stack: list = []

            def on_visit(self, node):
                if isinstance(node, cst.Name) and node.value == name and node is not function.name:
                    parent = self.stack[-1] if self.stack else None
                    if not (isinstance(parent, cst.Call) and parent.func is node):
                        ok[0] = False
                    else:
                        shapes.add(flow.value_shape(parent, depth + 1))
                self.stack.append(node)
                return True

            def on_leave(self, original_node):
                if self.stack and self.stack[-1] is original_node:
                    self.stack.pop()

        flow = self
        walk(self._module, _Find())
        if not ok[0] or len(shapes) != 1 or None in shapes:
            return None
        return next(iter(shapes))

    def only_called(self, function: cst.FunctionDef, param: str, depth: int = 0) -> bool:
        """Every use of the parameter (and of the parameters of the file's classes and functions it is handed to) is a
        call, with any arguments, or a test against None (``if norm_layer is not None``): a function taking torch's
        parameters (a native factory) does the job of the class there, where no call shape is known."""
        key = (id(function), param, "called")
        if key in self._memo:
            return bool(self._memo[key])
        self._memo[key] = False  # a cycle: not shown
        params = function.params
        uses = _param_uses(function, param) if depth < 6 and param in {
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} else None
        called = bool(uses) and all(self._called_use(parent, node, call, depth) for parent, node, call in uses)
        self._memo[key] = called
        return called

    def _called_use(self, parent, node, call, depth: int) -> bool:
        if isinstance(parent, cst.Call) and parent.func is node:
            return True
        if isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1:
            other = parent.comparisons[0].comparator if parent.left is node else parent.left
            return isinstance(parent.comparisons[0].operator, (cst.Is, cst.IsNot)) and isinstance(
                other, cst.Name) and other.value == "None"
        if isinstance(parent, cst.Arg) and not parent.star and isinstance(call, cst.Call):
            target = self.callee(call.func)
            name = None if target is None else (
                parent.keyword.value if parent.keyword is not None else _positional_param(target, call, parent))
            return name is not None and self.only_called(target, name, depth + 1)
        return False


def _call_use_shape(parent, node):
    """(positional count, keyword names) of ``node(...)`` when ``parent`` is that call (no ``*``/``**``), else None."""
    if not (isinstance(parent, cst.Call) and parent.func is node) or any(a.star for a in parent.args):
        return None
    positional = sum(1 for a in parent.args if a.keyword is None)
    if any(a.keyword is None for a in parent.args[positional:]):
        return None
    return positional, tuple(a.keyword.value for a in parent.args if a.keyword is not None)


def _value_leaves(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values an expression can be: the branches of a conditional expression, else itself."""
    if isinstance(value, cst.IfExp):
        return _value_leaves(value.body) + _value_leaves(value.orelse)
    return [value]


def _value_positions(module: cst.Module) -> dict[int, tuple]:
    """id(value) -> ("attr", class, name) for ``self.name = value`` in a method of a top-level class, ("local",
    function, name) for ``name = value`` in a function or method, ("return", None, function name) for ``return value``
    in a top-level function (a branch of a conditional expression counts as the value; nested scopes are not
    walked)."""
    positions: dict[int, tuple] = {}

    def scan(function: cst.FunctionDef, cls: cst.ClassDef | None, top: bool) -> None:
        class _Scan(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                return node is function

            def visit_Lambda(self, node):
                return False

            def visit_ClassDef(self, node):
                return False

            def visit_Assign(self, node: cst.Assign) -> None:
                if len(node.targets) != 1:
                    return
                target = node.targets[0].target
                if isinstance(target, cst.Name):
                    where = ("local", function, target.value)
                elif cls is not None and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value == "self":
                    where = ("attr", cls, target.attr.value)
                else:
                    return
                for leaf in _value_leaves(node.value):
                    positions[id(leaf)] = where

            def visit_Return(self, node: cst.Return) -> None:
                if top and node.value is not None:
                    for leaf in _value_leaves(node.value):
                        positions[id(leaf)] = ("return", None, function.name.value)

        walk(function, _Scan())

    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            scan(stmt, None, True)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for member in stmt.body.body:
                if isinstance(member, cst.FunctionDef):
                    scan(member, stmt, False)
    return positions


def _attribute_shape(module: cst.Module, cls: cst.ClassDef, name: str):
    """The one shape of every read of ``.name`` in the file that can reach ``cls``'s value, each a call
    ``self.name(...)`` inside ``cls`` or a class of the file it derives from (writes ``self.name = ...`` there are
    allowed; ``self.name`` in an unrelated top-level class is that class's own attribute); None otherwise, or when
    ``cls`` is subclassed in the file."""
    shapes: set = set()
    ok = [True]
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    related, todo = set(), [cls]
    while todo:
        current = todo.pop()
        if id(current) in related:
            continue
        related.add(id(current))
        todo += [classes[b.value.value] for b in current.bases
                 if isinstance(b.value, cst.Name) and b.value.value in classes]

    class _Find(cst.CSTVisitor):
        def __init__(self):
            self.stack: list = []
            self.inside = 0  # in cls or an ancestor
            self.other = 0  # in another top-level class

        def on_visit(self, node):
            if isinstance(node, cst.ClassDef):
                if id(node) in related:
                    self.inside += 1
                else:
                    self.other += 1
                if any(isinstance(b.value, cst.Name) and b.value.value == cls.name.value for b in node.bases):
                    ok[0] = False
            if isinstance(node, cst.Attribute) and node.attr.value == name:
                parent = self.stack[-1] if self.stack else None
                on_self = isinstance(node.value, cst.Name) and node.value.value == "self"
                if on_self and self.other and not self.inside:
                    pass  # another class's own attribute
                elif on_self and self.inside and isinstance(parent, cst.AssignTarget):
                    pass
                else:
                    shape = _call_use_shape(parent, node) if on_self and self.inside else None
                    if shape is None:
                        ok[0] = False
                    else:
                        shapes.add(shape)
            self.stack.append(node)
            return True

        def on_leave(self, original_node):
            if self.stack and self.stack[-1] is original_node:
                self.stack.pop()
            if isinstance(original_node, cst.ClassDef):
                if id(original_node) in related:
                    self.inside -= 1
                else:
                    self.other -= 1

    walk(module, _Find())
    return next(iter(shapes)) if ok[0] and len(shapes) == 1 else None


def _positional_param(target: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    names = [p.name.value for p in (*target.params.posonly_params, *target.params.params)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    index = [a for a in call.args if a.keyword is None].index(arg)
    return names[index] if index < len(names) else None


def _param_uses(function: cst.FunctionDef, param: str):
    """(parent, name node, the call an argument belongs to) of each read of ``param`` in the function's body; None
    when a nested scope reads it or it is rebound."""
    uses: list = []
    bad = [False]

    def read(stack: list, node: cst.Name) -> None:
        parent = stack[-1]
        call = stack[-2] if len(stack) > 1 and isinstance(parent, cst.Arg) else None
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr)):
            bad[0] = True
        elif not (isinstance(parent, cst.Arg) and parent.keyword is node):
            uses.append((parent, node, call))

    _name_reads(function, {param}, lambda name: bad.__setitem__(0, True), read)
    return None if bad[0] else uses


def _name_reads(function: cst.FunctionDef, names, nested: Callable[[str], None],
                read: Callable[[list, cst.Name], None]) -> None:
    """Walk the function's own body: ``read(ancestors, node)`` for each occurrence of one of ``names`` (binding ones
    too), ``nested(name)`` for each one a nested function, lambda or class mentions."""

    class _Find(cst.CSTVisitor):
        def __init__(self):
            self.stack: list = []

        def on_visit(self, node):
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not function:
                for n in all_nodes(node, cst.Name):
                    if n.value in names:
                        nested(n.value)
                return False
            if isinstance(node, cst.Name) and node.value in names and self.stack:
                read(self.stack, node)
            self.stack.append(node)
            return True

        def on_leave(self, original_node):
            if self.stack and self.stack[-1] is original_node:
                self.stack.pop()

    walk(function.body, _Find())


def cell_functions(module: cst.Module, builds_cell: Callable[[cst.BaseExpression], bool]) -> frozenset[str]:
    """Module-level functions that always return a layer construction (``def make_attn(c, kind): if kind ==
    "vanilla": return AttnBlock(c) ... else: return nn.Identity()``): every ``return`` gives one and the body cannot
    end without returning, so a call of one is a Cell, never None."""
    found = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and not stmt.asynchronous and _always_returns(stmt.body.body):
            returns = _returns(stmt)
            if returns and all(r.value is not None and builds_cell(r.value) for r in returns):
                found.add(stmt.name.value)
    return frozenset(found)


def _always_returns(body) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.If):
        branch = last.orelse
        if branch is None or not _always_returns(last.body.body):
            return False
        return _always_returns([branch] if isinstance(branch, cst.If) else branch.body.body)
    return False


def _returns(function: cst.FunctionDef) -> list[cst.Return]:
    return own_nodes(function, cst.Return)


# torch constructions that give a 1-D tensor of no elements when written ``C([])``, ``C()`` or ``C(0)``
_EMPTY_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor",
                              "torch.DoubleTensor", "torch.LongTensor", "torch.IntTensor", "torch.BoolTensor"})
_EMPTY_BY_SIZE = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.Tensor", "torch.FloatTensor",
                            "torch.DoubleTensor", "torch.LongTensor", "torch.IntTensor"})


def empty_construction(expr, resolve: Resolve) -> bool:
    """``torch.tensor([])``, ``torch.Tensor()``, ``torch.Tensor([])``, ``torch.empty(0)``, ``torch.zeros(0)``: a
    1-D tensor of no elements, which torch.cat skips."""
    if not isinstance(expr, cst.Call):
        return False
    qual = resolve(expr.func)
    positional = [a.value for a in expr.args if a.keyword is None and not a.star]
    if qual in ("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor", "torch.IntTensor",
                "torch.BoolTensor") and not positional:
        return True
    if qual in _EMPTY_FROM_DATA and len(positional) == 1 and isinstance(positional[0], (cst.List, cst.Tuple)) \
            and not positional[0].elements:
        return True
    if qual in _EMPTY_BY_SIZE and len(positional) == 1:
        size = positional[0]
        if isinstance(size, (cst.Tuple, cst.List)) and len(size.elements) == 1:
            size = size.elements[0].value
        return isinstance(size, cst.Integer) and size.evaluated_value == 0
    return False


def empty_attributes(module: cst.Module, resolve: Resolve) -> frozenset[str]:
    """Names ``N`` some method of the file binds as ``self.N = <empty construction>`` (a buffer that grows by cat)."""
    found: set[str] = set()

    class _Find(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if empty_construction(node.value, resolve):
                found.update(t.target.attr.value for t in node.targets if _self_attr(t.target))

    walk(module, _Find())
    return frozenset(found)


def empty_locals(function: "cst.FunctionDef | None", resolve: Resolve) -> frozenset[str]:
    """Local names the function binds to a legacy empty tensor (``acc = torch.tensor([])``, grown by cat)."""
    if function is None:
        return frozenset()
    return frozenset(t.target.value for node in own_nodes(function, cst.Assign)
                     if empty_construction(node.value, resolve)
                     for t in node.targets if isinstance(t.target, cst.Name))


def empty_cat_members(call: cst.Call, local: frozenset[str], attributes: frozenset[str], resolve: Resolve) -> bool:
    """May a member of this ``torch.cat((a, b), ...)`` be a legacy empty tensor (see the module's docs)? ``local``:
    the enclosing function's :func:`empty_locals`; ``attributes``: the file's :func:`empty_attributes`."""
    tensors = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "tensors"), None)
    if not isinstance(tensors, (cst.List, cst.Tuple)):
        return False
    for element in tensors.elements:
        value = element.value
        if empty_construction(value, resolve) or (isinstance(value, cst.Name) and value.value in local) \
                or (_self_attr(value) and value.attr.value in attributes):
            return True
    return False


def _is_list(value) -> bool:
    """A list display, comprehension, ``list(...)``, or a list display repeated or joined (``[k // 2] * 4``,
    ``2 * [1]``, ``[1, 2] + rest``)."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Multiply, cst.Add)):
        return isinstance(value.left, cst.List) or isinstance(value.right, cst.List)
    return isinstance(value, (cst.List, cst.ListComp)) or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list")


def list_locals(function: "cst.FunctionDef | None", given: frozenset[str] = frozenset(),
                project: frozenset[str] = frozenset()) -> frozenset[str]:
    """Names the function may hold a list in (and ``self.NAME`` attributes it stores one on): assigned a list display, comprehension, ``list(...)``, ``[x] * n`` or ``[x] + y``, or a
    parameter whose default is a list display (``rate = []`` grown per dimension; ``def f(kernel_size=[3, 3])``),
    or one of ``given`` (the parameters a call of the file passes a list to: :func:`list_arguments`). ``project``:
    the names the project binds to a list in any of its files (mindport.migrator.project.list_names, the one
    cross-file fact of this kind): a parameter so named, and a local assigned an attribute so named (``s =
    self._block_args.stride``). torch takes a list wherever it takes a size or dimensions; MindSpore only an int or a
    tuple."""
    if function is None:
        return frozenset()
    found = {t.target.value for node in own_nodes(function, cst.Assign)
             if _is_list(node.value) or (isinstance(node.value, cst.Attribute) and node.value.attr.value in project)
             for t in node.targets if isinstance(t.target, cst.Name)}
    params = function.params
    found.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                 if (p.default is not None and _is_list(p.default)) or p.name.value in given
                 or p.name.value in project)
    # an attribute of self the function stores such a value on, as "self.NAME" (pytorch-i3d's Unit3D:
    # ``self._kernel_shape = kernel_shape`` then ``nn.Conv3d(..., kernel_size=self._kernel_shape)``, each call of the
    # file passing ``kernel_shape=[1, 1, 1]``)
    found.update(f"self.{t.target.attr.value}" for node in own_nodes(function, cst.Assign)
                 if _is_list(node.value) or (isinstance(node.value, cst.Name) and node.value.value in found)
                 for t in node.targets if isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                 and t.target.value.value == "self")
    return frozenset(found)


def sequence_locals(function: "cst.FunctionDef | None") -> frozenset[str]:
    """Names the function reads as a sequence, which no int is: indexed by an integer (``input_dim[-2]``), given to
    ``len``, spread (``*dims``) or unpacked (``h, w = size``). MLP-Mixer's ``nn.LayerNorm(input_dim)`` next to
    ``input_dim[-2]``: a shape of several axes, where a name alone may be one int."""
    if function is None:
        return frozenset()
    found: set[str] = set()

    def integer(node) -> bool:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node = node.expression
        return isinstance(node, cst.Integer)

    for node in own_nodes(function, cst.Subscript):
        if isinstance(node.value, cst.Name) and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index) and integer(node.slice[0].slice.value):
            found.add(node.value.value)
    for node in own_nodes(function, cst.Call):
        if isinstance(node.func, cst.Name) and node.func.value == "len" and len(node.args) == 1 \
                and isinstance(node.args[0].value, cst.Name):
            found.add(node.args[0].value.value)
        found.update(a.value.value for a in node.args if a.star == "*" and isinstance(a.value, cst.Name))
    for node in own_nodes(function, cst.Assign):
        if isinstance(node.value, cst.Name) and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets):
            found.add(node.value.value)
    return frozenset(found)


def sequence_attributes(cls: "cst.ClassDef | None") -> frozenset[str]:
    """Attributes of ``self`` that the class's methods assign a list or tuple display of several items, and nothing
    else (ozanciga/gans-with-pytorch's CT-GAN block: ``self.ln_dims = [n_input, spatial_dim, spatial_dim]`` in each
    branch that builds ``nn.LayerNorm(self.ln_dims)``): a shape of several axes, where an attribute alone may be one
    int. A display with a starred item, an augmented assignment or any other value leaves the attribute out."""
    if cls is None:
        return frozenset()
    seen: dict[str, bool] = {}
    for node in all_nodes(cls, cst.Assign):
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                v = node.value
                several = isinstance(v, (cst.List, cst.Tuple)) and len(v.elements) > 1 and not any(
                    isinstance(e, cst.StarredElement) for e in v.elements)
                seen[t.attr.value] = seen.get(t.attr.value, True) and several
            elif not isinstance(t, cst.Name):  # ``self.a, self.b = ...``: those attributes hold other values
                for inner in all_nodes(t, cst.Attribute):
                    if isinstance(inner.value, cst.Name) and inner.value.value == "self":
                        seen[inner.attr.value] = False
    for node in [*all_nodes(cls, cst.AugAssign), *all_nodes(cls, cst.AnnAssign)]:
        t = node.target
        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
            seen[t.attr.value] = False
    return frozenset(name for name, several in seen.items() if several)


def operand_holds(expr, test: Callable[[cst.BaseExpression], bool]) -> bool | None:
    """Arithmetic passes a kind of value on: ``test`` of an operand of ``a * b``, ``-a``, ``a[i]`` (either operand
    of a binary operation); None when ``expr`` is none of these."""
    if isinstance(expr, cst.BinaryOperation):
        return test(expr.left) or test(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return test(expr.expression)
    if isinstance(expr, cst.Subscript):
        return test(expr.value)
    return None


def numpy_valued(expr, resolve: Resolve, local: frozenset[str] = frozenset()) -> bool:
    """Is ``expr`` evidently a numpy value: a call of a numpy function (``np.product(self.reshape)``), a method,
    index or arithmetic of one, or a name of ``local`` (:func:`numpy_locals`)? torch's layers take a numpy integer
    for a size; MindSpore's refuse it ("the 'in_channels' must be int, but got 'int64'")."""
    if isinstance(expr, cst.Call):
        qual = resolve(expr.func)
        if qual is not None and qual.split(".", 1)[0] == "numpy":
            return True
        return isinstance(expr.func, cst.Attribute) and numpy_valued(expr.func.value, resolve, local)
    passed = operand_holds(expr, lambda e: numpy_valued(e, resolve, local))
    if passed is not None:
        return passed
    return isinstance(expr, cst.Name) and expr.value in local or _self_path(expr) in local


def _self_path(expr) -> str | None:
    """``self.input_dim`` -> "self.input_dim" (a name :func:`numpy_locals` keeps for an attribute it binds)."""
    return f"self.{expr.attr.value}" if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
        and expr.value.value == "self" else None


def numpy_locals(function: "cst.FunctionDef | None", resolve: Resolve,
                 given: frozenset[str] = frozenset()) -> frozenset[str]:
    """Local names the function binds to a numpy value (:func:`numpy_valued`: ``n = np.prod(shape)``), in order,
    from its parameters ``given`` one by some call of the file (:func:`numpy_arguments`); an attribute of ``self``
    it binds to one as ``"self.<name>"`` (``self.input_dim = input_dim``, then ``nn.Linear(self.input_dim, h)``)."""
    if function is None:
        return frozenset()
    found: set[str] = set(given)
    for node in own_nodes(function, cst.Assign):
        if numpy_valued(node.value, resolve, frozenset(found)):
            found.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
            found.update(name for t in node.targets if (name := _self_path(t.target)))  # self.input_dim = n
    return frozenset(found)


def list_only_locals(function: "cst.FunctionDef | None") -> frozenset[str]:
    """Names of :func:`list_locals` the function binds to nothing but lists (not a parameter; no other assignment,
    loop target, ``with ... as`` or walrus): ``skips = []`` grown by ``append`` and read back. Such a name holds a
    list wherever it is read."""
    names = list_locals(function)
    if not names:
        return names
    params = function.params
    other = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    other |= {n.value for node in own_nodes(function, cst.Assign) for t in node.targets
             if not (_is_list(node.value) and isinstance(t.target, cst.Name)) for n in target_name_nodes(t.target)}
    for kind, target in ((cst.AnnAssign, "target"), (cst.For, "target"), (cst.NamedExpr, "target"),
                         (cst.AsName, "name")):
        for node in own_nodes(function, kind):
            other.update(n.value for n in target_name_nodes(getattr(node, target)))
    return frozenset(names - other)


# ------------------------------------------------------------------------------------------- unread bindings

def unread_bindings(function: cst.FunctionDef, droppable: Callable[[cst.BaseExpression], bool]) -> cst.FunctionDef:
    """The function without its assignments of a value ``droppable`` accepts to a local name it never reads (nor a
    nested scope, a ``global``/``nonlocal`` or a ``del`` names it): ``d = v`` goes, and in ``n, d = x, v`` the pair
    (``n = x``), matched position by position around a starred element on either side. A block left empty is
    ``pass``."""
    order = _order(function)

    def drop(target, value) -> bool:
        return isinstance(target, cst.Name) and not order.reads(target.value) and droppable(value)

    def assignment(small):
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            return small
        target, value = small.targets[0].target, small.value
        if drop(target, value):
            return None
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Tuple):
            return small
        targets, values = list(target.elements), list(value.elements)
        gone = {(i, j) for i, j in _aligned(targets, values)
                if not isinstance(values[j], cst.StarredElement) and drop(targets[i].value, values[j].value)}
        if not gone:
            return small
        targets = [e for i, e in enumerate(targets) if i not in {i for i, _ in gone}]
        values = [e for j, e in enumerate(values) if j not in {j for _, j in gone}]
        if not targets:
            return None
        if len(targets) == len(values) == 1 and not isinstance(targets[0], cst.StarredElement) \
                and not isinstance(values[0], cst.StarredElement):
            return small.with_changes(targets=[small.targets[0].with_changes(target=targets[0].value)],
                                      value=values[0].value)
        plain = cst.MaybeSentinel.DEFAULT
        return small.with_changes(
            targets=[small.targets[0].with_changes(target=target.with_changes(
                elements=[e.with_changes(comma=plain) for e in targets]))],
            value=value.with_changes(elements=[e.with_changes(comma=plain) for e in values]))

    class _Drop(cst.CSTTransformer):
        def visit_FunctionDef(self, node) -> bool:
            return node is function

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def _small(self, updated):
            body = [s for s in (assignment(s) for s in updated.body) if s is not None]
            if len(body) == len(updated.body) and all(a is b for a, b in zip(body, updated.body)):
                return updated
            return updated.with_changes(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body])

        def leave_SimpleStatementLine(self, original_node, updated_node):
            line = self._small(updated_node)
            return line if line.body else cst.RemoveFromParent()

        def leave_SimpleStatementSuite(self, original_node, updated_node):
            suite = self._small(updated_node)
            return suite if suite.body else suite.with_changes(body=[cst.Pass()])

        def leave_IndentedBlock(self, original_node, updated_node):
            if updated_node.body:
                return updated_node
            return updated_node.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])

    return transform(function, _Drop())  # (unchanged nodes stay the same objects: ``droppable`` may ask by id)


def _aligned(targets: list, values: list):
    """(target index, value index) of the elements of ``targets = values`` that are assigned one to the other: from
    the front up to the first starred element on either side, and from the back up to the last."""
    starred = [isinstance(e, cst.StarredElement) for e in targets], [isinstance(e, cst.StarredElement) for e in values]
    if not any(starred[0]) and not any(starred[1]) and len(targets) != len(values):
        return set()
    pairs = set()
    for k in range(min(len(targets), len(values))):
        if starred[0][k] or starred[1][k]:
            break
        pairs.add((k, k))
    for k in range(1, min(len(targets), len(values)) + 1):
        if starred[0][-k] or starred[1][-k]:
            break
        pairs.add((len(targets) - k, len(values) - k))
    return pairs

def list_arguments(module: cst.Module, callees: dict[str, cst.FunctionDef],
                   project: frozenset[str] = frozenset()) -> dict[int, frozenset[str]]:
    """id(function) -> the parameters some call of the file passes a list to: ``conv2d_(..., kernel_size=[1, 1])``
    of a class of the file (``callees``: ValueFlow.functions, its functions and classes' ``__init__``), or a local
    list of the calling function (:func:`list_locals`). The callee then hands that parameter to ``nn.Conv2d``
    (GMAN's FC building its 1x1 convolutions)."""
    local_lists: dict[int, frozenset[str]] = {}

    def holds(value, enclosing) -> bool:
        if _is_list(value):
            return True
        if not (isinstance(value, cst.Name) and enclosing is not None):
            return False
        if id(enclosing) not in local_lists:
            local_lists[id(enclosing)] = list_locals(enclosing, project=project)
        return value.value in local_lists[id(enclosing)]

    return passed_arguments(module, callees, holds)


def numpy_arguments(module: cst.Module, callees: dict[str, cst.FunctionDef],
                    resolve: Resolve) -> dict[int, frozenset[str]]:
    """id(function) -> the parameters some call of the file passes a numpy value to (:func:`numpy_valued`, the
    calling function's :func:`numpy_locals` included): C-SWM's ``EncoderMLP(input_dim=np.prod(width_height), ...)``,
    whose ``__init__`` hands ``input_dim`` to ``nn.Linear``."""
    local: dict[int, frozenset[str]] = {}

    def holds(value, enclosing) -> bool:
        if enclosing is not None and id(enclosing) not in local:
            local[id(enclosing)] = numpy_locals(enclosing, resolve)
        return numpy_valued(value, resolve, local.get(id(enclosing), frozenset()) if enclosing is not None
                            else frozenset())

    return passed_arguments(module, callees, holds)


def non_bool_arguments(module: cst.Module, callees: dict[str, cst.FunctionDef]) -> dict[int, frozenset[str]]:
    """id(function) -> the parameters some call of the file passes a literal that is not a bool to (a string, a
    number), or a parameter of the calling function whose default is one: DBPN's ``DeconvBlock(..., padding,
    activation, norm=None)``, whose sixth argument, 'prelu', lands in ``bias``; torch only tests ``if bias:``, and
    MindSpore's ``has_bias`` must be a bool. Also the function's own parameters defaulting to such a literal
    (PhyDNet's ``def __init__(self, ..., bias=1)``), and ``self.X`` where the function stores one of them there
    (``self.bias = bias``, then ``nn.Conv2d(..., bias=self.bias)``)."""
    def literal(value) -> bool:
        return isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer,
                                  cst.Float))

    def holds(value, enclosing) -> bool:
        if literal(value):
            return True
        if not (isinstance(value, cst.Name) and enclosing is not None):
            return False
        params = enclosing.params
        return any(p.name.value == value.value and p.default is not None and literal(p.default)
                   for p in (*params.posonly_params, *params.params, *params.kwonly_params))

    found = {key: set(names) for key, names in passed_arguments(module, callees, holds).items()}
    for function in find_all(module, matchers.FunctionDef()):
        params = function.params
        names = found.setdefault(id(function), set())
        names.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                     if p.default is not None and literal(p.default))
        for assign in find_all(function.body, matchers.Assign(
                targets=[matchers.AssignTarget(matchers.Attribute(value=matchers.Name("self")))],
                value=matchers.Name())):
            if assign.value.value in names:
                names.add(f"self.{assign.targets[0].target.attr.value}")
    return {key: frozenset(names) for key, names in found.items() if names}


def passed_arguments(module: cst.Module, callees: dict[str, cst.FunctionDef],
                     holds: Callable[[cst.BaseExpression, "cst.FunctionDef | None"], bool]) -> dict[int, frozenset[str]]:
    """id(function) -> its parameters to which some call of the file (of a function or class of ``callees``, by
    name) passes a value ``holds(value, the calling function)`` accepts, by keyword or position."""
    found: dict[int, set[str]] = {}

    class _Find(cst.CSTVisitor):
        def __init__(self):
            self.functions: list[cst.FunctionDef] = []

        def visit_FunctionDef(self, node):
            self.functions.append(node)

        def leave_FunctionDef(self, original_node):
            self.functions.pop()

        def visit_Call(self, node):
            target = callees.get(node.func.value) if isinstance(node.func, cst.Name) else None
            if target is None:
                return
            enclosing = self.functions[-1] if self.functions else None
            starred = any(a.star for a in node.args)
            for arg in node.args:
                if arg.star or (starred and arg.keyword is None) or not holds(arg.value, enclosing):
                    continue
                name = arg.keyword.value if arg.keyword is not None else _positional_param(target, node, arg)
                if name is not None:
                    found.setdefault(id(target), set()).add(name)

    read(module, _Find())
    return {key: frozenset(names) for key, names in found.items()}


# ------------------------------------------------------------------------------------------------ unbatched inputs

def _mindspore_layers(module: cst.Module, aliases: dict[str, str] | None = None
                      ) -> Callable[[cst.BaseExpression], "str | None"]:
    """The MindSpore ``nn`` class a converted callee names (``nn.Conv2d`` -> ``Conv2d``), by the file's top-level
    imports of ``mindspore``/``mindspore.nn``; None for anything else. ``aliases`` (module -> name): the imports the
    converter is about to write (a converted tree before ``finalize_imports`` still imports torch's ``nn``)."""
    from mindport.migrator.scopes import dotted_name

    bound: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for imp in stmt.body:
            if isinstance(imp, cst.Import):
                for alias in imp.names:
                    full = dotted_name(alias.name) or ""
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bound[alias.asname.name.value] = full
                    elif full.split(".")[0] == "mindspore":
                        bound["mindspore"] = "mindspore"
            elif (isinstance(imp, cst.ImportFrom) and imp.module is not None and not imp.relative
                  and not isinstance(imp.names, cst.ImportStar)):
                base = dotted_name(imp.module) or ""
                for alias in imp.names:
                    name = alias.asname.name.value if alias.asname is not None else alias.name.value
                    bound[name] = f"{base}.{dotted_name(alias.name)}"
    bound.update({name: mod for mod, name in (aliases or {}).items()})

    def layer(func: cst.BaseExpression) -> str | None:
        name = dotted_name(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = f"{bound[head]}.{rest}" if head in bound and rest else bound.get(head, "")
        return full[len("mindspore.nn."):] if full.startswith("mindspore.nn.") and full.count(".") == 2 else None

    return layer


_MODULE_PARENTS: dict[int, tuple] = {}


def module_parents(module: cst.Module) -> dict[int, cst.CSTNode]:
    """:func:`_parents` of a whole module, built once per module node."""
    return _node_cached(_MODULE_PARENTS, module, 64, _parents)


def _literal_at_least(expr, least: int) -> bool:
    return isinstance(expr, cst.Integer) and expr.evaluated_value >= least


def _counts_from_zero(it, target, name: str) -> bool:
    """Does the loop ``for target in it`` bind ``name`` to non-negative ints only: ``for i, x in enumerate(xs)``
    (no ``start``, or a non-negative int literal), ``for i in range(n)`` / ``range(a, b[, s])`` with a non-negative
    int literal ``a`` and a positive literal step?"""
    if not isinstance(it, cst.Call) or not isinstance(it.func, cst.Name) or any(a.star for a in it.args):
        return False
    args = it.args
    if it.func.value == "enumerate":
        starts = [a.value for a in args[1:]]
        if not args or args[0].keyword is not None or len(args) > 2 \
                or any(not _literal_at_least(v, 0) for v in starts) \
                or any(a.keyword is not None and a.keyword.value != "start" for a in args[1:]):
            return False
        return isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
            and isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == name
    if it.func.value == "range" and all(a.keyword is None for a in args) and 1 <= len(args) <= 3:
        if len(args) >= 2 and not _literal_at_least(args[0].value, 0):
            return False
        if len(args) == 3 and not _literal_at_least(args[2].value, 1):
            return False
        return isinstance(target, cst.Name) and target.value == name
    return False


def loop_index(name: str, node: cst.CSTNode, module: "cst.Module | None") -> bool:
    """Is ``name``, read at ``node`` (an expression of ``module``), a non-negative int by construction: bound by the
    nearest loop or comprehension around it that binds it, a count from zero (:func:`_counts_from_zero`: segformer's
    ``[nn.Sequential(..., nn.Upsample(scale_factor=2 ** i)) for i, dim in enumerate(dims)]``), in the same function,
    and, for a ``for`` statement, bound nowhere else in its body? ``enumerate``/``range`` bound by the file itself:
    no."""
    if module is None:
        return False
    if {"enumerate", "range"} & bindings_in_scope(module):
        return False
    parents = module_parents(module)
    child, parent = node, parents.get(id(node))
    path = {id(node)}
    while parent is not None:
        path.add(id(parent))
        if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)) \
                and id(parent.for_in.iter) not in path:  # the first iterable is read in the scope around
            loop = parent.for_in
            while loop is not None:
                if name in target_names(loop.target):
                    return _counts_from_zero(loop.iter, loop.target, name)
                loop = loop.inner_for_in
        elif isinstance(parent, cst.For) and child is parent.body and name in target_names(parent.target):
            return name not in bindings_in_scope(parent.body) and _counts_from_zero(parent.iter, parent.target, name)
        elif isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        elif isinstance(parent, (cst.For, cst.While, cst.If, cst.With, cst.Try)) \
                and name in bindings_in_scope(parent.body if not isinstance(parent, cst.Try) else parent):
            return False  # rebound between the binder and the read
        child, parent = parent, parents.get(id(parent))
    return False


def _parents(node: cst.CSTNode) -> dict[int, cst.CSTNode]:
    parents: dict[int, cst.CSTNode] = {}

    class _Link(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list[cst.CSTNode] = []

        def on_visit(self, child) -> bool:
            if self.stack:
                parents[id(child)] = self.stack[-1]
            self.stack.append(child)
            return True

        def on_leave(self, original_node) -> None:
            self.stack.pop()

    walk(node, _Link())
    return parents


def _shape_unpacked(function: cst.FunctionDef, name: str, rank: int) -> bool:
    """``a, b, c, d = name.shape`` (or ``name.size()``/``ops.shape(name)``) with ``rank`` targets in the function:
    torch raises there on any other rank."""
    from mindport.migrator.scopes import dotted_name

    for assign in all_nodes(function, cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, (cst.Tuple, cst.List)):
            continue
        elements = assign.targets[0].target.elements
        if len(elements) != rank or any(isinstance(e, cst.StarredElement) for e in elements):
            continue
        value = assign.value
        if isinstance(value, cst.Call) and not value.args:
            value = value.func  # x.size()
        elif isinstance(value, cst.Call) and len(value.args) == 1 and (dotted_name(value.func) or "").endswith(
                ".shape"):
            value = cst.Attribute(value=value.args[0].value, attr=cst.Name("shape"))  # ops.shape(x)
        if (isinstance(value, cst.Attribute) and value.attr.value in ("shape", "size")
                and isinstance(value.value, cst.Name) and value.value.value == name):
            return True
    return False


def unbatched_handling(module: cst.Module, observed: tuple = ()) -> bool:
    """True when the converted file builds a MindSpore layer that takes only a batch where torch's takes an unbatched
    input too (``mindport.mappings.unbatched``: convolutions, LPPool2d, AdaptiveAvg/MaxPool1d, recurrent layers and
    cells) and does not show every input of it batched: the file then loads ``mindport.runtime.unbatched`` (the
    converter's ``finalize_runtime``), so the port keeps torch's meaning on an unbatched input.

    A layer is shown batched when it is built as ``self.NAME = nn.Layer(...)`` (or as a member of such a
    ``SequentialCell``) in a class every use of which (``self.NAME`` anywhere in the class, reads of its own
    attributes aside) is a call whose input is a batch of the layer's rank in every program torch runs
    (:class:`_BatchFlow`): the input comes out of a layer torch refuses anything but such a batch for (BatchNorm2d/3d),
    through rank-keeping steps (activations, norms, dropout, pools, convolutions of that rank, arithmetic), or is a name
    the function unpacks from its shape with that many targets (``b, c, h, w = x.shape``); or the layer's output goes,
    through rank-keeping steps, into such a layer (``out = self.conv1(x)`` then ``out = self.bn1(out)``). A cell also
    needs its ``hx`` given (MindSpore's require it; torch's default to zeros). A cell of the file built as a member of
    a list of lists a ``for`` loop unpacks (``for attn, ff in self.layers``) is called on a batch when every call of
    the loop's name for it is (:meth:`_OwnCells.loop_member_batched`, also for a module-level function's
    ``SequentialCell`` put there: :meth:`_OwnCells.looped_sequences_shown`); a sequence member after an own cell whose
    construct returns a batch gets one (:meth:`_OwnCells.before_member`); a layer handed to a wrapper cell of the file
    (``Residual(fn)``) gets the wrapper's input (:meth:`_OwnCells.wrapped_batched`); a member of a ``SequentialCell``
    display appended to a list starred into ``self.NAME = SequentialCell(*layers, ...)`` gets its members' output
    (:meth:`_OwnCells.appended_sequence`); a loop name's call keeps a batch when every cell put at its place does
    (:meth:`_OwnCells.loop_call_output`). Anything else (a layer in another list,
    built in a function, used on another object, handed on, read in a branch) loads the handling: one rank comparison
    per call.

    ``observed``: the builds of such layers a recorded torch run saw (``convert --facts``), in source order, as ((class,
    every call of it had a batch of the class's rank, a cell its hx), ...). When they are the file's builds one for one
    (as many, the same classes in the same order: every build of the file ran), a build every call of which was
    batched is shown so too: an observation proves what ran (mindport.observed)."""
    from mindport.mappings.unbatched import BATCH_RANK, CELLS

    layer = _mindspore_layers(module)
    builds = [call for call in all_nodes(module, cst.Call) if layer(call.func) in BATCH_RANK]
    if not builds:
        return False
    parents = _parents(module)
    own = _OwnCells(module, layer, parents)
    shown: set[int] = set()
    for cls in own.every:
        flow, kinds = own.flow(cls), own.kinds(cls)
        for assign in all_nodes(cls, cst.Assign):
            attr = self_attribute_name(assign.targets[0].target) if len(assign.targets) == 1 else None
            kind = kinds.get(attr or "")
            if kind in BATCH_RANK:
                if flow.uses_batched(attr, BATCH_RANK[kind], cell=kind in CELLS):
                    shown.add(id(assign.value))
            elif kind == "SequentialCell":
                shown |= flow.sequence_shown(attr, assign.value)
    shown |= _returned_sequences_shown(module, layer, parents)
    shown |= own.looped_sequences_shown()
    shown |= own.appended_sequences_shown()
    shown |= own.wrapped_shown([b for b in builds if id(b) not in shown])
    if observed and [kind for kind, _ in observed] == [layer(call.func) for call in builds]:
        shown |= {id(call) for call, (_, batched) in zip(builds, observed) if batched}
    return any(id(call) not in shown for call in builds)


UNBATCHED_ALIAS = "mp_unbatched"  # the converter's name for mindport.runtime.unbatched (context.IMPORT_STYLE)


def observed_input_ranks(decided_sites) -> dict[str, int]:
    """class name -> the rank of the first input of every call of its ``forward`` in the recorded torch run
    (mindport.observed.Facts.decided_sites' ``"input:<class>:<rank>"``)."""
    out = {}
    for *_, fact in decided_sites:
        kind, _, rest = fact.partition(":")
        if kind == "input":
            name, _, rank = rest.rpartition(":")
            out[name] = int(rank)
    return out


def native_batched_functions(module: cst.Module, aliases: dict[str, str],
                             observed: dict[str, int] | None = None) -> tuple[cst.Module, bool]:
    """``mp_unbatched.NAME(x, ...)`` -> ``ops.NAME(x, ...)`` where ``x`` is a batch of the op's rank in every program
    torch runs: MindSpore's own op then (``mindport.mappings.unbatched.FUNCTIONS``: the pools that take only a batch,
    which the tables map to mindport.runtime.unbatched's forms). Shown as for a layer's input (:class:`_BatchFlow`,
    in a class's methods: ``b, c, h, w = x.shape``, a BatchNorm2d's output, a convolution of that rank's output
    through rank-keeping steps); a call anywhere else (a module-level function's ``F.max_pool2d(x, ...)``, whose
    ``x`` may be a (C, H, W) map) keeps the runtime's form. Runs before the imports are written (the engine then
    imports ``ops``, and ``mp_unbatched`` only while a call is left); ``aliases``: the file's names for the modules
    (only where they are ``ops`` and ``mp_unbatched``, the names :class:`_BatchFlow` reads); ``observed``: the file's
    classes whose every ``forward`` call in a recorded torch run had a first input of the rank given
    (:func:`observed_input_ranks`: a branch the run never took, on that input unchanged, is settled too). Returns the
    module and whether a call was made native."""
    from mindport.mappings.unbatched import FUNCTIONS

    if aliases.get("mindspore.ops") != "ops" or aliases.get("mindport.runtime.unbatched") != UNBATCHED_ALIAS:
        return module, False
    calls = [c for c in all_nodes(module, cst.Call) if isinstance(c.func, cst.Attribute)
             and isinstance(c.func.value, cst.Name) and c.func.value.value == UNBATCHED_ALIAS
             and c.func.attr.value in FUNCTIONS and c.args and not c.args[0].star and not c.args[0].keyword]
    if not calls:
        return module, False
    parents = _parents(module)
    own = _OwnCells(module, _mindspore_layers(module, aliases), parents, observed)
    native: set[int] = set()
    for cls in own.every:
        flow = own.flow(cls)
        for call in all_nodes(cls, cst.Call):
            if any(call is c for c in calls):
                function = flow._enclosing(call)  # noqa: SLF001
                if function is not None and flow.forward(call.args[0].value, FUNCTIONS[call.func.attr.value],
                                                         function):
                    native.add(id(call))
    if not native:
        return module, False

    class _Native(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            if id(original) in native:
                return updated.with_changes(func=updated.func.with_changes(value=cst.Name("ops")))
            return updated

    return module.visit(_Native()), True


def uses_name(module: cst.Module, name: str) -> bool:
    """A ``Name`` node ``name`` anywhere in the module."""
    return any(n.value == name for n in all_nodes(module, cst.Name))


def _called_whole(module: cst.Module, parents: dict[int, cst.CSTNode], attr: str) -> bool:
    """Every ``.<attr>`` of the file (any receiver) is a call of it, a build (``self.<attr> = ...``) or a read of one
    of its attributes: the cell stored there is only ever called whole (never indexed, iterated or handed on)."""
    for node in all_nodes(module, cst.Attribute):
        if node.attr.value != attr:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Call) and parent.func is node) or (
                isinstance(parent, cst.Attribute) and parent.value is node):
            continue
        return False
    return True


def _returned_sequences_shown(module: cst.Module, layer, parents: dict[int, cst.CSTNode]) -> set[int]:
    """Builds shown batched in a ``SequentialCell`` a module-level function returns (mobile_vit's ``conv_1x1_bn``:
    Conv2d, BatchNorm2d, SiLU): the sequence is only ever called whole — every mention of the function in the file is
    a call whose value is stored as ``self.NAME`` (or is a member of a ``SequentialCell`` stored so), every
    ``.NAME`` of the file is a call of it (:func:`_called_whole`) — and the member meets a batch only in every program
    torch runs (:func:`_between_batch_only`: a BatchNorm2d after it or before it, through rank-keeping members)."""
    from mindport.mappings.unbatched import BATCH_RANK, CELLS

    shown: set[int] = set()
    for function in module.body:
        if not isinstance(function, cst.FunctionDef) or function.decorators:
            continue
        returns = own_nodes(function, cst.Return)
        sequences = [r.value for r in returns if isinstance(r.value, cst.Call)
                     and layer(r.value.func) == "SequentialCell"
                     and not any(a.star or a.keyword for a in r.value.args)]
        if not sequences or not _only_stored_whole(module, parents, layer, function.name.value):
            continue
        for sequence in sequences:
            members = _sequence_members(sequence)
            kinds = [_member_kind(layer, m) for m in members]
            for index, (member, kind) in enumerate(zip(members, kinds)):
                if (kind in BATCH_RANK and kind not in CELLS and kind.startswith(("Conv", "LPPool", "Adaptive"))
                        and _between_batch_only(kinds, index, BATCH_RANK[kind])):
                    shown.add(id(member))
    return shown


def _only_stored_whole(module: cst.Module, parents: dict[int, cst.CSTNode], layer, name: str) -> bool:
    """Every mention of the module-level function ``name`` (its ``def`` aside) is a call whose value is assigned to
    ``self.NAME`` alone, or is a member of a ``SequentialCell`` so assigned, the attribute only ever called whole."""
    if any(isinstance(s, cst.SimpleStatementLine) and any(
            isinstance(t, cst.Assign) and any(isinstance(a.target, cst.Name) and a.target.value == "__all__"
                                              for a in t.targets) for t in s.body) for s in module.body):
        return False  # handed to other files by name
    uses = 0
    for node in all_nodes(module, cst.Name):
        if node.value != name:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, cst.FunctionDef) and parent.name is node:
            continue
        if not (isinstance(parent, cst.Call) and parent.func is node):
            return False
        holder = parents.get(id(parent))
        if isinstance(holder, cst.Arg) and holder.value is parent and not holder.star and not holder.keyword:
            sequence = parents.get(id(holder))
            if not (isinstance(sequence, cst.Call) and layer(sequence.func) == "SequentialCell"):
                return False
            holder = parents.get(id(sequence))
        if not (isinstance(holder, cst.Assign) and len(holder.targets) == 1):
            return False
        attr = self_attribute_name(holder.targets[0].target)
        if attr is None or not _called_whole(module, parents, attr):
            return False
        uses += 1
    return uses > 0


# MindSpore layers and ops functions whose output has their input's rank (what a batch stays through)
_KEEP_RANK_LAYERS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "ELU", "PReLU", "HSwish", "HSigmoid", "Mish",
    "Softplus", "Softmax", "LogSoftmax", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LayerNorm",
    "Identity", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"})
_KEEP_RANK_OPS = frozenset({"relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "elu", "mish",
                            "softplus", "softmax", "log_softmax", "dropout", "abs", "exp", "hardswish",
                            "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool2d", "max_pool2d", "pad"})


class _BatchFlow:
    """Whether a value in a class's methods is a batch of a given rank in every program torch runs (see
    :func:`unbatched_handling`). Straight-line reasoning only: a name's every binding must show it (``forward``), and
    a result is followed into the next simple statement of its block that reads it (``onward``)."""

    def __init__(self, cls: cst.ClassDef, kinds: dict[str, str], layer, parents: dict[int, cst.CSTNode],
                 own: "_OwnCells | None" = None, assume: bool = False) -> None:
        self.cls, self.kinds, self.layer, self.parents = cls, kinds, layer, parents
        self.functions = all_nodes(cls, cst.FunctionDef)
        self.own, self.assume = own, assume  # assume: construct's input is taken as a batch (see _OwnCells.returns)

    def _enclosing(self, node) -> cst.FunctionDef | None:
        while node is not None and not isinstance(node, cst.FunctionDef):
            node = self.parents.get(id(node))
        return node

    def _keeps(self, call: cst.Call, rank: int) -> bool:
        """The call's first argument goes through it with its rank (a layer of the class, an ops function)."""
        from mindport.mappings.unbatched import BATCH_RANK

        kind = self.kinds.get(self_attribute_name(call.func) or "")
        if kind is not None:
            return kind in _KEEP_RANK_LAYERS or (kind in BATCH_RANK and BATCH_RANK[kind] == rank
                                                 and kind.startswith("Conv"))
        from mindport.mappings.unbatched import FUNCTIONS

        func = call.func  # an ops function, or mindport.runtime.unbatched's form of a pool (every pool keeps the rank)
        return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and ((func.value.value == "ops" and func.attr.value in _KEEP_RANK_OPS)
                     or (func.value.value in ("ops", UNBATCHED_ALIAS) and func.attr.value in FUNCTIONS)))

    def _batch_only(self, call: cst.Call, rank: int) -> bool:
        from mindport.mappings.unbatched import BATCH_ONLY

        return BATCH_ONLY.get(self.kinds.get(self_attribute_name(call.func) or "", "")) == rank

    def forward(self, expr, rank: int, function, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Lambda):
            body = expr.func.body  # (lambda t, h: ops.transpose(ops.reshape(t, ...), (0, 3, 1, 2)))(x, h)
            return isinstance(body, cst.Call) and (_permutes(body, rank) or self._ranked(body, rank))
        if isinstance(expr, cst.Call) and expr.args and not expr.args[0].star:
            if self._batch_only(expr, rank) or self._ranked(expr, rank) or _permutes(expr, rank):
                return True
            if any(self.forward(e.value, rank, function, seen) for e in _concatenated(expr)):
                return True  # ops.cat of a batch: torch joins tensors of one rank only
            if self._own_kind(expr) is not None:  # the file's own cell, or a SequentialCell
                made, keeps = self.own.output(self.cls, self_attribute_name(expr.func), rank)
                return made or (keeps and self.forward(expr.args[0].value, rank, function, seen))
            if self.own is not None and isinstance(expr.func, cst.Name):  # for a, b in self.layers: x = a(x)
                made, keeps = self.own.loop_call_output(self.cls, expr, rank)
                return made or (keeps and self.forward(expr.args[0].value, rank, function, seen))
            return self._keeps(expr, rank) and self.forward(expr.args[0].value, rank, function, seen)
        if isinstance(expr, cst.BinaryOperation):
            return self.forward(expr.left, rank, function, seen) or self.forward(expr.right, rank, function, seen)
        if not isinstance(expr, cst.Name) or function is None:
            return False
        if expr.value in seen:
            return True  # a cycle (out = self.act(out)): the other bindings decide
        if _shape_unpacked(function, expr.value, rank):
            return True
        if self._required_before(expr, rank):
            return True
        reaching = self._reaching(expr)
        if reaching is not None:  # reads in it are of earlier bindings: not a cycle
            return self.forward(reaching, rank, function, seen)
        bindings = [node for node in all_nodes(function, cst.Name) if node.value == expr.value
                    and self._binding(node) is not False]
        values = [self._input(node, rank, function) or self._binding(node) for node in bindings]
        return bool(values) and all(v is True or (v is not None and self.forward(v, rank, function,
                                                                                 seen | {expr.value}))
                                    for v in values)

    def _input(self, name: cst.Name, rank: int, function) -> bool:
        """The name is the parameter ``construct`` takes its input by, and that input is a batch of ``rank``
        (assumed, or shown at every call of the cell in the file: :meth:`_OwnCells.input_batched`)."""
        params = function.params.params
        if (self.own is None or function.name.value != "construct" or len(params) < 2
                or params[1].name is not name or self.parents.get(id(name)) is not params[1]):
            return False
        return self.assume or self.own.input_batched(self.cls, rank)

    def _straight_line_before(self, name: cst.Name):
        """The statements before the read ``name`` in its straight-line code, nearest first, as ``(False,
        statement)``: its block's earlier statements, then, where that block is a branch of an ``if``/``elif``/
        ``else``, ``(True, the if statement)`` and the earlier statements of the block holding it, and so on. Nothing
        more at a loop (another pass may bind the name), a function's start, a with/try, or a read in a scope of its
        own (a lambda, a comprehension)."""
        node = name
        while node is not None and not isinstance(node, cst.SimpleStatementLine):
            node = self.parents.get(id(node))
            if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                return
        while node is not None:
            block = self.parents.get(id(node))
            if not hasattr(block, "body") or not isinstance(block.body, (list, tuple)):
                return
            body = list(block.body)
            for stmt in reversed(body[:body.index(node)]):
                yield False, stmt
            holder = self.parents.get(id(block))  # an IndentedBlock's statement
            if isinstance(holder, cst.Else):
                holder = self.parents.get(id(holder))
            while isinstance(holder, cst.If) and isinstance(self.parents.get(id(holder)), cst.If):
                holder = self.parents.get(id(holder))  # elif
            if not isinstance(holder, cst.If):
                return
            yield True, holder
            node = holder

    def _reaching(self, name: cst.Name):
        """The value of the one binding of ``name`` that reaches this read in straight-line code (``n = value``
        earlier in the read's block, or in a block holding it through ``if``/``else`` only), None when not
        known so."""
        for holder, stmt in self._straight_line_before(name):
            if holder or not any(n.value == name.value for n in all_nodes(stmt, cst.Name)):
                continue
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name.value):
                return small.value
            if any(n.value == name.value and self._binding(n) is not False for n in all_nodes(stmt, cst.Name)):
                return None  # bound another way (or in a branch, a loop)
        return None

    def _required_before(self, name: cst.Name, rank: int) -> bool:
        """An earlier statement of the read's straight-line code (its block, or a block holding it through
        ``if``/``else`` only) hands the same value, unconditionally, as the input of a layer that refuses anything but
        a batch of ``rank`` (torch's BatchNorm2d, a cell or sequence of the file that starts with one), with no
        binding of the name between: torch raised there on any other rank, so the read is of such a batch
        (``residual = self.residual(x)`` then ``shortcut = self.shortcut(x)``)."""
        for holder, stmt in self._straight_line_before(name):
            if holder:
                if any(n.value == name.value for n in all_nodes(stmt.test, cst.Name)):
                    return False  # an if whose test reads it
                continue
            reads = [n for n in all_nodes(stmt, cst.Name) if n.value == name.value]
            if not reads:
                continue
            if any(self._binding(n) is not False or isinstance(self.parents.get(id(n)), cst.AugAssign)
                   for n in reads) or not isinstance(stmt, cst.SimpleStatementLine):
                return False  # rebound, or read in a branch/loop: not followed
            for read in reads:
                arg = self.parents.get(id(read))
                call = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
                if not (isinstance(call, cst.Call) and call.args and call.args[0] is arg and not arg.star
                        and not arg.keyword):
                    continue
                needs = (self.own.needs_batch(self.cls, self_attribute_name(call.func), rank)
                         if self._own_kind(call) is not None else "")
                if (self._batch_only(call, rank) or needs == "needs") and self._unconditional(call):
                    return True
        return False

    def _ranked(self, call: cst.Call, rank: int) -> bool:
        """``x.view(a, b, c, d)``/``x.reshape(...)``/``ops.reshape(x, (a, b, c, d))``: a tensor of ``rank`` axes."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("view", "reshape"):
            return False
        args = call.args
        if isinstance(func.value, cst.Name) and func.value.value == "ops":
            args = call.args[1:]
        if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)) and not args[0].keyword:
            shape = args[0].value.elements
            return len(shape) == rank and not any(isinstance(e, cst.StarredElement) for e in shape)
        return len(args) == rank and not any(a.star or a.keyword for a in args)

    def _own_kind(self, call: cst.Call) -> str | None:
        """``self.NAME(...)`` of the file's own cell (``@Class``) or of a ``SequentialCell``."""
        kind = self.kinds.get(self_attribute_name(call.func) or "")
        return kind if self.own is not None and kind is not None and (
            kind.startswith("@") or kind == "SequentialCell") else None

    def _binding(self, name: cst.Name):
        """The value a Name node binds (``n = value``), None for another binding (a parameter, a loop target, an
        unpacking), False when the node is a read."""
        parent = self.parents.get(id(name))
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return None  # f(n=...): not the variable; counted as a binding of unknown value (the cautious side)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parents.get(id(parent))
            return assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
        if isinstance(parent, cst.AugAssign) and parent.target is name:
            return False  # n += e keeps n's rank (a batch broadcast with a smaller operand)
        if isinstance(parent, (cst.Param, cst.For, cst.CompFor, cst.AsName, cst.Element, cst.NamedExpr)):
            return None if not isinstance(parent, cst.Element) or self._in_target(parent) else False
        return False

    def _in_target(self, node) -> bool:
        while node is not None and not isinstance(node, cst.BaseSmallStatement):
            parent = self.parents.get(id(node))
            if isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)):
                return True
            node = parent
        return False

    def onward(self, expr, rank: int, depth: int = 0) -> bool:
        """The value ``expr`` computes reaches a batch-only layer of ``rank`` through rank-keeping steps."""
        if depth > 20:
            return False
        parent = self.parents.get(id(expr))
        if isinstance(parent, cst.Arg):
            call = self.parents.get(id(parent))
            if not (isinstance(call, cst.Call) and call.args and call.args[0] is parent):
                return False
            needs = (self.own.needs_batch(self.cls, self_attribute_name(call.func), rank)
                     if self._own_kind(call) is not None else "")
            if self._batch_only(call, rank) or needs == "needs" or _permutes(call, rank) \
                    or _swaps_missing_axis(call, 1, rank):
                return self._unconditional(call)
            return (needs == "identity" or self._keeps(call, rank)) and self.onward(call, rank, depth + 1)
        if isinstance(parent, cst.Attribute) and parent.value is expr:  # out.swapaxes(axis0=1, axis1=2)
            call = self.parents.get(id(parent))
            return isinstance(call, cst.Call) and call.func is parent and _swaps_missing_axis(call, 0, rank) \
                and self._unconditional(call)
        if isinstance(parent, cst.BinaryOperation):
            return self.onward(parent, rank, depth + 1)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target,
                                                                                       cst.Name):
            return self._next_reader(parent, parent.targets[0].target.value, rank, depth)
        return False

    def _unconditional(self, node) -> bool:
        """The node is evaluated whenever its statement runs (no conditional expression, lambda or comprehension
        holds it)."""
        while node is not None and not isinstance(node, cst.BaseSmallStatement):
            node = self.parents.get(id(node))
            if isinstance(node, (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp,
                                 cst.DictComp, cst.GeneratorExp)):
                return False
        return True

    def _next_reader(self, assign: cst.Assign, name: str, rank: int, depth: int) -> bool:
        line = self.parents.get(id(assign))
        block = self.parents.get(id(line))
        if not isinstance(line, cst.SimpleStatementLine) or not hasattr(block, "body"):
            return False
        body = list(block.body)
        return self.reads_onward(body[body.index(line) + 1:], name, rank, depth)

    def reads_onward(self, statements, name: str, rank: int, depth: int = 0) -> bool:
        """The first of ``statements`` to read ``name`` takes it, through rank-keeping steps, into a layer that
        refuses anything but a batch of ``rank`` (every statement before it straight-line)."""
        for stmt in statements:
            reads = [n for n in all_nodes(stmt, cst.Name) if n.value == name and self._binding(n) is False
                     and not (isinstance(self.parents.get(id(n)), cst.AugAssign))]
            if not isinstance(stmt, cst.SimpleStatementLine):
                return False  # a branch or a loop: not every run reads it there
            small = stmt.body[0] if len(stmt.body) == 1 else None
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                continue  # out += identity: the same rank, read on
            if reads:
                return any(self.onward(n, rank, depth + 1) for n in reads)
            if any(n.value == name for n in all_nodes(stmt, cst.Name)) or all_nodes(stmt, (cst.Return, cst.Raise)):
                return False  # rebound unread, or the function ends first
        return False

    def uses_batched(self, attr: str, rank: int, cell: bool = False, onward: bool = True) -> bool:
        """Every use of ``self.<attr>`` in the class is a call on a batch of ``rank`` (a cell's with its hx);
        ``onward=False``: shown by the input itself, not by where the output goes."""
        uses = 0
        for function in self.functions:
            for node in all_nodes(function, cst.Attribute):
                if self_attribute_name(node) != attr or self._enclosing(node) is not function:
                    continue
                parent = self.parents.get(id(node))
                if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Attribute) and parent.value is node):
                    continue  # a build, or a read of the layer's own attribute (self.conv.weight)
                if not (isinstance(parent, cst.Call) and parent.func is node and parent.args
                        and not parent.args[0].star and (not cell or len(parent.args) >= 2)):
                    return False
                uses += 1
                if not (self.forward(parent.args[0].value, rank, function)
                        or (onward and not cell and self.onward(parent, rank))):
                    return False
        return uses > 0

    def sequence_shown(self, attr: str, call: cst.Call) -> set[int]:
        """The builds of a ``self.<attr> = nn.SequentialCell(...)`` shown batched: a member whose members before it
        keep the rank of a batch the sequence is always called on, or after which, through rank-keeping members, a
        batch-only member of its rank comes."""
        from mindport.mappings.unbatched import BATCH_ONLY, BATCH_RANK, CELLS

        members = _sequence_members(call)
        kinds = [_member_kind(self.layer, m) for m in members]
        shown = set()
        for index, (member, kind) in enumerate(zip(members, kinds)):
            if kind not in BATCH_RANK or kind in CELLS or not kind.startswith(("Conv", "LPPool", "Adaptive")):
                continue
            rank = BATCH_RANK[kind]
            before = self._before_member(members, index, rank)
            if _between_batch_only(kinds, index, rank) or before == "batch" or (
                    before == "keeps" and self.uses_batched(attr, rank)):
                shown.add(id(member))
        return shown

    def _before_member(self, members: list, index: int, rank: int) -> str:
        """What the members before ``index`` of a sequence give it: ``batch``, a batch of ``rank`` whatever the
        sequence's input (the nearest member that does not keep the rank gives one: an own cell whose construct
        returns one, a layer that refuses anything else); ``keeps``, the sequence's input's rank (every member keeps
        it: rank-keeping layers, own cells whose construct returns a batch given one); '' otherwise."""
        if self.own is None:
            return "keeps" if all(_keeps_rank(_member_kind(self.layer, m), rank) for m in members[:index]) else ""
        return self.own.before_member(members, index, rank)


def _swaps_missing_axis(call: cst.Call, skip: int, rank: int) -> bool:
    """``ops.swapaxes(out, 1, 2)`` / ``out.swapaxes(axis0=1, axis1=2)`` (torch's ``transpose(1, 2)``; ``skip``: the
    arguments before the axes, the tensor of the function form) naming, as a literal integer, an axis an input one
    axis short of ``rank`` lacks (``k >= rank - 1`` or ``k < -(rank - 1)``): torch raises IndexError on the
    unbatched output, so every program torch runs gives it a batch there."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "swapaxes") or any(a.star for a in call.args):
        return False
    if skip and not (isinstance(func.value, cst.Name) and func.value.value == "ops"):
        return False
    axes = [a.value for a in call.args[skip:]]
    short = rank - 1
    for axis in axes:
        value = axis.expression if isinstance(axis, cst.UnaryOperation) and isinstance(axis.operator, cst.Minus) \
            else axis
        if isinstance(value, cst.Integer):
            k = -int(value.value) if value is not axis else int(value.value)
            if k >= short or k < -short:
                return True
    return False


def _permutes(call: cst.Call, rank: int) -> bool:
    """``ops.transpose(x, (0, 2, 3, 1))`` with a literal permutation of ``rank`` integers: it raises on any other rank,
    as the torch code it comes from does (``x.permute(0, 2, 3, 1)``, an einops pattern of that many axes)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "transpose" and isinstance(func.value, cst.Name)
            and func.value.value == "ops" and len(call.args) == 2 and not any(a.star or a.keyword for a in call.args)):
        return False
    perm = call.args[1].value
    return (isinstance(perm, (cst.Tuple, cst.List)) and len(perm.elements) == rank
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Integer) for e in perm.elements))


def _keeps_rank(kind, rank: int) -> bool:
    """A member of this kind gives an output of its input's rank (a convolution of ``rank`` too)."""
    from mindport.mappings.unbatched import BATCH_RANK

    return kind in _KEEP_RANK_LAYERS or (kind in BATCH_RANK and BATCH_RANK[kind] == rank and kind.startswith("Conv"))


def _member_kind(layer, member) -> "str | None":
    """The MindSpore class a ``SequentialCell`` member builds (``nn.BatchNorm2d(...).set_train()`` is the
    BatchNorm2d: ``Cell.set_train`` returns the cell), None for anything else."""
    if not isinstance(member, cst.Call):
        return None
    func = member.func
    if (isinstance(func, cst.Attribute) and func.attr.value == "set_train" and isinstance(func.value, cst.Call)
            and all(not a.star for a in member.args)):
        return layer(func.value.func)
    return layer(func)


def _between_batch_only(kinds: list, index: int, rank: int) -> bool:
    """In a sequence called whole, the member at ``index`` meets only a batch of ``rank`` in every program torch runs:
    its output goes, through rank-keeping members, into a member that refuses anything but such a batch (torch's
    BatchNorm2d/3d), or its input comes, through rank-keeping members, out of one (which gave a batch, or raised)."""
    from mindport.mappings.unbatched import BATCH_ONLY

    after = next((k for k in kinds[index + 1:] if not _keeps_rank(k, rank) or BATCH_ONLY.get(k) == rank), None)
    if BATCH_ONLY.get(after) == rank:
        return True
    for k in reversed(kinds[:index]):
        if BATCH_ONLY.get(k) == rank:
            return True
        if not _keeps_rank(k, rank):
            return False
    return False


class _OwnCells:
    """The file's own cell classes, for batch facts across them (:func:`unbatched_handling`): what a cell's
    ``construct`` returns (a batch whatever its input; a batch when its input is one), whether its input is a batch at
    every call the file makes of it (``self.block = Block(...)`` in another class of the file, every use of which is
    a call on a batch, or a member of a ``SequentialCell`` called on one), whether it refuses anything but a batch.
    The file is taken as the program: a class of it called with an unbatched input from another file is not seen
    (MindSpore's layer then raises on the rank; the port is not silently wrong)."""

    def __init__(self, module: cst.Module, layer, parents: dict[int, cst.CSTNode],
                 observed: dict[str, int] | None = None) -> None:
        self.module, self.layer, self.parents = module, layer, parents
        self.observed = observed or {}  # class -> its input's rank at every call of a recorded run
        self.every = all_nodes(module, cst.ClassDef)
        names: dict[str, int] = {}
        for cls in self.every:
            names[cls.name.value] = names.get(cls.name.value, 0) + 1
        self.classes = {c.name.value: c for c in self.every if names[c.name.value] == 1}
        self._kinds: dict[int, tuple[dict[str, str], dict[str, list]]] = {}
        self._flows: dict[tuple[int, bool], _BatchFlow] = {}
        self._memo: dict[tuple, bool] = {}
        self._busy: set[tuple] = set()

    def kind_of(self, value) -> str | None:
        """The MindSpore class a build names, ``@Class`` for the file's own class, None for anything else."""
        if not isinstance(value, cst.Call):
            return None
        if isinstance(value.func, cst.Name) and value.func.value in self.classes:
            return "@" + value.func.value
        return self.layer(value.func)

    def kinds(self, cls: cst.ClassDef) -> dict[str, str]:
        """``self.NAME`` -> what every build of it in the class is (left out when they differ or one is unknown)."""
        if id(cls) not in self._kinds:
            kinds: dict[str, str] = {}
            builds: dict[str, list] = {}
            for assign in all_nodes(cls, cst.Assign):
                attr = self_attribute_name(assign.targets[0].target) if len(assign.targets) == 1 else None
                if attr is None:
                    continue
                kind = self.kind_of(assign.value)
                if kind is None and self._built(cls, assign.value) is not None:
                    kind = "SequentialCell"  # built by a method of the class
                kinds[attr] = kind if kinds.get(attr, kind) == kind and kind is not None else ""
                builds.setdefault(attr, []).append(assign.value)
            self._kinds[id(cls)] = ({a: k for a, k in kinds.items() if k}, builds)
        return self._kinds[id(cls)][0]

    def flow(self, cls: cst.ClassDef, assume: bool = False) -> _BatchFlow:
        if (id(cls), assume) not in self._flows:
            self._flows[(id(cls), assume)] = _BatchFlow(cls, self.kinds(cls), self.layer, self.parents, self, assume)
        return self._flows[(id(cls), assume)]

    def _fact(self, key: tuple, compute) -> bool:
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return False  # a cycle: not shown
        self._busy.add(key)
        try:
            value = bool(compute())
        finally:
            self._busy.discard(key)
        self._memo[key] = value
        return value

    @staticmethod
    def _construct(cls: cst.ClassDef) -> cst.FunctionDef | None:
        return next((f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "construct"),
                    None)

    def _members(self, cls: cst.ClassDef, attr: str) -> list[list] | None:
        """The members of every build of ``self.<attr>`` (a ``SequentialCell`` of listed members), else None."""
        self.kinds(cls)
        sequences = []
        for build in self._kinds[id(cls)][1].get(attr, []):
            if (not isinstance(build, cst.Call) or self.kind_of(build) != "SequentialCell"
                    or any(a.star or a.keyword for a in build.args)
                    or (len(build.args) == 1 and isinstance(build.args[0].value, (cst.List, cst.Tuple))
                        and any(isinstance(e, cst.StarredElement) for e in build.args[0].value.elements))):
                return None
            sequences.append(_sequence_members(build))
        return sequences or None

    def _sequences(self, cls: cst.ClassDef, attr: str) -> list[tuple[list[str], bool, bool]] | None:
        """Every build of ``self.<attr>`` as (member kinds, in order, surely not empty): a ``SequentialCell`` of
        listed members, or one a method of the class builds from a list it appends to (:meth:`_built`)."""
        listed = self._members(cls, attr)
        if listed is not None:
            return [([self.kind_of(m) or "" for m in members], True, bool(members)) for members in listed]
        builds = self._kinds[id(cls)][1].get(attr, [])
        built = [self._built(cls, b) for b in builds]
        return built if built and all(b is not None for b in built) else None

    def _built(self, cls: cst.ClassDef, build) -> tuple[list[str], bool, bool] | None:
        """``self.X = self._make_layer(block, ...)`` whose method starts ``layers = []``, appends builds to it and
        returns ``nn.SequentialCell(*layers)``: the kinds it may append (a class the method takes as a parameter:
        every class the file passes there), in no known order; surely not empty when an append runs once in every
        call (a loop over ``[a] + ...`` or a non-empty list literal, the append straight in its body)."""
        from mindport.migrator.scopes import dotted_name

        if not (isinstance(build, cst.Call) and isinstance(build.func, cst.Attribute)
                and isinstance(build.func.value, cst.Name) and build.func.value.value == "self"):
            return None
        method = next((f for f in cls.body.body if isinstance(f, cst.FunctionDef)
                       and f.name.value == build.func.attr.value), None)
        returns = own_nodes(method, cst.Return) if method is not None else []
        if len(returns) != 1 or not isinstance(returns[0].value, cst.Call) or self.kind_of(
                returns[0].value) != "SequentialCell":
            return None
        args = returns[0].value.args
        if len(args) != 1 or args[0].star != "*" or not isinstance(args[0].value, cst.Name):
            return None
        name = args[0].value.value
        kinds, nonempty, start = [], False, False
        for node in own_nodes(method, cst.Name):
            if node.value != name or node is args[0].value:
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.AssignTarget) and not start:
                assign = self.parents.get(id(parent))
                start = (isinstance(assign, cst.Assign) and isinstance(assign.value, cst.List)
                         and not assign.value.elements and self.parents.get(id(self.parents.get(id(assign))))
                         is method.body)
                if start:
                    continue
            call = self.parents.get(id(parent)) if isinstance(parent, cst.Attribute) else None
            if not (isinstance(call, cst.Call) and call.func is parent and parent.attr.value == "append"
                    and len(call.args) == 1 and not call.args[0].star):
                return None
            value = call.args[0].value
            kind = self.kind_of(value)
            if kind is not None:
                kinds.append(kind)
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                classes = self._class_values(cls, method, value.func.value)
                if classes is None:
                    return None
                kinds += ["@" + c for c in classes]
            else:
                return None
            nonempty = nonempty or self._runs_once(method, call)
        return (list(dict.fromkeys(kinds)), False, nonempty) if start and dotted_name(returns[0].value.func) else None

    def _runs_once(self, method: cst.FunctionDef, call: cst.Call) -> bool:
        """The call's statement stands straight in the body of a loop of the method's body that runs at least once:
        over a non-empty list literal, or a name bound once to ``[a, ...] + ...``."""
        line = self.parents.get(id(self.parents.get(id(call))))
        block = self.parents.get(id(line))
        loop = self.parents.get(id(block))
        if not (isinstance(line, cst.SimpleStatementLine) and isinstance(loop, cst.For)
                and self.parents.get(id(loop)) is method.body):
            return False
        items = loop.iter
        if isinstance(items, cst.Name):
            binds = [n for n in own_nodes(method, cst.Name) if n.value == items.value
                     and isinstance(self.parents.get(id(n)), cst.AssignTarget)]
            if len(binds) != 1:
                return False
            items = self.parents.get(id(self.parents.get(id(binds[0])))).value
            while isinstance(items, cst.BinaryOperation) and isinstance(items.operator, cst.Add):
                items = items.left
        return isinstance(items, (cst.List, cst.Tuple)) and any(
            not isinstance(e, cst.StarredElement) for e in items.elements)

    def _class_values(self, cls: cst.ClassDef, method: cst.FunctionDef, param: str) -> list[str] | None:
        """The file's own classes a method's parameter holds: what every call ``self.<method>(...)`` of the class
        passes there, a class by name or ``__init__``'s parameter (every construction of the class in the file
        passing a class by name there); None when one is anything else or there is no call."""
        index = _param_index(method, param)
        if index is None:
            return None
        found = []
        calls = [c for c in all_nodes(cls, cst.Call) if isinstance(c.func, cst.Attribute)
                 and self_attribute_name(c.func) == method.name.value]
        for call in calls:
            value = _argument(call, index - 1, param)
            if isinstance(value, cst.Name) and value.value in self.classes:
                found.append(value.value)
                continue
            init = self.parents.get(id(call))
            while init is not None and not isinstance(init, cst.FunctionDef):
                init = self.parents.get(id(init))
            if not (isinstance(value, cst.Name) and init is not None and init.name.value == "__init__"):
                return None
            given = self._constructed_with(cls, init, value.value)
            if given is None:
                return None
            found += given
        return found or None

    def _constructed_with(self, cls: cst.ClassDef, init: cst.FunctionDef, param: str) -> list[str] | None:
        index = _param_index(init, param)
        if index is None or any(_bases_name(c, cls.name.value) for c in self.every):
            return None
        found = []
        for node in all_nodes(self.module, cst.Name):
            if node.value != cls.name.value:
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.ClassDef) and parent.name is node or _in_super(self.parents, parent):
                continue
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return None
            value = _argument(parent, index - 1, param)
            if not (isinstance(value, cst.Name) and value.value in self.classes):
                return None
            found.append(value.value)
        return found or None

    def _step(self, kind: str, rank: int) -> str:
        """``batch``: a member of this kind gives a batch of ``rank`` whatever its input; ``keeps``: it does when its
        input is one; ``needs``: it refuses anything but one (and keeps it); '' otherwise."""
        from mindport.mappings.unbatched import BATCH_ONLY, BATCH_RANK

        if BATCH_ONLY.get(kind) == rank:
            return "needs"
        if kind.startswith("@"):
            made, keeps = self.output_of(kind[1:], rank)
            return "batch" if made else "keeps" if keeps else ""
        if kind in _KEEP_RANK_LAYERS or (kind in BATCH_RANK and BATCH_RANK[kind] == rank and kind.startswith("Conv")):
            return "keeps"
        return ""

    def output(self, cls: cst.ClassDef, attr: str, rank: int) -> tuple[bool, bool]:
        """(made, keeps) of a call ``self.<attr>(x)`` in ``cls`` (the file's own cell or a ``SequentialCell``): made,
        its output is a batch of ``rank`` whatever ``x``; keeps, it is one when ``x`` is."""
        kind = self.kinds(cls).get(attr, "")
        if kind.startswith("@"):
            return self.output_of(kind[1:], rank)
        sequences = self._sequences(cls, attr)
        if not sequences:
            return False, False
        made, keeps = True, True
        for kinds, ordered, nonempty in sequences:
            steps = [self._step(k, rank) for k in kinds]
            if ordered:
                last = next((s for s in reversed(steps) if s != "keeps"), "keeps")
                made &= last in ("batch", "needs")
                keeps &= last in ("batch", "needs", "keeps")
            else:
                made &= nonempty and all(s in ("batch", "needs") for s in steps)
                keeps &= all(s in ("batch", "needs", "keeps") for s in steps)
        return made, keeps

    def output_of(self, name: str, rank: int) -> tuple[bool, bool]:
        cls = self.classes.get(name)
        if cls is None:
            return False, False
        made = self._fact(("made", name, rank), lambda: self._returns(cls, rank, False))
        return made, made or self._fact(("keeps", name, rank), lambda: self._returns(cls, rank, True))

    def _returns(self, cls: cst.ClassDef, rank: int, assume: bool) -> bool:
        construct = self._construct(cls)
        if construct is None or (assume and len(construct.params.params) < 2):
            return False
        flow = self.flow(cls, assume)
        returns = [r for r in all_nodes(construct, cst.Return) if flow._enclosing(r) is construct]
        return bool(returns) and all(r.value is not None and flow.forward(r.value, rank, construct) for r in returns)

    def needs_batch(self, cls: cst.ClassDef, attr: str, rank: int) -> str:
        """``needs``: ``self.<attr>(x)`` in ``cls`` refuses ``x`` unless it is a batch of ``rank``, in every program
        torch runs: a cell of the file whose ``construct`` takes its input, first thing, into such a layer through
        rank-keeping steps, or a ``SequentialCell`` whose members up to such a layer keep the rank; ``identity``:
        that or, empty, the identity (a sequence built in a loop that may not run); '' otherwise."""
        kind = self.kinds(cls).get(attr, "")
        if kind.startswith("@"):
            return "needs" if self._needs(kind[1:], rank) else ""
        sequences = self._sequences(cls, attr)
        if not sequences:
            return ""
        answer = "needs"
        for kinds, ordered, nonempty in sequences:
            if ordered and self._sequence_needs(kinds, rank):
                continue
            if ordered or not kinds or not all(self._needs_kind(k, rank) for k in kinds):
                return ""
            answer = answer if nonempty else "identity"
        return answer

    def _needs_kind(self, kind: str, rank: int) -> bool:
        return self._step(kind, rank) == "needs" or (kind.startswith("@") and self._needs(kind[1:], rank))

    def _sequence_needs(self, kinds: list[str], rank: int) -> bool:
        from mindport.mappings.unbatched import BATCH_RANK

        for kind in kinds:
            if self._needs_kind(kind, rank):
                return True
            if not (kind in _KEEP_RANK_LAYERS or (kind in BATCH_RANK and BATCH_RANK[kind] == rank
                                                  and kind.startswith("Conv"))):
                return False  # an own cell's output may have another rank than its input: not followed through
        return False

    def _needs(self, name: str, rank: int) -> bool:
        cls = self.classes.get(name)
        construct = self._construct(cls) if cls is not None else None
        if construct is None or len(construct.params.params) < 2:
            return False
        param = construct.params.params[1].name.value
        return self._fact(("needs", name, rank),
                          lambda: self.flow(cls).reads_onward(list(construct.body.body), param, rank))

    def input_batched(self, cls: cst.ClassDef, rank: int) -> bool:
        """Every call the file makes of the cell ``cls`` is on a batch of ``rank``: it is built only as
        ``self.NAME = Cls(...)`` in another class whose every use of ``self.NAME`` is a call on such a batch, or as a
        member of a ``SequentialCell`` built so, called on one, after members that keep it; the class has no method
        besides ``__init__`` and ``construct`` and no subclass in the file. Or: every call of its ``forward`` in a
        recorded torch run had a first input of ``rank`` (``observed``; the file's one class of that name)."""
        name = cls.name.value
        if self.classes.get(name) is not cls:
            return False
        if self.observed.get(name) == rank:
            return True
        return self._fact(("input", name, rank), lambda: self._input_batched(cls, rank))

    def _input_batched(self, cls: cst.ClassDef, rank: int) -> bool:
        name = cls.name.value
        methods = [f.name.value for f in cls.body.body if isinstance(f, cst.FunctionDef)]
        if any(m not in ("__init__", "construct") for m in methods) or any(_bases_name(c, name) for c in self.every):
            return False
        uses = 0
        for node in all_nodes(self.module, cst.Name):
            if node.value != name:
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.ClassDef) and parent.name is node or _in_super(self.parents, parent):
                continue
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return False  # a base, a value handed on, a type test: not followed
            looped = self.loop_member_batched(parent, rank)
            if looped is None:
                looped = self.wrapped_batched(parent, rank)
            if looped is not None:
                if not looped:
                    return False
                uses += 1
                continue
            holder = self.parents.get(id(parent))
            if isinstance(holder, cst.Element):
                holder = self.parents.get(id(holder))  # SequentialCell([...])
            if isinstance(holder, cst.Arg):
                holder = self.parents.get(id(holder))
            sequence = holder if isinstance(holder, cst.Call) and self.kind_of(holder) == "SequentialCell" else None
            if sequence is not None and self.appended_sequence(sequence) is not None:
                members = _sequence_members(sequence)
                if parent not in members or self.before_member(members, members.index(parent), rank) != "batch":
                    return False
                uses += 1
                continue
            assign = self.parents.get(id(sequence)) if sequence is not None else holder
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                return False
            attr = self_attribute_name(assign.targets[0].target)
            owner = self._class_of(assign)
            if attr is None or owner is None or owner is cls:
                return False
            if sequence is None:
                if self.kinds(owner).get(attr) != "@" + name:
                    return False
            else:
                members = _sequence_members(sequence)
                if (self.kinds(owner).get(attr) != "SequentialCell" or parent not in members
                        or self._members(owner, attr) is None):
                    return False
                before = [self._step(self.kind_of(m) or "", rank) for m in members[:members.index(parent)]]
                last = next((s for s in reversed(before) if s != "keeps"), "keeps")
                if last in ("batch", "needs"):
                    uses += 1
                    continue
                if last != "keeps":
                    return False
            if not self.flow(owner).uses_batched(attr, rank, onward=False):
                return False
            uses += 1
        return uses > 0

    def before_member(self, members: list, index: int, rank: int) -> str:
        """See :meth:`_BatchFlow._before_member`."""
        for member in reversed(members[:index]):
            step = self._step(self.kind_of(member) or _member_kind(self.layer, member) or "", rank)
            if step != "keeps":
                return "batch" if step in ("batch", "needs") else ""
        return "keeps"

    def looped_sequences_shown(self) -> set[int]:
        """Builds shown batched in a ``SequentialCell`` a module-level function returns (NesT's ``Aggregate``: Conv2d,
        LayerNorm, MaxPool2d) when every mention of the function in the file is a call that is a member of a list a
        loop unpacks, every call of whose name is on a batch (:meth:`loop_member_batched`), and the members before
        the build keep that batch's rank (or give one: :meth:`before_member`)."""
        from mindport.mappings.unbatched import BATCH_RANK, CELLS

        if any(isinstance(s, cst.SimpleStatementLine) and any(
                isinstance(t, cst.Assign) and any(isinstance(a.target, cst.Name) and a.target.value == "__all__"
                                                  for a in t.targets) for t in s.body) for s in self.module.body):
            return set()  # handed to other files by name
        shown: set[int] = set()
        for function in self.module.body:
            if not isinstance(function, cst.FunctionDef) or function.decorators:
                continue
            sequences = [r.value for r in own_nodes(function, cst.Return) if isinstance(r.value, cst.Call)
                         and self.kind_of(r.value) == "SequentialCell"
                         and not any(a.star or a.keyword for a in r.value.args)]
            name = function.name.value
            calls = []
            for node in all_nodes(self.module, cst.Name) if sequences else ():
                parent = self.parents.get(id(node))
                if node.value != name or (isinstance(parent, cst.FunctionDef) and parent.name is node):
                    continue
                if not (isinstance(parent, cst.Call) and parent.func is node):
                    calls = []
                    break
                calls.append(parent)
            for sequence in sequences if calls else ():
                members = _sequence_members(sequence)
                for index, member in enumerate(members):
                    kind = _member_kind(self.layer, member)
                    if (kind not in BATCH_RANK or kind in CELLS
                            or not kind.startswith(("Conv", "LPPool", "Adaptive"))):
                        continue
                    rank = BATCH_RANK[kind]
                    before = self.before_member(members, index, rank)
                    if before == "batch" or (before == "keeps" and all(
                            self.loop_member_batched(call, rank) for call in calls)):
                        shown.add(id(member))
        return shown

    def loop_member_batched(self, build: cst.Call, rank: int) -> bool | None:
        """A cell built as a member of a list of lists that a for loop unpacks (vit-pytorch's NesT, LeViT, SepViT:
        ``layers.append(nn.CellList([Attention(...), FeedForward(...)]))``, ``self.layers = layers``, then
        ``for attn, ff in self.layers: x = attn(x) + x``): True when every call of the name the loop unpacks at the
        member's place is on a batch of ``rank`` (so every cell put there is), False when not shown, None when the
        build is not such a member. The member may be a branch of a conditional expression (``Aggregate(...) if not
        is_last else nn.Identity()``: only the cell put there is called by that name). The container (``self.NAME``,
        or a local list stored there once) must only be built empty, appended lists of members of one length, and
        iterated by ``for`` (directly or as a positional argument of ``zip``) with the member's place unpacked into
        plain names; each such name only called, never handed on or rebound."""
        place = self._list_member_place(build)
        if place is None:
            return None
        owner, attr, index, length = place
        loops = self._container_loops(owner, attr, length)
        if loops is None:
            return False
        calls = 0
        for function, target in loops:
            name = target.elements[index].value.value
            for node in all_nodes(function, cst.Name):
                if node.value != name or node is target.elements[index].value:
                    continue
                call = self.parents.get(id(node))
                if (isinstance(call, cst.Attribute) and call.attr is node) or (
                        isinstance(call, cst.Arg) and call.keyword is node):
                    continue  # x.attn, f(attn=...): not the variable
                if not (isinstance(call, cst.Call) and call.func is node and call.args and not call.args[0].star
                        and not call.args[0].keyword):
                    return False
                if not self.flow(owner).forward(call.args[0].value, rank, function):
                    return False
                calls += 1
        return calls > 0

    def _list_member_place(self, build: cst.Call):
        """(owner class, attribute, place, length) of a build that is the member at ``place`` of a list display of
        ``length`` members wrapped in ``nn.CellList(...)`` and appended to a container the owner stores as
        ``self.<attribute>``; None otherwise."""
        node = build
        holder = self.parents.get(id(node))
        if isinstance(holder, cst.IfExp) and node in (holder.body, holder.orelse):
            node, holder = holder, self.parents.get(id(holder))
        listed = self.parents.get(id(holder)) if isinstance(holder, cst.Element) and holder.value is node else None
        arg = self.parents.get(id(listed)) if isinstance(listed, cst.List) else None
        inner = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
        if not (isinstance(inner, cst.Call) and self.kind_of(inner) == "CellList" and len(inner.args) == 1
                and inner.args[0] is arg and not arg.star and not arg.keyword
                and not any(isinstance(e, cst.StarredElement) for e in listed.elements)):
            return None
        arg = self.parents.get(id(inner))
        append = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
        if not (isinstance(append, cst.Call) and len(append.args) == 1 and append.args[0] is arg and not arg.star
                and isinstance(append.func, cst.Attribute) and append.func.attr.value == "append"):
            return None
        owner = self._class_of(append)
        function = self.parents.get(id(append))
        while function is not None and not isinstance(function, cst.FunctionDef):
            function = self.parents.get(id(function))
        if owner is None or function is None:
            return None
        receiver = append.func.value
        attr = self_attribute_name(receiver)
        if attr is None and isinstance(receiver, cst.Name):
            attr = self._stored_local(function, receiver.value)
        if attr is None:
            return None
        return owner, attr, listed.elements.index(holder), len(listed.elements)

    def _empty_container(self, value) -> bool:
        return (isinstance(value, cst.List) and not value.elements) or (
            isinstance(value, cst.Call) and self.kind_of(value) == "CellList" and (not value.args or (
                len(value.args) == 1 and isinstance(value.args[0].value, cst.List)
                and not value.args[0].value.elements and not value.args[0].star)))

    def _variable_mentions(self, function: cst.FunctionDef, name: str):
        """(node, parent) of every mention of the local ``name`` in ``function``: not an attribute's or a keyword
        argument's name (``self.layers``, ``f(layers=...)``)."""
        for node in all_nodes(function, cst.Name):
            if node.value != name:
                continue
            parent = self.parents.get(id(node))
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                    isinstance(parent, cst.Arg) and parent.keyword is node):
                continue
            yield node, parent

    def _appended_to(self, node: cst.Name, parent) -> bool:
        """The mention ``node`` is the receiver of an ``append`` call (``layers.append(...)``)."""
        return (isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "append"
                and isinstance(self.parents.get(id(parent)), cst.Call))

    def _stored_local(self, function: cst.FunctionDef, name: str) -> str | None:
        """``name = nn.CellList([])`` (or ``[]``) once in the function's body, ``self.NAME = name`` (once, or again
        under the same NAME), and every other mention of ``name`` the receiver of an ``append``: NAME."""
        start = stored = None
        for node, parent in self._variable_mentions(function, name):
            assign = self.parents.get(id(parent)) if isinstance(parent, cst.AssignTarget) else parent
            if isinstance(parent, cst.AssignTarget) and isinstance(assign, cst.Assign) and len(assign.targets) == 1:
                if start is not None or not self._empty_container(assign.value):
                    return None
                start = assign
            elif (isinstance(assign, cst.Assign) and assign.value is node and len(assign.targets) == 1
                  and self_attribute_name(assign.targets[0].target) is not None):
                attr = self_attribute_name(assign.targets[0].target)
                if stored is not None and stored != attr:
                    return None  # one local stored again under the same name is the same list (the converter
                stored = attr    # stores a hoisted list again where torch registers it: test_track29_causes)
            elif not self._appended_to(node, parent):
                return None
        line = self.parents.get(id(start)) if start is not None else None
        return stored if line is not None and self.parents.get(id(line)) is function.body else None

    def _container_loops(self, owner: cst.ClassDef, attr: str, length: int):
        """The (function, unpacking target) of every ``for`` over ``self.<attr>`` in the owner, when every mention of it
        there is a build of an empty container (or of a local one, :meth:`_stored_local`), an ``append`` of a
        ``nn.CellList([...])`` of ``length`` members, ``len(self.<attr>)``, or such a loop; None otherwise."""
        loops = []
        for node in all_nodes(owner, cst.Attribute):
            if self_attribute_name(node) != attr:
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.AssignTarget):
                assign = self.parents.get(id(parent))
                value = assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
                function = self._function_of(assign)
                if not (self._empty_container(value) or (
                        isinstance(value, cst.Name) and function is not None
                        and self._stored_local(function, value.value) == attr)):
                    return None
                continue
            append = self.parents.get(id(parent)) if isinstance(parent, cst.Attribute) else None
            if isinstance(append, cst.Call) and parent.attr.value == "append" and append.func is parent:
                if not self._appends_lists(append, length):
                    return None
                continue
            call = self.parents.get(id(parent)) if isinstance(parent, cst.Arg) else None
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "len"
                    and len(call.args) == 1 and call.args[0] is parent and not parent.star):
                continue  # len(self.layers): a count, the members untouched
            target = self._loop_target(node, length)
            if target is None:
                return None
            loops.append(target)
        for function in all_nodes(owner, cst.FunctionDef):  # the local containers' appends
            for append in all_nodes(function, cst.Call):
                func = append.func
                if (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)
                        and self._stored_local(function, func.value.value) == attr
                        and not self._appends_lists(append, length)):
                    return None
        return loops or None

    def _appends_lists(self, append: cst.Call, length: int) -> bool:
        value = append.args[0].value if len(append.args) == 1 and not append.args[0].star else None
        return (isinstance(value, cst.Call) and self.kind_of(value) == "CellList" and len(value.args) == 1
                and not value.args[0].star and not value.args[0].keyword and isinstance(value.args[0].value, cst.List)
                and len(value.args[0].value.elements) == length
                and not any(isinstance(e, cst.StarredElement) for e in value.args[0].value.elements))

    def _loop_target(self, node: cst.Attribute, length: int | None):
        """``for a, b in self.X`` / ``for i, (a, b) in zip(..., self.X)``: (function, the tuple of ``length`` plain
        names unpacked from ``self.X``'s items; any number for None), else None."""
        parent = self.parents.get(id(node))
        loop, target = parent, None
        if isinstance(loop, cst.For) and loop.iter is node:
            target = loop.target
        elif isinstance(parent, cst.Arg) and not parent.star and not parent.keyword:
            call = self.parents.get(id(parent))
            loop = self.parents.get(id(call))
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "zip"
                    and isinstance(loop, cst.For) and loop.iter is call
                    and not any(a.star or a.keyword for a in call.args)
                    and isinstance(loop.target, (cst.Tuple, cst.List))
                    and len(loop.target.elements) == len(call.args)
                    and not any(isinstance(e, cst.StarredElement) for e in loop.target.elements)):
                target = loop.target.elements[call.args.index(parent)].value
        function = self._function_of(loop) if target is not None else None
        if not (isinstance(target, (cst.Tuple, cst.List)) and function is not None
                and (length is None or len(target.elements) == length)
                and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)):
            return None
        return function, target

    def loop_call_output(self, owner: cst.ClassDef, call: cst.Call, rank: int) -> tuple[bool, bool]:
        """(made, keeps) of ``a(x)`` where ``a`` is a name a ``for`` loop of the owner unpacks from the items of a list
        of lists of cells (:meth:`loop_member_batched`'s container, vit-pytorch's Twins-SVT: ``for local_attn, ff1,
        global_attn, ff2 in self.layers: x = local_attn(x)``): made, every cell the file puts at that place gives a
        batch of ``rank`` whatever its input; keeps, each gives one when its input is one (an own cell whose
        construct returns ``self.fn(x) + x``, ``nn.Identity()``). The name must be bound by that loop alone and only
        ever called in the function; (False, False) otherwise."""
        name = call.func.value
        function = self._function_of(call)
        if function is None or self._class_of(function) is not owner:
            return False, False
        found = None
        for node in all_nodes(function, cst.Attribute):
            attr = self_attribute_name(node)
            looped = self._loop_target(node, None) if attr is not None else None
            if looped is None or looped[0] is not function:
                continue
            for index, element in enumerate(looped[1].elements):
                if element.value.value == name:
                    if found is not None:
                        return False, False  # two loops bind it
                    found = (attr, index, len(looped[1].elements), element.value)
        if found is None:
            return False, False
        attr, index, length, bound = found
        for node in all_nodes(function, cst.Name):
            if node.value != name or node is bound:
                continue
            parent = self.parents.get(id(node))
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                    isinstance(parent, cst.Arg) and parent.keyword is node):
                continue
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return False, False  # rebound, handed on: other values may reach the call
        if self._container_loops(owner, attr, length) is None:
            return False, False
        steps = []
        for listed in self._appended_lists(owner, attr):
            value = listed.elements[index].value
            for member in (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,):
                steps.append(self._step(self.kind_of(member) or _member_kind(self.layer, member) or "", rank))
        made = bool(steps) and all(s in ("batch", "needs") for s in steps)
        return made, made or (bool(steps) and all(s in ("batch", "needs", "keeps") for s in steps))

    def _appended_lists(self, owner: cst.ClassDef, attr: str) -> list:
        """The list displays of the ``nn.CellList([...])`` appended to ``self.<attr>`` (or to a local list stored
        there, :meth:`_stored_local`) in the owner."""
        found = []
        for function in all_nodes(owner, cst.FunctionDef):
            for append in all_nodes(function, cst.Call):
                func = append.func
                if not (isinstance(func, cst.Attribute) and func.attr.value == "append" and len(append.args) == 1):
                    continue
                receiver = func.value
                if self_attribute_name(receiver) == attr or (
                        isinstance(receiver, cst.Name) and self._stored_local(function, receiver.value) == attr):
                    value = append.args[0].value
                    if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.List):
                        found.append(value.args[0].value)
        return found

    def wrapped_batched(self, build: cst.Call, rank: int) -> bool | None:
        """A layer handed to the constructor of a wrapper cell of the file (vit-pytorch's ``Residual(nn.Conv2d(...))``,
        ``Residual(FeedForward(...))``), whose ``__init__`` only stores the parameter as ``self.A = fn`` (its one
        build of ``self.A``) and whose every use of ``self.A`` is a call on a batch of ``rank``
        (``return self.fn(x, **kwargs) + x``, ``x`` the wrapper's input, batched at every call the file makes of the
        wrapper): True; False when not shown; None when the build is not such an argument."""
        arg = self.parents.get(id(build))
        call = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
        if not (isinstance(call, cst.Call) and arg.value is build and not arg.star):
            return None
        kind = self.kind_of(call)
        wrapper = self.classes.get(kind[1:]) if kind and kind.startswith("@") else None
        if wrapper is None:
            return None
        name = wrapper.name.value
        methods = {f.name.value: f for f in wrapper.body.body if isinstance(f, cst.FunctionDef)}
        init = methods.get("__init__")
        if (init is None or set(methods) - {"__init__", "construct"} or any(_bases_name(c, name) for c in self.every)
                or any(a.star for a in call.args)):
            return False
        params = init.params.params
        if arg.keyword is not None:
            param = next((p for p in [*params[1:], *init.params.kwonly_params]
                          if p.name.value == arg.keyword.value), None)
        else:
            position = [a for a in call.args if a.keyword is None].index(arg) + 1
            param = params[position] if position < len(params) else None
        if param is None:
            return False
        stored = None
        for node in all_nodes(init, cst.Name):
            if node.value != param.name.value or node is param.name:
                continue
            parent = self.parents.get(id(node))
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                    isinstance(parent, cst.Arg) and parent.keyword is node):
                continue
            line = self.parents.get(id(parent))
            if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1
                    and stored is None and self.parents.get(id(line)) is init.body):
                return False  # read another way, or stored twice
            stored = self_attribute_name(parent.targets[0].target)
            if stored is None:
                return False
        builds = [a for a in all_nodes(wrapper, cst.AssignTarget) if self_attribute_name(a.target) == stored]
        if stored is None or len(builds) != 1:
            return False
        return self._fact(("wrapped", name, stored, rank),
                          lambda: self.flow(wrapper).uses_batched(stored, rank, onward=False))

    def appended_sequence(self, sequence: cst.Call) -> tuple[cst.ClassDef, str] | None:
        """(owner, attribute) of a ``nn.SequentialCell(...)`` display appended to a local list that is then starred
        into the sequence the owner stores as ``self.<attribute>`` (vit-pytorch's Twins-SVT: ``layers = []``,
        ``layers.append(nn.SequentialCell(PatchEmbedding(...), Transformer(...), PEG(...), Transformer(...)))`` per
        stage, ``self.layers = nn.SequentialCell(*layers, pool, ...)``): the display then runs only whole, its members
        in order, inside that sequence. The list is bound once, first thing, to ``[]`` in the function's body and
        otherwise only appended to and starred there once; every mention of ``self.<attribute>`` in the owner is that
        build or a call of it. None otherwise."""
        arg = self.parents.get(id(sequence))
        append = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
        if not (isinstance(append, cst.Call) and len(append.args) == 1 and append.args[0] is arg and not arg.star
                and not arg.keyword and isinstance(append.func, cst.Attribute) and append.func.attr.value == "append"
                and isinstance(append.func.value, cst.Name) and self.kind_of(sequence) == "SequentialCell"):
            return None
        name = append.func.value.value
        function = self._function_of(append)
        if function is None:
            return None
        start = outer = None
        for node, parent in self._variable_mentions(function, name):
            if isinstance(parent, cst.AssignTarget):
                assign = self.parents.get(id(parent))
                if (start is not None or not isinstance(assign, cst.Assign) or len(assign.targets) != 1
                        or not (isinstance(assign.value, cst.List) and not assign.value.elements)
                        or self.parents.get(id(self.parents.get(id(assign)))) is not function.body):
                    return None
                start = assign
            elif self._appended_to(node, parent):
                continue
            elif isinstance(parent, cst.Arg) and parent.star == "*" and outer is None:
                outer = self.parents.get(id(parent))
                if not (isinstance(outer, cst.Call) and self.kind_of(outer) == "SequentialCell"
                        and sum(a.star == "*" for a in outer.args) == 1):
                    return None
            else:
                return None
        store = self.parents.get(id(outer)) if outer is not None else None
        if start is None or not (isinstance(store, cst.Assign) and len(store.targets) == 1):
            return None
        attr, owner = self_attribute_name(store.targets[0].target), self._class_of(function)
        if attr is None or owner is None:
            return None
        for node in all_nodes(owner, cst.Attribute):
            if self_attribute_name(node) != attr:
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.AssignTarget) and self.parents.get(id(parent)) is store:
                continue
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return None  # indexed, iterated, handed on: a member may be reached alone
        return owner, attr

    def appended_sequences_shown(self) -> set[int]:
        """Builds shown batched in a ``SequentialCell`` display put in a starred list (:meth:`appended_sequence`):
        the members before the build give a batch of its rank whatever the display's input (:meth:`before_member`),
        or a member that refuses anything but one comes before or after it through rank-keeping members."""
        from mindport.mappings.unbatched import BATCH_RANK, CELLS

        shown: set[int] = set()
        for sequence in all_nodes(self.module, cst.Call):
            if self.kind_of(sequence) != "SequentialCell" or any(a.star or a.keyword for a in sequence.args):
                continue
            if self.appended_sequence(sequence) is None:
                continue
            members = _sequence_members(sequence)
            kinds = [_member_kind(self.layer, m) for m in members]
            for index, (member, kind) in enumerate(zip(members, kinds)):
                if kind not in BATCH_RANK or kind in CELLS or not kind.startswith(("Conv", "LPPool", "Adaptive")):
                    continue
                rank = BATCH_RANK[kind]
                if self.before_member(members, index, rank) == "batch" or _between_batch_only(kinds, index, rank):
                    shown.add(id(member))
        return shown

    def wrapped_shown(self, builds: list) -> set[int]:
        """MindSpore layers handed to a wrapper cell of the file and shown batched there (:meth:`wrapped_batched`)."""
        from mindport.mappings.unbatched import BATCH_RANK, CELLS

        return {id(b) for b in builds if (self.layer(b.func) not in CELLS
                                          and self.wrapped_batched(b, BATCH_RANK[self.layer(b.func)]))}

    def _function_of(self, node) -> cst.FunctionDef | None:
        while node is not None and not isinstance(node, cst.FunctionDef):
            node = self.parents.get(id(node))
        return node

    def _class_of(self, node) -> cst.ClassDef | None:
        while node is not None and not isinstance(node, cst.ClassDef):
            node = self.parents.get(id(node))
        return node




def _in_super(parents: dict[int, cst.CSTNode], parent) -> bool:
    """``parent`` (a name's parent) is the argument of ``super(Cls, self)``."""
    call = parents.get(id(parent)) if isinstance(parent, cst.Arg) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "super"


def _bases_name(cls: cst.ClassDef, name: str) -> bool:
    return any(isinstance(b.value, cst.Name) and b.value.value == name for b in cls.bases)


def _param_index(function: cst.FunctionDef, name: str) -> int | None:
    """The position of a plain parameter (``self`` is 0), None for another kind or a default."""
    params = function.params.params
    return next((i for i, p in enumerate(params) if p.name.value == name and p.default is None), None)


def _argument(call: cst.Call, index: int, name: str):
    """The value a call passes for the parameter at ``index`` (after self) named ``name``, None when not plainly."""
    if any(a.star for a in call.args):
        return None
    keyword = [a.value for a in call.args if a.keyword is not None and a.keyword.value == name]
    if keyword:
        return keyword[0]
    positional = [a.value for a in call.args if a.keyword is None]
    return positional[index] if index < len(positional) else None

def _concatenated(call: cst.Call) -> list:
    """The listed tensors ``ops.cat``/``ops.concat`` joins (torch joins tensors of one rank only), else []."""
    func = call.func
    if (isinstance(func, cst.Attribute) and func.attr.value in ("cat", "concat") and isinstance(func.value, cst.Name)
            and func.value.value == "ops" and isinstance(call.args[0].value, (cst.List, cst.Tuple))):
        return [e for e in call.args[0].value.elements if not isinstance(e, cst.StarredElement)]
    return []

def _sequence_members(call: cst.Call) -> list:
    if len(call.args) == 1 and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
        return [e.value for e in call.args[0].value.elements]
    return [a.value for a in call.args]


def type_test_tuples(function: cst.FunctionDef) -> list[cst.Tuple]:
    """Tuples bound once to a local name the function only ever reads as the classes of a type test
    (``bn_types = (nn.BatchNorm1d, nn.BatchNorm2d)`` ... ``isinstance(m, bn_types)``, ``type(m) in bn_types``): their
    members are compared with classes, never called or built, so each may be MindSpore's class itself (what a runtime
    adapter of it tests and equals)."""
    bindings: dict[str, list] = {}
    for node in own_nodes(function, cst.CSTNode):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for name in target_names(t.target):
                    bindings.setdefault(name, []).append(node if len(node.targets) == 1 else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            for name in target_names(node.target):
                bindings.setdefault(name, []).append(None)
        elif isinstance(node, cst.AsName):
            for name in target_names(node.name):
                bindings.setdefault(name, []).append(None)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            for item in node.names:
                bindings.setdefault(item.name.value, []).append(None)
    candidates = {name: nodes[0] for name, nodes in bindings.items()
                  if len(nodes) == 1 and nodes[0] is not None and isinstance(nodes[0].value, cst.Tuple)
                  and isinstance(nodes[0].targets[0].target, cst.Name)}
    params = function.params
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        candidates.pop(p.name.value, None)
    if not candidates:
        return []
    eligible = dict.fromkeys(candidates, True)

    def read(stack: list, node: cst.Name) -> None:
        parent = stack[-1]
        if not (isinstance(parent, cst.AssignTarget) and candidates[node.value].targets[0] is parent) \
                and not _type_test_read(stack, node):  # the binding itself, or a type test
            eligible[node.value] = False

    _name_reads(function, set(eligible), lambda name: eligible.__setitem__(name, False), read)
    return [candidates[name].value for name, ok in eligible.items() if ok]


def _type_test_read(stack: list, node: cst.Name) -> bool:
    """``isinstance(m, node)`` / ``issubclass(c, node)`` (the builtins, two arguments) or ``x in node``."""
    parent = stack[-1]
    if isinstance(parent, cst.ComparisonTarget):
        return parent.comparator is node and isinstance(parent.operator, (cst.In, cst.NotIn))
    if isinstance(parent, cst.Arg) and len(stack) > 1 and isinstance(stack[-2], cst.Call):
        call = stack[-2]
        return (isinstance(call.func, cst.Name) and call.func.value in ("isinstance", "issubclass")
                and len(call.args) == 2 and call.args[1] is parent and parent.keyword is None and not parent.star)
    return False


# ------------------------------------------------------------------------------------------------ torch views

@dataclass(frozen=True)
class ViewChain:
    """The torch views an in-place call is made through (``x.narrow(1, 0, 2).copy_(y)``): ``names``, innermost first
    (``("narrow",)``; ``[]`` for an index), and ``steps``, the source of the steps
    :func:`mindport.runtime.inplace.view_update` takes (``(("narrow", (1, 0, 2), {}),)``), or None when an argument
    is computed by a call (evaluated again there, it could differ)."""
    names: tuple
    steps: "str | None"


def view_chain(expr: cst.BaseExpression, scope) -> "ViewChain | None":
    """``expr`` as a chain of torch views of a base (mindport/mappings/views.py: ``x.narrow(...)``, ``w.data.diagonal()``,
    ``x[:, 1:].t()``, ``x.T``, one piece of a split ``b.chunk(4)[1]``), when it holds at least one view that is neither an index nor ``.data`` (those are
    written back by an assignment, ``x[i] = ...``, and ``.data`` shares a Parameter's storage); None otherwise."""
    from mindport.mappings.views import PIECE_METHODS, VIEW_ATTRIBUTES, VIEW_METHODS

    names, steps, plain = [], [], True
    node = expr
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and scope.resolve(node.func) is None \
                and (node.func.attr.value in VIEW_METHODS
                     or (node.func.attr.value in PIECE_METHODS and names and names[-1] == "[]")):  # b.chunk(4)[1]
            name = node.func.attr.value
            args = [a for a in node.args]
            plain = plain and all(not a.star and _plain_argument(a.value, scope) for a in args)
            positional = [code_of(a.value) for a in args if a.keyword is None]
            keywords = ", ".join(f"{a.keyword.value!r}: {code_of(a.value)}" for a in args if a.keyword is not None)
            steps.append(f"({name!r}, ({', '.join(positional)}{',' * (len(positional) == 1)}), {{{keywords}}})")
            node = node.func.value
        elif isinstance(node, cst.Attribute) and node.attr.value in VIEW_ATTRIBUTES:
            name = node.attr.value
            steps.append(f"({name!r}, (), {{}})")
            node = node.value
        elif isinstance(node, cst.Subscript) and not _string_key(node):
            name = "[]"
            index = _index_value(node, scope)
            plain = plain and index is not None
            steps.append(f"('getitem', ({index},), {{}})")
            node = node.value
        else:
            break
        names.append(name)
    if not any(n not in ("[]", "data") for n in names):
        return None
    return ViewChain(tuple(reversed(names)), f"({', '.join(reversed(steps))},)" if plain else None)


def _string_key(subscript: cst.Subscript) -> bool:
    elements = subscript.slice
    return len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
        and isinstance(elements[0].slice.value, (cst.SimpleString, cst.ConcatenatedString))


def _plain_argument(node: cst.BaseExpression, scope) -> bool:
    """An argument that reads the same when evaluated again: no call, no torch name."""
    for inner in [node, *all_nodes(node, cst.CSTNode)]:
        if isinstance(inner, cst.Call) and not (isinstance(inner.func, cst.Name) and inner.func.value in ("len", "int")):
            return False
        if isinstance(inner, (cst.Name, cst.Attribute)) and scope.resolve_torch(inner) is not None:
            return False
    return True


def _index_value(subscript: cst.Subscript, scope) -> "str | None":
    """The index of ``x[...]`` as a value (``x[:, 1:]`` -> ``(slice(None, None, None), slice(1, None, None))``), or
    None when a part is computed by a call."""
    parts = []
    for element in subscript.slice:
        part = element.slice
        if isinstance(part, cst.Index):
            if part.star is not None or not _plain_argument(part.value, scope):
                return None
            parts.append(code_of(part.value))
        else:
            bounds = [part.lower, part.upper, part.step]
            if any(b is not None and not _plain_argument(b, scope) for b in bounds):
                return None
            parts.append(f"slice({', '.join(code_of(b) if b is not None else 'None' for b in bounds)})")
    return parts[0] if len(parts) == 1 else f"({', '.join(parts)},)"


# ------------------------------------------------------------------------------------------- int64 tensors

# torch functions (and the same-named methods) whose result is int64 whatever they are given (no dtype/out argument)
_INT64_FUNCTIONS = frozenset({"multinomial", "argmax", "argmin", "argsort", "randperm", "nonzero"})
# methods of no argument whose result is int64
_INT64_METHODS = frozenset({"long"})
# torch calls returning (values, indices): the indices are int64
_INDEX_PAIRS = frozenset({"topk", "sort", "kthvalue", "cummax", "cummin"})
_INT64_DTYPES = frozenset({"torch.long", "torch.int64"})
# methods whose result has the receiver's dtype, for an integer receiver (views, copies, moves)
_INT_KEEPING_METHODS = frozenset({
    "view", "reshape", "permute", "transpose", "flatten", "unflatten", "unsqueeze", "squeeze", "contiguous", "expand",
    "expand_as", "repeat", "clone", "detach", "narrow", "flip", "roll", "t", "view_as", "reshape_as", "tril", "triu",
    "cpu", "cuda"})


def _int_literal_size(expr) -> bool:
    """A Python int by construction: an integer literal, ``len(...)``, ``x.shape[i]``/``x.size(i)``, and ``+ - * //``
    of those (``torch.arange(n)`` of a float ``n`` is a float tensor: only these are taken)."""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _int_literal_size(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply,
                                                                            cst.FloorDivide)):
        return _int_literal_size(expr.left) and _int_literal_size(expr.right)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len":
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
            and len(expr.args) == 1:
        return True
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
        and expr.value.attr.value == "shape" and len(expr.slice) == 1 \
        and isinstance(expr.slice[0].slice, cst.Index) and isinstance(expr.slice[0].slice.value, cst.Integer)


class IntFacts(_FunctionFacts):
    """Is an expression an integer tensor by construction (issue 30's joins: a generation loop's
    ``torch.cat((idx, idx_next), dim=1)``)? Read from the code of one function:

    * int64 whatever the input: ``torch.multinomial``/``argmax``/``argmin``/``argsort``/``randperm``/``nonzero``
      (functions or methods), ``.long()``, ``.to(torch.long)``, a constructor given ``dtype=torch.long``,
      ``torch.randint`` and ``torch.arange`` of Python ints (literals, ``len``, ``x.shape[i]``) without ``dtype``,
      the indices of ``topk``/``sort``/``kthvalue``/``cummax``/``cummin`` (``_, i = torch.topk(p, 1)``,
      ``.indices``, ``[1]``);
    * a view, copy or index of an integer tensor, a join of integer tensors, a name every binding of which is one
      (co-inductively: ``idx = torch.cat((idx, idx_next), 1)``);
    * the token ids of a model (``token_ids``): a parameter of a method that, before any rebinding in its loop,
      gives it (or a slice of it: ``idx_cond = idx[:, -n:]``) as the first input of ``self(...)``, where the class's
      ``forward`` gives its first parameter to an ``nn.Embedding`` (torch's embedding refuses anything but integer
      indices, so any run that reaches the join had integers there).

    "Integer" does not say which width: an int32 member mixed with an int64 one is refused by MindSpore's join in
    PyNative (an error, never a silent value; GRAPH_MODE promotes as torch does)."""

    def __init__(self, function: cst.FunctionDef | None, resolve: Resolve, cls: "cst.ClassDef | None" = None,
                 layer_calls: "dict[str, list[cst.Call]] | None" = None) -> None:
        super().__init__(function, resolve)
        self._function = function
        self._cls = cls
        self._layers = _module_attributes(cls) if cls is not None else {}
        self._pairs: dict[str, list] = {}  # name -> the (values, indices) calls whose indices it unpacks
        for node in own_nodes(function, cst.Assign) if function is not None else ():
            target = node.targets[0].target if len(node.targets) == 1 else None
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
                    and isinstance(target.elements[1].value, cst.Name) and self._index_pair(node.value):
                self._pairs.setdefault(target.elements[1].value.value, []).append(node.value)

    def _index_pair(self, value) -> bool:
        if not isinstance(value, cst.Call):
            return False
        qual = self._resolve(value.func)
        if qual is not None:
            return qual.startswith("torch.") and qual.rpartition(".")[2] in _INDEX_PAIRS
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in _INDEX_PAIRS

    def is_int(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply,
                                                                                cst.FloorDivide, cst.Modulo)):
            # ids * 2, ids + offset: integer with integer (a Python int keeps the tensor's dtype)
            left, right = expr.left, expr.right
            return (self.is_int(left, seen) or _int_literal_size(left)) \
                and (self.is_int(right, seen) or _int_literal_size(right)) \
                and (self.is_int(left, seen) or self.is_int(right, seen))
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            return self.is_int(expr.expression, seen)
        if isinstance(expr, cst.Subscript):
            if isinstance(expr.value, cst.Call) and self._index_pair(expr.value) and len(expr.slice) == 1 \
                    and isinstance(expr.slice[0].slice, cst.Index) \
                    and isinstance(expr.slice[0].slice.value, cst.Integer) and expr.slice[0].slice.value.value == "1":
                return True  # torch.topk(p, 1)[1]
            return self.is_int(expr.value, seen)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "indices" and self._index_pair(expr.value):
            return True
        if isinstance(expr, cst.Name):
            return self._name_int(expr.value, seen)
        if isinstance(expr, cst.Call):
            return self._call_int(expr, seen)
        return False

    def _name_int(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True
        if self._order is None:
            return False
        pairs = self._pairs.get(name, [])
        bindings = self._order.bindings(name)
        shown = [v for v in bindings if v is not None]
        if len(bindings) - len(shown) != len(pairs):
            return False  # a binding neither shown nor the indices of a pair (a loop target, a with, ...)
        if name in self._params and not self.token_ids(name):
            return False
        return all(self.is_int(v, seen | {name}) for v in shown)

    def _call_int(self, call: cst.Call, seen: frozenset[str]) -> bool:
        func = call.func
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args):
            return False
        dtype = keywords.get("dtype")
        qual = self._resolve(func)
        if qual is not None:
            if not qual.startswith("torch."):
                return False
            leaf = qual.rpartition(".")[2]
            if qual.count(".") != 1:
                return False
            if dtype is not None:
                return leaf in _DTYPE_RESULTS and self._resolve(dtype) in _INT64_DTYPES \
                    and not leaf.endswith("_like")
            if "out" in keywords:
                return False
            if leaf in _INT64_FUNCTIONS:
                return True
            if leaf in ("arange", "randint"):
                sizes = [a.value for a in call.args if a.keyword is None]
                if leaf == "randint":
                    sizes = sizes[:-1]  # the last positional is the size tuple
                return bool(sizes) and all(_int_literal_size(s) for s in sizes)
            if leaf in ("cat", "concat", "concatenate", "stack") and call.args and call.args[0].keyword is None \
                    and isinstance(call.args[0].value, (cst.List, cst.Tuple)) and call.args[0].value.elements:
                return all(not isinstance(e, cst.StarredElement) and self.is_int(e.value, seen)
                           for e in call.args[0].value.elements)
            return False
        if not isinstance(func, cst.Attribute):
            return False
        method = func.attr.value
        if method in _INT64_METHODS and not call.args:
            return True
        if method in _INT64_FUNCTIONS and dtype is None and "out" not in keywords:
            return True
        if method == "to" and len(call.args) == 1 and call.args[0].keyword is None:
            return self._resolve(call.args[0].value) in _INT64_DTYPES
        if method == "to" and call.args and all(a.keyword is not None and a.keyword.value in ("device", "non_blocking")
                                                for a in call.args):
            return self.is_int(func.value, seen)
        if method in _INT_KEEPING_METHODS and dtype is None:
            return self.is_int(func.value, seen)
        return False

    def token_ids(self, name: str) -> bool:
        """Does the function give the parameter ``name`` (or a name bound only to it and its slices) as the first
        input of ``self(...)``, in a statement that runs before any rebinding of it (top level of the function, or
        of the loop that rebinds it, before the rebinding), and is the class's ``forward``'s first parameter an
        ``nn.Embedding``'s input?"""
        function = self._function
        if function is None or self._cls is None or name not in self._params or not self._forward_embeds():
            return False
        derived = {name} | {other for other in self._order._bindings if other != name and self._slices_of(other, name)}  # noqa: SLF001
        rebinding = [s for s in own_nodes(function, cst.SimpleStatementLine) if _binds(s, name)]
        bodies = [function.body.body]
        loops = [f for f in own_nodes(function, (cst.For, cst.While))
                 if any(_contains(f, s) for s in rebinding)]
        if len(loops) == 1 and isinstance(loops[0].body, cst.IndentedBlock):
            bodies = [loops[0].body.body]
            before = [s for s in function.body.body if _contains(s, loops[0])]
            if not before:
                return False
        elif loops or rebinding and any(not any(s is t for t in function.body.body) for s in rebinding):
            return False
        for body in bodies:
            for stmt in body:
                if any(_contains(stmt, s) for s in rebinding):
                    break
                if isinstance(stmt, cst.SimpleStatementLine) and any(self._self_call_of(c, derived)
                                                                     for c in all_nodes(stmt, cst.Call)):
                    return True
        return False

    def _slices_of(self, other: str, name: str) -> bool:
        """Is every binding of ``other`` ``name``, a slice of it, or a conditional between those?"""
        values = self._order.bindings(other)

        def derived(v) -> bool:
            if isinstance(v, cst.Name):
                return v.value == name
            if isinstance(v, cst.Subscript):
                return derived(v.value)
            if isinstance(v, cst.IfExp):
                return derived(v.body) and derived(v.orelse)
            return False
        return bool(values) and other not in self._params and all(v is not None and derived(v) for v in values)

    @staticmethod
    def _self_call_of(call: cst.Call, names: set[str]) -> bool:
        """``self(idx_cond)``, ``self(idx[:, -n:])``: the first input one of ``names`` or a slice of one."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "self" and call.args
                and call.args[0].keyword is None and not call.args[0].star):
            return False
        value = call.args[0].value
        while isinstance(value, cst.Subscript):
            value = value.value
        return isinstance(value, cst.Name) and value.value in names

    def _forward_embeds(self) -> bool:
        """The class's ``forward`` gives its first parameter, before rebinding it, to an ``nn.Embedding`` (an attribute
        assigned only Embeddings, or a member of an ``nn.ModuleDict(dict(wte=nn.Embedding(...)))``)."""
        body = self._cls.body.body if isinstance(self._cls.body, cst.IndentedBlock) else ()
        forwards = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"]
        if len(forwards) != 1 or len(forwards[0].params.params) < 2 or forwards[0].params.posonly_params:
            return False
        forward = forwards[0]
        param = forward.params.params[1].name.value
        if any(_binds(s, param) for s in own_nodes(forward, cst.SimpleStatementLine)):
            return False
        for call in own_nodes(forward, cst.Call):
            if not (call.args and call.args[0].keyword is None and not call.args[0].star
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == param):
                continue
            if _self_attr(call.func) and self._embeddings(self._layers.get(call.func.attr.value, [])):
                return True
            if isinstance(call.func, cst.Attribute) and _self_attr(call.func.value):
                holders = self._layers.get(call.func.value.attr.value, [])
                if holders and all(self._dict_member(h, call.func.attr.value) for h in holders):
                    return True
        return False

    def _embeddings(self, calls) -> bool:
        return bool(calls) and all(self._resolve(c.func) == "torch.nn.Embedding" for c in calls)

    def _dict_member(self, holder: cst.Call, key: str) -> bool:
        """``nn.ModuleDict(dict(wte=nn.Embedding(...), ...))`` / ``nn.ModuleDict({"wte": nn.Embedding(...)})``: is
        the member ``key`` an Embedding?"""
        if self._resolve(holder.func) != "torch.nn.ModuleDict" or len(holder.args) != 1 or holder.args[0].keyword:
            return False
        value = holder.args[0].value
        members = {}
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            if any(a.keyword is None for a in value.args):
                return False
            members = {a.keyword.value: a.value for a in value.args}
        elif isinstance(value, cst.Dict):
            for e in value.elements:
                if not isinstance(e, cst.DictElement) or not isinstance(e.key, cst.SimpleString):
                    return False
                members[e.key.evaluated_value] = e.value
        member = members.get(key)
        return isinstance(member, cst.Call) and self._embeddings([member])


def _module_attributes(cls: cst.ClassDef) -> dict[str, list[cst.Call]]:
    """self.NAME -> the calls the class's methods assign to it, for the layers whose kind the integer facts read: an
    attribute also assigned anything but a call (``self.fc = None``), aug-assigned, or whose member is replaced
    (``self.transformer.wte = ...``) has no entry. A weight tied into it (``self.tok_embeddings.weight =
    self.output.weight``, ``self.transformer.wte.weight = self.lm_head.weight``) leaves the layer what it is."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] \
        if isinstance(cls.body, cst.IndentedBlock) else []
    values: dict[str, list[cst.Call]] = {}
    other: set[str] = set()
    for method in methods:
        for stmt in _assignments(method):
            for target in stmt.targets:
                t = target.target
                if _self_attr(t):
                    if isinstance(stmt.value, cst.Call) and len(stmt.targets) == 1:
                        values.setdefault(t.attr.value, []).append(stmt.value)
                    else:
                        other.add(t.attr.value)
                elif isinstance(t, cst.Attribute) and _self_attr(t.value):
                    if t.attr.value not in ("weight", "bias"):  # self.emb.weight = self.head.weight: tied
                        other.add(t.value.attr.value)  # self.transformer.wte = ...: a member replaced
                else:
                    for node in all_nodes(t, cst.Attribute):
                        if _self_attr(node) and not isinstance(t, cst.Attribute):
                            other.add(node.attr.value)  # self.a, self.b = ...
        for node in own_nodes(method, cst.AugAssign) + own_nodes(method, cst.AnnAssign):
            if _self_attr(node.target):
                other.add(node.target.attr.value)
    return {name: calls for name, calls in values.items() if name not in other}


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """Does the statement assign ``name`` (a target of ``=``, ``+=``, ``:=`` or a tuple)?"""
    for node in all_nodes(stmt, cst.AssignTarget) + all_nodes(stmt, cst.AugAssign) + all_nodes(stmt, cst.AnnAssign):
        target = node.target
        if any(n.value == name for n in all_nodes(target, cst.Name)) and not isinstance(target, cst.Attribute):
            return True
    return any(isinstance(n.target, cst.Name) and n.target.value == name for n in all_nodes(stmt, cst.NamedExpr))


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return outer is inner or any(n is inner for n in all_nodes(outer, type(inner)))


# ------------------------------------------------------------------------------------------- lists built in __init__

def hoisted_list(cls: cst.ClassDef, init: cst.FunctionDef, attr: str, file: FileFacts,
                 builds_cell: Callable[[cst.BaseExpression], bool]) -> "str | None":
    """``self.layers = nn.ModuleList([])`` then ``self.layers.append(Block())`` in a loop of ``__init__``: MindSpore's
    CellList names a member appended to a list its owner already holds without the owner's prefix (``0.weight``, not
    ``layers.0.weight``), but a list filled first and then assigned is named as torch names it. Can the list be built
    in a local and assigned after the last add? The local's name (the attribute's, or with ``_`` added while that
    is taken in ``__init__``), or None: the one top-level ``self.<attr> = nn.ModuleList([])`` of ``__init__``; every
    other use of ``self.<attr>`` in the class's ``__init__`` an ``append``/``extend``/``insert`` of Cells; no add
    anywhere else in the file, no add by name, no use in a nested function or lambda of ``__init__``, and no method
    of the class called from ``__init__`` after the assignment (it could read the attribute). Reads of the list in
    ``__init__`` that only look at it or its members (``len(self.ups)``, ``self.ups.apply(init_weights)``: HiFi-GAN's
    Generator) read the local, the same object, before the owner holds it. A class the file
    subclasses (improved-diffusion's UNetModel under SuperResModel) is hoisted too when no ``self.<name>(...)`` call
    at all follows the assignment in ``__init__`` (a subclass may override any method) and no subclass in the file
    adds to the attribute (its own ``self.<attr>.append`` would add to this list after it is held; another class's
    list of the same name, guided-diffusion's EncoderUNetModel's ``input_blocks``, is its own)."""
    if attr in file.named or attr in file.foreign:
        return None
    subclassed = cls.name.value in file.subclassed
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else ()
    assigns = [i for i, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
               and isinstance(s.body[0], cst.Assign) and len(s.body[0].targets) == 1
               and _self_attr(s.body[0].targets[0].target) and s.body[0].targets[0].target.attr.value == attr]
    if len(assigns) != 1:
        return None
    first = assigns[0]
    own = [] if not isinstance(cls.body, cst.IndentedBlock) else \
        [f for s in cls.body.body if isinstance(s, cst.FunctionDef) for f in [s, *all_nodes(s, cst.FunctionDef)]]
    # another class's self.<attr>.append(...) adds to that class's own list (an add through any other object makes
    # the attribute foreign: refused above)
    family = file.family(cls.name.value) if subclassed else {cls.name.value}
    adds = [(call, fn) for call, fn in file.adds.get(attr, [])
            if any(fn is f for f in own) or not _self_attr(call.func.value)
            or (subclassed and file.add_classes.get(id(call)) in family)]
    cells = method_cells(init, builds_cell)  # resblock = ResBlock1 if h.resblock == '1' else ResBlock2 too
    if not adds or any(fn is not init or not _adds_cell(call, init, cells) for call, fn in adds):
        return None
    add_receivers = {id(call.func.value) for call, _ in adds}
    methods = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)} \
        if isinstance(cls.body, cst.IndentedBlock) else set()
    for inner in _nested_scopes(init):
        if any(_self_attr(a) and a.attr.value == attr for a in all_nodes(inner, cst.Attribute)):
            return None
    for i, stmt in enumerate(body):
        refs = [a for a in all_nodes(stmt, cst.Attribute) if _self_attr(a) and a.attr.value == attr]
        if i < first and refs:
            return None
        if i > first:
            if any(id(a) not in add_receivers and not _looks_at_list(a, stmt) for a in refs):
                return None
            if any(isinstance(c.func, cst.Attribute) and _self_attr(c.func) and (subclassed or c.func.attr.value in methods)
                   for c in all_nodes(stmt, cst.Call)):
                return None
    attrs = {id(a.attr) for a in all_nodes(init, cst.Attribute)}
    names = {n.value for n in all_nodes(init, cst.Name) if id(n) not in attrs}
    local = attr
    while local in names:
        local += "_"
    return local


def _looks_at_list(ref: cst.Attribute, stmt: cst.CSTNode) -> bool:
    """``self.<attr>`` in ``stmt`` read only to look at the list or its members: ``len(self.ups)``, or
    ``self.ups.apply(f)`` as an expression statement (an initialisation function run on each member)."""
    parents = _parents(stmt)
    parent = parents.get(id(ref))
    grand = parents.get(id(parent))
    if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and isinstance(grand.func, cst.Name) \
            and grand.func.value == "len" and len(grand.args) == 1 and not parent.star and parent.keyword is None:
        return True
    if isinstance(parent, cst.Attribute) and parent.value is ref and parent.attr.value == "apply" \
            and isinstance(grand, cst.Call) and grand.func is parent and isinstance(parents.get(id(grand)), cst.Expr):
        return True
    return False


def hoist_list(init: cst.FunctionDef, attr: str, local: str) -> cst.FunctionDef:
    """Rewrite (the converted) ``__init__``: ``self.<attr>`` -> ``<local>`` from its assignment on, and
    ``self.<attr> = <local>`` after the last top-level statement that uses it (see :func:`hoisted_list`), which names
    the members as torch does; and ``self.<attr> = <local>`` right after the assignment too, where torch's
    assignment registers the list: a Cell lists its children (its ``parameters()``, ``trainable_params()``,
    ``state_dict()``) in the order they were first assigned, and the later assignment of the same name keeps that
    place. Without it the list's parameters came after every attribute assigned while it was filled
    (charles214chen/DDPM's UNet: ``self.downs``/``self.ups`` filled around ``self.mid``, so MindSpore listed
    downs, mid, ups where torch lists downs, ups, mid)."""
    body = list(init.body.body)

    class _Rename(cst.CSTTransformer):
        def leave_Attribute(self, original_node, updated_node):
            if _self_attr(updated_node) and updated_node.attr.value == attr:
                return cst.Name(local)
            return updated_node

    first = last = None
    for i, stmt in enumerate(body):
        if any(_self_attr(a) and a.attr.value == attr for a in all_nodes(stmt, cst.Attribute)):
            body[i] = stmt.visit(_Rename())
            first = i if first is None else first
            last = i
    if last is None:
        return init

    def assign():
        return cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(target=cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr)))],
            value=cst.Name(local))])
    body.insert(last + 1, assign())
    if any(_registers_other(stmt, attr) for stmt in body[first + 1:last]):
        body.insert(first + 1, assign())
    return init.with_changes(body=init.body.with_changes(body=body))


def _registers_other(stmt: cst.CSTNode, attr: str) -> bool:
    """Does ``stmt`` give its object another child or parameter (``self.<other> = ...``, ``self.add_module(...)``,
    ``self.register_parameter(...)`` ...), which would then be listed before a list assigned later?"""
    for target in all_nodes(stmt, cst.AssignTarget):
        t = target.target
        for node in [t, *(e.value for e in t.elements)] if isinstance(t, (cst.Tuple, cst.List)) else [t]:
            if _self_attr(node) and node.attr.value != attr:
                return True
    for node in all_nodes(stmt, cst.AnnAssign):
        if _self_attr(node.target) and node.target.attr.value != attr:
            return True
    return any(isinstance(c.func, cst.Attribute) and _self_attr(c.func) and c.func.attr.value in (
        "add_module", "register_module", "register_parameter", "register_buffer", "insert_child_to_cell")
        for c in all_nodes(stmt, cst.Call))


# ------------------------------------------------------------------ reductions whose empty-extent value nothing reads

# binary operators that broadcast their operands elementwise (the result's shape is the broadcast of theirs)
_BROADCASTING = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)
# torch's functions of two tensors that broadcast them as those operators do (no keyword: rounding_mode, alpha, out)
_BROADCASTING_FUNCTIONS = frozenset({"torch.add", "torch.sub", "torch.mul", "torch.div", "torch.true_divide"})
# elementwise functions and methods a reduction's value may pass through on its way to the absorbing operation
_ELEMENTWISE_FUNCTIONS = frozenset({"torch.rsqrt", "torch.sqrt", "torch.exp", "torch.log", "torch.reciprocal",
                                    "torch.abs", "torch.square", "torch.neg"})
_ELEMENTWISE_METHODS = frozenset({"rsqrt", "sqrt", "exp", "log", "reciprocal", "abs", "square", "neg"})
# methods (no argument) whose result has the receiver's shape
_SHAPE_KEEPING = frozenset({"abs", "square", "neg", "float", "double", "half", "detach", "clone", "contiguous"})


def _literal_int(expr) -> "int | None":
    """The value of an int literal (``-1``, ``2``), else None."""
    negative = isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)
    if negative:
        expr = expr.expression
    if not isinstance(expr, cst.Integer):
        return None
    return -int(expr.evaluated_value) if negative else int(expr.evaluated_value)


def _number_literal(expr) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _shaped_like(expr, resolve: Resolve) -> "str | None":
    """The name whose shape ``expr`` has by construction: ``x``, ``x.pow(2)``, ``x ** 2``, ``x * x``,
    ``x.square()``, ``torch.abs(x)``, ``x.float()`` (an elementwise function of ``x`` alone); None otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power) and _number_literal(expr.right):
            return _shaped_like(expr.left, resolve)
        if isinstance(expr.operator, cst.Multiply) and isinstance(expr.left, cst.Name) \
                and isinstance(expr.right, cst.Name) and expr.left.value == expr.right.value:
            return expr.left.value
        return None
    if not isinstance(expr, cst.Call) or any(a.star or a.keyword is not None for a in expr.args):
        return None
    qual = resolve(expr.func)
    if qual in ("torch.abs", "torch.square", "torch.neg") and len(expr.args) == 1:
        return _shaped_like(expr.args[0].value, resolve)
    if qual is None and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method in _SHAPE_KEEPING and not expr.args \
                or method == "pow" and len(expr.args) == 1 and _number_literal(expr.args[0].value):
            return _shaped_like(expr.func.value, resolve)
    return None


def _broadcasts_root(expr, root: str) -> bool:
    """Is ``expr`` the name ``root`` or a broadcasting binary operation with it as an operand, at any depth
    (``x``, ``(x - mean)``, ``(x - mean) * g``)? Broadcasting keeps a 0 extent (0 with 1 is 0, 0 with n > 1 raises),
    so where ``root`` has no element along an axis, neither has ``expr``, nor anything broadcast with it."""
    if isinstance(expr, cst.Name):
        return expr.value == root
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _BROADCASTING) \
        and (_broadcasts_root(expr.left, root) or _broadcasts_root(expr.right, root))


def _absorbed_from(node, root: str, parents: dict[int, cst.CSTNode], resolve: Resolve, stop) -> "bool | str":
    """Follow ``node``'s value up through elementwise operations (``+ eps``, ``rsqrt``, ``.sqrt()``) to a
    broadcasting binary operation whose other operand is the name ``root`` or a broadcast with it (``(x - mean) /
    (var + eps).sqrt()``, :func:`_broadcasts_root`): True. The name of a plain assignment
    ``m = <node's chain>`` that is the statement ``stop`` itself: that name. False for anything else."""
    while True:
        parent = parents.get(id(node))
        if parent is None or node is stop:
            return False
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _BROADCASTING):
            other = parent.right if parent.left is node else parent.left
            if _broadcasts_root(other, root):
                return True
            node = parent
        elif isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
            node = parent
        elif isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            if isinstance(call, cst.Call) and resolve(call.func) in _BROADCASTING_FUNCTIONS and len(call.args) == 2 \
                    and not any(a.star or a.keyword is not None for a in call.args):
                # torch.div(score, torch.sum(score, dim=-1).unsqueeze(dim=-1)): a broadcasting operation as `/` is
                other = call.args[1].value if call.args[0] is parent else call.args[0].value
                if _broadcasts_root(other, root):
                    return True
                node = call
                continue
            if not isinstance(call, cst.Call) or len(call.args) != 1 or parent.keyword is not None or parent.star \
                    or resolve(call.func) not in _ELEMENTWISE_FUNCTIONS:
                return False
            node = call
        elif isinstance(parent, cst.Attribute) and parent.value is node:
            call = parents.get(id(parent))
            if not isinstance(call, cst.Call) or call.func is not parent or resolve(parent) is not None:
                return False
            if not (parent.attr.value in _ELEMENTWISE_METHODS and not call.args
                    or parent.attr.value == "pow" and len(call.args) == 1 and call.args[0].keyword is None
                    and not call.args[0].star and _number_literal(call.args[0].value)):
                return False
            node = call
        elif isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name) and parents.get(id(parent)) is stop \
                and len(stop.body) == 1:
            return parent.targets[0].target.value
        else:
            return False


def _unsqueezed(call: cst.Call, dim: int, parents: dict[int, cst.CSTNode]) -> "cst.Call | None":
    """The call ``<call>.unsqueeze(dim)`` (or ``dim=dim``, a literal int equal to ``dim``), else None."""
    attribute = parents.get(id(call))
    outer = parents.get(id(attribute)) if isinstance(attribute, cst.Attribute) else None
    if not (isinstance(outer, cst.Call) and outer.func is attribute and attribute.value is call
            and attribute.attr.value == "unsqueeze" and len(outer.args) == 1 and not outer.args[0].star
            and (outer.args[0].keyword is None or outer.args[0].keyword.value == "dim")):
        return None
    return outer if _literal_int(outer.args[0].value) == dim else None


def _top_statement(node, function: cst.FunctionDef, parents: dict[int, cst.CSTNode]):
    """The statement of ``function``'s own body (top level) that holds ``node``; None when there is none."""
    body = function.body
    while node is not None:
        parent = parents.get(id(node))
        if parent is body:
            return node
        if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and parent is not function:
            return None
        node = parent
    return None


_PARENTS_CACHE: dict[int, tuple[cst.FunctionDef, dict[int, cst.CSTNode]]] = {}


def function_parents(function: cst.FunctionDef) -> dict[int, cst.CSTNode]:
    """Each node's parent in the function (a node of it by id), built once per function node."""
    return _function_parents(function)


def _function_parents(function: cst.FunctionDef) -> dict[int, cst.CSTNode]:
    cached = _PARENTS_CACHE.get(id(function))
    if cached is None or cached[0] is not function:
        if len(_PARENTS_CACHE) > 64:
            _PARENTS_CACHE.clear()
        cached = _PARENTS_CACHE[id(function)] = (function, _parents(function))
    return cached[1]


def absorbed_reduction(call: cst.Call, reduced, function: "cst.FunctionDef | None", resolve: Resolve,
                       restored: "int | None" = None) -> bool:
    """A ``keepdim=True`` reduction (``x.mean(dim, keepdim=True)``) whose value over an empty extent nothing can read:
    the reduced tensor has the shape of a name ``x`` (``x``, ``x.pow(2)``, ``x * x``: :func:`_shaped_like`), and the
    value reaches a broadcasting binary operation with ``x`` itself through elementwise steps only, inline
    (``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)``, RMSNorm) or through a local bound once at the
    function's top level whose every read is such an operation in a later top-level statement, ``x`` not rebound in
    between (``mean = x.mean(1, keepdim=True)`` then ``(x - mean) / ...``, a channel LayerNorm). Where a reduced
    extent of ``x`` is 0, ``x`` has no element and neither has the broadcast (the reduction's axis is 1 there, x's
    0), so the reduction's value is never read: torch's NaN and MindSpore's uninitialised memory give the same empty
    result, and MindSpore's own reduction serves (mindport.runtime.math.mean only replaces that value).

    ``restored``: the reduction is over that one int dim without keepdim, and counts only where ``.unsqueeze`` of
    that same dim puts the axis back at once (``torch.sum(score, dim=-1).unsqueeze(dim=-1)``: rank n - 1 gains it at
    n + d for a negative d, so this is the keepdim=True reduction); the value is followed from the unsqueeze. A numpy
    receiver never gets there (its reductions give arrays, which have no ``unsqueeze``)."""
    root = _shaped_like(reduced, resolve)
    if root is None or function is None or not isinstance(function.body, cst.IndentedBlock):
        return False
    parents = _function_parents(function)
    if restored is not None:
        call = _unsqueezed(call, restored, parents)
        if call is None:
            return False
    stmt = _top_statement(call, function, parents)
    if stmt is None or all_nodes(stmt, cst.NamedExpr):
        return False
    found = _absorbed_from(call, root, parents, resolve, stmt)
    if found is True:
        return True
    if not isinstance(found, str) or found == root:
        return False
    local = found
    body = list(function.body.body)
    first = next(i for i, s in enumerate(body) if s is stmt)
    params = function.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    names += [s.name.value for s in (params.star_arg, params.star_kwarg) if isinstance(s, cst.Param)]
    if local in names:
        return False
    return _reads_absorbed(function, body, first, local, root, parents, resolve)


def _reads_absorbed(function: cst.FunctionDef, body: list, first: int, local: str, root: str,
                    parents: dict[int, cst.CSTNode], resolve: Resolve) -> bool:
    """Is the local bound by ``body[first]`` (``m = <reduction>``) bound nowhere else in the function (nor declared
    global/nonlocal), and is every read of it in a later top-level statement with no ``:=``, ``root`` rebound by no
    statement in between, its value absorbed by a broadcasting operation with ``root`` (:func:`_absorbed_from`)?"""
    if any(local in [n.value for n in node.names] for node in all_nodes(function, (cst.Global, cst.Nonlocal))):
        return False
    bindings = [s for s in body if _binds(s, local)]
    if len(bindings) != 1 or bindings[0] is not body[first]:
        return False
    if any(isinstance(n, cst.For) and any(x.value == local for x in all_nodes(n.target, cst.Name))
           for n in all_nodes(function, cst.For)) \
            or any(any(x.value == local for x in all_nodes(n, cst.Name)) for n in all_nodes(function, cst.AsName)) \
            or any(any(x.value == local for x in all_nodes(n.target, cst.Name))
                   for n in all_nodes(function, cst.CompFor)) \
            or any(n.name.value == local for n in all_nodes(function, (cst.FunctionDef, cst.ClassDef))):
        return False
    reads = 0
    for i, stmt in enumerate(body):
        for name in all_nodes(stmt, cst.Name):
            if name.value != local:
                continue
            parent = parents.get(id(name))
            if isinstance(parent, cst.Attribute) and parent.attr is name \
                    or isinstance(parent, cst.Arg) and parent.keyword is name:
                continue  # obj.m, f(m=...): not the local
            if i == first and isinstance(parent, cst.AssignTarget):
                continue
            if i <= first or not isinstance(stmt, cst.SimpleStatementLine) or all_nodes(stmt, cst.NamedExpr) \
                    or any(_binds(s, root) or all_nodes(s, cst.Del) for s in body[first + 1:i]) \
                    or _absorbed_from(name, root, parents, resolve, stmt) is not True:
                return False
            reads += 1
    return reads > 0


def nonempty_last_extent(reduced, resolve: Resolve) -> bool:
    """Does ``reduced`` have a last extent of 2 or more elements by construction (or make torch raise)? A broadcasting
    arithmetic operation (``+ - * /``) one operand of which is ``torch.tensor`` of a list or tuple display of n >= 2
    elements, no star, one of them at least a number literal (the idiom ``(rel_pos * torch.tensor([2 * w - 1,
    1])).sum(dim=-1)`` of relative-position indices): torch reads that data as n scalars (a one-element tensor among
    them is its number; a sequence next to a number is ragged, an error), so the tensor is 1-D of n elements and the
    broadcast's last extent is n, or the broadcast raises. A reduction over ``dim=-1`` of it never meets an empty
    extent: MindSpore's own reduction gives torch's value (mindport.runtime.math.sum only replaces the value over an
    empty one)."""
    return isinstance(reduced, cst.BinaryOperation) \
        and isinstance(reduced.operator, (cst.Multiply, cst.Add, cst.Subtract, cst.Divide)) \
        and any(_literal_vector(side, resolve) for side in (reduced.left, reduced.right))


def _literal_vector(expr, resolve: Resolve) -> bool:
    """``torch.tensor([a, 1])``: a display of two or more elements, no star, a number literal among them, as the data
    (first argument, not starred; other arguments by keyword only)."""
    if not isinstance(expr, cst.Call) or resolve(expr.func) != "torch.tensor" or not expr.args:
        return False
    data, *rest = expr.args
    if data.star or data.keyword is not None or any(a.star or a.keyword is None for a in rest):
        return False
    display = data.value
    if not isinstance(display, (cst.List, cst.Tuple)) or len(display.elements) < 2:
        return False
    elements = display.elements
    return not any(isinstance(e, cst.StarredElement) for e in elements) \
        and any(_number_literal(e.value) for e in elements)


# ----------------------------------------------------------------- parameters whose every caller gives up its tensor

def owned_parameters(module: cst.Module, resolve: Resolve, file: "FileFacts",
                     fresh_call: "Callable[[cst.BaseExpression], bool]",
                     imported: frozenset[str] = frozenset()) -> dict[str, frozenset[str]]:
    """Module-level function name -> the parameters whose tensor no caller keeps: every call of the function in the
    file (its name read nowhere else, defined once, so no other module-level reference hands it on) passes, for that
    parameter, a plain local name ``v`` of the calling function that the call's own statement rebinds, ``v = f(v,
    ...)``, ``v`` in no other argument, and ``v``'s value at the call is a new tensor no other name holds
    (:func:`_given_up`); the function undecorated, with no ``*args``/``**kwargs``. Then an in-place update of the parameter inside the function (kuangliu's EfficientNet
    ``drop_connect``: ``x.div_(keep_ratio); x.mul_(mask); return x``, called ``out = drop_connect(out,
    self.drop_rate)``) is seen by no one but the function, and rebinding the parameter to the out-of-place result is
    the same program (:func:`unaliased_local_update` asks). A function another file of the project imports by its
    name (``imported``: project.imported_names, the names imported from any module of the project) may be called
    there with a tensor its caller keeps: refused."""
    defs: dict[str, list[cst.FunctionDef]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            defs.setdefault(stmt.name.value, []).append(stmt)
    candidates = {name: found[0] for name, found in defs.items() if len(found) == 1 and name not in imported}
    if not candidates:
        return {}
    parents = _parents(module)
    def_names = {id(f.name) for found in defs.values() for f in found}
    calls: dict[str, list[cst.Call]] = {}
    refused: set[str] = set()
    for node in all_nodes(module, cst.Name):
        name = node.value
        if name not in candidates or id(node) in def_names:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, cst.Call) and parent.func is node:
            calls.setdefault(name, []).append(parent)
        else:
            refused.add(name)  # handed on, rebound, imported, or an attribute of that name: not every use is seen
    for found in all_nodes(module, (cst.FunctionDef, cst.ClassDef)):
        if found.name.value in candidates and candidates[found.name.value] is not found:
            refused.add(found.name.value)  # a method or nested function of that name: calls may mean it
    owned: dict[str, frozenset[str]] = {}
    for name, function in candidates.items():
        if name in refused or name not in calls or function.decorators or function.params.star_arg is not None \
                and isinstance(function.params.star_arg, cst.Param) or function.params.star_kwarg is not None:
            continue  # a decorator may keep the arguments (a cache), *args/**kwargs hand them on unseen
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        keyword_only = {p.name.value for p in function.params.kwonly_params}
        given = set(positional) | keyword_only
        for call in calls[name]:
            if any(a.star for a in call.args):
                given = set()
                break
            passed: dict[str, cst.BaseExpression] = {}
            for index, arg in enumerate(call.args):
                if arg.keyword is None:
                    if index < len(positional):
                        passed[positional[index]] = arg.value
                else:
                    passed[arg.keyword.value] = arg.value
            given = {p for p in given if p in passed and _given_up(call, passed[p], parents, resolve, file,
                                                                     fresh_call)}
            if not given:
                break
        if given:
            owned[name] = frozenset(given)
    return owned


def _given_up(call: cst.Call, value, parents, resolve: Resolve, file: "FileFacts", fresh_call) -> bool:
    """Is ``value`` (an argument of ``call``) a local name ``v`` of the function around the call, in no other
    argument, that the call's statement rebinds (``v = f(v, ...)``), whose value at the call is bound by a plain
    statement ``v = <new tensor>`` that reaches it on every path (the nearest earlier statement of the call's block,
    or of a block around it, that names ``v`` at all; only ``if``/``else`` blocks in between, whose tests do not
    name ``v``, no loop), with no statement in between naming ``v``? A new tensor: an operator's result, the call of
    a layer attribute of the class every assignment of which gives a new tensor (:func:`layer_gives_new`; a class
    the file does not subclass), or a call ``fresh_call`` accepts. ``v`` no parameter, not global/nonlocal, named in
    no nested function or lambda of the caller."""
    if not isinstance(value, cst.Name):
        return False
    var = value.value
    if sum(1 for a in call.args for n in all_nodes(a.value, cst.Name) if n.value == var) != 1:
        return False
    assign = parents.get(id(call))
    line = parents.get(id(assign))
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == var
            and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return False
    function, cls, node = None, None, line
    while node is not None:
        node = parents.get(id(node))
        if isinstance(node, (cst.Lambda, cst.FunctionDef)) and function is None:
            if not isinstance(node, cst.FunctionDef):
                return False
            function = node
        elif isinstance(node, cst.ClassDef) and function is not None:
            cls = node
            break
    if function is None:
        return False
    params = function.params
    if var in {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} \
            or var in {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}:
        return False
    if any(var in [n.name.value for n in g.names] for g in all_nodes(function, (cst.Global, cst.Nonlocal))):
        return False
    for inner in all_nodes(function.body, (cst.FunctionDef, cst.Lambda)):
        if any(n.value == var for n in all_nodes(inner, cst.Name)):
            return False
    bound = None
    stmt = line
    while bound is None:
        block = parents.get(id(stmt))
        if not isinstance(block, cst.IndentedBlock):
            return False
        siblings = list(block.body)
        for earlier in reversed(siblings[:siblings.index(stmt)]):
            if not any(n.value == var for n in all_nodes(earlier, cst.Name)):
                continue
            if isinstance(earlier, cst.SimpleStatementLine) and len(earlier.body) == 1 \
                    and isinstance(earlier.body[0], cst.Assign) and len(earlier.body[0].targets) == 1 \
                    and isinstance(earlier.body[0].targets[0].target, cst.Name) \
                    and earlier.body[0].targets[0].target.value == var:
                bound = earlier.body[0].value
                break
            return False  # read (perhaps kept) or bound otherwise in between
        if bound is not None:
            break
        owner = parents.get(id(block))
        if owner is function:
            return False  # no binding before: unbound, or the function's own name of an outer value
        if isinstance(owner, cst.Else):
            owner = parents.get(id(owner))
            while isinstance(parents.get(id(owner)), cst.If) and parents.get(id(owner)).orelse is owner:
                owner = parents.get(id(owner))  # elif: the chain's first if is the statement
        elif isinstance(owner, cst.If):
            while isinstance(parents.get(id(owner)), cst.If) and parents.get(id(owner)).orelse is owner:
                owner = parents.get(id(owner))
        if not isinstance(owner, cst.If):
            return False  # a loop (an earlier pass's alias), with, try, match: refused
        for test_of in [owner, *(o for o in all_nodes(owner, cst.If))]:
            if any(n.value == var for n in all_nodes(test_of.test, cst.Name)):
                return False
        stmt = owner
    if isinstance(bound, cst.BinaryOperation) or (isinstance(bound, cst.UnaryOperation)
                                                   and not isinstance(bound.operator, cst.Not)):
        return True
    if isinstance(bound, cst.Call) and _self_attr(bound.func) and cls is not None \
            and cls.name.value not in file.subclassed:
        built = class_float_layers(cls, file.appended | file.named | file.foreign).get(bound.func.attr.value, [])
        if built and all(layer_gives_new(c, resolve) for c in built):
            return True
    return fresh_call(bound)


# ------------------------------------------------------------------------- in-place updates of unaliased locals

def unaliased_local_update(function: "cst.FunctionDef | None", call: "cst.Call | cst.AugAssign", name: str,
                           fresh: Callable[[cst.BaseExpression], bool],
                           consumer: "Callable[[cst.Call], bool] | None" = None,
                           owned: frozenset[str] = frozenset()) -> bool:
    """Does the in-place method call ``name.m_(...)`` (a whole statement of ``function``), or the augmented
    assignment ``name += e`` (``-=``, ``*=``, ``/=``: :func:`unshared_augmented`), update a tensor no other
    name or object holds, so that rebinding ``name`` to the out-of-place result is the same program? Every binding of
    ``name`` in the function is a plain ``name = value`` whose value is a new tensor (``fresh``: an operator's
    result, ``torch.full_like(...)``; sooftware/attentions' ``score = torch.bmm(q, k.transpose(1, 2)) / sqrt(d)``,
    DINO's ``random_tensor = keep_prob + torch.rand(shape)``); ``name`` is no parameter, not declared
    global/nonlocal, read in no nested function or lambda; the call is in no loop (an earlier pass's alias would be
    the same object); and every read of ``name`` before the update (and in the call's own arguments) keeps no
    reference to it: an operand, ``name += y``, ``name.shape``/``.size()``/``.dim()`` and the like, and an
    argument of a call ``consumer`` accepts (one whose result is a new tensor holding none of its
    inputs: ``self.bn2(out)`` of a BatchNorm2d layer), or the receiver of an earlier in-place method called as a
    statement (``x.div_(r)`` before ``x.mul_(m)``: its result is dropped). Reads after the call read the rebound name,
    as torch's read the updated object. A parameter in ``owned`` (:func:`owned_parameters`: every caller gives its
    tensor up, ``out = drop_connect(out, p)``) is bound to a new tensor on entry: no other binding is needed, and every
    read is checked."""
    if function is None:
        return False
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params)}
    params |= {p.name.value for p in (function.params.star_arg, function.params.star_kwarg) if isinstance(p, cst.Param)}
    if any(name in [n.name.value for n in node.names] for node in all_nodes(function, (cst.Global, cst.Nonlocal))):
        return False
    parents = _function_parents(function)
    argument_until = -1  # reads before this position read the parameter's own value, which never reaches the call
    if name in params and name not in owned:
        argument_until = _argument_never_reaches(function, call, name, fresh, parents)
        if argument_until is None:
            return False
    order = _order(function)
    loop = _outermost_loop(call, function, parents)
    if isinstance(call, cst.AugAssign) and loop is not None:
        return False  # unshared_augmented's rule: an update in no loop
    bindings = order.bindings(name)
    if not (bindings or name in owned) or any(value is None or not fresh(value) for value in bindings):
        return False
    receiver = call.target if isinstance(call, cst.AugAssign) else call.func.value
    call_pos, call_stmt = order.position(call), order.statement_of(call)
    looped = {id(n) for n in all_nodes(loop, cst.Name)} if loop is not None else set()
    for read, parent, grand, stmt in order.reads(name):
        if parent is None:
            return False  # read in a nested scope, at any time
        if read is receiver or (order.position(read) > call_pos and stmt != call_stmt and id(read) not in looped) \
                or order.position(read) < argument_until:
            continue  # after the update, and in no loop around it (where it would precede the next pass's update)
        if not (isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.AugAssign))
                or (isinstance(parent, cst.UnaryOperation) and not isinstance(parent.operator, cst.Not))
                or (isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in _READS_OK)
                or (isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in NEW_RESULT_METHODS
                    and isinstance(grand, cst.Call) and grand.func is parent)
                or (consumer is not None and isinstance(parent, cst.Arg) and parent.keyword is None
                    and not parent.star and isinstance(grand, cst.Call) and consumer(grand))
                or (isinstance(parent, cst.Attribute) and parent.value is read and isinstance(grand, cst.Call)
                    and grand.func is parent and _inplace_name(parent.attr.value)
                    and isinstance(parents.get(id(grand)), cst.Expr))):
            return False  # handed on (y = x, f(x), lst.append(x)), or a view (x.view(...), x[i])
    return True


def _inplace_name(method: str) -> bool:
    """``div_``, ``masked_fill_``: an in-place method's name (not a dunder)."""
    return method.endswith("_") and not method.endswith("__") and not method.startswith("_")


# tensor methods whose result is a new tensor holding no reference to the receiver, in torch (never a view, never the
# receiver itself): reductions and arithmetic; ``x.sum(dim=d, keepdim=True)`` reads x and keeps nothing of it
NEW_RESULT_METHODS = frozenset({"sum", "mean", "prod", "amax", "amin", "std", "var", "norm", "logsumexp", "add", "sub",
                          "mul", "div", "pow", "matmul", "mm", "bmm", "exp", "log", "abs", "neg", "sigmoid", "tanh",
                          "clone"})


def argument_never_reaches(function: cst.FunctionDef, call: cst.Call, name: str) -> bool:
    """Can the parameter ``name``'s own value never reach the in-place call (:func:`_argument_never_reaches`, the
    first loop's rebinding an operator's result or a :data:`NEW_RESULT_METHODS` method's)? Then the call writes no
    tensor of the caller (rules/argument_writes.py asks)."""
    def fresh(value) -> bool:
        return isinstance(value, cst.BinaryOperation) or new_result_call(value)

    return _argument_never_reaches(function, call, name, fresh, _function_parents(function)) is not None


def new_result_call(value) -> bool:
    """A call of a :data:`NEW_RESULT_METHODS` method on a receiver, no starred argument (``x.sum(dim=d,
    keepdim=True)``): a new tensor holding nothing of the receiver."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value in NEW_RESULT_METHODS and not any(a.star for a in value.args)


def _outermost_loop(node, function: cst.FunctionDef, parents: dict[int, cst.CSTNode]):
    """The outermost ``for``/``while`` of ``function`` whose body holds ``node`` (not its iterable), or None."""
    found, child, parent = None, node, parents.get(id(node))
    while parent is not None and parent is not function:
        if isinstance(parent, (cst.For, cst.While)) and child is parent.body:
            found = parent
        child, parent = parent, parents.get(id(parent))
    return found


def _argument_never_reaches(function: cst.FunctionDef, call, name: str, fresh, parents) -> "int | None":
    """Can the parameter ``name``'s own value (the caller's tensor) never reach the update ``call``? The update sits
    in a loop ``for ... in L`` or ``for ... in enumerate(L)`` of the function, after a loop ``for ... in L`` of a
    block around it (the statement holding the update's loop comes later in that block) whose body rebinds ``name``
    to a new tensor (``fresh``) as a statement of its own, holding no ``break``/``continue``/``yield``; ``L`` is a
    name whose last binding before that first loop is a statement of that block, ``L = sorted(...)``/``list(...)``/a
    list display (a list: both loops take the same number of steps), bound again, deleted or called a method of
    nowhere from there on. So when the parameter's value is still bound, the first loop took no step, and neither
    does the update's (glow's ``thops.sum``: ``for d in dim: tensor = tensor.sum(d, keepdim=True)`` then ``for i, d
    in enumerate(dim): tensor.squeeze_(d - i)``). The position of the first loop when ``name`` is bound by no
    statement before it (every read before it reads the parameter's value), else -1; None where the parameter's
    value may reach the update."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else []
    second = None
    child, parent = call, parents.get(id(call))
    while parent is not None and parent is not function:
        if isinstance(parent, cst.For) and child is parent.body:
            second = parent
            break
        child, parent = parent, parents.get(id(parent))
    if second is None:
        return None
    it = second.iter
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" \
            and len(it.args) == 1 and it.args[0].keyword is None and not it.args[0].star:
        it = it.args[0].value
    if not isinstance(it, cst.Name):
        return None
    listed = it.value
    # the nearest block around the update's loop holding, before it, a loop over the same list (glow's is an
    # ``else:`` block after ``if dim is None: return torch.sum(tensor)``)
    body, at, top = None, -1, second
    while top is not None and top is not function:
        block = parents.get(id(top))
        if isinstance(block, cst.IndentedBlock):
            index = next((i for i, stmt in enumerate(block.body) if stmt is top), None)
            if index is not None and any(isinstance(stmt, cst.For) and isinstance(stmt.iter, cst.Name)
                                         and stmt.iter.value == listed for stmt in block.body[:index]):
                body, at = list(block.body), index
                break
        top = block
    if body is None:
        return None

    for first_at in range(at - 1, -1, -1):
        first = body[first_at]
        if not (isinstance(first, cst.For) and isinstance(first.iter, cst.Name) and first.iter.value == listed):
            continue
        if all_nodes(first.body, (cst.Break, cst.Continue, cst.Yield)) or first.orelse is not None:
            return None
        if not any(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                   and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
                   and s.body[0].targets[0].target.value == name and fresh(s.body[0].value)
                   for s in first.body.body):
            return None
        made = next((j for j in range(first_at - 1, -1, -1) if _stores(body[j], listed)), None)
        if made is None:
            return None
        stmt = body[made]
        value = stmt.body[0].value if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 else None
        if not (isinstance(value, cst.List) or isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                and value.func.value in ("sorted", "list")):
            return None
        later = body[first_at:at + 1]
        if any(isinstance(first.target, cst.Name) and first.target.value == listed for first in [first]) \
                or any(_stores(s, listed) for s in later) \
                or any(isinstance(a.value, cst.Name) and a.value.value == listed for s in later
                       for a in all_nodes(s, cst.Attribute)):
            return None
        order = _order(function)
        start = order.position(first)
        named = [t for t in all_nodes(function, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                                 cst.CompFor, cst.NamedExpr, cst.Del, cst.AsName))
                 if any(n.value == name for n in all_nodes(t.name if isinstance(t, cst.AsName) else t.target,
                                                           cst.Name))]
        if any(order.position(t) < start for t in named):
            return -1  # bound before the first loop too: every read is checked
        return start
    return None


# ---------------------------------------------------------------------------------- results read in part only

def values_only(call: cst.Call, function: "cst.FunctionDef | None") -> bool:
    """Is only the first field of the call's (values, indices) result read? ``v, _ = torch.topk(logits, k)`` with the
    second name read nowhere in the function (nor declared global/nonlocal), ``torch.topk(x, k)[0]`` or ``.values``. The runtime's
    topk exists to give torch's int64 indices (MindSpore's are int32); where they are never read, MindSpore's own
    call gives the same values."""
    if function is None:
        return False
    parent = _function_parents(function).get(id(call))
    if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1 \
            and isinstance(parent.slice[0].slice, cst.Index) and isinstance(parent.slice[0].slice.value, cst.Integer) \
            and parent.slice[0].slice.value.evaluated_value == 0:
        return True
    if isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "values":
        return True  # torch.topk(x, k).values: read by position, [0]
    if not isinstance(parent, cst.Assign) or parent.value is not call or len(parent.targets) != 1:
        return False
    target = parent.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2 \
            or any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements):
        return False
    unread = target.elements[1].value.value
    if unread == target.elements[0].value.value \
            or any(unread in [n.value for n in node.names] for node in all_nodes(function, (cst.Global, cst.Nonlocal))):
        return False
    return not _order(function).reads(unread)


def indices_read(call: cst.Call, function: "cst.FunctionDef | None") -> bool:
    """Is the call's (values, indices) result read only for its indices, in the expression itself:
    ``torch.topk(logits, k, dim=1)[1]`` (x-transformers' ``keep_indices``, NaViT's token dropping) or
    ``x.topk(k).indices``? MindSpore's own call then gives the same indices once they are cast to torch's int64 (its
    are int32), which is all the runtime's topk adds (TableCallTransform._indices_target)."""
    if function is None:
        return False
    parent = _function_parents(function).get(id(call))
    if isinstance(parent, cst.Attribute) and parent.value is call:
        return parent.attr.value == "indices"
    return isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1 \
        and isinstance(parent.slice[0].slice, cst.Index) and isinstance(parent.slice[0].slice.value, cst.Integer) \
        and parent.slice[0].slice.value.evaluated_value == 1


# ------------------------------------------------------------------------------------ files that make no complex value

# modules a file may import and still make no complex value of its own (einops only moves elements; math and the
# others below give Python numbers that are never complex without a `complex`/`1j` the scan sees)
_REAL_IMPORTS = frozenset({"torch", "einops", "math", "functools", "typing", "collections", "itertools", "dataclasses",
                           "__future__", "warnings", "inspect", "abc", "enum"})
# identifiers through which a complex value or dtype can be made, named or fetched by name (a substring of the
# identifier: ``torch.view_as_complex``, ``torch.cfloat``, ``torch.fft.rfft``, ``Tensor.stft``, ``torch.polar``)
_COMPLEX_WORDS = ("complex", "cfloat", "cdouble", "chalf", "fft", "stft", "polar", "from_numpy", "frombuffer")
# identifiers that are such a source in full (``torch.linalg.eig``/``eigvals``, ``torch.load``, code run from text,
# the default dtype set to a complex one)
_COMPLEX_NAMES = frozenset({"eig", "eigvals", "load", "eval", "exec", "__import__", "import_module",
                            "set_default_dtype"})
_REAL_FILES: dict[int, tuple[cst.Module, bool]] = {}


def _real_dtype_source(expr) -> bool:
    """Is ``expr`` a dtype (or device) argument that cannot be complex by the file's own doing: a torch real dtype
    attribute (``torch.float32``), another tensor's ``.dtype``/``.device``, ``None``, a string (``'cpu'``), or a name
    holding a device (``device``, ``x.device``)?"""
    if isinstance(expr, cst.SimpleString) or isinstance(expr, cst.Name) and (expr.value == "None"
                                                                             or "device" in expr.value.lower()):
        return True
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in ("dtype", "device") or "device" in expr.attr.value.lower():
            return True
        return isinstance(expr.value, cst.Name) and expr.value.value == "torch" and expr.attr.value in (
            "float32", "float", "float64", "double", "float16", "half", "bfloat16", "int8", "uint8", "int16", "short",
            "int32", "int", "int64", "long", "bool")
    return False


def real_file(module: "cst.Module | None") -> bool:
    """Does the file make no complex value of its own? It imports only torch, einops and a few standard modules that
    give no complex number (``_REAL_IMPORTS``, no relative import), holds no imaginary literal (``1j``), no identifier
    that names or fetches a complex value or dtype (``_COMPLEX_WORDS``: ``view_as_complex``, ``cfloat``, ``fft``,
    ``stft``, ``polar``..., in an identifier or a string; ``_COMPLEX_NAMES``: ``eig``, ``load``, ``eval``...), no
    ``getattr`` with a run-time name, and every ``dtype=`` argument and every positional argument of ``.to``/``.type``
    is a real torch dtype,
    another tensor's ``.dtype``/``.device``, ``None``, a string or a device (:func:`_real_dtype_source`). Then every
    tensor the file computes is real unless a caller in another file hands it a complex one, and the operations
    taking this fact (``ops.var``) refuse complex input loudly (MindSpore's ReduceStd has no complex kernel: a
    TypeError in PyNative and GRAPH_MODE), never a silent value: the caveat of the float facts' callers."""
    if module is None:
        return False
    cached = _REAL_FILES.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    if len(_REAL_FILES) > 64:
        _REAL_FILES.clear()
    result = _real_file(module)
    _REAL_FILES[id(module)] = (module, result)
    return result


def _real_file(module: cst.Module) -> bool:
    for node in all_nodes(module, (cst.Import, cst.ImportFrom)):
        if isinstance(node, cst.ImportFrom):
            if node.relative or node.module is None:
                return False
            names = [code_of(node.module)]
        else:
            names = [code_of(alias.name) for alias in node.names]
        if any(name.split(".")[0] not in _REAL_IMPORTS for name in names):
            return False
    if all_nodes(module, cst.Imaginary):
        return False
    for node in all_nodes(module, cst.Name):
        word = node.value.lower()
        if word in _COMPLEX_NAMES or any(w in word for w in _COMPLEX_WORDS):
            return False
    for node in all_nodes(module, cst.SimpleString):  # getattr(torch, "cfloat"), .to("complex64")
        if any(w in node.value.lower() for w in _COMPLEX_WORDS):
            return False
    for arg in all_nodes(module, cst.Arg):
        if arg.keyword is not None and arg.keyword.value == "dtype" and not _real_dtype_source(arg.value):
            return False
    for assign in all_nodes(module, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
        named = [n for t in targets for n in (all_nodes(t, cst.Name) if not isinstance(t, cst.Name) else [t])]
        if any("dtype" in n.value.lower() for n in named) \
                and (assign.value is None or not _real_dtype_source(assign.value)):
            return False  # self.dtype = dtype: read later as dtype=self.dtype
    for call in all_nodes(module, cst.Call):
        func = call.func
        if isinstance(func, cst.Name) and func.value == "getattr" \
                and (len(call.args) < 2 or not isinstance(call.args[1].value, cst.SimpleString)):
            return False  # a member fetched by a run-time name
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "type") \
                and any(a.star or a.keyword is None and not _real_dtype_source(a.value) for a in call.args):
            return False
    return True


# ------------------------------------------------------------ parameters by their callers: a fixed point over the file

# methods torch.nn.Module itself calls or defines: a method of that name may be called by torch with anything
_MODULE_METHODS = frozenset({
    "_apply", "_call_impl", "_get_backward_hooks", "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict",
    "_maybe_warn_non_full_backward_hook", "_named_members", "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward",
    "_wrapped_call_impl", "add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu", "cuda", "double",
    "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half",
    "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_module",
    "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu",
    "zero_grad"})
_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_UNKNOWN = object()  # an argument of no fact: a starred one, a default of another kind, a missing one
_CALLER_FLOATS: dict[int, tuple[cst.Module, "CallerFloats"]] = {}


class CallerFloats:
    """The parameters of the file's functions that every call of them in the file gives a floating value, as one
    fixed point over the file's call graph (issue 30's cross-call dtype facts; ``rules/table_calls.py`` asks through
    :meth:`floats`, the one place this is decided). Three kinds of function, each *closed* when every call of it is
    seen in the file:

    * a module-level function (ldm's ``def nonlinearity(x): return x * torch.sigmoid(x)``, EfficientNet's ``swish``):
      its name is bound nowhere else in the file and ``__all__`` does not list it; every other mention of the name is
      the callee of a call;
    * a class's ``forward`` (naive U-Net's ``UnetUp.forward(self, x, skip)``, called only as ``self.up1(thro, down3)``):
      the class is defined once at the module's top level and subclassed nowhere in the file; each other mention of
      its name is a call ``C(...)`` assigned to ``self.<attr>`` (one target) in a method of a class of the file not
      subclassed in the file; that attribute is assigned nothing else in its class (class_float_layers), is read on
      no other object (FileFacts.foreign), added to no list, and is only ever called;
    * any other method of such a class (``self._embed(x)``, not a dunder, not a name of ``torch.nn.Module``'s, not
      decorated): every mention of the attribute name anywhere in the file is ``self.<name>(...)`` called in a method
      of the class itself (no ``getattr`` with a run-time name in the file).

    A call is in a method or module-level function (not in a lambda, a comprehension or a nested function, whose
    names are another scope's; not module-level code; not the function itself: a recursive function is not closed).
    Arguments bind to parameters as Python does (positional, then by keyword); a starred argument, or a function with
    ``*args``/``**kwargs``/positional-only parameters, leaves it unknown. A parameter is proven when at every call its
    argument is floating by the caller's facts (:class:`FlowFloats`, the caller's own proven parameters assumed
    floating: the fixed point, from every parameter down to the ones every call supports) or is ``None`` (no tensor:
    torch and MindSpore both refuse it where a float is read), or the call leaves it to a default of ``None`` or a
    float literal. A function with no call in the file proves nothing. A call from another file could pass anything:
    the floating-only op then refuses an integer loudly (``ops.sigmoid`` on int64: TypeError; ``ops.cat`` of
    float32 and int64: RuntimeError), never a silent value."""

    def __init__(self, module: cst.Module, resolve: Resolve, own: "OwnOutputs | None", file: "FileFacts",
                 float_only: frozenset[str]) -> None:
        self._resolve, self._own, self._file, self._float_only = resolve, own, file, float_only
        self._parents = _parents(module)
        self._module = module
        self._layers: dict[int, dict] = {}
        # id(function) -> (function, its bound ``self`` (0 or 1), [(caller, caller's class, {param: argument})])
        self._sites: dict[int, tuple[cst.FunctionDef, int, list]] = {}
        classes = [s for s in module.body if isinstance(s, cst.ClassDef)]
        class_names = [c.name.value for c in classes]
        dynamic = any(isinstance(c.func, cst.Name) and c.func.value == "getattr"
                      and (len(c.args) < 2 or not isinstance(c.args[1].value, cst.SimpleString))
                      for c in all_nodes(module, cst.Call))
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                self._add(stmt, 0, self._function_calls(stmt))
            elif isinstance(stmt, cst.ClassDef) and class_names.count(stmt.name.value) == 1 \
                    and stmt.name.value not in file.subclassed and isinstance(stmt.body, cst.IndentedBlock):
                for method in stmt.body.body:
                    if not isinstance(method, cst.FunctionDef) or method.decorators:
                        continue
                    name = method.name.value
                    if name == "forward":
                        self._add(method, 1, self._forward_calls(stmt))
                    elif not dynamic and not name.startswith("__") and name not in _MODULE_METHODS:
                        self._add(method, 1, self._method_calls(stmt, method))
        self._proven = self._solve()

    def floats(self, function: "cst.FunctionDef | None") -> frozenset[str]:
        """The function's parameters every call of it in the file gives a floating value (or None)."""
        return frozenset(self._proven.get(id(function), ())) if function is not None else frozenset()

    # -- the calls of each kind of function

    def _caller(self, call: cst.Call):
        """The method or module-level function a call is written in, with its class: (function, class or None), or
        None (module-level code, a lambda, a comprehension, a nested function)."""
        node = call
        while node is not None:
            node = self._parents.get(id(node))
            if isinstance(node, _SCOPES):
                return None
            if isinstance(node, cst.FunctionDef):
                break
        if node is None:
            return None
        holder = self._parents.get(id(self._parents.get(id(node))))
        if isinstance(holder, cst.ClassDef) and any(s is node for s in holder.body.body) \
                and any(s is holder for s in self._module.body):
            return node, holder
        if any(s is node for s in self._module.body):
            return node, None
        return None

    def _function_calls(self, function: cst.FunctionDef) -> "list[tuple[cst.Call, cst.FunctionDef, object]] | None":
        name = function.name.value
        calls = []
        for mention in all_nodes(self._module, cst.Name):
            if mention.value != name or mention is function.name:
                continue
            parent = self._parents.get(id(mention))
            if isinstance(parent, cst.Attribute) and parent.attr is mention \
                    or isinstance(parent, cst.Arg) and parent.keyword is mention:
                continue  # obj.swish, f(swish=...): not the function
            if not isinstance(parent, cst.Call) or parent.func is not mention:
                return None  # bound again, exported, passed as a value
            calls.append(parent)
        for stmt in self._module.body:  # __all__ = ["swish"]: other files may call it with anything
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                    isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "__all__"
                                                      for t in s.targets) for s in stmt.body) \
                    and any(name in n.value for n in all_nodes(stmt, cst.SimpleString)):
                return None
        return calls

    def _forward_calls(self, cls: cst.ClassDef) -> "list[cst.Call] | None":
        name, file = cls.name.value, self._file
        users = {}
        for mention in all_nodes(self._module, cst.Name):
            if mention.value != name or mention is cls.name:
                continue
            call = self._parents.get(id(mention))
            if isinstance(call, cst.Arg) and _contains(cls, mention) \
                    and isinstance(self._parents.get(id(call)), cst.Call) \
                    and isinstance(self._parents[id(call)].func, cst.Name) \
                    and self._parents[id(call)].func.value == "super":
                continue  # super(UnetUp, self).__init__() in the class itself
            assign = self._parents.get(id(call))
            if not isinstance(call, cst.Call) or call.func is not mention or not isinstance(assign, cst.Assign) \
                    or assign.value is not call or len(assign.targets) != 1 or not _self_attr(assign.targets[0].target):
                return None
            owner = assign
            while owner is not None and not isinstance(owner, cst.ClassDef):
                owner = self._parents.get(id(owner))
            if owner is None or owner.name.value in file.subclassed:
                return None
            users[(id(owner), assign.targets[0].target.attr.value)] = owner
        calls = []
        for (_, attr), owner in users.items():
            if attr in file.foreign or attr in file.appended or attr in file.named:
                return None
            layers = class_float_layers(owner, frozenset())
            if not layers.get(attr) or any(not (isinstance(c.func, cst.Name) and c.func.value == name)
                                           for c in layers[attr]):
                return None
            for ref in all_nodes(owner, cst.Attribute):
                if not (_self_attr(ref) and ref.attr.value == attr):
                    continue
                parent = self._parents.get(id(ref))
                if isinstance(parent, cst.AssignTarget):
                    continue
                if not isinstance(parent, cst.Call) or parent.func is not ref:
                    return None
                calls.append(parent)
        return calls

    def _method_calls(self, cls: cst.ClassDef, method: cst.FunctionDef) -> "list[cst.Call] | None":
        name = method.name.value
        if sum(isinstance(s, cst.FunctionDef) and s.name.value == name for s in cls.body.body) != 1 \
                or any(s.evaluated_value == name for s in all_nodes(self._module, cst.SimpleString)):
            return None  # defined twice, or named in a string (getattr(self, "embed"), __all__)
        calls = []
        for mention in all_nodes(self._module, cst.Name):
            if mention.value != name or mention is method.name:
                continue
            parent = self._parents.get(id(mention))
            if isinstance(parent, cst.Arg) and parent.keyword is mention:
                continue  # f(name=...): a keyword, not the method
            if not (isinstance(parent, cst.Attribute) and parent.attr is mention and _self_attr(parent)):
                return None  # a name of the same spelling elsewhere, or obj.name on another object
            call = self._parents.get(id(parent))
            if not isinstance(call, cst.Call) or call.func is not parent or not _contains(cls, call):
                return None
            calls.append(call)
        return calls

    def _add(self, function: cst.FunctionDef, offset: int, calls) -> None:
        params = function.params
        if not calls or params.posonly_params or isinstance(params.star_arg, cst.Param) \
                or params.star_kwarg is not None or len(params.params) <= offset:
            return
        sites = []
        for call in calls:
            found = self._caller(call)
            if found is None or found[0] is function:
                return  # module-level code, a lambda or comprehension, a nested function, a recursive call
            binding = _bind(params, offset, call)
            if binding is None:
                return
            sites.append((found[0], found[1], binding))
        self._sites[id(function)] = (function, offset, sites)

    # -- the fixed point

    def _solve(self) -> dict[int, set[str]]:
        proven = {key: {p.name.value for p in (*function.params.params[offset:], *function.params.kwonly_params)}
                  for key, (function, offset, _) in self._sites.items()}
        changed = True
        while changed:
            changed = False
            for key, (_, _, sites) in self._sites.items():
                for caller, cls, binding in sites:
                    if not proven[key]:
                        break
                    facts = self._facts(caller, cls, frozenset(proven.get(id(caller), ())))
                    for param in list(proven[key]):
                        value = binding.get(param, _UNKNOWN)
                        if value is _UNKNOWN or not (isinstance(value, cst.Name) and value.value == "None"
                                                     or facts.is_float(value)):
                            proven[key].discard(param)
                            changed = True
        return proven

    def _facts(self, caller: cst.FunctionDef, cls: "cst.ClassDef | None", assumed: frozenset[str]) -> "FlowFloats":
        layers = self._layers.get(id(cls))
        if layers is None:
            layers = self._layers[id(cls)] = class_float_layers(cls, self._file.foreign) if cls is not None else {}
        return FlowFloats(caller, self._resolve, layers, self._float_only, self._own, assumed=assumed)


def _bind(params: cst.Parameters, offset: int, call: cst.Call) -> "dict[str, object] | None":
    """The argument each parameter of a call gets, Python's way (``offset``: the ``self`` a method call binds): an
    expression, the default's value (a ``None`` or float literal), or ``_UNKNOWN``; None for a starred argument, an
    unknown keyword or too many positional arguments."""
    positional = list(params.params[offset:])
    names = [p.name.value for p in (*positional, *params.kwonly_params)]
    binding: dict[str, object] = {}
    given = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(given) > len(positional):
        return None
    for param, arg in zip(positional, given):
        binding[param.name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in names or arg.keyword.value in binding:
                return None
            binding[arg.keyword.value] = arg.value
    for param in (*positional, *params.kwonly_params):
        if param.name.value not in binding:
            default = param.default
            binding[param.name.value] = default if isinstance(default, cst.Float) or isinstance(default, cst.Name) \
                and default.value == "None" else _UNKNOWN
    return binding


def caller_floats_of(module: "cst.Module | None", function: "cst.FunctionDef | None", resolve: Resolve,
                     own: "OwnOutputs | None", file: "FileFacts | None", float_only: frozenset[str]) -> frozenset[str]:
    """The function's parameters every call of it in the file gives a floating value (:class:`CallerFloats`, built
    once per file)."""
    if module is None or function is None or file is None:
        return frozenset()
    cached = _CALLER_FLOATS.get(id(module))
    if cached is None or cached[0] is not module:
        _CALLER_FLOATS.clear()
        cached = _CALLER_FLOATS[id(module)] = (module, CallerFloats(module, resolve, own, file, float_only))
    return cached[1].floats(function)


# ------------------------------------------------------------------------------------- padding amounts never negative

# calls whose value is a size, never negative: ``len(x)``, ``x.size(1)``, ``x.numel()``, ``x.dim()``
_SIZE_FUNCTIONS = frozenset({"len"})
_SIZE_METHODS = frozenset({"size", "numel", "dim", "nelement", "ndimension"})
_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})


def _checked_non_negative(test) -> set[str]:
    """The names a test proves non-negative when it holds: ``n > 0``, ``n >= 0``, ``0 <= n``, ``0 < n`` (or a
    non-negative integer literal in place of 0), joined by ``and``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _checked_non_negative(test.left) | _checked_non_negative(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return set()
    left, op, right = test.left, test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)) and isinstance(left, cst.Name) \
            and isinstance(right, cst.Integer):
        return {left.value}
    if isinstance(op, (cst.LessThan, cst.LessThanEqual)) and isinstance(right, cst.Name) \
            and isinstance(left, cst.Integer):
        return {right.value}
    return set()


def _checked_differences(test) -> set[tuple[str, "str | int"]]:
    """The differences ``a - b`` a test proves non-negative when it holds: ``a > b``, ``a >= b``, ``b < a``, ``b <=
    a`` (``a`` a name, ``b`` a name or an integer literal), joined by ``and``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _checked_differences(test.left) | _checked_differences(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return set()
    left, op, right = test.left, test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        left, right = right, left
    elif not isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
        return set()
    if not isinstance(left, cst.Name):
        return set()
    if isinstance(right, cst.Name):
        return {(left.value, right.value)}
    if isinstance(right, cst.Integer):
        return {(left.value, int(right.value, 0))}
    return set()


# torch layers whose build raises on a negative size (torch.empty of a negative dimension: "Trying to create tensor with
# negative dimension") -> (their size parameters, in positional order; the most positional arguments read; keywords
# with which the build makes no tensor of those sizes): a parameter handed to one as a size is non-negative after the
# build (NonNegativeFacts._sized_before)
SIZED_LAYERS = {
    **{f"torch.nn.Conv{d}d": (("in_channels", "out_channels"), 8, frozenset()) for d in (1, 2, 3)},
    "torch.nn.Linear": (("in_features", "out_features"), 2, frozenset()),
    **{f"torch.nn.BatchNorm{d}d": (("num_features",), 3, frozenset({"affine", "track_running_stats"}))
       for d in (1, 2, 3)},
}


class NonNegativeFacts(_FunctionFacts):
    """Is an expression (a padding amount, or a tuple/list display of them) a non-negative number by construction?
    Read from the code of one function: an integer literal (``-1`` is a unary minus: not one); a size (``len(x)``,
    ``x.shape``, ``x.shape[2]``, ``x.size(-1)``, ``x.numel()``, ``x.dim()``, ``x.ndim``); a sum, product or floor
    division of non-negatives; ``a % n`` with a positive integer literal ``n`` (Python's and torch's remainder take the
    divisor's sign); ``max(...)`` with a non-negative argument, ``abs(...)``; ``int(...)`` of a non-negative; a
    subscript of a non-negative sequence (``pad[0]``, ``x.shape[-1]``); a local name every binding of which is one
    (a tuple unpacking of a size: ``M, N = x.shape``), never a parameter, never declared global/nonlocal, and changed
    by no augmented assignment but ``+=``/``*=``/``//=`` of a non-negative. A list display is one only where it is
    written (a local list may be changed in place); a parameter never rebound that an earlier top-level statement
    handed to a torch layer as a size (``nn.Conv2d(in_planes, planes, 3)`` then ``planes // 4``: torch's build
    raises on a negative one, :meth:`_sized_before`). Anything else (a subtraction, another parameter, an attribute:
    a constructor argument may be negative) is unknown.

    What it serves: MindSpore 2.10's ``ops.pad`` (and the Cells built on it) is wrong for a negative amount from its
    second call in a process on, so the converter keeps the runtime pad, which crops by slicing, wherever an amount
    may be negative (mindport.mappings.transforms.layers.pad_crop_negative); an amount non-negative by these facts
    is MindSpore's own (``pad = (0, 1, 0, 1)`` then ``F.pad(x, pad)``; ``F.pad(x, (0, M + 1))`` after ``M, N =
    x.shape``)."""

    def __init__(self, function: cst.FunctionDef | None, resolve: Resolve) -> None:
        super().__init__(function, resolve)
        self._function = function
        self._changed: set[str] = set()  # names declared global/nonlocal, or changed by another augmented assignment
        if function is None:
            return
        for node in all_nodes(function, (cst.Global, cst.Nonlocal)):
            self._changed.update(n.name.value for n in node.names)
        for node in all_nodes(function, cst.AugAssign):
            if isinstance(node.target, cst.Name) and not (
                    isinstance(node.operator, (cst.AddAssign, cst.MultiplyAssign, cst.FloorDivideAssign))
                    and (isinstance(node.value, cst.Integer) or _is_size(node.value))):
                self._changed.add(node.target.value)
        # checks that a name is non-negative: a top-level ``assert a >= 0 and b >= 0`` (name -> its statement's
        # index) and the body of an ``if n > 0:`` (its node ids, its names)
        self._top: dict[int, int] = {}
        self._asserted: dict[str, int] = {}
        self._guards: list[tuple[set[int], set[str]]] = []
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
        for index, stmt in enumerate(body):
            for node in all_nodes(stmt, cst.CSTNode):
                self._top[id(node)] = index
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assert):
                    for name in _checked_non_negative(small.test):
                        self._asserted.setdefault(name, index)
        self._difference_guards: list[tuple[set[int], set]] = []  # the body of an ``if a > b:``: a - b >= 0
        for node in own_nodes(function, cst.If):
            names = _checked_non_negative(node.test)
            if names:
                self._guards.append(({id(n) for n in all_nodes(node.body, cst.CSTNode)}, names))
            differences = _checked_differences(node.test)
            if differences:
                self._difference_guards.append(({id(n) for n in all_nodes(node.body, cst.CSTNode)}, differences))

    def _unpack(self, node: cst.Assign) -> None:
        """Also ``M, N = x.shape`` / ``x.size()`` / ``x.shape[-2:]``: each name one of the sizes (the sequence's
        every element is)."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        value = node.value
        sizes = _is_size_sequence(value) or isinstance(value, cst.Subscript) and _is_size_sequence(value.value) \
            and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice)
        if isinstance(target, (cst.Tuple, cst.List)) and sizes \
                and all(not isinstance(e, cst.StarredElement) and isinstance(e.value, cst.Name)
                        for e in target.elements):
            for e in target.elements:
                self._unpacked.setdefault(e.value.value, []).append(value)
            return
        super()._unpack(node)

    def non_negative(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, (cst.Tuple, cst.List)):
            return all(not isinstance(e, cst.StarredElement) and self.non_negative(e.value, seen)
                       for e in expr.elements)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, (cst.Add, cst.Multiply, cst.FloorDivide)):
                return self.non_negative(expr.left, seen) and self.non_negative(expr.right, seen)
            if isinstance(expr.operator, cst.Modulo):
                right = expr.right
                return isinstance(right, cst.Integer) and int(right.value, 0) > 0
            if isinstance(expr.operator, cst.Subtract):
                return self._checked_difference(expr)
            return False
        if isinstance(expr, cst.Subscript):  # pad[0], pad[2:], x.shape[-2:] of a non-negative sequence
            return len(expr.slice) == 1 and self.non_negative(expr.value, seen) and not _is_size(expr.value)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and (self._order is not None and self._order.bindings(expr.func.value) or expr.func.value in self._params):
            return False  # a local named len or max
        if _is_size_sequence(expr) or _is_size(expr):
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and self._resolve(expr.func) is None \
                and expr.func.value in ("max", "abs", "int") and expr.args \
                and all(a.keyword is None and not a.star for a in expr.args):
            if expr.func.value == "max":
                return len(expr.args) > 1 and any(self.non_negative(a.value, seen) for a in expr.args)
            return len(expr.args) == 1 and (expr.func.value == "abs" or self.non_negative(expr.args[0].value, seen))
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in self._changed or self._order is None:
                return False
            if self._checked(name, expr) or self._unpacked_checked(name, expr) or self._sized_before(name, expr):
                return True
            values = self._binding_values(name)
            if any(isinstance(v, (cst.List, cst.ListComp)) for v in values if v is not None):
                return False  # a local list may be changed in place (pad.append(-1), pad[0] = -1)
            return self._every_binding(name, seen, self.non_negative)
        return False

    def _single(self, name: str):
        """The one binding of ``name`` in the function: ("param", None), ("value", node or None), or None when it is
        bound more than once (or not at all)."""
        values = self._binding_values(name)
        if name in self._params:
            return ("param", None) if not values else None
        return ("value", values[0]) if len(values) == 1 else None

    def _checked(self, name: str, read) -> bool:
        """``name``, bound once, is checked non-negative before ``read``: by a top-level ``assert`` before the
        statement holding the read (encodec's ``assert padding_left >= 0 and padding_right >= 0``), or by an
        ``if name > 0:`` whose body holds it (whisper's ``if padding > 0: audio = F.pad(audio, (0, padding))``), the
        binding not inside that body."""
        single = self._single(name)
        if single is None:
            return False
        at = self._top.get(id(read))
        if name in self._asserted and at is not None and self._asserted[name] < at:
            return True
        return any(name in names and id(read) in body and (single[1] is None or id(single[1]) not in body)
                   for body, names in self._guards)

    def _sized_before(self, name: str, read) -> bool:
        """``name`` is a parameter never rebound that an earlier top-level statement of the function hands, as it
        is, to a torch layer as a size whose negative value makes the build raise (SIZED_LAYERS: torch.empty of a
        negative dimension), in every run of that statement (no conditional expression, lambda or comprehension
        around the build): akamaster's CIFAR ResNet builds ``self.conv1 = nn.Conv2d(in_planes, planes, ...)``, then
        pads its option-A shortcut by ``planes // 4``. Torch raised there on a negative one, so the read is of a
        non-negative number."""
        at = self._top.get(id(read))
        if at is None or self._single(name) != ("param", None) or name in self._changed \
                or not isinstance(self._function.body, cst.IndentedBlock) or any(
                    p.name.value == name for lam in all_nodes(self._function, cst.Lambda) for p in lam.params.params):
            return False  # (a lambda's own parameter of that name is another value)
        parents = _function_parents(self._function)
        for stmt in self._function.body.body[:at]:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for call in all_nodes(stmt, cst.Call):
                sizes = SIZED_LAYERS.get(self._resolve(call.func) or "")
                if sizes is None or any(a.star for a in call.args):
                    continue
                positional = [a for a in call.args if a.keyword is None]
                keywords = {a.keyword.value for a in call.args if a.keyword is not None}
                names, limit, refused = sizes
                if len(positional) > limit or keywords & refused:
                    continue  # a setting that builds no tensor of those sizes (BatchNorm's affine=False ...)
                given = [a.value for a in positional[:len(names)]] + [
                    a.value for a in call.args if a.keyword is not None and a.keyword.value in names]
                if not any(isinstance(v, cst.Name) and v.value == name for v in given):
                    continue
                node = parents.get(id(call))
                while node is not None and node is not stmt and not isinstance(node, (
                        cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                        cst.GeneratorExp)):
                    node = parents.get(id(node))
                if node is stmt:
                    return True
        return False

    def _checked_difference(self, expr: cst.BinaryOperation) -> bool:
        """``a - b`` read in the body of an ``if a > b:`` (:func:`_checked_differences`; x-transformers' ``if j > i:
        eye = F.pad(eye, (j - i, 0), value = 1.)``), ``a`` and ``b`` (unless a literal) each assigned once outside
        the body (:meth:`_assigned_once_outside`), neither declared global/nonlocal nor changed by an augmented
        assignment: the test held on the values the difference reads."""
        left, right = expr.left, expr.right
        if not isinstance(left, cst.Name) or not isinstance(right, (cst.Name, cst.Integer)):
            return False
        key = (left.value, right.value if isinstance(right, cst.Name) else int(right.value, 0))
        names = [n.value for n in (left, right) if isinstance(n, cst.Name)]
        if any(n in self._changed for n in names) or self._order is None:
            return False
        return any(key in pairs and id(expr) in body and all(self._assigned_once_outside(n, body) for n in names)
                   for body, pairs in self._difference_guards)

    def _assigned_once_outside(self, name: str, body: set[int]) -> bool:
        """``name`` is a parameter never rebound, or bound by one assignment (``i, j, device = *sim.shape[-2:],
        sim.device`` too) outside ``body``: not a loop target, a ``with``/``except`` name or a ``:=``."""
        parents = _function_parents(self._function)
        stores = [n for n in all_nodes(self._function, cst.Name) if n.value == name and id(n) in self._order._store]
        if name in self._params:
            return not stores
        if len(stores) != 1 or id(stores[0]) in body:
            return False
        node = parents.get(id(stores[0]))
        while isinstance(node, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            node = parents.get(id(node))
        return isinstance(node, cst.AssignTarget)

    def _unpacked_checked(self, name: str, read) -> bool:
        """A sequence bound once, unpacked into names each checked non-negative before ``read`` (``l, r = paddings``
        then ``assert l >= 0 and r >= 0``: the unpacking raises unless those are all its elements)."""
        if self._single(name) is None or self._order is None:
            return False
        for node in own_nodes(self._function, cst.Assign):
            target = node.targets[0].target if len(node.targets) == 1 else None
            if isinstance(node.value, cst.Name) and node.value.value == name and isinstance(target, (cst.Tuple,
                                                                                                    cst.List)) \
                    and target.elements \
                    and all(not isinstance(e, cst.StarredElement) and isinstance(e.value, cst.Name)
                            and self._checked(e.value.value, read) for e in target.elements):
                return True
        return False


def _is_size_sequence(expr) -> bool:
    """``x.shape`` or ``x.size()``: a sequence of sizes."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
        and not expr.args


def _is_size(expr) -> bool:
    """One size: ``len(x)``, ``x.size(1)``, ``x.numel()``, ``x.dim()``, ``x.ndim``, ``x.shape[i]``, ``x.size()[i]``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "ndim":
        return True
    if isinstance(expr, cst.Subscript) and _is_size_sequence(expr.value) and len(expr.slice) == 1 \
            and isinstance(expr.slice[0].slice, cst.Index):
        return True
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value in _SIZE_FUNCTIONS and len(expr.args) == 1:
            return True
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SIZE_METHODS and expr.args \
                and expr.func.attr.value == "size":
            return len(expr.args) == 1
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SIZE_METHODS - {"size"} \
                and not expr.args:
            return True
    return False


# ------------------------------------------------------------------------------------------------ dtype-valued names

_DTYPE_LEAVES = frozenset({"float", "float32", "float64", "double", "float16", "half", "bfloat16", "int", "int8",
                           "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
                           "cfloat", "cdouble"})


def _dtype_expression(expr, resolve: Resolve) -> bool:
    """``x.dtype`` (any receiver) or a torch dtype (``torch.float32``): a dtype whatever runs."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
        return True
    qual = resolve(expr)
    return qual is not None and qual.startswith("torch.") and qual.count(".") == 1 \
        and qual.rpartition(".")[2] in _DTYPE_LEAVES


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    p = function.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def _callers_pass_dtypes(module: cst.Module, function: cst.FunctionDef, name: str, resolve: Resolve) -> bool:
    """``function`` is a module-level function whose every mention in the file is a call that gives its parameter
    ``name`` a dtype expression or leaves it to its default (no ``*args``/``**kwargs`` call, not exported by
    ``__all__``, not handed on as a value)."""
    if function not in module.body:
        return False
    fname = function.name.value
    params = [q.name.value for q in _parameters(function)]
    position = params.index(name)
    positional_ok = position < len(function.params.posonly_params) + len(function.params.params)
    calls = [c for c in all_nodes(module, cst.Call) if isinstance(c.func, cst.Name) and c.func.value == fname]
    mentions = [n for n in all_nodes(module, cst.Name) if n.value == fname]
    if len(mentions) != len(calls) + 1:  # the def's own name, and each call's callee
        return False
    for s in all_nodes(module, cst.SimpleString):
        if s.value.strip("'\"") == fname:
            return False  # named in __all__ or looked up by name
    for call in calls:
        given = None
        for i, arg in enumerate(call.args):
            if arg.star:
                return False
            if arg.keyword is not None and arg.keyword.value == name:
                given = arg.value
            elif arg.keyword is None and positional_ok and i == position:
                given = arg.value
        if given is not None and not _dtype_expression(given, resolve):
            return False
    return True


def dtype_name(function: cst.FunctionDef, name: str, module: "cst.Module | None", resolve: Resolve) -> bool:
    """Is the local name ``name`` a dtype wherever the function reads it? Every binding of it in the function is one
    (issue 30's "dtype from flow", for ``x.type(dtype)`` -> ``x.astype(dtype)``):

    * ``name = x.dtype`` or ``name = torch.float32`` (:func:`_dtype_expression`);
    * an element of a tuple display assigned to a flat target, matched from the end when a starred element comes
      before it (``i, j, dtype = *sim.shape[-2:], sim.dtype``);
    * a parameter whose default is one, of a module-level function every call in the file gives a dtype there or
      nothing (:func:`_callers_pass_dtypes`: ``posemb_sincos_2d(h, w, dim, dtype=torch.float32)``).

    Any other binding (a loop, ``with``, augmented or annotated assignment, a walrus, an import, a nested def, a
    ``global``) answers False."""
    bound = False
    for param in _parameters(function):
        if param.name.value == name:
            if param.default is None or not _dtype_expression(param.default, resolve) \
                    or module is None or not _callers_pass_dtypes(module, function, name, resolve):
                return False
            bound = True
    star = function.params.star_arg
    if isinstance(star, cst.Param) and star.name.value == name or function.params.star_kwarg is not None \
            and function.params.star_kwarg.name.value == name:
        return False
    if _bound_otherwise(function, name):
        return False
    for assign in own_nodes(function, cst.Assign):
        for target in assign.targets:
            target = target.target
            if isinstance(target, cst.Name):
                if target.value != name:
                    continue
                if not _dtype_expression(assign.value, resolve):
                    return False
                bound = True
            elif name in target_names(target):
                value = _tuple_element(target, name, assign.value)
                if value is None or not _dtype_expression(value, resolve):
                    return False
                bound = True
    return bound


def _tuple_element(target, name: str, value):
    """The element of the tuple display ``value`` that the flat target tuple binds to ``name``, or None."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return None
    names = target.elements
    if any(not isinstance(e.value, cst.Name) for e in names):
        return None
    index = [e.value.value for e in names].index(name)
    values = value.elements
    from_end = len(names) - index
    if from_end > len(values) or any(isinstance(e, cst.StarredElement) for e in values[len(values) - from_end:]):
        return None
    if not any(isinstance(e, cst.StarredElement) for e in values) and len(values) != len(names):
        return None
    return values[len(values) - from_end].value


def dtype_property(cls: "cst.ClassDef | None", attr: str) -> bool:
    """Is ``self.<attr>`` a ``@property`` of the class whose every ``return`` gives ``x.dtype``
    (improved-diffusion's ``inner_dtype``: ``next(self.input_blocks.parameters()).dtype``)?"""
    if cls is None or not isinstance(cls.body, cst.IndentedBlock):
        return False
    found = False
    for stmt in cls.body.body:
        if isinstance(stmt, (cst.FunctionDef, cst.SimpleStatementLine)) and not isinstance(stmt, cst.FunctionDef):
            if any(isinstance(s, (cst.Assign, cst.AnnAssign)) and attr in [
                    n for t in (s.targets if isinstance(s, cst.Assign) else [s]) for n in target_names(t.target)]
                   for s in stmt.body):
                return False  # a class attribute of that name too
        if not isinstance(stmt, cst.FunctionDef) or stmt.name.value != attr:
            continue
        if found or [code_of(d.decorator) for d in stmt.decorators] != ["property"]:
            return False
        returns = own_nodes(stmt, cst.Return)
        if not returns or any(not (isinstance(r.value, cst.Attribute) and r.value.attr.value == "dtype")
                              for r in returns):
            return False
        found = True
    return found


# ------------------------------------------------------------------------------------------------ real tensors

_REAL_DTYPES = _DTYPE_LEAVES - {"complex64", "complex128", "cfloat", "cdouble"}
# torch functions whose result is real whatever real arguments they get (torch.arange refuses a complex bound; a
# constructor of sizes makes a real tensor unless its dtype= says otherwise)
_REAL_CREATIONS = frozenset({"arange", "linspace", "logspace", "zeros", "ones", "full", "rand", "randn", "randint",
                             "randperm", "eye", "empty", "tril_indices", "triu_indices"})
_REAL_JOINS = frozenset({"stack", "cat", "concat", "concatenate", "meshgrid", "broadcast_tensors", "hstack", "vstack"})
# methods (and torch functions of one tensor) whose result is real when the tensor is
_REAL_KEEPING = frozenset({"float", "double", "half", "long", "int", "bool", "abs", "neg", "view", "reshape",
                           "permute", "transpose", "unsqueeze", "squeeze", "flatten", "contiguous", "clone", "detach",
                           "repeat", "expand", "flip", "roll", "t", "sum", "mean", "cumsum", "clamp", "sign",
                           "relu", "floor", "ceil", "round", "sqrt", "exp", "log", "sin", "cos", "tril", "triu",
                           "expand_as", "view_as", "reshape_as"})
# tensor methods casting to a real dtype: real whatever the receiver (torch drops a complex's imaginary part, with a
# warning, as MindSpore's cast reads the real part)
_REAL_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"})
_BINARY_REAL = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def _assigned_only(function: cst.FunctionDef, name: str) -> bool:
    """No binding of ``name`` in the function but plain assignments (no parameter, loop, ``with``, augmented or
    annotated assignment, walrus, comprehension, import, nested def, ``global``)."""
    p = function.params
    if any(q.name.value == name for q in _parameters(function)) or any(
            isinstance(q, cst.Param) and q.name.value == name for q in (p.star_arg, p.star_kwarg)):
        return False
    return not _bound_otherwise(function, name)


def _bound_otherwise(function: cst.FunctionDef, name: str) -> bool:
    """Does the function bind ``name`` other than by a plain assignment or a parameter: a loop, ``with``, augmented or
    annotated assignment, walrus, comprehension, ``global``/``nonlocal``, a nested def or class, an import (a star
    import may bind it)? dtype_name and _assigned_only read a name's value from its plain assignments only."""
    for kind in (cst.For, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.WithItem, cst.CompFor):
        for node in own_nodes(function, kind):
            target = getattr(node, "target", None) if kind is not cst.WithItem else (
                node.asname.name if node.asname is not None else None)
            if target is not None and name in target_names(target):
                return True
    for node in own_nodes(function, (cst.Global, cst.Nonlocal)):
        if any(n.name.value == name for n in node.names):
            return True
    for node in own_nodes(function, (cst.FunctionDef, cst.ClassDef)):
        if node is not function and node.name.value == name:
            return True
    return any(isinstance(node.names, cst.ImportStar) or any(
        (a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name)
         else code_of(a.name).split(".")[0]) == name for a in node.names)
        for node in own_nodes(function, (cst.Import, cst.ImportFrom)))


class RealFacts:
    """Is an expression a real (not complex) tensor or number by construction, in one function (issue 30: the
    complex-modulus guard ``mp_math.abs``, whose only decision is whether its input is complex)? Real: a Python
    number; a torch constructor of :data:`_REAL_CREATIONS` without a complex ``dtype=`` (``torch.arange(0, n,
    step=s)``: its dtype depends on ``n``, but torch refuses a complex bound); a join of :data:`_REAL_JOINS` of
    real tensors (``torch.meshgrid``'s pieces, unpacked or indexed); ``+ - * / // % **`` and a sign of reals; an index
    or slice of a real; a cast to a real dtype (``.long()``, :data:`_REAL_CASTS`) of anything; a method or function
    of :data:`_REAL_KEEPING` on a real; a name every binding of which in the
    function is a plain assignment of a real (a tuple target unpacking a real join); anything ``floating`` says is
    real (the caller's: a layer of the class's output). A parameter, an attribute, an imaginary literal or an unknown
    call is not."""

    def __init__(self, function: "cst.FunctionDef | None", resolve: Resolve,
                 floating: "Callable[[cst.BaseExpression], bool] | None" = None) -> None:
        self._function, self._resolve, self._floating = function, resolve, floating

    def is_real(self, expr, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.is_real(expr.expression, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _BINARY_REAL):
            return self.is_real(expr.left, seen) and self.is_real(expr.right, seen)
        if isinstance(expr, cst.Subscript):
            return self.is_real(expr.value, seen)
        if isinstance(expr, cst.Name) and self._name_real(expr.value, seen):
            return True
        if isinstance(expr, cst.Call) and self._call_real(expr, seen):
            return True
        return self._floating is not None and self._floating(expr)

    def _name_real(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True
        function = self._function
        if function is None or not _assigned_only(function, name):
            return False
        values = []
        for assign in own_nodes(function, cst.Assign):
            for target in assign.targets:
                target = target.target
                if isinstance(target, cst.Name):
                    if target.value == name:
                        values.append(assign.value)
                elif name in target_names(target):
                    if not (isinstance(assign.value, cst.Call) and (self._join(assign.value) and self._call_real(
                            assign.value, seen | {name}) or self._mapped_real(assign.value, seen | {name}))):
                        return False  # q, k = <a real join>, or map(<real of t>, (q, k)): each piece is real
                    values.append(None)
        return bool(values) and all(v is None or self.is_real(v, seen | {name}) for v in values)

    def _mapped_real(self, call: cst.Call, seen: frozenset[str]) -> bool:
        """``map(lambda t: <real when t is>, (q, k))`` with real members (vit-pytorch's LeViT: ``q_pos, k_pos =
        map(lambda t: rearrange(t, 'i j c -> (i j) c'), (q_pos, k_pos))``)."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "map" and self._resolve(call.func) is None
                and len(call.args) == 2 and not any(a.star or a.keyword for a in call.args)):
            return False
        fn, members = call.args[0].value, call.args[1].value
        if not (isinstance(fn, cst.Lambda) and len(fn.params.params) == 1 and not fn.params.kwonly_params
                and not isinstance(fn.params.star_arg, cst.Param) and fn.params.star_kwarg is None
                and isinstance(members, (cst.Tuple, cst.List)) and members.elements
                and not any(isinstance(e, cst.StarredElement) for e in members.elements)):
            return False
        return all(self.is_real(e.value, seen) for e in members.elements) \
            and self.is_real(fn.body, seen | {fn.params.params[0].name.value})

    def _join(self, call: cst.Call) -> bool:
        qual = self._resolve(call.func)
        return qual is not None and qual.startswith("torch.") and qual.rpartition(".")[2] in _REAL_JOINS

    def _call_real(self, call: cst.Call, seen: frozenset[str]) -> bool:
        if any(a.star for a in call.args):
            return False
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if "out" in keywords:
            return False
        dtype = keywords.get("dtype")
        if dtype is not None:
            qual = self._resolve(dtype)
            if qual is None or qual.rpartition(".")[2] not in _REAL_DTYPES:
                return False
        qual = self._resolve(call.func)
        if qual is not None:
            if qual in ("einops.rearrange", "einops.repeat"):  # a pattern moves or repeats the values
                return bool(call.args) and call.args[0].keyword is None and self.is_real(call.args[0].value, seen)
            if not qual.startswith("torch.") or qual.count(".") != 1:
                return False
            leaf = qual.rpartition(".")[2]
            if leaf in _REAL_CREATIONS:
                return True
            positional = [a.value for a in call.args if a.keyword is None]
            if leaf in _REAL_JOINS:
                members = positional
                if len(members) == 1 and isinstance(members[0], (cst.List, cst.Tuple)):
                    members = [e.value for e in members[0].elements if not isinstance(e, cst.StarredElement)]
                    if len(members) != len(positional[0].elements):
                        return False
                return bool(members) and all(self.is_real(m, seen) for m in members)
            if leaf in _REAL_KEEPING:
                return bool(positional) and self.is_real(positional[0], seen)
            return False
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _REAL_CASTS and not call.args:
            return True  # x.long(): a cast to a real dtype is real whatever x is (torch drops a complex's imaginary part)
        if isinstance(func, cst.Attribute) and func.attr.value in _REAL_KEEPING:
            return self.is_real(func.value, seen)
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and dtype is None and all(
                a.keyword is not None and a.keyword.value in ("device", "non_blocking") for a in call.args):
            return self.is_real(func.value, seen)
        return False


def partial_applied(partial: cst.Call, args) -> cst.Call:
    """What calling ``partial(X, k=v, ...)`` with ``args`` calls: ``X(*args, k=v, ...)``, a node of its own (no
    rewrite is keyed to it). Whether ``partial`` is ``functools.partial`` is the caller's to resolve."""
    return cst.Call(func=partial.args[0].value, args=(*args, *partial.args[1:]))


def _module_partials(module: cst.Module) -> dict[str, cst.Call]:
    """Names bound once, at the module's top level, to a call ``partial(X, <keywords only>)``
    (``LinearNoBias = partial(nn.Linear, bias=False)``) and bound nowhere else in the file (no other assignment,
    parameter, loop or ``as`` target, import, def or class of that name): name -> that call. Whether ``partial`` is
    ``functools.partial`` and X a layer class is the reader's to resolve (:meth:`ClassFacts.partial_layer`)."""
    found: dict[str, cst.Call] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
            assign = stmt.body[0]
            value = assign.value
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(value, cst.Call) and value.args and value.args[0].keyword is None \
                    and not value.args[0].star and all(a.keyword is not None for a in value.args[1:]):
                found.setdefault(assign.targets[0].target.value, []).append(value)
    bound: dict[str, int] = {}
    for node in all_nodes(module, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.AsName,
                                   cst.NamedExpr)):
        target = getattr(node, "target", None) if not isinstance(node, cst.AsName) else node.name
        for name in all_nodes(target, cst.Name) if target is not None else ():
            bound[name.value] = bound.get(name.value, 0) + 1
    for node in all_nodes(module, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias)):
        name = node.name
        while isinstance(name, cst.Attribute):
            name = name.value
        if isinstance(node, cst.ImportAlias) and node.asname is not None:
            name = node.asname.name
        if isinstance(name, cst.Name):
            bound[name.value] = bound.get(name.value, 0) + 2
    return {name: calls[0] for name, calls in found.items() if len(calls) == 1 and bound.get(name) == 1}


def _stores(stmt: cst.CSTNode, name: str) -> bool:
    """Does the statement bind ``name`` in any way (``=``, ``+=``, ``:=``, a loop or comprehension target, ``as``,
    ``del``, or a global/nonlocal declaration of it)?"""
    if _binds(stmt, name):
        return True
    for node in all_nodes(stmt, (cst.For, cst.CompFor)):
        if any(n.value == name for n in all_nodes(node.target, cst.Name)):
            return True
    for node in all_nodes(stmt, cst.AsName):
        if any(n.value == name for n in all_nodes(node.name, cst.Name)):
            return True
    for node in all_nodes(stmt, cst.Del):
        if any(n.value == name for n in all_nodes(node.target, cst.Name)):
            return True
    return any(name in [n.name.value for n in node.names] for node in all_nodes(stmt, (cst.Global, cst.Nonlocal)))


def block_binding(function: "cst.FunctionDef | None", node: cst.CSTNode, name: str):
    """The plain ``name = value`` that a read of ``name`` in ``node`` sees in straight-line code of one block: the
    read's statement S and that assignment B are statements of the same block (a method's body, a branch's, a loop
    body's), B the last statement before S that binds ``name`` in any way (so B runs before S on every path to S and
    nothing rebinds ``name`` between them; ``if self.l2: n = k.norm(...) ** 2`` then ``torch.cat((k, n))`` in that
    branch). ``(block statements, index of B, index of S, value)``, or None (no such B in the block, B not a plain
    one-target assignment, S a compound statement, or ``name`` bound inside S: a ``:=``, a comprehension's or a
    lambda's variable)."""
    if function is None:
        return None
    parents = _function_parents(function)
    stmt, parent = node, parents.get(id(node))
    while parent is not None and not (isinstance(parent, cst.IndentedBlock)
                                      and isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement))):
        stmt, parent = parent, parents.get(id(parent))
    if parent is None:
        return None
    body = list(parent.body)
    index = next((i for i, s in enumerate(body) if s is stmt), None)
    if index is None or not isinstance(stmt, cst.SimpleStatementLine) \
            or any(isinstance(n.target, cst.Name) and n.target.value == name for n in all_nodes(stmt, cst.NamedExpr)) \
            or any(n.value == name for c in all_nodes(stmt, cst.CompFor) for n in all_nodes(c.target, cst.Name)) \
            or any(p.name.value == name for f in all_nodes(stmt, cst.Lambda) for p in all_nodes(f.params, cst.Param)):
        return None  # a comprehension's variable, a lambda's parameter or a := in the read's own statement
    for b in range(index - 1, -1, -1):
        prev = body[b]
        if not _stores(prev, name):
            continue
        if isinstance(prev, cst.SimpleStatementLine) and len(prev.body) == 1 and isinstance(prev.body[0], cst.Assign) \
                and len(prev.body[0].targets) == 1 and isinstance(prev.body[0].targets[0].target, cst.Name) \
                and prev.body[0].targets[0].target.value == name:
            return body, b, index, prev.body[0].value
        return None
    return None


def block_rebinding_values(body: list, low: int, high: int, name: str) -> "list | None":
    """The values of the statements strictly between ``body[low]`` and ``body[high]`` that bind ``name``, each a
    plain ``name = value``; None when one binds it any other way."""
    values = []
    for stmt in body[low + 1:high]:
        if not _stores(stmt, name):
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign) \
                and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name):
            values.append(stmt.body[0].value)
            continue
        return None
    return values
