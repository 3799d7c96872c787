"""`mindport mappings export-msprobe`: the YAML files msprobe's PyTorch <-> MindSpore compare takes (-am, -cm, -dm,
-lm), in the formats its docs give (11.accuracy_compare_MindSpore.md, section 4)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from parity_helpers import cli_env, convert_model
from mindport.validators.parity.msprobe import api_mapping

try:
    import yaml
except ImportError:  # not a dependency of mindport: fall back to a structural check of the text
    yaml = None


def _load(path):
    text = path.read_text()
    if yaml is not None:
        return yaml.safe_load(text)
    return _minimal_parse(text)


def _minimal_parse(text: str):
    """Enough YAML for these files: `"key": "value"` mappings, and lists of flat records with int lists."""
    import json

    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if lines == ["{}"]:
        return {}
    if not lines[0].startswith("- "):
        return dict(tuple(json.loads(part) for part in ln.split(": ", 1)) for ln in lines)
    records, key = [], None
    for ln in lines:
        if ln.startswith("- ") and not ln.startswith("  - "):
            records.append({})
            ln = "  " + ln[2:]
        if ln.startswith("  - "):
            records[-1][key].append(int(ln[4:]))
            continue
        key, _, value = ln.strip().partition(":")
        value = value.strip()
        records[-1][key] = [] if value in ("", "[]") else json.loads(value)
    return records


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("msprobe")
    ms_file = convert_model("convnet", out)
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "mappings", "export-msprobe", "-o", "maps",
                          "--model", f"{ms_file.name}:ConvNet", "--ctor", "num_classes=5"], capture_output=True,
                         text=True, env=cli_env(), cwd=out, timeout=300)  # relative paths, as typed
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["convnet_ms.py", "maps"]  # nothing else written here
    return out / "maps", run.stdout


def test_api_mapping_file(exported):
    maps, stdout = exported
    data = _load(maps / "api_mapping.yaml")
    assert isinstance(data, list) and len(data) > 100
    keys = {"ms_api", "pt_api", "ms_args", "pt_args", "ms_outputs", "pt_outputs"}
    assert all(set(item) == keys for item in data)
    # msprobe requires equally long index lists on both sides
    assert all(len(i["ms_args"]) == len(i["pt_args"]) and len(i["ms_outputs"]) == len(i["pt_outputs"]) for i in data)
    pairs = {(i["pt_api"], i["ms_api"]): i for i in data}
    assert pairs[("Functional.linear", "Functional.dense")]["pt_args"] == [0, 1]  # input, weight
    assert pairs[("Torch.cat", "Functional.cat")]["ms_args"] == [0]
    assert ("Functional.relu", "Functional.relu") in pairs and ("Torch.matmul", "Functional.matmul") in pairs
    squeeze = pairs[("Torch.squeeze", "Functional.squeeze")]
    assert squeeze["ms_args"] == squeeze["pt_args"] == [0]  # dim -> axis goes by keyword
    assert ("Torch.mean", "Functional.mean") not in pairs  # mindport's own mean (the empty-extent guard)
    assert ("Functional.softmax", "Functional.softmax") not in pairs  # mindport's own softmax: no MindSpore API
    assert f"api_mapping.yaml ({len(data)} entries)" in stdout


def test_model_mappings(exported):
    maps, _ = exported
    cells = _load(maps / "cell_mapping.yaml")
    # only the layer whose class is named differently; the others msprobe pairs by itself (Cell -> Module)
    assert cells == {"fc.Dense": "fc.Linear"}
    data = _load(maps / "data_mapping.yaml")
    assert data["Cell.bn1.BatchNorm2d.parameters_grad.gamma"] == "Module.bn1.BatchNorm2d.parameters_grad.weight"
    assert data["Cell.ln.LayerNorm.parameters_grad.beta"] == "Module.ln.LayerNorm.parameters_grad.bias"
    assert data["Cell.fc.Dense.forward.0.output.0"] == "Module.fc.Linear.forward.0.output.0"
    assert data["Cell.conv1.Conv2d.backward.0.input.0"] == "Module.conv1.Conv2d.backward.0.input.0"
    assert _load(maps / "layer_mapping.yaml") in ({}, None)
    if yaml is not None:  # the fallback reader agrees with yaml on every file written
        for name in ("api_mapping.yaml", "cell_mapping.yaml", "data_mapping.yaml", "layer_mapping.yaml"):
            text = (maps / name).read_text()
            assert _minimal_parse(text) == yaml.safe_load(text), name


def test_api_mapping_without_a_model_needs_no_framework(tmp_path):
    entries = api_mapping("mint")
    assert entries and all(e["ms_api"].split(".")[0] in ("Functional", "Mint", "MintFunctional", "Tensor")
                           for e in entries)
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "mappings", "export-msprobe", "-o", str(tmp_path / "m")],
                         capture_output=True, text=True, env=cli_env(), timeout=120)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["api_mapping.yaml"]
