"""torch's views, as mindport/mappings/views.py lists them, read from the installed torch: each one's result shares
its base's storage (``v._base is x``: an in-place update through it updates the base), and the positions
mindport.runtime.inplace.view_update finds for it are the elements torch's view holds (the view of ``arange`` is the
positions themselves). A torch view the table leaves out is listed with its reason, so a torch that documents a new
one fails here until it is decided."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.mappings.views import CONJUGATE_ATTRIBUTES, PIECE_METHODS, VIEW_ATTRIBUTES, VIEW_METHODS

# each view of the table on a (2, 3, 4) base: its arguments
CASES = {
    "narrow": ((1, 1, 2), {}), "select": ((2, 3), {}), "diagonal": ((), {"offset": 1, "dim1": 1, "dim2": 2}),
    "t": None, "transpose": ((0, 2), {}), "swapaxes": ((1, 2), {}), "swapdims": ((0, 1), {}),
    "permute": ((2, 0, 1), {}), "movedim": ((0, 2), {}), "moveaxis": ((2, 0), {}), "view": ((4, 6), {}),
    "reshape": ((6, -1), {}), "view_as": None, "reshape_as": None, "flatten": ((1,), {}),
    "unflatten": ((2, (2, 2)), {}), "unsqueeze": ((1,), {}), "squeeze": None, "expand": None, "expand_as": None,
    "unfold": ((2, 2, 2), {}), "detach": ((), {}), "T": None, "mT": ((), {}), "data": ((), {}),
    "ravel": ((), {}), "contiguous": ((), {}), "broadcast_to": None, "adjoint": ((), {}), "conj": ((), {}),
    "resolve_conj": ((), {}), "resolve_neg": ((), {}), "positive": ((), {}), "as_strided": (((2, 3), (4, 1), 1), {}),
    "H": None, "mH": ((), {}),
}
# torch's documented views (docs/source/tensor_view.rst) the table leaves out, and why
LEFT_OUT = {
    "real": "complex views: no element-for-element real position", "imag": "as real", "view_as_real": "as real",
    "indices": "sparse tensors", "values": "sparse tensors", "ccol_indices": "sparse", "col_indices": "sparse",
    "crow_indices": "sparse", "row_indices": "sparse",
}
TORCH_DOCUMENTED_VIEWS = frozenset({
    "as_strided", "detach", "diagonal", "expand", "expand_as", "movedim", "narrow", "permute", "select", "squeeze",
    "transpose", "t", "T", "H", "mT", "mH", "real", "imag", "view_as_real", "unflatten", "unfold", "unsqueeze",
    "view", "view_as", "unbind", "split", "hsplit", "vsplit", "tensor_split", "split_with_sizes", "swapaxes",
    "swapdims", "chunk", "indices", "values", "adjoint", "moveaxis", "dsplit", "ccol_indices", "col_indices",
    "crow_indices", "row_indices"})


def _torch_view(x, name):
    """torch's view ``name`` of ``x`` (a (2, 3, 4) tensor, or a 2-D/size-1 one where the view needs it)."""
    if name == "t":
        return x[0].t()
    if name in ("T", "H"):
        return getattr(x[0], name)
    if name == "broadcast_to":
        return x[:, :1].broadcast_to(2, 3, 4)
    if name in ("view_as", "reshape_as"):
        return getattr(x, name)(torch.empty(3, 8))
    if name == "squeeze":
        return x[:, :1].squeeze(1)
    if name in ("expand", "expand_as"):
        small = x[:, :1]
        return small.expand(2, 3, 4) if name == "expand" else small.expand_as(x)
    args, kwargs = CASES[name]
    value = getattr(x, name)
    return value(*args, **kwargs) if callable(value) else value


def _steps(name):
    """The same view as view_update's steps."""
    first = (("getitem", (0,), {}),)
    if name == "t":
        return first + (("t", (), {}),)
    if name in ("T", "H"):
        return first + ((name, (), {}),)
    if name == "broadcast_to":
        return (("getitem", ((slice(None), slice(None, 1)),), {}), ("broadcast_to", (2, 3, 4), {}))
    if name in ("view_as", "reshape_as"):
        return ((name, (np.empty((3, 8)),), {}),)
    if name == "squeeze":
        return (("getitem", ((slice(None), slice(None, 1)),), {}), ("squeeze", (1,), {}))
    if name in ("expand", "expand_as"):
        head = ("getitem", ((slice(None), slice(None, 1)),), {})
        return (head, ("expand", (2, 3, 4), {})) if name == "expand" else (head, ("expand_as", (np.empty((2, 3, 4)),), {}))
    args, kwargs = CASES[name]
    return ((name, args, kwargs),)


