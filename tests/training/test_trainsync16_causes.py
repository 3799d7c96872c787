"""Session trainsync16 (issue 27): torch's floor-division family, converted, under MindSpore's synchronous launch.

``mindport.runtime.training`` turns on ``mindspore.runtime.launch_blocking`` (a converted training loop runs 3-5x
faster on the CPU). MindSpore 2.10's Tensor.div/Tensor.divide/mint.div with a Python-number divisor and a
``rounding_mode`` then fail on the CPU ("KernelMod Init Failed: FloorDiv"; "Trunc should have 1 outputs, but got 2"),
and Tensor.floor_divide/mint.floor_divide with a number fail in either launch ("The kernel FloorDivScalar
unregistered"); ops.div/ops.floor_divide, ``//``, ``%``, remainder and fmod run (measured one form per fresh process,
int64 and float32, both launches: the session note). The mapping tables send those calls to ops.div/ops.floor_divide.

The differential test: every form of the family torch writes (operators, reflected operators, functions, methods,
in place; tensor and number divisors) over int32/int64/float32/float64, both signs, zero numerators, float zero
divisors and large values, converted by the real converter and run in a fresh process that has launch_blocking on;
the expected values and dtypes are torch's, computed here. Real torch, real MindSpore."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import torch

from test_fresh_causes import _convert

# every torch spelling of floor division, truncating division and modulo; `s` is a Python number
FORMS = {
    "x // y": "x // y", "x // s": "x // s", "s // y": "s // y", "x % y": "x % y", "x % s": "x % s", "s % y": "s % y",
    "floor_divide(x, y)": "torch.floor_divide(x, y)", "floor_divide(x, s)": "torch.floor_divide(x, s)",
    "x.floor_divide(y)": "x.floor_divide(y)", "x.floor_divide(s)": "x.floor_divide(s)",
    "div(x, y, floor)": "torch.div(x, y, rounding_mode='floor')",
    "div(x, s, floor)": "torch.div(x, s, rounding_mode='floor')",
    "div(x, y, trunc)": "torch.div(x, y, rounding_mode='trunc')",
    "div(x, s, trunc)": "torch.div(x, s, rounding_mode='trunc')",
    "divide(x, s, floor)": "torch.divide(x, s, rounding_mode='floor')",
    "divide(x, y, trunc)": "torch.divide(x, y, rounding_mode='trunc')",
    "x.div(s, floor)": "x.div(s, rounding_mode='floor')", "x.div(y, floor)": "x.div(y, rounding_mode='floor')",
    "x.div(s, trunc)": "x.div(s, rounding_mode='trunc')", "x.div(y, trunc)": "x.div(y, rounding_mode='trunc')",
    "x.divide(s, floor)": "x.divide(s, rounding_mode='floor')",
    "x.divide(s, trunc)": "x.divide(s, rounding_mode='trunc')",
    "remainder(x, y)": "torch.remainder(x, y)", "remainder(x, s)": "torch.remainder(x, s)",
    "x.remainder(s)": "x.remainder(s)", "x.remainder(y)": "x.remainder(y)",
    "fmod(x, y)": "torch.fmod(x, y)", "fmod(x, s)": "torch.fmod(x, s)", "x.fmod(s)": "x.fmod(s)",
    "x.div_(s, floor)": "x.clone().div_(s, rounding_mode='floor')",
    "x.div_(y, trunc)": "x.clone().div_(y, rounding_mode='trunc')",
    "x.floor_divide_(s)": "x.clone().floor_divide_(s)", "x.remainder_(s)": "x.clone().remainder_(s)",
}
_AUGMENTED = {"z //= s": "z //= s", "z //= y": "z //= y", "z %= s": "z %= s", "z %= y": "z %= y"}
# every torch spelling of floor division, truncating division and modulo (`s` is a Python number), one function each
FAMILY = "import torch\n\n" + "".join(
    f"\n\ndef form_{i}(x, y, s):\n    return {expr}\n" for i, expr in enumerate(FORMS.values())) + "".join(
    f"\n\ndef form_{len(FORMS) + i}(x, y, s):\n    z = x.clone()\n    {stmt}\n    return z\n"
    for i, stmt in enumerate(_AUGMENTED.values()))
LABELS = list(FORMS) + list(_AUGMENTED)

_RUN = r'''
import json, sys, types
import numpy as np
from mindport.runtime import training  # noqa: F401 - a converted training loop's import: launch_blocking on
from mindspore._c_expression import RuntimeConf
import mindspore as ms
module = types.ModuleType("family")
exec(compile(open(sys.argv[1]).read(), "family", "exec"), module.__dict__)
cases, labels = json.load(open(sys.argv[2]))
out, errors = {}, {}
for key, case in cases.items():
    x = ms.Tensor(np.array(case["x"], case["dtype"]))
    y = ms.Tensor(np.array(case["y"], case["dtype"]))
    for i, label in enumerate(labels):
        try:
            out[f"{key}|{label}"] = getattr(module, f"form_{i}")(x, y, case["s"]).asnumpy()
        except Exception as exc:  # noqa: BLE001 - reported with the case
            errors[f"{key}|{label}"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:90]}"
np.savez(sys.argv[3], **out)
print(json.dumps({"blocking": RuntimeConf.get_instance().is_launch_blocking(), "errors": errors}))
'''

# values MindSpore 2.10's CPU kernels divide exactly (integers below 2**24, floats whose quotient is below 2**24): beyond
# them its FloorDiv/TruncateDiv/FloorMod/Mod compute through float32 in either launch (int32 (2**31 - 1) // 3 ->
# 715827904; float32 3e30 % 2 -> 0.0, torch 1.0): measured in the session note, open; TS16_LARGE=1 adds them here
_LARGE = {"int32": [2**31 - 1, -(2**31) + 1, 2**30 + 7, -(2**30) - 5], "int64": [2**62 + 1, -(2**62) - 3, 2**53 + 1,
          -(2**53) - 1], "float32": [3e30, -7e20, 1e-30, 16777217.0], "float64": [3e300, -7e200, 1e-300, 2.0**53 + 1]}
_MODERATE = {"int32": [100003, -99991, 4097, -8191], "int64": [1048577, -524287, 65537, -131071],
             "float32": [1000.25, -777.5, 1e-3, 4096.0], "float64": [12345.75, -6789.5, 1e-7, 65536.0]}
CASES = {}
for _dt in ("int32", "int64", "float32", "float64"):
    _ints = _dt.startswith("int")
    _x = [7, -7, 0, 5, -9, 6, -6, 1] + (_LARGE if os.environ.get("TS16_LARGE") else _MODERATE)[_dt]
    # float divisors a binary fraction: MindSpore's FloorMod/Mod compute x - y * floor(x / y), torch fmod exactly, so
    # with -0.7 or 1e-3 they differ in the last bits (float32 -0.5000132 vs -0.5; measured, open)
    _y = [2, 2, 3, -3, 4, -3, 3, -1] + ([3, 7, -5, 2] if _ints else [3.0, -0.625, 3.0, 0.25])
    if not _ints:
        _x = [v + 0.5 if i in (0, 3) else v for i, v in enumerate(_x)]
        _y[6] = 0.0  # a zero divisor: torch's inf/nan (-0.0: MindSpore's floor division takes it for +0.0, open)
    for _s in ((2, -3, 2.5) if _ints else (2, -3, 0.75, 0.125)):
        CASES[f"{_dt} s={_s}"] = {"dtype": _dt, "x": _x, "y": _y, "s": _s}


def _torch_values() -> dict:
    scope: dict = {}
    exec(compile(FAMILY, "family", "exec"), scope)  # noqa: S102 - the test's own torch source
    expected = {}
    for key, case in CASES.items():
        x = torch.tensor(case["x"], dtype=getattr(torch, case["dtype"]))
        y = torch.tensor(case["y"], dtype=getattr(torch, case["dtype"]))
        for i, label in enumerate(LABELS):
            try:
                expected[f"{key}|{label}"] = scope[f"form_{i}"](x, y, case["s"]).numpy()
            except RuntimeError:  # torch rejects it (an integer tensor's in-place result of a float): not a case
                pass
    return expected


def test_the_floor_division_family_runs_under_launch_blocking_as_torch(tmp_path):
    """Before: under the training runtime's launch_blocking, x.div(2, rounding_mode='floor') of any dtype stopped
    with 'KernelMod Init Failed: FloorDiv' (and 'trunc' with 'Trunc should have 1 outputs'); x.floor_divide(2) with
    'FloorDivScalar unregistered' in either launch. Now every form gives torch's values and dtypes."""
    code = _convert(FAMILY)
    (tmp_path / "family.py").write_text(code)
    (tmp_path / "cases.json").write_text(json.dumps([CASES, LABELS]))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-c", _RUN, str(tmp_path / "family.py"), str(tmp_path / "cases.json"),
                        str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=root), cwd=root)
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["blocking"] is True
    got = dict(np.load(tmp_path / "out.npz"))
    expected = _torch_values()
    assert len(expected) > 400
    wrong = [f"{key}: {error}" for key, error in report["errors"].items() if key in expected]
    for key, want in expected.items():
        if key in report["errors"]:
            continue
        have = got[key]
        if have.dtype != want.dtype or not np.array_equal(have, want, equal_nan=True):
            wrong.append(f"{key}: torch {want.dtype} {want.tolist()} | mindspore {have.dtype} {have.tolist()}")
    assert not wrong, f"{len(wrong)} of {len(expected)} differ:\n" + "\n".join(wrong[:int(os.environ.get("TS16_SHOW", "60"))])
