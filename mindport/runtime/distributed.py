"""torch.distributed's process-group life cycle, ``DistributedDataParallel`` and the launcher's environment, for
converted code (imported as ``mp_distributed``). The collectives themselves map straight to
``mindspore.mint.distributed`` (torch-aligned, in place like torch's); this module covers what differs.

MindSpore's launcher is ``msrun`` (``msrun --worker_num=N --local_worker_num=N script.py``): it starts the processes
and gives each its rank, so ``mindspore.communication.init()`` takes no address, rank or world size. The backend is
the device's (``mccl`` on CPU, ``nccl`` on GPU, ``hccl`` on Ascend), never torch's ``gloo``/``nccl`` name.
Measured on MindSpore 2.10 CPU under msrun: ``mint.distributed.init_process_group`` accepts only ``hccl`` (so it
fails on CPU), and ``mint.distributed.barrier`` returns at once without waiting for the other ranks; the functions
here avoid both.

None of this runs inside a static graph: process groups, hooks and the environment are Python-level state.
"""
from __future__ import annotations

import os

_MISSING = object()
_STARTED_BY_ENVIRON = []  # [True] when environ() initialised communication before init_process_group ran
# torchrun's environment variables -> how to answer them under msrun (which sets RANK_ID/RANK_SIZE instead)
_LAUNCHER_VALUES = {
    "RANK": "get_rank", "WORLD_SIZE": "get_group_size",
    "LOCAL_RANK": "get_local_rank", "LOCAL_WORLD_SIZE": "get_local_rank_size",
}


def is_initialized() -> bool:
    from mindspore.communication import GlobalComm

    return bool(GlobalComm.INITED)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """``torch.distributed.init_process_group``: ``mindspore.communication.init()`` with the device's backend.

    The launcher decides the rendezvous, the rank and the world size: ``backend``, ``init_method``, ``store`` and
    ``timeout`` are not used; an explicit ``world_size``/``rank`` must agree with the launcher's, or this raises
    (a silent disagreement would train a different job)."""
    from mindspore.communication import get_group_size, get_rank, init

    if _STARTED_BY_ENVIRON:  # an earlier os.environ["LOCAL_RANK"] read already joined the job
        _STARTED_BY_ENVIRON.clear()
    elif is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    else:
        init()
    for name, given, actual in (("world_size", world_size, get_group_size()), ("rank", rank, get_rank())):
        if given is not None and int(given) >= 0 and int(given) != actual:
            raise ValueError(f"init_process_group({name}={given}) but the launcher (msrun) started this process "
                             f"with {name} {actual}: set it with msrun's --worker_num / the launcher, not here")


def _sync_world(group=None) -> None:
    """Every rank of the group waits here: an all-reduce of one number (a collective cannot complete early)."""
    import mindspore as ms
    from mindspore import mint

    token = ms.Tensor([1.0], ms.float32)
    if group is None:
        mint.distributed.all_reduce(token)
    else:
        mint.distributed.all_reduce(token, group=group)
    token.asnumpy()  # wait for the result


def barrier(group=None, async_op=False, device_ids=None):
    """``torch.distributed.barrier``: all ranks wait for each other. On CPU, ``mint.distributed.barrier`` does not
    wait (measured on 2.10), so the barrier is an all-reduce; on GPU/Ascend it is MindSpore's own barrier."""
    import mindspore as ms
    from mindspore import mint

    if async_op:
        raise NotImplementedError("mindport: barrier(async_op=True) has no MindSpore counterpart; call barrier()")
    if ms.get_context("device_target") != "CPU":
        return mint.distributed.barrier(group) if group is not None else mint.distributed.barrier()
    _sync_world(group)
    return None


