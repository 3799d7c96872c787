"""What a side sends back to the parent is builtin data only: a project's own class among a layer's attributes (timm's
``class Format(str, Enum)``, ``self.fmt = Format.NHWC``) reached the parent as that class, which the parent cannot
import (it keeps neither project on its path): ``validate`` of timm's vit_tiny_patch16_224 died with
"ModuleNotFoundError: No module named 'timm'" while reading the torch side's answer. The configuration record keeps
such a value as its builtin form; any other project object in an answer is one clear side error, never a crash."""
from __future__ import annotations

import pickle
import sys
import textwrap

import pytest

from mindport.migrator import convert_path
from mindport.validators.parity.compare import validate
from mindport.validators.parity.configs import _plain
from mindport.validators.parity.worker import _PlainUnpickler

FORMATS = textwrap.dedent("""\
    from enum import Enum


    class Format(str, Enum):
        NCHW = "NCHW"
        NHWC = "NHWC"
""")

MODEL = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    from projfmt.formats import Format


    class Patch(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Conv2d(3, 8, 4, stride=4)
            self.fmt = Format.NHWC

        def forward(self, x):
            x = self.proj(x)
            return x.permute(0, 2, 3, 1) if self.fmt == Format.NHWC else x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = Patch()
            self.head = nn.Linear(8, 5)

        def forward(self, x):
            return self.head(torch.tanh(self.patch(x)))
""")


def test_a_str_enum_setting_is_its_builtin_value():
    from enum import Enum, IntEnum

    class Mode(str, Enum):
        A = "a"

    class Level(IntEnum):
        HIGH = 3

    for value, want in [(Mode.A, "a"), (Level.HIGH, 3), (True, True), ((Mode.A, 2), ("a", 2))]:
        got = _plain(value)
        assert got == want and type(got) is type(want), (value, got)
        assert all(type(v) in (str, int) for v in got) if isinstance(got, tuple) else True


def test_an_unimportable_class_in_an_answer_is_refused_plainly(tmp_path, monkeypatch):
    (tmp_path / "elsewhere_mod.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import elsewhere_mod

    data = pickle.dumps(("ok", elsewhere_mod.Thing()))
    del sys.modules["elsewhere_mod"]
    monkeypatch.syspath_prepend(str(tmp_path / "nowhere"))
    sys.path.remove(str(tmp_path))
    with pytest.raises(pickle.UnpicklingError, match="elsewhere_mod.Thing"):
        _PlainUnpickler(__import__("io").BytesIO(data)).load()


def test_validate_a_model_holding_a_project_enum(tmp_path):
    src = tmp_path / "src"
    (src / "projfmt").mkdir(parents=True)
    (src / "projfmt" / "__init__.py").write_text("")
    (src / "projfmt" / "formats.py").write_text(FORMATS)
    (src / "projfmt" / "model.py").write_text(MODEL)
    out = tmp_path / "ms"
    convert_path(src, out)
    report = validate("projfmt.model:Net", "projfmt.model:Net", inputs=["2x3x8x8:float32"], root=src, ms_root=out,
                      graph_mode=False)
    assert report.ok and report.exit_code == 0, (report.outcome, report.reason, report.ms_error)
    assert "projfmt" not in sys.modules
