"""PyTorch Lightning (issue 29): a LightningModule subclass converts to a MindSpore Cell (its base
``mindport.runtime.lightning.LightningModule``, forward -> construct), whatever the import spelling; its hooks stay
methods converted like any; save_hyperparameters / hparams / log behave as the installed pytorch_lightning's; a
LightningDataModule becomes a plain class; members with no MindSpore counterpart are flagged MP106. The torch side is
the real pytorch_lightning (the dev extra pins it)."""
from __future__ import annotations

import importlib.util
import sys
import textwrap

import numpy as np
import pytest

pl = pytest.importorskip("pytorch_lightning")
import torch  # noqa: E402

from mindport import convert_source  # noqa: E402
from mindport.mappings import load_registry  # noqa: E402

CLASSIFIER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    {import_line}


    class Tagger({base}):
        def __init__(self, width=8, tags=3, lr=0.02):
            super().__init__()
            self.save_hyperparameters()
            self.body = nn.Sequential(nn.Linear(width, 16), nn.ReLU(), nn.Linear(16, tags))

        def forward(self, x):
            return self.body(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
""")
SPELLINGS = [("import pytorch_lightning as pl", "pl.LightningModule"),
             ("import lightning as L", "L.LightningModule"),
             ("import lightning.pytorch as lp", "lp.LightningModule"),
             ("from lightning.pytorch import LightningModule", "LightningModule"),
             ("from pytorch_lightning.core.module import LightningModule", "LightningModule")]


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _pair(tmp_path, import_line, base, name):
    source = CLASSIFIER.format(import_line=import_line, base=base)
    result = convert_source(source)
    (tmp_path / f"{name}_ms.py").write_text(result.code)
    return source, result


@pytest.mark.parametrize(("import_line", "base"), SPELLINGS, ids=[s[1] + ":" + s[0].split()[1] for s in SPELLINGS])
def test_every_import_spelling_converts_to_a_cell_with_construct(import_line, base):
    result = convert_source(CLASSIFIER.format(import_line=import_line, base=base))
    code = result.code
    assert "class Tagger(mp_lightning.LightningModule):" in code
    assert "def construct(self, x):" in code and "def forward" not in code
    assert "lightning" not in code.replace("mp_lightning", "").replace("import lightning as", "")
    assert result.diagnostics == []


def test_a_converted_lightning_classifier_matches_the_real_one(tmp_path):
    """forward, training_step's loss, what it logged, hparams and configure_optimizers' optimizer, on the same
    weights: before, the class kept pl.LightningModule as its base around MindSpore layers and ran nowhere."""
    import mindspore as ms

    source, result = _pair(tmp_path, *SPELLINGS[0], "lt_classifier")
    (tmp_path / "lt_classifier_torch.py").write_text(source)
    t_mod = _load(tmp_path / "lt_classifier_torch.py", "lt_classifier_torch")
    m_mod = _load(tmp_path / "lt_classifier_ms.py", "lt_classifier_ms")
    torch.manual_seed(0)
    t_model, m_model = t_mod.Tagger(tags=4, lr=0.05), m_mod.Tagger(tags=4, lr=0.05)
    assert isinstance(m_model, ms.nn.Cell)
    t_state = {k: v.detach().numpy() for k, v in t_model.state_dict().items()}
    m_params = {p.name: p for p in m_model.get_parameters()}
    assert sorted(m_params) == sorted(t_state)
    for name, value in t_state.items():
        m_params[name].set_data(ms.Tensor(value))
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    y = np.array([0, 3, 1, 2, 3], dtype=np.int64)
    np.testing.assert_allclose(m_model(ms.Tensor(x)).asnumpy(), t_model(torch.tensor(x)).detach().numpy(), atol=1e-5)
    t_loss = t_model.training_step((torch.tensor(x), torch.tensor(y)), 0)
    m_loss = m_model.training_step((ms.Tensor(x), ms.Tensor(y)), 0)
    assert abs(float(m_loss.asnumpy()) - float(t_loss)) < 1e-5
    assert float(m_model.callback_metrics["train_loss"].asnumpy()) == pytest.approx(float(t_loss), abs=1e-5)
    assert dict(m_model.hparams) == dict(t_model.hparams) == {"width": 8, "tags": 4, "lr": 0.05}
    assert m_model.hparams.lr == t_model.hparams.lr and m_model.current_epoch == t_model.current_epoch == 0
    t_opt, m_opt = t_model.configure_optimizers(), m_model.configure_optimizers()
    assert type(m_opt).__name__ == type(t_opt).__name__ == "Adam"
    assert {p.name for p in m_opt.parameters} == set(m_params)
    with pytest.raises(RuntimeError, match="not attached to a `Trainer`"):
        t_model.trainer
    with pytest.raises(RuntimeError, match="not attached to a `Trainer`"):
        m_model.trainer


HPARAM_FORMS = textwrap.dedent("""
    import argparse
    import torch.nn as nn
    import pytorch_lightning as pl


    class Base(pl.LightningModule):
        def __init__(self, width, depth=2, **kwargs):
            super().__init__()
            self.fc = nn.Linear(width, depth)


    class AllOfThem(Base):
        def __init__(self, width=4, act="relu", drop=0.1, **kwargs):
            super().__init__(width, **kwargs)
            self.save_hyperparameters(ignore=["drop"])


    class Named(pl.LightningModule):
        def __init__(self, a=1, b=2, c=3):
            super().__init__()
            self.save_hyperparameters("a", "c")


    class Whole(pl.LightningModule):
        def __init__(self, config):
            super().__init__()
            self.save_hyperparameters(config)


    class Never(pl.LightningModule):
        def __init__(self, a=1):
            super().__init__()


    def made():
        return [AllOfThem(extra=7), Named(b=5, c=9), Whole({"lr": 0.5, "layers": [1, 2]}),
                Whole(argparse.Namespace(lr=0.1)), Never()]
""")


def test_save_hyperparameters_reads_what_the_real_one_reads(tmp_path):
    """Each form of save_hyperparameters (all arguments, a subclass's through its base's __init__, **kwargs, ignore=,
    named arguments, one dict or Namespace, never called) gives the hparams the installed Lightning gives."""
    (tmp_path / "lt_hp_torch.py").write_text(HPARAM_FORMS)
    (tmp_path / "lt_hp_ms.py").write_text(convert_source(HPARAM_FORMS).code)
    t_made = _load(tmp_path / "lt_hp_torch.py", "lt_hp_torch").made()
    m_made = _load(tmp_path / "lt_hp_ms.py", "lt_hp_ms").made()
    import mindspore as ms

    assert all(isinstance(m, ms.nn.Cell) for m in m_made)
    assert [dict(m.hparams) for m in m_made] == [dict(t.hparams) for t in t_made]
    assert dict(m_made[0].hparams) == {"width": 4, "act": "relu", "extra": 7}
    assert [dict(m.hparams_initial) for m in m_made] == [dict(t.hparams_initial) for t in t_made]
    assert m_made[1].hparams.c == t_made[1].hparams.c == 9


DATAMODULE = textwrap.dedent("""
    import torch
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader, TensorDataset


    class Numbers(pl.LightningDataModule):
        def __init__(self, n=12, batch_size=4):
            super().__init__()
            self.save_hyperparameters()

        def setup(self, stage=None):
            x = torch.arange(self.hparams.n, dtype=torch.float32).reshape(-1, 1)
            self.train_set = TensorDataset(x, x * 2)

        def train_dataloader(self):
            return DataLoader(self.train_set, batch_size=self.hparams.batch_size)
""")


def test_a_datamodule_is_a_plain_class_whose_loader_gives_the_same_batches(tmp_path):
    (tmp_path / "lt_dm_torch.py").write_text(DATAMODULE)
    code = convert_source(DATAMODULE).code
    assert "class Numbers(mp_lightning.LightningDataModule):" in code
    (tmp_path / "lt_dm_ms.py").write_text(code)
    t_dm = _load(tmp_path / "lt_dm_torch.py", "lt_dm_torch").Numbers(batch_size=5)
    m_dm = _load(tmp_path / "lt_dm_ms.py", "lt_dm_ms").Numbers(batch_size=5)
    import mindspore as ms

    assert not isinstance(m_dm, ms.nn.Cell) and dict(m_dm.hparams) == dict(t_dm.hparams)
    for dm in (t_dm, m_dm):
        dm.prepare_data()
        dm.setup("fit")
    t_batches = [[v.numpy() for v in b] for b in t_dm.train_dataloader()]
    m_batches = [[np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for v in b]
                 for b in m_dm.train_dataloader()]
    assert len(m_batches) == len(t_batches) == 3
    for tb, mb in zip(t_batches, m_batches):
        for t, m in zip(tb, mb):
            np.testing.assert_allclose(m, t)


def test_the_surface_table_accounts_for_every_member_of_the_installed_lightning():
    """Every public member pytorch_lightning's classes have beyond torch.nn.Module (the data module's: beyond
    object) is a row of lightning_surface.toml, and no row names a member Lightning lacks."""
    from mindport.mappings.surface import load_lightning_surface

    rows = load_lightning_surface()
    for cls, beyond, owner in ((pl.LightningModule, torch.nn.Module, "pytorch_lightning.LightningModule"),
                               (pl.LightningDataModule, object, "pytorch_lightning.LightningDataModule")):
        installed = {n for n in set(dir(cls)) - set(dir(beyond)) if not n.startswith("_")}
        listed = [m.name for m in rows if m.owner == owner]
        assert len(listed) == len(set(listed))
        assert set(listed) == installed | ({"forward"} if beyond is torch.nn.Module else set())


def test_the_runtime_bases_have_every_runtime_member_and_raise_for_the_flagged():
    from mindport.mappings.surface import load_lightning_surface
    from mindport.runtime import lightning as mp_lightning

    class Tiny(mp_lightning.LightningModule):
        def construct(self, x):
            return x

    class Data(mp_lightning.LightningDataModule):
        pass

    made = {"pytorch_lightning.LightningModule": Tiny(), "pytorch_lightning.LightningDataModule": Data()}
    for member in load_lightning_surface():
        obj = made[member.owner]
        if member.ends == "runtime":
            if member.name != "trainer":  # raises unattached, as Lightning's
                getattr(obj, member.name)
        elif member.ends == "flagged":
            with pytest.raises(NotImplementedError, match=f"mindport: .*{member.name}"):
                getattr(obj, member.name)()
        elif member.name in ("forward", "training_step", "validation_step", "test_step", "predict_step") \
                or member.name.endswith("_dataloader"):
            continue  # the model's own
        elif member.owner.endswith("LightningModule") and member.name != "configure_optimizers":
            assert callable(getattr(obj, member.name))  # a hook with a default
    assert Tiny().on_before_batch_transfer([1], 0) == [1] and Tiny().on_train_start() is None


def test_the_mapping_entry_and_the_module_bases_name_the_same_classes():
    from mindport.names import LIGHTNING_MODULE_BASES

    entry = load_registry().lookup("pytorch_lightning.LightningModule")
    assert {entry.torch, *entry.aliases} == LIGHTNING_MODULE_BASES
    assert "mindport.runtime.lightning.LightningModule" in str(entry.targets)


def test_members_with_no_mindspore_counterpart_are_flagged_and_kept():
    source = textwrap.dedent("""
        import lightning as L


        class Manual(L.LightningModule):
            def training_step(self, batch, batch_idx):
                loss = self(batch).sum()
                self.manual_backward(loss)
                self.clip_gradients(self.optimizers(), 1.0)
                return loss

            def optimizer_zero_grad(self, epoch, batch_idx, optimizer):
                optimizer.zero_grad(set_to_none=True)

            def own(self):
                return self.to_onnx("m.onnx")
    """)
    result = convert_source(source)
    assert sorted((d.code, d.api) for d in result.diagnostics) == [
        ("MP106", "pytorch_lightning.LightningModule.clip_gradients"),
        ("MP106", "pytorch_lightning.LightningModule.manual_backward"),
        ("MP106", "pytorch_lightning.LightningModule.optimizer_zero_grad"),
        ("MP106", "pytorch_lightning.LightningModule.to_onnx")]
    assert "self.manual_backward(loss)" in result.code and "mp_lightning.LightningModule" in result.code


FIT = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader, TensorDataset


    class Fitted(pl.LightningModule):
        def __init__(self, lr=0.05):
            super().__init__()
            self.save_hyperparameters()
            self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
            self.losses, self.epochs_seen, self.val = [], [], []

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y)
            self.losses.append(loss.item())
            self.log("train_loss", loss)
            return loss

        def on_train_epoch_start(self):
            self.epochs_seen.append(self.current_epoch)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.val.append(F.cross_entropy(self(x), y).item())

        def configure_optimizers(self):
            opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
            return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)}


    def fit(model, x, y):
        train = DataLoader(TensorDataset(x, y), batch_size=4)
        val = DataLoader(TensorDataset(x[:4], y[:4]), batch_size=4)
        trainer = pl.Trainer(max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, num_sanity_val_steps=0, accelerator="cpu")
        trainer.fit(model, train, val)
        return trainer
""")


