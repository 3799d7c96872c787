"""Training code: the torch loop (zero_grad / forward / loss / backward / step) becomes MindSpore's functional step,
and the data pipeline (TensorDataset / DataLoader / Dataset bases) becomes ``mindspore.dataset``.

``TrainingLoopRule`` rewrites a ``for`` loop whose own body holds ``<loss>.backward()`` and ``<opt>.step()``::

    def forward_fn(x, y):                    # the assignments right before backward, autocast blocks flattened
        out = model(x)
        loss = criterion(out, y)
        return loss, out                     # loss first (differentiated), then what the loop reads later
    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    for x, y in loader:
        (loss, out), grads = grad_fn(x, y)
        grads = ops.clip_by_global_norm(grads, 1.0)      # clip_grad_norm_(...)
        optimizer(grads)                                 # optimizer.step(); zero_grad() disappears

The definitions go before the outermost loop of the nest. Shapes handled: plain; scheduler ``.step()`` (kept: the
``experimental.optim`` schedulers have it); clipping by norm/value; AMP (``autocast`` blocks flattened, the network
converted once with ``amp.auto_mixed_precision`` when autocast is enabled, ``GradScaler.scale/unscale_/step/update``
-> ``DynamicLossScaler.scale/unscale/all_finite/adjust``); gradient accumulation (``step()`` inside an ``if``: grads
are summed into ``accum_grads`` and ``zero_grad()`` resets it). Any other loop holding ``.backward()`` gets MP105.
"""
from __future__ import annotations

from collections import Counter

import libcst as cst

from mindport.mappings.transforms import Unsupported
from mindport.migrator.base import Rule
from mindport.migrator.calls import CallBindError, bind_arguments, map_arguments
from mindport.migrator.names import dotted_name, receiver_kind
from mindport.migrator.walk import parse_expression, parse_statement, walk

_CLIP = {"torch.nn.utils.clip_grad_norm_": "norm", "torch.nn.utils.clip_grad.clip_grad_norm_": "norm",
         "torch.nn.utils.clip_grad_value_": "value", "torch.nn.utils.clip_grad.clip_grad_value_": "value"}
