"""A verdict that a process was stopped (a time limit, the memory limit, the machine's OOM killer under load) says how
busy the machine was, not what the model is: it is reported, and not cached, so a re-run proves the model again
(pbloem/former under load ~34: 'the MindSpore process stopped (exit code -9)' was read back from the cache on every
re-run). The MindSpore side below is slow (the torch side is not), and the proof's time limit stops it."""
from __future__ import annotations

import json
import textwrap

SOURCE = textwrap.dedent("""\
    import time

    import torch.nn as nn


    class Slow(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            if type(self).__mro__[1].__module__.startswith("mindspore"):
                time.sleep(600)  # the MindSpore side only (its Cell base)
            return self.fc(x)
    """)


def test_a_stopped_proof_is_reported_and_not_cached(tmp_path):
    from mindport.discovery.prove import CACHE_NAME, ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "slow.py").write_text(SOURCE)
    convert_path(src, out, jobs=1)
    settings = ProveSettings(proof_seconds=20.0, graph_mode=False)
    models, _ = prove_models(src, out, settings=settings)
    # no verdict on the port: "stopped", not "ms-failed" (session 29: the status says a limit ended the proof)
    assert [m["status"] for m in models] == ["stopped"], models
    assert "stopped" in json.dumps(models), models  # "over 20 s (stopped)" or "process stopped (exit code -9)"
    cached = json.loads((out / CACHE_NAME).read_text())["models"]
    assert cached == {}, cached
