"""A package whose published names are mapping-table entries, converted from its own source: converting timm itself
(``convert timm/ -o out/timm``), ``from timm.layers import Mlp`` in timm's models is timm's own ``Mlp``, converted in
the same run, not the table's ``timm.layers.Mlp`` entry (the runtime's ``mindport.runtime.ecosystem.Mlp`` through
``mp_adapt.api("timm.layers.Mlp")``, 54 sites in timm's whole-package port). The fixture is a small package of this
test's own named ``timm`` whose ``Mlp`` differs from the published one (other layer names, a squared ReLU, a scale),
so the entry's class gives other weights and other numbers. Converted both as the package folder itself and as a
folder holding it; real torch and real MindSpore."""
from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mindport.migrator import convert_path

FILES = {
    "__init__.py": "",
    "layers/__init__.py": "from .mlp import Mlp\n",
    "layers/mlp.py": textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Mlp(nn.Module):
            def __init__(self, in_features, hidden_features=None, scale=0.5):
                super().__init__()
                self.up = nn.Linear(in_features, hidden_features or 2 * in_features)
                self.down = nn.Linear(hidden_features or 2 * in_features, in_features, bias=False)
                self.scale = scale

            def forward(self, x):
                return self.down(torch.relu(self.up(x)) ** 2) * self.scale
    """),
    "models/__init__.py": "",
    "models/net.py": textwrap.dedent("""\
        import torch.nn as nn

        from timm.layers import Mlp
        from timm.layers.mlp import Mlp as MlpAlias


        class Block(nn.Module):
            def __init__(self, dim, mlp_layer=Mlp):
                super().__init__()
                self.norm = nn.LayerNorm(dim)
                self.mlp = mlp_layer(dim, hidden_features=3 * dim)
                self.extra = MlpAlias(dim, scale=2.0)

            def forward(self, x):
                return self.extra(x + self.mlp(self.norm(x)))


        def build(dim):
            return Block(dim)
    """),
}


def _write(root: Path) -> None:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _import_build(top: Path):
    """``timm.models.net.build`` of the package under ``top`` (any other ``timm`` forgotten first)."""
    for name in [n for n in sys.modules if n == "timm" or n.startswith("timm.")]:
        del sys.modules[name]
    sys.path.insert(0, str(top))
    try:
        importlib.invalidate_caches()
        return importlib.import_module("timm.models.net").build
    finally:
        sys.path.remove(str(top))


@pytest.fixture
def forget_timm():
    yield
    for name in [n for n in sys.modules if n == "timm" or n.startswith("timm.")]:
        del sys.modules[name]


@pytest.mark.parametrize("as_root", [True, False], ids=["the-package-folder", "a-folder-holding-it"])
def test_the_packages_own_class_is_used_not_the_entry(tmp_path, forget_timm, as_root):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    src = tmp_path / "src"
    _write(src / "timm")
    out = tmp_path / "out"
    if as_root:
        convert_path(src / "timm", out / "timm", jobs=1, use_cache=False)
    else:
        convert_path(src, out, jobs=1, use_cache=False)
    code = (out / "timm" / "models" / "net.py").read_text()
    assert "mp_adapt" not in code and "from timm.layers import Mlp" in code, code

    torch.manual_seed(0)
    want_model = _import_build(src)(6).eval()
    got_model = _import_build(out)(6)
    got_model.set_train(False)
    assert type(got_model.mlp).__module__ == "timm.layers.mlp", type(got_model.mlp)
    transfer_weights(want_model.state_dict(), got_model)
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    with torch.no_grad():
        want = want_model(torch.from_numpy(x)).numpy()
    got = got_model(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
