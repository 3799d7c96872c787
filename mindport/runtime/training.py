"""torch's training-step semantics where a converted script reads them: ``.grad`` on parameters and leaf tensors,
``backward`` adding into it, ``zero_grad``, ``optimizer.step()`` reading it, ``clip_grad_norm_``/``clip_grad_value_``
on it, and a CPU ``GradScaler``/``autocast`` that keep their API and run in full precision.

MindSpore computes gradients as values (``value_and_grad``); torch stores them on the tensors. The converter's
training rule turns the code that computes the loss into a function and differentiates it where torch builds the
graph (``value_and_grad`` here: the gradients come back paired with the tensors they belong to); where torch calls
``loss.backward()`` the rule writes ``backward(grads)``, which adds each gradient into its tensor's ``.grad`` as torch
does (a first backward sets it, later ones add: gradient accumulation, ``retain_graph``). Everything that reads
``.grad`` then reads what torch would: ``opt(grads_of(opt))`` for ``opt.step()``, manual updates
``w -= lr * w.grad``, ``w.grad.zero_()``, ``p.grad is None``. A parameter no backward reached has ``.grad`` None, as in
torch; ``grads_of`` hands the optimizer a zero for it (MindSpore's optimizers take one gradient per parameter).

PyNative only: these are the Python training loop's pieces, never a model's ``construct``.
"""
from __future__ import annotations

import contextlib
import inspect
import math
import types
import weakref

import mindspore as ms
from mindspore import Parameter, Tensor, ops

from mindport.runtime._graph import host_only as _host_only
from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime.framework import TorchDisabledScaler
from mindport.runtime.bool_grads import constant_comparisons
from mindport.runtime.synchronous import synchronous_on_cpu  # noqa: F401 - set at import (see there)


def _python_only(name):
    _host_only(f"{name} is part of the Python training loop: use it outside construct/@jit")


def _tensors(sources) -> list:
    """Parameters/tensors from optimizers (their ``parameters``), Cells (``trainable_params()``), tensors, dicts of
    param groups and iterables of those, once each, in order."""
    found: dict[int, Tensor] = {}

    def add(src):
        if isinstance(src, Tensor):
            found.setdefault(id(src), src)
        elif hasattr(src, "param_groups") and isinstance(getattr(src, "parameters", None), (list, tuple)):
            add(src.parameters)  # a mindspore.experimental.optim optimizer (a Cell), LBFGS
        elif isinstance(src, ms.nn.Cell):
            if "_params" in vars(src):  # a Cell subclass whose __init__ skips Cell's (torch's DummyOptimizer) has none
                add(src.trainable_params())
        elif isinstance(src, dict):
            add(src.get("params", ()))
        elif isinstance(src, (list, tuple)) or inspect.isgenerator(src) or type(src).__name__ == "dict_values":
            for item in src:
                add(item)
        # anything else (a loss function, a bound method, None) holds no parameters

    add(sources)
    for t in found.values():
        if not hasattr(t, "grad"):
            t.grad = None
    return list(found.values())


def parameters(*sources) -> list:
    """What a backward reaches: the Parameters of each optimizer or Cell (and Parameters given), once each (``.grad``
    set to None on those that have none yet); other values are skipped."""
    return [t for t in _tensors(sources) if isinstance(t, Parameter)]




def value_and_grad(fn, weights=(), leaves=0, losses=1, apart=False):
    """``fn(*leaf_tensors, *rest)`` returning the loss, or ``(loss, *aux)`` -> a function of the same arguments
    returning ``(fn's outputs, grads)``, grads being ``[(tensor, gradient), ...]`` for the first ``leaves`` arguments
    (tensors made with ``requires_grad=True``) and ``weights`` (Parameters). On the CPU it turns on synchronous
    execution (``synchronous_on_cpu``): the training loop it serves runs about three times faster.

    ``losses=k`` (k > 1): fn returns ``(loss_1, ..., loss_k, *aux)``, each loss backpropagated on its own in torch
    (``l_actor, l_critic = agent.compute_loss(...)``, then ``l_actor.backward()`` ... ``l_critic.backward()``): one
    forward, then grads is a tuple of k such lists. When nothing reads or clears a gradient between the backward calls
    (``apart`` False: both optimizers reset first, two backward calls, then the steps; or one optimizer, two backward
    calls, one step), torch's ``.grad`` ends as the gradient of the sum of the losses: one differentiation of the sum,
    its gradients in the first list, the others empty (exact, the forward runs once). ``apart`` (an optimizer steps or
    resets between them): each loss's own gradient, by ``ms.vjp`` with a one-hot cotangent per loss; MindSpore runs the
    forward again for each cotangent after the first, so the losses of every run are compared with the first's and a
    difference (a random draw, an environment stepped in the forward) is an error, not a silently different
    gradient."""
    synchronous_on_cpu()
    weights = tuple(w for w in weights if isinstance(w, Parameter))
    positions = tuple(range(leaves)) if leaves else None

    def run(*args):
        own = {id(a) for a in args[:leaves]}
        weights_here = tuple(w for w in weights if id(w) not in own)  # a leaf is differentiated once, by position
        for t in args[:leaves]:
            if not hasattr(t, "grad"):
                t.grad = None
        outputs = []

        if positions is None and not weights_here:  # torch: "element 0 of tensors does not require grad"
            raise RuntimeError(_UNREACHED.format(name=getattr(fn, "__name__", "forward_fn")))
        # the leaves enter as copies: MindSpore refuses in-place writes (w -= lr * w.grad) to a network's input
        inputs = [a.copy() for a in args[:leaves]] + list(args[leaves:])
        # only tensors enter as MindSpore's inputs; a Python value (a list the forward appends to across an episode
        # loop, REINFORCE's `returns`; a running sum that starts as 0) goes around them: PyNative finds the
        # gradient's top cell by its inputs, and a list changed in place during the forward is no longer found
        # ("Can not find top cell for backward", davenpi/rlrn)
        tensor_at = [i for i, a in enumerate(inputs) if isinstance(a, Tensor)]

        def loss_only(*given):  # the rest of fn's outputs go around the differentiation (has_aux refuses
            full = list(inputs)  # outputs with no tensor among them)
            for i, a in zip(tensor_at, given):
                full[i] = a
            _DIFFERENTIATING[0] += 1
            try:
                with _Replay(fn, full) as replay, constant_comparisons():  # a bool read twice: no Bool Add
                    out = fn(*_writable(replay.inputs, full, leaves))
            finally:
                _DIFFERENTIATING[0] -= 1
            outputs.append(out)
            if losses > 1 and apart:
                return tuple(out[:losses])
            if losses > 1:
                total = out[0]
                for value in out[1:losses]:
                    total = total + value
                return total
            return out[0] if isinstance(out, tuple) else out

        used = _mark_used(inputs[:leaves], args[:leaves])
        with _Replay(fn, inputs, check_only=True):  # a refusal raised inside the differentiation would leave
            pass  # MindSpore's PyNative executor mid-gradient: the next gradient in the process fails (LayerNormGrad)
        with _ReadParameters() as read:
            taken = _GRAPH_GRADS[0]
            try:
                if losses > 1 and apart:  # the forward runs again per loss: a model there that draws at random
                    _refuse_redraws(fn, inputs)  # or updates its running statistics in training mode is refused
                    loss, every = _split_grads(loss_only, [inputs[i] for i in tensor_at], leaves, weights_here,
                                               outputs)
                    grads = every[0]
                else:
                    loss, grads = ms.value_and_grad(loss_only, positions, weights_here or None)(
                        *(inputs[i] for i in tensor_at))
            except RuntimeError as exc:
                if _GRAPH_GRADS[0] == taken:  # no gradient of a gradient in this forward: not that
                    raise
                raise RuntimeError(_NO_SECOND_DERIVATIVE.format(detail=str(exc).strip().splitlines()[0])) from exc
        out = outputs[-1]
        # torch's loss is a node of autograd's graph: `loss.requires_grad` reads True (an LBFGS closure's
        # `if loss.requires_grad: loss.backward()`); MindSpore's returned value is a plain tensor, so it carries the
        # flag mindport.runtime.tensor.requires_grad reads (bzapf/pytorchdemo: the backward was skipped, no gradient)
        if losses > 1:
            if not apart:  # the sum's gradients, added at the first backward; the later ones add nothing
                every = [(grads if leaves else (), grads if not leaves else ())] if not (leaves and weights_here) \
                    else [grads]
                if leaves == 1:
                    every = [((every[0][0],), every[0][1])]
                every += [((), ())] * (losses - 1)
            loss = tuple(out[:losses])
            for value in loss:
                value.requires_grad = True
            out = (*loss, *out[losses:])
            every = [_pairs(args, leaves, weights_here if g[1] else (), g, read, own, used) for g in every]
            _record_step(fn, args, out, every[0])
            code = _checked_key(fn)
            if code not in _CHECKED:
                _CHECKED.add(code)
                raw = [g for gs in every for g in gs]
                if raw and not any(bool(ops.abs(g).max() > 0) for _, g in raw if g.size):
                    raise RuntimeError(_UNREACHED.format(name=getattr(fn, "__name__", "forward_fn")))
            return out, tuple(every)
        loss.requires_grad = True
        out = (loss, *out[1:]) if isinstance(out, tuple) else loss
        if leaves and weights_here:
            leaf_grads, weight_grads = grads
        elif leaves:
            leaf_grads, weight_grads = grads, ()
        else:
            leaf_grads, weight_grads = (), grads
        if leaves == 1:
            leaf_grads = (leaf_grads,)
        pairs = _Gradients((a, _hooked(a, g)) for a, g in zip(args[:leaves], leaf_grads))
        pairs += zip(weights_here, weight_grads)
        pairs.read = read.ids
        pairs.leaves = frozenset(own)
        pairs.used = frozenset(used)
        _record_step(fn, args, out, pairs)
        code = _checked_key(fn)
        if code not in _CHECKED:  # once per forward function: a loss no parameter reaches would train nothing
            _CHECKED.add(code)
            raw = (*leaf_grads, *weight_grads)  # before the leaves' hooks: a hook zeroing a gradient is the script's
            if raw and not any(bool(ops.abs(g).max() > 0) for g in raw if g.size):
                raise RuntimeError(_UNREACHED.format(name=getattr(fn, "__name__", "forward_fn")))
        return out, pairs

    return run


