"""torch.nn.Unfold whose input is a batch in every program torch runs -> a Cell of the file calling ops.unfold
(rules/unfold_layers.py, issue 30: native ports); and the permutation facts of the unbatched handling
(native_facts._permutes).

vit-pytorch's PiT embeds patches with ``nn.Sequential(nn.Unfold(...), Rearrange('b c n -> b n c'), nn.Linear(...))``:
the einops layer raises on anything but three axes, so the Unfold never meets torch's unbatched (C, H, W) input (which
would give two), and MindSpore's own ``ops.unfold`` gives torch's values. On integ13 the port went through
``mindport.runtime.layers.Unfold`` (its only mindport import). Its Pool's depthwise conv sits between
``rearrange(t, 'b (h w) c -> b c h w')`` and ``rearrange(t, 'b c h w -> b (h w) c')``, written out as
``ops.transpose`` with a literal permutation of four axes: that raises on any other rank, as torch does.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mindport import convert_source

ROOT = Path(__file__).resolve().parents[2]
HEAD = "import torch\nimport torch.nn as nn\n"

PATCHES = """
    from einops.layers.torch import Rearrange


    class Net(nn.Module):
        def __init__(self, p=4, dim=48):
            super().__init__()
            self.embed = nn.Sequential(nn.Unfold(kernel_size=p, stride=p // 2), Rearrange('b c n -> b n c'),
                                       nn.Linear(dim, dim))

        def forward(self, x):
            return self.embed(x)
    """

POOL = """
    from einops import rearrange


    class Net(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c), nn.Conv2d(c, 2 * c, 1))

        def forward(self, x):
            h = x.shape[-1]
            tokens = rearrange(x.flatten(2).transpose(1, 2), 'b (h w) c -> b c h w', h=h)
            tokens = self.conv(tokens)
            return rearrange(tokens, 'b c h w -> b (h w) c')
    """

NATIVE = {
    "Unfold then an einops layer taking three axes (PiT)": PATCHES,
    "Unfold with torch's four arguments by position": PATCHES.replace(
        "nn.Unfold(kernel_size=p, stride=p // 2), Rearrange('b c n -> b n c'),\n                                       nn.Linear(dim, dim)",
        "nn.Unfold(p, 1, 0, p // 2), Rearrange('b c n -> b n c'), nn.Linear(dim, dim)"),
    "a conv between two einops patterns of four axes (PiT's Pool)": POOL,
}

KEPT = {
    "the Unfold followed by a Linear": PATCHES.replace(
        "nn.Unfold(kernel_size=p, stride=p // 2), Rearrange('b c n -> b n c'),\n                                       nn.Linear(dim, dim)",
        "nn.Unfold(kernel_size=p, stride=p // 2), nn.Flatten(0, -1)"),
    "a pattern with an ellipsis": PATCHES.replace("'b c n -> b n c'", "'... c n -> ... n c'"),
    "a pattern of two axes (an unbatched output fits it)": PATCHES.replace("'b c n -> b n c'", "'c n -> n c'"),
    "the Sequential indexed": PATCHES.replace("return self.embed(x)", "return self.embed[0](x)"),
    "the Sequential handed on": PATCHES + "\n    def first(net):\n        return net.embed\n",
    "the file's __all__": PATCHES + "\n    __all__ = ['Net']\n",
    "the Sequential in a local name": PATCHES.replace(
        "self.embed = nn.Sequential(", "embed = nn.Sequential(").replace(
        "                                       nn.Linear(dim, dim))",
        "                                       nn.Linear(dim, dim))\n            self.embed = embed"),
}


def _converted(source: str) -> str:
    result = convert_source(HEAD + textwrap.dedent(source), "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in NATIVE.items()])
def test_a_batch_only_unfold_is_native(source):
    code = _converted(source)
    assert "mindport" not in code, code


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in KEPT.items()])
def test_an_unfold_an_unbatched_input_can_reach_keeps_the_runtime_layer(source):
    code = _converted(source)
    assert "mp_nn.Unfold(" in code and "Unfold1" not in code, code


CHILD = r"""
import importlib.util, json, sys
import numpy as np
import torch
import mindspore as ms

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # GRAPH_MODE's parser imports the Cell's module by name
    spec.loader.exec_module(module)
    return module

if sys.argv[3] == "graph":
    ms.set_context(mode=ms.GRAPH_MODE)
t_mod, m_mod = load("torch_model", sys.argv[1]), load("ms_model", sys.argv[2])
from mindport import transfer_weights
loaded = "mindport.runtime.unbatched" in sys.modules
torch.manual_seed(0)
t_net, m_net = t_mod.Net().eval(), m_mod.Net()
m_net.set_train(False)
transfer_weights(t_net.state_dict(), m_net)
out = {"loaded": loaded}
for label, shape in (("batched", (2, 3, 8, 8)), ("unbatched", (3, 8, 8))):
    if label == "unbatched" and sys.argv[3] == "graph":
        continue
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    try:
        with torch.no_grad():
            want = t_net(torch.from_numpy(x)).numpy()
    except Exception as exc:
        want = type(exc).__name__
    try:
        got = m_net(ms.Tensor(x)).asnumpy()
    except Exception as exc:
        got = type(exc).__name__
    if isinstance(want, str) or isinstance(got, str):
        out[label] = ["raises" if isinstance(want, str) else "runs", "raises" if isinstance(got, str) else "runs"]
    else:
        out[label] = float(np.abs(want - got).max()) if want.shape == got.shape else "shape"
print(json.dumps(out))
"""


def _run(tmp_path, source: str, mode: str) -> dict:
    t_path, m_path = tmp_path / "torch_model.py", tmp_path / "ms_model.py"
    t_path.write_text(HEAD + textwrap.dedent(source))
    m_path.write_text(_converted(source))
    run = subprocess.run([sys.executable, "-c", CHILD, str(t_path), str(m_path), mode], capture_output=True,
                         text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("source", [pytest.param(PATCHES, id="PiT patches"), pytest.param(POOL, id="PiT pool")])
def test_a_native_port_matches_torch_and_refuses_what_torch_refuses(tmp_path, source):
    result = _run(tmp_path, source, "pynative")
    assert result["loaded"] is False
    assert result["batched"] < 1e-5, result
    assert result["unbatched"] == ["raises", "raises"], result


@pytest.mark.parametrize("source", [pytest.param(PATCHES, id="PiT patches"), pytest.param(POOL, id="PiT pool")])
def test_a_native_port_matches_torch_in_graph_mode(tmp_path, source):
    result = _run(tmp_path, source, "graph")
    assert result["batched"] < 1e-5, result


def test_an_indexed_unfold_takes_the_unbatched_input_torch_takes(tmp_path):
    result = _run(tmp_path, KEPT["the Sequential indexed"], "pynative")
    assert result["loaded"] is True
    assert result["batched"] < 1e-5 and result["unbatched"] < 1e-5, result
