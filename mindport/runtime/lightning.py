"""PyTorch Lightning's ``LightningModule`` and ``LightningDataModule`` for converted code (``mp_lightning``).

A converted ``class Net(pl.LightningModule)`` derives from :class:`LightningModule` here: a MindSpore ``nn.Cell``
whose ``construct`` is the model's ``forward`` (renamed by the class rule as for any nn.Module subclass), with
Lightning's members that need a run-time decision (``save_hyperparameters`` reading the caller's ``__init__``
arguments into ``self.hparams``, ``self.log``, ``current_epoch``, ``trainer`` ...: ``lightning_members``); its hooks
(``training_step``, ``configure_optimizers``, ``on_*``) are the class's own methods, converted like any method. A
``LightningDataModule`` is a plain class. Members with no MindSpore meaning raise with the reason
(``mindport/mappings/data/surface/lightning_surface.toml`` lists every member and how it ends).
"""
from __future__ import annotations

import mindspore as ms
from mindspore import nn

from mindport.runtime.lightning_members import AttributeDict, DataModuleMembers, LightningMembers
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs

__all__ = ["AttributeDict", "LightningDataModule", "LightningModule", "Trainer", "seed_everything"]


def _unsupported(name: str, why: str):
    def member(self, *args, **kwargs):
        raise NotImplementedError(f"mindport: LightningModule.{name} has no MindSpore counterpart: {why}")
    member.__name__ = name
    return member


class LightningModule(LightningMembers, nn.Cell):
    """A LightningModule as a MindSpore Cell."""

    def __init__(self, *args, **kwargs):
        nn.Cell.__init__(self)

    @property
    def device(self) -> str:
        return ms.get_context("device_target")

    @property
    def dtype(self):
        params = self.trainable_params()
        return params[0].dtype if params else ms.float32

    def freeze(self) -> None:
        for param in self.get_parameters():
            param.requires_grad = False
        self.set_train(False)

    def unfreeze(self) -> None:
        for param in self.get_parameters():
            param.requires_grad = True
        self.set_train(True)

    manual_backward = _unsupported(
        "manual_backward", "MindSpore has no backward on a loss: gradients come from mindspore.value_and_grad over a "
        "function computing the loss (write the step as grad_fn = ms.value_and_grad(loss_fn, None, "
        "optimizer.parameters); loss, grads = grad_fn(...); optimizer(grads))")
    to_torchscript = _unsupported("to_torchscript", "export the Cell with mindspore.export (MindIR) instead")
    to_onnx = _unsupported("to_onnx", "export the Cell with mindspore.export(..., file_format='ONNX') instead")
    toggle_optimizer = _unsupported("toggle_optimizer", "MindSpore optimizers update the parameters they are given; "
                                    "pass each optimizer its own parameters")
    untoggle_optimizer = _unsupported("untoggle_optimizer", "see toggle_optimizer")
    _STEP = ("overrides how Lightning's loop steps: a MindSpore step is value_and_grad over training_step then "
             "optimizer(grads), with no backward or zero_grad to override")
    backward = _unsupported("backward", _STEP)
    optimizer_step = _unsupported("optimizer_step", _STEP)
    optimizer_zero_grad = _unsupported("optimizer_zero_grad", _STEP)
    configure_gradient_clipping = _unsupported("configure_gradient_clipping", _STEP)
    lr_scheduler_step = _unsupported("lr_scheduler_step", _STEP)
    toggled_optimizer = _unsupported("toggled_optimizer", "see toggle_optimizer")
    all_gather = _unsupported("all_gather", "a collective: mindport.runtime.distributed / mindspore.communication in a "
                              "msrun job")
    clip_gradients = _unsupported("clip_gradients", "clip the gradients value_and_grad returns with "
                                  "mindspore.ops.clip_by_global_norm before the optimizer step")


    @classmethod
    def load_from_checkpoint(cls, *args, **kwargs):
        raise NotImplementedError(
            "mindport: LightningModule.load_from_checkpoint has no MindSpore counterpart: a Lightning checkpoint is a "
            "torch pickle: convert its state_dict with `mindport weights` and build the Cell with the hparams it saved")


class LightningDataModule(DataModuleMembers):
    """A LightningDataModule: a plain class (its data loaders are converted like any other code)."""

    @classmethod
    def from_datasets(cls, *args, **kwargs):
        raise NotImplementedError("mindport: LightningDataModule.from_datasets has no MindSpore counterpart: it builds "
                                  "torch DataLoaders; write the data module's *_dataloader methods")

    @classmethod
    def load_from_checkpoint(cls, *args, **kwargs):
        raise NotImplementedError("mindport: LightningDataModule.load_from_checkpoint has no MindSpore counterpart: a "
                                  "Lightning checkpoint is a torch pickle")


