"""An RNN regressor reading a sine wave and predicting its cosine, one window per step: the hidden state is carried
from one step to the next (h_state = h_state.data), the optimizer is reset after the forward pass."""
import numpy as np
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=16, num_layers=1, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        return self.out(r_out), h_state


def train(model, steps=20, time_steps=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_func = nn.MSELoss()
    h_state = None
    losses = []
    for step in range(steps):
        start, end = step * np.pi, (step + 1) * np.pi
        points = np.linspace(start, end, time_steps, dtype=np.float32)
        x = torch.from_numpy(np.sin(points)[np.newaxis, :, np.newaxis])
        y = torch.from_numpy(np.cos(points)[np.newaxis, :, np.newaxis])
        prediction, h_state = model(x, h_state)
        h_state = h_state.data
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
