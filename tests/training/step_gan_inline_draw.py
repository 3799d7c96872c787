"""A GAN step whose generated batch is computed with the noise drawn inline (``gen_batch = g(torch.randn(...))``)
and read by both backward regions: the discriminator's (through ``gen_batch.detach()``) and the generator's. torch
draws the noise once per step; so must the port (isaac-dunn/gan-tutorial's shape)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

g = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
d = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
g_opt = torch.optim.SGD(g.parameters(), lr=0.1)
d_opt = torch.optim.SGD(d.parameters(), lr=0.1)
real = torch.linspace(-1.0, 1.0, 16).reshape(8, 2)
for step in range(5):
    gen_batch = g(torch.randn(8, g[0].in_features))
    d_opt.zero_grad()
    loss_d = F.binary_cross_entropy(d(real), torch.ones(8, 1)) + \
        F.binary_cross_entropy(d(gen_batch.detach()), torch.zeros(8, 1))
    loss_d.backward()
    d_opt.step()
    g_opt.zero_grad()
    loss_g = -F.binary_cross_entropy(d(gen_batch), torch.zeros(8, 1))
    loss_g.backward()
    g_opt.step()
    print("loss d", step, loss_d.item())
    print("loss g", step, loss_g.item())
