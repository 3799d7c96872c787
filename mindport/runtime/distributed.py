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
