"""`mindport migrate REPO` without a model converts again with the facts of the torch runs discovery made (every
model is built and run in torch before any proof): the ports proven are that conversion (issue 29/30, migrate21;
migrate --model did this since lead20, the discovery path converted from the code alone). Own fixture; real torch
and MindSpore."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def squash(h):
        return h * torch.sigmoid(h)


    def counts(t):
        return torch.exp(t)


    def unused(t):
        return torch.tanh(t)


    class Gated(nn.Module):
        def __init__(self, features: int = 8):
            super().__init__()
            self.fc = nn.Linear(features, features)

        def forward(self, x):
            return squash(self.fc(x)) + counts(torch.arange(x.shape[-1])).float()


    class Mixer(nn.Module):
        def __init__(self, features: int = 8):
            super().__init__()
            self.gate = Gated(features)
            self.out = nn.Linear(features, 4)

        def forward(self, x):
            return self.out(self.gate(x))


    __all__ = ["squash", "counts", "unused", "Gated", "Mixer"]  # callable from anywhere: no static fact
    """)


def _run(tmp_path, **kw):
    from mindport.migrate import migrate

    src = tmp_path / "repo"
    src.mkdir()
    (src / "nets.py").write_text(SOURCE)
    out = tmp_path / "out"
    report = migrate(src, out, jobs=1, export=False, **kw)
    return report, out


def test_discovery_converts_with_the_facts_of_its_torch_runs(tmp_path):
    from mindport.migrate import OBSERVED_FACTS

    report, out = _run(tmp_path)
    models = {m["class"].split(":")[1]: m for m in report.models}
    assert {n: m["status"] for n, m in models.items()} == {"Gated": "proven", "Mixer": "proven"}, models
    code = (out / "nets.py").read_text()
    assert "h * ops.sigmoid(h)" in code  # only float32 seen there in the builds: MindSpore's own op
    assert "return mp_math.exp(t)" in code  # an int64 arange seen there: the guard stays
    assert "return mp_math.tanh(t)" in code  # never run: no fact, the guard stays
    assert report.observed and report.observed["used"], report.observed
    facts = json.loads((out / OBSERVED_FACTS).read_text())
    assert "nets.py" in facts["files"]
    saved = json.loads((out / "mindport-report.json").read_text())
    assert saved["observed"]["used"]


def test_no_observe_converts_from_the_code_alone(tmp_path):
    report, out = _run(tmp_path, observe=False)
    code = (out / "nets.py").read_text()
    assert "h * mp_math.sigmoid(h)" in code
    assert all(m["status"] == "proven" for m in report.models), report.models


def test_relative_paths_build_and_prove(tmp_path, monkeypatch):
    """`mindport migrate repo -o converted` from the folder holding both (relative paths, as people type them): the
    builder runs in the repository's folder and was handed the request file's relative path, so it never started and
    every model was "not built" (pbloem/former, first contact: 11 discovered, 0 built)."""
    from mindport.migrate import migrate

    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "nets.py").write_text(SOURCE)
    report = migrate(Path("repo"), Path("converted"), jobs=1, export=False, observe=False)
    assert {m["status"] for m in report.models} == {"proven"}, report.models