# ---------------------------------------------------------------------------------------------------- the Trainer

def seed_everything(seed=None, workers=False, verbose=True) -> int:
    """Lightning's ``seed_everything``: Python's, numpy's and MindSpore's seeds (``mindspore.set_seed``)."""
    import random

    import numpy as np

    seed = 0 if seed is None else int(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    ms.set_seed(seed)
    return seed


def _batch_size(batch) -> int:
    """Lightning's batch size of a batch: the first dimension of the first tensor found in it (lists, tuples and
    dicts searched in order); 1 when none has one."""
    def first(obj):
        if hasattr(obj, "shape") and len(obj.shape) > 0:
            return int(obj.shape[0])
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
        return next((size for size in map(first, items) if size is not None), None)

    size = first(batch)
    return 1 if size is None else size


def _is_optimizer(obj) -> bool:
    return callable(obj) and hasattr(obj, "parameters") and not isinstance(obj, (dict, list, tuple))


def _optimizers_of(configured) -> tuple[list, list]:
    """configure_optimizers' result as Lightning reads it: one optimizer; a list or tuple of them; ``([opts],
    [schedulers])``; a dict ``{"optimizer": o, "lr_scheduler": s or {"scheduler": s, "interval", "monitor", ...}}``
    or a list of such dicts. -> (optimizers, scheduler configs ``{"scheduler", "interval", "frequency", "monitor"}``)."""
    def scheduler(entry):
        config = dict(entry) if isinstance(entry, dict) else {"scheduler": entry}
        return {"interval": "epoch", "frequency": 1, "monitor": None, **config}

    if configured is None:
        return [], []
    if _is_optimizer(configured):
        return [configured], []
    if isinstance(configured, dict):
        configured = [configured]
    if isinstance(configured, (list, tuple)) and len(configured) == 2 and isinstance(configured[0], (list, tuple)):
        return list(configured[0]), [scheduler(s) for s in (configured[1] if isinstance(configured[1], (list, tuple))
                                                            else [configured[1]])]
    optimizers, schedulers = [], []
    for item in configured:
        if isinstance(item, dict):
            optimizers.append(item["optimizer"])
            if item.get("lr_scheduler") is not None:
                schedulers.append(scheduler(item["lr_scheduler"]))
        else:
            optimizers.append(item)
    return optimizers, schedulers


class _DefaultLogger:
    """The logger a Trainer built without ``logger=`` gives its module (``self.logger``), as Lightning gives its
    default one: a hook may call ``log_hyperparams`` / ``log_metrics`` / ``save`` / ``finalize`` on it. It keeps
    what it is given in memory and writes nothing."""

    name = "lightning_logs"
    version = 0

    def __init__(self, save_dir: str = "."):
        import os

        self.save_dir = save_dir
        self.log_dir = os.path.join(save_dir, self.name, f"version_{self.version}")
        self.hyperparams: dict = {}
        self.metrics: list = []

    @property
    def root_dir(self) -> str:
        import os

        return os.path.join(self.save_dir, self.name)

    @property
    def experiment(self):
        return self

    def log_hyperparams(self, params, metrics=None) -> None:
        self.hyperparams.update(vars(params) if hasattr(params, "__dict__") and not isinstance(params, dict)
                                else dict(params or {}))
        if metrics:
            self.log_metrics(metrics)

    def log_metrics(self, metrics, step=None) -> None:
        self.metrics.append((step, dict(metrics)))

    def log_graph(self, model, input_array=None) -> None:
        return None

    def save(self) -> None:
        return None

    def finalize(self, status="success") -> None:
        return None


class Trainer:
    """Lightning's ``Trainer`` for the automatic-optimization case, in MindSpore's idiom: each batch's
    ``training_step`` loss differentiated by ``mindspore.value_and_grad`` with respect to the optimizer's parameters,
    then ``optimizer(grads)``; the optimizer and learning-rate scheduler from ``configure_optimizers`` (the converted
    torch optimizer and scheduler); the hooks called in Lightning's order (on_fit_start, on_train_start, per epoch
    on_train_epoch_start, per batch on_train_batch_start/end, the validation loop, on_train_epoch_end, then the
    epoch's scheduler step). The ``logger`` is the module's ``self.logger`` as in Lightning: the one given (a logger
    line the converter keeps as torch code stays that object), none for ``logger=False``, else a default one that
    writes nothing (:class:`_DefaultLogger`); the Trainer itself logs nothing to it. Options of devices, precision,
    callbacks, checkpoints and progress bars are accepted and change nothing (one process, float32, nothing
    written); no sanity validation is run before training.
    Manual optimization, gradient accumulation and several optimizers raise: they have no single MindSpore step."""

    def __init__(self, max_epochs=None, max_steps=-1, limit_train_batches=None, limit_val_batches=None,
                 gradient_clip_val=None, gradient_clip_algorithm="norm", accumulate_grad_batches=1,
                 check_val_every_n_epoch=1, logger=None, default_root_dir=None, **ignored):
        self.max_epochs = 1000 if max_epochs is None and max_steps == -1 else max_epochs if max_epochs is not None \
            else -1
        self.max_steps = max_steps
        self.limit_train_batches = limit_train_batches
        self.limit_val_batches = limit_val_batches
        self.gradient_clip_val = gradient_clip_val
        self.gradient_clip_algorithm = gradient_clip_algorithm
        if accumulate_grad_batches != 1:
            raise NotImplementedError("mindport: Trainer(accumulate_grad_batches=...) has no MindSpore counterpart "
                                      "here: sum the gradients of several batches in your own loop")
        self.check_val_every_n_epoch = check_val_every_n_epoch
        self.current_epoch = 0
        self.global_step = 0
        self.optimizers: list = []
        self.lr_schedulers: list = []
        if isinstance(logger, (list, tuple)):  # several loggers: Lightning's self.logger is the first
            logger = logger[0] if logger else False
        self.logger = None if logger is False else _DefaultLogger(default_root_dir or ".") \
            if logger is None or logger is True else logger
        self.model = None
        self.should_stop = False

    @property
    def callback_metrics(self) -> dict:
        return self.model.callback_metrics if self.model is not None else {}

    @property
    def logged_metrics(self) -> dict:
        return self.callback_metrics

    def _attach(self, model) -> None:
        self.model = model
        model.__dict__["_trainer"] = self

    @staticmethod
    def _limited(loader, limit):
        if limit is None:
            yield from enumerate(loader)
            return
        if isinstance(limit, float):
            limit = int(len(loader) * limit) if limit < 1.0 else None
        for i, batch in enumerate(loader):
            if limit is not None and i >= limit:
                return
            yield i, batch

    @staticmethod
    def _datamodule_in(dataloaders, datamodule):
        """Lightning takes a LightningDataModule given in the loaders' place (``fit(model, dm)``,
        ``validate(model, dm)``) as the data module: (loaders, data module)."""
        if isinstance(dataloaders, DataModuleMembers):
            return None, dataloaders
        return dataloaders, datamodule

    def _loaders(self, model, train_dataloaders, val_dataloaders, datamodule):
        train_dataloaders, datamodule = self._datamodule_in(train_dataloaders, datamodule)
        source = datamodule if datamodule is not None else model
        for each in (datamodule, model):  # Lightning prepares and sets up both, the data module first
            if each is not None:
                each.prepare_data()
                each.setup("fit")
        if train_dataloaders is None:
            train_dataloaders = source.train_dataloader()
        if val_dataloaders is None and hasattr(source, "val_dataloader"):  # the base classes define none
            val_dataloaders = source.val_dataloader()
        return train_dataloaders, val_dataloaders

    def _clip(self, grads):
        from mindspore import ops

        if not self.gradient_clip_val:
            return grads
        if self.gradient_clip_algorithm == "value":
            value = float(self.gradient_clip_val)
            return tuple(ops.clip_by_value(g, -value, value) for g in grads)
        return ops.clip_by_global_norm(grads, float(self.gradient_clip_val))

    def _schedulers_step(self, interval: str) -> None:
        for config in self.lr_schedulers:
            if config["interval"] != interval:
                continue
            if interval == "epoch" and (self.current_epoch + 1) % config["frequency"]:
                continue
            sched = config["scheduler"]
            if type(sched).__name__ == "ReduceLROnPlateau":
                monitor = config.get("monitor")
                if monitor not in self.callback_metrics:
                    raise RuntimeError(f"mindport: ReduceLROnPlateau conditioned on metric {monitor!r}, which "
                                       f"was not logged (logged: {sorted(self.callback_metrics)})")
                sched.step(self.callback_metrics[monitor])
            else:
                sched.step()

    def fit(self, model, train_dataloaders=None, val_dataloaders=None, datamodule=None, ckpt_path=None):
        if not getattr(model, "automatic_optimization", True):
            raise NotImplementedError("mindport: manual optimization (automatic_optimization = False) has no "
                                      "MindSpore Trainer here: write the loop with mindspore.value_and_grad")
        self._attach(model)
        train_loader, val_loader = self._loaders(model, train_dataloaders, val_dataloaders, datamodule)
        self.optimizers, self.lr_schedulers = _optimizers_of(model.configure_optimizers())
        if len(self.optimizers) > 1:
            raise NotImplementedError("mindport: several optimizers need manual optimization (Lightning's rule too)")
        optimizer = self.optimizers[0] if self.optimizers else None
        model.on_fit_start()
        model.on_train_start()
        while (self.max_epochs == -1 or self.current_epoch < self.max_epochs) and not self.should_stop:
            model.set_train(True)
            model.on_train_epoch_start()
            for batch_idx, batch in self._limited(train_loader, self.limit_train_batches):
                if 0 <= self.max_steps <= self.global_step:
                    self.should_stop = True
                    break
                if model.on_train_batch_start(batch, batch_idx) == -1:
                    break
                outputs = self._training_step(model, optimizer, batch, batch_idx)
                model.on_train_batch_end(outputs, batch, batch_idx)
                self._schedulers_step("step")
            if val_loader is not None and (self.current_epoch + 1) % self.check_val_every_n_epoch == 0:
                self._evaluate(model, val_loader, "validation", self.limit_val_batches)
            model.on_train_epoch_end()
            self._schedulers_step("epoch")
            self.current_epoch += 1
        model.on_train_end()
        model.on_fit_end()

    def _training_step(self, model, optimizer, batch, batch_idx):
        outputs = []

        def loss_of():
            out = model.training_step(batch, batch_idx)
            outputs.append(out)
            return out["loss"] if isinstance(out, dict) else out

        if optimizer is None:
            loss_of()
            return outputs[0]
        loss, grads = ms.value_and_grad(loss_of, None, optimizer.parameters)()
        if loss is None:
            return None
        model.on_before_optimizer_step(optimizer)
        optimizer(self._clip(grads))
        self.global_step += 1
        return outputs[0]

    def _evaluate(self, model, loader, stage: str, limit=None) -> dict:
        """The validation/test loop; returns what its steps logged, as Lightning's epoch results: each metric
        averaged over the batches weighted by their sizes (on_epoch=False: its last value), also put in
        ``callback_metrics``."""
        model.set_train(False)
        getattr(model, f"on_{stage}_epoch_start")()
        step = getattr(model, f"{stage}_step")
        logged = model.__dict__["_stage_log"] = {}
        try:
            for batch_idx, batch in self._limited(loader, limit):
                model.__dict__["_stage_batch_size"] = _batch_size(batch)
                step(batch, batch_idx)
        finally:
            model.__dict__.pop("_stage_log", None)
            model.__dict__.pop("_stage_batch_size", None)
        epoch = {name: value if total is None else ms.Tensor(total / value, ms.float32)
                 for name, (total, value) in logged.items()}
        model.callback_metrics.update(epoch)
        getattr(model, f"on_{stage}_epoch_end")()
        model.set_train(True)
        return epoch

    def _stage(self, model, dataloaders, datamodule, stage: str, loader: str, ckpt_path=None):
        """validate/test/predict's start: the model attached, and its loaders, when none are given, from the data
        module (else the model) set up for ``stage``, by its ``{loader}_dataloader``. ``ckpt_path`` (a torch
        checkpoint to load first; "best"/"last" of the checkpoints a Trainer writes) raises: this Trainer writes
        none and reads no torch pickle."""
        if ckpt_path is not None:
            raise NotImplementedError(f"mindport: {stage}(ckpt_path={ckpt_path!r}) loads a Lightning checkpoint (a "
                                      "torch pickle); this Trainer writes none: load the weights yourself")
        model = model or self.model
        self._attach(model)
        dataloaders, datamodule = self._datamodule_in(dataloaders, datamodule)
        if dataloaders is None:
            source = datamodule if datamodule is not None else model
            source.setup(stage)
            dataloaders = getattr(source, f"{loader}_dataloader")()
        return model, dataloaders

    def validate(self, model=None, dataloaders=None, ckpt_path=None, verbose=True, datamodule=None):
        model, dataloaders = self._stage(model, dataloaders, datamodule, "validate", "val", ckpt_path)
        return [self._evaluate(model, dataloaders, "validation", self.limit_val_batches)]

    def test(self, model=None, dataloaders=None, ckpt_path=None, verbose=True, datamodule=None):
        model, dataloaders = self._stage(model, dataloaders, datamodule, "test", "test", ckpt_path)
        return [self._evaluate(model, dataloaders, "test")]

    def predict(self, model=None, dataloaders=None, datamodule=None, return_predictions=None, ckpt_path=None):
        model, dataloaders = self._stage(model, dataloaders, datamodule, "predict", "predict", ckpt_path)
        model.set_train(False)
        step = getattr(model, "predict_step", None)  # Lightning's default: the model called on the batch
        return [step(batch, i) if step is not None else model(batch) for i, batch in enumerate(dataloaders)]