_AUTOCAST = {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"}
_DATASET_BASES = {"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset"}
_MP105_HINT = ("write the step by hand: forward_fn(x, y) returning (loss, aux), grad_fn = ms.value_and_grad(forward_fn, "
               "None, opt.parameters, has_aux=True), (loss, aux), grads = grad_fn(x, y), opt(grads)")


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _stmt(text: str) -> cst.BaseStatement:
    return parse_statement(text)


def _method_call(node, name: str) -> cst.Call | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name:
        return node
    return None


def _expr_call(stmt) -> cst.Call | None:
    """The call of an expression statement ``f(...)`` (one statement on the line), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


def _receiver_name(call: cst.Call) -> str | None:
    return dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None


class _Names(cst.CSTVisitor):
    """Names read (in order) and names assigned by a list of statements (walked with ``walk.walk``: no rebuilding,
    no whitespace)."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def visit_Assign(self, node: cst.Assign) -> bool:
        walk(node.value, self)
        for target in node.targets:
            self._target(target.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        walk(node.target, self)
        walk(node.value, self)
        self._target(node.target)
        return False

    def _target(self, target) -> None:
        if isinstance(target, cst.Name):
            self.writes.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        else:
            walk(target, self)

    def visit_Name(self, node: cst.Name) -> None:
        self.reads.append(node.value)


def _names(nodes) -> _Names:
    collector = _Names()
    for node in nodes:
        walk(node, collector)
    return collector


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


def _own_calls(node: cst.CSTNode):
    """Calls in ``node``, not descending into nested loops or definitions."""
    found: list[cst.Call] = []

    class _Walk(cst.CSTVisitor):
        def visit_For(self, n) -> bool:
            return n is node

        def visit_While(self, n) -> bool:
            return n is node

        def visit_FunctionDef(self, n) -> bool:
            return False

        def visit_Call(self, n) -> None:
            found.append(n)

    walk(node, _Walk())
    return found


_OPTIMIZER_BASES = {"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"}


class CustomOptimizerTransform(Rule):
    """A hand-written optimizer: ``class MySGD(torch.optim.Optimizer)`` with ``step(self, closure=None)`` reading
    ``p.grad`` -> ``construct(self, gradients, closure=None)`` (what ``optimizer(grads)`` calls in MindSpore), where
    ``p.grad`` is the gradient of ``p`` from ``gradients`` (aligned with ``self.parameters``). The in-place updates
    of ``p`` and of the state tensors are the table's (``mindport.runtime.inplace``). A parameter with no gradient
    path gets a zero gradient in MindSpore where torch has None: ``if p.grad is None`` skips nothing."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[bool] = []
        self._in_step = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(any(self.scope.resolve_torch(b.value) in _OPTIMIZER_BASES for b in node.bases))

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        return updated_node

    def _is_step(self, node: cst.FunctionDef) -> bool:
        return bool(self._classes) and self._classes[-1] and node.name.value == "step"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_step(node):
            self._in_step += 1

    def leave_Attribute(self, original_node, updated_node):
        if self._in_step and updated_node.attr.value == "grad" and isinstance(updated_node.value, cst.Name):
            return parse_expression(f"_grads[id({updated_node.value.value})]")
        return updated_node

    def leave_FunctionDef(self, original_node, updated_node):
        if not self._is_step(original_node):
            return updated_node
        self._in_step -= 1
        params = updated_node.params
        extra = [p for p in params.params[1:] if p.name.value != "closure"]
        if extra or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
            self.flag(original_node, "MP105", "optimizer step with arguments other than closure",
                      "write construct(self, gradients) by hand", "torch.optim.Optimizer")
            return updated_node
        closure = [p for p in params.params[1:]]
        self.ctx.converted_sites += 1
        grads = parse_statement("_grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}")
        body = updated_node.body.with_changes(body=[grads, *updated_node.body.body])
        return updated_node.with_changes(
            name=cst.Name("construct"), body=body,
            params=params.with_changes(params=[params.params[0], cst.Param(cst.Name("gradients")), *closure]))


class _Unfit(Exception):
    """The loop holds .backward() but is not one of the recognised shapes; the message says why."""


class TrainingLoopRule(Rule):
    """The torch training step (zero_grad/forward/loss/backward/step) -> ``value_and_grad`` + ``opt(grads)``."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.optimizers: set[str] = set()
        self.scalers: set[str] = set()
        self._loop_targets: list[list[str]] = []
        self._loop_bodies: set[int] = set()
        self._preludes: list[tuple[cst.For, list[cst.BaseStatement]]] = []
        self._scope_nodes: dict[int, cst.CSTNode] = {}  # id(scope) -> its module/function node (train-mode check)

    # --- what names are: optimizers and loss scalers, from the file's assignments
    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            qual = self.scope.resolve_torch(node.value.func) or ""
            names = [n for t in node.targets for n in _target_names(t.target)]
            if qual.startswith("torch.optim.") and ".lr_scheduler." not in qual:
                self.optimizers.update(names)
            elif qual.endswith("GradScaler"):
                self.scalers.update(names)

    def visit_Module(self, node: cst.Module) -> None:
        self._scope_nodes[id(self.scope)] = node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope_nodes[id(self.scope)] = node  # the runner has entered the function's scope

    def visit_For(self, node: cst.For) -> None:
        self._loop_targets.append(_target_names(node.target))
        self._loop_bodies.add(id(node.body))
        calls = _own_calls(node)
        if not any(_method_call(c, "backward") is not None for c in calls):
            return
        for call in calls:  # the loop rule owns these; the table must not flag them one by one
            qual = self.scope.resolve_torch(call.func) or ""
            if qual in _CLIP or qual in _AUTOCAST or (isinstance(call.func, cst.Attribute) and call.func.attr.value in (
                    "backward", "step", "zero_grad", "unscale_", "update", "scale")):
                self.ctx.handled.add(id(call))
                if qual:  # and the dotted name itself (``torch.nn.utils...`` must not be flagged piecewise)
                    _handle_subtree(self.ctx, call.func)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        # optimizer.zero_grad() outside a rewritten loop: MindSpore gradients are values, nothing to reset
        call = _expr_call(updated_node)
        if call is not None and _method_call(call, "zero_grad") is not None and _receiver_name(call) in self.optimizers:
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        return updated_node

    def visit_While(self, node: cst.While) -> None:
        self._loop_bodies.add(id(node.body))

    def leave_Call(self, original_node, updated_node):
        # loss.backward() outside a loop this rule rewrites (a train_step function, a while loop): MindSpore tensors
        # have no backward(), and leaving it would fail only at run time
        func = original_node.func
        if id(original_node) in self.ctx.handled or not isinstance(func, cst.Attribute) \
                or func.attr.value != "backward" or self.scope.resolve(func.value) is not None \
                or receiver_kind(func.value, self.scope) in ("python", "foreign", "object"):
            return updated_node
        self.ctx.handled.add(id(original_node))
        self.flag(original_node, "MP105", f"{_code(func.value)}.backward() outside a recognised training loop: "
                  "MindSpore computes gradients as values", _MP105_HINT, "torch.Tensor.backward")
        return updated_node

    def leave_For(self, original_node: cst.For, updated_node: cst.For):
        targets = [n for level in self._loop_targets for n in level]
        self._loop_targets.pop()
        if not any(_method_call(c, "backward") is not None for c in _own_calls(original_node)):
            return updated_node
        try:
            new_loop, prelude = self._rewrite(updated_node, targets)
        except _Unfit as exc:
            self.flag(original_node, "MP105", f"training loop not recognised: {exc}", _MP105_HINT)
            return updated_node
        self.ctx.converted_sites += 1
        self._preludes.append((new_loop, prelude))
        return new_loop

    # --- placing forward_fn / grad_fn before the outermost loop of the nest
    def leave_IndentedBlock(self, original_node, updated_node):
        if id(original_node) in self._loop_bodies or not self._preludes:
            return updated_node
        return updated_node.with_changes(body=self._place(list(updated_node.body)))

    def leave_Module(self, original_node, updated_node):
        if not self._preludes:
            return updated_node
        return updated_node.with_changes(body=self._place(list(updated_node.body)))

    def _place(self, body: list) -> list:
        out = []
        for stmt in body:
            for loop, prelude in list(self._preludes):
                if _contains(stmt, loop):
                    self._preludes.remove((loop, prelude))
                    if stmt.leading_lines:  # the loop's comments and blank lines stay on top of the new block
                        prelude = [prelude[0].with_changes(leading_lines=stmt.leading_lines), *prelude[1:]]
                        stmt = stmt.with_changes(leading_lines=[])
                    out.extend(prelude)
            out.append(stmt)
        return out

    def _read_outside(self, region_names: _Names) -> set[str]:
        """Names the enclosing function (or module) reads outside the forward region, e.g. ``out`` printed after the
        loop: forward_fn must hand them back, or they would be unbound there."""
        scope_node = self._scope_nodes.get(id(self.scope))
        if scope_node is None:
            return set()
        outside = Counter(_names([scope_node]).reads)
        outside.subtract(Counter(region_names.reads))
        return {name for name, count in outside.items() if count > 0}

    # --- the rewrite itself
    def _rewrite(self, loop: cst.For, targets: list[str]):
        if not isinstance(loop.body, cst.IndentedBlock):
            raise _Unfit("the loop body is on one line")
        body = list(loop.body.body)
        back = next((i for i, s in enumerate(body) if (c := _expr_call(s)) is not None
                     and _method_call(c, "backward") is not None), None)
        if back is None:
            raise _Unfit(".backward() is nested in a block; keep it at the loop's top level")
        backward = _expr_call(body[back])
        if backward.args:
            raise _Unfit(".backward(...) with arguments (retain_graph, gradient) has no value_and_grad equivalent")
        diff_expr = backward.func.value  # what torch differentiates
        scaler = None
        if (inner := _method_call(diff_expr, "scale")) is not None and len(inner.args) == 1:
            scaler = _receiver_name(inner)
            loss_expr = inner.args[0].value
        else:
            loss_expr = diff_expr
        loss_name = dotted_name(loss_expr) if isinstance(loss_expr, cst.Name) else None
        if loss_name is None and isinstance(loss_expr, cst.BinaryOperation) and isinstance(loss_expr.left, cst.Name):
            loss_name = loss_expr.left.value  # (loss / accum_steps).backward()
        if loss_name is None:
            raise _Unfit(f"cannot tell the loss in {_code(diff_expr)}.backward()")

        # the forward region: assignments (and autocast blocks) directly before backward
        start = back
        autocast: list[cst.Call] = []
        region: list[cst.BaseStatement] = []
        while start > 0:
            stmt = body[start - 1]
            if isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for s in stmt.body):
                region.insert(0, stmt)
            elif isinstance(stmt, cst.With) and self._autocast_items(stmt) is not None:
                autocast.extend(self._autocast_items(stmt))
                inner_body = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
                region[:0] = inner_body
            else:
                break
            start -= 1
        if loss_name not in _names(region).writes:
            raise _Unfit(f"{loss_name} is not computed by the assignments right before .backward()")

        # optimizer names: zero_grad receivers, torch.optim assignments, scaler.step(opt)
        optimizers = set(self.optimizers)
        for call in _own_calls(loop):
            if (c := _method_call(call, "zero_grad")) is not None and _receiver_name(c):
                optimizers.add(_receiver_name(c))
            if (c := _method_call(call, "step")) is not None and _receiver_name(c) in self.scalers | {scaler} \
                    and c.args:
                optimizers.add(dotted_name(c.args[0].value) or "")
        rest = body[back + 1:]
        accumulate = any(isinstance(s, cst.If) and self._has_step(s, optimizers) for s in rest)
        if not accumulate and not any(self._is_step(s, optimizers) for s in rest):
            raise _Unfit("no <optimizer>.step() after .backward() (at the loop's top level or in an if block)")
        opt = next((n for s in rest for n in self._step_names(s, optimizers)), None)
        if opt is None:
            raise _Unfit("cannot tell which optimizer steps")

        # forward_fn's parameters: loop-varying names it reads before assigning them
        before = _names(body[:start])
        varying = set(targets) | set(before.writes)
        region_names = _names(region)
        params: list[str] = []
        assigned: set[str] = set()
        for stmt in region:
            names = _names([stmt])
            for n in names.reads:
                if n in varying and n not in assigned and n not in params:
                    params.append(n)
            assigned.update(names.writes)
        later = set(_names(rest).reads) | self._read_outside(region_names)
        aux = [n for n in dict.fromkeys(region_names.writes) if n != loss_name and n in later]
        ms = self.ctx.alias_for("mindspore")
        grads = "accum_grads" if accumulate else "grads"
        differentiated = None if scaler is None and isinstance(loss_expr, cst.Name) else _code(diff_expr)
        if differentiated is not None:
            outputs = ["_", loss_name, *aux]
            returned = [differentiated, loss_name, *aux]
        else:
            outputs = [loss_name, *aux]
            returned = [loss_name, *aux]
        has_aux = len(returned) > 1
        fn_body = [*(s.with_changes(leading_lines=[]) if i == 0 else s for i, s in enumerate(region)),
                   _stmt(f"return {', '.join(returned)}\n")]
        forward_fn = cst.FunctionDef(
            name=cst.Name(self._fresh("forward_fn", loop)),
            params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
            body=cst.IndentedBlock(body=fn_body))
        fn_name = forward_fn.name.value
        grad_fn = self._fresh("grad_fn", loop)
        model = self._model_name(region, loss_name)
        prelude: list[cst.BaseStatement] = self._amp_prelude(autocast, model) if autocast else []
        prelude += [forward_fn, _stmt(
            f"{grad_fn} = {ms}.value_and_grad({fn_name}, None, {opt}.parameters{', has_aux=True' if has_aux else ''})\n")]
        if accumulate:
            prelude.append(_stmt("accum_grads = None\n"))
        scope_node = self._scope_nodes.get(id(self.scope))
        if model is not None and not (scope_node is not None and _sets_train_mode(scope_node)):
            prelude.append(_stmt(f"{model}.set_train(True)\n"))
        lhs = f"({', '.join(outputs)})" if has_aux else outputs[0]
        step: list[cst.BaseStatement] = [_stmt(f"{lhs}, grads = {grad_fn}({', '.join(params)})\n")]
        if scaler is not None:
            step.append(_stmt(f"grads = {scaler}.unscale(grads)\n"))
        if accumulate:
            step.append(_stmt("accum_grads = grads if accum_grads is None else "
                              "tuple(a + g for a, g in zip(accum_grads, grads))\n"))
        new_rest = self._rewrite_after(rest, optimizers, grads, scaler)
        first = step[0].with_changes(leading_lines=body[start].leading_lines if start < len(body) else [])
        head = [s for s in body[:start] if not self._is_zero_grad(s, optimizers)]
        new_body = [*head, first, *step[1:], *new_rest]
        return loop.with_changes(body=loop.body.with_changes(body=new_body)), prelude

    def _fresh(self, name: str, loop) -> str:
        """``forward_fn``/``grad_fn``, unless the user's code binds that name (each loop redefines its own)."""
        taken = set(getattr(self.scope, "names", ())) | set(getattr(self.ctx.module_scope, "names", ()))
        while name in taken:
            name += "_"
        return name

    def _autocast_items(self, stmt: cst.With):
        calls = []
        for item in stmt.items:
            call = item.item
            if not isinstance(call, cst.Call) or item.asname is not None:
                return None
            if not ((self.scope.resolve_torch(call.func) or "") in _AUTOCAST or dotted_name(call.func) in (
                    "torch.autocast", "autocast")):
                return None
            calls.append(call)
        return calls

    def _amp_prelude(self, calls: list[cst.Call], model: str | None) -> list[cst.BaseStatement]:
        if model is None:
            raise _Unfit("autocast around a forward pass whose network is not a plain name")
        ms = self.ctx.alias_for("mindspore")
        call = calls[0]
        kwargs = {a.keyword.value: _code(a.value) for a in call.args if a.keyword is not None}
        positional = [_code(a.value) for a in call.args if a.keyword is None]
        device = kwargs.get("device_type", positional[0] if positional else '"cuda"')
        dtype = kwargs.get("dtype", positional[1] if len(positional) > 1 else None)
        if dtype is None:
            dtype = f"{ms}.bfloat16" if "cpu" in device else f"{ms}.float16"
        dtype = dtype.replace("torch.", f"{ms}.")
        enabled = kwargs.get("enabled", positional[2] if len(positional) > 2 else "True")
        if enabled == "False":
            return []
        line = f"{model} = {ms}.amp.auto_mixed_precision({model}, amp_level=\"auto\", dtype={dtype})\n"
        if enabled == "True":
            return [_stmt(line)]
        return [_stmt(f"if {enabled}:\n    {line}")]

    def _model_name(self, region, loss_name: str) -> str | None:
        for stmt in region:
            for small in getattr(stmt, "body", ()):
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                    names = [n for t in small.targets for n in _target_names(t.target)]
                    if loss_name not in names and isinstance(small.value.func, (cst.Name, cst.Attribute)):
                        return dotted_name(small.value.func)
        return None

    def _is_step(self, stmt, optimizers) -> bool:
        return bool(self._step_names(stmt, optimizers)) and not isinstance(stmt, cst.If)

    def _has_step(self, stmt, optimizers) -> bool:
        return any(self._step_names(s, optimizers) for s in stmt.body.body) if isinstance(
            stmt.body, cst.IndentedBlock) else False

    def _step_names(self, stmt, optimizers) -> list[str]:
        if isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock):
            return [n for s in stmt.body.body for n in self._step_names(s, optimizers)]
        call = _expr_call(stmt)
        if call is None or (c := _method_call(call, "step")) is None:
            return []
        name = _receiver_name(c)
        if name in optimizers and not c.args:
            return [name]
        if c.args and (name in self.scalers) and dotted_name(c.args[0].value) in optimizers:
            return [dotted_name(c.args[0].value)]
        return []

    def _is_zero_grad(self, stmt, optimizers) -> bool:
        call = _expr_call(stmt)
        return call is not None and _method_call(call, "zero_grad") is not None

    def _rewrite_after(self, stmts, optimizers, grads: str, scaler: str | None) -> list:
        ms = self.ctx.alias_for("mindspore")
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.If) and self._has_step(stmt, optimizers):
                inner = self._rewrite_after(list(stmt.body.body), optimizers, grads, scaler)
                inner = [s for s in inner if not (isinstance(s, cst.SimpleStatementLine) and _code(s).strip() ==
                                                  "accum_grads = None")] + [_stmt("accum_grads = None\n")]
                out.append(stmt.with_changes(body=stmt.body.with_changes(body=inner)))
                continue
            clipped = self._assigned_clip(stmt)
            if clipped is not None:  # total = clip_grad_norm_(...): the norm before clipping, then the clip
                target, call = clipped
                ops = self.ctx.alias_for("mindspore.ops")
                out.append(_stmt(f"{target} = {ops}.sqrt(sum((g * g).sum() for g in {grads}))\n").with_changes(
                    leading_lines=stmt.leading_lines))
                out.append(self._clip(call, "norm", grads))
                continue
            call = _expr_call(stmt)
            if call is None:
                out.append(stmt)
                continue
            keep = dict(leading_lines=stmt.leading_lines)
            qual = self.scope.resolve_torch(call.func) or ""
            name = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
            receiver = _receiver_name(call) if isinstance(call.func, cst.Attribute) else None
            if qual in _CLIP:
                out.append(self._clip(call, _CLIP[qual], grads).with_changes(**keep))
            elif name == "zero_grad":
                if grads == "accum_grads":
                    out.append(_stmt("accum_grads = None\n").with_changes(**keep))
            elif name == "unscale_" and receiver == scaler:
                continue  # grads are unscaled right after grad_fn
            elif name == "step" and receiver in optimizers and not call.args:
                out.append(stmt.with_changes(body=[cst.Expr(parse_expression(f"{receiver}({grads})"))]))
            elif name == "step" and receiver == scaler and call.args:
                opt = _code(call.args[0].value)
                out.append(_stmt(f"if {ms}.amp.all_finite({grads}):\n    {opt}({grads})\n").with_changes(**keep))
            elif name == "update" and receiver == scaler and not call.args:
                out.append(_stmt(f"{scaler}.adjust({ms}.amp.all_finite({grads}))\n").with_changes(**keep))
            else:
                out.append(stmt)
        return out

    def _assigned_clip(self, stmt) -> tuple[str, cst.Call] | None:
        """``name = clip_grad_norm_(...)`` -> (name, call); clip_grad_value_ returns None in torch: not rewritten."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            return None
        assign = stmt.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name) and isinstance(assign.value, cst.Call)):
            return None
        if _CLIP.get(self.scope.resolve_torch(assign.value.func) or "") != "norm":
            return None
        return assign.targets[0].target.value, assign.value

    def _clip(self, call: cst.Call, kind: str, grads: str) -> cst.BaseStatement:
        entry = self.ctx.registry.lookup("torch.nn.utils.clip_grad_norm_" if kind == "norm"
                                         else "torch.nn.utils.clip_grad_value_")
        try:
            bound = bind_arguments(entry, list(call.args))
        except CallBindError as exc:
            raise _Unfit(f"clip_grad_*_ arguments: {exc}") from None
        ops = self.ctx.alias_for("mindspore.ops")
        if kind == "norm":
            if bound["norm_type"].given and bound["norm_type"].source not in ("2", "2.0"):
                raise _Unfit("clip_grad_norm_ with norm_type other than 2 (ops.clip_by_global_norm is L2)")
            return _stmt(f"{grads} = {ops}.clip_by_global_norm({grads}, {bound['max_norm'].source})\n")
        value = bound["clip_value"].source
        return _stmt(f"{grads} = {ops}.clip_by_value({grads}, -({value}), {value})\n")


def _handle_subtree(ctx, node: cst.CSTNode) -> None:
    ctx.handled.add(id(node))
    for child in node.children:
        _handle_subtree(ctx, child)


def _sets_train_mode(node: cst.CSTNode) -> bool:
    text = _code(node) if not isinstance(node, cst.Module) else node.code
    return ".train(" in text or "set_train(" in text


def _contains(tree: cst.CSTNode, target: cst.CSTNode) -> bool:
    if tree is target:
        return True
    return any(_contains(child, target) for child in tree.children)


class DataPipelineTransform(Rule):
    """``TensorDataset``/``DataLoader``/``Dataset`` base classes -> ``mindspore.dataset`` (GeneratorDataset + batch)."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.columns: dict[str, int] = {}  # dataset variable or class name -> number of columns it yields

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [b for b in node.bases if (self.scope.resolve_torch(b.value) or "") in _DATASET_BASES]
        if not bases:
            return
        for base in bases:
            self.ctx.handled.add(id(base.value))
        count = _getitem_columns(node)
        if count:
            self.columns[node.name.value] = count

    def leave_ClassDef(self, original_node, updated_node):
        keep = [b for o, b in zip(original_node.bases, updated_node.bases)
                if (self.scope.resolve_torch(o.value) or "") not in _DATASET_BASES]
        if len(keep) == len(updated_node.bases):
            return updated_node
        self.ctx.converted_sites += 1
        updated_node = _index_as_int(updated_node)
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(bases=keep)
        return updated_node.with_changes(bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)

    def visit_Assign(self, node: cst.Assign) -> None:
        count = self._count(node.value)
        if count:
            for target in node.targets:
                for name in _target_names(target.target):
                    self.columns[name] = count

    def _count(self, expr) -> int:
        if isinstance(expr, cst.Call):
            qual = self.scope.resolve_torch(expr.func) or ""
            if qual == "torch.utils.data.TensorDataset":
                return len(expr.args) if all(a.star == "" for a in expr.args) else 0
            return self.columns.get(dotted_name(expr.func) or "", 0)
        if isinstance(expr, cst.Name):
            return self.columns.get(expr.value, 0)
        return 0

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve_torch(original_node.func)
        if qual == "torch.utils.data.TensorDataset":
            if any(a.star or a.keyword for a in updated_node.args):
                return updated_node
            ms = self.ctx.alias_for("mindspore")
            tensors = ", ".join(_code(a.value) for a in updated_node.args) + ("," if len(updated_node.args) == 1 else "")
            self.ctx.converted_sites += 1
            return parse_expression(f"list(zip(*({ms}.Tensor(t).asnumpy() for t in ({tensors}))))")
        if qual == "torch.utils.data.DataLoader":
            self.ctx.handled.add(id(original_node))
            return self._loader(original_node, updated_node)
        return updated_node

    def _loader(self, original_node, updated_node):
        entry = self.ctx.registry.lookup("torch.utils.data.DataLoader")
        try:
            bound = bind_arguments(entry, list(updated_node.args))
            map_arguments(entry, dict(bound))  # raises Unsupported for arguments with no equivalent
        except (CallBindError, Unsupported) as exc:
            self.flag(original_node, "MP102", f"torch.utils.data.DataLoader: {exc}", "build the dataset by hand",
                      "torch.utils.data.DataLoader")
            return updated_node
        dataset = bound["dataset"]
        count = self._count(original_node.args[0].value if original_node.args and original_node.args[0].keyword
                            is None else dataset.node)
        if not count:
            count = 2
            self.ctx.diagnose(original_node, "MP105", "DataLoader: the dataset's columns are unknown; assumed 2 "
                              "(data, label)", "set column_names to what __getitem__ returns", severity="warning")
        names = ["data", "label"] if count == 2 else [f"column_{i}" for i in range(count)]
        ds = self.ctx.alias_for("mindspore.dataset")
        args = [dataset.source, f"column_names={names!r}"]
        if bound["sampler"].given and bound["sampler"].source != "None":
            args.append(f"sampler={bound['sampler'].source}")
        else:
            shuffle = bound["shuffle"].source if bound["shuffle"].given else "False"
            args.append(f"shuffle={'False' if shuffle == 'None' else shuffle}")
        if bound["num_workers"].given and bound["num_workers"].source not in ("0", "None"):
            args.append(f"num_parallel_workers=max(1, {bound['num_workers'].source})")
        text = f"{ds}.GeneratorDataset({', '.join(args)})"
        batch = bound["batch_size"].source
        if batch != "None":
            drop = bound["drop_last"]
            text += f".batch({batch}" + (f", drop_remainder={drop.source})" if drop.given else ")")
        self.ctx.converted_sites += 1
        return parse_expression(text)


