"""Runs one training script of the corpus under a fixed seed, optionally made deterministic across frameworks.

Usage: python boot.py SIDE MODE STATE_DIR SCRIPT [ARGS...]

SIDE is ``torch`` or ``mindspore``; MODE is ``plain`` or ``track``. The script runs as ``__main__`` with its own
folder first on ``sys.path`` and as the working directory, exactly as ``python SCRIPT ARGS`` would run it.

``track`` makes a script deterministic across the two frameworks without touching its code:
- every random draw the script makes through the framework (``randn``, ``rand``, ``randint``, ``normal``,
  ``randn_like``, ``rand_like``, ``randperm``) comes from one numpy stream seeded alike on both sides, so the data
  and the noise are the same numbers;
- each optimizer records (torch) or receives (MindSpore) its parameters' initial values when it is built, in the
  order of its parameter list, so both sides start from the same weights.
Nothing here is imported by the converted code; it only wraps the run.
"""
import os
import random
import runpy
import sys

import numpy as np

SEED = 0
_stream = np.random.RandomState(1234)


def _size(args, kwargs):
    size = kwargs.pop("size", None)
    if size is None:
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            size = tuple(args[0])
        else:
            size = tuple(int(a) for a in args)
    elif not isinstance(size, (tuple, list)):
        size = (int(size),)
    return tuple(int(s) for s in size)


def _shape_of(t):
    return tuple(int(s) for s in t.shape)


def _install_torch(mode, state):
    import torch
    torch.manual_seed(SEED)
    if mode != "track":
        return
    as_t = lambda a, dt=None: torch.from_numpy(np.ascontiguousarray(a)).to(dt or torch.float32)
    torch.randn = lambda *a, dtype=None, **k: as_t(_stream.standard_normal(_size(a, k)).astype(np.float32), dtype)
    torch.rand = lambda *a, dtype=None, **k: as_t(_stream.random_sample(_size(a, k)).astype(np.float32), dtype)
    torch.randn_like = lambda x, dtype=None, **k: as_t(_stream.standard_normal(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    torch.rand_like = lambda x, dtype=None, **k: as_t(_stream.random_sample(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    torch.randperm = lambda n, **k: torch.from_numpy(_stream.permutation(int(n)).astype(np.int64))
    original_init = torch.optim.Optimizer.__init__
    count = [0]

    def init(self, params, *a, **k):
        original_init(self, params, *a, **k)
        arrays = [p.detach().cpu().numpy() for g in self.param_groups for p in g["params"]]
        np.savez(os.path.join(state, "opt%d.npz" % count[0]), *arrays)
        count[0] += 1
    torch.optim.Optimizer.__init__ = init


def _install_mindspore(mode, state):
    import mindspore as ms
    from mindspore import ops
    ms.set_seed(SEED)
    if mode != "track":
        return
    as_t = lambda a, dt=None: ms.Tensor(np.ascontiguousarray(a), dtype=dt or ms.float32)
    ops.randn = lambda *a, dtype=None, seed=None, **k: as_t(_stream.standard_normal(_size(a, k)).astype(np.float32), dtype)
    ops.rand = lambda *a, dtype=None, seed=None, **k: as_t(_stream.random_sample(_size(a, k)).astype(np.float32), dtype)
    ops.randn_like = lambda x, dtype=None, seed=None, **k: as_t(_stream.standard_normal(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    ops.rand_like = lambda x, dtype=None, seed=None, **k: as_t(_stream.random_sample(_shape_of(x)).astype(np.float32), dtype or x.dtype)
    ops.randperm = lambda n, seed=0, offset=0, dtype=ms.int64: ms.Tensor(_stream.permutation(int(n)), dtype=dtype)
    count = [0]

    def load(params):
        path = os.path.join(state, "opt%d.npz" % count[0])
        count[0] += 1
        if not os.path.exists(path):
            raise RuntimeError("track: torch built fewer optimizers than MindSpore (%s missing)" % path)
        with np.load(path) as data:
            arrays = [data["arr_%d" % i] for i in range(len(data.files))]
        if len(arrays) != len(params):
            raise RuntimeError("track: optimizer %d has %d parameters in torch, %d in MindSpore"
                               % (count[0] - 1, len(arrays), len(params)))
        for p, a in zip(params, arrays):
            if tuple(p.shape) != a.shape:
                raise RuntimeError("track: parameter %s is %s in MindSpore, %s in torch" % (p.name, tuple(p.shape), a.shape))
            p.set_data(ms.Tensor(a, dtype=p.dtype))

    def wrap(cls, flat_params):
        original_init = cls.__init__

        def init(self, *a, **k):
            original_init(self, *a, **k)
            load(flat_params(self))
        cls.__init__ = init

    from mindspore.experimental import optim as exp_optim
    wrap(exp_optim.Optimizer, lambda self: [p for g in self.param_groups for p in g["params"]])
    wrap(ms.nn.Optimizer, lambda self: list(self.parameters))


def main():
    side, mode, state, script = sys.argv[1:5]
    sys.argv = [script] + sys.argv[5:]
    random.seed(SEED)
    np.random.seed(SEED)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if side == "torch":
        _install_torch(mode, state)
    else:
        _install_mindspore(mode, state)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
