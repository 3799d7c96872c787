"""An nn.Module method taken as a value, not called (batch 17 first contact, GMvandeVen/continual-learning's
ContinualLearner: ``self.param_list = [self.named_parameters]`` in ``__init__``, each item called later as
``for n, p in gen_params():``): the Cell has no ``named_parameters`` ("The 'Classifier' object has no attribute
'named_parameters'"), three models failed to build. The reference becomes the runtime's function bound to the
module (``functools.partial(mp_containers.named_parameters, self)``), which names the parameters as torch does.
Expected values are torch's, computed here."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from mindport import convert_source  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from port_check import assert_port_matches_in_mode, load_module  # noqa: E402

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Learner(nn.Module):
        def __init__(self):
            super().__init__()
            self.param_list = [self.named_parameters]
            self.lists = {"all": self.parameters, "bufs": self.named_buffers}
            self.lin = nn.Linear(3, 2)
            self.norm = nn.LayerNorm(2)
            self.register_buffer("scale", torch.full((2,), 2.0))

        def names(self):
            return [n for gen in self.param_list for n, _ in gen()] + [n for n, _ in self.lists["bufs"]()]

        def forward(self, x):
            total = 0.0
            for gen in self.param_list:
                for n, p in gen():
                    if "weight" in n:
                        total = total + p.sum()
            count = sum(p.numel() for p in self.lists["all"]())
            return self.norm(self.lin(x)) * self.scale + total + count
""")


def test_module_methods_taken_as_values(tmp_path):
    import torch

    code = convert_source(SOURCE).code
    assert "self.named_parameters]" not in code, code
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Learner", [x], tmp_path, "method_values", "pynative", atol=1e-5)
    ns: dict = {}
    exec(compile(SOURCE, "learner_torch.py", "exec"), ns)  # noqa: S102 - the test's own program
    torch.manual_seed(0)
    want = ns["Learner"]().names()
    got = load_module(code, tmp_path / "learner_names.py", "learner_names").Learner().names()
    assert got == want == ["lin.weight", "lin.bias", "norm.weight", "norm.bias", "scale"], (got, want)


def test_assigned_member_of_that_name_is_left_alone():
    source = textwrap.dedent("""\\
        import torch.nn as nn


        class Holder(nn.Module):
            def __init__(self):
                super().__init__()
                self.buffers = []
                self.buffers += [1]

            def forward(self, x):
                return x * len(self.buffers)
    """)
    code = convert_source(source).code
    assert "self.buffers = []" in code and "self.buffers += [1]" in code and "len(self.buffers)" in code, code
