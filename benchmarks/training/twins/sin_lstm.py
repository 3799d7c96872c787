"""Hand-written MindSpore twin of north/sin_lstm's loop (our own code, for speed.py): a sine curve cut into windows of
5, an LSTM(5, 2) + Dense(2, 1) regressor, MSE, Adam(lr=1e-3), shuffled batches of 10 over the 97 training windows,
then the 98 test windows one at a time in eval mode each epoch; ``mindspore.value_and_grad`` built once, the losses
printed every 10 epochs as the script prints them (the script's prediction curve and plots left out).
Usage: python sin_lstm.py EPOCHS [blocking]."""
import sys

import mindspore as ms
import numpy as np
from mindspore import nn, ops
from mindspore.experimental import optim


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(5, 2, batch_first=True)
        self.fc = nn.Dense(2, 1)

    def construct(self, xs):
        hs, _ = self.rnn(xs)
        return self.fc(hs)


def main(epochs, look_back=5, batch=10):
    y = np.sin(np.linspace(-10, 10, 200))
    windows = np.stack([y[i:i + look_back] for i in range(len(y) - look_back)])
    nxt = y[look_back:]
    n = len(nxt) // 2
    x_train, y_train = ms.Tensor(windows[:n], ms.float32), ms.Tensor(nxt[:n], ms.float32)
    x_test, y_test = ms.Tensor(windows[n:], ms.float32), ms.Tensor(nxt[n:], ms.float32)
    model = Net()
    opt = optim.AdamW(model.trainable_params(), lr=1e-3, weight_decay=0.0)

    def forward(bx, by):
        return ops.mse_loss(model(bx).view(batch), by)

    step = ms.value_and_grad(forward, None, opt.parameters)
    for epoch in range(1, epochs):
        perm = np.random.permutation(n)
        model.set_train(True)
        total = 0.0
        for i in range(n // batch):
            idx = ms.Tensor(perm[i * batch:(i + 1) * batch])
            loss, grads = step(x_train[idx].reshape(batch, -1, look_back), y_train[idx])
            opt(grads)
            total += loss.item()
        model.set_train(False)
        test = 0.0
        for j in range(len(y_test)):
            z = model(x_test[j].reshape(1, 1, look_back)).view(1)
            test += ops.mse_loss(z, y_test[j].view(1)).item()
        if epoch % 10 == 0:
            print(f"epoch:{epoch}, train loss:{total / (n // batch)}, test loss:{test}")


if __name__ == "__main__":
    if "blocking" in sys.argv[2:]:
        ms.runtime.launch_blocking()
    main(int(sys.argv[1]))