def test_trainer_fit_takes_the_steps_torchs_trainer_takes(tmp_path):
    """pl.Trainer(max_epochs=3).fit(model, train, val) -> mindport.runtime.lightning.Trainer: value_and_grad over
    training_step, configure_optimizers' SGD with momentum and its StepLR stepped per epoch, the hooks and the
    validation loop: the nine losses and the weights after fit track the installed Trainer's."""
    import mindspore as ms

    code = convert_source(FIT).code
    assert "mp_lightning.Trainer(" in code and "pytorch_lightning" not in code
    (tmp_path / "lt_fit_torch.py").write_text(FIT)
    (tmp_path / "lt_fit_ms.py").write_text(code)
    t_mod, m_mod = _load(tmp_path / "lt_fit_torch.py", "lt_fit_torch"), _load(tmp_path / "lt_fit_ms.py", "lt_fit_ms")
    torch.manual_seed(3)
    t_model, m_model = t_mod.Fitted(), m_mod.Fitted()
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_trainer = t_mod.fit(t_model, torch.tensor(x), torch.tensor(y))
    m_trainer = m_mod.fit(m_model, ms.Tensor(x), ms.Tensor(y))
    assert len(m_model.losses) == len(t_model.losses) == 9
    np.testing.assert_allclose(m_model.losses, t_model.losses, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m_model.val, t_model.val, rtol=1e-4, atol=1e-5)
    assert m_model.epochs_seen == t_model.epochs_seen == [0, 1, 2]
    assert m_trainer.global_step == t_trainer.global_step == 9 and m_trainer.current_epoch == t_trainer.current_epoch
    for name, value in t_model.state_dict().items():
        np.testing.assert_allclose(m_params[name].asnumpy(), value.numpy(), rtol=1e-4, atol=1e-5)
    assert float(m_trainer.callback_metrics["train_loss"].asnumpy()) == pytest.approx(
        float(t_trainer.callback_metrics["train_loss"]), abs=1e-5)


