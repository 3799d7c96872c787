"""The general backward region (``TrainingLoopRule``'s second way, for every ``.backward()`` its first way, the
``for``-loop rewrite into ``opt(grads)``, does not fit): in one block of statements, what computes the tensor whose
``.backward()`` is called becomes the function that is differentiated.

For each backward site of a block, in order: the backward slice of the differentiated expression over the statements
before it (what writes a name it reads, transitively) is split into the *forward* statements, which read a model, a
``requires_grad`` tensor, ``self`` or a forward statement's result, and the rest (data preparation, ``noise =
randn(...)``), which stay where they are. The forward statements leave their places and run, once, where the last of
them stood, inside ``forward_fn``; the statements between them that read their results (a ``print(loss.item())``, a
metric, ``h = h.detach()``) move right after it, in order; one that rebinds a name an earlier forward statement
read (``output = model(src, trg)``, then ``trg = trg[1:].view(-1)`` before the loss: the seq2seq tutorials' step)
runs inside ``forward_fn`` in its place, a simple line or an ``if``/``with`` block calling no gradient or optimizer
API. ``forward_fn`` takes the ``requires_grad`` tensors first
(differentiated by position), then the names it reads before assigning them (state carried across steps, such as an
RNN's hidden state, which it hands back); it returns the differentiated value, then every name it assigns that other
code reads. A forward statement already run by an earlier site's ``forward_fn`` (the generator's ``fake`` in a GAN
step) runs again in this one, on the same inputs, unless it appends to a list (an episode loop collecting states and
log-probabilities, then a value regression on the states): torch ran it once, so the later forward reads what the
earlier call handed back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from mindport.migrator.native_facts import all_nodes

from mindport.migrator.rules.training_loop_analysis import _expr_call, _names
from mindport.migrator.imports import converter_module_aliases, runtime_alias
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import walk

_GRAD_METHODS = {"backward", "step", "zero_grad", "unscale_", "update"}
def _grad_method(call: cst.Call) -> bool:
    """Is the call a gradient or optimizer API (``loss.backward()``, ``opt.step()``, ``opt.zero_grad()``,
    ``scaler.unscale_(opt)``, ``scaler.update()``)? ``update`` is a GradScaler's only when it is called with no
    positional argument or on a receiver named as a scaler: ``meters['loss'].update(loss.item())``, ``losses.update(
    loss.item(), n)`` (an AverageMeter) and ``stats.update(d)`` (a dict) are bookkeeping, which runs after forward_fn
    in its order (hao-pt/ssl_methods' Mean Teacher: MP105 "reads their results and cannot move after them")."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _GRAD_METHODS:
        return False
    if func.attr.value == "update":
        return not any(a.keyword is None for a in call.args) or "scaler" in code_of(func.value).lower()
    return True


# Every method that changes a Python container in place: list, dict, set, collections.deque (the test enumerates
# them from Python's own types). A statement calling one writes its receiver, so it stays in forward_fn in its order
# when the loss reads that receiver: minimalRL's PPO reversed its advantages with ``advantage_lst.reverse()`` between
# the loop that appends them and ``torch.tensor(advantage_lst)``; read as no write, the reverse ran after forward_fn,
# and the advantages were differentiated in the wrong order (silently: the first loss was equal, its gradient not).
_MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",  # list
    "update", "setdefault", "popitem",  # dict
    "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update",  # set
    "appendleft", "extendleft", "popleft", "rotate",  # collections.deque
})
_INPLACE = runtime_alias("mindport.runtime.inplace")  # the converted code's name of mindport.runtime.inplace
_MODULES = converter_module_aliases()  # ms, ops, mp_tensor, ...: calls on them are module functions


class Unfit(Exception):
    """The block's backward site cannot be turned into a differentiated function; the message says why."""


@dataclass
class Site:
    """One ``<expr>.backward(...)``: the index of the block statement holding it and the call."""
    index: int
    call: cst.Call
    differentiated: cst.BaseExpression  # what torch differentiates (``scaler.scale(loss)`` -> ``loss``)
    loss: str | None  # the name of the loss when it is one
    inputs: cst.BaseExpression | None = None  # backward(inputs=...): the only tensors whose .grad it adds to


