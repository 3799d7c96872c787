"""The torch side of a parity run (see ``sides.py``): everything here imports torch, nothing imports MindSpore."""
from __future__ import annotations

import numpy as np

from mindport.errors import InputError
from mindport.validators.parity.loading import map_arrays
from mindport.validators.parity.sides import (
    LOSSES,
    OPTIMIZERS,
    TrainSpec,
    constant_parameter,
    error_text,
    flat_numpy,
    perturbation,
    timed,
)


def state_copy(model) -> dict:
    """A copy of a torch model's parameters and buffers, by state_dict name (what a forward that writes them is put
    back to: the proof's :meth:`TorchSide.snapshot`, discovery's determinism check)."""
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def held_state(model) -> dict:
    """The tensors of the modules ``model`` holds in a plain list, tuple or dict (``self.blocks = [Block(c), ...]``),
    which torch runs but does not register, so its state_dict has none: under their attribute paths
    (``blocks.0.conv.weight``), the paths the converted Cell's weight plan gives the same members
    (mindport.runtime.held_members). Without them a proof left the port's copies at their own random draw."""
    import torch

    from mindport.runtime.held_members import unregistered_members

    held = unregistered_members(model, torch.nn.Module, lambda m: m.named_modules())
    return {f"{where}.{k}": _numpy(v) for where, member in held.items() for k, v in member.state_dict().items()}


def set_mode(model, training: bool = False):
    """torch's ``model.train(training)`` / ``model.eval()`` without calling the classes' own ``train``: a model that
    defines ``train(self, data, max_iterations)`` (allanj/StatNLP-PyTorch's NetworkModel, a model that is its own
    trainer) made ``eval()`` fail ("missing 1 required positional argument"), or would run its training. Every module's
    flag, as ``nn.Module.train`` sets it; ``model`` returned."""
    for m in model.modules():
        m.training = training
    return model


