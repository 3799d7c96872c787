"""A torch layer class used as a value becomes a class of the file over MindSpore's (factories.value_class_def); its
``__new__(cls, *args, **kwargs)`` made ``inspect.signature`` of it ``(*args, **kwargs)``. mit-han-lab/efficientvit
builds its norms from a registry through ``build_kwargs_from_config(kwargs, norm_cls)``, which keeps the keys the
class's signature names: none were kept, and every backbone failed to build ("make_batchnorm2d() missing 1 required
positional argument: 'num_features'"). The value class's signature is torch's; a class derived from it keeps its own."""
from __future__ import annotations

import inspect
import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import inspect

    import torch
    import torch.nn as nn

    NORMS = {"bn2d": nn.BatchNorm2d, "ln": nn.LayerNorm}


    def from_config(config, target):
        keys = list(inspect.signature(target).parameters)
        return {k: v for k, v in config.items() if k in keys}


    def build_norm(name, num_features, **kwargs):
        if name == "ln":
            kwargs["normalized_shape"] = num_features
        else:
            kwargs["num_features"] = num_features
        cls = NORMS[name]
        return cls(**from_config(kwargs, cls))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = build_norm("bn2d", 4, eps=0.5, momentum=0.3, act="relu")
            self.ln = build_norm("ln", 6, eps=0.25)

        def forward(self, x):
            return self.ln(self.bn(self.conv(x)))
""")


def test_a_value_class_has_torchs_signature_and_a_registry_built_norm_matches(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = convert_source(SOURCE).code
    module = load_module(code, tmp_path / "m_sig.py", "m_sig")
    assert list(inspect.signature(module.NORMS["bn2d"]).parameters)[:3] == ["num_features", "eps", "momentum"]
    assert list(inspect.signature(module.NORMS["ln"]).parameters)[:2] == ["normalized_shape", "eps"]
    torch.manual_seed(0)
    torch_net = load_module(SOURCE, tmp_path / "t_sig.py", "t_sig").Net().eval()
    with torch.no_grad():  # statistics far from the defaults, so eps and the statistics both count
        torch_net.bn.running_mean.uniform_(-1, 1)
        torch_net.bn.running_var.uniform_(0.1, 2)
        torch_net.bn.weight.uniform_(0.5, 2)
        torch_net.ln.weight.uniform_(0.5, 2)
    ms_net = module.Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_a_class_derived_from_a_value_class_keeps_its_own_signature():
    code = convert_source(textwrap.dedent("""\
        import torch.nn as nn

        NORM = nn.LayerNorm


        class LayerNorm2d(nn.LayerNorm):
            def __init__(self, dim, eps=1e-6):
                super().__init__(dim, eps=eps)
    """)).code
    ns: dict = {}
    exec(compile(code, "derived.py", "exec"), ns)
    assert list(inspect.signature(ns["LayerNorm2d"]).parameters) == ["dim", "eps"]
