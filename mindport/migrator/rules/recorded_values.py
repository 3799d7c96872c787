"""Values collected across several forward calls and differentiated later (``RecordedValueTransform``)."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.module_class import module_classes
from mindport.migrator.rules.training_loop_analysis import _names
from mindport.migrator.rules.training_region import reads_before_writes
from mindport.migrator.scopes import dotted_name
from mindport.migrator.syntax import code_of, module_code, target_names
from mindport.migrator.walk import parse_expression, parse_statement, read

# methods whose result carries no gradient in torch: what they produce is an input of a recorded computation
_CUT_METHODS = frozenset({"sample", "item", "argmax", "argmin", "detach", "numpy", "tolist", "multinomial"})
_COMBINE = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.vstack",
                      "torch.hstack", "torch.sum", "torch.mean"})
_BUILTINS = frozenset(dir(__import__("builtins")))


class RecordedValueTransform(Rule):
    """A value computed by a model call outside the function a later backward differentiates, and collected
    (appended to a list: log-probabilities saved while acting over an episode), is recorded with the code that
    computed it: ``H.append(mindport.runtime.training.record(v, fn, *inputs))``, ``fn`` being the statements from the
    model call to ``v`` over the values they read (the state, the action sampled: ``.sample()``, ``.item()``,
    ``.argmax()`` and ``.detach()`` end a chain: their results are inputs). A collection combined outside the
    backward region (``torch.stack(log_probs)`` handed to an update helper) is recorded the same way. torch's graph
    spans every forward since the last backward; MindSpore differentiates a function, so the runtime's
    ``value_and_grad`` computes each recorded value it reads again inside the differentiation (from the parameters
    as they are at the backward: those torch's graph saw). Applies in a file that calls ``.backward()``, in code with
    no backward of its own (a function with one builds its region around the collection already) and outside model
    classes and ``no_grad`` blocks. A helper whose result a caller binds and collects (``a, p =
    self.select_action(s)``, then ``self.data.append((r, p))``) records what it returns instead (each element of a
    returned tuple computed from a model call, with its slice of the helper: a value sampled there is an input), a
    generator of the file what it yields (``episode = list(generate_episode(world, policy))``), and
    the runtime computes again recorded values held in the tuples of a list. A file that records calls
    ``mindport.runtime.training.keep_dropout_masks()`` after its imports: its nn.Dropout layers keep the masks they
    draw and apply them again when a recorded value is computed again (no other script's Dropout is changed). A model
    ``fn`` reads with another random layer or a BatchNorm in training mode is refused at run time (a new mask,
    statistics updated twice: not torch's gradient)."""

    EXAMPLES = (
        Example(
            before="""
                import torch
                from torch.distributions import Categorical


                def select_action(policy, state, saved):
                    probs = policy(torch.from_numpy(state))
                    m = Categorical(probs)
                    action = m.sample()
                    saved.append(m.log_prob(action))
                    return action.item()


                def finish(optimizer, saved, returns):
                    loss = -(torch.stack(saved) * returns).sum()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import math as mp_math
                from mindport.runtime import distributions as mp_dist
                from mindport.runtime import training as mp_train
                mp_train.keep_dropout_masks()


                def select_action(policy, state, saved):
                    probs = policy(ms.Tensor.from_numpy(state))
                    m = mp_dist.Categorical(probs=probs)
                    action = m.sample()
                    def recompute_saved(policy, state, action):
                        probs = policy(ms.Tensor.from_numpy(state))
                        m = mp_dist.Categorical(probs=probs)
                        return m.log_prob(action)
                    saved.append(mp_train.record(m.log_prob(action), recompute_saved, policy, state, action))
                    return action.item()


                def finish(optimizer, saved, returns):
                    def forward_fn():
                        loss = -mp_math.sum((ops.stack(mp_tensor.promoted(saved)) * returns))
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer))
                    loss, grads = grad_fn()
                    mp_train.zero_grad(optimizer)
                    mp_train.backward(grads)
                    optimizer(mp_train.grads_of(optimizer))
            """,
            note="log-probabilities saved while acting, the loss built in another function: each saved value is "
                 "recorded with the statements that computed it from the model call on; the update's "
                 "value_and_grad computes them again inside the differentiation (the action, sampled, is an input); the "
                 "file's nn.Dropout layers keep their masks for that (keep_dropout_masks, after the imports)",
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def update(model, opt, x, y, algo):
                    out = model(x)
                    logp = F.log_softmax(out, dim=1)
                    if algo == "A2C":
                        loss = -(logp * y).sum()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
            """,
            after="""
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train
                mp_train.keep_dropout_masks()


                def update(model, opt, x, y, algo):
                    out = mp_train.record(model(x), lambda model, x: model(x), model, x)
                    logp = mp_train.record(mp_F.log_softmax(out, dim=1), lambda out: mp_F.log_softmax(out, dim=1), out)
                    if algo == "A2C":
                        def forward_fn():
                            loss = -mp_math.sum((logp * y))
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt))
                        loss, grads = grad_fn()
                        mp_train.zero_grad(opt)
                        mp_train.backward(grads)
                        opt(mp_train.grads_of(opt))
            """,
            note="A loss in a branch reading values computed before it from a model call (an actor-critic update: the outputs, log-probabilities, then `if algo == ...:` holding the backward): each assignment computing such a value is recorded with its expression, and the branch's value_and_grad computes them again inside the differentiation (before, they were constants there: no parameter reached the loss).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._active = False
        self._frames: list[dict] = []  # per module/function: locals, whether it differentiates, holders
        self._no_grad = 0
        self._no_grad_bodies: set[int] = set()  # ids of the bodies of no_grad blocks
        self._models: set[str] = set()
        self._classes: list[str] = []
        self._collected_returns: frozenset[str] = frozenset()  # helpers whose results a caller collects
        self._records = False  # the file records a value: its nn.Dropout layers keep their masks (leave_Module)
        self._snapshots: dict[str, int] = {}  # the last _slice's rebound inputs -> where their snapshot goes
        self._taken: set[int] = set()
        self._collectors: dict[str, int] = {}  # methods/functions appending an argument: name -> its position

    # --- where we are
    def visit_Module(self, node: cst.Module) -> None:
        code = module_code(node)
        self._handed = {name: (params, backed) for name, params, backed in self.ctx.options.backward_params}
        self._active = ".backward(" in code or "autograd.grad(" in code \
            or any(f"{name}(" in code for name in self._handed)
        self._models = module_classes(self.ctx.class_summary, self.ctx.options.module_classes)
        top = [s for s in node.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        self._frames.append(self._frame(cst.Module(body=top), ()))
        self._collected_returns = _collected_returns(node, self._models) if self._active else frozenset()
        self._collectors = _collectors_of(node) if self._active else {}

    def leave_Module(self, original_node, updated_node):
        """A file that records values makes MindSpore's nn.Dropout keep the masks it draws (``keep_dropout_masks``),
        right after its imports, before it builds a model: a recorded value is computed again with the masks it was
        computed with. Other scripts keep MindSpore's own Dropout."""
        if not self._records:
            return updated_node
        train = self.ctx.alias_for("mindport.runtime.training")
        # a loop the training-loop rule wrote natively (``grad_fn = ms.value_and_grad(forward_fn, None, params)``)
        # differentiates forward_fn as MindSpore does, which never computes a recorded value again: the loss built
        # from them was a constant there and every gradient zero, silently (ghj0504520/RL-LIB's agents). Its function
        # is handed over through the runtime's ``replayed`` (the same function, recorded values computed again)
        updated_node = updated_node.visit(_ReplayNativeGrads(self.ctx.alias_for("mindspore"), train))
        body = list(updated_node.body)
        index = _after_imports(body)
        call = parse_statement(f"{train}.keep_dropout_masks()\n")
        return updated_node.with_changes(body=[*body[:index], call, *body[index:]])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                         *node.params.kwonly_params)]
        frame = self._frame(node.body, params)
        frame["model"] = bool(self._classes) and self._classes[-1] in self._models
        frame["name"] = node.name.value
        self._frames.append(frame)

    def leave_FunctionDef(self, original_node, updated_node):
        self._frames.pop()
        return updated_node

    # A no_grad block is counted from its body's visit to its body's leave: IndentedBlock hooks run for every rule,
    # while the first rule that rewrites a With (TensorIdiomTransform flattens ``with torch.no_grad():``) stops the
    # later rules' leave_With, which left the count open for the rest of the file (nothing recorded after a no_grad
    # block that set the initial weights)
    def visit_With(self, node: cst.With) -> None:
        if self._is_no_grad(node) and isinstance(node.body, cst.IndentedBlock):
            self._no_grad_bodies.add(id(node.body))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if id(node) in self._no_grad_bodies:
            self._no_grad += 1

    def _is_no_grad(self, node: cst.With) -> bool:
        return any(isinstance(i.item, cst.Call) and (self.scope.resolve_torch(i.item.func) or "") in (
            "torch.no_grad", "torch.inference_mode") for i in node.items)

    def _frame(self, body, params) -> dict:
        code = code_of(body) if not isinstance(body, cst.Module) else module_code(body)
        names = _names([body])
        return {"locals": set(params) | set(names.writes) | _non_assignment_bindings(body), "differentiates": ".backward(" in code
                or "autograd.grad(" in code, "holders": set(), "model": False}

    # --- the rewrite
    def leave_IndentedBlock(self, original_node, updated_node):
        result = self._rewrite_block(original_node, updated_node)
        if id(original_node) in self._no_grad_bodies:
            self._no_grad -= 1
        return result

    def _rewrite_block(self, original_node, updated_node):
        frame = self._frames[-1] if self._frames else None
        if not self._active or frame is None or frame["model"] or self._no_grad \
                or len(original_node.body) != len(updated_node.body):
            return updated_node
        original, body = list(original_node.body), list(updated_node.body)
        if frame["differentiates"]:
            return self._read_in_branches(original, body, updated_node, frame)
        new: dict[int, list] = {}
        self._taken: set[int] = set()  # statements a snapshot was placed before (one record's snapshots each)
        for i, stmt in enumerate(original):
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                continue
            small = stmt.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "append" \
                    and len(small.value.args) == 1 and (holder := dotted_name(small.value.func.value)):
                new.update(self._appended(original, body, i, frame, holder))
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and (position := self._collectors.get(_called_name(small.value) or "")) is not None \
                    and len(small.value.args) > position and all(a.keyword is None and not a.star
                                                                  for a in small.value.args[:position + 1]):
                # ``pi.put_data((r, prob[a]))`` of a method appending its argument (``self.data.append(item)``):
                # the value collected as by an append here (minimalRL's REINFORCE refused: no parameter reached)
                new.update(self._appended(original, body, i, frame, dotted_name(small.value.func) or "collected",
                                          position))
            elif isinstance(small, cst.Return) and small.value is not None \
                    and frame.get("name") in self._collected_returns:
                new.update(self._returned(original, body, i, frame))
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) \
                    and isinstance(small.value.value, cst.BaseExpression) and small.value.value is not None \
                    and frame.get("name") in self._collected_returns:
                new.update(self._returned(original, body, i, frame, yielded=True))
            elif isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) and i not in new:
                new.update(self._combined(body, i, frame, small))
            if i not in new and self._handed and isinstance(small, (cst.Expr, cst.Assign, cst.Return)) \
                    and isinstance(small.value, cst.Call) and _called_name(small.value) in self._handed:
                new.update(self._handed_to(original, body, i, frame))
        if not new:
            return updated_node
        return updated_node.with_changes(body=[s for i, stmt in enumerate(body) for s in new.get(i, [stmt])])

    # --- values a branch's backward reads, computed before the branch
    def _read_in_branches(self, original, updated, updated_node, frame):
        """In a function that differentiates: an ``if``/``with``/``try`` holding a ``.backward()`` whose loss reads
        values computed from a model call before it, in this block (cfh/connect4_a2c's ``update_policy``: ``logits =
        model(states)``, ``log_probs``, ``entropy`` ..., then ``if algorithm == "PPO": ... else: total_loss = ...;
        total_loss.backward()``). The training-loop rule differentiates the branch's statements only (the region is
        planned per block), where those values were constants: no parameter reached the loss (refused at the first
        step). Each assignment of this block computing such a value is recorded with its expression, over the names
        it reads (``log_probs = record(F.log_softmax(m, dim=1), lambda m: F.log_softmax(m, dim=1), m)``), and
        value_and_grad computes the values the branch's function reads again inside the differentiation, from the
        model call on, as for a value collected over an episode. Left alone (today's refusal at run time) when a
        value the branch reads comes from a computation that cannot be recorded that way (an augmented assignment,
        a loop, an assignment inside a compound statement, several targets), since a loss recorded in part would
        have part of torch's gradient, silently."""
        records: dict[int, list[str]] = {}
        for c, stmt in enumerate(original):
            if not isinstance(stmt, (cst.If, cst.With, cst.Try)) or ".backward(" not in code_of(stmt):
                continue
            found = self._branch_records(original[:c], set(reads_before_writes([stmt])), frame)
            if found:
                records.update(found)
        if not records or not all(_same_assignment(original[i], updated[i]) for i in records):
            # the block was restructured by an earlier rule (the training-loop rule moved a region into a function
            # with as many statements: the positions no longer name the same assignments): nothing recorded
            return updated_node
        train = self.ctx.alias_for("mindport.runtime.training")
        body = list(updated)
        for i in records:
            line = updated[i]
            small = line.body[0]
            value = code_of(small.value)
            inputs = [n for n in dict.fromkeys(_names([original[i].body[0].value]).reads) if n in frame["locals"]]
            params = ", ".join(inputs)
            new_value = parse_expression(f"{train}.record({value}, lambda {params}: {value}, {params})"
                                         if inputs else f"{train}.record({value}, lambda: {value})")
            body[i] = line.with_changes(body=[small.with_changes(value=new_value)])
            self.ctx.converted_sites += 1
        self._records = True
        return updated_node.with_changes(body=body)

    def _branch_records(self, stmts, needed: set[str], frame) -> dict[int, list[str]] | None:
        """The indices of ``stmts`` (this block's statements before the branch) whose assignment is recorded, with
        the names each binds; None where the branch reads no value computed from a model call here, or reads one
        that cannot be recorded (see ``_read_in_branches``). A model call is a call of a local name (a model handed
        in or built here), of ``self.<attribute>`` or of ``.forward``; a function of the file is one only when its
        arguments carry a model's value (``mask_invalid_moves_batch(states, logits)``): a helper computing returns or
        sampling an action is not computed again."""
        hot: set[str] = set()  # names holding a value that carries a gradient from a model call
        tainted: set[str] = set()  # such names whose value is not recorded
        records: dict[int, list[str]] = {}

        def seeds(value) -> bool:
            for call in self._live_calls(value):
                name = dotted_name(call.func) or ""
                if isinstance(call.func, cst.Name) and name in frame["locals"]:
                    return True
                if name.endswith(".forward") or (name.startswith("self.") and name.count(".") == 1):
                    return True  # ``self.critic(s)``, ``self.policy(s)``; not ``self.memory.sample()`` (a method
                    # of an attribute draws data: computed again inside the differentiation it would draw again)
            return False

        def assign(small, index, top, quiet) -> None:
            names = [n for t in small.targets for n in target_names(t.target)]
            value = small.value
            live = self._live_reads(value)
            if quiet or not (seeds(value) or live & hot):
                hot.difference_update(names)
                tainted.difference_update(names)
                return
            hot.update(names)
            if live & tainted:
                tainted.update(names)
            elif isinstance(value, cst.Name) or (isinstance(value, (cst.Tuple, cst.List)) and all(
                    isinstance(e.value, cst.Name) for e in value.elements)):
                pass  # a rename or an unpacking: the same (recorded) objects
            elif index is not None and top and len(small.targets) == 1:
                records[index] = names
            else:
                tainted.update(names)

        def visit(stmt, index, top, quiet) -> None:
            if isinstance(stmt, cst.SimpleStatementLine):
                one = len(stmt.body) == 1
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        assign(small, index if one else None, top, quiet)
                    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and small.value is not None:
                        names = target_names(small.target)
                        if not quiet and (set(names) & hot or seeds(small.value) or self._live_reads(small.value) & hot):
                            hot.update(names)
                            tainted.update(names)
                return
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                return
            quiet_here = quiet or (isinstance(stmt, cst.With) and self._is_no_grad(stmt))
            loop = isinstance(stmt, (cst.For, cst.While))
            for child in _blocks(stmt):
                for inner in child:
                    visit(inner, None, False, quiet_here)
            if loop:  # a value a loop computes from a model call: not recorded (computed again once, not per pass)
                tainted.update(hot & set(_names([stmt]).writes))

        for i, stmt in enumerate(stmts):
            visit(stmt, i, True, False)
        if not needed & hot or needed & tainted:
            return None
        return records

    def _appended(self, original, updated, index, frame, holder, position=0) -> dict:
        """``holder.append(E)`` with E computed from a model call: E recorded with its slice, where E is computed
        (the append's argument, or the assignment of the name appended, whose inputs may change after it).
        ``position``: the argument that is collected (a collector method's, see ``_collectors_of``)."""
        value = original[index].body[0].value.args[position].value
        point = index
        if isinstance(value, cst.Name):
            for j in range(index - 1, -1, -1):
                small = original[j].body[0] if isinstance(original[j], cst.SimpleStatementLine) else None
                if value.value in _names([original[j]]).writes:
                    if not (isinstance(small, cst.Assign) and len(original[j].body) == 1 and len(small.targets) == 1
                            and isinstance(small.targets[0].target, cst.Name)):
                        return {}
                    point, value = j, small.value
                    break
        found = self._slice(original, point, value, frame)
        if found is None:
            return {}
        chosen, inputs = found
        snapshots = self._snapshots
        if any(k in self._taken for k in snapshots.values()):
            return {}
        frame["holders"].add(holder)
        train = self.ctx.alias_for("mindport.runtime.training")
        self._records = True
        fn = self._fresh(f"recompute_{holder.rsplit('.', 1)[-1]}", frame)
        line = updated[point]
        small = line.body[0]
        updated_value = small.value.args[position].value if point == index else small.value
        definition = self._definition(fn, inputs, [updated[j] for j in chosen], updated_value, line)
        kept = {}
        for name in snapshots:
            kept[name] = self._fresh(f"{name}_read", frame)
            frame["locals"].add(kept[name])
        args = "".join(f", {kept.get(n, n)}" for n in inputs)
        call = parse_expression(f"{train}.record({code_of(updated_value)}, {fn}{args})")
        if point == index:
            args = list(small.value.args)
            args[position] = args[position].with_changes(value=call)
            small = small.with_changes(value=small.value.with_changes(args=args))
        else:
            small = small.with_changes(value=call)
        self.ctx.converted_sites += 1
        result = {point: [definition, line.with_changes(body=[small], leading_lines=[])]}
        for name, k in snapshots.items():  # the snapshot, right before the first statement reading the input
            result.setdefault(k, [updated[k]])
            result[k].insert(len(result[k]) - 1, parse_statement(f"{kept[name]} = {name}\n"))
            self._taken.add(k)
        return result

    def _returned(self, original, updated, index, frame, yielded=False) -> dict:
        """``return E`` (or ``return a, E``) of a helper whose result a caller collects (``a, p =
        self.select_action(s)`` then ``self.data.append((r, p))``): each returned value computed from a model call
        is recorded here, with its slice of this function (a value sampled here, ``a = m.sample()``, is an input:
        computing the caller's statement again would sample again). The same for ``yield E`` of a generator of the
        file (``yielded``): what it yields is what its consumer collects (``episode = list(generate_episode(...))``,
        sgould/fun_and_games' REINFORCE, whose log-probabilities were constants of the later differentiation)."""
        value = original[index].body[0].value
        updated_value = updated[index].body[0].value
        if yielded:
            value, updated_value = value.value, updated_value.value
        pairs = list(zip(value.elements, updated_value.elements)) if isinstance(value, cst.Tuple) \
            and isinstance(updated_value, cst.Tuple) and len(value.elements) == len(updated_value.elements) \
            else [(None, None)]
        definitions, elements = [], []
        train = self.ctx.alias_for("mindport.runtime.training")
        for element, new in pairs:
            expr = value if element is None else element.value
            new_expr = updated_value if element is None else new.value
            found = None if isinstance(element, cst.StarredElement) else self._slice(original, index, expr, frame)
            if found is None:
                elements.append(new)
                continue
            chosen, inputs = found
            fn = self._fresh(f"recompute_{frame['name']}", frame)
            frame["locals"].add(fn)
            definitions.append(self._definition(fn, inputs, [updated[j] for j in chosen], new_expr,
                                                updated[index] if not definitions else None))
            args = "".join(f", {n}" for n in inputs)
            call = parse_expression(f"{train}.record({code_of(new_expr)}, {fn}{args})")
            self._records = True
            elements.append(call if element is None else new.with_changes(value=call))
            self.ctx.converted_sites += 1
        if not definitions:
            return {}
        line = updated[index]
        returned = elements[0] if pairs == [(None, None)] else updated_value.with_changes(elements=elements)
        small = line.body[0].with_changes(value=line.body[0].value.with_changes(value=returned) if yielded
                                          else returned)
        return {index: [*definitions, line.with_changes(body=[small], leading_lines=[])]}

    def _handed_to(self, original, updated, index, frame) -> dict:
        """``self.train(self.model, loss, self.opt)`` of a helper that calls ``loss.backward()`` on that parameter
        (``project.backward_params``, in any file of the project): the loss handed over, computed here from a model
        call, is recorded with its slice (``record(loss, recompute_loss, self, x, y)``), and the helper's region
        (``TrainingLoopTransform._handed_losses``) differentiates it: value_and_grad computes it again from the
        parameters. A loss this block does not compute from a model call (built over an episode in a loop, handed
        in by its own caller) is left as it is: the runtime refuses the helper's region (no parameter reaches its
        loss) at the first step."""
        call, new_call = original[index].body[0].value, updated[index].body[0].value
        if len(call.args) != len(new_call.args):
            return {}
        params, backed = self._handed[_called_name(call)]
        offset = 1 if isinstance(call.func, cst.Attribute) and params[:1] in (("self",), ("cls",)) else 0
        train = self.ctx.alias_for("mindport.runtime.training")
        definitions, args = [], list(new_call.args)
        for k, arg in enumerate(call.args):
            if arg.star:
                break
            name = arg.keyword.value if arg.keyword is not None else (
                params[k + offset] if k + offset < len(params) else None)
            if name not in backed or not isinstance(arg.value, cst.Name):
                continue
            point, value = index, arg.value
            for j in range(index - 1, -1, -1):  # where the name handed over is computed
                if value.value in _names([original[j]]).writes:
                    small = original[j].body[0] if isinstance(original[j], cst.SimpleStatementLine) else None
                    if isinstance(small, cst.Assign) and len(original[j].body) == 1 and len(small.targets) == 1 \
                            and isinstance(small.targets[0].target, cst.Name):
                        point, value = j, small.value
                    break
            if point == index:
                continue
            found = self._slice(original, point, value, frame)
            if found is None and not _calls(value):
                # computed here from values held before (``policy_loss = log_probs[action]``, an item of an episode
                # a generator yielded): recorded as a function of them, so a recorded value among them is computed
                # again inside the helper's differentiation (one no model reaches stays a constant there, and the
                # runtime refuses the step: no parameter reaches the loss)
                found = [], [n for n in dict.fromkeys(_names([value]).reads) if n in frame["locals"]]
            if found is None or any(set(_names([original[j]]).writes) & set(_names([value]).reads)
                                    for j in range(point + 1, index)):
                continue
            chosen, inputs = found
            fn = self._fresh(f"recompute_{arg.value.value}", frame)
            frame["locals"].add(fn)
            definitions.append(self._definition(fn, inputs, [updated[j] for j in chosen + [point]],
                                                arg.value, updated[index] if not definitions else None))
            rest = "".join(f", {n}" for n in inputs)
            args[k] = args[k].with_changes(value=parse_expression(f"{train}.record({arg.value.value}, {fn}{rest})"))
            self._records = True
            self.ctx.converted_sites += 1
        if not definitions:
            return {}
        line = updated[index]
        small = line.body[0].with_changes(value=new_call.with_changes(args=args))
        return {index: [*definitions, line.with_changes(body=[small], leading_lines=[])]}

    @staticmethod
    def _definition(fn, inputs, statements, value, line):
        return cst.FunctionDef(
            name=cst.Name(fn), params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in inputs]),
            body=cst.IndentedBlock(body=[*(s.with_changes(leading_lines=[]) for s in statements),
                                         parse_statement(f"return {code_of(value)}\n")]),
            leading_lines=line.leading_lines if line is not None else [])

    def _slice(self, original, point, value, frame):
        """The statements before ``point`` that compute ``value`` from a model call (indices), and the names the
        slice reads from outside it (its inputs); None where ``value`` is not computed from a model call here, a
        compound statement computes part of it, a helper records it itself, or an input is rebound in between."""
        hot = self._hot(original[:point], frame)
        needed = set(_names([value]).reads)
        if not self._live_reads(value) & hot and not self._forward_calls(value):
            return None
        chosen: list[int] = []
        for j in range(point - 1, -1, -1):
            stmt = original[j]
            writes = set(_names([stmt]).writes)
            if not writes & needed or not writes & hot:
                continue
            if not isinstance(stmt, cst.SimpleStatementLine) or not all(
                    isinstance(s, cst.Assign) for s in stmt.body):
                return None  # a compound statement computes part of it: left alone
            if any(_called_name(c) in self._collected_returns for c in _calls(stmt)):
                return None  # a helper that records what it returns (``_returned``): computed again there
            chosen.append(j)
            needed = (needed - writes) | set(_names([stmt]).reads)
        chosen.reverse()
        inputs = [n for n in dict.fromkeys(_names([original[j] for j in chosen] + [value]).reads)
                  if n in needed and n in frame["locals"]]
        # an input rebound after a statement of the slice read it (``obs, reward, done, _ = env.step(action)``
        # between ``model(obs)`` and the append): the value it read is kept in a snapshot taken right before the
        # first statement of the slice that reads it (``snapshots``: input -> that statement's index), and the
        # record is given the snapshot. Before, such a value was not recorded at all, and the loss built from it
        # reached no parameter (gillesdami's actor-critic: refused at run time)
        snapshots: dict[str, int] = {}
        for k in chosen:
            read = set(_names([original[k]]).reads) & set(inputs)
            for name in read:
                if name not in snapshots and any(name in _names([original[j]]).writes for j in range(k + 1, point)):
                    snapshots[name] = k
        if any(name in _names([original[j]]).writes for name, k in snapshots.items() for j in range(k + 1, point)
               if j in chosen):
            return None  # the slice itself rebinds it: the snapshot would not be what each statement read
        self._snapshots = snapshots
        return chosen, inputs

    def _combined(self, updated, index, frame, assign: cst.Assign):
        """``Y = torch.stack(H)`` (and other combinations) of a recorded collection: Y recorded over H."""
        reads = set(_names([assign.value]).reads)
        if not reads & frame["holders"] or self._forward_calls(assign.value):
            return {}
        calls = [c for c in _calls(assign.value)]
        if not any((self.scope.resolve_torch(c.func) or "") in _COMBINE for c in calls):
            return {}
        target = assign.targets[0].target.value
        inputs = [n for n in dict.fromkeys(_names([assign.value]).reads) if n in frame["locals"]]
        value = updated[index].body[0].value
        train = self.ctx.alias_for("mindport.runtime.training")
        self._records = True
        params = ", ".join(inputs)
        line = updated[index]
        new_value = parse_expression(f"{train}.record({code_of(value)}, lambda {params}: {code_of(value)}, {params})")
        frame["holders"].add(target)
        self.ctx.converted_sites += 1
        return {index: [line.with_changes(body=[line.body[0].with_changes(value=new_value)])]}

    # --- facts
    def _forward_calls(self, node, live=False) -> bool:
        """Whether ``node`` calls a model (a function of this file, a ``self.`` method, ``.forward``); ``live``: only
        through a path that carries a gradient (``int(self.rng.rand() < p.item())`` calls none)."""
        for call in (self._live_calls(node) if live else _calls(node)):
            name = dotted_name(call.func) or ""
            if isinstance(call.func, cst.Name) and name not in _BUILTINS \
                    and self.scope.resolve_dotted(name) is None and self.scope.resolve_torch(call.func) is None:
                return True
            if name.startswith("self.") and name.count(".") >= 1 or name.endswith(".forward"):
                return True
        return False

    def _hot(self, stmts, frame) -> set[str]:
        """Names holding a value computed from a model call in these statements (not through a method whose result
        carries no gradient)."""
        hot: set[str] = set()
        for stmt in stmts:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.Assign):
                    continue
                value = small.value
                if self._forward_calls(value, live=True) or self._live_reads(value) & hot:
                    hot.update(n for t in small.targets for n in target_names(t.target))
        return hot

    def _live_calls(self, node) -> list[cst.Call]:
        """The calls an expression makes on a path that carries a gradient (see ``_live_reads``)."""
        calls: list[cst.Call] = []
        self._live_reads(node, calls)
        return calls

    def _live_reads(self, node, calls=None) -> set[str]:
        """Names an expression reads through a path that carries a gradient: not under ``.detach()``, ``.item()``,
        ``.sample()``, ``.argmax()`` ..., ``int()``/``float()``/``bool()``/``len()`` or a numpy function (``calls``
        given: the calls on those paths are appended to it)."""
        rule = self
        found: set[str] = set()

        class _Live(cst.CSTVisitor):
            def visit_Call(self, call) -> bool:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _CUT_METHODS:
                    return False
                if isinstance(func, cst.Name) and func.value in ("int", "float", "bool", "len", "str"):
                    return False
                qual = rule.scope.resolve_dotted(dotted_name(func) or "") or ""
                if str(qual).startswith(("numpy", "np.", "random")):
                    return False
                if calls is not None:
                    calls.append(call)
                return True

            def visit_Attribute(self, node) -> bool:
                read(node.value, self)
                return False

            def visit_Arg(self, node) -> bool:
                read(node.value, self)
                return False

            def visit_Name(self, node) -> None:
                found.add(node.value)

            def visit_Lambda(self, node) -> bool:
                return False

        read(node, _Live())
        return found

    def _fresh(self, name: str, frame) -> str:
        taken = set(getattr(self.scope, "names", ())) | set(getattr(self.ctx.module_scope, "names", ())) \
            | frame["locals"]
        while name in taken:
            name += "_"
        return name