FIT_DATAMODULE = FIT + textwrap.dedent("""


    class Pairs(pl.LightningDataModule):
        def __init__(self, x, y, batch_size=5):
            super().__init__()
            self.x, self.y, self.batch_size = x, y, batch_size

        def setup(self, stage=None):
            self.train_set = TensorDataset(self.x, self.y)

        def train_dataloader(self):
            return DataLoader(self.train_set, batch_size=self.batch_size)


    def fit_data(model, x, y):
        trainer = pl.Trainer(max_steps=5, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False)
        trainer.fit(model, datamodule=Pairs(x, y))
        return trainer
""")


def test_trainer_fit_with_a_datamodule_and_max_steps(tmp_path):
    """fit(model, datamodule=...): the data module's setup and train_dataloader; max_steps=5 over batches of 5 of 12
    samples stops in the second epoch (the last batch of 2 is a step too), as the installed Trainer does."""
    import mindspore as ms

    (tmp_path / "lt_fitdm_torch.py").write_text(FIT_DATAMODULE)
    (tmp_path / "lt_fitdm_ms.py").write_text(convert_source(FIT_DATAMODULE).code)
    t_mod = _load(tmp_path / "lt_fitdm_torch.py", "lt_fitdm_torch")
    m_mod = _load(tmp_path / "lt_fitdm_ms.py", "lt_fitdm_ms")
    torch.manual_seed(5)
    t_model, m_model = t_mod.Fitted(lr=0.1), m_mod.Fitted(lr=0.1)
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_trainer = t_mod.fit_data(t_model, torch.tensor(x), torch.tensor(y))
    m_trainer = m_mod.fit_data(m_model, ms.Tensor(x), ms.Tensor(y))
    assert len(m_model.losses) == len(t_model.losses) == 5
    np.testing.assert_allclose(m_model.losses, t_model.losses, rtol=1e-4, atol=1e-5)
    assert m_model.epochs_seen == t_model.epochs_seen == [0, 1]
    assert m_trainer.global_step == t_trainer.global_step == 5


