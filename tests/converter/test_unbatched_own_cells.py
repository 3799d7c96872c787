"""The unbatched handling's facts across a file's own cells (issue 30: native ports).

A converted file that builds a MindSpore layer taking a batch only (convolutions, recurrent layers...) loads
``mindport.runtime.unbatched`` unless it shows every input of the layer batched (``native_facts.unbatched_handling``).
On main 1102510 the facts stopped at a class's edge: a squeeze-excitation cell called by a block on the output of a
BatchNorm2d, a classifier conv after a cell whose construct returns a batch (squeezenet's Fire), loaded the handling, and
5 of 72 trials ports lost "imports no mindport" (9/72 -> 4/72). Now the facts follow the file's own cells: what a
cell's construct returns, whether every call the file makes of a cell is on a batch, whether a cell refuses anything
but a batch; and a name's one reaching binding in straight-line code, ``ops.cat`` of a batch, ``x.view(a, b, c, d)``.
Each NATIVE source loaded the handling on main; each HANDLED one can meet an unbatched input and keeps it.
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
LINE = "import mindport.runtime.unbatched"
HEAD = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"

SE_BLOCK = """
    class SE(nn.Module):
        def __init__(self, c):
            super(SE, self).__init__()
            self.se1 = nn.Conv2d(c, 2, kernel_size=1)
            self.se2 = nn.Conv2d(2, c, kernel_size=1)

        def forward(self, x):
            out = F.adaptive_avg_pool2d(x, (1, 1))
            out = F.relu(self.se1(out))
            out = self.se2(out).sigmoid()
            return x * out


    class Block(nn.Module):
        def __init__(self, c=3, with_se=True):
            super(Block, self).__init__()
            self.bn1 = nn.BatchNorm2d(c)
            self.with_se = with_se
            if with_se:
                self.se = SE(c)
            self.conv = nn.Conv2d(c, c, 3, padding=1)

        def forward(self, x):
            out = F.relu(self.bn1(x))
            if self.with_se:
                out = self.se(out)
            return self.conv(out)
    """

FIRE = """
    class Fire(nn.Module):
        def __init__(self, c, o):
            super().__init__()
            self.squeeze = nn.Sequential(nn.Conv2d(c, 4, 1), nn.BatchNorm2d(4), nn.ReLU(inplace=True))
            self.expand = nn.Sequential(nn.Conv2d(4, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

        def forward(self, x):
            x = self.squeeze(x)
            x = torch.cat([self.expand(x), x], 1)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fire = Fire(3, 4)
            self.head = nn.Conv2d(8, 5, 1)

        def forward(self, x):
            f = self.fire(x)
            c = self.head(f)
            return c
    """

PREACT = """
    class PreActBlock(nn.Module):
        expansion = 1

        def __init__(self, c, planes):
            super(PreActBlock, self).__init__()
            self.bn1 = nn.BatchNorm2d(c)
            self.conv1 = nn.Conv2d(c, planes, 3, padding=1, bias=False)

        def forward(self, x):
            out = F.relu(self.bn1(x))
            return self.conv1(out) + x


    class PreActResNet(nn.Module):
        def __init__(self, block, num_blocks):
            super(PreActResNet, self).__init__()
            self.in_planes = 3
            self.conv1 = nn.Conv2d(3, 3, 3, padding=1, bias=False)
            self.layer1 = self._make_layer(block, 3, num_blocks)

        def _make_layer(self, block, planes, num_blocks):
            strides = [1] + [1] * (num_blocks - 1)
            layers = []
            for stride in strides:
                layers.append(block(self.in_planes, planes))
                self.in_planes = planes * block.expansion
            return nn.Sequential(*layers)

        def forward(self, x):
            out = self.conv1(x)
            out = self.layer1(out)
            return out


    def Net():
        return PreActResNet(PreActBlock, 2)
    """

DENSE = """
    class Bottleneck(nn.Module):
        def __init__(self, c):
            super(Bottleneck, self).__init__()
            self.bn = nn.BatchNorm2d(c)

        def forward(self, x):
            return torch.cat([F.relu(self.bn(x)), x], 1)


    class Transition(nn.Module):
        def __init__(self, c):
            super(Transition, self).__init__()
            self.bn = nn.BatchNorm2d(c)

        def forward(self, x):
            return F.avg_pool2d(F.relu(self.bn(x)), 2)


    class DenseNet(nn.Module):
        def __init__(self, block, nblock):
            super(DenseNet, self).__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
            self.dense1 = self._make_dense_layers(block, 4, nblock)
            self.trans1 = Transition(4 * 2 ** nblock)

        def _make_dense_layers(self, block, c, nblock):
            layers = []
            for i in range(nblock):
                layers.append(block(c))
                c *= 2
            return nn.Sequential(*layers)

        def forward(self, x):
            out = self.conv1(x)
            out = self.trans1(self.dense1(out))
            return out


    def densenet_small():
        return DenseNet(Bottleneck, 2)
    """

WIDE = """
    class Block(nn.Module):
        def __init__(self, c=3, o=4, stride=1):
            super().__init__()
            self.residual = nn.Sequential(
                nn.BatchNorm2d(c), nn.ReLU(inplace=True), nn.Conv2d(c, o, 3, stride=stride, padding=1),
                nn.BatchNorm2d(o), nn.ReLU(inplace=True), nn.Dropout(), nn.Conv2d(o, o, 3, padding=1))
            self.shortcut = nn.Sequential()
            if c != o or stride != 1:
                self.shortcut = nn.Sequential(nn.Conv2d(c, o, 1, stride=stride))

        def forward(self, x):
            residual = self.residual(x)
            shortcut = self.shortcut(x)
            return residual + shortcut
    """

HELPER_SEQUENCE = """
    def conv_bn(inp, oup, k=3):
        return nn.Sequential(nn.Conv2d(inp, oup, k, 1, k // 2, bias=False), nn.BatchNorm2d(oup), nn.SiLU())


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, 4)
            self.head = nn.Sequential(conv_bn(4, 5, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

        def forward(self, x):
            return self.head(self.stem(x))
    """

NATIVE = {
    "a conv after a BatchNorm2d through rank-keeping members, and a shortcut on the input a BatchNorm2d took first "
    "(wideresnet's WideBasic)": WIDE,
    "a module-level function's Sequential of conv, BatchNorm2d, SiLU, called only whole (mobile_vit)":
        HELPER_SEQUENCE,
    "a conv into a loop-built Sequential of blocks the file passes, each starting with a BatchNorm2d (preact)":
        PREACT,
    "a conv into a Sequential that may be empty, then a cell starting with a BatchNorm2d (densenet)": DENSE,
    "a cell called by a block on a BatchNorm2d's output (regnet's SE)": SE_BLOCK,
    "a conv after a cell whose construct returns a batch (squeezenet's Fire)": FIRE,
    "a conv whose output goes into a cell that starts with a BatchNorm2d": """
        class Pre(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bn = nn.BatchNorm2d(c)

            def forward(self, x):
                return F.relu(self.bn(x))


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.pre = Pre(4)

            def forward(self, x):
                out = self.conv(x)
                out = self.pre(out)
                return out
        """,
    "a conv on a sum with a tensor viewed to four axes": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(1, 4)
                self.up = nn.Sequential(nn.ConvTranspose2d(4, 4, 2, 2), nn.GroupNorm(2, 4), nn.ReLU())

            def forward(self, x, t):
                temb = self.lin(t).view(-1, 4, 1, 1)
                return self.up(x + temb)
        """,
}

HANDLED = {
    "the shortcut called before the BatchNorm2d sees the input": WIDE.replace(
        "            residual = self.residual(x)\n            shortcut = self.shortcut(x)\n",
        "            shortcut = self.shortcut(x)\n            residual = self.residual(x)\n"),
    "the BatchNorm2d's read in a branch": WIDE.replace(
        "            residual = self.residual(x)\n            shortcut = self.shortcut(x)\n            return residual + shortcut",
        "            residual = 0\n            if self.training:\n                residual = self.residual(x)\n"
        "            shortcut = self.shortcut(x)\n            return residual + shortcut"),
    "the BatchNorm2d's read in a conditional expression": WIDE.replace(
        "residual = self.residual(x)\n", "residual = self.residual(x) if self.training else 0\n"),
    "the input rebound between": WIDE.replace(
        "            shortcut = self.shortcut(x)\n", "            x = x[0]\n            shortcut = self.shortcut(x)\n"),
    "a conv after a LayerNorm (which takes a (C, H, W) input too)": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.seq = nn.Sequential(nn.LayerNorm(8), nn.ReLU(), nn.Conv2d(3, 3, 1))

            def forward(self, x):
                return self.seq(x)
        """,
    "the helper's Sequential indexed": HELPER_SEQUENCE.replace("return self.head(self.stem(x))",
                                                               "return self.stem[0](x)"),
    "the helper's Sequential stored in a list": HELPER_SEQUENCE.replace(
        "self.stem = conv_bn(3, 4)", "self.stem = nn.ModuleList([conv_bn(3, 4)])").replace(
        "self.head(self.stem(x))", "self.head(self.stem[0](x))"),
    "the helper handed on as a value": HELPER_SEQUENCE + """

    MAKERS = [conv_bn]
    """,
    "the helper's Sequential without a BatchNorm2d": HELPER_SEQUENCE.replace("nn.BatchNorm2d(oup), ", ""),
    "the block class a parameter the file never passes": PREACT.replace("        return PreActResNet(PreActBlock, 2)",
                                                                        "        return None"),
    "the block class one the file passes from elsewhere": PREACT.replace("return PreActResNet(PreActBlock, 2)",
                                                                         "return PreActResNet(nn.Identity, 2)"),
    "a loop that may not run and nothing after it needing a batch": PREACT.replace(
        "strides = [1] + [1] * (num_blocks - 1)", "strides = [1] * num_blocks"),
    "the blocks' list also extended": PREACT.replace("            return nn.Sequential(*layers)",
                                                      "            layers += [nn.Identity()]\n"
                                                      "            return nn.Sequential(*layers)"),
    "the SE cell called on the model's own input too": SE_BLOCK + """

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = SE(3)
            self.block = Block(3)

        def forward(self, x):
            return self.block(self.first(x))
    """,
    "the SE cell subclassed": SE_BLOCK + """

    class Wide(SE):
        pass
    """,
    "the SE cell handed on as a value": SE_BLOCK + """

    KINDS = [SE]
    """,
    "the SE cell with another method": SE_BLOCK.replace("            return x * out\n", """            return x * out

        def half(self, x):
            return self.se1(x)
    """),
    "a name rebound after the batch (reaching binding, not every binding)": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()
                self.conv = nn.Conv2d(3, 4, 3)

            def forward(self, x):
                x = x[0]
                x = self.act(x)
                return self.conv(x)
        """,
    "a name rebound in a loop before the conv": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(3)
                self.conv = nn.Conv2d(3, 3, 3, padding=1)

            def forward(self, x, n: int):
                out = self.bn(x)
                for _ in range(n):
                    out = out[0]
                return self.conv(out)
        """,
    "a conv after a cell whose construct returns a piece of its input": """
        class First(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(3)

            def forward(self, x):
                return self.bn(x)[0]


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.flat = First()
                self.conv = nn.Conv2d(3, 3, 1)

            def forward(self, x):
                return self.conv(self.flat(x))
        """,
}


def _converted(source: str) -> str:
    result = convert_source(HEAD + textwrap.dedent(source), "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in NATIVE.items()])
def test_a_batch_shown_across_own_cells_stays_native(source):
    code = _converted(source)
    assert "mindport" not in code, code


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in HANDLED.items()])
def test_an_input_an_unbatched_call_can_reach_loads_the_handling(source):
    code = _converted(source)
    assert LINE in code, code


CHILD = r"""
import importlib.util, json, sys
import numpy as np
import torch
import mindspore as ms

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

t_mod, m_mod = load("torch_model", sys.argv[1]), load("ms_model", sys.argv[2])
from mindport import transfer_weights
loaded = "mindport.runtime.unbatched" in sys.modules
torch.manual_seed(0)
t_net, m_net = getattr(t_mod, sys.argv[3])().eval(), getattr(m_mod, sys.argv[3])()
m_net.set_train(False)
transfer_weights(t_net.state_dict(), m_net)
out = {"loaded": loaded}
for label, shape in (("batched", (2, 3, 8, 8)), ("unbatched", (3, 8, 8))):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    try:
        with torch.no_grad():
            want = t_net(torch.from_numpy(x)).numpy()
    except Exception as exc:  # torch refuses it
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


def _run(tmp_path, source: str, cls: str) -> dict:
    t_path, m_path = tmp_path / "torch_model.py", tmp_path / "ms_model.py"
    t_path.write_text(HEAD + textwrap.dedent(source))
    m_path.write_text(_converted(source))
    run = subprocess.run([sys.executable, "-c", CHILD, str(t_path), str(m_path), cls], capture_output=True,
                         text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("source, cls", [pytest.param(SE_BLOCK, "Block", id="SE in a block"),
                                         pytest.param(FIRE, "Net", id="Fire then a conv"),
                                         pytest.param(PREACT, "Net", id="preact"),
                                         pytest.param(DENSE, "densenet_small", id="densenet"),
                                         pytest.param(WIDE, "Block", id="wideresnet block"),
                                         pytest.param(HELPER_SEQUENCE, "Net", id="mobile_vit helper sequence")])
def test_a_native_port_matches_torch_and_refuses_what_torch_refuses(tmp_path, source, cls):
    """Real torch and MindSpore in a fresh process (nothing else loads the handling): the batch matches; the
    unbatched input torch refuses (its BatchNorm2d) the port refuses too."""
    result = _run(tmp_path, source, cls)
    assert result["loaded"] is False
    assert result["batched"] < 1e-5, result
    assert result["unbatched"] == ["raises", "raises"], result


def test_a_handled_port_takes_the_unbatched_input_torch_takes(tmp_path):
    source = HANDLED["the SE cell called on the model's own input too"]
    source = source.replace("return self.block(self.first(x))", "return self.first(x)")
    result = _run(tmp_path, source, "Net")
    assert result["loaded"] is True
    assert result["batched"] < 1e-5 and result["unbatched"] < 1e-5, result


def test_an_indexed_helper_sequence_takes_the_unbatched_input_torch_takes(tmp_path):
    """The helper's Sequential indexed (its conv called alone): torch's conv takes a (C, H, W) image; so does the
    port, which loads the handling."""
    result = _run(tmp_path, HANDLED["the helper's Sequential indexed"], "Net")
    assert result["loaded"] is True
    assert result["batched"] < 1e-5 and result["unbatched"] < 1e-5, result
