"""torch references of pytorch_lightning's ``LightningModule`` (an ``nn.Module`` with Lightning's members:
``save_hyperparameters``/``hparams``, ``log``, ``current_epoch`` ..., from ``mindport.runtime.lightning_members``,
which the converted code's ``mindport.runtime.lightning`` puts on a Cell) and ``LightningDataModule`` (a plain class),
from their documented behaviour. ``lightning.LightningModule``, ``lightning.pytorch.LightningModule`` ... are these
too (``_REFERENCE_MODULES``). ``Trainer`` has no reference: a stand-in (discovery never trains)."""
import torch
from torch import nn

from mindport.runtime.lightning_members import AttributeDict, DataModuleMembers, LightningMembers


class LightningModule(LightningMembers, nn.Module):
    def __init__(self, *args, **kwargs):
        nn.Module.__init__(self)

    @property
    def device(self):
        return next(iter(self.parameters()), torch.empty(0)).device

    @property
    def dtype(self):
        return next(iter(self.parameters()), torch.empty(0)).dtype

    def freeze(self):
        for param in self.parameters():
            param.requires_grad = False
        self.eval()

    def unfreeze(self):
        for param in self.parameters():
            param.requires_grad = True
        self.train()


class LightningDataModule(DataModuleMembers):
    pass


def seed_everything(seed=None, workers=False, verbose=True):
    import random

    import numpy as np

    seed = 0 if seed is None else int(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    torch.manual_seed(seed)
    return seed


__all__ = ["AttributeDict", "LightningDataModule", "LightningModule", "seed_everything"]
