"""``torch.optim`` optimizers whose MindSpore counterpart updates differently.

``mindspore.experimental.optim.Adam`` runs the ``ops.Adam`` primitive: it applies the bias corrections to the
learning rate and adds ``eps`` to the uncorrected ``sqrt(v)``, so its ``eps`` is ``eps / sqrt(1 - beta2**t)`` in
torch's terms (31x torch's at the first step with the default betas), and it ignores ``amsgrad``. Fed the same
gradients, its parameters leave torch's after one step wherever a gradient is small next to that ``eps`` (1e-7 ..
1e-5: a batch-normalised network has many); ``mindspore.experimental.optim.AdamW`` follows torch's formulas.

A MindSpore optimizer is a Cell that holds the Parameters it updates, and a Cell refuses two Parameters of one name
(``name 'weight' already exists``). A Parameter is named by its path in the Cell that built it, so the parameters of
two models trained by one optimizer (``list(G.parameters()) + list(D.parameters())``, ``itertools.chain``, param
groups from two models) collide where torch, which never names a tensor, takes them all: ``distinct_names`` names
them apart first.
"""
from __future__ import annotations

import math

import numpy as np
import mindspore as ms
from mindspore import Parameter, ParameterTuple, Tensor, ops
from mindspore.experimental.optim import AdamW as _AdamW
from mindspore.experimental.optim import Optimizer as _Optimizer
from mindspore.experimental.optim import SGD as _SGD
from mindspore.experimental.optim.lr_scheduler import LRScheduler as _LRScheduler
from mindspore.experimental.optim.lr_scheduler import MultiStepLR as _MultiStepLR
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs

__all__ = ["Adam", "OneCycleLR", "Optimizer", "SGD", "leaf_parameter", "live_gradients", "set_grads", "distinct_names", "load_state_dict", "set_group", "state_dict", "update_group"]


class Adam(_AdamW):
    """``torch.optim.Adam``: torch's update (``eps`` after the bias-corrected ``sqrt(v_hat)``, ``amsgrad``,
    ``maximize``) with its L2 ``weight_decay`` added to the gradient, as torch does, not decoupled as AdamW's.

    MindSpore's AdamW is torch's Adam formula; this keeps its state and parameter handling, with a decay of 0 on
    the gradient that already carries torch's L2 term, and steps each parameter with torch's rounding
    (:meth:`implementation`)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=float(weight_decay), amsgrad=amsgrad,
                         maximize=maximize)

    def construct(self, gradients):
        self.assignadd(self.state_step, self.increase_tensor)
        for group_id, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            start_id = self.group_start_id[group_id]
            end_id = self.group_start_id[group_id + 1]
            lr = self.lrs[group_id]
            if isinstance(group.get("lr"), float):
                lr = self.op_cast(group.get("lr"), ms.float32)
            grads = tuple(grad if not group.get("maximize") else ops.neg(grad)
                          for grad in gradients[start_id:end_id])
            decay = group.get("weight_decay")
            if decay != 0.0:
                grads = tuple(grad + decay * param for grad, param in zip(grads, self.parameters[start_id:end_id]))
            self.implementation(lr, Tensor(beta1, ms.float64), Tensor(beta2, ms.float64), group.get("amsgrad"),
                                group.get("eps"), grads, start_id, end_id)
        return True

    @ms.jit
    def implementation(self, lr, beta1_64, beta2_64, amsgrad, eps, grads, start_id, end_id):
        """One Adam step over the group's parameters, with torch's arithmetic where MindSpore's AdamW rounds more:
        torch takes ``1 - beta`` and the bias corrections ``1 - beta ** step`` in Python floats (float64); MindSpore's
        AdamW computes them in float32, where 0.999 is 0.99900001287, so ``1 - beta2`` and ``1 - beta2 ** step`` are
        1.3e-5 off: every second moment and every update 1e-5 off torch's, 100x float32's own rounding, which a
        chaotic run carries far (a clipped TCN on the adding problem: 1.2e-1 after 50 steps where torch's
        float32-vs-float64 control is 3e-3). Here they are float64, then float32 as torch's kernels take them."""
        step = ops.cast(self.state_step, ms.float64)
        step_size = ops.cast(ops.cast(lr, ms.float64) / (1 - ops.pow(beta1_64, step)), ms.float32)
        bias_correction2_sqrt = ops.cast(ops.sqrt(1 - ops.pow(beta2_64, step)), ms.float32)
        self.hyper_map(ops.partial(_adam_update, step_size, amsgrad, eps, bias_correction2_sqrt,
                                   ops.cast(1 - beta1_64, ms.float32), ops.cast(beta2_64, ms.float32),
                                   ops.cast(1 - beta2_64, ms.float32)),
                       self.parameters[start_id:end_id], grads, self.exp_avg[start_id:end_id],
                       self.exp_avg_sq[start_id:end_id], self.max_exp_avg_sq[start_id:end_id])
        return True