def test_the_legacy_hparams_assignment_builds_on_both_sides(tmp_path):
    """``self.hparams = hparams`` (Lightning before 0.9, frequent in repositories; 2.x refuses it): the converted
    Cell takes it as save_hyperparameters(hparams) would, and so does the torch reference discovery uses when the
    package is missing, so such a model builds and is compared."""
    import argparse

    import mindspore as ms

    from mindport.discovery.package_references import pytorch_lightning as reference

    source = textwrap.dedent("""
        import pytorch_lightning as pl
        from torch import nn


        class Legacy(pl.LightningModule):
            def __init__(self, hparams):
                super().__init__()
                self.hparams = hparams
                self.fc = nn.Linear(hparams.width, 2)

            def forward(self, x):
                return self.fc(x) * self.hparams.scale
    """)
    (tmp_path / "lt_legacy_ms.py").write_text(convert_source(source).code)
    m_model = _load(tmp_path / "lt_legacy_ms.py", "lt_legacy_ms").Legacy(argparse.Namespace(width=3, scale=2.0))
    namespace = {"pl": reference}
    exec(compile(source.replace("import pytorch_lightning as pl", ""), "legacy", "exec"), namespace)
    t_model = namespace["Legacy"](argparse.Namespace(width=3, scale=2.0))
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(m_model(ms.Tensor(x)).asnumpy(), t_model(torch.tensor(x)).detach().numpy(), atol=1e-6)
    assert dict(m_model.hparams) == dict(t_model.hparams) == {"width": 3, "scale": 2.0}


