"""proof56: one torch Parameter under two keys of the state (awd-lstm-lm's WeightDrop: ``F.dropout(raw,
training=False)`` is the raw Parameter itself, set back under the dropped weight's name, so after an eval forward
the module registers it twice). The proof's transfer drops the second key (it holds exactly a placed key's values);
before, "torch tensors unmatched: lin.weight" stopped the model."""
from __future__ import annotations

import numpy as np

RAW = '''
import torch.nn as nn
import torch.nn.functional as F


class RawLinear(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        w = self.lin.weight
        del self.lin._parameters['weight']
        self.lin.register_parameter('weight_raw', nn.Parameter(w.data))

    def forward(self, x):
        w = F.dropout(self.lin.weight_raw, p=0.5, training=self.training)
        setattr(self.lin, 'weight', w)
        return self.lin(x)


def make():
    return RawLinear(4)
'''


def test_a_parameter_registered_under_a_second_name_is_proven(tmp_path):
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "raw.py").write_text(RAW)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="raw.py:RawLinear", cache=False)
    (m,) = models
    assert m["status"] == "proven", m


def test_only_a_key_of_a_placed_keys_values_is_an_alias():
    from mindport.errors import Diagnostic
    from mindport.migrator.weights.report import TransferReport
    from mindport.validators.parity.side_mindspore import _drop_aliases

    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    state = {"a.weight": w, "b.weight": w.copy(), "c.weight": w + 1, "d.bias": np.zeros(1, np.float32),
             "e.bias": np.zeros(1, np.float32)}
    rep = TransferReport(mapping={"a.weight": "a.weight", "d.bias": "d.bias"},
                         unexpected=["b.weight", "c.weight", "e.bias"],
                         diagnostics=[Diagnostic("MP301", f"torch key {k}", api=k) for k in ("b.weight", "c.weight")])
    _drop_aliases(rep, state)
    assert rep.unexpected == ["c.weight", "e.bias"] and rep.dropped == ["b.weight"]  # a single number proves nothing
    assert [d.api for d in rep.diagnostics if d.code == "MP301"] == ["c.weight"]
    assert not rep.ok