_adam_update = ops.MultitypeFuncGraph("mindport_adam_update")


@_adam_update.register("Tensor", "Bool", "Float", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor",
                       "Tensor", "Tensor")
def _adam_parameter_update(step_size, amsgrad, eps, bias_correction2_sqrt, one_minus_beta1, beta2, one_minus_beta2,
                           param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq):
    """torch's Adam update of one parameter (its gradient already holds the L2 term): the moments, then
    ``param -= step_size * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)`` (the running maximum of v with amsgrad)."""
    ops.assign(exp_avg, exp_avg + ops.cast(one_minus_beta1, grad.dtype) * (grad - exp_avg))  # torch's lerp_
    ops.assign(exp_avg_sq,
               exp_avg_sq * ops.cast(beta2, grad.dtype) + grad * grad * ops.cast(one_minus_beta2, grad.dtype))
    second = exp_avg_sq
    if amsgrad:
        ops.assign(max_exp_avg_sq, ops.maximum(max_exp_avg_sq, exp_avg_sq))
        second = max_exp_avg_sq
    denom = ops.sqrt(second) / bias_correction2_sqrt + eps
    ops.assign(param, param - exp_avg / denom * step_size)
    return True


class SGD(_SGD):
    """``torch.optim.SGD``: MindSpore's own update (the ``ops.SGD`` primitive) for float16/float32 parameters;
    an optimizer holding a float64 one (a float64 leaf tensor trained directly: artintellica's lbfgs_closure, whose
    SGD phase raised "the element of 'parameters' must be one of Tensor[Float16], Tensor[Float32]") takes torch's
    update in each parameter's own precision: weight decay, momentum buffer (the gradient itself at the first
    step), dampening, nesterov, maximize."""

    def construct(self, gradients):
        if all(p.dtype in (ms.float16, ms.float32) for p in self.parameters):
            return super().construct(gradients)
        for group_id, group in enumerate(self.param_groups):
            lr = group.get("lr") if isinstance(group.get("lr"), float) else _plain(self.lrs[group_id])
            momentum, dampening = group.get("momentum"), group.get("dampening")
            decay, nesterov = group.get("weight_decay"), group.get("nesterov")
            for i in range(self.group_start_id[group_id], self.group_start_id[group_id + 1]):
                param = self.parameters[i]
                # hyper-parameters as tensors of the parameter's precision: a Python float times a float64 tensor
                # is computed from the float's float32 value in MindSpore (0.1 * 2.2 -> 0.22000000327)
                grad, value = gradients[i].astype(param.dtype), (lambda v, dtype=param.dtype: Tensor(v, dtype))
                if group.get("maximize"):
                    grad = -grad
                if decay != 0.0:
                    grad = grad + value(decay) * param
                if momentum != 0.0:
                    first = bool(self.stat[i].reshape(-1)[0] > 0) if self.stat[i].size else True
                    buf = grad if first else value(momentum) * self.accum[i] + value(1.0 - dampening) * grad
                    ops.assign(self.accum[i], buf)
                    ops.assign(self.stat[i], ops.zeros_like(self.stat[i]))
                    grad = grad + value(momentum) * buf if nesterov else buf
                # the rate as written (0.1, not the float32 Parameter's 0.10000000149)
                ops.assign(param, param - value(lr) * grad)
        return True


class Optimizer(_Optimizer):
    """``torch.optim.Optimizer`` as the base of a hand-written optimizer (CustomOptimizerTransform): MindSpore's
    experimental Optimizer, whose groups keep torch's keys. MindSpore's builds a learning-rate Parameter from every
    group's "lr" and adds "lr" and "weight_decay" to each; torch's takes any defaults. A group with no "lr" (a custom
    AdamW naming its rate "alpha": zspalotai-spec/cs336g-a1-basics refused with "the argument 'learning_rate' must be
    int, float or Tensor") gets a placeholder rate for MindSpore's bookkeeping, and neither key is left in the group
    where torch's has none."""

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict) or "lr" in param_group or "lr" in self.defaults:
            return super().add_param_group(param_group)
        added = [key for key in ("lr", "weight_decay") if key not in param_group and key not in self.defaults]
        super().add_param_group({**param_group, "lr": 0.0})
        for key in added:
            self.param_groups[-1].pop(key, None)
        return None


