"""torch.nn.Unfold whose input is a batch in every program torch runs -> a Cell of the file calling ops.unfold."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.factories import insert_definitions
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_statement, walk

_PARAMS = ("kernel_size", "dilation", "padding", "stride")  # torch.nn.Unfold's constructor, in order
_EINOPS_LAYERS = ("einops.layers.torch.Rearrange", "einops.layers.torch.Reduce")
_EINOPS_FUNCTIONS = ("einops.rearrange", "einops.reduce")


class UnfoldLayerTransform(Rule):
    """``nn.Unfold(...)`` followed, in the same ``nn.Sequential(...)``, by an einops ``Rearrange``/``Reduce`` whose
    literal pattern takes exactly three axes (``'b c n -> b n c'``) becomes ``Unfold1(...)``, a Cell the file gets
    whose ``construct`` is ``ops.unfold(x, kernel_size, dilation, padding, stride)``, MindSpore's own op (torch's
    ``(N, C*kh*kw, L)`` layout).

    Why: ``mindspore.nn.Unfold`` is TF's extract_image_patches (another layout, no CPU kernel), so the table maps
    ``nn.Unfold`` to ``mindport.runtime.layers.Unfold``, whose only run-time decision is torch's unbatched
    ``(C, H, W)`` input (``ops.unfold`` takes a batch). Here the input is a batch in every program torch runs: the
    Sequential is stored as ``self.NAME`` and only ever called whole (every ``.NAME`` of the file is a call of it, a
    build or a read of its attributes; no ``__all__``), so the Unfold's output goes straight into the einops layer,
    which raises on anything but three axes: an unbatched input gives two. The two may also stand side by side in a
    list display extended into a local list that ``nn.Sequential(*layers)`` takes (T2T-ViT's ``layers.extend([...,
    nn.Unfold(k, stride=s), Rearrange('b c n -> b n c'), ...])`` in a loop: what one extend puts in stays adjacent;
    the list bound once, to ``[]``, and only appended or extended). Anything else (the Unfold alone, another
    next member, a pattern with ``...`` or another number of axes, keyword arguments other than torch's, the
    Sequential indexed or handed on, the list read another way) keeps the table's runtime layer.

    The same holds for an Unfold held in a ModuleList display appended to ``self.NAME`` and run by a tuple-unpacked
    loop over it (segformer's MiT: ``unfold = nn.Unfold(...)``, ``self.stages.append(nn.ModuleList([unfold, conv,
    layers]))``, ``for (unfold, conv, layers) in self.stages: x = unfold(x); n = x.shape[-1]; x = rearrange(x, 'b c
    (h w) -> b c h w', ...)``): the loop's output is next used by an einops function of a three-axis pattern
    (:func:`_looped_unfolds`).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn
                from einops.layers.torch import Rearrange


                class Patches(nn.Module):
                    def __init__(self, p, dim):
                        super().__init__()
                        self.embed = nn.Sequential(nn.Unfold(kernel_size=p, stride=p // 2), Rearrange("b c n -> b n c"),
                                                   nn.Linear(dim, dim))

                    def forward(self, x):
                        return self.embed(x)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Unfold1(nn.Cell):
                    \"\"\"torch.nn.Unfold on a batch (N, C, H, W), written out with MindSpore's ops.\"\"\"

                    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
                        super().__init__()
                        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

                    def construct(self, x):
                        return ops.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)


                class Rearrange1(nn.Cell):
                    \"\"\"einops' Rearrange('b c n -> b n c'), written out with MindSpore's ops.\"\"\"

                    def construct(self, x):
                        return ops.transpose(x, (0, 2, 1))


                class Patches(nn.Cell):
                    def __init__(self, p, dim):
                        super().__init__()
                        self.embed = nn.SequentialCell(Unfold1(kernel_size=p, stride=p // 2), Rearrange1(),
                                                   nn.Dense(in_channels=dim, out_channels=dim))

                    def construct(self, x):
                        return self.embed(x)
            """,
            note="the einops layer refuses the two axes an unbatched input would give: the Unfold always meets a batch",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._batched: set[int] = set()  # the nn.Unfold calls shown to meet a batch
        self._class: tuple[str, cst.ClassDef] | None = None
        self._taken: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        from mindport.migrator.native_facts import _called_whole, _parents, all_nodes
        from mindport.migrator.syntax import self_attribute_name

        taken = self._taken

        class _Names(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                taken.add(n.value)

        walk(node, _Names())

        if any(isinstance(s, cst.SimpleStatementLine) and any(
                isinstance(t, cst.Assign) and any(isinstance(a.target, cst.Name) and a.target.value == "__all__"
                                                  for a in t.targets) for t in s.body) for s in node.body):
            return
        parents = _parents(node)
        for call in all_nodes(node, cst.Call):
            if self.scope.resolve(call.func) != "torch.nn.Sequential" or any(a.keyword for a in call.args):
                continue
            if any(a.star for a in call.args):
                pairs = _extended_pairs(call, parents)
            else:
                members = [a.value for a in call.args]
                pairs = list(zip(members, members[1:]))
            for member, following in pairs:
                if not (isinstance(member, cst.Call) and self.scope.resolve(member.func) == "torch.nn.Unfold"
                        and _torch_arguments(member) and _three_axes(self.scope, following)):
                    continue
                assign = parents.get(id(call))
                attr = (self_attribute_name(assign.targets[0].target)
                        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None)
                if attr is not None and _called_whole(node, parents, attr):
                    self._batched.add(id(member))
        self._batched.update(_looped_unfolds(node, parents, self.scope))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) not in self._batched:
            return updated_node
        if self._class is None:
            number = 1
            while f"Unfold{number}" in self._taken:
                number += 1
            name = f"Unfold{number}"
            nn, ops = self.ctx.alias_for("mindspore.nn"), self.ctx.ops_name()
            lines = [f"class {name}({nn}.Cell):",
                     '    """torch.nn.Unfold on a batch (N, C, H, W), written out with MindSpore\'s ops."""', "",
                     "    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):",
                     "        super().__init__()",
                     "        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, "
                     "padding, stride", "",
                     "    def construct(self, x):",
                     f"        return {ops}.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)"]
            self._class = (name, parse_statement("\n".join(lines) + "\n"))
        self.ctx.alias_for("mindspore.ops")
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=cst.Name(self._class[0]))

    def leave_Module(self, original_node, updated_node):
        return insert_definitions(updated_node, dict([self._class])) if self._class else updated_node


