"""torch's uninitialised allocations zero-filled, for the torch side of a proof or a discovery build (the reference run).

``torch.empty(2, 3)``, ``x.new_empty(...)``, ``x.new(2, 3)`` (the legacy form: sizes, no data) give whatever the
allocator's memory held: any value is torch's meaning, and a model that reads it (humorbeing/world-models-pytorch's
MDN-RNN starts its LSTM from ``inpt.data.new(1, batch, hidden)``) gives another output at each run ("the eval forward
is not deterministic", sometimes NaN), so nothing could be built or compared. The converter writes zeros for each of
them (``ops.zeros``; ``mindport.runtime.tensor.new`` for sizes); the reference gets zeros too, one of the values torch
may give, so the two sides compute the same thing. A form with data (``x.new([1, 2])``, ``x.new(other)``) is left
alone. Only the torch side; ``install()`` is idempotent and imports torch.
"""
from __future__ import annotations


def _sizes_only(args) -> bool:
    """Are ``Tensor.new``'s arguments sizes (ints, or one torch.Size), not data (a list, a plain tuple, a tensor)?"""
    import torch

    if len(args) == 1 and isinstance(args[0], torch.Size):
        return True
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def install() -> None:
    """Zero the result of torch.empty / empty_like / Tensor.new_empty / Tensor.new(sizes) from now on."""
    import torch

    if getattr(torch.empty, "_mindport_zeroed", False):
        return

    def zeroed(original, sizes_only=False):
        def call(*args, **kwargs):
            out = original(*args, **kwargs)
            # Tensor.new(self, *sizes): its data arguments (a list, a tensor, an array) copy, they are not memory
            if isinstance(out, torch.Tensor) and out.numel() and (not sizes_only or _sizes_only(args[1:])):
                with torch.no_grad():
                    out.zero_()
            return out

        call._mindport_zeroed = True
        call.__name__ = getattr(original, "__name__", "call")
        call.__doc__ = getattr(original, "__doc__", None)
        return call

    torch.empty = zeroed(torch.empty)
    torch.empty_like = zeroed(torch.empty_like)
    torch.Tensor.new_empty = zeroed(torch.Tensor.new_empty)
    torch.Tensor.new = zeroed(torch.Tensor.new, sizes_only=True)
