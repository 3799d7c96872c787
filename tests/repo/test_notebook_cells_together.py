"""A notebook's code cells run in one namespace, so they are converted as one module: `import torch` alone in the
first cell, a model class in a later cell and a call in the one after are converted knowing each other (before,
each cell was converted alone: the import cell became MindSpore's, every later cell kept `torch.`/`nn.Module` with
no diagnostic, and `torch.flip(batch, dims=(0,))` was read as a method of an unknown object and flagged MP102
"dims given both positionally and by keyword": Kinyugo/consistency_models' notebooks, 13 classes left torch).
The model defined over three cells is run in torch and, converted, in MindSpore, on the same weights; the
diagnostics name their own cell and line; a notebook whose cells do not parse together still converts cell by cell.
"""
from __future__ import annotations

import json

import numpy as np

from mindport.migrator.formats import convert_notebook_bytes

IMPORTS = "%matplotlib inline\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
MODEL = '''class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = torch.flip(x, dims=(0,))
        return torch.cat([F.relu(self.fc(y)), torch.tanh(y[:, :2])], dim=1)
'''
RUN = "!ls\nbatch = torch.randn(2, 4)\nout = torch.some_unknown_api(Net()(batch))\n"


def _cell(source, kind="code"):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def _convert(cells):
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    out, diagnostics, _, sites, changed = convert_notebook_bytes(json.dumps(notebook).encode(), "nb.ipynb", {})
    return ["".join(c["source"]) for c in json.loads(out)["cells"]], diagnostics, sites


def _python(text):
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))


def test_cells_converted_together_run_in_mindspore_like_torch():
    import mindspore as ms
    import torch

    cells = [_cell(IMPORTS.splitlines(keepends=True)), _cell("# a note\n", "markdown"),
             _cell(MODEL.splitlines(keepends=True)), _cell(RUN)]
    texts, diagnostics, sites = _convert(cells)
    assert texts[1] == "# a note\n"
    assert texts[0].splitlines()[0] == "%matplotlib inline" and "from mindspore import nn" in texts[0]
    assert "import torch\n" in texts[0]  # the unknown API of the last cell keeps its torch (flagged)
    assert "nn.Cell" in texts[2] and "torch" not in texts[2] and "def construct" in texts[2]
    assert texts[3].startswith("!ls\n") and "ops.randn(2, 4)" in texts[3]
    assert sites >= 6
    [unknown] = diagnostics  # the unknown API, located in its own cell and line; flip is not flagged
    assert (unknown.code, unknown.file, unknown.line, unknown.column) == ("MP103", "nb.ipynb[cell 3]", 3, 7)

    torch.manual_seed(0)
    torch_ns: dict = {}
    exec(_python(IMPORTS) + MODEL, torch_ns)
    net = torch_ns["Net"]().eval()
    x = np.linspace(-1.5, 1.5, 8, dtype=np.float32).reshape(2, 4)
    expected = net(torch.from_numpy(x)).detach().numpy()

    ms_ns: dict = {}
    exec(_python(texts[0]) + _python(texts[2]), ms_ns)
    cell = ms_ns["Net"]()
    cell.fc.weight.set_data(ms.Tensor(net.fc.weight.detach().numpy()))
    cell.fc.bias.set_data(ms.Tensor(net.fc.bias.detach().numpy()))
    cell.set_train(False)
    got = cell(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_cells_that_do_not_parse_together_convert_one_by_one():
    """A cell with a syntax error: the others still convert (each with its own imports) and the error names its cell."""
    texts, diagnostics, _ = _convert([_cell("import torch\nx = torch.zeros(2)\n"), _cell("def broken(:\n"),
                                      _cell("import torch\ny = torch.ones(3)\n")])
    assert "ops.zeros(2)" in texts[0] and "ops.ones(3)" in texts[2] and texts[1] == "def broken(:\n"
    # MP209 (a warning), not MP201: an MP201 made convert_path copy the whole notebook unchanged (session 42)
    assert [(d.code, d.file) for d in diagnostics] == [("MP209", "nb.ipynb[cell 1]")]


def test_cell_without_trailing_newline_and_empty_cells_keep_their_shape():
    texts, diagnostics, _ = _convert([_cell("import torch"), _cell(""), _cell("z = torch.ones(1)")])
    assert not diagnostics
    assert texts[1] == "" and not texts[2].endswith("\n") and "ops.ones(1)" in texts[2]
