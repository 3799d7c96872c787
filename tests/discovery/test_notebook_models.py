"""Model classes that live only in a Jupyter notebook (issue 29): discovered, built and proven like a Python file's,
from a definitions-only module of the notebook's code cells (mindport/discovery/notebooks.py), never running its
other cells. First contact (lyeoni/pytorch-mnist-GAN and four more tutorial repositories): 0 models discovered,
because discovery read .py files only; and the converted notebook's class cell stayed torch code, because each cell
was converted on its own, without the imports of the cells before it.

The fixture notebook below has what such notebooks have: ``!pip``/``%matplotlib`` lines, imports in the first cell
(one of a module this machine lacks, used only by a plotting cell), constants, the model class in a cell of its own,
then cells that build and call it (evidence for the constructor and the input) and a training cell that would hang
(``while True``) after writing a marker file, if it ever ran. One end-to-end proof (real torch, real MindSpore) of
that class; the rest are cheap checks of the pieces (no framework started)."""
from __future__ import annotations

import ast
import json

MARKER = "TRAINING_CELL_RAN"


def _notebook(*cells: str, markdown: str = "# A GAN-style tutorial") -> str:
    out = [{"cell_type": "markdown", "metadata": {}, "source": [markdown]}]
    for text in cells:
        out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                    "source": text.splitlines(keepends=True)})
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 4})


def _fixture(marker_path: str) -> str:
    return _notebook(
        "!pip install not-a-real-package\n%matplotlib inline\nimport torch\nimport torch.nn as nn\n"
        "import torch.nn.functional as F\nimport not_installed_plotting_lib_xyz as plots\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "HIDDEN = 32\nN_EPOCHS = 10",
        "class Net(nn.Module):\n"
        "    def __init__(self, in_dim, hidden, out_dim=3):\n"
        "        super().__init__()\n"
        "        self.fc1 = nn.Linear(in_dim, hidden)\n"
        "        self.norm = nn.LayerNorm(hidden)\n"
        "        self.fc2 = nn.Linear(hidden, out_dim)\n\n"
        "    def forward(self, x):\n"
        "        return torch.tanh(self.fc2(F.leaky_relu(self.norm(self.fc1(x)), 0.2)))",
        "model = Net(in_dim=12, hidden=HIDDEN).to(device)\nout = model(torch.randn(5, 12))\nprint(out.shape)",
        f"open({marker_path!r}, 'w').write('ran')\nwhile True:\n    pass",
        "plots.show(out)\nraise SystemExit('the last cell ran')",
    )


def test_definitions_only_module_keeps_definitions_and_drops_the_work(tmp_path):
    """Before: a notebook had no module at all. After: imports the kept code reads, classes, functions, constants
    (literals, ``torch.device(...)``); the ``!pip``/``%`` lines, the training loop, the construction and the call
    of the model, the marker write and an import only the plotting cell used are left out."""
    from mindport.discovery.notebooks import definitions_source

    text = definitions_source(_fixture(str(tmp_path / MARKER)).encode(), "nb.ipynb")
    tree = ast.parse(text)
    top = [type(n).__name__ for n in tree.body]
    assert top == ["Import", "Import", "Import", "Assign", "Assign", "Assign", "ClassDef"], text
    assert "not_installed_plotting_lib_xyz" not in text and "while True" not in text and MARKER not in text
    assert "pip" not in text and "matplotlib" not in text and "model = Net" not in text
    assert "# cell 2, line 1\nclass Net(nn.Module):" in text  # each kept statement names its cell and line


def test_a_constant_that_reads_the_dropped_work_is_dropped():
    """``mnist_dim = train_dataset.train_data.size(1) * ...`` (lyeoni/pytorch-mnist-GAN) reads a dataset built by a
    dropped statement: kept, it would fail the import (NameError); a subscript or an arbitrary call reads data."""
    from mindport.discovery.notebooks import definitions_source

    nb = _notebook("import torch\ntrain = torch.load('data.pt')\nn = train.size(1)\nm = [1, 2][0]\nk = 4 * 2\n"
                   "try:\n    import apex\nexcept ImportError:\n    apex = None\n"
                   "class A(torch.nn.Module):\n    pass\n",
                   "x = ?bad syntax", "def f():\n    return apex, k")
    text = definitions_source(nb.encode())
    names = {t.id for n in ast.parse(text).body if isinstance(n, ast.Assign) for t in n.targets}
    assert names == {"k"}, text
    assert "import apex" in text and "torch.load" not in text and "def f" in text


