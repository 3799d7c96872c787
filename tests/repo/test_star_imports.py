"""``from .layers import *`` brings the torch names ``layers.py`` imports (``nn``, ``F``, ``torch``) into a file that
never imports torch itself (failure class 5). ``convert_path`` reads which torch names each file receives that way
and converts their uses; the converted package imports and matches torch (a tree of our own, run in both
frameworks)."""
from __future__ import annotations

import importlib
import re
import sys
import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_path
from mindport.migrator.project import star_bindings
from mindport.migrator.weights import transfer_weights

TREE = {
    "pkg/__init__.py": "",
    "pkg/layers.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from ._private import *


        def scale(x):
            return x * 2
    """,
    "pkg/_private.py": """\
        from torch import cat
        __all__ = ["cat"]
        hidden = 1
    """,
    "pkg/blocks.py": """\
        from .layers import *


        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                y = F.relu(self.fc(x))
                return cat([scale(y), torch.tanh(x)], dim=-1)


        def unconvertible(x):
            return torch.get_num_interop_threads() * 0 + x
    """,
    "pkg/model.py": """\
        from pkg.blocks import *


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block(4)

            def forward(self, x):
                return F.gelu(self.block(x))
    """,
}


def _write(root, tree):
    for rel, text in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _import(root, name, packages=("pkg",)):
    """``name`` imported from ``root``, the given top-level packages (and modules) of an earlier import forgotten."""
    sys.path.insert(0, str(root))
    try:
        for key in [k for k in sys.modules if k.split(".")[0] in packages]:
            del sys.modules[key]
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


def test_star_imported_torch_names_are_read_from_the_project(tmp_path):
    _write(tmp_path, TREE)
    found = star_bindings(tmp_path, sorted(TREE))
    assert found["pkg/blocks.py"] == (("F", "torch.nn.functional"), ("cat", "torch.cat"), ("nn", "torch.nn"),
                                      ("torch", "torch"))  # transitive; `_private`'s __all__ holds only cat
    assert dict(found["pkg/model.py"])["nn"] == "torch.nn"  # an absolute star import, through two modules
    assert "pkg/layers.py" in found and dict(found["pkg/layers.py"]) == {"cat": "torch.cat"}


def test_a_package_using_star_imported_torch_names_converts_and_matches(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, TREE)
    report = convert_path(src, out, jobs=1)
    assert [(d.file, d.code) for d in report.diagnostics] == [("pkg/blocks.py", "MP103")]  # get_num_interop_threads
    blocks = (out / "pkg/blocks.py").read_text()
    assert "ops.relu(" in blocks and "nn.Dense(" in blocks and "ops.cat(" in blocks
    assert "return torch.get_num_interop_threads() * 0 + x  # mindport: MP103" in blocks
    assert "\nimport torch\n" in blocks  # the flagged line's torch, which the star no longer brings
    torch.manual_seed(0)
    t_net = _import(src, "pkg.model").Net().eval()
    m_module = _import(out, "pkg.model")
    m_net = m_module.Net()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert _import(out, "pkg.blocks").unconvertible(torch.ones(2)).tolist() == [1.0, 1.0]  # still torch's meaning


def test_a_re_run_reuses_the_star_bindings_until_a_file_changes(tmp_path):
    """The conversion cache keeps what star imports bring (reading it parses files: most of a re-run's time); a
    changed module is read again, and the file that star-imports it is converted again with the new names."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "layers.py").write_text("import torch.nn as nn\n")
    (src / "model.py").write_text("from layers import *\n\nx = nn.ReLU()\n")
    convert_path(src, out, jobs=1)
    assert "nn.ReLU()" in (out / "model.py").read_text()
    convert_path(src, out, jobs=1)  # unchanged: the cached bindings give the same output
    assert "nn.ReLU()" in (out / "model.py").read_text()
    (src / "layers.py").write_text("import torch.nn.functional as nn\n")  # now `nn` is torch.nn.functional
    convert_path(src, out, jobs=1)
    converted = (out / "model.py").read_text()
    assert "torch.nn.functional.ReLU" in converted, converted  # read with the new binding (and flagged)


DRIVER_TREE = {
    "zoo/__init__.py": "",
    "zoo/vit.py": """\
        from functools import partial

        import torch.nn as nn


        class Tiny(nn.Module):
            def __init__(self, dim=4, norm_layer=nn.LayerNorm):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.norm = norm_layer(dim)

            def forward(self, x):
                return self.norm(self.fc(x))
    """,
    "driver.py": """\
        import importlib

        _m = importlib.import_module("zoo.vit")
        globals().update({k: v for k, v in vars(_m).items() if not k.startswith("__")})


        def build():
            return Tiny(norm_layer=partial(nn.LayerNorm, eps=1e-3))
    """,
}


def test_a_star_import_written_at_run_time_brings_torch_names(tmp_path):
    """``globals().update(vars(importlib.import_module("zoo.vit")))`` (an evaluation driver's way to reach a model's
    names) is a star import: ``nn.LayerNorm`` there is torch's, read through the runtime adapter after conversion
    (MindSpore's LayerNorm has no ``eps``), and the built model matches torch."""
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, DRIVER_TREE)
    assert dict(star_bindings(src, sorted(DRIVER_TREE))["driver.py"])["nn"] == "torch.nn"
    convert_path(src, out, jobs=1)
    assert "partial(nn.LayerNorm" not in (out / "driver.py").read_text()
    torch.manual_seed(0)
    t_net = _import(src, "driver", ("driver", "zoo")).build().eval()
    m_net = _import(out, "driver", ("driver", "zoo")).build()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


ROOTED_DRIVER_TREE = {
    "src/layers.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    """,
    "src/models.py": """\
        from layers import *


        class Gcn(nn.Module):
            def __init__(self, dim=4, activation=F.relu):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.activation = activation

            def forward(self, x):
                return self.activation(self.fc(x))
    """,
    "src/driver.py": """\
        import importlib

        _m = importlib.import_module("models")
        globals().update({k: v for k, v in vars(_m).items() if not k.startswith("__")})


        def build():
            return Gcn(dim=4, activation=F.elu)
    """,
}


def test_a_run_time_star_import_named_from_below_the_converted_root(tmp_path):
    """The tree is converted from above its import root (``src/models.py`` is loaded as ``models``, as an evaluation
    driver beside it does): the run-time star import still brings ``models``' names, so ``F.elu`` in the driver is
    torch's and converts (it was left as ``F.elu``, a NameError in the port: batch 7's dropedge/* entries)."""
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, ROOTED_DRIVER_TREE)
    assert dict(star_bindings(src, sorted(ROOTED_DRIVER_TREE))["src/driver.py"])["F"] == "torch.nn.functional"
    convert_path(src, out, jobs=1)
    # no call of torch's F.elu is left (a definition's docstring may name MindSpore's mp_F.elu)
    assert not re.search(r"(?<![\w.])F\.elu\b", (out / "src" / "driver.py").read_text())
    torch.manual_seed(0)
    t_net = _import(src / "src", "driver", ("driver", "models", "layers")).build().eval()
    m_net = _import(out / "src", "driver", ("driver", "models", "layers")).build()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_a_star_imported_stdlib_module_is_not_a_tensor(tmp_path):
    """``math`` brought by ``from .layers import *`` (gen-efficientnet's builder): ``math.sqrt(2.0 / fan_out)`` is the
    stdlib's, not a tensor method, so the init around it converts (it was flagged MP102 and the whole line kept
    torch's ``normal_``, which has no MindSpore CPU kernel)."""
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, {
        "pkg/__init__.py": "",
        "pkg/layers.py": "import math\nimport torch.nn as nn\n",
        "pkg/init.py": """\
            from .layers import *


            def init(m, fan_out):
                m.weight.data.normal_(0, math.sqrt(2.0 / fan_out))
        """,
    })
    assert dict(star_bindings(src, ["pkg/__init__.py", "pkg/layers.py", "pkg/init.py"])["pkg/init.py"])["math"] == "math"
    report = convert_path(src, out, jobs=1)
    assert [d for d in report.diagnostics if d.file == "pkg/init.py"] == []
    converted = (out / "pkg/init.py").read_text()
    assert "math.sqrt(2.0 / fan_out)" in converted and ".data.normal_" not in converted, converted
    import mindspore as ms

    layer = ms.nn.Dense(200, 300)
    _import(out, "pkg.init").init(layer, 300)
    std = float(layer.weight.asnumpy().std())
    assert abs(std - (2.0 / 300) ** 0.5) < 0.01, std  # the init ran with the stdlib's sqrt