def _split_grads(loss_only, tensors, leaves, weights, outputs):
    """One forward of ``loss_only`` (returning k losses), then the gradient of each loss alone: ``ms.vjp`` with a
    one-hot cotangent per loss. Returns (the losses, k gradients in value_and_grad's layout: leaves, weights).
    MindSpore runs the forward again for each cotangent after the first: a run whose losses differ from the first's
    is refused (torch differentiated the one graph it built)."""
    values, vjp_fn = ms.vjp(loss_only, *tensors, weights=tuple(weights) or None)
    every = []
    for j in range(len(values)):
        cotangent = tuple(ops.ones_like(v) if k == j else ops.zeros_like(v) for k, v in enumerate(values))
        runs = len(outputs)
        got = vjp_fn(cotangent)
        if len(outputs) > runs and not all(_same(a, b) for a, b in zip(outputs[-1][:len(values)], values)):
            raise RuntimeError(
                "mindport: the losses backpropagated one after the other with an optimizer step between them come "
                "from one forward in torch; MindSpore ran that forward again for the next loss's gradient and it "
                "gave other values (a random draw, or state changed in it): the gradient would not be torch's. "
                "Backpropagate the losses' sum before the steps, or compute each loss in its own forward")
        input_grads, weight_grads = got if weights else (got, ())
        if not isinstance(input_grads, tuple):
            input_grads = (input_grads,)
        every.append((tuple(input_grads[:leaves]), tuple(weight_grads)))
    return values, every


def _pairs(args, leaves, weights, grads, read, own, used):
    leaf_grads, weight_grads = grads
    pairs = _Gradients((a, _hooked(a, g)) for a, g in zip(args[:leaves], leaf_grads))
    pairs += zip(weights, weight_grads)
    pairs.read = read.ids
    pairs.leaves = frozenset(own)
    pairs.used = frozenset(used)
    return pairs


def _writable(given, inputs, leaves):
    """The forward's arguments with each tensor passed after the leaves (not differentiated: one the region writes
    into and returns, ``nxt[idx] = ...`` on a tensor made before the step, which the converted call rebinds) as a copy
    made inside the differentiation: MindSpore refuses an in-place write into a network's input ("Can not modify
    tensor id of input tensor from network by assign value"), torch writes it. Values are the same; an argument the
    replay computed again is already no input and is passed as it is."""
    return [a.copy() if i >= leaves and a is b and isinstance(a, Tensor) and not isinstance(a, Parameter) else a
            for i, (a, b) in enumerate(zip(given, inputs))]


def _mark_used(copies, leaves) -> set:
    """The ids of the leaves the forward used, filled during the differentiation: a hook on each leaf's copy that
    records its call and keeps the gradient. MindSpore calls an input's hook only when a gradient flows to it from
    the loss, even an all-zero one (a dead ReLU's input, a weight that lr moved to 0); a leaf the forward did not use
    (a dynamic forward's skipped layer) gets no call. ``backward`` gives a used leaf its zero gradient, as torch does,
    and leaves an unused one's ``.grad`` None."""
    used: set[int] = set()
    for copy, leaf in zip(copies, leaves):
        copy.register_hook(lambda grad, key=id(leaf): used.add(key))
    return used


def _hooked(tensor, grad):
    """A leaf's gradient through the hooks registered on it (``w.register_hook(fn)``), in order, as torch runs a
    leaf's hooks on its whole gradient before it reaches ``.grad`` (and in ``torch.autograd.grad``): a hook's result
    replaces the gradient, None keeps it (a hook that only records). The region differentiates a copy of each leaf
    (see ``value_and_grad``), which does not carry the original's hooks, so MindSpore would not run them; a Parameter
    differentiated as a weight keeps MindSpore's own hook call (the same semantics, checked)."""
    hooks = getattr(tensor, "hooks", None)
    for hook in (hooks() if callable(hooks) else ()):
        result = hook(grad)
        if result is not None:
            grad = result
    return grad


class _Gradients(list):
    """``[(tensor, gradient), ...]`` from one differentiation, with ``read``: the ids of the Parameters its forward read
    from a Cell (``self.weight``; see ``_ReadParameters``), and ``leaves``: the ids of the tensors it differentiated by
    position (``requires_grad`` tensors passed to the forward, reached by construction)."""

    read: frozenset = frozenset()
    leaves: frozenset = frozenset()
    used: frozenset = frozenset()  # the leaves the forward used (``_mark_used``): reached, even with a zero gradient
    consumed: bool = False
    step = None  # the _Step recording its function's outputs, if any


class _ReadParameters:
    """While the forward runs: the ids of the Parameters read as Cell attributes (``self.fc.weight`` in a layer's
    construct), through ``Cell.__getattr__``, where a Cell keeps its Parameters, and the members of the
    ParameterTuples of every Cell called (MindSpore's RNN/GRU/LSTM keep their weights as ``w_ih_list``/``w_hh_list``
    ParameterTuples in the instance's ``__dict__``, which ``__getattr__`` never sees, and use every one of them in a
    call). A layer the forward did not call has none of its Parameters read; a layer it called has them all read,
    whatever their gradient (a dead ReLU's layer: all zero, and reached, as torch sees it; an LSTM over one step from
    a zero state: weight_hh's gradient is exactly zero, and torch's optimizer still steps it, weight decay included)."""

    def __enter__(self):
        self.ids: set[int] = set()
        self._original = original = ms.nn.Cell.__getattr__
        self._call = call = ms.nn.Cell.__call__
        ids = self.ids
        seen: set[int] = set()

        def reading(cell, name):
            value = original(cell, name)
            if _PAUSED:
                return value
            if isinstance(value, Parameter):
                ids.add(id(value))
            elif isinstance(value, ms.ParameterTuple):
                ids.update(id(p) for p in value)
            return value

        def calling(cell, *args, **kwargs):
            if id(cell) not in seen and not _PAUSED:
                seen.add(id(cell))
                for value in vars(cell).values():
                    if isinstance(value, ms.ParameterTuple):
                        ids.update(id(p) for p in value)
            return call(cell, *args, **kwargs)

        ms.nn.Cell.__getattr__ = reading
        ms.nn.Cell.__call__ = calling
        return self

    def __exit__(self, *exc):
        ms.nn.Cell.__getattr__ = self._original
        ms.nn.Cell.__call__ = self._call
        self.ids = frozenset(self.ids)
        return False


_TAPE: dict = {}  # id(value) -> (weak reference to it, fn, inputs): values recorded outside a differentiated function