def _blocks(stmt) -> list[list]:
    """The statement lists a compound statement holds (body, else, except handlers, finally), in order."""
    found = []
    for part in (getattr(stmt, "body", None), *(h.body for h in getattr(stmt, "handlers", ())),
                 getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
        if part is None:
            continue
        if isinstance(part, cst.If):  # elif
            found.extend(_blocks(part))
            continue
        block = getattr(part, "body", part)
        found.append(list(block.body) if isinstance(block, cst.IndentedBlock) else
                     list(block) if isinstance(block, (list, tuple)) else [block])
    return found


def _non_assignment_bindings(body) -> set[str]:
    """Names a block binds other than by assignment: loop targets (``for step in ...``), ``with ... as f``,
    ``except ... as e``, nested definitions. A slice reading one takes it as an input: a recompute function that
    read it through its closure would see its last value (the loop's last ``step``) when it runs again."""
    found: set[str] = set()

    class _Walk(cst.CSTVisitor):
        def visit_For(self, n) -> None:
            found.update(target_names(n.target))

        def visit_WithItem(self, n) -> None:
            if n.asname is not None:
                found.update(target_names(n.asname.name))

        def visit_ExceptHandler(self, n) -> None:
            if n.name is not None:
                found.update(target_names(n.name.name))

        def visit_FunctionDef(self, n) -> bool:
            return False

        def visit_Lambda(self, n) -> bool:
            return False

    read(body, _Walk())
    return found


def _calls(node) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Walk(cst.CSTVisitor):
        def visit_Call(self, n) -> None:
            found.append(n)

        def visit_Lambda(self, n) -> bool:
            return False

    read(node, _Walk())
    return found


def _collectors_of(module: cst.Module) -> dict[str, int]:
    """The functions and methods of this file whose body appends one of their parameters to a list (minimalRL's
    ``def put_data(self, item): self.data.append(item)``), by name, with that parameter's position among a call's
    arguments (``self`` not counted). A name defined twice with different positions is left out."""
    found: dict[str, int] = {}
    clash: set[str] = set()

    def scan(fn: cst.FunctionDef, method: bool) -> None:
        params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        if method and params:
            params = params[1:]
        for stmt in fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ():
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "append" \
                    and len(small.value.args) == 1 and isinstance(small.value.args[0].value, cst.Name) \
                    and small.value.args[0].value.value in params:
                position = params.index(small.value.args[0].value.value)
                name = fn.name.value
                if found.get(name, position) != position:
                    clash.add(name)
                found[name] = position

    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            scan(stmt, False)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    scan(item, True)
    return {k: v for k, v in found.items() if k not in clash}


def _called_name(call: cst.Call) -> str | None:
    """``f`` of ``f(...)`` and of ``obj.f(...)``."""
    if isinstance(call.func, cst.Name):
        return call.func.value
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    return None


def _collected_returns(module: cst.Module, models) -> frozenset[str]:
    """Names of the functions and methods this file defines (not a model class's: its forward is the model call)
    that some block of the file calls, binding the result (``p = act(s)``, ``a, p = self.select_action(s)``), and
    then collects: appends a value reading a bound name to a container (``self.data.append((r, p))``)."""
    found: set[str] = set()
    defined = {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)} | {
        f.name.value for c in module.body if isinstance(c, cst.ClassDef) and c.name.value not in models
        for f in c.body.body if isinstance(f, cst.FunctionDef)}

    class _Blocks(cst.CSTVisitor):
        def visit_IndentedBlock(self, node) -> None:
            self._scan(node.body)

        def visit_Module(self, node) -> None:
            self._scan(node.body)

        @staticmethod
        def _scan(body) -> None:
            bound: dict[str, str] = {}  # name -> the helper whose result it holds
            for stmt in body:
                if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                    continue
                small = stmt.body[0]
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) \
                        and (name := _called_name(small.value)):
                    for t in small.targets:
                        for n in target_names(t.target):
                            bound[n] = name
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                        and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "append" \
                        and len(small.value.args) == 1:
                    for n in _names([small.value.args[0].value]).reads:
                        if n in bound:
                            found.add(bound[n])

    read(module, _Blocks())

    class _Generators(cst.CSTVisitor):  # a generator's yields are what its consumer collects
        def __init__(self) -> None:
            self.names: set[str] = set()
            self.stack: list[str] = []

        def visit_FunctionDef(self, node) -> None:
            self.stack.append(node.name.value)

        def leave_FunctionDef(self, node) -> None:
            self.stack.pop()

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Yield(self, node) -> None:
            if self.stack and node.value is not None and not isinstance(node.value, cst.From):
                self.names.add(self.stack[-1])

    generators = _Generators()
    read(module, generators)
    return frozenset((found | generators.names) & defined)


