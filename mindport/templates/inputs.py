"""Parse input specs such as ``2x3x32x32:float32`` for the script templates.

Private to ``mindport.templates``: the first dimension is the batch size, the rest is the shape of one sample.
"""
from __future__ import annotations

from dataclasses import dataclass

from mindport.errors import InputError
from mindport.validators.parity.loading import parse_input_spec as parse_validator_spec

# numpy dtype names a MindSpore model input can sensibly have (MindSpore accepts them all as Tensor dtypes).
SUPPORTED_DTYPES = ("float32", "float16", "float64", "int32", "int64", "int8", "uint8", "bool")


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]  # full shape, batch dimension first
    dtype: str = "float32"
    low: float | None = None  # optional value range [low, high) for synthetic data
    high: float | None = None

    @property
    def batch_size(self) -> int:
        return self.shape[0]

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return self.shape[1:]

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith("float")

    @property
    def value_range(self) -> tuple[float, float] | None:
        return None if self.low is None else (self.low, self.high)

    def __str__(self) -> str:
        text = "x".join(str(d) for d in self.shape) + ":" + self.dtype
        return text if self.low is None else f"{text}:{self.low:g}:{self.high:g}"


def parse_input_spec(text: str) -> InputSpec:
    """``"2x3x32x32:float32"`` -> InputSpec((2, 3, 32, 32), "float32"); the dtype defaults to float32.

    ``"2x16:int64:0:1000"`` adds a value range [0, 1000) for the synthetic data (token ids, say). The grammar is the
    validators' ``--input`` (``mindport.validators.parity.loading.parse_input_spec``); the scripts add their own limits:
    no array files, a batch dimension plus at least one sample dimension, and the dtypes a script can generate.
    """
    raw = text.strip()
    if raw.endswith((".npy", ".npz")):
        raise InputError(f"input spec {text!r}: the scripts need SHAPE:DTYPE (e.g. 2x3x32x32:float32), not a file")
    shape_text, _, rest = raw.partition(":")
    dtype, sep, range_text = rest.partition(":")
    try:
        spec = parse_validator_spec(f"{shape_text.lower()}:{dtype.strip() or 'float32'}{sep}{range_text}")
    except InputError as exc:
        raise InputError(f"bad input spec {text!r}: {exc.message}") from None
    if spec.dtype not in SUPPORTED_DTYPES:
        raise InputError(f"bad input spec {text!r}: dtype {spec.dtype!r} is not one of {', '.join(SUPPORTED_DTYPES)}")
    if len(spec.shape) < 2 or any(d <= 0 for d in spec.shape):
        raise InputError(
            f"bad input spec {text!r}: need a batch dimension and at least one positive sample dimension, e.g. 2x16:float32"
        )
    return InputSpec(spec.shape, spec.dtype, spec.low, spec.high)


def parse_input_specs(specs: str | InputSpec | list | tuple) -> list[InputSpec]:
    """One spec or several (one per model input); every input must share the batch dimension."""
    items = [specs] if isinstance(specs, (str, InputSpec)) else list(specs)
    if not items:
        raise InputError("no input spec given: pass at least one, e.g. 2x3x32x32:float32")
    parsed = [s if isinstance(s, InputSpec) else parse_input_spec(s) for s in items]
    batches = {s.batch_size for s in parsed}
    if len(batches) > 1:
        raise InputError(
            f"input specs disagree on the batch dimension ({', '.join(str(s) for s in parsed)}): "
            "the first dimension of every input is the batch size"
        )
    return parsed
