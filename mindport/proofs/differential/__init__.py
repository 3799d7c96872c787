"""Differential tests of the mapping tables: every entry beyond its one example.

For one entry, :func:`cases` derives many torch calls from the entry's torch signature, its example and the small
hints in ``example.sweep`` (data, never code):

* argument sets: the example as written; every optional argument unset, spelled out at its default, and set to
  other values (bools flipped, ``dim`` 0/-1, ``reduction`` 'none'/'sum'/'mean', a numeric default moved, and the
  entry's ``sweep.args`` alternatives); each rendered positionally and with keywords;
* forms: the function, the Tensor method of the same name, the in-place method (``x.name_(...)``) and the ``out=``
  variant where they exist; layers are built with the argument set and called on the example's inputs;
* inputs: the example's tensors as bool, int32, int64, float16, float32, float64 and complex64, and shaped 0-d, empty,
  broadcasting and non-contiguous.

:func:`run_case` converts the torch snippet with the real converter (``mindport.migrator.convert_source``), runs both
frameworks on the same inputs and compares values, dtypes, shapes and the inputs afterwards (in-place effects). A call
torch itself rejects is not a case; a call the converter flags (``# mindport: MP1xx``) is "flagged", which is the
honest outcome for what has no equivalent. Float16 results are compared with torch's float32 result on the same
values, within the entry's ``sweep.half_rtol``/``half_atol`` (default 1e-2 / 1e-3).

Outcomes (:class:`Outcome.kind`): ``pass``, ``rejected`` (torch raised: not a case), ``flagged``, and the mismatches:
``value``, ``dtype``, ``shape``, ``count`` (number of outputs), ``inplace`` (an input changed differently),
``ms_error`` (only MindSpore raised) and ``convert_error`` (the converter itself failed).

The parts: ``generation.py`` (the cases), ``inputs.py`` (their inputs), ``running.py`` (converting, running, comparing).
Used by ``tests/mappings/test_differential.py`` (a seeded sample per entry) and ``benchmarks/differential_sweep.py``
(the full sweep).
"""
from mindport.proofs.differential.generation import (
    DTYPES,
    HALF_ATOL,
    HALF_RTOL,
    MISMATCH_KINDS,
    SHAPES,
    SILENT_KINDS,
    Case,
    Outcome,
    cases,
)
from mindport.proofs.differential.inputs import make_inputs
from mindport.proofs.differential.running import EntryReport, convert, run_case, sweep_entry, values_differ

__all__ = ["DTYPES", "HALF_ATOL", "HALF_RTOL", "MISMATCH_KINDS", "SHAPES", "SILENT_KINDS", "Case", "Outcome", "cases",
           "make_inputs", "EntryReport", "convert", "run_case", "sweep_entry", "values_differ"]
