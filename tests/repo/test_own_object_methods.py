"""``trainer = Trainer(model); trainer.train()`` (trainfresh4's char_gpt, aadilcan/char-transformer-from-scratch):
``train`` is the Trainer class's own method, not nn.Module's; it became ``trainer.set_train(True)`` (AttributeError:
'Trainer' object has no attribute 'set_train'). A name bound to an object of a non-module class the file defines keeps
its methods as written; the model's own ``train()``/``eval()`` still become ``set_train``, also for a model class
imported from another file of the project (``model = Net()``: the file defining no class is converted once before the
project's module classes are known). A Trainer imported from another file (char_gpt's own layout): the second test."""
from __future__ import annotations

import importlib
import sys
import textwrap


from mindport import convert_path

TREE = {
    "own_nets.py": """\
        import torch.nn as nn


        class Net(nn.Sequential):
            def __init__(self):
                super().__init__(nn.Linear(2, 2), nn.Dropout(0.5))
    """,
    "own_run.py": """\
        from own_nets import Net


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.steps = 0

            def train(self):
                self.model.train()
                self.steps += 1
                return self.model.training

            def parameters(self):
                return list(self.model.parameters())


        def main():
            model = Net()
            trainer = Trainer(model)
            mode = trainer.train()
            count = len(trainer.parameters())
            model.eval()
            return trainer.steps, mode, count, model
    """,
}


def _load(root, name):
    sys.path.insert(0, str(root))
    try:
        for key in ("own_run", "own_nets"):
            sys.modules.pop(key, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
        for key in ("own_run", "own_nets"):  # names other tests' modules may take (benchmarks' run.py)
            sys.modules.pop(key, None)


def test_a_project_objects_train_method_is_its_own(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for rel, text in TREE.items():
        (src / rel).write_text(textwrap.dedent(text))
    convert_path(src, out, jobs=1)
    code = (out / "own_run.py").read_text()
    assert "trainer.train()" in code and "model.set_train(False)" in code and "self.model.set_train(True)" in code, code
    steps, mode, count, torch_model = _load(src, "own_run").main()
    assert (steps, mode, count) == (1, True, 2) and not torch_model.training
    steps, mode, count, cell = _load(out, "own_run").main()
    assert (steps, mode, count) == (1, True, 2) and not cell.training


IMPORTED_TRAINER_TREE = {
    "pkg_own/__init__.py": "",
    "pkg_own/nets.py": """\
        import torch.nn as nn


        class Net(nn.Sequential):
            def __init__(self):
                super().__init__(nn.Linear(2, 2), nn.Dropout(0.5))
    """,
    "pkg_own/trainer.py": """\
        class Trainer:
            def __init__(self, model):
                self.model = model
                self.steps = 0

            def train(self):
                self.model.train()
                self.steps += 1
                return self.model.training
    """,
    "own_script.py": """\
        from pkg_own.nets import Net
        from pkg_own.trainer import Trainer


        def main():
            model = Net()
            trainer = Trainer(model)
            mode = trainer.train()
            model.eval()
            return trainer.steps, mode, model
    """,
}


def test_a_trainer_imported_from_another_file_keeps_its_train_method(tmp_path):
    """aadilcan/char_gpt's layout: ``from char_transformer.trainer import Trainer`` in a script that defines no class;
    ``trainer.train()`` became ``trainer.set_train(True)`` (the script was converted once, before the project's
    classes were known). The project's non-module classes are a fact of convert_path, and a file calling one is
    converted again with it; the imported model's eval() still becomes set_train."""
    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in IMPORTED_TRAINER_TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text))
    convert_path(src, out, jobs=1)
    code = (out / "own_script.py").read_text()
    assert "trainer.train()" in code and "model.set_train(False)" in code, code
    sys.path.insert(0, str(out))
    try:
        for key in [k for k in sys.modules if k.split(".")[0] in ("own_script", "pkg_own")]:
            sys.modules.pop(key)
        steps, mode, cell = importlib.import_module("own_script").main()
    finally:
        sys.path.remove(str(out))
        for key in [k for k in sys.modules if k.split(".")[0] in ("own_script", "pkg_own")]:
            sys.modules.pop(key)
    assert (steps, mode) == (1, True) and not cell.training
