"""mindport.runtime.layers.add_module: a Sequential filled by add_module runs its layers in order under their own
names (MindSpore's insert_child_to_cell alone leaves SequentialCell's run list empty: the sequence would be the
identity), and the parameters are named like torch's."""
from __future__ import annotations

import numpy as np


def test_sequential_filled_by_name_runs_like_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights
    from mindport.runtime.layers import add_module

    t = torch.nn.Sequential()
    t.add_module("conv", torch.nn.Conv2d(3, 5, 3, bias=False))
    t.add_module("relu", torch.nn.ReLU())
    t.add_module("bn", torch.nn.BatchNorm2d(5))
    m = ms.nn.SequentialCell()
    add_module(m, "conv", ms.nn.Conv2d(3, 5, 3, pad_mode="valid", has_bias=False))
    add_module(m, "relu", ms.nn.ReLU())
    add_module(m, "bn", ms.nn.BatchNorm2d(5))
    t.eval()
    m.set_train(False)
    report = transfer_weights(t.state_dict(), m)
    assert report.ok and report.mapping["conv.weight"].endswith("conv.weight")
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with torch.no_grad():
        want = t(torch.tensor(x)).numpy()
    got = m(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (2, 5, 4, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_add_module_on_a_plain_cell_registers_the_child():
    import mindspore as ms

    from mindport.runtime.layers import add_module

    holder = ms.nn.Cell()
    add_module(holder, "proj", ms.nn.Dense(2, 3))
    assert [name for name, _ in holder.parameters_and_names()] == ["proj.weight", "proj.bias"]