@dataclass
class Plan:
    site: Site
    forward: list[int]  # indices of the forward statements, in order
    at: int  # the index whose place the call takes (the last forward statement not run before)
    moved: list[int] = field(default_factory=list)  # statements moved right after the call
    params: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    reuse: "Plan | None" = None  # the same loss differentiated again (retain_graph): that plan's gradients
    # losses of later sites the same forward computed (``l_actor, l_critic = agent.compute_loss(...)``, then
    # ``l_actor.backward()`` ... ``l_critic.backward()``): this plan's call gives each its own gradients
    joint: list[str] = field(default_factory=list)
    part: int = 0  # a later site of such a forward: which of its losses (1, 2, ...) this site backpropagates
    apart: bool = False  # an optimizer steps or resets between such sites: each loss's own gradient, not the sum's
    # names the forward reads where only some path through it has assigned them (``if epoch > 0: logp = ...`` then
    # ``loss = f(logp)``): on the other path the value bound before the step, handed in when bound (see maybe_read)
    maybe: list[str] = field(default_factory=list)


def reads_writes(stmt) -> tuple[set[str], set[str]]:
    """Names a statement reads and writes; a mutating method call (``h.detach_()``, ``xs.append(v)``) and an item or
    attribute assignment (``x[i] = v``, ``model.hidden = h``) write their receiver too."""
    if isinstance(stmt, cst.FunctionDef):
        return _definition(stmt)
    names = _names([stmt])
    reads, writes = set(names.reads), set(names.writes)

    class _Mutations(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            receiver = _mutated_receiver(node)
            if receiver is not None:
                writes.add(receiver)

        def visit_AssignTarget(self, node) -> None:
            writes.update(_stored_receivers(node.target))

        def visit_For(self, node) -> None:
            writes.update(_target_names(node.target))

        def visit_WithItem(self, node) -> None:
            if node.asname is not None:
                writes.update(_target_names(node.asname.name))

    walk(stmt, _Mutations())
    return reads, writes


def _leaf_targets(target) -> list:
    """The single targets of an assignment target, unpackings opened (``logits, self.loss`` -> ``logits``,
    ``self.loss``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for e in target.elements for leaf in _leaf_targets(e.value)]
    if isinstance(target, cst.StarredElement):
        return _leaf_targets(target.value)
    return [target]


def _stored_paths(stmts) -> set[str]:
    """The dotted attribute paths the statements assign (``self.loss``, ``model.hidden``), unpackings opened."""
    from mindport.migrator.scopes import dotted_name

    paths: set[str] = set()

    class _Stores(cst.CSTVisitor):
        def visit_AssignTarget(self, node) -> None:
            for leaf in _leaf_targets(node.target):
                if isinstance(leaf, cst.Attribute):
                    name = dotted_name(leaf)
                    if name:
                        paths.add(name)

    for stmt in stmts:
        walk(stmt, _Stores())
    return paths


def _stored_receivers(target) -> set[str]:
    """The names an assignment target stores into without rebinding them: the root of an item or attribute target
    (``x[i] = v``, ``model.hidden = h``), also as an element of an unpacking (``logits, self.loss = model(x, y)``,
    minGPT's Trainer: read as writing only ``logits``, nothing before ``self.loss.backward()`` computed the loss,
    MP105, and the port crashed on ``Tensor.backward``)."""
    return {root for leaf in _leaf_targets(target)
            if isinstance(leaf, (cst.Subscript, cst.Attribute)) and (root := _root_name(leaf)) is not None}


def _mutated_receiver(call: cst.Call) -> str | None:
    """The name a mutating method call changes in place (``h.detach_()``, ``xs.append(v)``), gradient APIs aside,
    and the receiver of a torch in-place method the mapping already made a ``mindport.runtime.inplace`` call
    (``sim.fill_diagonal_(v)`` is ``mp_inplace.fill_diagonal_(sim, v)`` when the region is planned): its first
    argument (the name it is rooted at). Read as a write of ``mp_inplace``, the in-place line was left out of
    forward_fn and ran after the gradient (SimCLR's ``sim.fill_diagonal_(float('-inf'))``: the loss differentiated
    the unmasked similarities). Any other call on a module the converter imports is a module function, never a
    mutation of the module's name: ``mp_tensor.bool_(mask)`` (torch's ``.bool()``) read as writing ``mp_tensor`` made
    the runtime module forward_fn's carried argument, unbound in the step (leftthomas/SimCLR's
    ``(torch.ones_like(sim) - torch.eye(n)).bool()``: UnboundLocalError)."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value == _INPLACE and (func.attr.value.endswith("_") or func.attr.value == "write_out"):
        first = next((a.value for a in call.args if a.keyword is None and a.star == ""), None)
        while isinstance(first, (cst.Subscript, cst.Attribute)):
            first = first.value
        return first.value if isinstance(first, cst.Name) else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
            func.attr.value.endswith("_") and not func.attr.value.startswith("_")
            or func.attr.value in _MUTATORS) and not _grad_method(call) and func.value.value not in _MODULES:
        return func.value.value
    return None