def set_grads(optimizer, gradients) -> None:
    """The gradients a hand-written optimizer's ``construct`` is handed, put on its parameters' ``.grad`` (one per
    parameter, aligned with ``optimizer.parameters``): the converted step of a subclass reads and writes ``p.grad``
    as torch's does (CustomOptimizerTransform)."""
    for param, grad in zip(optimizer.parameters, gradients):
        param.grad = grad


def live_gradients(optimizer) -> tuple:
    """What the parameters' ``.grad`` holds now, one per parameter (zeros where None): ``super().step(closure)``
    of a subclass's converted step hands the base's ``construct`` the gradients its body clipped or scaled."""
    return tuple(ops.zeros_like(p) if getattr(p, "grad", None) is None else p.grad for p in optimizer.parameters)


def distinct_names(params):
    """torch's ``params`` for a MindSpore optimizer: Parameters or param groups (dicts with ``params``) from any
    iterable (a generator, ``itertools.chain``: read once, as torch reads it), each Parameter named apart from every
    other. The first Parameter of a name keeps it; a later, different Parameter of that name becomes ``k.name`` (the
    smallest ``k`` from 1 no Parameter here has), as if the models were the members of a CellList. Renamed Parameters
    keep the new name (MindSpore's own rule: a Parameter's name is unique among those a Cell holds); ``state_dict()``
    and ``named_parameters()`` name parameters by their place in the model, which does not change.
    A plain tensor among them (``torch.randn(6, 3)``, not a Parameter: torch takes any leaf tensor, one without
    ``requires_grad`` has no grad and is never updated) becomes a Parameter that does not require a grad, as a
    MindSpore optimizer holds only Parameters: the learning-rate schedulers and the param groups work on it as in
    torch, and no step changes it."""
    if isinstance(params, Parameter) or not hasattr(params, "__iter__"):
        return params  # torch's and MindSpore's own error for a lone tensor or a non-iterable
    params = list(params)
    groups = [dict(group) for group in params] if params and isinstance(params[0], dict) else None
    members = []
    for group in groups or ():
        if not isinstance(group.get("params"), Parameter) and hasattr(group.get("params"), "__iter__"):
            group["params"] = [_held(p) for p in group["params"]]
        elif isinstance(group.get("params"), Tensor) and not isinstance(group.get("params"), Parameter):
            group["params"] = _held(group["params"])
        members += group["params"] if isinstance(group.get("params"), list) else [group.get("params")]
    if groups is None:
        params = members = [_held(p) for p in params]
    distinct = list({id(p): p for p in members if isinstance(p, Parameter)}.values())
    taken = {p.name for p in distinct}
    kept: set = set()
    for param in distinct:
        if param.name in kept:
            k = 1
            while f"{k}.{param.name}" in taken:
                k += 1
            param.name = f"{k}.{param.name}"
            taken.add(param.name)
        kept.add(param.name)
    return groups if groups is not None else params


def leaf_parameter(owner, name: str, value) -> Parameter:
    """``owner.<name>``, a tensor torch makes a leaf (``self.log_alpha = torch.tensor(..)``, ``.requires_grad =
    True``) that an optimizer updates: a Parameter (the only thing a MindSpore optimizer updates), held by the attribute
    itself so that the loss reads what the optimizer writes, and returned. torch registers no parameter for it: it is
    in no ``parameters()`` and no ``state_dict``, so a Cell owner holds it as a plain attribute (not registered: an
    optimizer over the whole model built later, ``Adam(model.parameters())``, leaves it to its own optimizer as torch
    does; a checkpoint and the weight map leave it out)."""
    param = value if isinstance(value, Parameter) else Parameter(value, name=name, requires_grad=True)
    if isinstance(owner, ms.nn.Cell):
        object.__setattr__(owner, name, param)  # Cell.__setattr__ would register it among the Cell's parameters
    else:
        setattr(owner, name, param)
    return param


