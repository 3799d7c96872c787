"""Run-time decisions a recorded torch run observed (``mindport.observed``: ``Facts.decided_sites``), consumed by
``convert --facts`` only where every observed call decided the same way:

* a reduction's extent held elements (``x.mean(dim)``, ``torch.sum``): MindSpore's own ``ops.mean``/``ops.sum``
  where the runtime's exists only for torch's value over an empty extent;
* a softmax input had no row of all -inf along its dim: ``ops.softmax`` where the runtime's guards MindSpore's CPU
  kernel;
* a ``torch.tensor`` of data that is not a literal held no tensor: ``mindspore.Tensor`` where the runtime's reads
  tensors inside a list as torch does;
* a ``F.pad`` whose amounts are not literals had none negative: ``ops.pad`` where the runtime's crops a negative one;
* every call of a layer torch also takes unbatched (Conv2d, Conv1d, ...) had a batch: no ``import
  mindport.runtime.unbatched`` for a file whose every such build was observed so.

Each is recorded from a real torch run, converted with the facts, run on MindSpore (PyNative and GRAPH_MODE) and
compared with torch's output; a site the run never reached (or reached with an empty extent, a masked row, an
unbatched input) keeps the runtime's helper. The slice: one module that meets every decision once (the measurement
over the trials corpus is benchmarks/runtime_share.py --facts)."""
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


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 4, 1)])
            self.fc = nn.Linear(4, 4)

        def forward(self, x, scores):
            for conv in self.convs:
                x = conv(x)
            pooled = x.mean(dim=(2, 3))
            total = torch.sum(x, dim=1)
            attn = F.softmax(scores, dim=-1)
            sizes = torch.tensor([float(x.shape[-1]), 0.5])
            x = F.pad(x, (x.shape[0] - 1, 0))
            if x.shape[0] > 100:
                pooled = pooled + x.sum(1).mean()
            return self.fc(pooled) + attn.sum(-1, keepdim=True), total * sizes[1]
    """)

# a file whose Conv1d the run calls once on an unbatched input: it keeps ``import mindport.runtime.unbatched``
OPEN = textwrap.dedent("""\
    import torch.nn as nn


    class Open(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 2, 1)

        def forward(self, x):
            return self.conv(x), self.conv(x[0])
    """)

# a file whose softmax sees a row of all -inf and whose mean an empty extent: the helpers stay
MASKED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Masked(nn.Module):
        def forward(self, x, scores):
            pair = torch.tensor([scores[0, 0], scores[0, 1]])
            x = F.pad(x, (1, x.shape[0] - 3))
            return F.softmax(scores, dim=-1), x[:, :0].mean(-1), torch.sum(x[:, :0], 1), pair
    """)


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3, 5, 5)).astype(np.float32), rng.standard_normal((2, 6)).astype(np.float32)]


