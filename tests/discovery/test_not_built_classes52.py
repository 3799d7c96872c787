"""Failure classes of the sweep met classing batches 19-23's not-built models (built52): a guessed number measured
with ``len`` (PCT_Pytorch's PointnetFPModule: "object of type 'int' has no len()") is a number where a list was
needed, not "raised while building (TypeError)"; a stand-in module called while building (Graph-Transformer's
SampledSoftmax: "'_StubModule' object is not callable") is a stub used, not a TypeError of the model."""
from __future__ import annotations

from tests.discovery.test_sweep_fixes4 import _sweep


def test_a_number_measured_and_a_stub_called_while_building_have_their_classes():
    sweep = _sweep()
    entry = {"status": "not-built", "reason": "small values (mlp=16): TypeError: object of type 'int' has no len() "
                                              "(at pointnet2_modules.py:11)"}
    assert sweep.failure_class(entry) == "ctor: a guessed number where an object, list or mapping was needed"
    entry["reason"] = ("repository call site (ntokens=100, nsampled=512, nhid=4, device='cpu'): TypeError: "
                       "'_StubModule' object is not callable (at sampled_softmax.py:20)")
    assert sweep.failure_class(entry) == "stubbed module used while building"
