"""Named transforms for the tensor mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

from mindport.mappings.transforms.base import Arg, value_transform


@value_transform("tensor_index_int32")
def tensor_index_int32(arg: Arg) -> str:
    """Index tensors for MindSpore's IndexFill/IndexAdd CPU kernels must be int32 (torch requires int64)."""
    return f"({arg.source}).int()"


@value_transform("tensor_complex_fill_value")
def tensor_complex_fill_value(arg: Arg) -> str:
    """A Python complex fill value (``freqs.masked_fill(mask, 0.+0.j)``: ETSformer's top-k frequencies): MindSpore's
    masked_fill takes no Python complex, and a complex tensor only of the input's dtype; torch's complex default,
    complex64, is written (a complex128 input then fails loudly), built from its two float32 parts: GRAPH_MODE holds
    no complex constant ("Unsupported Constant type : 0j"). Other values pass as written."""
    value = arg.literal(default=None)
    if isinstance(value, complex):
        return (f"mindspore.ops.Complex()(mindspore.Tensor({value.real!r}, mindspore.float32), "
                f"mindspore.Tensor({value.imag!r}, mindspore.float32))")
    return arg.source