def _appends(stmt) -> bool:
    """Whether a statement adds to a list or dict in place (``states.append(s)``, ``all_states.extend(states)``)."""
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _MUTATORS:
                found.append(node)

    walk(stmt, _Calls())
    return bool(found)


def _definition(stmt: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """A function defined in the block (the function ``torch.autograd.grad(..., create_graph=True)`` became): it
    reads the free names of its body, defaults and decorators, and binds its own name."""
    params = stmt.params
    own = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    own |= {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
    body = _names([stmt.body])
    outer = _names([*stmt.decorators, *(p.default for p in (*params.params, *params.kwonly_params) if p.default)])
    return set(outer.reads) | (set(body.reads) - own - set(body.writes)), {stmt.name.value}


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


def _is_gradient_api(stmt) -> bool:
    call = _expr_call(stmt)
    return call is not None and _grad_method(call)


def reads_before_writes(stmts) -> list[str]:
    """Names the statements read before any of them assigns them, in order (into compound statements' bodies). The
    two branches of an ``if`` are apart: a name one branch assigns and the other reads (``if mix: target = t_a``
    ``else: loss = f(out, target)``) is read before it is written on the else path, so it comes from outside."""
    seen: list[str] = []
    _reads_before_writes(stmts, set(), seen)
    return seen


def _reads_before_writes(stmts, assigned: set[str], seen: list[str]) -> None:
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            for n in _names([stmt.test]).reads:
                if n not in assigned and n not in seen:
                    seen.append(n)
            then = set(assigned)
            _reads_before_writes(_body(stmt.body), then, seen)
            other = set(assigned)
            if stmt.orelse is not None:
                _reads_before_writes([stmt.orelse] if isinstance(stmt.orelse, cst.If) else _body(stmt.orelse.body),
                                     other, seen)
            assigned |= then | other  # (after the if, as before: a name either branch assigns counts as assigned)
            continue
        for piece in _pieces([stmt]):
            if isinstance(piece, tuple):  # (names a header binds)
                assigned.update(piece)
                continue
            for n in (sorted(_definition(piece)[0]) if isinstance(piece, cst.FunctionDef) else _names([piece]).reads):
                if n not in assigned and n not in seen:
                    seen.append(n)
            if isinstance(piece, (cst.SimpleStatementLine, cst.FunctionDef)):
                assigned.update(reads_writes(piece)[1])


def maybe_read(stmts) -> list[str]:
    """Names the statements read where only some of the paths to the read have assigned them: after an ``if``
    assigning the name in one branch (PPO's ``if epoch > 0: logp = F.log_softmax(model(x))`` then ``loss = -(logp *
    y).sum()``, which reads on epoch 0 the ``logp`` computed before the loop), a loop's or a ``try``'s body. Such a
    name is not one ``reads_before_writes`` reports (a name either branch assigns counts as assigned there, so a
    mixup step's ``if use_mixup: lam = ...`` ... ``if use_mixup: loss = lam * ...`` keeps a name that may be bound
    nowhere before the step out of the arguments)."""
    seen: list[str] = []
    _maybe_reads(stmts, set(), set(), seen)
    return seen


def _maybe_reads(stmts, definite: set[str], possible: set[str], seen: list[str]) -> None:
    def read(names) -> None:
        for n in names:
            if n in possible and n not in definite and n not in seen:
                seen.append(n)

    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine) or isinstance(stmt, cst.FunctionDef):
            reads, writes = reads_writes(stmt)
            read(_names([stmt]).reads if isinstance(stmt, cst.SimpleStatementLine) else reads)
            definite |= writes
            possible |= writes
        elif isinstance(stmt, cst.If):
            read(_names([stmt.test]).reads)
            then_d, then_p = set(definite), set(possible)
            _maybe_reads(_body(stmt.body), then_d, then_p, seen)
            other_d, other_p = set(definite), set(possible)
            if stmt.orelse is not None:
                _maybe_reads([stmt.orelse] if isinstance(stmt.orelse, cst.If) else _body(stmt.orelse.body),
                             other_d, other_p, seen)
            definite |= then_d & other_d
            possible |= then_p | other_p
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                read(_names([item.item]).reads)
                if item.asname is not None:
                    definite.update(_target_names(item.asname.name))
                    possible.update(_target_names(item.asname.name))
            _maybe_reads(_body(stmt.body), definite, possible, seen)
        else:  # a loop's, a try's body: it may not run (to its end)
            inner_d, inner_p = set(definite), set(possible)
            if isinstance(stmt, cst.For):
                read(_names([stmt.iter]).reads)
                inner_d.update(_target_names(stmt.target))
                inner_p.update(_target_names(stmt.target))
            elif isinstance(stmt, cst.While):
                read(_names([stmt.test]).reads)
            parts = [getattr(stmt, "body", None), *(h.body for h in getattr(stmt, "handlers", ())),
                     getattr(getattr(stmt, "orelse", None), "body", None),
                     getattr(getattr(stmt, "finalbody", None), "body", None)]
            for part in parts:
                if part is not None:
                    _maybe_reads(_body(part), inner_d, inner_p, seen)
            possible |= inner_p


def _pieces(stmts):
    """Statements in execution order, compound ones opened: their header expressions, the names the header binds
    (a tuple), then their bodies."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                yield item.item
                if item.asname is not None:
                    yield tuple(_target_names(item.asname.name))
            yield from _pieces(_body(stmt.body))
        elif isinstance(stmt, cst.For):
            yield stmt.iter
            yield tuple(_target_names(stmt.target))
            yield from _pieces(_body(stmt.body))
            if stmt.orelse is not None:
                yield from _pieces(_body(stmt.orelse.body))
        elif isinstance(stmt, (cst.If, cst.While)):
            yield stmt.test
            yield from _pieces(_body(stmt.body))
            if stmt.orelse is not None:
                yield from _pieces([stmt.orelse] if isinstance(stmt.orelse, cst.If) else _body(stmt.orelse.body))
        else:
            yield stmt


def _body(block) -> list:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def plan_block(stmts: list, sites: list[Site], forward_names: set[str], leaves: set[str],
               read_elsewhere, self_methods: set[str] | None = None) -> list[Plan]:
    """One plan per site, in order. ``forward_names``: names whose reading makes a statement a forward one (models,
    their methods' receivers, ``self``); ``leaves``: requires_grad tensors; ``read_elsewhere(name, indices)`` tells
    whether code other than those statements reads the name. ``self_methods``: in a method, the names of its class's
    methods (then ``self``'s attributes are told apart, see ``_self_attributes``); None elsewhere."""
    rw = [reads_writes(s) for s in stmts]
    # a model called for what its forward stores on it, the value discarded (``model(data)`` then
    # ``loss = k * model.loss``): the call writes the model's attributes, so a loss read from them depends on it
    # (jamesborg46/vae: left outside forward_fn, ``model.loss`` was a constant there and every gradient zero, silently)
    called = {i: _discarded_model_call(s, forward_names) for i, s in enumerate(stmts)}
    for i, name in called.items():
        if name is not None:
            rw[i] = (rw[i][0], rw[i][1] | {name})
    attrs = [_self_attributes(s, self_methods) if self_methods is not None and "self" in rw[i][1] | rw[i][0]
             else None for i, s in enumerate(stmts)]
    plans: list[Plan] = []
    ran_at: dict[int, int] = {}  # forward statement -> index where a call runs it
    for site in sites:
        needed = set(_names([site.differentiated]).reads)
        # the attributes of self the chosen statements read (None: all of them, or not in a method)
        needed_self = (_self_attributes(site.differentiated, self_methods)[0]
                       if self_methods is not None else None)
        chosen: list[int] = []
        for i in range(site.index - 1, -1, -1):
            reads, writes = rw[i]
            hit = writes & needed
            stores = attrs[i][1] if attrs[i] is not None else None  # None: self rebound or mutated as a whole
            if "self" in hit and stores is not None and needed_self is not None and not stores & needed_self:
                hit = hit - {"self"}  # bookkeeping on self (self.best = v) that the loss does not read
            if hit and not _is_gradient_api(stmts[i]):
                chosen.append(i)
                simple = isinstance(stmts[i], (cst.SimpleStatementLine, cst.FunctionDef))
                killed = writes - {"self"} if stores is not None else writes  # an attribute store rebinds nothing
                needed = ((needed - killed) if simple else needed) | reads
                if needed_self is not None:
                    read_attrs = attrs[i][0] if attrs[i] is not None else set()
                    needed_self = None if read_attrs is None else needed_self | read_attrs
        chosen.reverse()
        if site.loss is not None and not any(site.loss in rw[i][1] for i in chosen):
            raise Unfit(f"{site.loss} is not computed in this block")
        forward: list[int] = []
        made: set[str] = set()
        for i in chosen:
            reads, writes = rw[i]
            if writes & leaves:
                continue  # the statement making a requires_grad tensor stays outside: the tensor is differentiated
            if _draws(stmts[i]):
                continue  # noise = torch.randn(n, g.latent_dim): a draw, not differentiated; torch ran it once
            if _without_grad(stmts[i], forward_names):
                continue  # a with no_grad() block setting weights in place: torch records nothing there, it runs once
            if writes & (forward_names - {"self"}) and called.get(i) is None:
                # the statement building (or rebinding) a model, loss or helper the forward calls (``net = Net()``,
                # ``model.apply(init)``, ``criterion = nn.MSELoss()``): its parameters are what the gradient is
                # taken for, not values computed from them; torch records nothing there. It stays where it is and
                # runs once (zinsmatt's module-level LeNet and curve fit: pulled into forward_fn, the model was built
                # afresh at every backward and the name unbound before it, NameError). A model called for what its
                # forward stores on it (``model(data)``, see ``called``) is a forward statement.
                continue
            if reads & (forward_names | leaves | made):
                forward.append(i)
                made |= writes
        if not forward:
            forward = chosen
        if not forward:
            raise Unfit(f"nothing before .backward() computes {code_of(site.differentiated)}")
        # a statement an earlier site's forward_fn ran that appends to a list (an episode loop collecting states)
        # does not run again: torch ran it once, a second run would act twice (environment steps, random draws)
        # and fill the lists twice; this forward reads what the earlier call handed back
        kept = [i for i in forward if not (i in ran_at and _appends(stmts[i]))]
        if kept:
            forward = kept
        earlier = next((p for p in plans if p.forward == forward and p.site.loss == site.loss
                        and code_of(p.site.differentiated) == code_of(site.differentiated)), None)
        if earlier is not None:
            plans.append(Plan(site, forward, earlier.at, reuse=earlier))
            continue
        fresh = [i for i in forward if i not in ran_at]
        if not fresh:
            shared = _shared_forward(plans, site, forward, rw)
            if shared is not None:
                shared.joint.append(site.loss)
                shared.apart = shared.apart or any(_touches_grads(stmts[i])
                                                   for i in range(shared.site.index + 1, site.index))
                plans.append(Plan(site, shared.forward, shared.at, reuse=shared, part=len(shared.joint)))
                continue
            raise Unfit(f"{code_of(site.differentiated)} is differentiated again after its graph was used")
        at = fresh[-1]
        while True:
            plan = Plan(site, forward, at)
            rebinding = _between(plan, stmts, _by_attribute(rw, attrs), ran_at)
            if rebinding is None:
                break
            # a statement between the forward statements that rebinds a name an earlier one read (the seq2seq
            # tutorials' `output = model(src, trg)` ... `trg = trg[1:].view(-1)` before the loss) runs inside
            # forward_fn, in its place: the forward reads the old value, the statements after it the new one, and
            # the name is carried state handed back (before, MP105 left the whole step to torch)
            forward = sorted(forward + [rebinding])
        forward_stmts = [stmts[i] for i in forward]
        free = reads_before_writes(forward_stmts)
        written = set().union(*(rw[i][1] for i in forward))
        same_object = _attribute_stores_only(forward_stmts) | _called_only(forward, called, stmts)
        plan.leaves = [n for n in free if n in leaves and n not in written]
        plan.params = [n for n in free if n in written and n not in plan.leaves and n not in same_object]
        plan.maybe = [n for n in maybe_read(forward_stmts) if n not in free and n not in leaves
                      and n not in same_object]
        # a name only statements an earlier site's forward_fn ran bind (the discriminator's `d_loss, real_score =
        # discriminator_loss(...)` run again for the `fake` or the labels a generator step reads) is not handed back
        # again: torch ran those statements once, before the earlier optimizer step, and the name keeps that value
        # (run again here they see the updated model: vltkv's DCGAN printed D's loss after D's step)
        rerun_only = {n for n in written if all(i in ran_at for i in forward if n in rw[i][1])}
        plan.outputs = [n for n in dict.fromkeys(_assigned(forward_stmts))
                        if n != site.loss and n not in same_object
                        and (n in plan.params or n in plan.maybe
                             or (read_elsewhere(n, forward_stmts) and n not in rerun_only))]
        for i in forward:
            ran_at.setdefault(i, at)
        plans.append(plan)
    return plans


# the last name of a call that draws random values (ops.randn, np.random.normal, torch.rand_like as converted)
RANDOM_DRAWS = frozenset({"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "uniform",
                          "randperm", "bernoulli", "multinomial", "standard_normal", "random_sample", "poisson"})


def _draws(stmt) -> bool:
    """``name = <draw>(...)``: one name bound to one random draw (``noise = torch.randn(n, g.latent_dim)``)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)):
        return False
    value = stmt.body[0].value
    return isinstance(value, cst.Call) and code_of(value.func).rsplit(".", 1)[-1] in RANDOM_DRAWS \
        and not code_of(value.func).startswith("self.")


def _without_grad(stmt, forward_names: set[str]) -> bool:
    """``with torch.no_grad():`` (or ``inference_mode()``, converted or not) that calls no model of the file
    (``model.weight.copy_(...)``, an initialisation): not a forward statement. One that calls a model (a frozen
    encoder's ``features = encoder(x)``) stays in the forward, where the model's training mode is set."""
    if not (isinstance(stmt, cst.With) and stmt.items and all(
            isinstance(item.item, cst.Call) and code_of(item.item.func).rsplit(".", 1)[-1] in ("no_grad",
                                                                                            "inference_mode")
            for item in stmt.items)):
        return False
    return not any(isinstance(c.func, cst.Name) and c.func.value in forward_names for c in all_nodes(stmt, cst.Call))


def _shared_forward(plans: list[Plan], site: Site, forward: list[int], rw: list) -> Plan | None:
    """The earlier plan whose forward already computed this site's loss, when this site backpropagates another loss
    of it (``l_actor, l_critic = agent.compute_loss(...)``; ``l_actor.backward()``, an optimizer step perhaps, then
    ``l_critic.backward()``): torch differentiates the graph it built once, so the port takes each loss's gradient
    from that one forward (``mindport.runtime.training.value_and_grad(..., losses=k)``), neither running the forward
    again (an episode collected in it, a random draw) nor after an optimizer step. Only plain ``loss.backward()``
    calls of named losses; None otherwise."""
    if site.loss is None or code_of(site.differentiated) != site.loss or site.inputs is not None:
        return None
    for plan in plans:
        first = plan.site
        if plan.reuse is not None or first.loss is None or code_of(first.differentiated) != first.loss \
                or first.inputs is not None or first.loss == site.loss or site.loss in plan.joint:
            continue
        if set(forward) <= set(plan.forward) and any(site.loss in rw[i][1] for i in plan.forward):
            return plan
    return None


def _touches_grads(stmt) -> bool:
    """Does the statement read or clear gradients (an optimizer's step or zero_grad, a clipping, ``.grad``), a
    backward call aside? Between two backward calls of one forward's losses it makes each loss's gradient count on
    its own, not their sum."""
    found: list = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            if _grad_method(node) and node.func.attr.value != "backward":
                found.append(node)

        def visit_Attribute(self, node) -> None:
            name = node.attr.value
            if name == "grad" or "clip_grad" in name:
                found.append(node)

        def visit_Name(self, node) -> None:
            if node.value in ("grads_of", "zero_grad") or "clip_grad" in node.value:
                found.append(node)

    walk(stmt, _Find())
    return bool(found)


def _by_attribute(rw: list, attrs: list) -> list:
    """In a method, the reads and writes of each statement with ``self`` told apart by attribute (``self.loss``,
    ``self.model``) where the statement names only attributes of it; ``self`` whole where it reads or changes the object
    as a whole (``f(self)``, ``self._helper()``). A Trainer's ``self.loss = self.criterion(self.model(x), y)``, then
    ``self.optimizer.zero_grad()``, then ``self.loss.backward()``: read as one name ``self``, the zero_grad between
    read the forward's result and could not move (MP105); it reads ``self.optimizer``, which the forward leaves
    alone."""
    out = []
    for (reads, writes), known in zip(rw, attrs):
        if known is not None:
            read_attrs, stores = known
            if "self" in reads and read_attrs is not None:
                reads = reads - {"self"} | {f"self.{a}" for a in read_attrs}
            if "self" in writes and stores is not None:
                writes = writes - {"self"} | {f"self.{a}" for a in stores}
        out.append((reads, writes))
    return out


def _meet(a: set[str], b: set[str]) -> set[str]:
    """The names two sets share, ``self`` whole meeting every ``self.<attr>``."""
    common = a & b
    if "self" in a:
        common |= {n for n in b if n.startswith("self.")}
    if "self" in b:
        common |= {n for n in a if n.startswith("self.")}
    return common


def _between(plan: Plan, stmts: list, rw: list, ran_at: dict[int, int]) -> int | None:
    """Sort the statements between the plan's first fresh forward statement and its call: those reading a forward
    result move after the call (``plan.moved``); the others stay before it. Returns the index of a statement that
    rebinds a name an earlier forward statement read (it must run inside forward_fn, in order), None when there is
    none; raises Unfit where no order keeps torch's meaning."""
    forward, at = plan.forward, plan.at
    first = next(i for i in forward if i not in ran_at)
    pending: set[str] = set()
    moved_writes: set[str] = set()
    for i in range(first, at):
        reads, writes = rw[i]
        if i in forward:
            if i not in ran_at:
                pending |= writes
            continue
        if _meet(reads, pending | moved_writes):
            later_reads = set().union(*(rw[j][0] for j in forward if j > i))
            if _meet(writes, later_reads) and i not in ran_at and not _is_gradient_api(stmts[i]) \
                    and _runs_inside(stmts[i]):
                # it reads a forward result and a later forward statement reads what it computes: it runs inside
                # forward_fn, in its place (TD3's ``with torch.no_grad(): a_ = actor_target(s_) ...; td_target =
                # r + ...`` after ``s, a, s_, r, done = self.memory.sample()`` and before the critic's loss: moved
                # after the call, forward_fn read ``td_target`` unbound)
                return i
            if _is_gradient_api(stmts[i]) or i in ran_at:
                raise Unfit(f"line {code_of(stmts[i]).strip()!r} between the forward statements reads their "
                            "results and cannot move after them")
            plan.moved.append(i)
            moved_writes |= writes
            continue
        earlier_forward_reads = set().union(*(rw[j][0] for j in forward if j < i and j not in ran_at))
        if _meet(writes, earlier_forward_reads) - set().union(*(rw[j][1] for j in forward if j < i)):
            if i in ran_at or not _runs_inside(stmts[i]):
                raise Unfit(f"line {code_of(stmts[i]).strip()!r} changes what an earlier forward statement read")
            return i
        if _meet(writes, moved_writes) or _meet(writes, set().union(*(rw[m][0] for m in plan.moved))):
            raise Unfit(f"line {code_of(stmts[i]).strip()!r} is tied to a statement that must move")
        if _is_step_call(stmts[i]):
            raise Unfit("an optimizer steps between the forward statements")
    return None


def _runs_inside(stmt) -> bool:
    """Can the statement run inside forward_fn, where it stands? A simple line or an ``if``/``with`` block (``if
    trg.dim() > 1: trg = trg.view(-1)``) that calls no gradient or optimizer API and leaves no loop or function
    (break, continue, return, yield would act on forward_fn instead)."""
    if not isinstance(stmt, (cst.SimpleStatementLine, cst.If, cst.With)):
        return False
    found: list = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            if _grad_method(node):
                found.append(node)

        def on_visit(self, node) -> bool:
            if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.FunctionDef, cst.Lambda)):
                found.append(node)
                return False
            return super().on_visit(node)

    walk(stmt, _Find())
    return not found


def _self_attributes(node, methods: set[str]) -> tuple[set[str] | None, set[str] | None]:
    """In a method: the attributes of ``self`` a statement reads and those it stores. Reads are None (all of them)
    when ``self`` is read whole (``f(self)``) or one of the class's methods is called or read (``self._set_lr(step)``:
    it may read any attribute); stores are None when ``self`` is rebound or changed by a mutating call. A call of a
    stored object (``self.model(x)``, an attribute the class does not define as a method) reads that attribute. So a
    method's bookkeeping (``self.best_val = v``, ``self.step += 1``) does not enter the differentiated slice of a loss
    computed from ``self.model``."""
    reads: set[str] | None = set()
    stores: set[str] | None = set()

    class _Walk(cst.CSTVisitor):
        def visit_Attribute(self, n) -> bool:
            nonlocal reads
            if isinstance(n.value, cst.Name) and n.value.value == "self":
                if n.attr.value in methods:
                    reads = None
                elif reads is not None:
                    reads.add(n.attr.value)
                return False
            return True

        def visit_Name(self, n) -> None:
            nonlocal reads
            if n.value == "self":
                reads = None

        def visit_AssignTarget(self, n) -> None:
            _store(n.target)

        def visit_AugAssign(self, n) -> None:
            _store(n.target)

        def visit_Call(self, n) -> None:
            nonlocal stores
            if _mutated_receiver(n) == "self":
                stores = None

    def _store(target) -> None:
        nonlocal stores
        if isinstance(target, cst.Name) and target.value == "self":
            stores = None
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                _store(element.value)
        else:
            while isinstance(target, (cst.Subscript, cst.Attribute)):
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value == "self":
                    if stores is not None:
                        stores.add(target.attr.value)
                    return
                target = target.value

    walk(node, _Walk())
    return reads, stores


def split_parallel(stmts: list) -> list | None:
    """``a, b = f(x), g(x)`` as ``a = f(x)`` then ``b = g(x)`` (no value reads a target, so the order of evaluation
    and of binding is the same), for every such statement of the block; None when there is none. Two models trained
    side by side often compute both predictions, then both losses, in one statement each: split, each loss has its
    own forward statements and both backward calls fit."""
    out: list = []
    split = False
    for stmt in stmts:
        parts = _parallel_parts(stmt)
        if parts is None:
            out.append(stmt)
            continue
        split = True
        for n, (target, value) in enumerate(parts):
            line = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=target)], value=value)])
            out.append(line.with_changes(leading_lines=stmt.leading_lines) if n == 0 else line)
    return out if split else None


