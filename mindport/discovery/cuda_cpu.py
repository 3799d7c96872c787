"""CUDA-only model code, built and run on this CPU machine (discovery's torch processes only).

A repository written for a GPU calls ``.cuda()`` in its constructor or forward, or makes tensors with
``device='cuda'`` ("Torch not compiled with CUDA enabled": FEDformer's AutoCorrelation, SincNet's sinc_conv,
shap-e's MLPs), or hands a tensor's ``get_device()`` on as a device (-1 on the CPU). The computation is the same on
the CPU, and the converted code has no device at all (the converter drops ``.cuda()``, ``.to('cuda')`` and
``device=``), so the torch reference is run on the CPU: ``Tensor.cuda`` and ``Module.cuda`` return their object,
and a CUDA device (or a device ordinal) given to ``.to`` or to a tensor factory is the CPU, and ``torch.cuda.FloatTensor``
& co. are the CPU's types.
``torch.cuda.is_available()`` stays False: code that asks keeps its CPU branch.

The builder (``build.py``) calls ``install()``; the proof's torch side gets it through ``stubsite/sitecustomize.py``
when ``MINDPORT_CUDA_AS_CPU`` is set (``install_on_import``: patched when the side imports torch; the MindSpore side
never imports torch for it).
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys

ENV = "MINDPORT_CUDA_AS_CPU"
_FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
              "logspace", "eye", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like",
              "rand_like", "randn_like", "randint_like", "normal", "tril_indices", "triu_indices")


_LEGACY_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                 "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")


def _cuda(device) -> bool:
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, str) and device.split(":")[0] == "cuda"


def _ordinal(device) -> bool:
    """A device given as an int: a CUDA ordinal, or the -1 a CPU tensor's ``get_device()`` gives (code written for
    a GPU: ArianaVillegas/ObjectReassembly's DGCNN ``torch.arange(0, b, device=x.get_device())``, "Device index must
    not be negative" on the CPU)."""
    return isinstance(device, int) and not isinstance(device, bool)


def _cpu_args(args, kwargs):
    args = tuple("cpu" if _cuda(a) else a for a in args)
    if _cuda(kwargs.get("device")) or _ordinal(kwargs.get("device")):
        kwargs = dict(kwargs, device="cpu")
    return args, kwargs


def install() -> None:
    """Patch the imported torch (once)."""
    import torch

    if getattr(torch, "_mindport_cuda_as_cpu", False):
        return
    torch._mindport_cuda_as_cpu = True

    def same(self, *args, **kwargs):
        return self

    torch.Tensor.cuda = same
    torch.nn.Module.cuda = same

    def on_cpu(original, method=False):
        """``original`` with CUDA devices given to it as the CPU; a ``method`` (``.to``) takes a device ordinal as its
        first argument too (a factory's ints are sizes)."""
        @functools.wraps(original)
        def call(*args, **kwargs):
            if method and len(args) > 1 and _ordinal(args[1]):  # x.to(x.get_device()), x.to(0)
                args = (args[0], "cpu", *args[2:])
            args, kwargs = _cpu_args(args, kwargs)
            return original(*args, **kwargs)

        return call

    # the legacy CUDA tensor types (zhrlove/NCF_1's ``torch.cuda.FloatTensor(batch_size, size)``: "type
    # torch.cuda.FloatTensor not available") are their CPU types
    for name in _LEGACY_TYPES:
        if hasattr(torch, name):
            setattr(torch.cuda, name, getattr(torch, name))
    torch.Tensor.to = on_cpu(torch.Tensor.to, method=True)
    torch.nn.Module.to = on_cpu(torch.nn.Module.to, method=True)
    from torch.jit import _builtins

    table = _builtins._get_builtin_table()
    for name in _FACTORIES:
        if hasattr(torch, name):
            original = getattr(torch, name)
            setattr(torch, name, on_cpu(original))
            # TorchScript keeps compiling the factory as the aten op it is (schnetpack's @torch.jit.script helpers
            # calling torch.zeros failed to build: the wrapper is no builtin, and its source is a builtin's)
            if id(original) in table:
                _builtins._register_builtin(getattr(torch, name), table[id(original)])


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds ``torch`` as the other finders do, and installs the patch once it has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            install()
            for also in _ALSO:
                also()

        loader.exec_module = exec_module
        return spec


_ALSO: list = []  # other patches of the reference's torch, installed with this one (zeroed_memory.install)


def install_on_import(*also) -> None:
    """Patch torch once it is imported (now, if it is), and run each of ``also`` then too."""
    _ALSO.extend(f for f in also if f not in _ALSO)
    if "torch" in sys.modules:
        install()
        for f in also:
            f()
    elif not any(isinstance(f, _AfterTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorch())
