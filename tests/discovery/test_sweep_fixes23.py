"""Fixes from disc23's first contact with manifest rows 168 onwards (issue 29)."""
from __future__ import annotations

import textwrap


def _prove(tmp_path, files, pattern):
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern=pattern, cache=False, settings=ProveSettings(stub_missing=True))
    return {m["class"]: m for m in models}


SCRIPT_PACKAGE = {
    # a package folder that also holds the scripts (RCAN's RCAN_TrainCode/code/__init__.py beside main.py): its
    # files import its sub-packages by their own top-level name, as main.py run from code/ does
    "train/code/__init__.py": "",
    "train/code/main.py": "from model import common\n",
    "train/code/model/__init__.py": "",
    "train/code/model/common.py": '''
        import torch.nn as nn


        class BasicBlock(nn.Sequential):
            def __init__(self, in_channels, out_channels, kernel_size):
                super().__init__(nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2),
                                 nn.ReLU())
    ''',
    "train/code/loss/__init__.py": "",
    "train/code/loss/discriminator.py": '''
        import torch.nn as nn

        from model import common


        class Discriminator(nn.Module):
            def __init__(self, n_colors, width):
                super().__init__()
                self.body = nn.Sequential(common.BasicBlock(n_colors, width, 3), common.BasicBlock(width, width, 3))
                self.head = nn.Conv2d(width, 1, 1)

            def forward(self, x):
                return self.head(self.body(x))
    ''',
}


def test_a_sub_package_imported_by_the_script_folders_name_is_the_projects_not_a_stub(tmp_path):
    """(disc23, yulunzhang/RCAN) ``code/loss/discriminator.py`` does ``from model import common``, ``code/`` being a
    package (it has ``__init__.py``) that holds the scripts. Only ``code/loss`` was on sys.path: ``model`` was a
    stand-in of --stub-missing and the build failed ("mindport_stub.model.common.BasicBlock is not a Module
    subclass"). Every enclosing package folder is now last on sys.path: the project's own ``model`` package, on
    both sides, and the port is proven against torch."""
    models = _prove(tmp_path, SCRIPT_PACKAGE, "train/code/loss/discriminator.py:*")
    disc = models["train/code/loss/discriminator.py:Discriminator"]
    assert disc["status"] == "proven", disc
    assert not disc.get("stubbed"), disc