def _getitem_columns(cls: cst.ClassDef) -> int:
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in ("__getitem__", "__iter__"):
            for ret in _returns(stmt):
                if isinstance(ret, cst.Tuple):
                    return len(ret.elements)
                return 1
    return 0


def _returns(fn: cst.FunctionDef) -> list:
    found = []

    class _Walk(cst.CSTVisitor):
        def visit_Return(self, node) -> None:
            if node.value is not None:
                found.append(node.value)

        def visit_Yield(self, node) -> None:
            if node.value is not None:
                found.append(node.value)

    walk(fn, _Walk())
    return found


def _index_as_int(cls: cst.ClassDef) -> cst.ClassDef:
    """A Dataset's ``__getitem__(self, i)`` gets ``i = i.item() if hasattr(i, "item") else i`` first:
    GeneratorDataset passes numpy integers, which MindSpore tensors refuse as indices (``self.x[i]``)."""
    body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
    for n, stmt in enumerate(body):
        if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__getitem__"
                and len(stmt.params.params) == 2 and isinstance(stmt.body, cst.IndentedBlock)):
            continue
        index = stmt.params.params[1].name.value
        line = parse_statement(f"{index} = {index}.item() if hasattr({index}, \"item\") else {index}\n")
        statements = list(stmt.body.body)
        if statements and _code(statements[0]).strip() == _code(line).strip():
            return cls  # converted before (idempotence)
        at = 1 if statements and _is_docstring(statements[0]) else 0
        statements.insert(at, line)
        body[n] = stmt.with_changes(body=stmt.body.with_changes(body=statements))
        return cls.with_changes(body=cls.body.with_changes(body=body))
    return cls


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