class _ReplayNativeGrads(cst.CSTTransformer):
    """``ms.value_and_grad(fn, ...)`` -> ``ms.value_and_grad(mp_train.replayed(fn), ...)`` (see leave_Module)."""

    def __init__(self, ms_alias: str, train: str) -> None:
        super().__init__()
        self._target, self._train = f"{ms_alias}.value_and_grad", train

    def leave_Call(self, original_node, updated_node):
        if dotted_name(updated_node.func) != self._target or not updated_node.args \
                or updated_node.args[0].keyword is not None or updated_node.args[0].star:
            return updated_node
        first = updated_node.args[0]
        wrapped = parse_expression(f"{self._train}.replayed({code_of(first.value)})")
        return updated_node.with_changes(args=[first.with_changes(value=wrapped), *updated_node.args[1:]])


def _after_imports(body: list) -> int:
    """Where a statement that must run before the file's own code goes: right after its first top-level torch import
    (where the MindSpore imports take its place), else after the imports and docstring the file opens with."""
    leading = 0
    for i, stmt in enumerate(body):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            names = [a.name for a in small.names] if isinstance(small, cst.Import) else [small.module] \
                if small.module is not None and not small.relative else []
            if any((dotted_name(n) or "").split(".")[0] == "torch" for n in names):
                return i + 1
            if leading == i:
                leading = i + 1
        elif leading == i and i == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
            leading = 1
    return leading


def _same_assignment(original, updated) -> bool:
    """Whether ``updated`` is still ``original``'s one-assignment line (same targets), rewritten inside at most."""
    return all(isinstance(n, cst.SimpleStatementLine) and len(n.body) == 1 and isinstance(n.body[0], cst.Assign)
               for n in (original, updated)) and [code_of(t.target) for t in original.body[0].targets] == \
        [code_of(t.target) for t in updated.body[0].targets]
