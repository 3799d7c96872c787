"""MindSpore's layers are built without moving numpy's global random stream, as torch's are.

MindSpore seeds each initializer from numpy's global stream (``mindspore.common.initializer._numpy_seed``: one
``np.random.randint`` per Parameter built by ``nn.Dense``, ``nn.Conv2d``, ``initializer(Normal(), shape)``, ...), and
its recurrent layers (``nn.LSTM``/``GRU``/``RNN`` and their cells) draw their weights from ``np.random`` itself;
torch's layers draw from torch's own generator and never touch numpy's. Model code that draws from ``np.random``
between building layers (a normalising flow's LU-decomposed 1x1 map: ``scipy.linalg.qr(np.random.randn(dim, dim))``
in its constructor, after ``nn.Linear``s were built) or a script that draws its data from it after building the model
got other numbers than under torch.

Importing this module installs, once: initial weights come from a stream of their own, as torch's come from its
generator. ``mindspore.set_seed(s)`` (what ``torch.manual_seed(s)`` converts to) restarts it from ``s``, so a model
built twice after the same seed gets the same weights; before any, it starts from numpy's state at the first layer
built (a script that seeds numpy builds the same weights on every run). ``_numpy_seed`` draws from it, and the
recurrent layers' constructors run with numpy seeded from it, numpy's state put back afterwards. It is imported by
``mindport.runtime._graph`` and ``mindport.runtime.containers``, which the runtime modules converted code imports load.
"""
from __future__ import annotations

import contextlib
import functools
import importlib

import mindspore
import numpy as np
from mindspore.common import initializer as _initializer
from mindspore.nn.layer import rnn_cells as _rnn_cells
from mindspore.nn.layer import rnns as _rnns

_seed = importlib.import_module("mindspore.common.seed")  # (mindspore.common.seed is also a function's name)
_stream: list[np.random.RandomState] = []  # the weights' stream, once started


def _weights_stream() -> np.random.RandomState:
    if not _stream:  # no set_seed yet: from numpy's state, read without moving it
        _, words, pos, *_ = np.random.get_state()
        _stream.append(np.random.RandomState((int(pos) * 2654435761 + int(words[pos % len(words)])) % 2**32))
    return _stream[0]


def numpy_seed() -> int:
    """MindSpore's ``_numpy_seed`` (a seed in [1, 2**63)), from the weights' stream."""
    return int(_weights_stream().randint(low=1, high=(1 << 63), dtype=np.int64))


def _kept(init):
    """A layer constructor that draws from ``np.random``, run with numpy seeded from the weights' stream."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):  # noqa: N807 - the layer's own
        state = np.random.get_state()
        np.random.seed(int(_weights_stream().randint(2**32)))
        try:
            init(self, *args, **kwargs)
        finally:
            np.random.set_state(state)

    __init__._mindport_stream_kept = True
    return __init__


def _seeding(set_seed):
    @functools.wraps(set_seed)
    def seeded(seed):
        set_seed(seed)
        _stream[:] = [np.random.RandomState(int(seed) % 2**32)]

    seeded._mindport_stream_kept = True
    return seeded


if not getattr(_rnns._RNNBase.__init__, "_mindport_stream_kept", False):  # noqa: SLF001 - MindSpore's bases
    _initializer._numpy_seed = numpy_seed  # noqa: SLF001
    _rnns._RNNBase.__init__ = _kept(_rnns._RNNBase.__init__)  # noqa: SLF001
    _rnn_cells.RNNCellBase.__init__ = _kept(_rnn_cells.RNNCellBase.__init__)
    _set_seed = _seed.set_seed
    for _module in (mindspore, mindspore.common, _seed):
        if getattr(_module, "set_seed", None) is _set_seed:
            _module.set_seed = _seeding(_set_seed)


@contextlib.contextmanager
def seeded_by(seed: int):
    """Initial weights (MindSpore's initializers, and any ``np.random`` draw) from a stream seeded by ``seed`` for the
    block: torch's ``generator=`` of an init function (``mindport.runtime.init``); the weights' stream and numpy's
    global one are given back afterwards, unmoved."""
    saved, state = list(_stream), np.random.get_state()
    _stream[:] = [np.random.RandomState(int(seed) % 2**32)]
    np.random.seed(int(seed) % 2**32)
    try:
        yield
    finally:
        _stream[:] = saved
        np.random.set_state(state)
