"""Causes of discovery batch 25's first contact (disc55, session 53), each a fixture of our own: the expected statuses
come from torch and MindSpore run by the proof."""
from __future__ import annotations

import json

import pytest

from tests.discovery._prove import prove_files

# lee-zq/3DUNet-Pytorch's Dice/Jaccard/Tversky losses (6 of 14 not built): a loss over 5-D volumes reads one channel
# and sums it over depth, height and width one axis at a time, ``pred[:, i].sum(dim=1).sum(dim=1).sum(dim=1)``. Given
# 2-D inputs the channel is 1-D and the first sum fails "Dimension out of range (expected to be in range of [-1, 0],
# but got 1)", which the rank hints read as "rank 2", the rank given: no retry grew the input. The class: a
# "Dimension out of range" about a tensor the forward made with fewer axes than its input grows the input by the axes
# that tensor lacked, step by step (each step shows the next reduction that fails).
VOLUME_LOSS = '''
import torch
from torch import nn


class SoftDice(nn.Module):
    def forward(self, pred, target):
        dice = 0.
        for i in range(pred.size(1)):
            overlap = (pred[:, i] * target[:, i]).sum(dim=1).sum(dim=1).sum(dim=1)
            total = pred[:, i].pow(2).sum(dim=1).sum(dim=1).sum(dim=1) + target[:, i].pow(2).sum(dim=1).sum(dim=1).sum(dim=1)
            dice += 2 * overlap / (total + 1)
        return torch.clamp((1 - dice / pred.size(1)).mean(), 0, 1)
'''


def _notebook(cells: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c.lstrip("\n")} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


# MrSyee/pg-is-all-you-need's notebooks (4 of 15 not built, "name 'np' is not defined"): the imports cell downloads
# a helper under ``if IN_COLAB and ...:``, whose body is only ``!wget`` lines and comments. Magic and shell lines were
# blank in a cell's Python, so that block had no body, the cell did not parse and was left out, imports and all
# (and the converter kept it as written, torch's imports in the port). The class: an indented magic or shell line is
# ``pass`` at its indentation in the cell's Python (and written back as it was in the converted notebook).
COLAB_CELLS = [
    '''
import sys
IN_COLAB = "google.colab" in sys.modules
if IN_COLAB:
    !pip install gymnasium
''',
    '''
import os
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

if IN_COLAB and not os.path.exists("helper.py"):
    # download a helper module
    !wget https://example.org/helper.py
''',
    '''
class Actor(nn.Module):
    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.scale = float(np.sqrt(in_dim))
        self.fc = nn.Linear(in_dim, out_dim)

    def forward(self, state):
        return torch.tanh(self.fc(state) / self.scale)


def make_optimizer(actor):
    return optim.Adam(actor.parameters(), lr=1e-3)
''',
]


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh55"),
                       {"loss.py": VOLUME_LOSS, "agent.ipynb": _notebook(COLAB_CELLS)}, None)


def test_a_loss_over_volumes_grows_its_inputs_to_five_axes(proven):
    model = proven["loss.py:SoftDice"]
    assert model["status"] == "proven", model
    assert [len(s.split(":")[0].split("x")) for s in model["inputs"]] == [5, 5], model


def test_a_colab_download_block_keeps_the_imports_cell(proven):
    assert proven["agent.ipynb:Actor"]["status"] == "proven", proven["agent.ipynb:Actor"]


def test_an_indented_shell_line_is_pass_and_written_back():
    from mindport.migrator.formats import python_of

    text = 'if IN_COLAB:\n    # get it\n    !wget https://example.org/a.py\n%matplotlib inline\nx = 1'
    body = python_of(text)
    assert body.split("\n") == ["if IN_COLAB:", "    # get it", "    pass  # mindport: magic line 2", "", "x = 1"], body
    compile(body, "cell", "exec")


def test_the_converted_notebook_keeps_the_shell_line_in_its_block(tmp_path):
    # the conversion adds import lines above the block: the shell line goes back where its placeholder went
    from mindport.migrator.repo import convert_path

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "agent.ipynb").write_text(_notebook(COLAB_CELLS))
    convert_path(tmp_path / "src", tmp_path / "out", jobs=1, force=True)
    cells = json.loads((tmp_path / "out" / "agent.ipynb").read_text())["cells"]
    lines = "".join(cells[1]["source"]).split("\n")
    at = lines.index("    !wget https://example.org/helper.py")
    assert lines[at - 1] == "    # download a helper module", lines
    assert lines[at - 2].startswith("if IN_COLAB and"), lines
    assert not any("mindport: magic line" in line for line in lines), lines


# khanhnamle1994/MetaRec: a Django web service beside the models (``from django.db import models``, ``class
# Endpoint(models.Model)``) and a project model named ``Model`` (``class Model(nn.Module)``). Bases are matched by
# their last name, so Endpoint, MLAlgorithm and MLAlgorithmStatus counted as models (3 of 15 tried, "built a Endpoint,
# not a torch.nn.Module"). The class: a base imported from another package (not torch) is that package's class, even
# when a project class has its name.
def test_another_packages_base_named_as_a_project_model_is_no_model(tmp_path):
    from mindport.discovery.scan import discover

    (tmp_path / "net.py").write_text("import torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self, n=4):\n"
                                     "        super().__init__()\n        self.fc = nn.Linear(n, n)\n\n"
                                     "    def forward(self, x):\n        return self.fc(x)\n")
    (tmp_path / "web.py").write_text("from django.db import models\n\n\nclass Endpoint(models.Model):\n"
                                     "    name = models.CharField(max_length=128)\n")
    found = sorted(c.key for c in discover(tmp_path))
    assert found == ["net.py:Model"], found