def test_the_table_accounts_for_every_view_torch_documents():
    table = VIEW_METHODS | VIEW_ATTRIBUTES | CONJUGATE_ATTRIBUTES
    assert set(CASES) == table
    assert TORCH_DOCUMENTED_VIEWS <= table | PIECE_METHODS | set(LEFT_OUT), \
        TORCH_DOCUMENTED_VIEWS - table - PIECE_METHODS - set(LEFT_OUT)
    for name in TORCH_DOCUMENTED_VIEWS | table:
        assert hasattr(torch.Tensor, name) or hasattr(torch, name), name  # a member of the installed torch


@pytest.mark.parametrize("name", sorted(VIEW_METHODS | VIEW_ATTRIBUTES | CONJUGATE_ATTRIBUTES))
def test_each_view_shares_storage_in_torch_and_its_positions_are_torchs(name):
    import mindspore as ms

    from mindport.runtime import inplace

    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    view = _torch_view(x, name)
    assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()  # a view: the base's storage
    if name in ("expand", "expand_as", "broadcast_to"):  # an element of the base at several places: both refuse
        with pytest.raises(RuntimeError, match="more than one element"):
            _torch_view(x.clone(), name).mul_(-1)
        with pytest.raises(RuntimeError, match="more than one element"):
            inplace.view_update(ms.Tensor(x.numpy()), _steps(name), ms.Tensor(view.numpy().copy()))
        return
    # the update written through view_update is torch's update through the view
    want = x.clone()
    _torch_view(want, name).mul_(-1)
    base = ms.Tensor(x.numpy())
    moved = view.numpy() * -1
    out = inplace.view_update(base, _steps(name), ms.Tensor(np.ascontiguousarray(moved)))
    assert out is base
    np.testing.assert_array_equal(base.asnumpy(), want.numpy())


def test_an_update_through_views_of_a_parameter_keeps_the_parameter():
    import mindspore as ms

    from mindport.runtime import inplace

    weight = ms.Parameter(ms.Tensor(np.zeros((3, 3), np.float32)), name="w")
    out = inplace.view_update(weight, (("data", (), {}), ("diagonal", (), {})), ms.Tensor(np.ones(3, np.float32)))
    assert out is weight
    np.testing.assert_array_equal(weight.asnumpy(), np.eye(3, dtype=np.float32))


@pytest.mark.parametrize("name, args, index", [("chunk", (4,), 1), ("chunk", (2, 2), 1), ("split", (2, 1), 1),
                                               ("split", ([1, 2], 1), 1), ("unbind", (2,), 3), ("chunk", (3,), 1),
                                               ("split_with_sizes", ([1, 2], 1), 1), ("tensor_split", (3, 2), 2),
                                               ("tensor_split", ([1, 3], 2), 1), ("hsplit", (3,), 2),
                                               ("vsplit", (2,), 1), ("dsplit", ([1],), 1)])
def test_one_piece_of_a_split_is_a_view_and_its_positions_are_torchs(name, args, index):
    """``b.chunk(4)[1].fill_(1)``: one indexed piece of torch's tuple of views, written back by view_update."""
    import mindspore as ms

    from mindport.runtime import inplace

    assert name in PIECE_METHODS
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) if name != "chunk" or len(args) > 1 \
        else torch.arange(10, dtype=torch.float32)
    piece = getattr(x, name)(*args)[index]
    assert piece.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    want = x.clone()
    with torch.no_grad():
        getattr(want, name)(*args)[index].mul_(-1)
    base = ms.Tensor(x.numpy())
    steps = ((name, args, {}), ("getitem", (index,), {}))
    out = inplace.view_update(base, steps, ms.Tensor(np.ascontiguousarray(piece.numpy() * -1)))
    assert out is base
    np.testing.assert_array_equal(base.asnumpy(), want.numpy())
