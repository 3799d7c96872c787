"""Hand-written MindSpore twin of dragen/himmelblau's loop (our own code, for speed.py): gradient descent on the
Himmelblau function from (-4, 0) with Adam(lr=1e-3) on one Parameter of two elements; ``mindspore.value_and_grad``
built once, the value printed every 500 steps as the script prints it. Usage: python himmelblau.py STEPS [blocking]."""
import sys

import mindspore as ms
from mindspore.experimental import optim


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def main(steps):
    x = ms.Parameter(ms.Tensor([-4., 0.]), name="x")
    opt = optim.AdamW([x], lr=1e-3, weight_decay=0.0)  # torch's Adam formula (experimental Adam's eps differs)
    step = ms.value_and_grad(himmelblau, None, opt.parameters)
    for i in range(steps):
        pred, grads = step(x)
        opt(grads)
        if i % 500 == 0:
            print(f"step {i}: x = {x.tolist()}, f(x) = {pred.item()}")


if __name__ == "__main__":
    if "blocking" in sys.argv[2:]:
        ms.runtime.launch_blocking()
    main(int(sys.argv[1]))