def record(value, fn, *inputs):
    """``value``, computed outside the function a later ``backward`` differentiates, remembered with how to compute it
    again: ``fn(*inputs)``. torch's graph spans every forward call since the last backward, so a loss built from values
    collected over an episode (log-probabilities appended to a list while acting, stacked, handed to an update
    helper) reaches the parameters through them; MindSpore differentiates a function, and a value computed before it
    is a constant there. The converter writes ``holder.append(record(v, fn, *inputs))`` where such a value is
    collected (``fn``: the statements that computed it, from the model call on, over the values they read: the
    state, the sampled action), and ``record`` again where a collection is stacked or combined; ``value_and_grad``
    then computes every recorded value its function reads (through its arguments, its closure, the globals it names
    and their list attributes) again inside the differentiation (``_Replay``), from the parameters as they are at
    the backward, which are the ones torch's graph saw (torch refuses a backward through parameters changed in
    place since). An nn.Dropout in training mode applies again the masks it drew while the value was collected
    (``keep_dropout_masks``; the value computed again must equal the recorded one, else refused). Refused
    (``_refuse_redraws``: a RuntimeError saying why): a model ``fn`` reads with another random layer or a BatchNorm
    in training mode (a new random mask, running statistics updated a second time). The outputs of a differentiated
    function that takes arguments (state carried across steps, a running sum of losses) are recorded the same way
    until a ``backward`` consumes its gradients (``_record_step``)."""
    keep_dropout_masks()  # (the converter's call after the imports has set it up already: a no-op then)
    if _PAUSED:
        return value
    if isinstance(value, (tuple, list)) and not isinstance(value, Tensor):
        # a tuple of values saved per step (``SavedAction(log_prob, value)``, a namedtuple; ``(log_prob, reward,
        # value)``): each tensor in it is recorded as that item of ``fn``'s result. Before, the tuple was not
        # recorded at all: the loss built from it was a constant of the differentiation and every gradient zero,
        # silently (ghj0504520/RL-LIB's A2C and REINFORCE agents did not learn)
        drawn = dict(_DRAWN)
        for index, item in enumerate(value):
            # an item that is one of fn's inputs (the environment's reward handed to the recompute function) is
            # not computed by fn: recorded as fn's item it was its own input, and computing it again recursed
            # without end (gillesdami's actor-critic: RecursionError)
            if isinstance(item, Tensor) and not any(item is a for a in inputs):
                _DRAWN.clear()
                _DRAWN.update(drawn)
                record(item, _Item(fn, index), *inputs)
        _DRAWN.clear()
        return value
    if not isinstance(value, Tensor):
        return value
    key = id(value)
    try:
        ref = weakref.ref(value, lambda _ref, key=key: _TAPE.pop(key, None))
    except TypeError:  # no weak references to this kind of value: not recorded
        return value
    _TAPE[key] = (ref, fn, inputs, _Masks(_DRAWN))
    _DRAWN.clear()
    return value


def replayed(fn):
    """``fn`` for MindSpore's own ``ms.value_and_grad`` in a file that records values (``record``): each run computes
    the recorded values ``fn`` reads again inside the differentiation, as :func:`value_and_grad` does (refusals first,
    outside it). A natively converted loop (``grad_fn = ms.value_and_grad(forward_fn, None, opt.parameters)``)
    otherwise differentiated a loss built from values collected while acting as a constant: every gradient zero."""

    def run(*args):
        with _Replay(fn, args, check_only=True):
            pass
        _DIFFERENTIATING[0] += 1
        try:
            with _Replay(fn, list(args)) as replay:
                return fn(*replay.inputs)
        finally:
            _DIFFERENTIATING[0] -= 1

    run.__name__ = getattr(fn, "__name__", "forward_fn")
    return run


class _Item:
    """Item ``index`` of what ``fn`` returns (a recorded tuple's tensor, computed again with the whole tuple); reads as
    ``fn`` for the checks that look at the models it names (``__code__``, ``__globals__``, ``__name__``)."""

    def __init__(self, fn, index):
        self.fn, self.index = fn, index
        self.__code__ = getattr(fn, "__code__", None)
        self.__globals__ = getattr(fn, "__globals__", {})
        self.__name__ = getattr(fn, "__name__", "?")

    def __call__(self, *inputs):
        return self.fn(*inputs)[self.index]


_DRAWN: dict = {}  # id(Dropout cell) -> the masks it drew outside a differentiation since the last record
_MASK_LIMIT = 64  # per cell: a script that draws without recording does not pile masks up
_REPLAYING: list = []  # while a recorded value is computed again: its _Masks (the Dropout layers take theirs)
_DIFFERENTIATING = [0]  # inside value_and_grad's function: what Dropout draws there is that step's own


class _Masks(dict):
    """The masks each Dropout layer drew (outside a differentiation) between two ``record`` calls: the ones torch's
    graph holds for the value recorded next. While that value is computed again each layer takes its masks in the
    order it drew them; ``window`` instead gives each layer only its last ones (the calls right before the record,
    when the layer also ran for something else in between)."""

    def __init__(self, drawn=(), window=None):
        super().__init__({k: list(v) for k, v in dict(drawn).items()})
        if window:
            for k, n in window.items():
                self[k] = self[k][-n:]
        self.taken: dict = {}

    def take(self, cell):
        masks = self.get(id(cell))
        if not masks:
            return None
        self.taken[id(cell)] = self.taken.get(id(cell), 0) + 1
        return masks.pop(0)


def keep_dropout_masks() -> None:
    """MindSpore's nn.Dropout built in PyNative mode keeps the masks it draws outside a differentiation (``_DRAWN``,
    handed to the next recorded value: ``record``) and, while a recorded value is computed again, applies the mask it
    drew then instead of a new one: the value torch's graph holds, as torch's graph holds it (REINFORCE's
    log-probabilities of a policy with Dropout, collected while acting in training mode). Only for a script that
    records values: the converter writes ``mp_train.keep_dropout_masks()`` right after the imports of a file it
    writes ``record`` calls in (a layer built before the first ``record`` must keep its masks too), and ``record``
    calls it as well; importing this module changes nothing (other scripts keep MindSpore's own Dropout, and
    hold no masks). A layer built under GRAPH_MODE, or
    a subclass with a construct of its own, is left as it is (and a value recorded through it stays refused); one
    built in PyNative and compiled later (``ms.jit``, GRAPH_MODE) compiles MindSpore's own Dropout."""
    cls = ms.nn.Dropout
    if getattr(cls, "_mp_keeps_masks", False):
        return
    original_init, original_construct = cls.__init__, cls.construct

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if type(self).construct is original_construct and ms.get_context("mode") == ms.PYNATIVE_MODE:
            object.__setattr__(self, "construct", types.MethodType(_dropout_construct, self))

    cls.__init__ = __init__
    cls._mp_keeps_masks = True


def _dropout_construct(self, x):
    if _in_graph():  # a layer built in PyNative and compiled later (ms.jit, GRAPH_MODE): MindSpore's own Dropout
        if not self.training or self.keep_prob == 1 or self.p == 0:
            return x
        out, _ = self.dropout(x)
        return out
    return _dropout_keeping_masks(self, x)


def _dropout_keeping_masks(self, x):
    p = self.p if self.p is not None else 1.0 - self.keep_prob
    if not self.training or p == 0:
        return x
    if _REPLAYING:
        mask = _REPLAYING[-1].take(self)
        if mask is None:
            raise _NoMask(self)
        return x * mask * Tensor(1.0 / (1.0 - p), x.dtype)  # the Dropout kernel's own product, bit for bit
    out, mask = self.dropout(x)
    if not _DIFFERENTIATING[0] and not _PAUSED:
        kept = _DRAWN.setdefault(id(self), [])
        kept.append(mask)
        del kept[:-_MASK_LIMIT]
    return out


def _keeps_masks(cell) -> bool:
    return getattr(getattr(cell, "construct", None), "__func__", None) is _dropout_construct


class _NoMask(Exception):
    """A Dropout layer ran while a recorded value was computed again and no mask of it was kept for that value."""


