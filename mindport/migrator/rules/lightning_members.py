"""The converter rule LightningMemberTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/lightning_members.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.mappings.surface import lightning_flagged
from mindport.migrator.rules.base import Example, Rule
from mindport.names import LIGHTNING_MODULE_BASES

_API = "pytorch_lightning.LightningModule"
# overrides of how Lightning's loop steps: nothing calls them in a MindSpore step
_STEP_OVERRIDES = frozenset({"backward", "optimizer_step", "optimizer_zero_grad", "configure_gradient_clipping",
                             "lr_scheduler_step"})


class LightningMemberTransform(Rule):
    """In a class derived from Lightning's ``LightningModule`` (``pl.LightningModule``, ``L.LightningModule``,
    ``lightning.pytorch.LightningModule``: the class rule makes it a Cell whose base is
    ``mindport.runtime.lightning.LightningModule``), a use of a member with no MindSpore counterpart
    (``self.manual_backward(loss)``, ``self.toggle_optimizer(opt)``, ``self.clip_gradients(...)``, ``self.all_gather``,
    ``self.to_torchscript()`` ...: the ``flagged`` rows of ``mappings/data/surface/lightning_surface.toml``) is flagged
    MP106 with the reason, and the line is kept (the converted base raises NotImplementedError with the same reason
    when it runs); so is a method overriding how Lightning's loop steps (``backward``, ``optimizer_step``,
    ``optimizer_zero_grad`` ...), which no MindSpore step calls. Every other member (``self.log``,
    ``self.save_hyperparameters()``, ``self.hparams``, ``self.current_epoch``, the hooks) is the converted base's, with
    Lightning's meaning, and is left as written."""

    EXAMPLES = (
        Example(
            before="""
                import torch
                import pytorch_lightning as pl


                class GAN(pl.LightningModule):
                    def __init__(self):
                        super().__init__()
                        self.automatic_optimization = False

                    def training_step(self, batch, batch_idx):
                        opt = self.optimizers()
                        loss = self(batch).mean()
                        self.manual_backward(loss)
                        opt.step()
                        self.log("loss", loss)
            """,
            after="""
                from mindport.runtime import training as mp_train
                from mindport.runtime import lightning as mp_lightning


                class GAN(mp_lightning.LightningModule):
                    def __init__(self):
                        super().__init__()
                        self.automatic_optimization = False

                    def training_step(self, batch, batch_idx):
                        opt = self.optimizers()
                        loss = self(batch).mean()
                        self.manual_backward(loss)  # mindport: MP106 pytorch_lightning.LightningModule.manual_backward: MindSpore has no backward on a loss: gradients come from mindspore.value_and_grad over a function computing the loss; the line keeps it (the converted base raises NotImplementedError with this reason)
                        opt(mp_train.grads_of(opt))
                        self.log("loss", loss)
            """,
            note="Manual optimization's backward has no MindSpore counterpart: flagged, kept; self.optimizers() and "
                 "self.log are the runtime base's.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._lightning: set[str] = set()  # the file's classes derived from LightningModule (directly or in the file)
        self._stack: list[tuple[bool, set[str]]] = []  # per class: a Lightning class?, the methods it defines

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        lightning = any(arg.keyword is None and (self.scope.resolve(arg.value) in LIGHTNING_MODULE_BASES
                                                 or isinstance(arg.value, cst.Name) and arg.value.value in self._lightning)
                        for arg in node.bases)
        if lightning:
            self._lightning.add(node.name.value)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        self._stack.append((lightning, {s.name.value for s in body if isinstance(s, cst.FunctionDef)}))

    def leave_ClassDef(self, original_node, updated_node):
        self._stack.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._stack and self._stack[-1][0] and node.name.value in _STEP_OVERRIDES:
            self.flag(node, "MP106", f"{_API}.{node.name.value} overridden: {lightning_flagged(node.name.value)}; "
                      "the method is kept and no MindSpore step calls it",
                      "fold what it does into training_step or the training loop", api=f"{_API}.{node.name.value}")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not (self._stack and self._stack[-1][0] and isinstance(node.value, cst.Name) and node.value.value == "self"):
            return
        name = node.attr.value
        why = lightning_flagged(name)
        if why is None or name in self._stack[-1][1]:
            return
        self.flag(node, "MP106", f"{_API}.{name}: {why}; the line keeps it (the converted base raises "
                  "NotImplementedError with this reason)", "write it in MindSpore's idiom by hand", api=f"{_API}.{name}")