def _parallel_parts(stmt):
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or stmt.trailing_whitespace.comment is not None:
        return None
    target, value = assign.targets[0].target, assign.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Tuple) \
            or len(target.elements) != len(value.elements) or len(value.elements) < 2:
        return None
    if any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in target.elements) \
            or any(not isinstance(e, cst.Element) for e in value.elements):
        return None
    names = {e.value.value for e in target.elements}
    if len(names) != len(target.elements) or names & set(_names([value]).reads):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]


def _discarded_model_call(stmt, forward_names: set[str]) -> str | None:
    """The model a statement calls for its side effects only (``model(data)``, the value discarded): its name."""
    call = _expr_call(stmt)
    if call is not None and isinstance(call.func, cst.Name) and call.func.value in forward_names:
        return call.func.value
    return None


def _called_only(forward: list[int], called: dict, stmts: list) -> set[str]:
    """Models the forward statements write only by calling them for their stores (see _discarded_model_call): the
    same object, neither carried into forward_fn nor handed back, unless a forward statement also rebinds the name."""
    names = {called[i] for i in forward if called[i] is not None}
    rebound = set().union(set(), *(_names([stmts[i]]).writes for i in forward if not isinstance(stmts[i], cst.FunctionDef)))
    return names - rebound


def _assigned(stmts) -> list[str]:
    out: list[str] = []
    for s in stmts:
        out.extend([] if isinstance(s, cst.FunctionDef) else _names([s]).writes)
        out.extend(sorted(reads_writes(s)[1] - set(out)))
    return out


