"""`mindport migrate REPO` links a model's GRAPH_MODE failure to the MP107 warnings its conversion wrote (issue 29:
"proofs linking ms-failed to MP107"; session 50 left FocalNet's and MAML-style models ms-failed in GRAPH_MODE with
the converter's MP107 on the very line, in two different parts of the report). The class: a model entry whose
GRAPH_MODE run failed or differed gets ``graph_warnings`` (the MP107 sites of its file) and its error names the
first. Fixture package written for this test (MAML-style fast weights: a Python attribute on a Parameter, which
MindSpore 2.10's graph refuses); real torch and MindSpore, migrate's own proof."""
from __future__ import annotations

import json

FILES = {
    "fast/layers.py": '''import torch
import torch.nn as nn
import torch.nn.functional as F


class FastLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int):
        super().__init__(in_features, out_features)
        self.weight.fast = None
        self.bias.fast = None

    def forward(self, x):
        if self.weight.fast is not None:
            return F.linear(x, self.weight.fast, self.bias.fast)
        return F.linear(x, self.weight, self.bias)


class Plain(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.fc = nn.Linear(features, features)

    def forward(self, x):
        return torch.tanh(self.fc(x))
''',
    "fast/__init__.py": "",
}


def test_a_graph_failure_names_the_conversions_mp107(tmp_path):
    from mindport.migrate import migrate

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    report = migrate(src, out, jobs=1, export=False, observe=False)
    models = {m["class"]: m for m in json.loads((out / "mindport-report.json").read_text())["models"]}
    fast, plain = models["fast/layers.py:FastLinear"], models["fast/layers.py:Plain"]
    assert plain["status"] == "proven" and "graph_warnings" not in plain, plain
    assert fast["status"] == "ms-failed" and fast["error"].startswith("GRAPH_MODE failed"), fast
    said = [d for f in report.conversion.files if f.path == "fast/layers.py" for d in f.diagnostics
            if d.code == "MP107"]
    assert said and fast["graph_warnings"] == [f"fast/layers.py:{d.line}: {d.message}" for d in said]
    assert f"the conversion warned MP107 at fast/layers.py:{said[0].line}" in fast["error"]
