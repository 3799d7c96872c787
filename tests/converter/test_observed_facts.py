"""Facts from an observed torch run (``mindport observe`` / ``mindport.observed.record``, ``convert --facts``): an
int-to-float guard (``mp_math.sigmoid``) on an input the code cannot type (a function's parameter) becomes MindSpore's
own op where every input the recorded run saw there was floating point; a site that saw an integer, or that the run
never reached, keeps the guard. Proven against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from mindport import convert_source
from mindport.cli import main
from mindport.observed import load, record
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def swish(x):
        return x * torch.sigmoid(x)


    def grow(t):
        return torch.exp(t)


    def unused(t):
        return t.sigmoid()


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return swish(self.fc(x)) + grow(torch.arange(4)) + self.fc(x).cos()


    __all__ = ["swish", "Net"]  # other files may call swish with anything: no static fact (function_caller_floats)
    """)


def _recorded(tmp_path):
    import torch

    (tmp_path / "net.py").write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("observed_net", tmp_path / "net.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["observed_net"] = module
    spec.loader.exec_module(module)
    with record(tmp_path) as facts, torch.no_grad():
        module.Net()(torch.randn(2, 4))
    facts.save(tmp_path / "facts.json")
    return load(tmp_path / "facts.json")


def test_observed_float_sites_are_native_and_the_others_keep_the_guard(tmp_path):
    facts = _recorded(tmp_path)
    sites = facts.float_sites("net.py")
    assert (6, 15, 6, 31, "sigmoid") in sites  # torch.sigmoid(x) in swish: a float32 input
    assert not any(api == "exp" for *_, api in sites)  # grow got an int64 tensor
    plain = convert_source(SOURCE, "net.py").code
    observed = convert_source(SOURCE, "net.py", float_sites=sites).code
    assert "x * mp_math.sigmoid(x)" in plain  # without the facts: x may be anything
    assert "x * ops.sigmoid(x)" in observed
    assert "return mp_math.exp(t)" in observed  # an integer was seen there
    assert "return mp_math.sigmoid(t)" in observed  # never run: no fact
    inputs = [np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)]
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, observed, "Net", inputs, tmp_path, f"observed_{mode}", mode,
                                    rtol=1e-5, atol=1e-5)


def test_observe_and_convert_with_facts_on_the_command_line(tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    (src / "net.py").write_text(SOURCE)
    facts = tmp_path / "facts.json"
    run = CliRunner().invoke(main, ["observe", str(src), "--model", "net.py:Net", "--input", "2x4:float32",
                                    "-o", str(facts)])
    assert run.exit_code == 0, run.output
    assert "net.py" in json.loads(facts.read_text())["files"]
    out = tmp_path / "out"
    run = CliRunner().invoke(main, ["convert", str(src), "-o", str(out), "--facts", str(facts), "-j", "1"])
    assert run.exit_code == 0, run.output
    code = (out / "net.py").read_text()
    assert "x * ops.sigmoid(x)" in code and "return mp_math.exp(t)" in code


@pytest.mark.parametrize("text", ["{}", "not json", json.dumps({"mindport_facts": 1, "files": {"a.py": {"7": {}}}})])
def test_a_file_that_is_not_facts_is_refused(tmp_path, text):
    (tmp_path / "net.py").write_text(SOURCE)
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(ValueError, match="facts"):
        load(bad)
    run = CliRunner().invoke(main, ["convert", str(tmp_path / "net.py"), "-o", str(tmp_path / "o.py"),
                                    "--facts", str(bad)])
    assert run.exit_code == 2 and "facts" in run.output
    assert not (tmp_path / "o.py").exists()
