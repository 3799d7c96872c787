"""torch's view-returning tensor operations: the one table read by :func:`mindport.runtime.inplace.view_update`
(which takes the same views of a base's element positions to write an in-place update back) and by the converter
(``native_facts.view_chain``: an in-place call on a chain of these, ``x.narrow(1, 0, 2).copy_(y)``, is written back
into its base). torch documents these as views (docs/tensor_view: they share the base's storage);
tests/runtime/test_view_positions.py checks each against the installed torch (``v._base is x``) and against the
runtime's positions. Not here: ``split``/``chunk``/``unbind`` (lists of views: the init rule writes their pieces back),
``as_strided``, ``real``/``imag``/``view(dtype)`` (no element-for-element position), and ``reshape``/``flatten``/
``view_as``' copies (torch copies when the strides do not allow a view; the positions are the same either way).
"""
from __future__ import annotations

# torch.Tensor methods that return a view of the receiver
VIEW_METHODS = frozenset({
    "narrow", "select", "diagonal", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis",
    "view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze", "expand",
    "expand_as", "unfold", "detach"})
# attributes that are views of the receiver (``x.T``, ``x.mT``) or share its storage (``x.data``)
VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})