OPTIMIZER_FORMS = {
    "lists": "opt = torch.optim.Adam(self.parameters(), lr=0.05)\n"
             "        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.3)]",
    "plateau": "opt = torch.optim.SGD(self.parameters(), lr=0.2)\n"
               "        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)\n"
               "        return {'optimizer': opt, 'lr_scheduler': {'scheduler': sched, 'monitor': 'train_loss'}}",
    "per step": "opt = torch.optim.SGD(self.parameters(), lr=0.2)\n"
                "        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.7)\n"
                "        return {'optimizer': opt, 'lr_scheduler': {'scheduler': sched, 'interval': 'step'}}",
}


@pytest.mark.parametrize("form", sorted(OPTIMIZER_FORMS))
def test_trainer_reads_configure_optimizers_forms_as_lightning_does(tmp_path, form):
    """configure_optimizers returning ([optimizers], [schedulers]), a dict whose ReduceLROnPlateau is stepped on a
    logged metric, and a scheduler stepped per batch ('interval': 'step'): the weights after fit match the installed
    Trainer's (a scheduler stepped at the wrong time moves them)."""
    import mindspore as ms

    source = FIT.replace(FIT[FIT.index("opt = torch.optim.SGD"):FIT.index("\n\n\ndef fit")], OPTIMIZER_FORMS[form])
    name = "lt_form_" + form.replace(" ", "_")
    (tmp_path / f"{name}_torch.py").write_text(source)
    (tmp_path / f"{name}_ms.py").write_text(convert_source(source).code)
    t_mod, m_mod = _load(tmp_path / f"{name}_torch.py", f"{name}_torch"), _load(tmp_path / f"{name}_ms.py", f"{name}_ms")
    torch.manual_seed(7)
    t_model, m_model = t_mod.Fitted(), m_mod.Fitted()
    m_params = {p.name: p for p in m_model.get_parameters()}
    for key, value in t_model.state_dict().items():
        m_params[key].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_mod.fit(t_model, torch.tensor(x), torch.tensor(y))
    m_mod.fit(m_model, ms.Tensor(x), ms.Tensor(y))
    np.testing.assert_allclose(m_model.losses, t_model.losses, rtol=1e-4, atol=1e-5)
    for key, value in t_model.state_dict().items():
        np.testing.assert_allclose(m_params[key].asnumpy(), value.numpy(), rtol=1e-4, atol=1e-5)


