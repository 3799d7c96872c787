"""torch modules that torch 2.0 removed, for the torch side of a proof or a discovery build (the reference run).

Code written for torch 1.x imports ``torch._six`` (Python 2/3 compatibility names: ``from torch._six import inf``,
``container_abcs``, ``string_classes`` ...); on torch >= 2.0 that import fails, so the original model cannot be run
at all and nothing can be compared ("No module named 'torch._six'": CvT and the other torch 1.x repositories of the
discovery sweep). The converter maps every name (``mindport/mappings/data/framework.toml``, targets in
``mindport.runtime.framework``); the reference side gets the module back here, each name with the value torch 1.x
gave it on Python 3 (``SIX``; torch/_six.py of torch 1.4-1.13), so the reference computes what it computed there.

The torch 1.x FFT functions ``torch.rfft`` / ``torch.irfft`` (complex values as a trailing axis of size 2, removed
in torch 1.8 for the ``torch.fft`` module: the original Fourier Neural Operator code, FullSubNet, old audio code) are
put back on the ``torch`` module the same way (``FUNCTIONS``), computing what torch 1.7 documented: ``rfft(input,
signal_ndim, normalized=False, onesided=True)`` is the DFT over the last ``signal_ndim`` axes (1-3), divided by
sqrt(prod N_i) when ``normalized``, only the last axis' first N//2+1 bins when ``onesided``; ``irfft(input,
signal_ndim, normalized=False, onesided=True, signal_sizes=None)`` its complex-to-real inverse (1/prod N_i, or
1/sqrt(prod N_i) when ``normalized``), the last signal axis 2*(n-1) long unless ``signal_sizes`` gives the sizes.
``torch.fft(input, signal_ndim)`` / ``torch.ifft`` (the function forms) are not put back: ``torch.fft`` is the module
now, and a module that is also that function would be a second ``torch.fft``.

``install()`` adds a finder asked after the real ones (an installed torch that still has ``torch._six`` keeps its
own) and puts the functions on ``torch`` now if it is imported, else once it is (a finder that, asked for torch's
first submodule, sets them on the module being imported); an installed torch that has them keeps its own. It imports nothing
heavy.
"""
from __future__ import annotations

import builtins
import collections.abc
import importlib.abc
import importlib.machinery
import math
import sys
import types


def _raise_from(value, from_value):
    raise value from from_value


def _with_metaclass(meta, *bases):
    class _Bridge(meta):
        def __new__(mcs, name, _bridge_bases, namespace):
            return meta(name, bases, namespace)

    return type.__new__(_Bridge, "temporary_class", (), {})


# torch._six's public names on Python 3, as torch 1.x defined them
SIX = {
    "inf": math.inf,
    "nan": math.nan,
    "string_classes": (str, bytes),
    "int_classes": int,
    "container_abcs": collections.abc,
    "FileNotFoundError": builtins.FileNotFoundError,
    "imap": map,
    "raise_from": _raise_from,
    "with_metaclass": _with_metaclass,
    "PY2": False,
    "PY3": True,
    "PY37": sys.version_info >= (3, 7),
}
MODULES = {"torch._six": SIX}


def _signal_dims(signal_ndim):
    if signal_ndim not in (1, 2, 3):
        raise RuntimeError(f"Expected signal_ndim to be 1, 2, or 3, but got signal_ndim={signal_ndim}")
    return tuple(range(-signal_ndim, 0))


def rfft(input, signal_ndim, normalized=False, onesided=True):
    """torch.rfft of torch <= 1.7 (see the module docstring): real input, output (*, 2) of (real, imag)."""
    import torch

    dims = _signal_dims(signal_ndim)
    norm = "ortho" if normalized else "backward"
    if input.dim() < signal_ndim:
        raise RuntimeError(f"rfft expects an input with at least signal_ndim={signal_ndim} dimensions")
    out = (torch.fft.rfftn if onesided else torch.fft.fftn)(input, dim=dims, norm=norm)
    return torch.view_as_real(out)


def irfft(input, signal_ndim, normalized=False, onesided=True, signal_sizes=None):
    """torch.irfft of torch <= 1.7 (see the module docstring): input (*, 2) of (real, imag), real output. With
    ``onesided=False`` the input is the full spectrum: its last signal axis' first N//2+1 bins are inverted (the
    rest is the conjugate-symmetric half; N is that axis' length unless ``signal_sizes`` says otherwise)."""
    import torch

    if input.dim() < signal_ndim + 1 or input.shape[-1] != 2:
        raise RuntimeError("irfft expects a complex input as a last dimension of size 2")
    dims = _signal_dims(signal_ndim)
    norm = "ortho" if normalized else "backward"
    spectrum = torch.complex(input[..., 0], input[..., 1])
    sizes = None if signal_sizes is None else [int(n) for n in signal_sizes]
    if not onesided:
        if sizes is None:
            sizes = list(spectrum.shape[spectrum.dim() - signal_ndim:])
        spectrum = spectrum[..., : spectrum.shape[-1] // 2 + 1]
    return torch.fft.irfftn(spectrum, s=sizes, dim=dims, norm=norm)


# torch's own functions that torch 1.8 removed, as torch <= 1.7 computed them
FUNCTIONS = {"rfft": rfft, "irfft": irfft}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MODULES:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name, f"{spec.name} as torch 1.x had it (mindport.discovery.legacy_torch)")
        module.__dict__.update(MODULES[spec.name])
        return module

    def exec_module(self, module):
        parent, _, child = module.__name__.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)


def _restore_functions(torch_module) -> None:
    for name, function in FUNCTIONS.items():
        if not hasattr(torch_module, name):
            setattr(torch_module, name, function)


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Puts ``FUNCTIONS`` on ``torch`` when it imports its first submodule (``torch._C``, early in its own import):
    asked for every import and finding nothing, it needs no other finder to hand it torch's spec (the reference's
    ``cuda_cpu`` finder returns that spec first). A torch that defines a name later in its import keeps its own."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torch.") and "torch" in sys.modules:
            _restore_functions(sys.modules["torch"])
        return None


def install() -> None:
    """Make ``import torch._six`` work on a torch without it, and ``torch.rfft``/``torch.irfft`` (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
    if "torch" in sys.modules:
        _restore_functions(sys.modules["torch"])
    elif not any(isinstance(f, _AfterTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorch())