def DistributedDataParallel(module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,  # noqa: N802
                            init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                            check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                            delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                            mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                            bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
    """``torch.nn.parallel.DistributedDataParallel(model)``: the model itself, made data-parallel like torch's.

    As torch's constructor does, every parameter and buffer is broadcast from rank 0, so all ranks start equal; each
    trainable parameter then gets a gradient hook that all-reduces its gradient and divides by the world size (the
    mean torch's DDP computes), so ``mindspore.value_and_grad`` returns the averaged gradients and the optimizer
    steps every rank identically. Hooks run in PyNative mode (MindSpore's default), not in a compiled graph."""
    import mindspore as ms
    from mindspore import mint

    if process_group is not None:
        raise NotImplementedError("mindport: DistributedDataParallel(process_group=...) is not converted: the "
                                  "data-parallel gradient mean here spans the whole job")
    world = mint.distributed.get_world_size()
    for param in module.get_parameters():
        if param.requires_grad or broadcast_buffers is not False:
            value = ms.Tensor(param.asnumpy())
            mint.distributed.broadcast(value, src=0)
            param.set_data(value)
    if world > 1:
        def average(grad):
            grad = grad.copy()
            mint.distributed.all_reduce(grad)
            return grad / world

        for param in module.trainable_params():
            param.register_hook(average)
    return module


def environ(name, default=_MISSING):
    """``os.environ[name]`` / ``os.environ.get(name, default)`` for torchrun's ``RANK``, ``WORLD_SIZE``,
    ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE``: the variable when the launcher set it (torchrun does), else, under
    msrun (which sets ``RANK_ID``/``RANK_SIZE`` only), the same value from ``mindspore.communication`` (which
    initialises communication when it is not yet: the launcher started this process for it). Outside any
    launcher: the default, or ``KeyError`` as ``os.environ[name]`` raises."""
    if name in os.environ:
        return os.environ[name]
    if name in _LAUNCHER_VALUES and os.environ.get("MS_ROLE"):  # msrun sets it in the scheduler and the workers
        import mindspore.communication as comm

        if not is_initialized():
            comm.init()
            _STARTED_BY_ENVIRON.append(True)
        return str(getattr(comm, _LAUNCHER_VALUES[name])())
    if default is _MISSING:
        raise KeyError(name)
    return default


def set_device(device):
    """``torch.cuda.set_device(local_rank)``: the process's device number, for GPU/Ascend jobs; on CPU there is
    nothing to choose (msrun gives each process its rank; MindSpore binds the device at ``init()``)."""
    import mindspore as ms

    target = ms.get_context("device_target")
    if target in ("GPU", "Ascend"):
        index = device if isinstance(device, int) else int(str(device).rpartition(":")[2] or 0)
        ms.set_device(target, index)


_RANDPERM_32BIT_LIMIT = 2 ** 32 // 20  # torch's CPU randperm draws 32-bit numbers below this length


def torch_randperm(n: int, seed: int) -> list[int]:
    """The permutation ``torch.randperm(n, generator=torch.Generator().manual_seed(seed))`` gives on the CPU,
    computed without torch: torch's CPU generator is MT19937 seeded with the seed's low 32 bits (numpy's legacy
    ``RandomState`` seeds it the same way), and randperm walks the positions swapping position ``i`` with
    ``i + draw % (n - i)``, one 32-bit draw per position. Checked equal to torch's (torch 2.13) over lengths and
    seeds by tests/distributed/test_sampler.py."""
    import numpy as np

    if n >= _RANDPERM_32BIT_LIMIT:
        raise NotImplementedError(f"mindport: DistributedSampler over {n} samples: torch draws 64-bit numbers "
                                  f"from {_RANDPERM_32BIT_LIMIT} samples on, which is not reproduced")
    order = list(range(n))
    if n < 2:
        return order
    draws = np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2 ** 32, size=n - 1, dtype=np.uint32)
    offsets = (draws.astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)).tolist()
    for i, offset in enumerate(offsets):
        j = i + offset
        order[i], order[j] = order[j], order[i]
    return order


class DistributedSampler:
    """``torch.utils.data.distributed.DistributedSampler``: the same indices on every rank as torch's, for
    ``ds.GeneratorDataset(..., sampler=...)`` (MindSpore iterates it again every epoch, like torch's DataLoader).

    ``num_replicas``/``rank`` left out are the job's world size and rank (``mindspore.communication``, as torch
    takes them from the process group). ``shuffle`` draws torch's own permutation of seed ``seed + epoch``
    (:func:`torch_randperm`), ``set_epoch(epoch)`` changes it as in torch; without ``drop_last`` the indices are
    padded to a multiple of ``num_replicas`` by repeating the first ones, with it the tail is dropped; rank ``r``
    takes every ``num_replicas``-th index from ``r``. MindSpore's ``ds.DistributedSampler`` differs: its
    permutation is its own, it reshuffles every epoch with no ``set_epoch`` or ``seed``, and it has no ``drop_last``.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from mindspore.communication import get_group_size, get_rank

            if not is_initialized():
                raise RuntimeError("DistributedSampler without num_replicas/rank needs the process group: call "
                                   "init_process_group() first (the job's world size and rank come from it)")
            num_replicas = get_group_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        length = len(dataset)
        if drop_last and length % num_replicas:
            self.num_samples = -(-(length - num_replicas) // num_replicas)
        else:
            self.num_samples = -(-length // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        length = len(self.dataset)
        indices = torch_randperm(length, self.seed + self.epoch) if self.shuffle else list(range(length))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:
            while len(indices) < self.total_size:  # pad by repeating from the start, as often as needed
                indices += indices[:self.total_size - len(indices)]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The next iteration's shuffle uses ``seed + epoch``, as in torch."""
        self.epoch = epoch