FIT_VALIDATE = FIT + textwrap.dedent("""


    def fit_and_validate(model, x, y):
        trainer = fit(model, x, y)
        model.val.clear()
        trainer.validate(model, DataLoader(TensorDataset(x[4:], y[4:]), batch_size=4))
        return trainer
""")


def test_trainer_validate_after_fit_runs_the_validation_loop_as_lightning_does(tmp_path):
    """trainer.validate(model, loader) after fit: validation_step over the loader given, at the fitted weights, the
    same losses as the installed Trainer's validate."""
    import mindspore as ms

    (tmp_path / "lt_val_torch.py").write_text(FIT_VALIDATE)
    (tmp_path / "lt_val_ms.py").write_text(convert_source(FIT_VALIDATE).code)
    t_mod, m_mod = _load(tmp_path / "lt_val_torch.py", "lt_val_torch"), _load(tmp_path / "lt_val_ms.py", "lt_val_ms")
    torch.manual_seed(7)
    t_model, m_model = t_mod.Fitted(), m_mod.Fitted()
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_mod.fit_and_validate(t_model, torch.tensor(x), torch.tensor(y))
    m_mod.fit_and_validate(m_model, ms.Tensor(x), ms.Tensor(y))
    assert len(m_model.val) == len(t_model.val) == 2
    np.testing.assert_allclose(m_model.val, t_model.val, rtol=1e-4, atol=1e-5)


FIT_LOGGER = FIT + textwrap.dedent("""


    class Logged(Fitted):
        def on_train_start(self):
            self.seen_logger = self.logger is not None
            if self.logger is not None:
                self.logger.log_hyperparams(self.hparams)


    def fit_logged(model, x, y, logger):
        trainer = pl.Trainer(max_epochs=1, logger=logger, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, accelerator="cpu")
        trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=4))
        return trainer


    def csv_logger(folder):
        return pl.loggers.CSVLogger(save_dir=folder, name="logs")
""")


@pytest.mark.parametrize("logger", ["given", "default", "off"])
def test_the_trainers_logger_is_the_modules_logger_as_in_lightning(tmp_path, monkeypatch, logger):
    """Trainer(logger=L): a hook's ``self.logger`` is L (a CSV logger kept as torch code writes the hparams it is
    given); Trainer() without one: Lightning's default logger, whose log_hyperparams a hook calls; logger=False:
    None. Both sides train to the same losses and see the same logger."""
    import mindspore as ms

    code = convert_source(FIT_LOGGER).code
    (tmp_path / "lt_log_torch.py").write_text(FIT_LOGGER)
    (tmp_path / "lt_log_ms.py").write_text(code)
    t_mod, m_mod = _load(tmp_path / "lt_log_torch.py", "lt_log_torch"), _load(tmp_path / "lt_log_ms.py", "lt_log_ms")
    torch.manual_seed(11)
    t_model, m_model = t_mod.Logged(lr=0.2), m_mod.Logged(lr=0.2)
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.integers(0, 3, 8).astype(np.int64)
    monkeypatch.chdir(tmp_path)  # Lightning's default logger writes under the working directory
    sides = {}
    for side, mod, tx, ty in (("torch", t_mod, torch.tensor(x), torch.tensor(y)),
                              ("ms", m_mod, ms.Tensor(x), ms.Tensor(y))):
        folder = tmp_path / side
        given = {"given": lambda: mod.csv_logger(str(folder)), "default": lambda: None, "off": lambda: False}[logger]()
        sides[side] = mod.fit_logged(t_model if side == "torch" else m_model, tx, ty, given)
    assert m_model.seen_logger == t_model.seen_logger == (logger != "off")
    np.testing.assert_allclose(m_model.losses, t_model.losses, rtol=1e-4, atol=1e-5)
    assert len(m_model.losses) == 2
    if logger == "given":
        written = [(tmp_path / side / "logs" / "version_0" / "hparams.yaml").read_text() for side in ("torch", "ms")]
        assert written[0] == written[1] and "lr: 0.2" in written[1]


FIT_DATAMODULE_POSITIONAL = FIT_DATAMODULE + textwrap.dedent("""


    def fit_and_test_positional(model, x, y):
        trainer = pl.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False)
        data = Pairs(x, y)
        trainer.fit(model, data)
        model.val.clear()
        data.val_dataloader = data.train_dataloader
        trainer.validate(model, data)
        return trainer
""")


