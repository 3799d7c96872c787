"""A functional pool MindSpore's op takes only batched (``F.avg_pool2d``, ``F.max_pool2d``, ...:
mindport.mappings.unbatched.FUNCTIONS) converts to mindport.runtime.unbatched's form where the code does not show its
input batched (a module-level function's ``x``, which torch also takes as one (C, H, W) map); a recorded torch run
in which every call there had a batch (``mindport.observed``: the decision ``batched``) makes it MindSpore's own
``ops.NAME`` (``convert --facts``), said with MP108. A call observed unbatched keeps the runtime's form. Recorded from
a real torch run, converted with the facts, compared with torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from mindport.observed import load, record
from port_check import assert_port_matches_in_mode
from tests.source_module import load_file

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def gem(x, p=3.0):
        return F.avg_pool2d(x.clamp(min=1e-6).pow(p), (x.size(-2), x.size(-1))).pow(1.0 / p)


    def mac(x):
        return F.max_pool2d(x, (x.size(-2), x.size(-1)))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())

        def forward(self, x):
            f = self.body(x)
            return torch.cat([gem(f), mac(f)], dim=1).flatten(1)
""")

X = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)


def _facts(tmp_path, inputs):
    import torch

    folder = tmp_path / f"rank{inputs.ndim}"
    folder.mkdir()
    (folder / "net.py").write_text(SOURCE)
    net = load_file(folder / "net.py", f"batched_pools_{inputs.ndim}")
    with record(folder) as facts, torch.no_grad():
        net.Net()(torch.from_numpy(inputs))
    facts.save(folder / "facts.json")
    return load(folder / "facts.json").decided_sites("net.py")


def test_observed_batches_make_the_pools_native(tmp_path):
    plain = convert_source(SOURCE, "net.py").code
    assert "mp_unbatched.avg_pool2d(" in plain and "mp_unbatched.max_pool2d(" in plain, plain
    decided = _facts(tmp_path, X)
    assert {fact for *_, fact in decided} >= {"batched:avg_pool2d", "batched:max_pool2d"}
    result = convert_source(SOURCE, "net.py", decided_sites=decided)
    code = result.code
    assert "ops.avg_pool2d(" in code and "ops.max_pool2d(" in code and "mp_unbatched" not in code, code
    assert {"batched:avg_pool2d", "batched:max_pool2d"} <= {d.message.split("(")[1].split(")")[0]
                                                            for d in result.diagnostics if d.code == "MP108"}
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "Net", [X], tmp_path, f"pools_{mode}", mode, rtol=1e-5, atol=1e-5)


def test_an_unbatched_call_keeps_the_runtime_form(tmp_path):
    decided = _facts(tmp_path, X[0])  # one (C, H, W) image: torch pools it unbatched
    assert not {fact for *_, fact in decided} & {"batched:avg_pool2d", "batched:max_pool2d"}
    code = convert_source(SOURCE, "net.py", decided_sites=decided).code
    assert "mp_unbatched.avg_pool2d(" in code and "mp_unbatched.max_pool2d(" in code, code
    assert_port_matches_in_mode(SOURCE, code, "Net", [X[0]], tmp_path, "pools_unbatched", "pynative",
                                rtol=1e-5, atol=1e-5)
