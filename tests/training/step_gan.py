"""One GAN step per batch with two optimizers: the discriminator's loss on real and on generated samples (two
backward calls adding into the same gradients), then the generator's loss through the updated discriminator."""
import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self, nz=4, features=6):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, features))

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, features=6):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(features, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)


def train(netG, netD, batches, noises):
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))
    losses = []
    for i, (real, noise) in enumerate(zip(batches, noises)):
        real = torch.from_numpy(real)
        noise = torch.from_numpy(noise)
        netD.zero_grad()
        label = torch.full((real.size(0),), 1.0)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()
        losses += [errD.item(), errG.item(), D_x]
    return losses
