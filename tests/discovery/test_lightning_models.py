"""`mindport migrate REPO` on Lightning repositories (issue 29): LightningModule subclasses are model classes,
discovered and proven forward (torch vs MindSpore), with the real pytorch_lightning when installed and with the
stand-in (``discovery/package_references/pytorch_lightning``: an nn.Module with save_hyperparameters, hparams and
log) for a spelling this machine lacks (``import lightning as L``: only pytorch_lightning is installed). Before, the
repository's models were "0 discovered". Fixture repositories written for this test; real torch and MindSpore."""
from __future__ import annotations

import importlib.util

import pytest

LIGHTNING_APP = {
    "app/nets.py": '''import torch
import torch.nn as nn


class Features(nn.Module):
    """A plain torch backbone the Lightning module wraps (as a repository wraps torchvision's AlexNet)."""

    def __init__(self, channels=3, width=8):
        super().__init__()
        self.conv = nn.Conv2d(channels, width, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(2)

    def forward(self, x):
        return torch.flatten(self.pool(torch.relu(self.conv(x))), 1)
''',
    "app/system.py": '''import torch
import torch.nn.functional as F
import lightning as L

from app.nets import Features


class AudioSystem(L.LightningModule):
    def __init__(self, n_classes=5, channels=1, width=8, lr=3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.features = Features(channels, width)
        self.head = torch.nn.Linear(4 * width, n_classes)

    def forward(self, x):
        return self.head(self.features(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log_dict({"loss": loss, "epoch": float(self.current_epoch)}, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self(x).argmax(-1) == y).float().mean())

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=5)}


class Calibrated(AudioSystem):
    """A subclass of a LightningModule subclass, with hparams of its own read in forward."""

    def __init__(self, temperature=2.0, **kwargs):
        super().__init__(**kwargs)
        self.save_hyperparameters()

    def forward(self, x):
        return super().forward(x) / self.hparams.temperature


class Data(L.LightningDataModule):
    def __init__(self, batch_size=4):
        super().__init__()
        self.save_hyperparameters()
''',
    "app/__init__.py": "",
    "train.py": '''import lightning as L
from app.system import AudioSystem

if __name__ == "__main__":
    model = AudioSystem(n_classes=3, channels=2)
    L.Trainer(max_epochs=3).fit(model)
''',
}


def _migrate(tmp_path, files):
    from mindport.migrate import migrate

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    report = migrate(src, out, export=False)
    return {m["class"]: m for m in report.models}, out


def test_lightning_modules_are_discovered_and_proven_with_the_stand_in(tmp_path):
    """``lightning`` is not installed: the stand-in LightningModule is an nn.Module with save_hyperparameters and
    hparams, so the torch models build (from the repository's own call: n_classes=3, channels=2) and the converted
    Cells are proven against them."""
    stand_in = importlib.util.find_spec("lightning") is None  # only pytorch_lightning is in the dev extra
    models, out = _migrate(tmp_path, LIGHTNING_APP)
    assert {"app/system.py:AudioSystem", "app/system.py:Calibrated", "app/nets.py:Features"} <= set(models), models
    assert "app/system.py:Data" not in models  # a data module is no model
    for key in ("app/system.py:AudioSystem", "app/system.py:Calibrated"):
        assert models[key]["status"] == "proven", models[key]
        assert ("lightning" in models[key]["stubbed"]) is stand_in
    assert models["app/system.py:AudioSystem"]["ctor"].replace(" ", "") == "n_classes=3,channels=2"
    converted = (out / "app" / "system.py").read_text()
    assert "class AudioSystem(mp_lightning.LightningModule):" in converted and "def construct(self, x):" in converted


PL_APP = {
    "model.py": '''import torch.nn as nn
import pytorch_lightning as pl


class Regressor(pl.LightningModule):
    def __init__(self, n_in=6, hidden=12):
        super().__init__()
        self.save_hyperparameters()
        self.mlp = nn.Sequential(nn.Linear(self.hparams.n_in, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.mlp(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("mse", loss)
        return loss
''',
}


def test_a_pytorch_lightning_model_is_proven_against_the_installed_package(tmp_path):
    pytest.importorskip("pytorch_lightning")
    models, _ = _migrate(tmp_path, PL_APP)
    entry = models["model.py:Regressor"]
    assert entry["status"] == "proven", entry
    assert not entry.get("stubbed")  # the real LightningModule on the torch side
    assert entry["inputs"] == ["2x6:float32"]
