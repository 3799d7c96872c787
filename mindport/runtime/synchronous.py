"""Synchronous operator launch in PyNative on the CPU, set when any mindport runtime module is imported (``_graph``
imports this module first; :mod:`mindport.runtime.training` re-exports :func:`synchronous_on_cpu`).

A training loop the converter writes as MindSpore's own step imports no ``mindport.runtime.training`` (losses,
tensor, math only), so the setting comes with any runtime module. It was kept to the training module for a while:
MindSpore 2.10's ``launch_blocking`` breaks Tensor.div/mint.div with a Python-number divisor and a rounding_mode on the
CPU ("KernelMod Init Failed: FloorDiv"); those calls now go to ``mindport.runtime.math.div`` (session trainsync16,
tests/training/test_trainsync16_causes.py).
"""
from __future__ import annotations

import mindspore as ms


def synchronous_on_cpu() -> None:
    """PyNative on the CPU: operators run synchronously (``mindspore.runtime.launch_blocking``). A Python training
    loop dispatches many small operators and reads values (``loss.item()``, dtypes, ``.grad``) every step; MindSpore's
    asynchronous pipeline hands each of them between threads, which costs more than the kernels themselves on a CPU
    (a converted NNLM training loop: 2.5 -> 6.7 steps/s, CPU time 20 -> 6 s for 120 steps, on a shared 2-core
    machine). The numbers computed are the same; Ascend/GPU devices keep their asynchronous launch.

    MindSpore takes the setting only before its first kernel runs (set after one, it is silently ignored: a RealNVP
    step stays at 520 ms of CPU instead of 60-100 ms), and a script builds its model, draws its data and computes a
    prior before its first backward: so this runs when the module is imported (converted code imports it at the top
    of the file), not only at the first ``value_and_grad``."""
    try:
        if ms.get_current_device()[0] == "CPU" and ms.get_context("mode") == ms.PYNATIVE_MODE:
            ms.runtime.launch_blocking()
    except (AttributeError, RuntimeError, TypeError, ValueError):  # no device API in this MindSpore: leave it
        pass


synchronous_on_cpu()  # at import, before the script runs a kernel: called after one, launch_blocking does nothing
