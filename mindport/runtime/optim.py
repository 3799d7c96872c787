"""``torch.optim`` optimizers whose MindSpore counterpart updates differently.

``mindspore.experimental.optim.Adam`` runs the ``ops.Adam`` primitive: it applies the bias corrections to the
learning rate and adds ``eps`` to the uncorrected ``sqrt(v)``, so its ``eps`` is ``eps / sqrt(1 - beta2**t)`` in
torch's terms (31x torch's at the first step with the default betas), and it ignores ``amsgrad``. Fed the same
gradients, its parameters leave torch's after one step wherever a gradient is small next to that ``eps`` (1e-7 ..
1e-5: a batch-normalised network has many); ``mindspore.experimental.optim.AdamW`` follows torch's formulas.

A MindSpore optimizer is a Cell that holds the Parameters it updates, and a Cell refuses two Parameters of one name
(``name 'weight' already exists``). A Parameter is named by its path in the Cell that built it, so the parameters of
two models trained by one optimizer (``list(G.parameters()) + list(D.parameters())``, ``itertools.chain``, param
groups from two models) collide where torch, which never names a tensor, takes them all: ``distinct_names`` names
them apart first.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import Parameter, ops
from mindspore.experimental.optim import AdamW as _AdamW
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs

__all__ = ["Adam", "distinct_names"]


class Adam(_AdamW):
    """``torch.optim.Adam``: torch's update (``eps`` after the bias-corrected ``sqrt(v_hat)``, ``amsgrad``,
    ``maximize``) with its L2 ``weight_decay`` added to the gradient, as torch does, not decoupled as AdamW's.

    MindSpore's AdamW implementation is torch's Adam formula; this runs it with a decay of 0 on the gradient that
    already carries torch's L2 term."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=float(weight_decay), amsgrad=amsgrad,
                         maximize=maximize)

    def construct(self, gradients):
        self.assignadd(self.state_step, self.increase_tensor)
        for group_id, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            start_id = self.group_start_id[group_id]
            end_id = self.group_start_id[group_id + 1]
            lr = self.lrs[group_id]
            if isinstance(group.get("lr"), float):
                lr = self.op_cast(group.get("lr"), ms.float32)
            grads = tuple(grad if not group.get("maximize") else ops.neg(grad)
                          for grad in gradients[start_id:end_id])
            decay = group.get("weight_decay")
            if decay != 0.0:
                grads = tuple(grad + decay * param for grad, param in zip(grads, self.parameters[start_id:end_id]))
            self.implementation(lr, 0.0, beta1, beta2, group.get("amsgrad"), group.get("eps"), grads, start_id,
                                end_id)
        return True


def distinct_names(params):
    """torch's ``params`` for a MindSpore optimizer: Parameters or param groups (dicts with ``params``) from any
    iterable (a generator, ``itertools.chain``: read once, as torch reads it), each Parameter named apart from every
    other. The first Parameter of a name keeps it; a later, different Parameter of that name becomes ``k.name`` (the
    smallest ``k`` from 1 no Parameter here has), as if the models were the members of a CellList. Renamed Parameters
    keep the new name (MindSpore's own rule: a Parameter's name is unique among those a Cell holds); ``state_dict()``
    and ``named_parameters()`` name parameters by their place in the model, which does not change."""
    if isinstance(params, Parameter) or not hasattr(params, "__iter__"):
        return params  # torch's and MindSpore's own error for a lone tensor or a non-iterable
    params = list(params)
    groups = [dict(group) for group in params] if params and isinstance(params[0], dict) else None
    members = []
    for group in groups or ():
        if not isinstance(group.get("params"), Parameter) and hasattr(group.get("params"), "__iter__"):
            group["params"] = list(group["params"])
        members += group["params"] if isinstance(group.get("params"), list) else [group.get("params")]
    if groups is None:
        members = params
    distinct = list({id(p): p for p in members if isinstance(p, Parameter)}.values())
    taken = {p.name for p in distinct}
    kept: set = set()
    for param in distinct:
        if param.name in kept:
            k = 1
            while f"{k}.{param.name}" in taken:
                k += 1
            param.name = f"{k}.{param.name}"
            taken.add(param.name)
        kept.add(param.name)
    return groups if groups is not None else params
