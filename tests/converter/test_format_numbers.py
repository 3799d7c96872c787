"""Issue 30 (native ports): a value formatted with a spec that is a Python number by construction is left as written
(FormatSpecTransform._number); only a value that may be a tensor goes through ``mp_tensor.formattable``.

On main, nanoGPT's and llama2.c's ``num_decay_params = sum(p.numel() for p in decay_params)`` then
``f"... {num_decay_params:,} parameters"`` and whisper's ``f"<|{i * 0.02:.2f}|>" for i in range(1501)`` and
``hours = milliseconds // 3_600_000`` (``milliseconds = round(seconds * 1000.0)``) went through the runtime. The
converted function is run on MindSpore Parameters and gives torch's string exactly; a parameter, a rebound
parameter and a tensor's sum keep ``formattable``."""
from __future__ import annotations

import textwrap

from mindport.migrator import convert_source

SOURCE = textwrap.dedent('''
    import torch


    def describe(params, loss, seconds):
        n = sum(p.numel() for p in params)
        total = 0
        for k in range(3):
            total += k * 2
        milliseconds = round(seconds * 1000.0)
        hours = milliseconds // 3_600_000
        milliseconds -= hours * 3_600_000
        minutes = milliseconds // 60_000
        tokens = [f"<|{i * 0.02:.2f}|>" for i in range(4)]
        dims = [f"{p.dim():d}/{p.numel() * 4:,}" for p in params]
        seconds = seconds * 2
        return (f"{n:,} {total:d} {hours:02d}:{minutes:02d} {milliseconds:03d} {loss:.4f} {seconds:.1f} "
                + " ".join(tokens + dims))


    def summed(x):
        s = x.sum()
        return f"{s:.3f}"
''')


def _run(code: str, framework: str):
    namespace: dict = {}
    exec(compile(code, f"<{framework}>", "exec"), namespace)  # noqa: S102 - the fixture and its conversion
    return namespace


def test_python_numbers_are_formatted_as_written():
    code = convert_source(SOURCE).code
    describe = code.split("def summed")[0]
    assert describe.count("mp_tensor.formattable(") == 2, describe  # loss (a parameter), seconds (rebound parameter)
    assert "formattable(loss)" in describe and "formattable(seconds)" in describe
    assert "mp_tensor.formattable(s)" in code.split("def summed")[1]


def test_converted_strings_match_torch():
    import mindspore as ms
    import numpy as np
    import torch

    code = convert_source(SOURCE).code
    shapes = [(3, 4), (7,), (2, 3, 5)]
    want = _run(SOURCE, "torch")["describe"]([torch.nn.Parameter(torch.zeros(s)) for s in shapes],
                                             torch.tensor(0.123456), 4_000_123.5)
    got = _run(code, "mindspore")["describe"]([ms.Parameter(ms.Tensor(np.zeros(s, np.float32)), name=f"p{i}")
                                               for i, s in enumerate(shapes)], ms.Tensor(0.123456), 4_000_123.5)
    assert got == want
    x = np.arange(6, dtype=np.float32) / 7
    assert _run(code, "mindspore")["summed"](ms.Tensor(x)) == _run(SOURCE, "torch")["summed"](torch.from_numpy(x))
