"""What a LightningModule / LightningDataModule has beyond the framework's module, written once without a framework:
``mindport.runtime.lightning`` puts it on a MindSpore ``nn.Cell`` (the base a converted LightningModule subclass
gets), ``mindport.discovery.package_references.pytorch_lightning`` on torch's ``nn.Module`` (the torch side of a
proof when pytorch_lightning is not installed). The members and how each ends are listed in
``mindport/mappings/data/surface/lightning_surface.toml``.

The behaviour follows Lightning's documentation (written here from that description, not from its code):
``save_hyperparameters()`` reads the arguments of the ``__init__`` calls it sits in (a subclass's win over its base's)
into ``self.hparams``, an attribute dict (``self.hparams.lr`` and ``self.hparams["lr"]``); named arguments keep only
those, a dict or Namespace is taken whole, ``ignore=`` leaves names out. ``self.log``/``log_dict`` outside a trainer
record the value (Lightning warns and drops it); a trainer reads what was logged from ``callback_metrics``.
"""
from __future__ import annotations

import copy
import inspect

# hooks Lightning calls with nothing to do by default: a subclass overrides them, ``super().<hook>(...)`` works
HOOKS = (
    "on_fit_start", "on_fit_end", "on_train_start", "on_train_end", "on_validation_start", "on_validation_end",
    "on_test_start", "on_test_end", "on_predict_start", "on_predict_end", "on_train_epoch_start",
    "on_train_epoch_end", "on_validation_epoch_start", "on_validation_epoch_end", "on_test_epoch_start",
    "on_test_epoch_end", "on_predict_epoch_start", "on_predict_epoch_end", "on_train_batch_start",
    "on_train_batch_end", "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start",
    "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end", "on_before_zero_grad",
    "on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_save_checkpoint",
    "on_load_checkpoint", "on_validation_model_eval", "on_validation_model_train", "on_test_model_eval",
    "on_test_model_train", "on_predict_model_eval", "on_validation_model_zero_grad", "prepare_data", "setup",
    "teardown", "configure_callbacks", "configure_model", "configure_sharded_model")
BATCH_HOOKS = ("on_before_batch_transfer", "on_after_batch_transfer", "transfer_batch_to_device")  # give the batch back