def test_a_datamodule_passed_where_the_loaders_go_is_taken_as_lightning_takes_it(tmp_path):
    """trainer.fit(model, dm) and trainer.validate(model, dm): Lightning takes a LightningDataModule given in the
    loaders' place as the data module (its setup and loaders); the same losses and validation losses as the
    installed Trainer."""
    import mindspore as ms

    (tmp_path / "lt_fitpos_torch.py").write_text(FIT_DATAMODULE_POSITIONAL)
    (tmp_path / "lt_fitpos_ms.py").write_text(convert_source(FIT_DATAMODULE_POSITIONAL).code)
    t_mod = _load(tmp_path / "lt_fitpos_torch.py", "lt_fitpos_torch")
    m_mod = _load(tmp_path / "lt_fitpos_ms.py", "lt_fitpos_ms")
    torch.manual_seed(9)
    t_model, m_model = t_mod.Fitted(lr=0.1), m_mod.Fitted(lr=0.1)
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_mod.fit_and_test_positional(t_model, torch.tensor(x), torch.tensor(y))
    m_mod.fit_and_test_positional(m_model, ms.Tensor(x), ms.Tensor(y))
    assert len(m_model.losses) == len(t_model.losses) == 6
    np.testing.assert_allclose(m_model.losses, t_model.losses, rtol=1e-4, atol=1e-5)
    assert len(m_model.val) == len(t_model.val) == 3
    np.testing.assert_allclose(m_model.val, t_model.val, rtol=1e-4, atol=1e-5)


FIT_TEST_PREDICT = FIT + textwrap.dedent("""


    class Tested(Fitted):
        def test_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y)
            self.val.append(loss.item())
            self.log("test_loss", loss)

        def predict_step(self, batch, batch_idx):
            x, _ = batch
            return self(x).argmax(dim=1)


    def fit_test_predict(model, x, y):
        trainer = fit(model, x, y)
        model.val.clear()
        held_out = DataLoader(TensorDataset(x[2:], y[2:]), batch_size=4)
        results = trainer.test(model, held_out, verbose=False)
        predictions = trainer.predict(model, held_out)
        return results, predictions
""")


def test_trainer_test_and_predict_after_fit_give_what_lightning_gives(tmp_path):
    """trainer.test(model, loader) returns Lightning's epoch results: each metric test_step logs averaged over the
    epoch's batches weighted by their sizes (10 samples: batches of 4, 4, 2), not its last batch's value; and
    trainer.predict(model, loader) the predict_step outputs, batch by batch; both vs the installed Trainer."""
    import mindspore as ms

    (tmp_path / "lt_tp_torch.py").write_text(FIT_TEST_PREDICT)
    (tmp_path / "lt_tp_ms.py").write_text(convert_source(FIT_TEST_PREDICT).code)
    t_mod, m_mod = _load(tmp_path / "lt_tp_torch.py", "lt_tp_torch"), _load(tmp_path / "lt_tp_ms.py", "lt_tp_ms")
    torch.manual_seed(13)
    t_model, m_model = t_mod.Tested(), m_mod.Tested()
    m_params = {p.name: p for p in m_model.get_parameters()}
    for name, value in t_model.state_dict().items():
        m_params[name].set_data(ms.Tensor(value.numpy()))
    rng = np.random.default_rng(6)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    t_res, t_pred = t_mod.fit_test_predict(t_model, torch.tensor(x), torch.tensor(y))
    m_res, m_pred = m_mod.fit_test_predict(m_model, ms.Tensor(x), ms.Tensor(y))
    np.testing.assert_allclose(m_model.val, t_model.val, rtol=1e-4, atol=1e-5)
    assert len(m_res) == len(t_res) == 1 and set(m_res[0]) == set(t_res[0]) == {"test_loss"}
    assert float(m_res[0]["test_loss"]) == pytest.approx(float(t_res[0]["test_loss"]), rel=1e-4, abs=1e-5)
    assert len(m_pred) == len(t_pred) == 3
    for m, t in zip(m_pred, t_pred):
        np.testing.assert_array_equal(np.asarray(m.asnumpy()), t.numpy())
