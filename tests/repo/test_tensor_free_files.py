"""Files of a project no torch tensor can reach are copied byte for byte (``mindport.migrator.project.
tensor_free_files``). First contact with sksq96/pytorch-vae: its gym environment ``car_racing.py`` (numpy, Box2D,
gym) and the rollout script that drives it import no torch and no torch file imports them, yet the converter
rewrote their ``"{:+0.2f}".format(x)`` into ``mp_tensor.formattable(x)`` and made a gym environment depend on
mindport. A file is converted as before when any file connected to it by imports (either way), or a notebook that
imports it alongside torch, could hand it a tensor."""
from __future__ import annotations

import json

from mindport import convert_path
from mindport.migrator.project import local_packages, parse_files, tensor_free_files
from test_star_imports import _write

_FORMATTED = """\
    import numpy as np


    def show(values, total):
        print(["{:+0.2f}".format(x) for x in values], f"{total:.3f}")
        return np.asarray(values).view(np.int32).size()
"""

TREE = {
    "env/__init__.py": "",
    "env/racing.py": _FORMATTED,  # driven only by rollouts.py: no tensor reaches it
    "rollouts.py": """\
        import random
        from env.racing import show


        show([random.random() for _ in range(3)], 1.5)
    """,
    "train.py": """\
        import torch
        from helpers import show


        loss = torch.ones(())
        show([1.0], loss)
    """,
    "helpers.py": _FORMATTED,  # called by train.py with a tensor: converted
    "models/__init__.py": "",
    "models/net.py": "import torch\n",  # `import torch` is torch's, not a module next to models/__init__.py
    "unpickle.py": _FORMATTED.replace("import numpy as np", "import pickle\n    import numpy as np"),  # may load one
    "lib_user.py": _FORMATTED.replace("import numpy as np", "import transformers\n    import numpy as np"),
    "notebook_helper.py": _FORMATTED,  # imported by a notebook that imports torch
    "plots.py": _FORMATTED,  # imported by a notebook that imports neither torch nor another library
}


def _notebook(*lines: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": [line + "\n" for line in lines]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


NOTEBOOKS = {
    "explore.ipynb": _notebook("import torch", "from notebook_helper import show", "show([1.0], torch.ones(()))"),
    "figures.ipynb": _notebook("import numpy as np", "import plots", "plots.show([1.0], 2.0)"),
}


def _tree(root):
    _write(root, TREE)
    for rel, text in NOTEBOOKS.items():
        (root / rel).write_text(text, encoding="utf-8")


def test_the_files_no_tensor_can_reach(tmp_path):
    _tree(tmp_path)
    python = sorted(rel for rel in TREE)
    free = tensor_free_files(parse_files(tmp_path, python), python, local_packages(tmp_path, [
        tmp_path / rel for rel in [*python, *NOTEBOOKS]]),
        tuple((rel, text) for rel, text in NOTEBOOKS.items()))
    assert free == {"env/__init__.py", "env/racing.py", "rollouts.py", "plots.py", "models/__init__.py"}


def test_tensor_free_files_are_copied_byte_for_byte_and_the_others_converted(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src)
    report = convert_path(src, out)
    for rel in ("env/racing.py", "rollouts.py", "plots.py"):
        assert (out / rel).read_bytes() == (src / rel).read_bytes(), rel
    for rel in ("helpers.py", "unpickle.py", "lib_user.py", "notebook_helper.py"):
        assert "formattable" in (out / rel).read_text(), rel
    statuses = {f.path: f.status for f in report.files}
    assert statuses["env/racing.py"] == "unchanged" and statuses["helpers.py"] == "converted", statuses
    # the fact follows the project: once train.py imports the environment, it can be handed a tensor
    (src / "train.py").write_text((src / "train.py").read_text() + "from env.racing import show as shown\n")
    convert_path(src, out)
    assert "formattable" in (out / "env/racing.py").read_text()
