"""torch state_dict keys reach MindSpore parameters whatever path leads to the layer:

* a user class derived from a mapped layer (``class GroupNorm32(nn.GroupNorm)``, common in diffusion UNets) keeps
  the base layer's parameters, so its keys go through the base class's weight rule (weight -> gamma, running_mean
  -> moving_mean ...), at any depth of subclassing;
* a sub-module held under two attributes (``self.net`` and ``self.updater.instance``): torch's state_dict lists its
  tensors under both paths, MindSpore's ``cells_and_names`` only under the first; both paths fill the one Parameter."""
from __future__ import annotations

import numpy as np


def _pair():
    import mindspore as ms
    import torch

    class TorchNorm(torch.nn.GroupNorm):
        pass

    class TorchNormDeeper(TorchNorm):
        pass

    class TorchBatchNorm(torch.nn.BatchNorm2d):
        pass

    class MsNorm(ms.nn.GroupNorm):
        pass

    class MsNormDeeper(MsNorm):
        pass

    class MsBatchNorm(ms.nn.BatchNorm2d):
        pass

    torch.manual_seed(0)
    t = torch.nn.Sequential(TorchNorm(2, 4), TorchNormDeeper(4, 4), TorchBatchNorm(4))
    m = ms.nn.SequentialCell(MsNorm(2, 4), MsNormDeeper(4, 4), MsBatchNorm(4))
    with torch.no_grad():
        for p in t.parameters():
            p.uniform_(0.5, 1.5)
        t[2].running_mean.uniform_(-1, 1)
        t[2].running_var.uniform_(0.5, 2)
    return t.eval(), m.set_train(False)


def test_subclass_of_a_mapped_layer_takes_its_weights():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    t, m = _pair()
    report = transfer_weights(t.state_dict(), m)
    assert report.ok
    assert report.mapping["0.weight"].endswith("gamma") and report.mapping["1.bias"].endswith("beta")
    assert report.mapping["2.running_mean"].endswith("moving_mean")
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype(np.float32)
    with torch.no_grad():
        want = t(torch.tensor(x)).numpy()
    np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_a_module_held_twice_is_reached_by_both_paths():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    class TorchHolder(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.instance = inner

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
            self.updater = TorchHolder(self.net)

        def forward(self, x):
            return self.net(x)

    class MsHolder(ms.nn.Cell):
        def __init__(self, inner):
            super().__init__()
            self.instance = inner

    class MsNet(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = ms.nn.SequentialCell(ms.nn.Dense(3, 4), ms.nn.LayerNorm((4,), epsilon=1e-5))
            self.updater = MsHolder(self.net)

        def construct(self, x):
            return self.net(x)

    torch.manual_seed(0)
    t = TorchNet()
    state = t.state_dict()
    assert "updater.instance.1.weight" in state and "net.1.weight" in state
    report = transfer_weights(state, MsNet())
    assert report.ok and not report.unexpected and not report.missing
    assert report.mapping["updater.instance.1.weight"] == report.mapping["net.1.weight"]


def test_a_reserved_attribute_name_is_found_under_its_cell_name():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import ms_attribute_name, transfer_weights

    assert ms_attribute_name("cells") == "cells_" and ms_attribute_name("blocks") == "blocks"

    class TorchStack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = torch.nn.ModuleList([torch.nn.Linear(3, 3), torch.nn.Linear(3, 2)])

    class MsStack(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            setattr(self, ms_attribute_name("cells"), ms.nn.CellList([ms.nn.Dense(3, 3), ms.nn.Dense(3, 2)]))

    report = transfer_weights(TorchStack().state_dict(), MsStack())
    assert report.ok and report.mapping["cells.1.weight"] == "cells_.1.weight"