def _extended_pairs(call: cst.Call, parents: dict) -> list:
    """The adjacent members of ``nn.Sequential(*layers)`` that a list display extended into ``layers`` holds (T2T-ViT's
    ``layers.extend([..., nn.Unfold(k, stride=s), Rearrange('b c n -> b n c'), ...])`` in a loop, then
    ``nn.Sequential(*layers)``): ``layers`` is a local of the function bound once, to ``[]``, and every other mention
    of it there is ``layers.append(x)`` or ``layers.extend([...])`` as a statement, or the starred argument (one
    only): what one extend puts in stays adjacent, in order, in the sequence. [] for anything else."""
    from mindport.migrator.native_facts import all_nodes

    starred = [a for a in call.args if a.star]
    if len(starred) != 1 or starred[0].star != "*" or not isinstance(starred[0].value, cst.Name):
        return []
    name = starred[0].value
    function = parents.get(id(call))
    while function is not None and not isinstance(function, cst.FunctionDef):
        function = parents.get(id(function))
    if function is None:
        return []
    pairs, bound = [], 0
    for mention in all_nodes(function, cst.Name):
        if mention.value != name.value or mention is name:
            continue
        parent = parents.get(id(mention))
        if isinstance(parent, cst.AssignTarget):
            assign = parents.get(id(parent))
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.List)
                    and not assign.value.elements):
                return []
            bound += 1
            continue
        method = parents.get(id(parent)) if isinstance(parent, cst.Attribute) and parent.value is mention else None
        if not (isinstance(method, cst.Call) and method.func is parent and parent.attr.value in ("append", "extend")
                and len(method.args) == 1 and not method.args[0].star and method.args[0].keyword is None
                and isinstance(parents.get(id(method)), cst.Expr)):
            return []  # read another way (indexed, inserted into, handed on), or bound again
        display = method.args[0].value
        if parent.attr.value == "extend":
            if not isinstance(display, (cst.List, cst.Tuple)) or any(
                    not isinstance(e, cst.Element) for e in display.elements):
                return []
            values = [e.value for e in display.elements]
            pairs += list(zip(values, values[1:]))
    return pairs if bound == 1 else []