class AttributeDict(dict):
    """Lightning's ``AttributeDict``: a dict whose keys read and write as attributes too."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as err:
            raise AttributeError(f"'AttributeDict' object has no attribute '{key}'") from err

    def __setattr__(self, key, value):
        self[key] = value

    def __delattr__(self, key):
        del self[key]


def init_arguments(frame, obj) -> dict:
    """The arguments of the ``__init__`` calls of ``obj`` from ``frame`` outwards, by name (the outermost, the
    subclass's, last so it wins), ``**kwargs`` merged in; ``self``, ``*args`` and ``**kwargs`` themselves left out."""
    found: list[dict] = []
    while frame is not None and frame.f_code.co_name == "__init__":
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if not names or frame.f_locals.get(names[0]) is not obj:
            break
        local = frame.f_locals
        arguments = {n: local[n] for n in names[1:] if n in local}
        if code.co_flags & inspect.CO_VARKEYWORDS:
            extra = code.co_varnames[code.co_argcount + code.co_kwonlyargcount
                                     + (1 if code.co_flags & inspect.CO_VARARGS else 0)]
            arguments.update(local.get(extra) or {})
        found.append(arguments)
        frame = frame.f_back
    merged: dict = {}
    for arguments in found:
        merged.update(arguments)
    return merged


class HyperparametersMixin:
    """``save_hyperparameters`` / ``hparams`` / ``hparams_initial`` (a LightningModule's and a LightningDataModule's)."""

    CHECKPOINT_HYPER_PARAMS_KEY = "hyper_parameters"
    CHECKPOINT_HYPER_PARAMS_NAME = "hparams_name"
    CHECKPOINT_HYPER_PARAMS_TYPE = "hparams_type"

    def save_hyperparameters(self, *args, ignore=None, frame=None, logger=True):
        if frame is None:
            frame = inspect.currentframe().f_back
        arguments = init_arguments(frame, self)
        ignore = [ignore] if isinstance(ignore, str) else list(ignore or ())
        arguments = {k: v for k, v in arguments.items() if k not in ignore}
        named = [a for a in args if isinstance(a, str)]
        whole = [a for a in args if not isinstance(a, str)]
        if not args:
            hp = arguments
        elif len(whole) == 1 and not named:
            hp = whole[0]
        else:
            hp = {name: arguments[name] for name in named}
        if hasattr(hp, "__dict__") and not isinstance(hp, dict):  # argparse.Namespace
            hp = vars(hp)
        if not isinstance(hp, dict):
            raise ValueError(f"Unsupported config type of {type(hp)}.")
        object.__setattr__(self, "_hparams", AttributeDict(hp))
        object.__setattr__(self, "_hparams_initial", copy.deepcopy(self._hparams))

    @property
    def hparams(self) -> AttributeDict:
        if "_hparams" not in self.__dict__:
            object.__setattr__(self, "_hparams", AttributeDict())
        return self.__dict__["_hparams"]

    @hparams.setter
    def hparams(self, value) -> None:
        # ``self.hparams = hparams`` (Lightning before 0.9, still common in repositories): taken as
        # save_hyperparameters(hparams) takes it; Lightning 2.x has no setter (AttributeError)
        hp = vars(value) if hasattr(value, "__dict__") and not isinstance(value, dict) else dict(value)
        object.__setattr__(self, "_hparams", AttributeDict(hp))
        object.__setattr__(self, "_hparams_initial", copy.deepcopy(self._hparams))

    @property
    def hparams_initial(self) -> AttributeDict:
        return AttributeDict(copy.deepcopy(self.__dict__.get("_hparams_initial", {})))


def _no_op(self, *args, **kwargs):
    return None


class LightningMembers(HyperparametersMixin):
    """The members of a LightningModule beyond its framework's module (the framework's base comes after it)."""

    automatic_optimization = True  # a subclass's ``self.automatic_optimization = False`` sets it on the instance
    example_input_array = None

    def log(self, name, value, prog_bar=False, logger=None, on_step=None, on_epoch=None, *args, batch_size=None,
            **kwargs):
        self.__dict__.setdefault("_logged", {})[name] = value
        stage = self.__dict__.get("_stage_log")
        if stage is not None:  # in a validation/test loop: Lightning's default there is on_epoch=True, the epoch's
            # value the batches' values averaged weighted by their sizes (batch_size=, else the batch's first tensor's)
            if on_epoch is False:
                stage[name] = (None, value)
            else:
                n = batch_size if batch_size is not None else self.__dict__.get("_stage_batch_size", 1)
                total, count = stage.get(name, (0.0, 0))
                stage[name] = (total + float(value) * n, (count or 0) + n)

    def log_dict(self, dictionary, *args, **kwargs):
        for name, value in dictionary.items():
            self.log(name, value)

    @property
    def callback_metrics(self) -> dict:
        return self.__dict__.setdefault("_logged", {})

    @property
    def trainer(self):
        trainer = self.__dict__.get("_trainer")
        if trainer is None:
            raise RuntimeError(f"{type(self).__qualname__} is not attached to a `Trainer`.")
        return trainer

    @property
    def current_epoch(self) -> int:
        trainer = self.__dict__.get("_trainer")
        return trainer.current_epoch if trainer is not None else 0

    @property
    def global_step(self) -> int:
        trainer = self.__dict__.get("_trainer")
        return trainer.global_step if trainer is not None else 0

    @property
    def logger(self):
        trainer = self.__dict__.get("_trainer")
        return getattr(trainer, "logger", None)

    @property
    def loggers(self) -> list:
        logger = self.logger
        return [logger] if logger is not None else []

    local_rank = 0
    global_rank = 0
    on_gpu = False
    strict_loading = True
    fabric = None
    device_mesh = None

    def print(self, *args, **kwargs):
        print(*args, **kwargs)

    def optimizers(self, use_pl_optimizer=True):
        trainer = self.__dict__.get("_trainer")
        found = list(getattr(trainer, "optimizers", ()) or ())
        return found[0] if len(found) == 1 else found

    def lr_schedulers(self):
        trainer = self.__dict__.get("_trainer")
        found = list(getattr(trainer, "lr_schedulers", ()) or ())
        return None if not found else found[0] if len(found) == 1 else found

    def configure_optimizers(self):
        raise NotImplementedError("`configure_optimizers` must be implemented to be used with the Lightning Trainer")


class DataModuleMembers(HyperparametersMixin):
    """A LightningDataModule: a plain class with hparams and the data hooks (each a no-op by default)."""

    prepare_data_per_node = True
    name = None

    def __init__(self, *args, **kwargs):
        pass


def _batch_back(self, batch, *args, **kwargs):
    return batch


for _hook in HOOKS:
    setattr(LightningMembers, _hook, _no_op)
for _hook in BATCH_HOOKS:
    setattr(LightningMembers, _hook, _batch_back)
    setattr(DataModuleMembers, _hook, _batch_back)
for _hook in ("prepare_data", "setup", "teardown", "load_state_dict", "on_exception"):
    setattr(DataModuleMembers, _hook, _no_op)
DataModuleMembers.state_dict = lambda self: {}
