"""torch 1.x's tensor methods that torch 2.x lacks (``x.rfft(2)``, ``y.irfft(1)``; legacy51 met them in the original
Fourier Neural Operator code): they were left as written WITHOUT a diagnostic, a half-converted line that fails at
run time. The class: a method of data/torch_tensor_methods_removed.txt on a receiver the converter knows is a tensor
(``rfft``/``irfft`` on any receiver) is flagged MP103 and left as written; the list is checked against the installed
torch (none of them a torch.Tensor method now) so it never flags a method torch has."""
from __future__ import annotations

import torch

from mindport import convert_source
from mindport.migrator.rules.table_calls import _removed_tensor_methods

SOURCE = '''import torch


class Spectrum:
    def fft(self, n):
        return [n] * n


def spectra(x):
    y = torch.randn(3, 8)
    return x.rfft(2), y.irfft(1), y.fft(1)


def own(n):
    return Spectrum().fft(n)
'''


def test_the_list_names_no_method_torch_has():
    assert _removed_tensor_methods() and not any(hasattr(torch.Tensor, m) for m in _removed_tensor_methods())


def test_a_removed_tensor_method_is_flagged_not_left_silent():
    result = convert_source(SOURCE, "spectra.py")
    said = sorted(d.message.split(" ")[0] for d in result.diagnostics if d.code == "MP103")
    # Spectrum().fft(n): a project object's own method, not flagged
    assert said == ["torch.Tensor.fft", "torch.Tensor.irfft", "torch.Tensor.rfft"], [d.format() for d in
                                                                                        result.diagnostics]
    assert "x.rfft(2), y.irfft(1), y.fft(1)" in result.code and "Spectrum().fft(n)" in result.code
