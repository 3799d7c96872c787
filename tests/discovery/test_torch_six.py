"""``torch._six`` (torch < 2.0; removed in torch 2.0): code written for torch 1.x imports ``inf``, ``nan``,
``string_classes``, ``int_classes``, ``container_abcs`` ... from it (microsoft/CvT and six more repositories of the
discovery sweep). The converter maps each name (``framework.toml``: what it is on today's Python), and the reference
(torch) side of a proof gets the module back with torch 1.x's values (``mindport.discovery.legacy_torch``), so such
a model is converted and proven; before, the conversion left ``from torch._six import ...`` (MP104) and the torch
side could not import the model ("No module named 'torch._six'")."""
from __future__ import annotations

import math
from pathlib import Path

SIX_MODEL = '''
import torch
import torch.nn as nn
from torch._six import container_abcs, inf, int_classes, string_classes
import torch._six


def _pair(v):
    if isinstance(v, container_abcs.Iterable):
        return tuple(v)
    return (v, v)


class ClippedHead(nn.Module):
    def __init__(self, dim=8, classes=3, reduce="mean"):
        super().__init__()
        self.size = _pair(dim)
        assert isinstance(classes, int_classes)
        self.mode = reduce if isinstance(reduce, string_classes) else "mean"
        self.fc = nn.Linear(self.size[0], classes)

    def forward(self, x):
        y = self.fc(x)
        y = y.masked_fill(y > 0.5, inf).clamp(max=2.0)
        y = y.masked_fill(y < -0.5, -torch._six.inf).clamp(min=-2.0)
        return y.mean(-1) if self.mode == "mean" else y
'''


def test_torch_six_names_are_their_python_values():
    """The reference side's stand-in has torch 1.x's values (torch/_six.py on Python 3), and every name the
    converter maps is that value in ``mindport.runtime.framework``."""
    import builtins
    import collections.abc
    import importlib
    import sys

    import torch

    from mindport.discovery import legacy_torch
    from mindport.runtime import framework

    legacy_torch.install()
    sys.modules.pop("torch._six", None)
    six = importlib.import_module("torch._six")
    assert torch._six is six
    assert six.inf == math.inf == torch.inf and math.isnan(six.nan)
    assert six.string_classes == (str, bytes) and six.int_classes is int
    assert six.container_abcs is collections.abc and six.FileNotFoundError is builtins.FileNotFoundError
    assert six.imap is map
    for name in ("inf", "string_classes", "int_classes", "container_abcs", "FileNotFoundError", "imap"):
        assert getattr(framework, name) == getattr(six, name), name

    class Meta(type):
        pass

    class Base:
        k = 2

    for with_metaclass in (six.with_metaclass, framework.with_metaclass):
        cls = type("C", (with_metaclass(Meta, Base),), {})
        assert type(cls) is Meta and cls.__mro__[1] is Base and cls.k == 2


def test_a_torch_six_model_converts_without_torch_and_is_proven(tmp_path):
    from mindport.discovery.prove import prove_models
    from mindport.migrator import convert_source
    from mindport.migrator.repo import convert_path

    result = convert_source(SIX_MODEL)
    assert not [d for d in result.diagnostics if d.code == "MP104"], [d.format() for d in result.diagnostics]
    assert "torch" not in result.code.replace("mindport", ""), result.code
    assert "mp_framework.container_abcs.Iterable" in result.code

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "head.py").write_text(SIX_MODEL)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="head.py:*", cache=False)
    (head,) = models
    assert head["status"] == "proven", head
