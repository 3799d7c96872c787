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

__all__ = ["AttributeDict", "LightningDataModule", "LightningModule"]


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
