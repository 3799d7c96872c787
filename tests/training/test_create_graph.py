"""``torch.autograd.grad(outputs, inputs, create_graph=True)``: a gradient a later backward differentiates again (a
WGAN-GP gradient penalty, a Hessian-vector product, a double-backprop regulariser). The converted script computes it
with ``mindport.runtime.training.grad_graph`` (``mindspore.vjp`` of the statements that compute the outputs from the
inputs) inside the differentiated function; real torch and real MindSpore, every printed value compared."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from _harness import load_module
from test_fresh_causes import _convert


def _printed(code: str, name: str) -> list[list[float]]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return [[float(v) for v in line.split()[1:]] for line in out.getvalue().splitlines() if line.startswith("step")]


# eriklindernoren/PyTorch-GAN's wgan_gp shape: the penalty in a helper, the critic's and the generator's steps
WGAN_GP = 'import torch\nimport torch.nn as nn\n\n\ndef compute_gradient_penalty(D, real_samples, fake_samples, alpha):\n    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)\n    d_interpolates = D(interpolates)\n    fake = torch.ones(real_samples.shape[0], 1)\n    gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates, grad_outputs=fake,\n                                    create_graph=True, retain_graph=True, only_inputs=True)[0]\n    gradients = gradients.view(gradients.size(0), -1)\n    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()\n\n\ngenerator = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))\ndiscriminator = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))\nwith torch.no_grad():\n    for net in (generator, discriminator):\n        for p in net.parameters():\n            p.copy_(torch.linspace(-0.4, 0.5, p.numel()).reshape(p.shape))\noptimizer_G = torch.optim.Adam(generator.parameters(), lr=0.01, betas=(0.5, 0.9))\noptimizer_D = torch.optim.Adam(discriminator.parameters(), lr=0.01, betas=(0.5, 0.9))\nreal = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)\nz = torch.linspace(-0.5, 0.7, 16).reshape(8, 2)\nalpha = torch.linspace(0.1, 0.9, 8).reshape(8, 1)\nfor step in range(6):\n    optimizer_D.zero_grad()\n    fake_imgs = generator(z)\n    real_validity = discriminator(real)\n    fake_validity = discriminator(fake_imgs.detach())\n    gradient_penalty = compute_gradient_penalty(discriminator, real, fake_imgs.detach(), alpha)\n    d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + 10 * gradient_penalty\n    d_loss.backward()\n    optimizer_D.step()\n    optimizer_G.zero_grad()\n    g_loss = -torch.mean(discriminator(generator(z)))\n    g_loss.backward()\n    optimizer_G.step()\n    print("step", d_loss.item(), gradient_penalty.item(), g_loss.item())\n'

# the penalty written in the loop, its critic output printed after the step
INLINE_GP = 'import torch\nimport torch.nn as nn\n\ncritic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))\nwith torch.no_grad():\n    for p in critic.parameters():\n        p.copy_(torch.linspace(-0.4, 0.5, p.numel()).reshape(p.shape))\noptimizer = torch.optim.Adam(critic.parameters(), lr=0.01, betas=(0.5, 0.9))\nreal = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)\nfake = torch.linspace(0.8, -0.6, 32).reshape(8, 4)\nalpha = torch.linspace(0.1, 0.9, 8).reshape(8, 1)\nfor step in range(6):\n    optimizer.zero_grad()\n    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)\n    d_interp = critic(interp)\n    grads = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp),\n                                create_graph=True, retain_graph=True)[0]\n    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()\n    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty\n    loss.backward()\n    optimizer.step()\n    print("step", loss.item(), penalty.item(), d_interp.mean().item())\n'

# a Hessian-vector product over a leaf tensor, then a manual update with the (differentiable) gradient
HVP = 'import torch\n\nw = torch.linspace(-0.5, 0.5, 5)\nx = torch.linspace(0.1, 0.9, 5).requires_grad_()\nv = torch.linspace(1.0, -1.0, 5)\nfor step in range(3):\n    f = (torch.sin(x * w) ** 2).sum() + (x ** 3).sum()\n    g = torch.autograd.grad(f, x, create_graph=True)[0]\n    hv = torch.autograd.grad((g * v).sum(), x)[0]\n    with torch.no_grad():\n        x -= 0.1 * g\n    print("step", f.item(), hv.sum().item(), hv.abs().max().item())\n'

# a double-backprop regulariser through cross_entropy (MindSpore 2.10 cannot differentiate GatherD's gradient, its pick
# of the targets: grad_graph runs it as a one-hot product there)
CROSS_ENTROPY_TWICE = 'import torch\nimport torch.nn as nn\n\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))\nwith torch.no_grad():\n    for p in model.parameters():\n        p.copy_(torch.linspace(-0.4, 0.5, p.numel()).reshape(p.shape))\ncriterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\nx = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)\ny = torch.tensor([0, 1, 2, 0, 1, 2])\nfor step in range(6):\n    x.requires_grad_(True)\n    ce = criterion(model(x), y)\n    (g,) = torch.autograd.grad(ce, x, create_graph=True)\n    loss = ce + 0.5 * g.pow(2).sum()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    print("step", loss.item(), ce.item())\n'


@pytest.mark.parametrize("name, source, steps", [("wgan_gp", WGAN_GP, 6), ("inline_gp", INLINE_GP, 6),
                                                 ("hvp", HVP, 3), ("cross_entropy_twice", CROSS_ENTROPY_TWICE, 6)])
def test_gradient_of_a_gradient_tracks_torch(name, source, steps):
    """Each value printed over the steps (losses, the penalty, a Hessian-vector product) is torch's within 1e-5."""
    code = _convert(source)
    assert "grad_graph(" in code and "import torch" not in code, code
    t, m = _printed(source, f"torch_{name}"), _printed(code, f"ms_{name}")
    assert len(t) == len(m) == steps, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)