def _looped_unfolds(module: cst.Module, parents: dict, scope) -> set[int]:
    """The ``nn.Unfold(...)`` calls that meet a batch in every program torch runs because a loop over the ModuleList
    holding them feeds their output straight to an einops function of a three-axis pattern (segformer's MiT stages).

    Every ``.NAME`` of the file (any receiver) is the build ``self.NAME = nn.ModuleList([])``, a statement
    ``self.NAME.append(nn.ModuleList([m0, m1, ...]))`` or the iterable of ``for (t0, t1, ...) in self.NAME:`` whose
    target is a tuple of distinct plain names as long as every appended display. A member ``mi`` that is ``nn.Unfold(...)``
    with torch's arguments, or a local name of the method bound only to one, by a plain assignment, and read nowhere
    but in the display, is shown when in every such loop ``ti`` is mentioned once in the body, as the call ``ti(a)``
    that is either the first argument of ``rearrange/reduce(..., 'pattern')`` or the whole value of ``y = ti(a)``, a
    statement of the loop's own body followed there, before any other statement reads ``y`` but as ``y.shape`` or
    binds it (each a simple statement: no branch, loop, return or raise), by ``y = rearrange(y, 'pattern', ...)``.
    An unbatched input gives the einops function two axes, which it refuses: torch never finished such a run."""
    from mindport.migrator.native_facts import _order, all_nodes
    from mindport.migrator.syntax import self_attribute_name

    def resolve(expr):
        return scope.resolve(expr)

    def is_unfold(expr) -> bool:
        return isinstance(expr, cst.Call) and resolve(expr.func) == "torch.nn.Unfold" and _torch_arguments(expr)

    def module_list(expr, empty: bool) -> list | None:
        if not (isinstance(expr, cst.Call) and resolve(expr.func) == "torch.nn.ModuleList" and len(expr.args) == 1
                and expr.args[0].keyword is None and not expr.args[0].star
                and isinstance(expr.args[0].value, cst.List)
                and all(isinstance(e, cst.Element) for e in expr.args[0].value.elements)):
            return None
        members = [e.value for e in expr.args[0].value.elements]
        return members if bool(members) != empty else None

    shown: set[int] = set()
    attrs = {self_attribute_name(a.target) for a in all_nodes(module, cst.AssignTarget)} - {None}
    for attr in attrs:
        displays, loops, ok = [], [], True
        for node in all_nodes(module, cst.Attribute):
            if node.attr.value != attr:
                continue
            parent = parents.get(id(node))
            grand = parents.get(id(parent))
            if isinstance(parent, cst.AssignTarget) and self_attribute_name(node) == attr \
                    and isinstance(grand, cst.Assign) and len(grand.targets) == 1 \
                    and module_list(grand.value, empty=True) is not None:
                continue
            if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "append" \
                    and isinstance(grand, cst.Call) and grand.func is parent and len(grand.args) == 1 \
                    and isinstance(parents.get(id(grand)), cst.Expr) \
                    and module_list(grand.args[0].value, empty=False) is not None:
                displays.append(grand.args[0].value)
                continue
            if isinstance(parent, cst.For) and parent.iter is node and not parent.asynchronous \
                    and isinstance(parent.target, cst.Tuple) \
                    and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                            for e in parent.target.elements) \
                    and len({e.value.value for e in parent.target.elements}) == len(parent.target.elements):
                loops.append(parent)
                continue
            ok = False
            break
        if not ok or not displays or not loops:
            continue
        width = len(displays[0].args[0].value.elements)
        if any(len(d.args[0].value.elements) != width for d in displays) \
                or any(len(f.target.elements) != width for f in loops):
            continue
        for display in displays:
            for index, member in enumerate(e.value for e in display.args[0].value.elements):
                unfold = member if is_unfold(member) else _named_unfold(member, display, parents, is_unfold)
                if unfold is not None and all(
                        _feeds_three_axes(loop, loop.target.elements[index].value.value, parents, resolve)
                        for loop in loops):
                    shown.add(id(unfold))
    return shown


