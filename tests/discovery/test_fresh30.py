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