def test_discovery_finds_the_notebook_class_with_its_evidence(tmp_path):
    """The class is addressed ``nb.ipynb:Net``; the other cells' literal calls are its constructor and input
    evidence, as a script's are; ``--models '*.ipynb:*'`` selects notebook classes."""
    from mindport.discovery.prove import select
    from mindport.discovery.scan import discover, python_files

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "tutorial nb.ipynb").write_text(_fixture(str(tmp_path / MARKER)))
    (tmp_path / "lib.py").write_text("import torch.nn as nn\n\nclass Other(nn.Module):\n"
                                     "    def forward(self, x):\n        return x\n")
    cp = tmp_path / "sub" / ".ipynb_checkpoints"
    cp.mkdir()
    (cp / "tutorial nb-checkpoint.ipynb").write_text(_fixture(str(tmp_path / MARKER)))
    assert python_files(tmp_path) == ["lib.py"]
    assert python_files(tmp_path, notebooks=True) == ["lib.py", "sub/tutorial nb.ipynb"]
    found = {c.key: c for c in discover(tmp_path)}
    assert set(found) == {"lib.py:Other", "sub/tutorial nb.ipynb:Net"}
    net = found["sub/tutorial nb.ipynb:Net"]
    assert "in_dim=12, hidden=HIDDEN" in net.ctors, net.ctors  # HIDDEN: the module's constant, kept
    assert ["5x12:float32"] in net.inputs, net.inputs
    assert [c.key for c in select(list(found.values()), "*.ipynb:*", None)] == ["sub/tutorial nb.ipynb:Net"]
    assert not (tmp_path / MARKER).exists()


def test_cells_convert_together_so_a_class_cell_sees_the_first_cells_imports():
    """Before: each cell converted alone; the class cell (``nn`` imported two cells up) stayed ``nn.Module`` while
    the first cell's ``import torch.nn as nn`` was rewritten away ('name nn is not defined' in the port). After: the
    cells convert as one module, split back at their boundaries; magic lines stay where they were, a cell that does not
    parse gets its own MP209 (a warning; an MP201 made the whole notebook copied unchanged) and is kept as written,
    and diagnostics name their cell and its line."""
    from mindport.migrator.formats import convert_notebook_bytes

    nb = _notebook("%matplotlib inline\nimport torch\nimport torch.nn as nn",
                   "class Net(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)",
                   "x = ?help", "y = torch.frobnicate_xyz(1)")
    out, diags, _, _, changed = convert_notebook_bytes(nb.encode(), "nb.ipynb", {})
    code = ["".join(c["source"]) for c in json.loads(out)["cells"] if c["cell_type"] == "code"]
    assert changed and len(code) == 4
    # (torch stays imported: the unknown torch.frobnicate_xyz of the last cell keeps its torch meaning, flagged)
    assert code[0].startswith("%matplotlib inline\nimport torch\n") and "from mindspore import nn" in code[0]
    assert "class Net(nn.Cell):" in code[1] and "def construct(self, x):" in code[1]
    assert code[2] == "x = ?help"
    where = {(d.code, d.file, d.line) for d in diags}
    assert ("MP209", "nb.ipynb[cell 3]", 1) in where, where  # the notebook's cell index (markdown counted)
    assert any(d.file == "nb.ipynb[cell 4]" and d.line == 1 and "frobnicate" in d.message for d in diags), diags


def test_notebook_model_is_proven_and_its_training_cell_never_runs(tmp_path):
    """Real torch and real MindSpore: the torch side built from the repository's notebook, the MindSpore side from
    the converted notebook, compared at both draws; the training cell (a marker write, then ``while True``) never
    ran in any process, and the module the proof imported is in the log folder."""
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out, logs = tmp_path / "src", tmp_path / "out", tmp_path / "logs"
    src.mkdir()
    (src / "gan tutorial.ipynb").write_text(_fixture(str(tmp_path / MARKER)))
    convert_path(src, out, jobs=1, force=True)
    models, summary = prove_models(src, out, cache=False, log_dir=logs, settings=ProveSettings(stub_missing=True))
    assert [(m["class"], m["status"]) for m in models] == [("gan tutorial.ipynb:Net", "proven")], models
    assert models[0]["ctor"] == "in_dim=12, hidden=HIDDEN" and models[0]["inputs"] == ["5x12:float32"], models
    assert summary["discovered"] == 1 and summary["proven"] == 1
    assert not (tmp_path / MARKER).exists()
    written = sorted(p.name for p in (logs / "notebooks").glob("*.py"))
    assert len(written) == 2 and all(n.startswith("gan_tutorial_ipynb_") for n in written), written