def _named_unfold(member, display: cst.Call, parents: dict, is_unfold) -> cst.Call | None:
    """The ``nn.Unfold(...)`` a local name in ``display`` holds: bound once in its method, by ``name = nn.Unfold(...)``,
    and read nowhere else but there (not a parameter, no global/nonlocal)."""
    from mindport.migrator.native_facts import _order, _param_names, all_nodes

    if not isinstance(member, cst.Name):
        return None
    method = parents.get(id(display))
    while method is not None and not isinstance(method, cst.FunctionDef):
        method = parents.get(id(method))
    if method is None or member.value in _param_names(method) or all_nodes(method, (cst.Global, cst.Nonlocal)):
        return None
    order = _order(method)
    bindings = order.bindings(member.value)
    if len(bindings) != 1 or not is_unfold(bindings[0]):
        return None
    if any(read is not member for read, _parent, _grand, _stmt in order.reads(member.value)):
        return None
    return bindings[0]


def _feeds_three_axes(loop: cst.For, name: str, parents: dict, resolve) -> bool:
    """In ``loop``'s body ``name`` is mentioned once, as a call whose output next goes to an einops function of a
    three-axis pattern (:func:`_looped_unfolds`)."""
    from mindport.migrator.native_facts import all_nodes

    mentions = [n for n in all_nodes(loop.body, cst.Name) if n.value == name]
    if loop.orelse is not None and any(n.value == name for n in all_nodes(loop.orelse, cst.Name)):
        return False
    if len(mentions) != 1:
        return False
    call = parents.get(id(mentions[0]))
    if not (isinstance(call, cst.Call) and call.func is mentions[0]):
        return False

    def einops_call(expr, first) -> bool:
        return (isinstance(expr, cst.Call) and resolve(expr.func) in _EINOPS_FUNCTIONS and len(expr.args) >= 2
                and all(a.keyword is None and not a.star for a in expr.args[:2])
                and _pattern_three_axes(expr.args[1].value) and first(expr.args[0].value))

    arg = parents.get(id(call))
    if isinstance(arg, cst.Arg) and einops_call(parents.get(id(arg)), lambda v: v is call):
        return True
    assign = parents.get(id(call))
    line = parents.get(id(assign))
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1 and line in loop.body.body):
        return False
    output = assign.targets[0].target.value
    for stmt in loop.body.body[loop.body.body.index(line) + 1:]:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return False
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == output:
            return einops_call(small.value, lambda v: isinstance(v, cst.Name) and v.value == output) and not any(
                n.value == output for a in small.value.args[1:] for n in all_nodes(a, cst.Name))
        if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)):
            return False
        for n in all_nodes(small, cst.Name):
            if n.value != output:
                continue
            parent = parents.get(id(n))
            if not (isinstance(parent, cst.Attribute) and parent.value is n and parent.attr.value == "shape"):
                return False  # read another way, or bound
    return False


def _torch_arguments(call: cst.Call) -> bool:
    """At most torch's four parameters, by position or by their names, none starred."""
    positional = [a for a in call.args if a.keyword is None]
    names = [a.keyword.value for a in call.args if a.keyword is not None]
    return (not any(a.star for a in call.args) and len(positional) <= len(_PARAMS)
            and all(n in _PARAMS[len(positional):] for n in names) and len(set(names)) == len(names)
            and (bool(positional) or "kernel_size" in names))


def _three_axes(scope, member) -> bool:
    """An einops Rearrange/Reduce layer whose literal pattern's left side is exactly three axes (no ``...``)."""
    if not (isinstance(member, cst.Call) and scope.resolve(member.func) in _EINOPS_LAYERS and member.args
            and member.args[0].keyword is None and not member.args[0].star):
        return False
    return _pattern_three_axes(member.args[0].value)


def _pattern_three_axes(node) -> bool:
    """A literal einops pattern whose left side is exactly three axes (no ``...``)."""
    if not isinstance(node, cst.SimpleString):
        return False
    pattern = node.evaluated_value
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        return False
    left = pattern.split("->")[0]
    if "..." in left or "…" in left:
        return False
    depth, count, token = 0, 0, False
    for ch in left:
        if ch == "(":
            if depth == 0:
                count += 1
            depth += 1
            token = False
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
        elif ch.isspace():
            token = False
        elif depth == 0 and not token:
            count += 1
            token = True
    return depth == 0 and count == 3
