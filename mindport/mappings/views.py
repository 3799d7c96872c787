"""torch's view-returning tensor operations: the one table read by :func:`mindport.runtime.inplace.view_update`
(which takes the same views of a base's element positions to write an in-place update back) and by the converter
(``native_facts.view_chain``: an in-place call on a chain of these, ``x.narrow(1, 0, 2).copy_(y)``, is written back
into its base). torch documents these as views (docs/tensor_view: they share the base's storage);
tests/runtime/test_view_positions.py checks each against the installed torch (``v._base is x``) and against the
runtime's positions. ``split``/``chunk``/``unbind`` return a tuple of views: one piece taken by an index
(``b.chunk(4)[1].fill_(1)``, an LSTM's forget-gate bias) is a view in a chain (PIECE_METHODS); a loop over all the
pieces is the init rule's (it writes them back). Not here: ``real``/``imag``/``view(dtype)`` (no element-for-element
position). ``reshape``/``flatten``/``ravel``/``contiguous`` copy where the strides do not allow a view: the runtime
takes numpy's views of the positions, which copy in the same places, and writes nothing back after a copy. A name
bound to one of these views and then written in place (``v = y[0]; v += 1``) is written back into its base by the
converter's ViewWriteBackTransform.
"""
from __future__ import annotations

# torch.Tensor methods that return a view of the receiver
VIEW_METHODS = frozenset({
    "narrow", "select", "diagonal", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis",
    "view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze", "expand",
    "expand_as", "unfold", "detach", "ravel", "contiguous", "broadcast_to", "adjoint", "conj", "resolve_conj",
    "resolve_neg", "positive", "as_strided"})
# torch.Tensor methods that return a tuple of views of the receiver: in a chain only when one piece is taken by
# an index (``x.chunk(4, 0)[1]``)
PIECE_METHODS = frozenset({"chunk", "split", "unbind", "split_with_sizes", "tensor_split", "hsplit", "vsplit",
                           "dsplit"})
# attributes that are views of the receiver (``x.T``, ``x.mT``) or share its storage (``x.data``)
VIEW_ATTRIBUTES = frozenset({"T", "mT", "data"})
# the conjugate-transpose attributes: a transpose of a real tensor; only a name bound to ``y.H`` is followed (an
# attribute ``self.H`` is too often a model's own field)
CONJUGATE_ATTRIBUTES = frozenset({"H", "mH"})
# torch.Tensor methods that return the receiver itself when they change nothing (a dtype or device move:
# ``y.float()`` of a float32 tensor is ``y``), else a copy: a name bound to one is written back when the updated
# value kept the base's dtype (mindport.runtime.inplace.view_update's "cast" step)
CAST_METHODS = frozenset({"to", "float", "double", "half", "bfloat16", "type", "type_as", "cpu"})
# views the write-back can't follow (complex parts: no element-for-element position in a real base); an in-place
# write through a name bound to one is flagged
UNFOLLOWED_VIEWS = frozenset({"real", "imag", "view_as_real", "view_as_complex", "unsafe_split", "indices",
                              "values"})
