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
    # the time limit is what stopped it, and says so; no layer is blamed for a process the limit killed (before:
    # "the MindSpore Cell raised (own init): the MindSpore process stopped (exit code -9)", with the layer it was in
    # as the first divergent one: a 20.6 M-parameter DRN read as a crash inside its first convolution)
    assert models[0]["error"].startswith("over 20 s (stopped)"), models
    assert not models[0].get("first_divergent"), models
    cached = json.loads((out / CACHE_NAME).read_text())["models"]
    assert cached == {}, cached


def test_a_changed_mindport_proves_again(tmp_path):
    """The cache key holds a digest of mindport's own code: a copy of mindport with one line of its builder changed
    gives another digest (a fix between two runs proved again, where the old answers were read back before)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import mindport

    copy = tmp_path / "copy"
    shutil.copytree(Path(mindport.__file__).parent, copy / "mindport",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # -S, run in tmp_path: neither an editable install of mindport nor the checkout is imported instead of the copy
    code = "from mindport.discovery.prove import _own_code; print(_own_code())"

    def digest():
        out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(copy)}, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    first, again = digest(), digest()
    build = copy / "mindport" / "discovery" / "build.py"
    build.write_text(build.read_text(encoding="utf-8") + "\n# a fix\n", encoding="utf-8")
    assert first == again and len(first) == 16
    assert digest() != first
