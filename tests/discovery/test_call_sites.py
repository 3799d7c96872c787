"""Constructor arguments from the repository's own call sites (issue 29, migrate18): a block class is built as its
container builds it, with the values the container computes (a running channel count, a depth's stage length, a class
handed in as ``block``), recorded while the containers are built on the meta device (``call_sites.py``). Guessed sizes
miss such blocks: a grouped bottleneck whose output is ``planes * 4`` and whose residual needs ``inplanes`` to match
("The size of tensor a (64) must match the size of tensor b (16)", junyuseu/pytorch-cifar-models' ResNeXt
Bottleneck), a stage that sums its blocks' outputs with its input and needs ``in_planes == out_planes * 2``."""
from __future__ import annotations

import textwrap

ZOO = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Grouped(nn.Module):
    """A ResNeXt bottleneck: planes * 4 channels out, added to its input (or to its downsample)."""

    def __init__(self, inplanes, planes, cardinality, base_width, stride=1, downsample=None):
        super().__init__()
        inner = int(planes * base_width / 64) * cardinality
        self.conv1 = nn.Conv2d(inplanes, inner, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(inner)
        self.conv2 = nn.Conv2d(inner, inner, 3, stride=stride, padding=1, groups=cardinality, bias=False)
        self.bn2 = nn.BatchNorm2d(inner)
        self.conv3 = nn.Conv2d(inner, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = downsample

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        residual = x if self.downsample is None else self.downsample(x)
        return F.relu(out + residual)


class GroupedNet(nn.Module):
    def __init__(self, cardinality=4, base_width=32, num_classes=10):
        super().__init__()
        self.inplanes, self.cardinality, self.base_width = 16, cardinality, base_width
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.layer1 = self._make_layer(8, 2, 1)
        self.layer2 = self._make_layer(16, 2, 2)
        self.fc = nn.Linear(self.inplanes, num_classes)

    def _make_layer(self, planes, blocks, stride):
        downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride=stride, bias=False),
                                   nn.BatchNorm2d(planes * 4))
        layers = [Grouped(self.inplanes, planes, self.cardinality, self.base_width, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Grouped(self.inplanes, planes, self.cardinality, self.base_width) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.layer2(self.layer1(F.relu(self.stem(x))))
        return self.fc(x.mean((2, 3)))


class HalfBlock(nn.Module):
    def __init__(self, in_planes, out_planes, stride, drop_rate=0.0):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_planes)
        self.conv = nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, bias=False)
        self.drop_rate = drop_rate

    def forward(self, x):
        return F.dropout(self.conv(F.relu(self.bn(x))), p=self.drop_rate, training=self.training)


class PairStage(nn.Module):
    """Two branches of ``block`` whose outputs are joined on the channels and added to the input: its input has
    twice the channels of each branch (``in_planes == 2 * out_planes``), as the network builds it."""

    def __init__(self, nb_layers, in_planes, out_planes, block, mix):
        super().__init__()
        self.left = nn.Sequential(*[block(in_planes if i == 0 else out_planes, out_planes, 1) for i in range(nb_layers)])
        self.right = nn.Sequential(*[block(in_planes if i == 0 else out_planes, out_planes, 1) for i in range(nb_layers)])
        self.mix = nn.Parameter(torch.full((1, in_planes, 1, 1), float(mix)))

    def forward(self, x):
        return x * self.mix + torch.cat([self.left(x), self.right(x)], 1)


class PairNet(nn.Module):
    def __init__(self, depth=8, width=12, num_classes=10):
        super().__init__()
        n = (depth - 4) // 2
        self.stem = nn.Conv2d(3, 2 * width, 3, padding=1)
        self.stage1 = PairStage(n, 2 * width, width, HalfBlock, 0.5)
        self.stage2 = PairStage(n, 2 * width, width, HalfBlock, 0.25)
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        return self.fc(self.stage2(self.stage1(self.stem(x))).mean((2, 3)))


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.n_heads) ** 0.5, -1)
        return self.out((att @ v).transpose(1, 2).reshape(b, t, d))


class EncoderLayer(nn.Module):
    """An Informer-style layer: its attention is a module handed in."""

    def __init__(self, attention, d_model, d_ff, norm):
        super().__init__()
        self.attention, self.norm = attention, norm
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = self.norm(x + self.attention(x))
        return x + self.ff(x)


