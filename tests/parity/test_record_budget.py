"""The localisation keeps each layer's inputs and outputs within a budget (hooks.RECORD_BYTES): past it, a layer's
tensors are not copied and it is "not compared", where a deep CNN at a real input size kept several times its
activations (resnet101_atrous: 8.6 GB in the MindSpore side, stopped by the OOM killer). The hooks run here as they
run in each side; torch on one side and MindSpore on the other, through the same records."""
from __future__ import annotations

import numpy as np
import torch

from mindport.validators.parity import hooks
from mindport.validators.parity.localize import localize_layers


def _torch_records(x):
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(6)])
    records = []
    with torch.no_grad(), hooks.torch_hooks(net, records):
        net(x)
    return hooks.finish_records(records, lambda layer: {}, "forward"), net


def _ms_records(net, x):
    import mindspore as ms
    from mindspore import nn

    cell = nn.SequentialCell([nn.Dense(256, 256) for _ in range(6)])
    for dense, linear in zip(cell, net):
        dense.weight.set_data(ms.Tensor(linear.weight.detach().numpy()))
        dense.bias.set_data(ms.Tensor(linear.bias.detach().numpy()))
    cell.set_train(False)
    records = []
    with hooks.ms_hooks(cell, records):
        cell(ms.Tensor(x.numpy()))
    return hooks.finish_records(records, lambda layer: {}, "construct")


def test_layers_past_the_budget_are_not_copied_and_not_compared(monkeypatch):
    x = torch.randn(64, 256)  # 64 KiB per layer input or output
    layer_bytes = 64 * 256 * 4
    # the container's input, then each Linear's input and output: three Linear layers fit in 7, the fourth's input
    # is copied (7 is not past the budget) and its output is not
    monkeypatch.setattr(hooks, "RECORD_BYTES", 7 * layer_bytes)
    ref, net = _torch_records(x)
    ms_records = _ms_records(net, x)
    kept = [r["path"] for r in ref if not r.get("unrecorded")]
    assert kept == ["0", "1", "2"], [(r["path"], r.get("unrecorded")) for r in ref]
    assert all(not r["leaves"] and not r["inputs"] for r in ref if r.get("unrecorded"))
    assert sum(a.nbytes for r in ref for a in r["leaves"] + r["inputs"]) <= 7 * layer_bytes
    layers = localize_layers(ref, ms_records, 1e-5, 1e-5)
    by_path = {lr.path: lr for lr in layers}
    assert [by_path[p].status for p in ("0", "1", "2")] == ["match"] * 3
    assert by_path["4"].status == "not_compared" and not by_path["4"].diverged and by_path["4"].role != "cause"
    assert by_path[""].status == "not_compared"  # the container: its output came past the budget


def test_within_the_budget_every_layer_is_compared():
    x = torch.randn(4, 256)
    ref, net = _torch_records(x)
    layers = localize_layers(ref, _ms_records(net, x), 1e-5, 1e-5)
    assert [lr.status for lr in layers] == ["match"] * 7
    assert not any(r.get("unrecorded") for r in ref)
