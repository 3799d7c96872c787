"""torch's view-returning tensor operations: the one table read by :func:`mindport.runtime.inplace.view_update`
(which takes the same views of a base's element positions to write an in-place update back) and by the converter
(``native_facts.view_chain``: an in-place call on a chain of these, ``x.narrow(1, 0, 2).copy_(y)``, is written back
into its base). torch documents these as views (docs/tensor_view: they share the base's storage);
tests/runtime/test_view_positions.py checks each against the installed torch (``v._base is x``) and against the
runtime's positions. ``split``/``chunk``/``unbind`` return a tuple of views: one piece taken by an index
(``b.chunk(4)[1].fill_(1)``, an LSTM's forget-gate bias) is a view in a chain (PIECE_METHODS); a loop over all the
pieces is the init rule's (it writes them back). Not here: the other splits (``tensor_split``, ``hsplit`` ...),
``as_strided``, ``real``/``imag``/``view(dtype)`` (no element-for-element position), and ``reshape``/``flatten``/
``view_as``' copies (torch copies when the strides do not allow a view; the positions are the same either way).
"""
from __future__ import annotations

# torch.Tensor methods that return a view of the receiver
VIEW_METHODS = frozenset({
    "narrow", "select", "diagonal", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis",
    "view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze", "expand",
    "expand_as", "unfold", "detach"})
# torch.Tensor methods that return a tuple of views of the receiver: in a chain only when one piece is taken by
# an index (``x.chunk(4, 0)[1]``)
PIECE_METHODS = frozenset({"chunk", "split", "unbind"})
# attributes that are views of the receiver (``x.T``, ``x.mT``) or share its storage (``x.data``)
VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})
