"""First contact on fresh repositories (session 30: `mindport migrate REPO -o REPO_ms` with no model settings).

A flat import across folders that only the repository's shell scripts make resolvable
(kaituoxu/Speech-Transformer: ``src/transformer/encoder.py`` does ``from utils import get_non_pad_mask``, which is
``src/utils/utils.py`` because ``egs/aishell/path.sh`` exports ``PYTHONPATH=$SRC_ROOT/.../:$SRC_ROOT/utils/`` with
``MAIN_ROOT=$PWD/../..`` and ``SRC_ROOT=$MAIN_ROOT/src``): the builder's stub finder gave ``utils`` a stand-in and
the Encoder was "not-built: '_StubModule' object is not callable". The folders the scripts export now go last on
``sys.path`` in the builder and on both sides of the proof (``mindport.discovery.script_paths``).
"""
from __future__ import annotations

from _prove import prove_files

_REPO = {
    "egs/demo/path.sh": """
        MAIN_ROOT=$PWD/../..
        SRC_ROOT=$MAIN_ROOT/src
        export PATH=$SRC_ROOT/bin/:$PATH
        export PYTHONPATH=$SRC_ROOT/model/:$SRC_ROOT/helpers/:$SRC_ROOT/missing/:$PYTHONPATH
    """,
    "src/helpers/helpers.py": """
        import torch


        def pad_mask(x, lengths):
            mask = torch.ones(x.shape[:-1])
            for i in range(x.shape[0]):
                mask[i, lengths[i]:] = 0
            return mask.unsqueeze(-1)
    """,
    "src/model/encoder.py": """
        import torch
        import torch.nn as nn

        from helpers import pad_mask


        class MaskedEncoder(nn.Module):
            def __init__(self, d_input=12, d_model=16):
                super().__init__()
                self.linear = nn.Linear(d_input, d_model)

            def forward(self, x):
                lengths = [x.shape[1], x.shape[1] - 1]
                return torch.tanh(self.linear(x)) * pad_mask(x, lengths)


        if __name__ == "__main__":
            print(MaskedEncoder()(torch.randn(2, 5, 12)).shape)
    """,
}


def test_the_folders_shell_scripts_export_are_read(tmp_path):
    import textwrap

    from mindport.discovery.script_paths import script_paths

    for rel, text in _REPO.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    # in the order given, existing folders inside the repository only ($SRC_ROOT/missing/ is none; $PYTHONPATH is
    # the user's own)
    assert script_paths(tmp_path) == ["src/model", "src/helpers"]


def test_a_model_importing_through_a_script_exported_folder_is_proven(tmp_path):
    found = prove_files(tmp_path, _REPO, "MaskedEncoder")
    result = found["src/model/encoder.py:MaskedEncoder"]
    assert result["status"] == "proven", result


# A repository whose scripts live in a sub-folder (yusanshi/news-recommendation: ``python src/train.py``, Python puts
# ``src/`` first on sys.path) and whose model files import its packages by their name from there
# (``from model.general.attention.additive import AdditiveAttention`` is ``src/model/general/...``): from the root
# nothing resolved ``model``, the stub finder gave it a stand-in, and 13 of 15 models were not built ("expected Tensor
# as element 0 in argument 0, but got result"). The one folder holding the whole dotted path now goes last on sys.path.
_SUBFOLDER = {
    "src/train.py": """
        from model.pool.net import PooledNet

        if __name__ == "__main__":
            print(PooledNet(8))
    """,
    "src/model/general/attention/additive.py": """
        import torch
        import torch.nn as nn


        class AdditiveAttention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.linear = nn.Linear(dim, dim)
                self.query = nn.Parameter(torch.empty(dim).uniform_(-0.1, 0.1))

            def forward(self, x):
                weights = torch.softmax(torch.tanh(self.linear(x)) @ self.query, dim=1)
                return torch.bmm(weights.unsqueeze(1), x).squeeze(1)
    """,
    "src/model/pool/net.py": """
        import torch.nn as nn

        from model.general.attention.additive import AdditiveAttention


        class PooledNet(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.embed = nn.Linear(dim, dim)
                self.pool = AdditiveAttention(dim)

            def forward(self, x):
                return self.pool(self.embed(x))
    """,
}


def test_the_folder_a_repository_imports_its_packages_from_is_found(tmp_path):
    import textwrap

    from mindport.discovery.script_paths import import_roots

    for rel, text in _SUBFOLDER.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    assert import_roots(tmp_path) == ["src"]


def test_a_model_importing_its_packages_from_a_script_folder_is_proven(tmp_path):
    found = prove_files(tmp_path, _SUBFOLDER, "PooledNet")
    result = found["src/model/pool/net.py:PooledNet"]
    assert result["status"] == "proven", result


# A factory or class that downloads its weights when a flag it defaults to True says so (bubbliiiing/
# deeplabv3-plus-pytorch's ``def xception(pretrained=True, downsample_factor=16)``): the builder has no network, so
# the build at the defaults was "not-built: URLError: network access is disabled". The flag is now also tried False.
_DOWNLOADS = {
    "nets/tiny.py": """
        import torch
        import torch.nn as nn


        class Tiny(nn.Module):
            def __init__(self, width, pretrained=True):
                super().__init__()
                self.conv = nn.Conv2d(3, width, 3, padding=1)
                if pretrained:
                    self.load_state_dict(torch.hub.load_state_dict_from_url("https://example.invalid/tiny.pth"))

            def forward(self, x):
                return torch.relu(self.conv(x))


        def tiny(pretrained=True, width=8):
            model = Tiny(width, pretrained=False)
            if pretrained:
                model.load_state_dict(torch.hub.load_state_dict_from_url("https://example.invalid/tiny.pth"))
            return model
    """,
}


def test_a_model_that_downloads_its_weights_by_default_is_built_without(tmp_path):
    found = prove_files(tmp_path, _DOWNLOADS, "iny")
    assert found["nets/tiny.py:tiny"]["status"] == "proven", found["nets/tiny.py:tiny"]
    assert "pretrained=False" in found["nets/tiny.py:tiny"]["ctor"]
    assert found["nets/tiny.py:Tiny"]["status"] == "proven", found["nets/tiny.py:Tiny"]
