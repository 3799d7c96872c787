"""``torch.compile`` as the model (or function) itself, for the torch side of a proof or a discovery build.

torch.compile changes speed, not results, and the port maps it so (``mindport/mappings/data/framework.toml``:
``mindport.runtime.framework.compile`` gives the model back). On this machine the reference cannot always compile:
SSS135/pytorch-rl-kit's FCFeatureExtractor compiles its MLP in ``__init__`` (``torch.compile(self.model,
fullgraph=True, mode='max-autotune')``) and every forward raised ("Attempted to call function marked as skipped"),
so nothing was built. The reference runs the model eagerly instead, as the port does, and their parameter names then
agree (no ``_orig_mod.`` inside). Only the torch side; ``install()`` is idempotent and imports torch.
"""
from __future__ import annotations


def install() -> None:
    """``torch.compile(model, ...)`` -> ``model``; ``@torch.compile(...)`` -> the function unchanged."""
    import torch

    if getattr(torch.compile, "_mindport_eager", False):
        return

    def compile(model=None, **options):  # noqa: A001 - torch's own name
        if model is None:
            return lambda fn: fn
        return model

    compile._mindport_eager = True
    compile.__doc__ = install.__doc__
    torch.compile = compile
