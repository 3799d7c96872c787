"""An autograd Function defined in one file and applied in another (batch 8's PointNetLK: ``self.inverse =
invmat.InvMatrix.apply`` in ptlk/pointlk.py, the Function in ptlk/invmat.py): the file applying it converts before
the project's classes are known, so ``InvMatrix.apply`` stayed ``Cell.apply`` ("missing 1 required positional
argument: 'fn'"). convert_path knows the project's Functions from every file (``Options.function_classes``) and
converts that file again: ``invmat.InvMatrix.apply`` -> ``invmat.InvMatrix()``, values and the custom gradient as
torch's."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import torch

from mindport import convert_path

TREE = {
    "fnpkg/__init__.py": "",
    "fnpkg/invmat.py": """\
        import torch


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 3.0

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 5.0  # not the true derivative: the custom gradient must be the one used
    """,
    "fnpkg/model.py": """\
        import torch
        import torch.nn as nn

        from . import invmat
        from .invmat import Scale


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.scale = invmat.Scale.apply

            def forward(self, x):
                return self.scale(self.fc(x)) + Scale.apply(x)
    """,
}

CHECK = """
import sys
import numpy as np
import mindspore as ms
sys.path.insert(0, sys.argv[1])
from fnpkg.model import Net
net = Net()
w = np.load(sys.argv[2])
net.fc.weight.set_data(ms.Tensor(w["w"]))
net.fc.bias.set_data(ms.Tensor(w["b"]))
x = ms.Tensor(w["x"])
out = net(x)
grad = ms.grad(lambda t: net(t).sum())(x)
np.savez(sys.argv[3], out=out.asnumpy(), grad=grad.asnumpy())
"""


def test_an_imported_functions_apply_is_the_cell(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text))
    convert_path(src, out, jobs=1, use_cache=False)
    converted = (out / "fnpkg/model.py").read_text()
    assert "invmat.Scale()" in converted and "Scale()(x)" in converted and ".apply" not in converted, converted

    sys.path.insert(0, str(src))
    try:
        from fnpkg.model import Net
        torch.manual_seed(0)
        net = Net()
        x = torch.randn(2, 3, requires_grad=True)
        expected = net(x)
        expected.sum().backward()
    finally:
        sys.path.remove(str(src))
        for key in [k for k in sys.modules if k == "fnpkg" or k.startswith("fnpkg.")]:
            del sys.modules[key]
    np.savez(tmp_path / "w.npz", w=net.fc.weight.detach().numpy(), b=net.fc.bias.detach().numpy(),
             x=x.detach().numpy())
    run = subprocess.run([sys.executable, "-c", CHECK, str(out), str(tmp_path / "w.npz"), str(tmp_path / "r.npz")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(tmp_path / "r.npz")
    np.testing.assert_allclose(got["out"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["grad"], x.grad.numpy(), rtol=1e-5, atol=1e-6)