def positive_arguments() -> dict:
    """torch functions and Tensor methods -> ((position, keyword), ...) of the arguments torch needs >= 0 there:
    the running variance of the batch and instance norms, the input of sqrt, rsqrt, log, log2, log10 and of a
    fractional power. Functions (``F.batch_norm`` and the ``torch.batch_norm`` it calls) are seen by their objects."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    table = {F.batch_norm: ((2, "running_var"),), torch.batch_norm: ((4, "running_var"),),
             F.instance_norm: ((2, "running_var"),), torch.instance_norm: ((4, "running_var"),)}
    for name in ("sqrt", "rsqrt", "log", "log2", "log10"):
        table[getattr(torch, name)] = ((0, "input"),)
        table[getattr(torch.Tensor, name)] = ((0, "self"),)
    for power in _POWERS_OF(torch):
        table[power] = ((0, "input"),)
    return table


def _POWERS_OF(torch) -> tuple:  # noqa: N802
    return (torch.pow, torch.Tensor.pow, torch.Tensor.__pow__, torch.Tensor.float_power)


class _LazyPowers:
    """``torch.pow`` and the Tensor power methods, read when torch is imported (this module imports it lazily)."""

    def __contains__(self, func) -> bool:
        import torch

        return func in _POWERS_OF(torch)


_POWERS = _LazyPowers()


def _fractional(exponent) -> bool:
    """A power whose base must be >= 0 for a real result: a number that is not an integer."""
    return isinstance(exponent, float) and not float(exponent).is_integer()


def torch_inputs(arrays):
    """The forward's arguments from the input arrays, each tensor a fresh copy: a forward that writes into its input
    in place (``x += te``, ``x.mul_(...)``: torch allows it and the caller sees it) must not change the arrays the
    next forward of the same proof (a warm-up, the recorded run, the float64 twin) or the other side is handed.
    A ``value:``/``fn:`` input (a Python number, flag, string, None, a function) goes to the forward as it is; a list
    input (HRNet's branches) has its arrays converted."""
    import torch

    return [map_arrays(a, lambda v: torch.from_numpy(np.array(v, copy=True, order="C"))) for a in arrays]


def _numpy(tensor) -> np.ndarray:
    from mindport.validators.parity.metrics import to_numpy

    return np.array(to_numpy(tensor), copy=True)


class TorchSide:
    """One torch model: built here from a reference, or given (``compare``)."""

    def __init__(self, model=None):
        self.model = model
        self.ref = ""
        self.original = None  # the weights every comparison starts from (training restores them)
        self.replay = False  # draws from mindport.proofs.replay's fixed stream, recorded (``replay_draws``)
        self.tape: list = []  # the draws of the last model call, in order

    def hello(self) -> dict:
        import torch

        return {"framework": "torch", "version": str(torch.__version__)}

    # ------------------------------------------------------------------------------------------------ draws

    def replay_draws(self, on: bool = True) -> None:
        """From now on every model call draws its random values from one fixed stream and records them
        (``mindport.proofs.replay``): the forward is deterministic, and ``draws`` hands the MindSpore side the tape."""
        self.replay = on

    def draws(self) -> list[dict]:
        """The draws of the last model call (values as float64 arrays), for the MindSpore side to replay."""
        return [d.as_dict() for d in self.tape]

    def _draws(self):
        import contextlib

        if not self.replay:
            return contextlib.nullcontext()
        return self._recording()

    def _recording(self):
        import contextlib

        from mindport.proofs.replay import drawing

        @contextlib.contextmanager
        def recording():
            with drawing("torch") as stream:
                yield stream
            self.tape = stream.tape
        return recording()

    # ------------------------------------------------------------------------------------------------ building

    def build(self, ref: str, ctor: str, seed: int, root=None, observe: bool = False, cwd=None) -> dict:
        """``observe``: record the torch calls the files under ``root`` make while the model is built (and, with
        :meth:`observe`, run): the facts a conversion takes (``mindport.observed``)."""
        import contextlib

        import torch

        from mindport.observed import Facts, record
        from mindport.validators.parity.loading import build_model

        torch.manual_seed(seed)
        self.facts = Facts() if observe else None
        with record(root, self.facts) if observe else contextlib.nullcontext():
            model = build_model(ref, ctor, root=root, isolated=True, cwd=cwd)
        self.root = root
        if not isinstance(model, torch.nn.Module):
            raise InputError(f"{ref}({ctor}) built a {type(model).__name__}, not a torch.nn.Module")
        self.model, self.ref = model, ref
        return self.info()

    def info(self) -> dict:
        return {"type": type(self.model).__name__, "kind": "torch",
                "params": [(n, list(p.shape)) for n, p in self.model.named_parameters()]}

    def load_checkpoint(self, path: str) -> None:
        import torch

        from mindport.migrator.weights.loading import for_model, load_state_dict

        state = for_model(load_state_dict(path), self.model.state_dict().keys())
        try:
            self.model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
        except RuntimeError as exc:
            raise InputError(f"{path} does not fit the torch model {self.ref}: {exc}") from exc

    def randomize_norms(self, seed: int) -> None:
        """Seeded, non-trivial running statistics, so that normalisation settings (eps) show in the outputs.

        The variances are drawn in [0.5, 1.5], around the 1 of a fresh BatchNorm: each normalisation then scales by
        1/sqrt(var) ~ 0.8-1.4, about 1 on average. A draw of small variances (it was [0.02, 0.52], 1.4-7x per
        layer) blows up a chain of BatchNorms with no renormalisation between them, and float32 rounding with it:
        clovaai/deep-text-recognition-benchmark's RCNN_FeatureExtractor (three gated recurrent convolutions of five
        steps, five BatchNorms each) reached 9e4 and torch's own float32 forward was 9.3e-2 (of its largest value)
        from float64, so no float32 port could match it ("diverged", max rel 1.3e5); at [0.5, 1.5] torch float32 is
        2.3e-7 from float64. An eps that differs still shows: 1e-3 instead of 1e-5 moves an output by ~5e-4."""
        import torch

        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for sub in self.model.modules():
                mean, var = getattr(sub, "running_mean", None), getattr(sub, "running_var", None)
                if isinstance(mean, torch.Tensor) and isinstance(var, torch.Tensor):
                    mean.copy_(torch.randn(mean.shape, generator=gen) * 0.1)
                    var.copy_(torch.rand(var.shape, generator=gen) + 0.5)

    def randomize_all(self, seed: int, inputs=None) -> list[str]:
        """A second weight draw under which no layer is near the identity or near-linear: every floating parameter
        random (matrices and kernels N(0, 1/fan_in), so pre-activations are of order one where tanh-GELU and
        exact GELU differ; vectors and scalars, biases, norm scales, layer scales and gates included, of magnitude
        0.5-1.5 with a random sign, so a zero-initialised scale no longer hides its block), and BatchNorm running
        statistics random. Returns the names drawn (other buffers keep their values: masks, positional tables).

        A parameter the model uses as a variance or feeds to a function defined for positive values only (a
        Parameter given to ``F.batch_norm`` as ``running_var``, ``sqrt``/``log`` of a scale: ``_positive_uses``)
        keeps its magnitude and loses its sign: a negative variance is NaN in torch and a finite number in MindSpore,
        a divergence of the draw, not of the port. How each parameter is used is read from a forward on ``inputs``
        (the proof's arrays) under a torch function mode, so it is decided from the use, not from a name."""
        import torch

        gen = torch.Generator().manual_seed(seed)
        drawn = []
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                if not p.dtype.is_floating_point:
                    continue
                if p.dim() >= 2:
                    fan_in = max(1, p[0].numel())
                    value = torch.randn(p.shape, generator=gen) / fan_in ** 0.5
                elif p.dim() == 1:
                    sign = torch.where(torch.rand(p.shape, generator=gen) < 0.5, -1.0, 1.0)
                    value = (torch.rand(p.shape, generator=gen) + 0.5) * sign
                else:
                    value = torch.rand(p.shape, generator=gen) + 0.5
                p.copy_(value.to(p.dtype))
                drawn.append(name)
            for path, sub in self.model.named_modules():
                mean, var = getattr(sub, "running_mean", None), getattr(sub, "running_var", None)
                if isinstance(mean, torch.Tensor) and isinstance(var, torch.Tensor):
                    mean.copy_(torch.randn(mean.shape, generator=gen) * 0.5)
                    var.copy_(torch.rand(var.shape, generator=gen) * 1.5 + 0.5)
                    drawn += [f"{path}.running_mean" if path else "running_mean",
                              f"{path}.running_var" if path else "running_var"]
        if inputs is not None:
            positive = self._positive_uses(inputs)
            with torch.no_grad():
                for name, p in self.model.named_parameters():
                    if name in positive and name in drawn:
                        p.abs_()
        return drawn

    def _positive_uses(self, inputs) -> set[str]:
        """The parameters a forward on ``inputs`` passes (or a view of which it passes) where torch needs a value
        >= 0 (POSITIVE_ARGUMENTS: a variance, the input of sqrt/log/a fractional power)."""
        import torch
        from torch.overrides import TorchFunctionMode

        owners = {}
        for name, p in self.model.named_parameters():
            if p.dtype.is_floating_point and p.numel():
                owners.setdefault(p.untyped_storage().data_ptr(), name)
        found: set[str] = set()
        table = positive_arguments()

        class _Uses(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                for index, keyword in table.get(func, ()):
                    value = kwargs.get(keyword) if keyword in kwargs else args[index] if index < len(args) else None
                    if func in _POWERS and not _fractional(args[1] if len(args) > 1 else kwargs.get("exponent")):
                        continue
                    if isinstance(value, torch.Tensor) and value.numel():
                        owner = owners.get(value.untyped_storage().data_ptr())
                        if owner is not None:
                            found.add(owner)
                return func(*args, **kwargs)

        model = self.model
        set_mode(model)
        try:
            with torch.no_grad(), _Uses():
                model(*torch_inputs(inputs))
        except Exception:  # noqa: BLE001 - the proof's own forward reports a model that raises
            pass
        return found

    def state(self) -> dict:
        """The model's state_dict, and the persistent buffers an override of state_dict left out
        (keunwoochoi/torchaudio-contrib's ``_ModuleNoStateBuffers`` deletes its buffers from it): the module still
        holds them and its port keeps each as a frozen Parameter, to be filled with torch's value."""
        state = {k: _numpy(v) for k, v in self.model.state_dict().items()}
        for path, module in self.model.named_modules():
            skip = getattr(module, "_non_persistent_buffers_set", set())
            for name, buf in getattr(module, "_buffers", {}).items():
                key = f"{path}.{name}" if path else name
                if buf is not None and name not in skip and key not in state:
                    state[key] = _numpy(buf)
        return {**state, **held_state(self.model)}

    def digest(self) -> str:
        """A digest of the parameters and buffers: tells whether a forward wrote the model's own state."""
        import hashlib

        h = hashlib.blake2b(digest_size=16)
        for k, v in self.model.state_dict().items():
            h.update(k.encode())
            h.update(_numpy(v).tobytes())
        return h.hexdigest()

    def snapshot(self) -> None:
        self.original = state_copy(self.model)

    def restore(self) -> None:
        if self.original is not None:
            self.model.load_state_dict(self.original)

    # ------------------------------------------------------------------------------------------------- running

    def observe(self, inputs) -> dict | None:
        """One eval forward of ``inputs`` under the recorder (after :meth:`build` with ``observe``): the facts of the
        build and the run, as ``Facts.to_json()``; None when the forward raised (the parity run says why). The
        parameters and buffers are put back as they were, so the proof's own forward starts where it would have."""
        import copy

        import torch

        from mindport.observed import record

        model, state = self.model, copy.deepcopy(self.model.state_dict())
        set_mode(model)
        try:
            with record(self.root, self.facts), torch.no_grad():
                model(*torch_inputs(inputs))
        except Exception:  # noqa: BLE001 - not a fact: the parity forward reports the same failure
            return None
        finally:
            model.load_state_dict(state)
        return self.facts.to_json()

    @timed
    def forward(self, inputs, record: bool = True) -> dict:
        import torch

        from mindport.validators.parity.configs import torch_config
        from mindport.validators.parity.hooks import finish_records, torch_hooks

        model = self.model
        set_mode(model)
        records = [] if record else None
        try:
            with torch.no_grad(), self._draws():
                if records is None:
                    out = model(*torch_inputs(inputs))
                else:
                    with torch_hooks(model, records):
                        out = model(*torch_inputs(inputs))
            outputs, kinds = flat_numpy(out)
        except Exception as exc:  # noqa: BLE001 - the parent decides (the reference raising is an input error)
            return {"error": error_text(exc, 600)}
        return {"outputs": outputs, "kinds": kinds,
                "records": None if records is None else finish_records(records, torch_config, "forward")}

    def float64_gap(self, inputs, candidate=None, rtol: float = 0.0, atol: float = 0.0) -> dict:
        """torch's own float32 rounding on ``inputs``: per floating output key, ``(max |float32 - float64|, max
        |float64|)``, the float64 run a copy of the model in float64 on the floating inputs cast to float64 (the model
        itself is left as it is). ``{}`` when the float64 copy does not run or its outputs do not pair up (a forward
        that casts to float32 itself only makes the gap smaller: a stricter control, never a looser one).
        ``candidate``: the port's float64 run's flat outputs (``[(key, array)]``, side_mindspore's ``forward64``):
        then per key ``{"noise", "scale", "port64_abs", "port64_close"}``, the port's largest distance to torch's
        float64 run and whether it is within ``rtol``/``atol`` of it at every element."""
        import copy

        import torch

        as64 = lambda a: a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a  # noqa: E731
        model = self.model
        set_mode(model)
        try:
            with torch.no_grad():
                with self._draws():
                    out32, _ = flat_numpy(model(*torch_inputs(inputs)))
                twin = set_mode(copy.deepcopy(model).double())
                with self._draws():
                    out64, _ = flat_numpy(twin(*torch_inputs([map_arrays(a, as64) for a in inputs])))
        except Exception:  # noqa: BLE001 - no control: the proof's verdict stands
            return {}
        gaps = {}
        others = dict(candidate or [])
        for (key, a), (key64, b) in zip(out32, out64):
            if key != key64 or a is None or b is None or a.shape != b.shape or not np.issubdtype(a.dtype, np.floating):
                continue
            r, g = b.astype(np.float64), a.astype(np.float64)
            finite = np.isfinite(r) & np.isfinite(g)
            if not finite.any():
                continue
            noise, scale = float(np.abs(r[finite] - g[finite]).max()), float(np.abs(r[finite]).max())
            if candidate is None:
                gaps[key] = (noise, scale)
                continue
            c = others.get(key)
            if not isinstance(c, np.ndarray) or c.shape != r.shape or c.dtype != np.float64:
                continue  # the port's run in float64 did not stay in float64 here: no control
            same = np.array_equal(np.isfinite(c), np.isfinite(r)) and np.array_equal(c[~np.isfinite(c)],
                                                                                     r[~np.isfinite(r)])
            both = np.isfinite(c) & np.isfinite(r)
            gaps[key] = {"noise": noise, "scale": scale,
                         "port64_abs": float(np.abs(c[both] - r[both]).max()) if both.any() else 0.0,
                         "port64_close": bool(same and np.allclose(c[both], r[both], rtol=rtol, atol=atol))}
        return gaps

    def perturb(self, paths: list[str] | None, seed: int, every: bool = False, names: list[str] | None = None,
                positive: bool = False) -> list[str]:
        """Give the constant parameters (``every``: all parameters) of the layers at ``paths`` (``None``: of the
        whole model), or the parameters ``names``, seeded values like a default init (``positive``: their absolute
        values); returns their names."""
        import torch

        modules = dict(self.model.named_modules())
        params = dict(self.model.named_parameters())
        chosen: list[str] = [n for n in names or [] if n in params]
        for path in (paths if paths is not None else [""]) if names is None else []:
            module = modules.get(path)
            if module is None:
                continue
            for name, p in module.named_parameters(prefix=path):
                if name not in chosen and (every or constant_parameter(_numpy(p))):
                    chosen.append(name)
        rng = np.random.default_rng(seed)
        with torch.no_grad():
            for name in chosen:
                p = params[name]
                value = perturbation(tuple(p.shape), rng)
                p.copy_(torch.from_numpy(abs(value) if positive else value).to(p.dtype))
        return chosen

    @timed
    def grads(self, inputs, projections: dict) -> dict:
        """Gradients of ``sum(output * R)`` (``projections``: output key -> R) for every trainable parameter."""
        import torch

        from mindport.validators.parity.metrics import flatten_outputs

        model = self.model
        set_mode(model)
        model.zero_grad(set_to_none=True)
        with torch.enable_grad():
            with self._draws():
                out = model(*torch_inputs(inputs))
            loss = None
            for key, leaf in flatten_outputs(out):
                if key in projections and isinstance(leaf, torch.Tensor):
                    term = (leaf * torch.from_numpy(projections[key]).to(leaf.dtype)).sum()
                    loss = term if loss is None else loss + term
            if loss is None or not loss.requires_grad:
                raise InputError("no floating output depends on a trainable parameter: nothing to differentiate")
            loss.backward()
        grads = {n: _numpy(p.grad) if p.grad is not None else np.zeros(tuple(p.shape), np.float32)
                 for n, p in model.named_parameters() if p.requires_grad}
        model.zero_grad(set_to_none=True)
        return {"loss": float(loss.detach()), "grads": grads}

    @timed
    def train(self, batches: list, targets: list, spec: TrainSpec, control: dict | None = None) -> dict:
        """``spec.steps`` optimizer steps, one seeded batch each, dropout layers off; the losses and final state.
        ``control`` (the initial state): the float64 noise control instead, on a float64 copy of the model started
        from that state, the same batches and targets cast to float64 (the model itself is left as it is)."""
        import copy

        import torch

        model = self.model
        if control is not None:
            model = copy.deepcopy(model)
            model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in control.items()})
            model.double()
            as64 = lambda a: a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a  # noqa: E731
            batches = [[as64(a) for a in b] for b in batches]
            targets = [[(k, as64(a)) for k, a in t] for t in targets]
        set_mode(model, True)
        for m in model.modules():
            if isinstance(m, torch.nn.modules.dropout._DropoutNd):
                m.training = False
        optimizer_name = OPTIMIZERS[spec.optimizer]
        opt_cls = getattr(torch.optim, optimizer_name.rsplit(".", 1)[1])
        try:
            optimizer = opt_cls(model.parameters(), lr=spec.lr, **spec.optimizer_args)
        except TypeError as exc:
            raise InputError(f"{optimizer_name}: {exc}") from exc
        loss_name = LOSSES[spec.loss]
        loss_fn = getattr(torch.nn, loss_name.rsplit(".", 1)[1])()
        losses = []
        for batch, target in zip(batches, targets):
            optimizer.zero_grad()
            loss = _loss(model(*torch_inputs(batch)), target, loss_fn, spec.loss)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        set_mode(model)
        if control is not None:
            return {"losses": losses, "state": {k: _numpy(v) for k, v in model.state_dict().items()}}
        return {"losses": losses, "state": self.state(), "optimizer": optimizer_name, "loss": loss_name,
                "trainable": [n for n, p in model.named_parameters() if p.requires_grad]}


def _loss(out, target: list, loss_fn, kind: str):
    import torch

    from mindport.validators.parity.metrics import flatten_outputs

    leaves = dict(flatten_outputs(out))
    total = None
    for key, value in target:
        leaf = leaves[key]
        t = torch.from_numpy(value)
        term = loss_fn(leaf.reshape(-1, leaf.shape[-1]), t.reshape(-1)) if kind == "cross_entropy" else loss_fn(leaf, t)
        total = term if total is None else total + term
    return total