class _Step:
    """One differentiation's function and what it read (its arguments, its closure's and its globals' values): its
    outputs are recorded (``_record_step``) until a ``backward`` consumes its gradients."""

    def __init__(self, fn, args, pairs):
        self.fn, self.args, self.pairs = fn, args, pairs
        self.cells = [(c, c.cell_contents) for c in getattr(fn, "__closure__", None) or () if _filled(c)]
        code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
        self.names = [(n, scope[n]) for n in (code.co_names if code is not None else ()) if n in scope
                      and not inspect.ismodule(scope[n]) and not inspect.isroutine(scope[n])
                      and not inspect.isclass(scope[n])]

    def release(self) -> None:
        """A backward consumed this step's gradients: what it held for computing it again goes."""
        self.args, self.cells, self.names = (), [], []

    def run(self, arguments):
        """The function again on these arguments, with the closure and globals it read then."""
        scope = self.fn.__globals__
        now = [(c, c.cell_contents) for c, _ in self.cells], [(n, scope.get(n)) for n, _ in self.names]
        try:
            for c, v in self.cells:
                c.cell_contents = v
            for n, v in self.names:
                scope[n] = v
            out = self.fn(*arguments)
        finally:
            for c, v in now[0]:
                c.cell_contents = v
            for n, v in now[1]:
                scope[n] = v
        return out if isinstance(out, tuple) else (out,)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _record_step(fn, args, out, pairs) -> None:
    """Each tensor a differentiated function returned (the loss, what comes back out) recorded with it: a later
    differentiation reading one before any ``backward`` consumed these gradients (a loss summed over steps,
    ``loss = loss + criterion(...)``, with one backward every k steps) computes it again inside itself, so its
    gradient reaches this step's parameters too, as torch's graph does until a backward frees it."""
    if not args:  # a function of nothing carried across steps: its outputs are not handed back in
        return
    step = None
    for k, value in enumerate(out if isinstance(out, tuple) else (out,)):
        if not isinstance(value, Tensor):
            continue
        step = step or _Step(fn, args, pairs)
        key = id(value)
        try:
            ref = weakref.ref(value, lambda _ref, key=key: _TAPE.pop(key, None))
        except TypeError:
            return
        _TAPE[key] = (ref, step, k)
    pairs.step = step


class _Replay:
    """While a differentiated function runs: each recorded value it reads (an argument, a closure variable, a global
    it names, or an element of a list held by one of those or by their attributes) replaced by the same value
    computed again by its recorded function (inside the differentiation, so the gradient reaches the parameters);
    lists are changed in place and put back afterwards."""

    def __init__(self, fn, inputs, check_only=False):
        self.fn, self.inputs, self._undo, self._memo = fn, inputs, [], {}
        self._check_only = check_only  # only refuse what cannot be computed again (_refuse_redraws): change nothing

    def __enter__(self):
        if not _TAPE:
            return self
        self.inputs = tuple(self._swap_value(a) for a in self.inputs)
        for cell in getattr(self.fn, "__closure__", None) or ():
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            new = self._swap_value(content)
            if new is not content:
                self._undo.append((cell, "cell_contents", content))
                cell.cell_contents = new
        code, scope = getattr(self.fn, "__code__", None), getattr(self.fn, "__globals__", {})
        for name in code.co_names if code is not None else ():
            if name in scope:
                content = scope[name]
                new = self._swap_value(content)
                if new is not content:
                    self._undo.append((scope, name, content))
                    scope[name] = new
        return self

    def __exit__(self, *exc):
        for holder, key, value in reversed(self._undo):
            if key == "cell_contents":
                holder.cell_contents = value
            else:
                holder[key] = value
        self._undo.clear()
        return False

    def _recorded(self, value) -> bool:
        entry = _TAPE.get(id(value)) if isinstance(value, Tensor) else None
        if entry is None or entry[0]() is not value:
            return False
        return not (isinstance(entry[1], _Step) and getattr(entry[1].pairs, "consumed", False))

    def _swap_value(self, value, depth=0):
        """A recorded tensor -> computed again; a list holding some -> them swapped in place; an object (a Cell, a
        plain object) -> its list attributes and recorded tensors looked at the same way (one level)."""
        if isinstance(value, Tensor):
            return self._again(value) if self._recorded(value) else value
        if isinstance(value, list):
            for i, item in enumerate(value):
                if self._recorded(item):
                    self._undo.append((value, i, item))
                    value[i] = self._again(item)
                elif isinstance(item, (tuple, list)) and self._holds_recorded(item):
                    # an entry (reward, log_prob) of an episode's list: a new entry with the values computed again
                    new = self._argument(item)
                    if any(a is not b for a, b in zip(new, item)):
                        self._undo.append((value, i, item))
                        value[i] = new
            return value
        if depth == 0 and not isinstance(value, (type, type(inspect))) and hasattr(value, "__dict__"):
            for item in list(vars(value).values()):
                if isinstance(item, list):
                    self._swap_value(item, depth + 1)
        return value

    def _again(self, value):
        if self._check_only:
            ref, fn, inputs, *masks = _TAPE[id(value)]
            if not isinstance(fn, _Step) and id(value) not in self._memo:
                self._memo[id(value)] = value
                for a in inputs:  # the recorded values it is computed from, checked first
                    self._argument(a)
                if _refuse_redraws(fn, inputs, masks[0] if masks else None):
                    # the Dropout masks are tried here, outside the differentiation: a refusal raised inside it
                    # would leave MindSpore's executor mid-gradient (the next gradient of the process fails)
                    _TAPE[id(value)] = (ref, fn, inputs, _masks_giving(value, fn, list(inputs), masks[0]))
            return value
        if id(value) not in self._memo:
            _, fn, inputs, *masks = _TAPE[id(value)]
            if isinstance(fn, _Step):  # a differentiated function's output: the function again, once
                if id(fn) not in self._memo:
                    self._memo[id(fn)] = fn.run([self._argument(a) for a in fn.args])
                self._memo[id(value)] = self._memo[id(fn)][inputs]
            else:
                _refuse_redraws(fn, inputs, masks[0] if masks else None)
                arguments = [self._argument(a) for a in inputs]
                self._memo[id(value)] = _with_masks(value, fn, arguments, masks[0] if masks else None)
        return self._memo[id(value)]

    def _argument(self, value):
        if isinstance(value, Tensor):
            return self._again(value) if self._recorded(value) else value
        if isinstance(value, (list, tuple)):
            items = [self._argument(a) for a in value]
            return value._make(items) if hasattr(value, "_make") else type(value)(items)  # a namedtuple by field
        return value

    def _holds_recorded(self, value, depth=0) -> bool:
        """A tuple or list holding a recorded value (in tuples or lists inside it, a few levels down)."""
        return any(self._recorded(a) or (depth < 3 and isinstance(a, (tuple, list)) and self._holds_recorded(a, depth + 1))
                   for a in value)


def _with_masks(value, fn, arguments, masks):
    """``fn(*arguments)`` (inside the differentiation) with each Dropout layer applying the masks it drew when
    ``value`` was computed (``masks``, the ones ``_masks_giving`` chose before the differentiation)."""
    if masks is None:
        return fn(*arguments)
    _REPLAYING.append(_Masks(masks))
    try:
        return fn(*arguments)
    finally:
        _REPLAYING.pop()


def _masks_giving(value, fn, arguments, masks):
    """The masks (``masks``, or each layer's last ones) with which ``fn(*arguments)``, run outside the
    differentiation, gives ``value`` again (the same masks, the same parameters); none: the masks kept are not the
    ones ``value`` was computed with and the gradient would not be torch's (refused, saying why)."""
    trials = [_Masks(masks)]
    while trials:
        replay = trials.pop()
        _REPLAYING.append(replay)
        try:
            again = fn(*arguments)
        except _NoMask:
            again = None
        finally:
            _REPLAYING.pop()
        if again is not None and _same(again, value):
            return _Masks(masks, window=replay.taken if getattr(replay, "windowed", False) else None)
        if replay.taken and not getattr(replay, "windowed", False) \
                and any(len(masks[k]) > n for k, n in replay.taken.items()):  # the layer ran for something else too
            trials.append(_Masks(masks, window=replay.taken))
            trials[-1].windowed = True
    raise RuntimeError(
        f"mindport: a value collected before the backward (recorded by {getattr(fn, '__name__', '?')}) is computed "
        "again inside the differentiated step with the Dropout masks drawn while it was collected, and they do not "
        "give the same value (the model ran with Dropout in training mode between collecting it and recording it): "
        "the gradient would not be torch's. Compute the loss inside the step, or call eval() on the model while "
        "collecting the values")


def _same(a, b) -> bool:
    import numpy as np

    if not isinstance(a, Tensor) or a.shape != b.shape:
        return False
    x, y = a.asnumpy(), b.asnumpy()
    return bool(np.allclose(x, y, rtol=1e-6, atol=1e-7, equal_nan=True))


