"""``torch.optim.swa_utils`` weight averaging on MindSpore: :class:`AveragedModel` (an EMA or SWA copy of a model)
and the averaging functions torch hands it (``get_ema_multi_avg_fn``, ``get_swa_multi_avg_fn``, ``get_ema_avg_fn``,
``get_swa_avg_fn``). MindSpore 2.10 has no equivalent (``mindspore.train.callback`` has no EMA of weights), and
an EMA copy of the weights is a common training shape: the class follows torch's ``AveragedModel.update_parameters``
step by step (the first update copies the model; later ones average parameters, or parameters and buffers with
``use_buffers=True``; buffers are otherwise copied from the model; ``n_averaged`` counts the updates), writes in place
(``Parameter.set_data``), and averages in float32 as torch does (torch's ``lerp`` formula for the EMA and SWA
multi-tensor functions: ``start + w * (end - start)`` below w = 0.5, ``end - (end - start) * (1 - w)`` from it)."""
import copy

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops

from mindport.runtime.containers import buffers, parameters


def _lerp(start, end, weight):
    """torch.lerp(start, end, weight) for a Python float weight, with torch's two-branch formula (bit-for-bit)."""
    diff = end - start
    if weight < 0.5:
        return start + diff * weight
    return end - diff * (1.0 - weight)


def _write(target, value):
    value = value.astype(target.dtype) if value.dtype != target.dtype else value
    if isinstance(target, Parameter):
        target.set_data(value)
    else:
        target.assign_value(value)


def _is_float(t) -> bool:
    return ops.is_floating_point(t) if hasattr(ops, "is_floating_point") else t.dtype in (ms.float16, ms.float32,
                                                                                         ms.float64, ms.bfloat16)


def _count(num_averaged) -> int:
    return int(num_averaged.asnumpy()) if isinstance(num_averaged, Tensor) else int(num_averaged)


def get_ema_multi_avg_fn(decay=0.999):
    """torch's ``get_ema_multi_avg_fn``: each averaged tensor moves (1 - decay) of the way to the model's
    (``torch._foreach_lerp_``); integer tensors by ``ema * decay + model * (1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        if not ema_param_list:
            return
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if _is_float(p_ema):
                _write(p_ema, _lerp(p_ema.value() if isinstance(p_ema, Parameter) else p_ema, p_model, 1 - decay))
            else:
                _write(p_ema, p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """torch's ``get_swa_multi_avg_fn``: the running mean, each averaged tensor moved 1 / (n + 1) of the way to the
    model's (``torch._foreach_lerp_``); integer tensors by ``avg + (model - avg) / (n + 1)``."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if not averaged_param_list:
            return
        n = _count(num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if _is_float(p_avg):
                _write(p_avg, _lerp(p_avg.value() if isinstance(p_avg, Parameter) else p_avg, p_model, 1 / (n + 1)))
            else:
                _write(p_avg, p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """torch's ``get_ema_avg_fn``: ``decay * ema + (1 - decay) * model`` (a value; AveragedModel writes it)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """torch's ``get_swa_avg_fn``: ``avg + (model - avg) / (n + 1)`` (a value; AveragedModel writes it)."""

    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (_count(num_averaged) + 1)

    return swa_update


class AveragedModel(nn.Cell):
    """``torch.optim.swa_utils.AveragedModel(model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False)``:
    a deep copy of ``model`` (``self.module``; calling this Cell calls it) and ``n_averaged`` (a non-trainable int64
    Parameter: the state_dict key torch writes). ``update_parameters(model)`` is torch's: the first call copies the
    model's values; later calls apply ``multi_avg_fn`` (lists of the averaged and the model's tensors, and
    ``n_averaged``), else ``avg_fn`` per tensor (its value written), else the SWA running mean; with
    ``use_buffers=False`` the buffers are copied from the model each time. ``device`` is accepted and ignored (one
    device in a MindSpore context)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.n_averaged = Parameter(Tensor(0, ms.int64), name="n_averaged", requires_grad=False)
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def construct(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return list(parameters(model)) + list(buffers(model))
        return list(parameters(model))

    def update_parameters(self, model):
        """torch's ``AveragedModel.update_parameters``, in place, outside any graph."""
        averaged = self._tensors(self.module)
        current = [ops.stop_gradient(p.value() if isinstance(p, Parameter) else p) for p in self._tensors(model)]
        n = _count(self.n_averaged)
        if n == 0:
            for p_avg, p_model in zip(averaged, current):
                _write(p_avg, p_model)
        else:
            num = Tensor(n, ms.int64)
            if self.multi_avg_fn is not None or self.avg_fn is None:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(averaged, current, num)
            else:
                for p_avg, p_model in zip(averaged, current):
                    _write(p_avg, self.avg_fn(p_avg.value() if isinstance(p_avg, Parameter) else p_avg, p_model, num))
        if not self.use_buffers:
            for b_avg, b_model in zip(list(buffers(self.module)), list(buffers(model))):
                _write(b_avg, ops.stop_gradient(b_model.value() if isinstance(b_model, Parameter) else b_model))
        self.n_averaged.set_data(Tensor(n + 1, ms.int64))