def _held(value):
    """A plain tensor an optimizer is given (see distinct_names): a Parameter of its values that needs no grad."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value, requires_grad=False)
    return value


class MultiStepLR(_MultiStepLR):
    """``torch.optim.lr_scheduler.MultiStepLR``: MindSpore's, with torch's rate for ``step(epoch)``. Given an epoch,
    a scheduler computes its closed form; MindSpore 2.10's MultiStepLR inherits StepLR's (``self.step_size``, which it
    has not: AttributeError at ``scheduler.step(epoch)``, the form of scripts written for torch < 1.4,
    uoguelph-mlrg/Cutout). torch's: ``base_lr * gamma ** bisect_right(milestones, epoch)`` (a milestone listed twice
    counts twice)."""

    def _get_closed_form_lr(self):
        from bisect import bisect_right

        passed = bisect_right(sorted(self.milestones.elements()), int(self.last_epoch.value()))
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class OneCycleLR(_LRScheduler):
    """``torch.optim.lr_scheduler.OneCycleLR`` (MindSpore 2.10 has none): the 1cycle policy, stepped once per batch.
    The learning rate rises from ``max_lr / div_factor`` to ``max_lr`` over ``pct_start`` of ``total_steps`` (or
    ``epochs * steps_per_epoch``), then anneals (cosine or linear) to ``initial_lr / final_div_factor``; with
    ``three_phase`` it comes back to the initial rate before the final annealing. With ``cycle_momentum`` (torch's
    default) the momentum moves the other way, between ``max_momentum`` and ``base_momentum``: SGD's ``momentum``, or
    the first of Adam's ``betas``, written into each param group as torch writes it (an SGD built without momentum
    trains with momentum under this scheduler, in torch too)."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.total_steps = total_steps
        self._anneal = self._cos if anneal_strategy == "cos" else self._linear
        if three_phase:
            self._phases = [
                (float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [
                (float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        groups = optimizer.param_groups
        max_lrs = _per_group("max_lr", groups, max_lr)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in groups[0] and "betas" not in groups[0]:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in groups[0]
            for m_max, m_base, group in zip(_per_group("max_momentum", groups, max_momentum),
                                            _per_group("base_momentum", groups, base_momentum), groups):
                if last_epoch == -1:
                    self._set_momentum(group, m_max)
                group["max_momentum"] = m_max
                group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear(start, end, pct):
        return (end - start) * pct + start

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = value

    def get_lr(self):
        step = int(round(float(self.last_epoch.value())))
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[lr_from], group[lr_to], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[m_from], group[m_to], pct)
                    break
                start = end
            lrs.append(ms.Tensor(lr, ms.float32))
            if self.cycle_momentum:
                self._set_momentum(group, momentum)
        return lrs


def _per_group(name, groups, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


def state_dict(optimizer) -> dict:
    """``optimizer.state_dict()`` in torch's shape, ``{'state': {i: {...}}, 'param_groups': [{..., 'params': [i]}]}``,
    for a ``mindspore.experimental.optim`` optimizer, whose own ``state_dict()`` is its Cell's parameter table (the
    trained Parameters and the moments by name): scripts read ``state_dict()['param_groups'][0]['lr']`` and save it
    with the model to resume. Hyper-parameters are Python values (the group's ``lr`` Parameter as a float);
    parameters are numbered over the groups in order, as torch numbers them; ``state[i]`` holds copies of the
    optimizer's per-parameter moments under MindSpore's names (SGD's ``accum``, Adam's ``exp_avg``/``exp_avg_sq``,
    RMSprop's ``mean_square`` ...) and its step counters (``state_step``), which ``load_state_dict`` writes back.
    A learning-rate scheduler gives torch's scheduler state (:func:`_scheduler_state`); any other receiver (a model)
    answers its own ``state_dict()``."""
    if _is_scheduler(optimizer):
        return _scheduler_state(optimizer)
    if not isinstance(optimizer, _Optimizer):
        return optimizer.state_dict()
    params = list(optimizer.parameters)
    index = {id(p): i for i, p in enumerate(params)}
    groups = []
    for group in optimizer.param_groups:
        saved = {key: _plain(value) for key, value in group.items() if key != "params"}
        saved["params"] = [index[id(p)] for p in group["params"]]
        groups.append(saved)
    moments, counters = _optimizer_state(optimizer, params)
    state = {}
    for i in range(len(params)):
        entry = {name: Tensor(tup[i].asnumpy()) for name, tup in moments.items()}
        entry.update({name: Tensor(p.asnumpy()) for name, p in counters.items()})
        state[i] = entry
    return {"state": state, "param_groups": groups}


def load_state_dict(optimizer, state_dict) -> None:
    """``optimizer.load_state_dict(sd)`` of what :func:`state_dict` gave (a copy, a checkpoint's): torch's checks on
    the groups, then each group's hyper-parameters (the ``lr`` Parameter assigned in place: the optimizer keeps
    reading it) and the moments and step counters, in place (``ops.assign``: a Parameter given new storage by
    ``set_data``/``assign_value`` is no longer the one the optimizer's compiled update writes). A learning-rate
    scheduler takes back what :func:`_scheduler_state` gave; any other receiver loads with its own method."""
    if _is_scheduler(optimizer):
        return _load_scheduler_state(optimizer, state_dict)
    if not isinstance(optimizer, _Optimizer):
        return optimizer.load_state_dict(state_dict)
    groups, saved_groups = optimizer.param_groups, state_dict["param_groups"]
    if len(groups) != len(saved_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
        raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
    for group, saved in zip(groups, saved_groups):
        for key, value in saved.items():
            if key == "params":
                continue
            current = group.get(key)
            if isinstance(current, Parameter):  # in place: set_data would detach it from the compiled update
                ops.assign(current, Tensor(value, current.dtype))
            else:
                group[key] = value
    params = list(optimizer.parameters)
    moments, counters = _optimizer_state(optimizer, params)
    for i, entry in state_dict["state"].items():
        for name, value in entry.items():
            target = moments[name][int(i)] if name in moments else counters.get(name)
            if target is not None:
                ops.assign(target, Tensor(value.asnumpy() if isinstance(value, Tensor) else value, target.dtype))
    return None


def get_last_lr(scheduler) -> list:
    """``scheduler.get_last_lr()``: torch's list of Python floats, one per parameter group. MindSpore's schedulers
    keep the rates as 0-d Tensors (a printed list read ``[Tensor(shape=[], dtype=Float32, value= 0.1)]``, and
    ``json.dump`` of it failed); any other receiver (a custom scheduler of the file) answers its own method. Each
    rate is the shortest decimal that reads back as its float32 value (``0.1``, where ``float()`` of the float32 gives
    0.10000000149011612): torch's own float for the rates schedules print (0.1, 0.05, 1e-3 ...)."""
    values = scheduler.get_last_lr()
    if not _is_scheduler(scheduler):
        return values
    return [float(str(np.float32(v.asnumpy()))) if isinstance(v, Tensor) else v for v in values]


def _is_scheduler(obj) -> bool:
    """A MindSpore learning-rate scheduler (mindspore.experimental.optim.lr_scheduler's, whose ReduceLROnPlateau is
    no LRScheduler, and mindport's OneCycleLR): none has torch's ``state_dict``/``load_state_dict``."""
    from mindspore.experimental.optim.lr_scheduler import ReduceLROnPlateau

    return isinstance(obj, (_LRScheduler, ReduceLROnPlateau))


def _scheduler_state(scheduler) -> dict:
    """``scheduler.state_dict()`` as torch gives it: the scheduler's attributes but its optimizer (torch:
    ``{k: v for k, v in self.__dict__.items() if k != 'optimizer'}``), with Python values where MindSpore keeps
    0-d Parameters (``last_epoch``, ReduceLROnPlateau's ``best``/``wait``/``cooldown_counter``, as torch's ints and
    floats) and numpy copies of other tensors; the operators MindSpore schedulers hold (Assign, Cast, Cos ...) and
    functions (a LambdaLR's lambdas, which torch saves as None) are left out. A checkpoint saves it with
    ``torch.save``; :func:`_load_scheduler_state` puts it back."""
    state = {}
    for key, value in vars(scheduler).items():
        if key == "optimizer" or callable(value) and not isinstance(value, (list, tuple)):
            continue
        if isinstance(value, (list, tuple)) and any(callable(v) for v in value):
            continue
        state[key] = type(value)(_plain_value(v) for v in value) if isinstance(value, (list, tuple)) \
            else _plain_value(value)
    return state


def set_group(group, key, value) -> None:
    """``group[key] = value`` on one of an optimizer's ``param_groups`` (``for g in opt.param_groups: g['lr'] = lr``,
    ``opt.param_groups[0]['lr'] *= 0.5``). A MindSpore optimizer's group holds its ``lr`` as a Parameter, which its
    learning-rate scheduler writes in place (``ops.assign(self._last_lr[i], lr)``); a value stored over it reached
    the optimizer, but every later ``scheduler.step()`` went to the old Parameter, lost (StepLR after a hand edit:
    torch's lr 0.0083, the port's 0.0319; OneCycleLR 0.12444 vs 0.16187). A value for a key the group holds as a
    Parameter is written into that Parameter; any other key or value is stored as torch stores it."""
    current = group.get(key) if isinstance(group, dict) else None
    if isinstance(current, Parameter) and not isinstance(value, Parameter):
        _assign_value(current, _plain_value(value))
        return
    group[key] = value


def update_group(group, *args, **kwargs) -> None:
    """``group.update(lr=v)`` / ``group.update({'lr': v})`` on one of an optimizer's ``param_groups``: each key stored
    as ``set_group`` stores it. A MindSpore optimizer reads its rate from the group's ``lr`` Parameter it holds
    (``self.lrs``); ``dict.update`` rebound the group's entry and the optimizer kept stepping at the first rate
    (locuslab/fast_adversarial's one-cycle by hand, ``opt.param_groups[0].update(lr=lr)`` per batch)."""
    for key, value in dict(*args, **kwargs).items():
        set_group(group, key, value)


def _plain_value(value):
    """A scheduler attribute's value as torch keeps it: a Python number for a 0-d or one-element tensor (MindSpore's
    ``last_epoch``, ``best``; a group's ``lr`` Parameter in ``_last_lr``), a numpy copy of a larger one."""
    if isinstance(value, Tensor):
        array = value.asnumpy()
        return array.reshape(-1)[0].item() if array.size == 1 else array.copy()
    return value


def _assign_value(current, value):
    """``value`` put where ``current`` was: a Parameter in place (what a compiled step or an optimizer's group reads
    keeps reading it), a tensor as a tensor of its dtype and shape, anything else as it is."""
    if isinstance(current, Parameter):
        ops.assign(current, Tensor(np.asarray(value).reshape(current.shape), current.dtype))
        return current
    if isinstance(current, Tensor):
        return Tensor(np.asarray(value).reshape(current.shape), current.dtype)
    return value


def _load_scheduler_state(scheduler, state_dict) -> None:
    """``scheduler.load_state_dict(sd)`` of :func:`_scheduler_state`'s dict: a 0-d Parameter the scheduler steps
    (``last_epoch`` ...) is assigned in place (its compiled step keeps reading that Parameter), a tensor replaced by
    one of its dtype, anything else set as torch sets it (``self.__dict__.update(state_dict)``)."""
    for key, value in state_dict.items():
        current = getattr(scheduler, key, None)
        if isinstance(current, (list, tuple)) and isinstance(value, (list, tuple)) and len(current) == len(value):
            # base_lrs, min_lrs, _last_lr (the new optimizer's lr Parameters, assigned in place, not the saved
            # run's): element by element
            setattr(scheduler, key, type(current)(_assign_value(c, v) for c, v in zip(current, value)))
        elif isinstance(current, Parameter):
            _assign_value(current, value)
        else:
            setattr(scheduler, key, _assign_value(current, value))
    return None


def _optimizer_state(optimizer, params):
    """The optimizer's per-parameter moments (its ParameterTuples as long as its parameters, other than them) and its
    other Parameters that are not trained ones nor a group's ``lr`` (step counters)."""
    moments = {name: value for name, value in vars(optimizer).items()
               if isinstance(value, ParameterTuple) and name != "parameters" and len(value) == len(params)}
    taken = {id(p) for p in params} | {id(p) for tup in moments.values() for p in tup} | \
        {id(g.get("lr")) for g in optimizer.param_groups}
    counters = {name: p for name, p in optimizer.parameters_and_names() if id(p) not in taken
                and isinstance(p, Parameter)}
    return moments, counters


def _plain(value):
    """A group's hyper-parameter as torch holds it: a Python number for a 0-d Parameter/Tensor (``lr``)."""
    if isinstance(value, Tensor) and value.size == 1:  # (a group's lr Parameter may be 0-d or (1,))
        if value.dtype == ms.float32:  # the shortest decimal of the float32 (0.1, as written, not 0.10000000149)
            return float(str(np.float32(value.asnumpy().reshape(-1)[0])))
        return value.asnumpy().reshape(-1)[0].item()
    if isinstance(value, list):
        return list(value)
    return value
