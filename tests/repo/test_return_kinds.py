"""What a project function returns, across files (batch 8's C-SWM ``transition_gnn_copy``): ``modules.py`` imports
numpy and calls ``utils.to_one_hot(action, dim).repeat(1, n)``, ``to_one_hot`` in ``utils.py`` returning
``zeros.scatter_(...)`` of ``torch.zeros``. ``repeat`` is a method numpy arrays share, so on a receiver of unknown kind
it stayed as written: MindSpore's ``Tensor.repeat`` ("'repeat' is not supported on this device"). convert_path reads
what every function and method of the project returns (``project.return_kinds``): the receiver is a tensor there, and
``repeat`` becomes ``tile``, ``size(1)`` ``shape[1]``; a function returning numpy's array keeps numpy's ``repeat``.
Real torch against the converted project on real MindSpore."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import numpy as np
import torch

from mindport import convert_path
from mindport.migrator.project import return_kinds

TREE = {
    "rkpkg/__init__.py": "",
    "rkpkg/utils.py": """\
        import numpy as np
        import torch


        def to_one_hot(indices, max_index):
            zeros = torch.zeros(indices.size(0), max_index, dtype=torch.float32)
            return zeros.scatter_(1, indices.unsqueeze(1), 1)


        def np_weights(n):
            return np.arange(n, dtype=np.float32) + 1.0


        class Coder:
            def __init__(self, dim):
                self.dim = dim

            def encode(self, x):
                return torch.tanh(x[:, :self.dim])
    """,
    "rkpkg/helpers.py": """\
        import torch


        def codes(x):
            return torch.flatten(x, 1) if x.dim() > 2 else torch.tanh(x) * 2.0
    """,
    "rkpkg/model.py": """\
        import numpy as np
        import torch
        import torch.nn as nn

        from rkpkg import utils
        from . import helpers


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(12, 6)
                self.coder = utils.Coder(2)

            def forward(self, x, action):
                a = utils.to_one_hot(action, 4).repeat(1, 3)
                h = self.fc(x * a)
                n = helpers.codes(h).size(1)
                w = torch.from_numpy(utils.np_weights(3).repeat(2))
                e = self.coder.encode(h).repeat(2, 1)
                return h * w * n, e
    """,
}

CHECK = """
import sys
import numpy as np
import mindspore as ms
sys.path.insert(0, sys.argv[1])
from rkpkg.model import Net
net = Net()
w = np.load(sys.argv[2])
net.fc.weight.set_data(ms.Tensor(w["w"]))
net.fc.bias.set_data(ms.Tensor(w["b"]))
out, e = net(ms.Tensor(w["x"]), ms.Tensor(w["a"]))
np.savez(sys.argv[3], out=out.asnumpy(), e=e.asnumpy())
"""


def test_the_return_kinds_of_a_projects_functions():
    trees = [ast.parse(textwrap.dedent(TREE[f])) for f in ("rkpkg/utils.py", "rkpkg/helpers.py")]
    kinds = dict(return_kinds(trees))
    # Coder(...): an object of the project's own plain class (its methods are its own: test_project_object_methods)
    assert kinds == {"to_one_hot": "tensor", "np_weights": "foreign", "encode": "tensor", "codes": "tensor",
                     "Coder": "instance"}, kinds
    # a name two definitions give different kinds is unknown; so is one whose return says nothing
    other = ast.parse("import numpy as np\ndef to_one_hot(n):\n    return np.eye(n)\ndef ident(x):\n    return x\n")
    kinds = dict(return_kinds([*trees, other]))
    assert "to_one_hot" not in kinds and "ident" not in kinds and kinds["codes"] == "tensor", kinds


def test_a_method_shared_with_numpy_on_what_another_files_function_returns(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text))
    convert_path(src, out, jobs=1, use_cache=False)
    converted = (out / "rkpkg/model.py").read_text()
    assert "np_weights(3).repeat(2)" in converted, converted  # numpy's array keeps numpy's repeat

    sys.path.insert(0, str(src))
    try:
        from rkpkg.model import Net
        torch.manual_seed(0)
        net = Net()
        x, action = torch.randn(5, 12), torch.tensor([0, 3, 1, 2, 3])
        expected, expected_e = net(x, action)
    finally:
        sys.path.remove(str(src))
        for key in [k for k in sys.modules if k == "rkpkg" or k.startswith("rkpkg.")]:
            del sys.modules[key]
    np.savez(tmp_path / "w.npz", w=net.fc.weight.detach().numpy(), b=net.fc.bias.detach().numpy(),
             x=x.numpy(), a=action.numpy())
    run = subprocess.run([sys.executable, "-c", CHECK, str(out), str(tmp_path / "w.npz"), str(tmp_path / "r.npz")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(tmp_path / "r.npz")
    np.testing.assert_allclose(got["out"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["e"], expected_e.detach().numpy(), rtol=1e-5, atol=1e-6)

