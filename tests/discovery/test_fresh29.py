"""First contact on fresh repositories (session 29: `mindport migrate REPO -o REPO_ms` with no model settings),
discovery's inputs and the proof's verdicts, one class per test:

1. A block whose forward takes two or more optional tensors that its container first passes as None
   (JiaRenChang/PSMNet's ``hourglass.forward(x, presqu, postsqu)``, called ``self.dres2(cost0, None, None)``): the
   inputs varied one argument at a time, so one of the two always got a tensor of the first input's shape, added to
   a tensor of another resolution ("The size of tensor a (16) must match the size of tensor b (32)"). Every optional
   argument at None at once is now tried too (``build._all_none``).

The model cases share one repository proven once (real torch, real MindSpore, through ``_prove.prove_files`` as
``migrate`` runs them).
"""
from __future__ import annotations

import pytest

from mindport.discovery.build import _all_none

from _prove import prove_files


def test_all_none_valid_and_invalid():
    spec = "2x8x16x16:float32"
    # two optional arguments: both at None once
    assert _all_none(spec, [[spec, "value:None"], [spec, "value:None"]]) == [[spec, "value:None", "value:None"]]
    # a flag beside them keeps its first form
    assert _all_none(spec, [["value:False", "value:True"], [spec, "value:None"], [spec, "value:None"]]) == \
        [[spec, "value:False", "value:None", "value:None"]]
    # one optional argument: the one-at-a-time variation already tries it
    assert _all_none(spec, [[spec, "value:None"], [spec]]) == []
    assert _all_none(spec, [[spec], [spec]]) == []


_HOURGLASS = {
    "hg.py": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Hourglass(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
                self.mid = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
                self.up = nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1)

            def forward(self, x, presqu, postsqu):
                pre = self.down(x)
                if postsqu is not None:
                    pre = F.relu(pre + postsqu)
                else:
                    pre = F.relu(pre)
                out = self.mid(pre)
                if presqu is not None:
                    post = F.relu(out + presqu)
                else:
                    post = F.relu(out + pre)
                return self.up(post), pre, post
        """,
}


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """One repository holding the model cases, proven once (one builder process, one proof per model)."""
    files = {**_HOURGLASS, **_CONSTANT}
    return prove_files(tmp_path_factory.mktemp("fresh29"), files, "*.py:[HC]*")


def test_optional_tensors_all_none_are_tried(proven):
    """On main: "not-built: small values (c=16): built; no input ran: 2x16x32x32 2x16x32x32 2x16x32x32: The size of
    tensor a (16) must match the size of tensor b (32) ...; 2x16x32x32 value:None 2x16x32x32: ...; 2x16x32x32
    2x16x32x32 value:None: ..."."""
    m = proven["hg.py:Hourglass"]
    assert m["status"] == "proven", m.get("reason") or m.get("error")
    assert m["inputs"][1:] == ["value:None", "value:None"]


def test_no_verdict_statuses_valid_and_invalid():
    """2. A proof that reached no verdict on the port said "ms-failed" or "diverged" (fresh28: centernet-pytorch at
    load 25 had 3 of 6 models "failed in MindSpore" from a time limit or SIGKILL; SparseTSF's parameterless
    Arima/SArima/GBRT "diverged" on a vacuous comparison; here PSMNet's feature_extraction was "ms-failed: parity at
    the random draw: over 180 s (stopped)" at load 22, and its hand-made proof passes). Now ``stopped`` and
    ``inconclusive``; a segfault, a raise, a difference keep their verdict."""
    from mindport.discovery.prove import _no_verdict, summarize, summary_line

    def status(status, error):
        return _no_verdict({"status": status, "error": error})["status"]

    # VALID: reclassified
    assert status("ms-failed", "parity at the random draw: over 180 s (stopped)") == "stopped"
    assert status("ms-failed", "GRAPH_MODE failed: the MindSpore process stopped (exit code -9): (empty log)") == \
        "stopped"
    assert status("diverged", "vacuous comparison (random draw): every output is constant") == "inconclusive"
    # INVALID: verdicts kept
    assert status("ms-failed", "the MindSpore process stopped (exit code -11): Segmentation fault") == "ms-failed"
    assert status("ms-failed", "the MindSpore Cell raised (own init): ValueError: ...") == "ms-failed"
    assert status("diverged", "outputs differ (own init): output: max rel 0.3") == "diverged"
    assert status("proven", "") == "proven"
    models = [{"status": s} for s in ("proven", "stopped", "inconclusive", "ms-failed", "not-built")]
    summary = summarize(models, 5)
    assert (summary["built"], summary["stopped"], summary["inconclusive"], summary["ms_failed"]) == (4, 1, 1, 1)
    assert summary_line(summary) == ("models: 5 discovered, 5 tried, 4 built, 1 proven, 0 diverged, 1 inconclusive, "
                                     "1 failed in MindSpore, 1 stopped by a time or memory limit, 1 not built")


_CONSTANT = {
    "const.py": """
        import torch
        import torch.nn as nn

        class ConstantForecast(nn.Module):
            # a parameterless baseline whose output does not depend on its input (SparseTSF's Arima stand-in)
            def __init__(self, horizon=4):
                super().__init__()
                self.horizon = horizon

            def forward(self, x):
                return torch.zeros(x.shape[0], self.horizon) + 2.0
        """,
}


def test_a_constant_output_without_parameters_is_inconclusive(proven):
    """On main: "diverged" with the error "vacuous comparison (own init): ...", counted as diverged."""
    m = proven["const.py:ConstantForecast"]
    assert m["status"] == "inconclusive", m
    assert m["error"].startswith("vacuous comparison"), m
