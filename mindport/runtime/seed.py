"""torch's seeding apart from numpy's: ``torch.manual_seed(s)`` seeds torch's own generator and leaves numpy's global
stream where it is, so a script's ``np.random`` data are the same numbers whether or not it seeds torch.
``mindspore.set_seed(s)`` also calls ``np.random.seed(s)``, and MindSpore's initializers then draw their seeds from
numpy's global stream: a converted script that seeds torch and draws its data from ``np.random`` (locuslab/TCN's copy
-memory task: ``torch.manual_seed(args.seed)`` then ``np.random.randint`` data) got other data than torch's run.

``manual_seed`` seeds MindSpore (``set_seed``: its random operators and datasets; with :mod:`mindport.runtime.numpy_stream`
loaded, also the stream MindSpore's initial weights are drawn from) and a generator of mindport's own (``stream()``),
which mindport's samplers draw from, and gives numpy's global stream its state back. Before any ``manual_seed``,
``stream()`` is numpy's global functions (MindSpore's own behaviour)."""
from __future__ import annotations

import random

import mindspore as ms
import numpy as np

from mindport.runtime._graph import host_only as _host_only

_STREAM = None


def stream():
    """The generator mindport's random choices draw from: a ``numpy.random.RandomState`` seeded by the last
    ``manual_seed``, numpy's global stream before one."""
    return np.random if _STREAM is None else _STREAM


def manual_seed(seed) -> None:
    """torch.manual_seed: MindSpore's seed and mindport's generator set from ``seed``; numpy's global stream and
    Python's ``random`` keep their state (torch's manual_seed touches neither). Returns None (torch returns its Generator: use it as a
    statement)."""
    global _STREAM
    _host_only("torch.manual_seed seeds the Python program: call it outside construct/@jit")
    state, python_state = np.random.get_state(), random.getstate()
    ms.set_seed(int(seed))
    np.random.set_state(state)
    random.setstate(python_state)  # set_seed moves Python's random too (through mindspore.dataset's seed)
    _STREAM = np.random.RandomState(int(seed) & 0xFFFFFFFF)