class Encoder(nn.Module):
    def __init__(self, d_model=16, n_heads=2, layers=2):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(SelfAttention(d_model, n_heads), d_model, 2 * d_model,
                                                  nn.LayerNorm(d_model)) for _ in range(layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Staged(nn.Module):
    """Built from a table of the module, as a MobileNetV3 from its setting: (in, out, kernel) per stage."""

    def __init__(self, setting, num_classes=10):
        super().__init__()
        self.stages = nn.Sequential(*[nn.Conv2d(i, o, k, padding=k // 2) for i, o, k in setting])
        self.fc = nn.Linear(setting[-1][1], num_classes)

    def forward(self, x):
        return self.fc(F.relu(self.stages(x)).mean((2, 3)))


small_setting = [[3, 8, 3], [8, 12, 5]]


def staged_small(num_classes=10):
    return Staged(small_setting, num_classes=num_classes)
'''


def _prove(tmp_path, pattern):
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "nets").mkdir(parents=True)
    (src / "nets" / "zoo.py").write_text(textwrap.dedent(ZOO).lstrip(), encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern=pattern, cache=False, settings=ProveSettings(stub_missing=True))
    return {m["class"]: m for m in models}


def test_a_block_is_built_as_its_container_calls_it(tmp_path):
    models = _prove(tmp_path, "nets/zoo.py:*")
    grouped = models["nets/zoo.py:Grouped"]
    # the first call, as GroupedNet computes it, with the downsample it hands in written as it was built
    assert grouped["status"] == "proven", grouped
    assert grouped["ctor_source"] == "repository call site", grouped
    assert grouped["ctor"] == ("inplanes=16, planes=8, cardinality=4, base_width=32, downsample=nn.Sequential("
                               "nn.Conv2d(in_channels=16, out_channels=32, kernel_size=1, bias=False), "
                               "nn.BatchNorm2d(num_features=32))"), grouped
    stage = models["nets/zoo.py:PairStage"]
    assert stage["status"] == "proven", stage
    # the class handed in as ``block`` is named as the stage's module names it; the count and sizes as computed
    assert stage["ctor"] == "nb_layers=2, in_planes=24, out_planes=12, block=HalfBlock, mix=0.5", stage
    layer = models["nets/zoo.py:EncoderLayer"]
    # the attention module handed in is the repository's, not a stand-in
    assert layer["status"] == "proven", layer
    assert layer["ctor"] == ("attention=SelfAttention(d_model=16, n_heads=2), d_model=16, d_ff=32, "
                             "norm=nn.LayerNorm(normalized_shape=16)"), layer
    staged = models["nets/zoo.py:Staged"]
    # a table of the module handed in is named, not copied out
    assert staged["status"] == "proven" and staged["ctor"] == "setting=small_setting", staged
    for name in ("HalfBlock", "GroupedNet", "PairNet", "SelfAttention", "Encoder"):
        assert models[f"nets/zoo.py:{name}"]["status"] == "proven", models[f"nets/zoo.py:{name}"]


def test_a_block_asked_for_alone_still_gets_its_containers_call(tmp_path):
    """``--models``/``--max-models`` leave the container out of the candidates: the builder still builds the other
    classes of the block's file to read the calls they make (``run_builder``'s ``context``)."""
    models = _prove(tmp_path, "*:Grouped")
    assert list(models) == ["nets/zoo.py:Grouped"], models
    grouped = models["nets/zoo.py:Grouped"]
    assert grouped["status"] == "proven" and grouped["ctor_source"] == "repository call site", grouped


LAYERS = '''
import torch.nn as nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model, d_ff=None):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff or 2 * d_model), nn.GELU(), nn.Linear(d_ff or 2 * d_model, d_model))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(x + self.ff(x))


class Encoder(nn.Module):
    """Its layers handed in as a list of built modules: no small value builds it."""

    def __init__(self, attn_layers, norm_layer=None):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.norm = norm_layer

    def forward(self, x):
        for layer in self.attn_layers:
            x = layer(x)
        return x if self.norm is None else self.norm(x)
'''

MODEL = '''
import torch.nn as nn

from layers.blocks import Encoder, EncoderLayer


class Model(nn.Module):
    def __init__(self, d_model=16, e_layers=2):
        super().__init__()
        self.embed = nn.Linear(4, d_model)
        self.encoder = Encoder([EncoderLayer(d_model) for _ in range(e_layers)], norm_layer=nn.LayerNorm(d_model))

    def forward(self, x):
        return self.encoder(self.embed(x))
'''


def test_a_block_whose_container_is_in_another_file_gets_its_call(tmp_path):
    """Autoformer's layout (KaigeZheng/LTSF-model, first contact): layers/ holds ``Encoder(attn_layers)``, models/
    builds it from a list of layers. Asked for layers/ only (``--models``, or a ``--max-models`` cap ending before
    models/), the builder still builds the classes of the files naming the block to read their calls; before, only
    the block's own file was read and Encoder was "not built" ("int is not a Module subclass" at attn_layers=[2, 2])."""
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in (("layers/blocks.py", LAYERS), ("models/net.py", MODEL)):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (src / "layers" / "__init__.py").write_text("", encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="layers/*", cache=False, settings=ProveSettings(stub_missing=True))
    found = {m["class"]: m for m in models}
    assert set(found) == {"layers/blocks.py:EncoderLayer", "layers/blocks.py:Encoder"}, found
    encoder = found["layers/blocks.py:Encoder"]
    assert encoder["status"] == "proven" and encoder["ctor_source"] == "repository call site", encoder
    assert encoder["ctor"] == ("attn_layers=[EncoderLayer(d_model=16), EncoderLayer(d_model=16)], "
                               "norm_layer=nn.LayerNorm(normalized_shape=16)"), encoder
