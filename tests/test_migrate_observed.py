"""`mindport migrate --model` converts once the torch model has run on the parity inputs, with the facts that run
recorded (mindport.observed): the port it proves is that conversion. Real torch, real MindSpore, real files."""
from __future__ import annotations

import json
import textwrap

from mindport.migrate import OBSERVED_FACTS, migrate

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def swish(x):
        return x * torch.sigmoid(x)


    def grow(t):
        return torch.exp(t)


    def gate(t):
        return torch.sigmoid(t)


    def join(a, b):
        return torch.cat([a, b], dim=0)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return swish(self.fc(x)) + grow(torch.arange(4)) + join(x, self.fc(x)).sum(0)


    __all__ = ["swish", "grow", "gate", "join", "Net"]  # other files may call them with anything: no static fact
    """)


def _project(tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    (src / "net.py").write_text(SOURCE)
    return src


def test_the_port_proven_is_written_from_the_torch_runs_facts(tmp_path):
    src = _project(tmp_path)
    report = migrate(src, tmp_path / "out", model="net.py:Net", inputs=["2x4:float32"], jobs=1, export=False)
    assert report.parity is not None and report.parity.ok, report.parity.reason
    code = (tmp_path / "out" / "net.py").read_text()
    assert "x * ops.sigmoid(x)" in code  # every input seen there was float32
    assert "return mp_math.exp(t)" in code  # an int64 arange was seen there: the guard stays
    assert "return mp_math.sigmoid(t)" in code  # never run: no fact, the guard stays
    assert "mp_tensor.promoted" not in code  # the join saw one dtype
    observed = json.loads((tmp_path / "out" / "mindport-report.json").read_text())["observed"]
    assert observed["used"] and observed["files"] == 1 and observed["sites"] >= 4
    assert "net.py" in json.loads((tmp_path / "out" / OBSERVED_FACTS).read_text())["files"]


def test_without_observing_the_port_keeps_the_guards_and_is_proven_too(tmp_path):
    src = _project(tmp_path)
    report = migrate(src, tmp_path / "out", model="net.py:Net", inputs=["2x4:float32"], jobs=1, export=False,
                     observe=False)
    assert report.parity is not None and report.parity.ok, report.parity.reason
    code = (tmp_path / "out" / "net.py").read_text()
    assert "x * mp_math.sigmoid(x)" in code and "mp_tensor.promoted" in code
    assert "observed" not in json.loads((tmp_path / "out" / "mindport-report.json").read_text())
    assert not (tmp_path / "out" / OBSERVED_FACTS).exists()


def test_a_torch_model_that_does_not_build_is_still_converted(tmp_path):
    src = _project(tmp_path)
    report = migrate(src, tmp_path / "out", model="net.py:Net", ctor="width=3", inputs=["2x4:float32"], jobs=1,
                     export=False)
    assert report.conversion is not None and (tmp_path / "out" / "net.py").is_file()
    assert report.observed["used"] is False and "was not built" in report.observed["reason"]
    assert any(p.code == "MP400" for p in report.problems)
