"""torch.distributed's process-group life cycle, ``DistributedDataParallel``, ``DistributedSampler`` and the
launcher's environment, for converted code (imported as ``mp_distributed``). The collectives MindSpore runs
everywhere (``all_reduce``, ``all_gather``, ``broadcast``, ``all_gather_object``) map straight to
``mindspore.mint.distributed`` (torch-aligned, in place like torch's); the ones whose MindSpore kernels are missing
on CPU (``reduce``, ``reduce_scatter``, ``all_to_all``, ``gather``, ``scatter``, the object collectives,
``send``/``recv`` …) are composed here from those three; this module covers what differs.

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

from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs

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


class DistributedDataParallel:
    """``torch.nn.parallel.DistributedDataParallel(model)``: the model itself, made data-parallel like torch's.

    As torch's constructor does, every parameter and buffer is broadcast from rank 0, so all ranks start equal; each
    trainable parameter then gets a gradient hook that all-reduces its gradient and divides by the world size (the
    mean torch's DDP computes), so ``mindspore.value_and_grad`` returns the averaged gradients and the optimizer
    steps every rank identically. Hooks run in PyNative mode (MindSpore's default), not in a compiled graph.

    A class whose construction returns the model (``__new__``), so ``isinstance(model, DDP)`` stays a type test as
    in torch (a function there raised "isinstance() arg 2 must be a type": awmthink/pytorch-in-action's trainer,
    ``if isinstance(self.model, DDP): model = self.model.module``). It answers False: the port's model is no wrapper
    (its ``.module`` is the model itself, the distributed rule), so such a test takes the branch of an unwrapped
    model; wrapping twice averages the averaged gradient, the same mean."""

    def __new__(cls, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        return _data_parallel(module, broadcast_buffers, process_group)


def _data_parallel(module, broadcast_buffers, process_group):
    """:class:`DistributedDataParallel`'s work on ``module``: broadcast from rank 0, gradient-averaging hooks."""
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


# --- collectives MindSpore 2.10 lacks on CPU, composed from the ones it has ------------------------------------------
# mint.distributed's reduce, reduce_scatter(_tensor), all_gather_into_tensor, all_to_all(_single), gather, scatter and
# the object collectives but all_gather_object fail under msrun on CPU (kernels not registered, or "group
# hccl_world_group does not exist": measured on 2.10). These compose the same results from all_reduce (reductions),
# all_gather and broadcast (moving data, as bytes: any shapes, any numpy dtype), which work on every device. Data
# moves through host memory and every rank receives what all ranks send: correct everywhere, slower than a native
# collective on GPU/Ascend.

def _group_kw(group) -> dict:
    return {} if group is None else {"group": group}


def _me_and_world(group) -> tuple[int, int]:
    from mindspore import mint

    return mint.distributed.get_rank(**_group_kw(group)), mint.distributed.get_world_size(**_group_kw(group))


def _no_async(name, async_op) -> None:
    if async_op:
        raise NotImplementedError(f"mindport: {name}(async_op=True) has no Work handle here; call it synchronously")


def _global_rank(group, global_rank, group_rank, what) -> int:
    """torch's ``src``/``dst`` (a global rank) or ``group_src``/``group_dst`` (a rank in ``group``); 0 when both are
    left out, as in torch."""
    from mindspore import mint

    if global_rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        return group_rank if group is None else mint.distributed.get_global_rank(group, group_rank)
    return 0 if global_rank is None else global_rank


def _all_gather_bytes(payload: bytes, group=None) -> list[bytes]:
    """Every rank's ``payload``, in group-rank order: the lengths by all_gather, then the bytes padded to the longest."""
    import mindspore as ms
    import numpy as np
    from mindspore import mint

    _, world = _me_and_world(group)
    lengths = [ms.Tensor(np.zeros(1, np.int64)) for _ in range(world)]
    mint.distributed.all_gather(lengths, ms.Tensor(np.array([len(payload)], np.int64)), **_group_kw(group))
    sizes = [int(t.asnumpy()[0]) for t in lengths]
    padded = np.zeros(max(max(sizes), 1), np.uint8)
    padded[:len(payload)] = np.frombuffer(payload, np.uint8)
    parts = [ms.Tensor(np.zeros_like(padded)) for _ in range(world)]
    mint.distributed.all_gather(parts, ms.Tensor(padded), **_group_kw(group))
    return [part.asnumpy()[:size].tobytes() for part, size in zip(parts, sizes)]


def _broadcast_bytes(payload, src: int, group=None) -> bytes:
    """``payload`` of global rank ``src`` on every rank (the length first, then the bytes)."""
    import mindspore as ms
    import numpy as np
    from mindspore import mint

    length = ms.Tensor(np.array([len(payload) if payload is not None else 0], np.int64))
    mint.distributed.broadcast(length, src=src, **_group_kw(group))
    buffer = np.zeros(max(int(length.asnumpy()[0]), 1), np.uint8)
    if payload is not None:
        buffer[:len(payload)] = np.frombuffer(payload, np.uint8)
    data = ms.Tensor(buffer)
    mint.distributed.broadcast(data, src=src, **_group_kw(group))
    return data.asnumpy()[:int(length.asnumpy()[0])].tobytes()


def _arrays(tensors) -> list:
    return [t.asnumpy() for t in tensors]


def _write(out, array) -> None:
    """torch's collectives write into the caller's tensor: so does this."""
    import mindspore as ms

    out.copy_(ms.Tensor(array.reshape(tuple(out.shape)), dtype=out.dtype))


def reduce(tensor, dst=None, op="sum", group=None, async_op=False, group_dst=None):
    """``torch.distributed.reduce``: rank ``dst`` ends with the reduction of every rank's ``tensor``. Other ranks'
    tensors are left as they were; torch's gloo leaves partial results of its algorithm in them (measured on torch
    2.13), which torch documents as unspecified."""
    from mindspore import mint

    _no_async("reduce", async_op)
    dst = _global_rank(group, dst, group_dst, "dst")
    result = tensor.copy()
    mint.distributed.all_reduce(result, op=op, **_group_kw(group))
    if mint.distributed.get_rank() == dst:
        _write(tensor, result.asnumpy())


def reduce_scatter(output, input_list, op="sum", group=None, async_op=False):
    """``torch.distributed.reduce_scatter``: ``output`` = the reduction over ranks of each rank's
    ``input_list[my rank]`` (an all-reduce of the whole list, of which this rank keeps its part)."""
    from mindspore import mint, ops

    _no_async("reduce_scatter", async_op)
    me, _ = _me_and_world(group)
    stacked = ops.stack(list(input_list))
    mint.distributed.all_reduce(stacked, op=op, **_group_kw(group))
    _write(output, stacked.asnumpy()[me])


def reduce_scatter_tensor(output, input, op="sum", group=None, async_op=False):
    """``torch.distributed.reduce_scatter_tensor``: ``input`` is world-size chunks along its first dimension;
    ``output`` = the reduction over ranks of chunk ``my rank``."""
    from mindspore import mint

    _no_async("reduce_scatter_tensor", async_op)
    me, world = _me_and_world(group)
    total = input.copy()
    mint.distributed.all_reduce(total, op=op, **_group_kw(group))
    _write(output, total.asnumpy().reshape(world, -1)[me])


def _all_gather_arrays(arrays, group=None) -> list[list]:
    """Every rank's list of numpy arrays, in group-rank order."""
    import pickle

    return [pickle.loads(part) for part in _all_gather_bytes(pickle.dumps(arrays), group)]


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``torch.distributed.all_gather_into_tensor``: every rank's ``input_tensor`` in rank order, filling
    ``output_tensor`` (concatenated along the first dimension, or stacked: the same elements)."""
    import numpy as np

    _no_async("all_gather_into_tensor", async_op)
    parts = _all_gather_arrays(_arrays([input_tensor]), group)
    _write(output_tensor, np.concatenate([p[0].reshape(-1) for p in parts]))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """``torch.distributed.gather``: on rank ``dst``, ``gather_list[i]`` = rank ``i``'s ``tensor``."""
    from mindspore import mint

    _no_async("gather", async_op)
    dst = _global_rank(group, dst, group_dst, "dst")
    parts = _all_gather_arrays(_arrays([tensor]), group)
    if mint.distributed.get_rank() == dst:
        for out, part in zip(gather_list, parts):
            _write(out, part[0])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """``torch.distributed.scatter``: ``tensor`` = ``scatter_list[my rank]`` of rank ``src`` (the list is needed
    on ``src`` only, as in torch)."""
    import pickle

    from mindspore import mint

    _no_async("scatter", async_op)
    src = _global_rank(group, src, group_src, "src")
    me, _ = _me_and_world(group)
    payload = pickle.dumps(_arrays(scatter_list)) if mint.distributed.get_rank() == src else None
    _write(tensor, pickle.loads(_broadcast_bytes(payload, src, group))[me])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``torch.distributed.all_to_all``: ``output_tensor_list[j]`` = rank ``j``'s ``input_tensor_list[my rank]``
    (chunks of any shapes)."""
    _no_async("all_to_all", async_op)
    me, _ = _me_and_world(group)
    parts = _all_gather_arrays(_arrays(input_tensor_list), group)
    for out, part in zip(output_tensor_list, parts):
        _write(out, part[me])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """``torch.distributed.all_to_all_single``: ``input`` split along its first dimension (equally, or by
    ``input_split_sizes``), chunk ``j`` to rank ``j``; ``output`` = the chunks every rank sent here, in rank order."""
    import numpy as np

    _no_async("all_to_all_single", async_op)
    me, world = _me_and_world(group)
    data = input.asnumpy()
    sizes = list(input_split_sizes) if input_split_sizes else [data.shape[0] // world] * world
    chunks = np.split(data, np.cumsum(sizes)[:-1].tolist())
    parts = _all_gather_arrays(chunks, group)
    _write(output, np.concatenate([part[me] for part in parts]))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """``torch.distributed.broadcast_object_list``: every rank's ``object_list`` becomes ``src``'s, in place
    (pickled, as in torch)."""
    import pickle

    from mindspore import mint

    src = _global_rank(group, src, group_src, "src")
    payload = pickle.dumps(list(object_list)) if mint.distributed.get_rank() == src else None
    object_list[:] = pickle.loads(_broadcast_bytes(payload, src, group))


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """``torch.distributed.gather_object``: on rank ``dst``, ``object_gather_list[i]`` = rank ``i``'s ``obj``."""
    import pickle

    from mindspore import mint

    dst = _global_rank(group, dst, group_dst, "dst")
    objects = [pickle.loads(part) for part in _all_gather_bytes(pickle.dumps(obj), group)]
    if mint.distributed.get_rank() == dst:
        object_gather_list[:] = objects


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """``torch.distributed.scatter_object_list``: ``scatter_object_output_list[0]`` = ``src``'s
    ``scatter_object_input_list[my rank]``."""
    import pickle

    from mindspore import mint

    src = _global_rank(group, src, group_src, "src")
    me, _ = _me_and_world(group)
    payload = pickle.dumps(list(scatter_object_input_list)) if mint.distributed.get_rank() == src else None
    scatter_object_output_list[0] = pickle.loads(_broadcast_bytes(payload, src, group))[me]


_PAIR_GROUPS: dict[tuple[int, int], str] = {}


def _pair_group(me: int, peer: int) -> str:
    """The 2-rank group of ``me`` and ``peer``, created at their first exchange (only its two members take part,
    measured with 3 msrun workers on 2.10) and kept."""
    from mindspore import mint

    if me == peer:
        raise ValueError("Invalid destination rank: should not be the same as the rank of the current process.")
    key = (min(me, peer), max(me, peer))
    if key not in _PAIR_GROUPS:
        _PAIR_GROUPS[key] = mint.distributed.new_group(list(key))
    return _PAIR_GROUPS[key]


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """``torch.distributed.send``: a broadcast from this rank in the 2-rank group of this rank and ``dst``. Like
    torch's gloo send (measured: it returns when the peer receives), it waits for the matching ``recv``."""
    from mindspore import mint

    if dst is None and group_dst is None:
        raise ValueError("send needs dst")
    dst = _global_rank(group, dst, group_dst, "dst")
    me = mint.distributed.get_rank()
    mint.distributed.broadcast(tensor.copy(), src=me, group=_pair_group(me, dst))


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """``torch.distributed.recv`` from a given rank (``src=None``, any sender, is flagged by the mapping): the
    sender's broadcast in their 2-rank group, written into ``tensor``; returns ``src`` as torch does."""
    from mindspore import mint

    if src is None and group_src is None:
        raise NotImplementedError("mindport: recv from any sender (src=None) is not converted: give src")
    src = _global_rank(group, src, group_src, "src")
    mint.distributed.broadcast(tensor, src=src, group=_pair_group(mint.distributed.get_rank(), src))
    tensor.asnumpy()  # wait for the data, as torch's recv does
    return src
