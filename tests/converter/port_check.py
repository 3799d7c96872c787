"""One check the converter tests share: build a model from torch source and from its conversion, move the weights
with mindport.transfer_weights, run the same input through both and compare."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np

from mindport import transfer_weights


def load_module(code, path, name):
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # GRAPH_MODE's parser imports the module of a Cell by name
    spec.loader.exec_module(module)
    return module


def assert_port_matches(source, code, cls, shape, tmp_path, name, atol, rtol=1e-5, args=()):
    """Build ``cls(*args)`` from the torch source and from its conversion, move the weights, compare on one input."""
    import mindspore as ms
    import torch

    torch_net = getattr(load_module(source, tmp_path / f"t_{name}.py", f"t_{name}"), cls)(*args).eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_{name}.py", f"m_{name}"), cls)(*args)
    ms_net.set_train(False)
    report = transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=rtol, atol=atol)
    return report