def _refuse_redraws(fn, inputs, masks=None) -> bool:
    """A recorded value is computed again from the models it reads (its inputs, the globals its function names): a
    layer there that draws at random (Dropout in training mode: a new mask, not the one torch's graph holds) or
    updates state (BatchNorm in training mode: its running statistics a second time) would make the recomputed
    value, or the model, differ from torch's. Refused, with the reason, rather than differentiated silently wrong.
    (A random draw inside a model's construct, ``ops.dropout(x, p)`` written out, is not seen here.) True when an
    nn.Dropout that keeps its masks (``keep_dropout_masks``) draws there: the caller finds the masks to apply."""
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    values = list(inputs) + [scope[n] for n in (code.co_names if code is not None else ()) if n in scope]
    replays = False
    for value in values:
        if not isinstance(value, ms.nn.Cell):
            continue
        for path, cell in value.cells_and_names():
            kind = type(cell).__name__
            if not cell.training:
                continue
            if masks is not None and _keeps_masks(cell):
                replays = replays or bool(cell.p if cell.p is not None else 1.0 - cell.keep_prob)
                continue  # nn.Dropout applies the masks it drew while the value was collected (keep_dropout_masks)
            if "Dropout" in kind and (getattr(cell, "p", None) or getattr(cell, "prob", None)  # Dropout1d: prob
                                      or 1 - getattr(cell, "keep_prob", 1.0)):
                what = "draws a new random mask (Dropout in training mode)"
            elif "BatchNorm" in kind and getattr(cell, "use_batch_statistics", None) is not False:
                what = "updates its running statistics a second time (BatchNorm in training mode)"
            else:
                continue
            name = getattr(fn, "__name__", "?")
            raise RuntimeError(
                f"mindport: a value collected before the backward (recorded by {name}) must be computed again inside "
                f"the differentiated step, and {path or kind} ({kind}) {what}: the gradient would not be torch's. "
                "Compute the loss inside the step, or call eval() on the model while collecting the values")
    return replays


_PAUSED: list = []  # non-empty inside no_grad(): what the forward reads there is not differentiated


def train_mode(obj):
    """torch's mode from birth for a Cell whose mode nothing has set, else nothing; ``obj`` returned.

    torch builds every Module in training mode, MindSpore's Cells start in inference mode. The training rule writes
    this once before a training loop for a model whose mode the code before the loop does not set: a name a step
    calls in a file that never switches modes (a GAN's generator passed into ``train_wgan(dataloader, generator,
    critic, ...)`` of another file: its BatchNorm normalized with its running statistics, vltkv/wgan_clip), or a
    model built after another one's ``model.train()`` in the same function (a second model trained with clipping:
    its BatchNorm took running statistics, 2e-2 off torch from the first loss). Each Cell of ``obj`` (itself and its
    sub-cells) that no ``set_train`` has reached (no ``training`` flag: ``set_train`` records it on the cell and every
    sub-cell) trains, as torch's would; a Cell set to either mode keeps it (torch's ``model.eval()`` before the loop,
    or ``model.bn.eval()`` to freeze one layer, stay). The cell's own ``set_train``/``train`` overrides are not called:
    torch's constructor sets ``training`` without calling ``train()``. A function or a loss is left alone."""
    if isinstance(obj, ms.nn.Cell):
        for cell in (obj, *(c for _, c in obj.cells_and_names() if c is not obj)):
            if "training" not in (getattr(cell, "_func_graph_flags", None) or {}):
                cell.add_flags(training=True)
    return obj


