"""A cell under a cell magic whose body is not Python (Colab's ``%%shell`` then ``pip install torchaudio``;
``%%bash``, ``%%writefile``) is kept as written and out of the parser, so the rest of the notebook converts: it was a
syntax error (MP201) and the whole notebook was copied unchanged (tky823/DNN-based_source_separation's tutorials, its
ConvBlock "built a ConvBlock, not a mindspore.nn.Cell"). A Python cell magic (``%%time``) keeps its body converted.
The converted model runs in MindSpore and matches torch on the same weights."""
from __future__ import annotations

import json

import numpy as np

from mindport.migrator.formats import code_cells, convert_notebook_bytes

SHELL = "%%shell\npip install torchaudio\ngit clone https://example.invalid/repo.git"
WRITEFILE = "%%writefile helper.py\nimport torch\nx = torch.zeros(2)"
IMPORTS = "import torch\nimport torch.nn as nn"
MODEL = "%%time\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
        "        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n        return torch.tanh(self.fc(x))"


def _notebook(*sources):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": s}
             for s in sources]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_cells_of_another_language_are_kept_and_the_rest_converts():
    data = json.dumps(_notebook(SHELL, WRITEFILE, IMPORTS, MODEL)).encode()
    out, diagnostics, _, sites, changed = convert_notebook_bytes(data, "nb.ipynb", {})
    cells = ["".join(c["source"]) for c in json.loads(out)["cells"]]
    assert not [d for d in diagnostics if d.code == "MP201"], diagnostics
    assert changed and sites > 0
    assert cells[0] == SHELL and cells[1] == WRITEFILE
    assert cells[3].startswith("%%time\n") and "\nclass Net(nn.Cell):" in cells[3], cells[3]  # magic line first
    assert "nn.Dense(" in cells[3] and "def construct(self, x):" in cells[3]
    # discovery reads the same Python: the shell cell blank, the %%time cell's class kept
    bodies = code_cells(json.loads(data)["cells"])
    assert not bodies[0].strip() and not bodies[1].strip() and "class Net(nn.Module):" in bodies[3]

    import mindspore as ms
    import torch

    ns_torch: dict = {}
    exec(IMPORTS + "\n" + MODEL.split("\n", 1)[1], ns_torch)
    ns_ms: dict = {}
    exec(cells[2] + "\n" + cells[3].split("\n", 1)[1], ns_ms)
    t_net, m_net = ns_torch["Net"](), ns_ms["Net"]()
    m_net.fc.weight.set_data(ms.Tensor(t_net.fc.weight.detach().numpy()))
    m_net.fc.bias.set_data(ms.Tensor(t_net.fc.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), t_net(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


LICENSE = "https://github.com/example/repo\n\nMIT License\n\nPermission is hereby granted, free of charge"


def test_a_code_cell_that_is_not_python_is_kept_and_the_rest_converts():
    # seorim0/DNN-based-Speech-Enhancement-in-the-frequency-domain's SE_tutorials.ipynb: its first code cell is the
    # license's text; its MP201 made the whole notebook "failed", copied unchanged, and 4 of its classes "built a
    # ConvSTFT, not a mindspore.nn.Cell". That cell is kept as written (MP209, a warning), the others convert
    data = json.dumps(_notebook(LICENSE, IMPORTS, MODEL.split("\n", 1)[1])).encode()
    out, diagnostics, _, sites, changed = convert_notebook_bytes(data, "nb.ipynb", {})
    cells = ["".join(c["source"]) for c in json.loads(out)["cells"]]
    codes = [d.code for d in diagnostics]
    assert "MP201" not in codes and codes.count("MP209") == 1, diagnostics
    assert [d.severity for d in diagnostics if d.code == "MP209"] == ["warning"]
    assert cells[0] == LICENSE and changed and "class Net(nn.Cell):" in cells[2], cells
