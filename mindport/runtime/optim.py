"""``torch.optim`` optimizers whose MindSpore counterpart updates differently.

``mindspore.experimental.optim.Adam`` runs the ``ops.Adam`` primitive: it applies the bias corrections to the
learning rate and adds ``eps`` to the uncorrected ``sqrt(v)``, so its ``eps`` is ``eps / sqrt(1 - beta2**t)`` in
torch's terms (31x torch's at the first step with the default betas), and it ignores ``amsgrad``. Fed the same
gradients, its parameters leave torch's after one step wherever a gradient is small next to that ``eps`` (1e-7 ..
1e-5: a batch-normalised network has many); ``mindspore.experimental.optim.AdamW`` follows torch's formulas.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import ops
from mindspore.experimental.optim import AdamW as _AdamW

__all__ = ["Adam"]


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