class _Unbound:
    """The value forward_fn hands back for a name its step assigns only in a branch that did not run (``if use_mixup:
    fake, lam = mixup(fake)``): in torch the name keeps whatever it held (unbound, or an earlier step's value); the
    converted step deletes the name again when it comes back as this (see the training rule's ``_call``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound: assigned in a branch of the training step that did not run>"


UNBOUND = _Unbound()


class no_grad(contextlib.ContextDecorator):  # noqa: N801 - torch's name
    """``with torch.no_grad():`` inside the code a backward differentiates (a frozen encoder, a target network, a
    teacher): what it computes is a constant for the gradient, as in torch (MindSpore's PyNative grad off for the
    block), and the Parameters it reads are not reached (``.grad`` stays None: torch's optimizers skip them). Elsewhere
    the converter drops the block (MindSpore records no graph outside a differentiated function)."""

    def __enter__(self):
        self._grad = ms._no_grad()
        self._grad.__enter__()
        _PAUSED.append(self)
        return self

    def __exit__(self, *exc):
        _PAUSED.pop()
        return self._grad.__exit__(*exc)


_CHECKED: set = set()


def _checked_key(fn):
    """What the zero-gradient check is done once for: a forward function's code in its file. Code objects compare
    equal by their instructions and names, not their file: the same helper text in two modules of a process (a
    converted project's two copies of one update helper, two tests) was checked only in the first."""
    code = getattr(fn, "__code__", None)
    return (code, getattr(code, "co_filename", None))
_GRAPH_GRADS = [0]  # grad_graph calls so far: a failing differentiation after one went through a gradient
_NO_SECOND_DERIVATIVE = ("mindport: MindSpore could not differentiate a gradient taken with create_graph=True "
                         "({detail}): MindSpore 2.10 cannot differentiate the gradient of some operators again "
                         "(ELU's EluGrad has no bprop); write that part from operators that can (elu(z) as "
                         "where(z > 0, z, alpha * (exp(z) - 1)))")
_UNREACHED = ("mindport: no parameter reaches the loss {name} computes (every gradient is zero): the tensors it "
              "differentiates were computed before the converted region (kept from earlier steps, e.g. log-"
              "probabilities saved in a list), or the models it calls hold no parameters the converter found. Compute "
              "the loss from the model's outputs inside the step, as torch's graph would, or pass the parameters")


def _consume(grads) -> None:
    """torch frees the graph at a backward: the outputs of that differentiation are not computed again."""
    if isinstance(grads, _Gradients):
        grads.consumed = True
        if grads.step is not None:
            grads.step.release()


def backward(grads, inputs=None) -> None:
    """``loss.backward()``: each gradient added into its tensor's ``.grad`` (set when it is None);
    ``backward(inputs=[...])``: only into those tensors' (one the loss does not reach keeps its ``.grad``, as in
    torch; a tensor that is neither a Parameter nor differentiated by the region, such as an intermediate result,
    is an error: its gradient was not computed). A parameter the loss does not reach keeps ``.grad`` None, as torch
    leaves it: a layer a dynamic forward skipped this step, which torch's optimizers then leave alone (see
    ``grads_of``). MindSpore hands such a parameter an all-zero gradient; a Parameter is taken as not reached when its
    gradient is all zero and the forward did not read it from its Cell (``_ReadParameters``): a layer the forward
    called is reached even when its gradient is exactly zero (a dead ReLU's layer, which torch's momentum and weight
    decay still move; a bias whose L1 gradient is the mean of signs, zero). A Parameter passed to the forward by
    position (``leaves``) is reached when the forward used it (``_mark_used``: its zero gradient is kept, as torch
    gives zeros) and not reached when it did not (a leaf a dynamic forward skipped, test_fresh_causes'
    DYNAMIC_DEPTH)."""
    read = getattr(grads, "read", frozenset()) | getattr(grads, "used", frozenset())
    _consume(grads)
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        reached = {id(t) for t, _ in grads}
        for t in inputs:
            if id(t) not in reached and not isinstance(t, Parameter):
                raise RuntimeError("mindport: backward(inputs=...) names a tensor the converted region does not "
                                   "differentiate (an intermediate result, or one made without requires_grad=True)")
        wanted = {id(t) for t in inputs}
        grads = [(t, g) for t, g in grads if id(t) in wanted]
    fresh = [(t, g) for t, g in grads if isinstance(t, Parameter) and getattr(t, "grad", None) is None and g.size
             and id(t) not in read]
    # one read of the device for all of them (a bool() per parameter waited on the device once per parameter)
    peaks = ops.stack([ops.abs(g).max().astype(ms.float32) for _, g in fresh]).asnumpy() if fresh else ()
    unreached = {id(t) for (t, _), peak in zip(fresh, peaks) if not peak > 0}
    for tensor, grad in grads:
        if id(tensor) in unreached:
            continue
        current = getattr(tensor, "grad", None)
        tensor.grad = grad if current is None else current + grad


def grads_for(grads, inputs, allow_unused=False) -> tuple:
    """``torch.autograd.grad(outputs, inputs)``: the gradient of each input, from ``value_and_grad``'s pairs (``.grad``
    is left alone, as torch leaves it). Without ``create_graph`` torch's gradients are constants: taken inside a
    function a later ``value_and_grad`` differentiates (a first-order MAML step: per task the support loss's
    gradients, fast weights ``p - lr * g``, the query loss, one ``backward`` of their sum), MindSpore's would carry
    the second-order terms into the outer gradient; each is cut there (``ops.stop_gradient``)."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    _consume(grads)
    found = {id(t): g for t, g in grads}
    if not allow_unused and any(id(t) not in found for t in inputs):
        raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. Set "
                           "allow_unused=True if this is the desired behavior.")
    return tuple(None if (g := found.get(id(t))) is None else ops.stop_gradient(g) for t in inputs)


def grad_graph(fn, inputs, grad_outputs=None, allow_unused=False, kept=False):
    """``torch.autograd.grad(outputs, inputs, grad_outputs, create_graph=True)``: the gradients of ``outputs`` with
    respect to ``inputs`` as values a later differentiation goes through (a WGAN-GP gradient penalty, a double-backprop
    regulariser, a Hessian-vector product over an input). MindSpore differentiates functions, not recorded tensors:
    the converter turns the statements that compute ``outputs`` from ``inputs`` into ``fn(*inputs)``, returning
    ``outputs`` or ``(outputs, *kept)`` (the values other code reads), and this differentiates it
    with ``mindspore.vjp``; run inside the function a ``value_and_grad`` differentiates, the gradient of the gradient
    is taken (PyNative). ``grad_outputs`` may be a function of ``fn``'s results (``torch.ones_like(outputs)``).
    Returns the gradients, one per input (a tuple), or ``(gradients, outputs, *kept)`` with ``kept=True``. An input
    the outputs do not depend on gets zeros (torch: an error, or None with ``allow_unused=True``)."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    _GRAPH_GRADS[0] += 1

    def split(*args):
        out = fn(*args)
        return (out[0], tuple(out[1:])) if isinstance(out, tuple) else (out, ())

    with _TwiceDifferentiable():
        outputs, pullback, aux = ms.vjp(split, *inputs, has_aux=True)
        if callable(grad_outputs):
            grad_outputs = grad_outputs(outputs, *aux)
        if grad_outputs is None:
            if outputs.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad_outputs = ops.ones_like(outputs)
        grads = pullback(grad_outputs.astype(outputs.dtype) if isinstance(grad_outputs, Tensor) else grad_outputs)
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    return (grads, outputs, *aux) if kept else grads


def grad_graph_values(fn, mapping, grad_outputs=None, allow_unused=False, kept=False):
    """``torch.autograd.grad(outputs, d.values(), create_graph=True)`` over a dict of tensors by name (MAML's fast
    weights, ``OrderedDict(model.named_parameters())``): ``fn`` computes ``outputs`` from the dict, and is
    differentiated with respect to its values (``grad_graph``), handed a dict of the same type and keys. The
    gradients come back one per value, in the dict's order, as torch's."""
    keys = list(mapping.keys())

    def over(*values):
        return fn(type(mapping)(zip(keys, values)))

    return grad_graph(over, tuple(mapping.values()), grad_outputs, allow_unused, kept)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """``torch.autograd.gradcheck``: each floating input's Jacobian from central differences (``eps``, in the
    input's own dtype, as torch) against the one differentiation gives (``mindspore.vjp``, one cotangent per output
    element), ``|analytical - numerical| <= atol + rtol * |numerical|`` everywhere. MindSpore tensors carry no
    ``requires_grad``: every floating tensor input is checked (torch checks the ones that require it; the converter
    drops the flag). A mismatch raises torch's message (a RuntimeError, as torch's GradcheckError is one) or, with
    ``raise_exception=False``, returns False. The other checks (batched, forward-mode) are not run."""
    import numpy as np

    single = isinstance(inputs, Tensor)
    args = [inputs] if single else list(inputs)
    checked = [i for i, a in enumerate(args) if isinstance(a, Tensor) and ops.is_floating_point(a)]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")

    def outputs(*values):
        full = list(args)
        for i, v in zip(checked, values):
            full[i] = v
        out = func(*full)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return tuple(o for o in out if isinstance(o, Tensor) and ops.is_floating_point(o))

    base = [args[i] for i in checked]
    outs, pullback = ms.vjp(outputs, *base)
    jacobians = _pullback_jacobians(outs, pullback, base)
    analytical = [[jacobians[k][n].asnumpy().astype(np.float64).reshape(int(o.size), int(args[i].size)).T
                   for k, o in enumerate(outs)] for n, i in enumerate(checked)]
    for n, i in enumerate(checked):
        host = args[i].asnumpy()
        numerical = [np.zeros((host.size, int(o.size)), np.float64) for o in outs]
        for e in range(host.size):
            values = []
            for step in (eps, -eps):
                moved = host.copy().reshape(-1)
                moved[e] += step
                values.append(outputs(*[Tensor(moved.reshape(host.shape), args[i].dtype) if m == n else b
                                        for m, b in enumerate(base)]))
            for k in range(len(outs)):
                numerical[k][e] = (values[0][k].asnumpy().astype(np.float64).reshape(-1)
                                   - values[1][k].asnumpy().astype(np.float64).reshape(-1)) / (2 * eps)
        for k in range(len(outs)):
            a, num = analytical[n][k], numerical[k]
            if not np.all(np.abs(a - num) <= atol + rtol * np.abs(num)):
                if not raise_exception:
                    return False
                raise RuntimeError(f"Jacobian mismatch for output {k} with respect to input {i},\n"
                                   f"numerical:{num}\nanalytical:{a}\n")
    return True


def _pullback_jacobians(outs: tuple, pullback, inputs) -> list[list[Tensor]]:
    """Per output k, per input n, the Jacobian d outs[k] / d inputs[n], of shape ``outs[k].shape +
    inputs[n].shape``: one pullback (``ms.vjp``'s) per output element, a one-hot cotangent, its rows stacked (values
    a later differentiation goes through, in PyNative)."""
    import warnings

    import numpy as np

    rows: list[list[list]] = [[[] for _ in inputs] for _ in outs]
    with warnings.catch_warnings():
        # one pullback per output element: MindSpore warns at each after the first that it reruns the forward
        warnings.filterwarnings("ignore", "vjp_fn has been called multiple times")
        for k, o in enumerate(outs):
            for j in range(int(o.size)):
                flat = np.zeros(int(o.size), ms.dtype_to_nptype(o.dtype))
                flat[j] = 1
                cotangents = tuple(Tensor(flat.reshape(o.shape), o.dtype) if m == k else ops.zeros_like(p)
                                   for m, p in enumerate(outs))
                grads = pullback(cotangents)
                grads = grads if isinstance(grads, (tuple, list)) else (grads,)
                for n, g in enumerate(grads):
                    rows[k][n].append(g)
    return [[ops.stack(r).reshape(tuple(o.shape) + tuple(a.shape)) if r else ops.zeros(tuple(o.shape)
             + tuple(a.shape), a.dtype) for r, a in zip(rows[k], inputs)] for k, o in enumerate(outs)]


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """``torch.autograd.functional.jacobian``: the Jacobian of ``func``'s output(s) with respect to ``inputs`` (a
    tensor or a tuple of them), each of shape output.shape + input.shape, nested as torch's (a tensor for one output
    and one input; a tuple over the inputs, over the outputs, or over outputs of tuples over inputs). From
    ``ms.vjp`` (one pullback per output element, PyNative: the function is not compiled, unlike ``ops.jacrev``).
    Without ``create_graph`` the values are constants, as torch's (``ops.stop_gradient``: taken inside a loss a
    ``value_and_grad`` differentiates, the trial-solution ODE loss of snytav/VlasovElectric). ``strict``,
    ``vectorize`` and ``strategy`` change how torch computes it, not the values."""
    one_input = isinstance(inputs, Tensor)
    args = (inputs,) if one_input else tuple(inputs)
    one_output: list[bool] = []

    def outputs(*values):
        out = func(*values)
        one_output[:] = [isinstance(out, Tensor)]
        return (out,) if isinstance(out, Tensor) else tuple(out)

    outs, pullback = ms.vjp(outputs, *args)
    jacobians = _pullback_jacobians(outs, pullback, args)
    if not create_graph:
        jacobians = [[ops.stop_gradient(j) for j in row] for row in jacobians]
    per_output = [row[0] if one_input else tuple(row) for row in jacobians]
    return per_output[0] if one_output[0] else tuple(per_output)


def _layer_norm_twice_differentiable(prim, input_x, gamma, beta):
    """``ops.LayerNorm``'s outputs (y, mean, 1/std) from the mean, the biased variance, a square root and a division
    over the axes from ``begin_norm_axis`` on: operators whose gradient MindSpore 2.10 can differentiate again
    (LayerNormGrad it cannot: "For LayerNormGrad, the index 7 is out of range")."""
    axes = tuple(range(prim.begin_norm_axis % input_x.ndim, input_x.ndim))
    mean = input_x.mean(axes, keep_dims=True)
    centred = input_x - mean
    std = ops.sqrt((centred * centred).mean(axes, keep_dims=True) + prim.epsilon)
    return centred / std * gamma + beta, mean, 1 / std


def _gather_d_twice_differentiable(prim, x, dim, index):
    """``ops.GatherD``'s output (``torch.gather``; cross_entropy's and nll_loss's pick of each target's
    log-probability) as a one-hot product summed over the gathered axis: operators whose gradient MindSpore 2.10 can
    differentiate again (GatherD's gradient it cannot: "The pointer[value] is null", MAML's inner cross_entropy)."""
    dim = dim % x.ndim
    picked = x[tuple(slice(None) if e == dim else slice(0, int(index.shape[e])) for e in range(x.ndim))]
    classes = ops.arange(int(x.shape[dim]), dtype=index.dtype).reshape(
        tuple(int(x.shape[dim]) if e == dim + 1 else 1 for e in range(x.ndim + 1)))
    one_hot = (index.expand_dims(dim + 1) == classes).astype(x.dtype)
    return (picked.expand_dims(dim) * one_hot).sum(dim + 1)


def _matmul_twice_differentiable(prim, input, other):
    """``ops.MatMulExt``'s product (``ops.matmul``, ``x @ w``) through ``ops.MatMul`` / ``ops.BatchMatMul`` (batch
    dimensions broadcast first): MindSpore 2.10 differentiates MatMulExt's gradient again wrongly with respect to the
    other operand (a gradient penalty over ``tanh(x @ w)``: d/dw of d/dx off by 1.3x its size), MatMul's and
    BatchMatMul's rightly. A vector operand keeps MatMulExt."""
    if input.ndim < 2 or other.ndim < 2:
        return _TwiceDifferentiable.original(type(prim))(prim, input, other)
    if input.ndim == 2 and other.ndim == 2:
        return ops.MatMul()(input, other)
    import numpy as np

    batch = tuple(np.broadcast_shapes(tuple(input.shape[:-2]), tuple(other.shape[:-2])))
    return ops.BatchMatMul()(ops.broadcast_to(input, batch + tuple(input.shape[-2:])),
                             ops.broadcast_to(other, batch + tuple(other.shape[-2:])))


class _TwiceDifferentiable:
    """While ``grad_graph`` takes a gradient that a later differentiation goes through (create_graph=True): the
    operators MindSpore 2.10 cannot differentiate twice run as compositions of ones it can. Only there: elsewhere
    they stay MindSpore's kernels (a WGAN-GP critic's ordinary forward too). ``ops.LayerNorm`` is the primitive of
    ``mindspore.nn.LayerNorm`` and of the runtime's LayerNorm layers; ``ops.GatherD`` is cross_entropy's and
    nll_loss's pick of the targets (MAML's inner loss) and ``torch.gather``'s."""

    _depth = [0]
    _patched: list = []

    def __enter__(self):
        from mindspore.ops.auto_generate.gen_ops_prim import GatherD, LayerNorm, MatMulExt

        if not self._depth[0]:
            self._patched[:] = [(primitive, primitive.__dict__["__call__"])
                                for primitive in (LayerNorm, GatherD, MatMulExt)]
            LayerNorm.__call__ = _layer_norm_twice_differentiable
            GatherD.__call__ = _gather_d_twice_differentiable
            MatMulExt.__call__ = _matmul_twice_differentiable
        self._depth[0] += 1
        return self

    def __exit__(self, *exc):
        self._depth[0] -= 1
        if not self._depth[0]:
            for primitive, call in self._patched:
                primitive.__call__ = call
        return False

    @classmethod
    def original(cls, primitive):
        """The primitive's own ``__call__`` while it is replaced."""
        return dict(cls._patched)[primitive]


def zero_grad(*sources, set_to_none=True) -> None:
    """``optimizer.zero_grad()`` / ``model.zero_grad()``: ``.grad`` back to None (torch's default), or zeros."""
    for tensor in _tensors(sources):
        if set_to_none or tensor.grad is None:
            tensor.grad = None
        else:
            tensor.grad = ops.zeros_like(tensor.grad)


def grads_of(optimizer) -> tuple:
    """One gradient per parameter of a MindSpore optimizer, from ``.grad`` (zeros where no backward reached it).
    torch's optimizers skip a parameter whose ``.grad`` is None (no momentum, weight decay or moment update);
    MindSpore's update every parameter they hold, so those parameters and their per-parameter state are put back
    as they were once the optimizer has run (a forward hook on it), and their own step counts are not advanced
    (torch counts each parameter's steps: a head first reached after k steps of the others has the bias correction
    of its own first step; mindport.runtime.frozen steps parameters of different counts apart)."""
    params = optimizer.parameters
    skipped = [i for i, p in enumerate(params) if getattr(p, "grad", None) is None]
    if skipped and isinstance(optimizer, ms.nn.Cell):
        _hold(optimizer, skipped)
    if isinstance(optimizer, ms.nn.Cell):
        # and their own step counts (Adam's bias corrections) not advanced: mindport.runtime.frozen's step wrapper
        # (set on every call, so a mark is never left over for a later step)
        optimizer.__dict__["_mp_unreached"] = frozenset(id(params[i]) for i in skipped)
    return tuple(ops.zeros_like(p) if getattr(p, "grad", None) is None else p.grad.astype(p.dtype) for p in params)


def _hold(optimizer, indices) -> None:
    """Copies of the parameters at ``indices`` and of the optimizer's state aligned with them (its ParameterTuples:
    momentum, moments, first-step flags), restored after its next run."""
    count = len(optimizer.parameters)
    tuples = [t for t in vars(optimizer).values() if isinstance(t, ms.ParameterTuple) and len(t) == count]
    optimizer.__dict__["_mp_held"] = [(t[i], t[i].value().copy()) for t in tuples for i in indices]
    if not optimizer.__dict__.get("_mp_hooked"):
        optimizer.__dict__["_mp_hooked"] = True
        optimizer.register_forward_hook(_restore_held)


def _restore_held(cell, inputs, outputs):
    for tensor, value in cell.__dict__.pop("_mp_held", ()):
        ops.assign(tensor, value)  # in place: set_data would leave the optimizer writing to the old storage


def step(optimizer, closure=None):
    """``optimizer.step(closure)``: the closure (which runs a backward) first, then the update; returns its loss.
    An optimizer with a step of its own (``LBFGS``) takes the closure itself."""
    if isinstance(optimizer, LBFGS):
        return optimizer.step(closure)
    loss = None
    if closure is not None:
        loss = closure()
    optimizer(grads_of(optimizer))
    return loss


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_ on ``.grad``: the total norm of every gradient (as one vector), and each
    gradient scaled by ``max_norm / (total + 1e-6)`` when that is below 1; returns the total norm. torch's own
    composition: ``get_total_norm`` of the gradients, then ``clip_grads_with_norm_``."""
    grads = [t.grad for t in _tensors(parameters) if t.grad is not None]
    if not grads:
        return Tensor(0.0, ms.float32)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def _vector_norm(x, p: float):
    """torch.linalg.vector_norm of a tensor viewed as one vector (ord inf, -inf, 0 and any other p)."""
    x = x.reshape(-1)
    if p == float("inf"):
        return ops.abs(x).max()
    if p == float("-inf"):
        return ops.abs(x).min()
    if p == 0:
        return (x != 0).astype(x.dtype).sum()
    return ops.norm(x, p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.get_total_norm: the norm of the tensors' norms (the tensors viewed as one vector); 0.0 for none;
    ``error_if_nonfinite`` raises torch's error on a nan/inf total (cfh/connect4_a2c prints the gradients' norm so:
    left unconverted before, MP103)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return Tensor(0.0, ms.float32)
    norm_type = float(norm_type)
    # a complex tensor's norm is its magnitudes' (torch: a real total; MindSpore 2.10's ops.abs keeps complex64)
    total = _vector_norm(ops.stack([_vector_norm(ops.sqrt(ops.real(t) ** 2 + ops.imag(t) ** 2) if t.is_complex()
                                                 else t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """torch.nn.utils.clip_grads_with_norm_ on ``.grad``: each gradient scaled by ``min(max_norm / (total_norm +
    1e-6), 1)``."""
    grads = [t for t in _tensors(parameters) if t.grad is not None]
    if not grads:
        return
    total = total_norm if isinstance(total_norm, Tensor) else Tensor(float(total_norm), ms.float32)
    coef = ops.clamp(float(max_norm) / (total + 1e-6), max=1.0)
    for t in grads:
        t.grad = t.grad * coef.astype(t.grad.dtype)


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """torch.nn.utils.clip_grad_value_ on ``.grad``: each gradient clamped to [-clip_value, clip_value]."""
    for t in _tensors(parameters):
        if t.grad is not None:
            t.grad = ops.clamp(t.grad, -float(clip_value), float(clip_value))


class GradScaler(TorchDisabledScaler):
    """torch's GradScaler as it runs without CUDA: disabled, so ``scale(x)`` is ``x``, ``unscale_`` and ``update`` do
    nothing and ``step(opt)`` is the optimizer's step; the training runs in full precision."""

    def __init__(self, *args, **kwargs):
        pass

    def scale(self, outputs):
        return outputs


class autocast(contextlib.ContextDecorator):  # noqa: N801 - torch's name
    """torch.autocast / torch.amp.autocast / torch.cuda.amp.autocast / torch.cpu.amp.autocast in full precision: a
    context manager and decorator that changes nothing (torch without CUDA, or enabled=False)."""

    def __init__(self, *args, **kwargs):
        _python_only("torch.autocast")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class LBFGS:
    """torch.optim.LBFGS (no line search): limited-memory BFGS driven by a closure that recomputes the loss and runs
    a backward; ``step(closure)`` reads the gradients from ``.grad`` and writes the parameters in place. The same
    arithmetic as torch's (the two-loop recursion over at most ``history_size`` curvature pairs, the first step
    scaled by ``min(1, 1 / |g|_1) * lr``, the same stopping tests), in MindSpore tensors. With
    ``line_search_fn='strong_wolfe'`` each step length comes from a line search satisfying the strong Wolfe conditions
    (sufficient decrease c1=1e-4, curvature c2=0.9, at most 25 evaluations: a bracketing phase extrapolating by cubic
    interpolation, then a zoom phase), as torch's: every trial point is one closure call, in the same order."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-07, tolerance_change=1e-09,
                 history_size=100, line_search_fn=None):
        _python_only("torch.optim.LBFGS")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError("only 'strong_wolfe' is supported")  # torch's own message
        self.parameters = [p for p in _tensors(params) if isinstance(p, Parameter)]
        self.defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval if max_eval is not None else
                             max_iter * 5 // 4, tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                             history_size=history_size, line_search_fn=line_search_fn)
        self.param_groups = [dict(self.defaults, params=self.parameters)]
        self.state = {"func_evals": 0, "n_iter": 0}

    def zero_grad(self, set_to_none=True) -> None:
        zero_grad(self.parameters, set_to_none=set_to_none)

    def _flat_grad(self):
        return ops.cat([(ops.zeros_like(p) if p.grad is None else p.grad).reshape(-1) for p in self.parameters])

    def _add(self, t, direction) -> None:
        offset = 0
        t = _scalar(t, direction)
        for p in self.parameters:
            n = p.size
            p.assign_value(p + (direction[offset:offset + n] * t).reshape(p.shape).astype(p.dtype))
            offset += n

    def step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change, history = group["tolerance_grad"], group["tolerance_change"], group["history_size"]
        state = self.state
        orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if float(ops.abs(grad).max()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        dirs, steps, ro = state.get("old_dirs", []), state.get("old_stps", []), state.get("ro", [])
        h_diag, prev_grad, prev_loss = state.get("H_diag", 1), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, steps, ro, h_diag = -grad, [], [], [], 1
            else:
                y = grad - prev_grad
                s = d * _scalar(t, d)
                ys = float((y * s).sum())
                if ys > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0), steps.pop(0), ro.pop(0)
                    dirs.append(y), steps.append(s), ro.append(1.0 / ys)
                    h_diag = ys / float((y * y).sum())
                q = -grad
                alphas = [0.0] * len(dirs)
                for i in range(len(dirs) - 1, -1, -1):
                    alphas[i] = float((steps[i] * q).sum()) * ro[i]
                    q = q - dirs[i] * _scalar(alphas[i], q)
                r = q * _scalar(h_diag, q)
                for i in range(len(dirs)):
                    beta = float((dirs[i] * r).sum()) * ro[i]
                    r = r + steps[i] * _scalar(alphas[i] - beta, r)
                d = r
            prev_grad = grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(ops.abs(grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float((grad * d).sum())
            if gtd > -tol_change:
                break
            found = 0
            if group["line_search_fn"] is not None:
                start = [ms.Tensor(p.asnumpy().copy()) for p in self.parameters]
                # torch bounds the search by the evaluations left (max_eval - evals, not 25) and keeps its own
                # tolerance_change (1e-9), not the group's
                loss, grad, t, found = self._strong_wolfe(closure, start, t, d, loss, grad, gtd,
                                                          max_ls=max_eval - evals)
                self._add(t, d)
            else:
                self._add(t, d)
                if n_iter != max_iter:
                    loss = float(closure())
                    grad = self._flat_grad()
                    found = 1
            evals += found
            state["func_evals"] += found
            if n_iter == max_iter or evals >= max_eval or float(ops.abs(grad).max()) <= tol_grad:
                break
            if float(ops.abs(d * _scalar(t, d)).max()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=steps, ro=ro, H_diag=h_diag, prev_flat_grad=prev_grad,
                     prev_loss=prev_loss)
        return orig_loss

    def _evaluate_at(self, closure, start, t, d):
        """The loss and flat gradient at ``start + t * d``; the parameters go back to ``start`` after."""
        self._add(t, d)
        loss = float(closure())
        grad = self._flat_grad()
        for p, saved in zip(self.parameters, start):
            p.assign_value(saved)
        return loss, grad

    def _strong_wolfe(self, closure, start, t, d, f, g, gtd, tol_change=1e-9, c1=1e-4, c2=0.9, max_ls=25):
        """A step length along ``d`` meeting the strong Wolfe conditions (Nocedal & Wright, algorithms 3.5 and 3.6,
        in torch's form): returns the loss, the flat gradient and the step there, and the closure calls made."""
        d_norm = float(ops.abs(d).max())
        f_new, g_new = self._evaluate_at(closure, start, t, d)
        evals = 1
        gtd_new = float((g_new * d).sum())
        t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
        done = False
        ls_iter = 0
        while ls_iter < max_ls:
            armijo_fails = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
            if not armijo_fails and abs(gtd_new) <= -c2 * gtd:
                bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
                done = True
                break
            if armijo_fails or gtd_new >= 0:
                bracket, bracket_f = [t_prev, t], [f_prev, f_new]
                bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
                break
            low, high = t + 0.01 * (t - t_prev), t * 10  # extrapolate within these bounds
            t_prev, t = t, _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (low, high))
            f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
            f_new, g_new = self._evaluate_at(closure, start, t, d)
            evals += 1
            gtd_new = float((g_new * d).sum())
            ls_iter += 1
        if ls_iter == max_ls:
            bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
            bracket_gtd = [gtd, gtd_new]
        insufficient = False
        low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
        while not done and ls_iter < max_ls:  # zoom into the bracket
            if abs(bracket[1] - bracket[0]) * d_norm < tol_change:
                break
            t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
            top, bottom = max(bracket), min(bracket)
            eps = 0.1 * (top - bottom)
            if min(top - t, t - bottom) < eps:  # too close to an end: move away unless the last step was fine
                if insufficient or t >= top or t <= bottom:
                    t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                    insufficient = False
                else:
                    insufficient = True
            else:
                insufficient = False
            f_new, g_new = self._evaluate_at(closure, start, t, d)
            evals += 1
            gtd_new = float((g_new * d).sum())
            ls_iter += 1
            if f_new > f + c1 * t * gtd or f_new >= bracket_f[low_pos]:
                bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos] = t, f_new, g_new
                bracket_gtd[high_pos] = gtd_new
                low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
            else:
                if abs(gtd_new) <= -c2 * gtd:
                    done = True
                elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                    bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                    bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
                bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos] = t, f_new, g_new
                bracket_gtd[low_pos] = gtd_new
        return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evals


def _scalar(value, like):
    """A Python number as a 0-d tensor of ``like``'s dtype: MindSpore multiplies a float64 tensor by a Python float
    rounded to float32 first (torch keeps the float64 value), which moves an L-BFGS run on float64 tensors by 1e-8
    relative at its first step."""
    return ms.Tensor(value, like.dtype)


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, kept within ``bounds`` (default:
    between x1 and x2); the middle of the bounds when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)

