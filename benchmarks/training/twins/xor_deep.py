"""Hand-written MindSpore twin of eyebrow/xor_deep's training step (our own code, for speed.py): XOR's four points,
a 2-10-10-10-1 sigmoid MLP, binary cross-entropy (``ops.binary_cross_entropy``, one kernel), SGD(lr=1) over the full
batch; ``mindspore.value_and_grad`` built once, the loss printed every 100 steps as the script prints it.
Usage: python xor_deep.py STEPS [blocking] (``blocking``: ``mindspore.runtime.launch_blocking()`` first)."""
import sys

import mindspore as ms
from mindspore import nn, ops
from mindspore.experimental import optim


def main(steps):
    x = ms.Tensor([[0, 0], [0, 1], [1, 0], [1, 1]], ms.float32)
    y = ms.Tensor([[0], [1], [1], [0]], ms.float32)
    model = nn.SequentialCell(nn.Dense(2, 10), nn.Sigmoid(), nn.Dense(10, 10), nn.Sigmoid(),
                              nn.Dense(10, 10), nn.Sigmoid(), nn.Dense(10, 1), nn.Sigmoid())
    opt = optim.SGD(model.trainable_params(), lr=1)

    def forward(x, y):
        return ops.binary_cross_entropy(model(x), y)

    step = ms.value_and_grad(forward, None, opt.parameters)
    for epoch in range(steps):
        loss, grads = step(x, y)
        opt(grads)
        if epoch % 100 == 0:
            print(epoch, loss.item())


if __name__ == "__main__":
    if "blocking" in sys.argv[2:]:
        ms.runtime.launch_blocking()
    main(int(sys.argv[1]))
