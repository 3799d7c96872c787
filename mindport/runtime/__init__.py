"""Small run-time helpers that converted code imports when MindSpore has no built-in equivalent.

* :mod:`mindport.runtime.einops_backend`: an einops backend for MindSpore tensors (``rearrange``/``reduce``/``repeat``
  on ``mindspore.Tensor``); importing it registers the backend.
* :mod:`mindspore.runtime.einops_layers`: ``Rearrange``/``Reduce`` as Cells (for ``einops.layers.torch``).
* :mod:`mindport.runtime.containers`: ``ParameterList``/``ParameterDict`` Cells that name their parameters like torch
  (``scales.0``), so torch weights line up by name.

Nothing here is imported by ``import mindport.runtime`` itself: each module loads MindSpore only when used.
"""
