"""A sub-Cell keeping state on self between two calls in one forward of its parent (SegRNN's RevIN: ``x =
self.revin(x, 'norm')`` stores the statistics, ``y = self.revin(y, 'denorm')`` reads them; graph53's open class).
MindSpore 2.10's GRAPH_MODE does not carry a sub-Cell's ``self.x`` write from one call to the next (the second call
read what ``__init__`` set: ``mul(None)``). SelfCacheTransform threads such a construct when one instance, built once
in the file, is called by its parent's construct more than once, each call a line of its own: the sub-Cell's
``_mp_construct`` takes and returns the state, its ``construct`` keeps its signature and return, and the parent
calls it through ``mp_framework.held_call``, passing the state from one call to the next (the two classes may be in
two files: ``project.held_cells``). Each converted model runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HELPER_WRITES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Stat(nn.Module):
        def __init__(self, n=4, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.w = nn.Parameter(torch.ones(n) * 1.5)

        def forward(self, x, mode: str):
            if mode == 'norm':
                self._stats(x)
                x = self._normalize(x)
            elif mode == 'denorm':
                x = self._denormalize(x)
            else:
                raise NotImplementedError
            return x

        def _stats(self, x):
            self.mean = torch.mean(x, dim=1, keepdim=True).detach()
            self.std = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + self.eps).detach()

        def _normalize(self, x):
            return (x - self.mean) / self.std * self.w

        def _denormalize(self, x):
            return x / self.w * self.std + self.mean


    class Net(nn.Module):
        def __init__(self, n=4):
            super().__init__()
            self.norm = Stat(n)
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            x = self.norm(x, 'norm')
            y = self.fc(x)
            y = self.norm(y, 'denorm')
            return y
""")

# construct writes the state itself (no helper), under an if; the parent's last call is its return. (Before the
# change this one compiled too: a graph reads a direct ``self.shift`` after the earlier call's write; what failed is
# the threaded helpers' ``getattr(self, 'std', None)``, which a graph folds to None while it compiles, HELPER_WRITES.)
SELF_WRITES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Center(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        def forward(self, x, remember=True):
            if remember:
                self.shift = x.mean(dim=-1, keepdim=True)
                return x - self.shift
            return x * self.scale + self.shift


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.center = Center()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.center(x)
            h = torch.relu(self.fc(h))
            return self.center(h, remember=False)
""")


def test_held_cell_is_threaded_from_call_to_call():
    code = convert_source(HELPER_WRITES).code
    assert "def _mp_construct(self, x, mode: str, _mp_state=None):" in code
    assert "_mp_mean, _mp_std = _mp_state if _mp_state is not None else (None, None)" in code
    assert "return self._mp_construct(x, mode)[0]" in code  # construct keeps its signature and return
    assert "mp_framework.held_call(self.norm, y, 'denorm', _mp_state=_mp_norm_state)" in code
    assert "MP107" not in code  # each read is the value the earlier call wrote, now in a graph too


def test_called_once_or_built_twice_stays_said():
    once = HELPER_WRITES.replace("        y = self.norm(y, 'denorm')\n", "")
    twice = HELPER_WRITES.replace("self.fc = nn.Linear(n, n)", "self.fc = nn.Linear(n, n)\n        self.other = Stat(n)")
    for source in (once, twice):
        assert source != HELPER_WRITES
        code = convert_source(source).code
        assert "_mp_construct" not in code
        assert "MP107 construct reads self.std before writing it" in code


def test_a_call_that_cannot_pass_the_state_is_said():
    source = HELPER_WRITES.replace("y = self.norm(y, 'denorm')", "y = self.norm(y, 'denorm') if y.ndim else y")
    assert source != HELPER_WRITES
    code = convert_source(source).code
    assert "held_call(self.norm, x, 'norm'" in code
    assert "MP107 a call of a sub-Cell that keeps state on self from one call to the next" in code


PARENT_FILE = textwrap.dedent("""
    import torch.nn as nn
    from layers.stat import Stat


    class Net(nn.Module):
        def __init__(self, n=4, use_norm=True):
            super().__init__()
            self.use_norm = use_norm
            if use_norm:
                self.norm = Stat(n)
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            if self.use_norm:
                x = self.norm(x.permute(0, 2, 1), 'norm').permute(0, 2, 1)
            y = self.fc(x)
            if self.use_norm:
                y = self.norm(y.permute(0, 2, 1), 'denorm').permute(0, 2, 1)
            return y
""")


def test_held_cell_in_another_file(tmp_path):
    """SegRNN's case: RevIN in layers/, the model in models/, each call under ``if self.revin:`` and inside an
    expression (``self.revinLayer(x, 'norm').permute(0, 2, 1)``)."""
    from mindport.migrator.repo import convert_path

    src = tmp_path / "src"
    (src / "layers").mkdir(parents=True)
    (src / "layers" / "__init__.py").write_text("")
    (src / "layers" / "stat.py").write_text(HELPER_WRITES.split("class Net")[0])
    (src / "model.py").write_text(PARENT_FILE)
    convert_path(src, tmp_path / "out", use_cache=False, jobs=1)
    child = (tmp_path / "out" / "layers" / "stat.py").read_text()
    parent = (tmp_path / "out" / "model.py").read_text()
    assert "def _mp_construct(self, x, mode: str, _mp_state=None):" in child
    assert "_mp_out = mp_framework.held_call(self.norm, x.permute(0, 2, 1), 'norm', _mp_state=_mp_norm_state)" in parent
    assert "x = _mp_out[0].permute(0, 2, 1)" in parent
    assert "MP107" not in child + parent


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("source", [HELPER_WRITES, SELF_WRITES], ids=["helper_writes", "self_writes"])
def test_held_cell_matches_torch(source, mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32) * 3 + 1
    name = "held54_" + str(abs(hash(source)) % 1000)
    assert_port_matches_in_mode(source, convert_source(source).code, "Net", [x], tmp_path, name, mode)
