"""A repository whose module reads a file by a path relative to its root at import (minLlama3's params.py:
``get_tokenizer(size=512)`` opens ``./tokenizers/tiny_shakespeare_tokenizer_512.model``): discovery's builder ran in
the repository's folder and built it, but the proof's torch and MindSpore processes imported it from wherever
`migrate` was started, and every such model was "not-built: the torch model did not build again: FileNotFoundError"
(evintunador/minLlama3: 5 of 5). The proof now builds each side in its own tree's folder (the converted tree keeps
the data files), so the model is proven like any other: real torch against real MindSpore."""
from __future__ import annotations

import os

from _prove import prove_files

FILES = {
    "assets/width.txt": "6\n",
    "params.py": """
        with open("./assets/width.txt") as f:  # read at import, relative to the repository's root
            WIDTH = int(f.read())
    """,
    "model.py": """
        import torch
        import torch.nn as nn

        from params import WIDTH


        class Head(nn.Module):
            def __init__(self, dim=4):
                super().__init__()
                self.proj = nn.Linear(dim, WIDTH)

            def forward(self, x):
                return torch.tanh(self.proj(x))
    """,
}


def test_a_model_reading_a_relative_path_at_import_is_proven(tmp_path):
    assert not os.path.exists("assets/width.txt")  # the test runs elsewhere: the path resolves only in the repo
    results = prove_files(tmp_path, FILES, "model.py:Head")
    head = results["model.py:Head"]
    assert head["status"] == "proven", head
