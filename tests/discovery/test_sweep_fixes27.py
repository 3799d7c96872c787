"""Discovery fixes of session 26 (lead27): a construction over the parameter cap is tried again at small sizes."""
from __future__ import annotations

import textwrap

RESNET = textwrap.dedent('''
import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or inplanes != planes * 4:
            self.down = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(planes * 4))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + idt)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super().__init__()
        self.inplanes = 16
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        stages = []
        for i, n in enumerate(layers):
            planes = 16 * 2 ** i
            for j in range(n):
                stages.append(block(self.inplanes, planes, 2 if (j == 0 and i > 0) else 1))
                self.inplanes = planes * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(self.inplanes, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(x.mean((2, 3)))


def resnet101():
    return ResNet(Bottleneck, [3, 4, 23, 3])
''')


def test_a_call_site_over_the_cap_is_shrunk_to_one_block_per_stage():
    """luuuyi/CBAM.PyTorch's ``ResNet(Bottleneck, [3, 4, 23, 3])``, FocalNet's ``depths=[2, 2, 18, 2]``: the
    repository's own constructions were all over the cap and the class was "too large"; its size-like literal
    arguments (positional ones named by the signature) are made small, other arguments kept as written."""
    from mindport.discovery.build import shrunk_call

    params = [{"name": "block", "kind": "positional"}, {"name": "layers", "kind": "positional"},
              {"name": "num_classes", "kind": "positional"}, {"name": "embed_dim", "kind": "keyword"}]
    assert shrunk_call("Bottleneck, [3, 4, 23, 3]", params) == "Bottleneck, [1, 1, 1, 1]"
    assert shrunk_call("Bottleneck, [3, 4, 6, 3], 1000, embed_dim=768", params) == \
        "Bottleneck, [1, 1, 1, 1], 1000, embed_dim=16"
    assert shrunk_call("depths=[2, 2, 18, 2], embed_dim=96, drop=0.1", params) == \
        "depths=[1, 1, 1, 1], embed_dim=16, drop=0.1"
    assert shrunk_call("Bottleneck, [1, 1, 1, 1]", params) is None  # nothing left to shrink
    assert shrunk_call("*cfg", params) is None
    assert shrunk_call("not python(", params) is None


def test_a_model_over_the_cap_at_every_repository_call_is_proven_at_small_sizes(tmp_path):
    """The whole path: the factory's call ``ResNet(Bottleneck, [3, 4, 23, 3])`` is 2.7 M parameters, over a 1 M cap;
    the class is built at ``[1, 1, 1, 1]`` (0.5 M), every block kind still in it, and proven against torch."""
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "resnet.py").write_text(RESNET, encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="resnet.py:ResNet", cache=False,
                             settings=ProveSettings(max_params=1_000_000))
    (res,) = [m for m in models if m["class"] == "resnet.py:ResNet"]
    assert res["status"] == "proven", res
    assert "[1, 1, 1, 1]" in res["ctor"], res["ctor"]
    assert res["max_rel"] < 1e-3


def test_a_name_the_calling_scope_binds_to_a_literal_is_read_as_that_literal(tmp_path):
    """prlz77/ResNeXt.pytorch's train.py: ``nlabels = 10`` (or 100 in the other branch), then
    ``CifarResNeXt(args.cardinality, args.depth, nlabels, args.base_width, args.widen_factor)``: the call was not a
    literal, so the class was guessed at depth 2 (no block at all, no input ran). A local name bound to a literal
    before the call is read as its first value; a name bound to a call result still is not."""
    from mindport.discovery.scan import discover

    (tmp_path / "net.py").write_text(textwrap.dedent('''
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, width, depth, classes):
                super().__init__()
                self.body = nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])
                self.head = nn.Linear(width, classes)

            def forward(self, x):
                return self.head(self.body(x))
    '''))
    (tmp_path / "train.py").write_text(textwrap.dedent('''
        import argparse
        from net import Net

        parser = argparse.ArgumentParser()
        parser.add_argument("--depth", type=int, default=3)
        args = parser.parse_args()


        def main(dataset):
            if dataset == "cifar10":
                classes = 10
            else:
                classes = 100
            width = 2 * 16
            net = Net(width, args.depth, classes)
            other = compute()
            Net(other, 1, 1)


        HIDDEN = 24
        Net(HIDDEN, depth=2, classes=5)
    '''))
    (cand,) = [c for c in discover(tmp_path) if c.name == "Net"]
    assert sorted(cand.ctors) == ["2 * 16, 3, 10", "24, depth=2, classes=5"], cand.ctors


def test_a_layer_whose_forward_is_called_by_name_forms_the_input(tmp_path):
    """prlz77/ResNeXt.pytorch: ``x = self.conv_1_3x3.forward(x)``. The layer a forward argument is handed to was read
    from ``self.X(arg)`` only, so the input was formed for another layer (its classifier's 1024 features) and no input
    ran; ``self.X.forward(arg)`` hands it to X as well."""
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "net.py").write_text(textwrap.dedent('''
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(8, 2)
                self.conv = nn.Conv2d(3, 8, 3, padding=1)

            def forward(self, x):
                x = self.conv.forward(x)
                return self.head.forward(x.mean((2, 3)))
    '''))
    (cand,) = discover(tmp_path)
    res = build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 60)
    assert res["status"] == "built", res
    assert res["inputs"][0].startswith("2x3x"), res["inputs"]
