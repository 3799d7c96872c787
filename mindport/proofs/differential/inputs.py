"""A case's inputs: the example's tensors in the case's dtype and shape variant, seeded."""
from __future__ import annotations

import ast

import numpy as np

from mindport.proofs.function import _SPEC, make_input
from mindport.proofs.differential.generation import DTYPES, Case, _spec_kind


def _shape_of(spec: str) -> tuple:
    kind, args_text = _SPEC.match(spec.replace(" ", "")).groups()[:2]
    args = ast.literal_eval(f"({args_text},)") if args_text else ()
    return tuple(args[2]) if kind == "randint" else tuple(args)


def _with_shape(spec: str, shape: tuple) -> str:
    match = _SPEC.match(spec.replace(" ", ""))
    kind, args_text, dtype = match.groups()
    suffix = f":{dtype}" if dtype else ""
    if kind == "randint":
        low, high, _ = ast.literal_eval(f"({args_text},)")
        return f"randint({low}, {high}, {tuple(shape)!r}){suffix}"
    return f"{kind}({', '.join(map(str, shape))}){suffix}"


def _int_values(kind: str, shape, rng) -> np.ndarray:
    """Small integers, distinct where the size allows (ties make sort/topk/kthvalue indices implementation-defined)."""
    n = int(np.prod(shape)) if shape else 1
    if kind == "randpos":
        pool = np.arange(1, max(5, n + 1))
    elif kind == "rand":
        pool = np.arange(0, max(4, n))
    else:
        pool = np.arange(-max(5, (n + 1) // 2), max(6, (n + 1) // 2 + 1))
    return rng.permutation(pool)[:n].reshape(shape) if n <= len(pool) else rng.choice(pool, size=shape)


def make_inputs(case: Case, seed: int = 0) -> tuple[dict[str, object], bool]:
    """(name -> numpy array or Python value, non-contiguous?) for a case's variant."""
    rng = np.random.default_rng(seed)
    specs = dict(case.specs)
    tensor_names = [n for n, s in specs.items() if _spec_kind(s) not in ("scalar", "")]
    float_names = [n for n in tensor_names if _spec_kind(specs[n]) in ("randn", "rand", "randpos", "randsign")]
    variant = case.variant
    if variant in ("zero_d", "empty", "broadcast"):
        shapes = {n: _shape_of(specs[n]) for n in tensor_names}
        if variant == "zero_d":
            for n in float_names:
                specs[n] = _with_shape(specs[n], ())
        elif variant == "empty":
            first = next((shapes[n] for n in tensor_names if shapes[n]), None)
            for n in tensor_names:
                if first and shapes[n] and shapes[n][0] == first[0]:
                    specs[n] = _with_shape(specs[n], (0, *shapes[n][1:]))
        else:
            same = [n for n in float_names if shapes[n] and shapes[n] == shapes[float_names[0]]]
            if len(same) >= 2:
                shape = shapes[same[1]]
                specs[same[1]] = _with_shape(specs[same[1]], shape[1:] if len(shape) >= 2 else (1,))
            elif same:
                shape = shapes[same[0]]
                specs[same[0]] = _with_shape(specs[same[0]], (1, *shape[1:]))
    arrays = {}
    for name, spec in specs.items():
        value = make_input(spec, rng)
        kind = _spec_kind(spec)
        if name in float_names and variant in DTYPES and variant != "float32":
            shape = np.shape(value)
            if variant == "bool":
                value = rng.random(shape) < 0.5
            elif variant.startswith("int"):
                value = _int_values(kind, shape, rng).astype(variant)
            elif variant == "complex64":
                value = (value + 1j * make_input(spec, rng)).astype(np.complex64)
            else:
                value = value.astype(variant)
        elif kind == "randint" and variant == "int32":
            value = value.astype(np.int32)
        arrays[name] = value
    return arrays, variant == "noncontiguous"
