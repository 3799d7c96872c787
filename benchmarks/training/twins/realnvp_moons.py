"""Hand-written MindSpore twin of seanie12/realnvp_moons' training step (our own code, for speed.py): the same
RealNVP (5 coupling layers, hidden 24, LeakyReLU 0.01, strided halves), the same standard-normal prior log-density,
loss = -sum(log p(x)), Adam(lr=1e-3), batches of 128 two-moons points; ``mindspore.value_and_grad`` built once, the
loss printed every 100 steps as the script prints it. Usage: python realnvp_moons.py STEPS [blocking]
(``blocking``: ``mindspore.runtime.launch_blocking()`` first, as the converted loop's runtime does on the CPU)."""
import math
import sys

import mindspore as ms
import numpy as np
from mindspore import nn, ops


class Coupling(nn.Cell):
    def __init__(self, dim, hidden, parity):
        super().__init__()
        self.parity = parity
        self.scale = nn.SequentialCell(nn.Dense(dim // 2, hidden), nn.LeakyReLU(0.01), nn.Dense(hidden, dim // 2))
        self.translate = nn.SequentialCell(nn.Dense(dim // 2, hidden), nn.LeakyReLU(0.01), nn.Dense(hidden, dim // 2))

    def construct(self, x):
        x0, x1 = x[:, ::2], x[:, 1::2]
        if self.parity:
            x0, x1 = x1, x0
        s, t = self.scale(x0), self.translate(x0)
        z1 = ops.exp(s) * x1 + t
        z0 = x0
        if self.parity:
            z0, z1 = z1, z0
        return ops.cat([z0, z1], axis=1), s.sum(axis=1)


class Flow(nn.Cell):
    def __init__(self, blocks=5, dim=2, hidden=24):
        super().__init__()
        self.flows = nn.CellList([Coupling(dim, hidden, i % 2) for i in range(blocks)])

    def construct(self, x):
        log_det = ops.zeros(x.shape[0])
        for flow in self.flows:
            x, ld = flow(x)
            log_det = log_det + ld
        prior = -0.5 * (x * x).sum(axis=1) - math.log(2 * math.pi)
        return -(prior + log_det).sum()


def moons(n, noise=0.05):
    t_out, t_in = np.linspace(0, np.pi, n // 2), np.linspace(0, np.pi, n - n // 2)
    x = np.vstack([np.append(np.cos(t_out), 1 - np.cos(t_in)), np.append(np.sin(t_out), 1 - np.sin(t_in) - .5)]).T
    return (x + np.random.normal(scale=noise, size=x.shape)).astype(np.float32)


def main(steps):
    model = Flow()
    opt = nn.Adam(model.trainable_params(), learning_rate=1e-3)
    step = ms.value_and_grad(model, None, opt.parameters)
    for epoch in range(steps + 1):
        loss, grads = step(ms.Tensor(moons(128)))
        opt(grads)
        if epoch % 100 == 0:
            print(loss.item())


if __name__ == "__main__":
    if sys.argv[2:] == ["blocking"]:
        ms.runtime.launch_blocking()
    main(int(sys.argv[1]))
