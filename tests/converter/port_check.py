"""One check the converter tests share: build a model from torch source and from its conversion, move the weights
with mindport.transfer_weights, run the same input through both and compare."""
from __future__ import annotations

import numpy as np

from mindport import transfer_weights
from tests.source_module import load_file


def load_module(code, path, name):
    path.write_text(code)
    return load_file(path, name)


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
        want = torch_net(torch.from_numpy(x.copy())).numpy()  # a forward may write its input
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=rtol, atol=atol)
    return report


def assert_port_matches_in_mode(source, code, cls, inputs, tmp_path, name, mode, rtol=1e-5, atol=1e-6):
    """As :func:`assert_port_matches`, with the MindSpore side run in ``mode`` ("pynative" or "graph": the Cell
    compiled as GRAPH_MODE compiles it), on the given input arrays, every output compared (a tuple or one tensor)."""
    import mindspore as ms
    import torch

    torch.manual_seed(0)
    torch_net = getattr(load_module(source, tmp_path / f"t_{name}.py", f"t_{name}"), cls)().eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_{name}_{mode}.py", f"m_{name}_{mode}"), cls)()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    with torch.no_grad():
        want = torch_net(*(torch.from_numpy(x.copy()) for x in inputs))  # a forward may write its input
    got = run_in_mode(ms_net, [ms.Tensor(x) for x in inputs], mode)
    want = [t.numpy() for t in (want if isinstance(want, (tuple, list)) else [want])]
    got = [t.asnumpy() for t in (got if isinstance(got, (tuple, list)) else [got])]
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def run_in_mode(model, inputs, mode):
    """``model(*inputs)`` with MindSpore in ``mode`` ("graph": GRAPH_MODE, else PyNative), PyNative again after."""
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        return model(*inputs)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def torch_and_converted(source, name, tmp_path, monkeypatch):
    """The namespaces of ``source`` run as torch and of its conversion imported as the module ``<name>_ms`` (a
    module of its own, which GRAPH_MODE's parser reads): (torch namespace, MindSpore namespace). The conversion must
    have no diagnostic."""
    import importlib

    from mindport import convert_source

    result = convert_source(source, f"{name}.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    exec(compile(source, f"{name}_torch.py", "exec"), t_ns)  # noqa: S102 - the test's own program
    (tmp_path / f"{name}_ms.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    return t_ns, vars(importlib.import_module(f"{name}_ms"))


def build_layer_pair(call, params=""):
    """``torch.nn.<call>`` (``"Conv2d(4, 3, k)"``) built by a ``build(<params>)`` function in torch and in its
    conversion (no diagnostic), the torch weights moved onto the MindSpore layer: (torch layer, MindSpore layer, the
    converted source)."""
    import torch

    from mindport import convert_source

    source = f"import torch\n\n\ndef build({params}):\n    return torch.nn.{call}\n"
    result = convert_source(source, f"<{call}>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), t_ns)  # noqa: S102 - our own snippets
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    torch.manual_seed(0)
    t_layer, m_layer = t_ns["build"](), m_ns["build"]()
    transfer_weights(t_layer.state_dict(), m_layer)
    return t_layer, m_layer, result.code