def _root_name(target) -> str | None:
    """The name an attribute or item chain starts from (``model.h``, ``self.buf[i]``), None for another root."""
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def _attribute_stores_only(stmts) -> set[str]:
    """Names the statements write only by setting an attribute on them (``model.hidden = model.init_hidden()``,
    ``self.h = h``): the object is mutated, not rebound, so ``forward_fn`` neither takes it as carried state nor hands
    it back (rebinding it would make a global ``model`` a local of the enclosing function)."""
    attributes: set[str] = set()

    class _Stores(cst.CSTVisitor):
        def visit_AssignTarget(self, node) -> None:
            for target in _leaf_targets(node.target):
                if isinstance(target, cst.Attribute) and (root := _root_name(target)) is not None:
                    attributes.add(root)

    for stmt in stmts:
        walk(stmt, _Stores())
    if not attributes:
        return set()
    other: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, cst.FunctionDef):
            other.add(stmt.name.value)
            continue
        other |= set(_names([stmt]).writes)

        class _Other(cst.CSTVisitor):
            def visit_AssignTarget(self, node) -> None:
                for target in _leaf_targets(node.target):
                    if isinstance(target, cst.Subscript) and (root := _root_name(target)) is not None:
                        other.add(root)

            def visit_Call(self, node) -> None:
                receiver = _mutated_receiver(node)
                if receiver is not None:
                    other.add(receiver)

        walk(stmt, _Other())
    return attributes - other


def _is_step_call(stmt) -> bool:
    call = _expr_call(stmt)
    return call is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "step"