def test_observed_decisions_are_native_and_the_rest_keep_the_helpers(tmp_path):
    import torch

    (tmp_path / "net.py").write_text(SOURCE)
    (tmp_path / "open_net.py").write_text(OPEN)
    (tmp_path / "masked.py").write_text(MASKED)
    net, open_net = load_file(tmp_path / "net.py", "decided_net"), load_file(tmp_path / "open_net.py", "decided_open")
    masked = load_file(tmp_path / "masked.py", "decided_masked")
    x, scores = (torch.from_numpy(a) for a in _inputs())
    with record(tmp_path) as facts, torch.no_grad():
        net.Net()(x, scores)
        open_net.Open()(torch.from_numpy(OPEN_INPUT))
        masked.Masked()(*(torch.from_numpy(a) for a in MASKED_INPUTS))
    facts.save(tmp_path / "facts.json")
    facts = load(tmp_path / "facts.json")
    decided = facts.decided_sites("net.py")
    assert {fact for *_, fact in decided} == {"nonempty:mean", "nonempty:sum", "unmasked:softmax", "plain:tensor",
                                              "nonnegative:pad",
                                              "built:Conv2d:batched", "input:Net:4"}  # the class's input's rank
    assert [fact for *_, fact in facts.decided_sites("open_net.py")] == ["input:Open:3", "built:Conv1d:open"]

    plain = convert_source(SOURCE, "net.py").code
    result = convert_source(SOURCE, "net.py", decided_sites=decided)
    observed = result.code
    # the report says which sites rest on an observation: MP108, info (the conversion is not partial for it)
    assert {d.severity for d in result.diagnostics} == {"info"} and {d.code for d in result.diagnostics} == {"MP108"}
    assert {d.message.split("(")[1].split(")")[0] for d in result.diagnostics} == {
        "nonempty:mean", "nonempty:sum", "unmasked:softmax", "plain:tensor", "nonnegative:pad"}
    assert "mp_math.mean(x, dim=(2, 3))" in plain and "mp_F.softmax(scores" in plain  # without the facts
    assert "ops.mean(x, axis=(2, 3))" in observed
    assert "ops.sum(x, dim=1)" in observed
    assert "ops.softmax(scores, axis=-1)" in observed
    assert "mp_F.pad(x, (x.shape[0] - 1, 0))" in plain and "ops.pad(x, (x.shape[0] - 1, 0))" in observed
    assert "mp_tensor.tensor([float(x.shape[-1]), 0.5])" in plain and "ms.Tensor([float(x.shape[-1]), 0.5])" in observed
    assert "mp_math.mean(mp_math.sum(x, dim=1))" in observed  # never run: the helpers stay
    # the only runtime sites left are in the branch never taken: drop it and the port imports no mindport
    reached = SOURCE.replace("        if x.shape[0] > 100:\n            pooled = pooled + x.sum(1).mean()\n", "")
    assert reached != SOURCE
    reached_facts = _recorded_alone(tmp_path, reached)
    native_result = convert_source(reached, "net.py", decided_sites=reached_facts.decided_sites("net.py"))
    native = native_result.code
    assert "mindport" not in native, native
    assert sorted((d.line, d.message.split("(")[1].split(")")[0]) for d in native_result.diagnostics
                  if "built:" in d.message) == [(9, "built:Conv2d:batched"), (9, "built:Conv2d:batched")]
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, observed, "Net", _inputs(), tmp_path, f"decided_{mode}", mode,
                                    rtol=1e-5, atol=1e-5)
        assert_port_matches_in_mode(reached, native, "Net", _inputs(), tmp_path, f"native_{mode}", mode,
                                    rtol=1e-5, atol=1e-5)

    kept = convert_source(OPEN, "open_net.py", decided_sites=facts.decided_sites("open_net.py")).code
    assert "import mindport.runtime.unbatched" in kept  # one call had no batch
    masked_code = convert_source(MASKED, "masked.py", decided_sites=facts.decided_sites("masked.py")).code
    assert "mp_F.softmax(scores" in masked_code and "mp_math.mean(" in masked_code and "mp_math.sum(" in masked_code
    assert "mp_tensor.tensor([" in masked_code  # the data held tensors
    assert "mp_F.pad(x, (1, x.shape[0] - 3))" in masked_code  # a negative amount: cropped
    assert_port_matches_in_mode(OPEN, kept, "Open", [OPEN_INPUT], tmp_path, "open", "pynative")
    assert_port_matches_in_mode(MASKED, masked_code, "Masked", MASKED_INPUTS, tmp_path, "masked", "pynative")


OPEN_INPUT = np.random.default_rng(1).standard_normal((2, 2, 3)).astype(np.float32)
MASKED_INPUTS = [np.ones((2, 3), np.float32), np.array([[0.0, -np.inf], [-np.inf, -np.inf]], np.float32)]


def _recorded_alone(tmp_path, source):
    import torch

    (tmp_path / "reached" / "net.py").parent.mkdir(exist_ok=True)
    (tmp_path / "reached" / "net.py").write_text(source)
    module = load_file(tmp_path / "reached" / "net.py", "decided_reached")
    x, scores = (torch.from_numpy(a) for a in _inputs())
    with record(tmp_path / "reached") as facts, torch.no_grad():
        module.Net()(x, scores)
    return facts