def test_a_penalty_the_step_learns_from():
    """The gradient penalty falls as the critic is trained on it (the second derivative reaches the weights)."""
    m = _printed(_convert(INLINE_GP), "ms_inline_gp_learns")
    assert m[-1][1] < 0.5 * m[0][1]


# ELU twice: MindSpore 2.10 cannot differentiate EluGrad
ELU_TWICE = 'import torch\nimport torch.nn.functional as F\n\nw = torch.nn.Parameter(torch.linspace(-0.4, 0.5, 12).reshape(4, 3))\noptimizer = torch.optim.SGD([w], lr=0.1)\nx = torch.linspace(-1.0, 1.0, 24).reshape(6, 4)\nfor step in range(3):\n    x.requires_grad_(True)\n    out = F.elu(x @ w).pow(2).sum()\n    (g,) = torch.autograd.grad(out, x, create_graph=True)\n    loss = out + 0.5 * g.pow(2).sum()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    print("step", loss.item(), out.item())\n'


def test_no_second_derivative_in_mindspore_is_named():
    """ELU twice: MindSpore cannot run it (EluGrad has no bprop): mindport's error says so and how to write it,
    instead of MindSpore's 'The pointer[value] is null'. (cross_entropy twice, this test's case before, now runs:
    see the tracking test above.)"""
    code = _convert(ELU_TWICE)
    assert "grad_graph(" in code, code
    with pytest.raises(RuntimeError, match="mindport: MindSpore could not differentiate a gradient taken with "
                                           "create_graph=True"):
        _printed(code, "ms_elu_twice")


def test_gradients_over_a_models_parameters_are_flagged():
    """MAML's inner step (gradients with respect to the weights, with create_graph=True) is not followed: MP105
    with the reason, the line keeps its torch meaning."""
    from mindport import convert_source

    source = """import torch
def inner(model, x, y):
    loss = ((model(x) - y) ** 2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
    return grads
"""
    result = convert_source(source, "maml.py")
    messages = [d.message for d in result.diagnostics if d.code == "MP105"]
    assert any("create_graph=True" in m and "parameters" in m for m in messages), result.diagnostics
    assert "torch.autograd.grad(loss" in result.code
