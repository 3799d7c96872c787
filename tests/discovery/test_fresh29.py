"""First contact on fresh repositories (session 29: `mindport migrate REPO -o REPO_ms` with no model settings),
discovery's inputs and the proof's verdicts, one class per test:

1. A block whose forward takes two or more optional tensors that its container first passes as None
   (JiaRenChang/PSMNet's ``hourglass.forward(x, presqu, postsqu)``, called ``self.dres2(cost0, None, None)``): the
   inputs varied one argument at a time, so one of the two always got a tensor of the first input's shape, added to
   a tensor of another resolution ("The size of tensor a (16) must match the size of tensor b (32)"). Every optional
   argument at None at once is now tried too (``build._all_none``).

3. A constructor number a name makes a float (``scale`` -> 1.0) that the class hands to a layer as a size
   (ChaofWang/AWSRN's ``AWMS(args, scale, n_feats, kernel_size, wn)``: ``nn.PixelShuffle(scale)`` and
   ``out_feats = scale * scale * args.n_colors`` -> ``nn.Conv2d(n_feats, out_feats, 3)``): "empty(): argument 'size'
   must be tuple of ints, but found element of type float", 3 of 19 models not built. Sizes handed to torch layers,
   directly or through a local, now count (``scan._layer_size_arguments``, ``scan._derived_locals``).

4. A constructor parameter that maps head names to channel counts, walked by key and indexed with it
   (xingyizhou/pytorch-pose-hg-3d's ``PoseResNet(block, layers, heads)``: ``for head in sorted(self.heads):
   self.__setattr__(head, nn.Conv2d(256, self.heads[head], 1))``; fresh28's CenterNet_HourglassNet too): its plural
   name made it ``[8, 16]``, "IndexError: list index out of range". Now a mapping of two names to sizes
   (``scan._keyed_loop``).

5. A factory that hands its ``**kwargs`` to a class with required arguments it does not give
   (kenshohara/video-classification-3d-cnn-pytorch: ``def resnet18(**kwargs): return ResNet(BasicBlock, [2, 2, 2, 2],
   **kwargs)``, ``ResNet(block, layers, sample_size, sample_duration, ...)``): 18 of its 32 models were "defaults ():
   TypeError: ResNet.__init__() missing 2 required positional arguments: 'sample_size' and 'sample_duration'", while
   the class itself was proven. The names that error gives are now tried at small values
   (``build._kwargs_handed_on``).

The model cases share one repository proven once (real torch, real MindSpore, through ``_prove.prove_files`` as
``migrate`` runs them).
"""
from __future__ import annotations

import pytest

from mindport.discovery.build import _all_none

from _prove import prove_files


def test_all_none_valid_and_invalid():
    spec = "2x8x16x16:float32"
    # two optional arguments: both at None once
    assert _all_none(spec, [[spec, "value:None"], [spec, "value:None"]]) == [[spec, "value:None", "value:None"]]
    # a flag beside them keeps its first form
    assert _all_none(spec, [["value:False", "value:True"], [spec, "value:None"], [spec, "value:None"]]) == \
        [[spec, "value:False", "value:None", "value:None"]]
    # one optional argument: the one-at-a-time variation already tries it
    assert _all_none(spec, [[spec, "value:None"], [spec]]) == []
    assert _all_none(spec, [[spec], [spec]]) == []


_HOURGLASS = {
    "hg.py": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Hourglass(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
                self.mid = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
                self.up = nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1)

            def forward(self, x, presqu, postsqu):
                pre = self.down(x)
                if postsqu is not None:
                    pre = F.relu(pre + postsqu)
                else:
                    pre = F.relu(pre)
                out = self.mid(pre)
                if presqu is not None:
                    post = F.relu(out + presqu)
                else:
                    post = F.relu(out + pre)
                return self.up(post), pre, post
        """,
}


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """One repository holding the model cases, proven once (one builder process, one proof per model)."""
    files = {**_HOURGLASS, **_CONSTANT, **_SCALE, **_HEADS, **_FACTORY}
    return prove_files(tmp_path_factory.mktemp("fresh29"), files, "*.py:[HCTPr]*")


def test_optional_tensors_all_none_are_tried(proven):
    """On main: "not-built: small values (c=16): built; no input ran: 2x16x32x32 2x16x32x32 2x16x32x32: The size of
    tensor a (16) must match the size of tensor b (32) ...; 2x16x32x32 value:None 2x16x32x32: ...; 2x16x32x32
    2x16x32x32 value:None: ..."."""
    m = proven["hg.py:Hourglass"]
    assert m["status"] == "proven", m.get("reason") or m.get("error")
    assert m["inputs"][1:] == ["value:None", "value:None"]


def test_no_verdict_statuses_valid_and_invalid():
    """2. A proof that reached no verdict on the port said "ms-failed" or "diverged" (fresh28: centernet-pytorch at
    load 25 had 3 of 6 models "failed in MindSpore" from a time limit or SIGKILL; SparseTSF's parameterless
    Arima/SArima/GBRT "diverged" on a vacuous comparison; here PSMNet's feature_extraction was "ms-failed: parity at
    the random draw: over 180 s (stopped)" at load 22, and its hand-made proof passes). Now ``stopped`` and
    ``inconclusive``; a segfault, a raise, a difference keep their verdict."""
    from mindport.discovery.prove import _no_verdict, summarize, summary_line

    def status(status, error):
        return _no_verdict({"status": status, "error": error})["status"]

    # VALID: reclassified
    assert status("ms-failed", "parity at the random draw: over 180 s (stopped)") == "stopped"
    assert status("ms-failed", "GRAPH_MODE failed: the MindSpore process stopped (exit code -9): (empty log)") == \
        "stopped"
    assert status("diverged", "vacuous comparison (random draw): every output is constant") == "inconclusive"
    # built, and the torch side of its proof killed: stopped, its reason the error
    killed = _no_verdict({"status": "not-built", "ctor": "args=1", "reason": "parity at the random draw: the torch "
                          "model raised: the torch side failed: the torch process stopped (exit code -9): ..."})
    assert killed["status"] == "stopped" and "reason" not in killed and killed["error"].startswith("parity"), killed
    # INVALID: verdicts kept
    assert _no_verdict({"status": "not-built", "ctor": None, "reason": "small values: the builder stopped on it "
                        "(over 60 s)"})["status"] == "not-built"
    assert status("ms-failed", "the MindSpore process stopped (exit code -11): Segmentation fault") == "ms-failed"
    assert status("ms-failed", "the MindSpore Cell raised (own init): ValueError: ...") == "ms-failed"
    assert status("diverged", "outputs differ (own init): output: max rel 0.3") == "diverged"
    assert status("proven", "") == "proven"
    models = [{"status": s} for s in ("proven", "stopped", "inconclusive", "ms-failed", "not-built")]
    summary = summarize(models, 5)
    assert (summary["built"], summary["stopped"], summary["inconclusive"], summary["ms_failed"]) == (4, 1, 1, 1)
    assert summary_line(summary) == ("models: 5 discovered, 5 tried, 4 built, 1 proven, 0 diverged, 1 inconclusive, "
                                     "1 failed in MindSpore, 1 stopped by a time or memory limit, 1 not built")


_CONSTANT = {
    "const.py": """
        import torch
        import torch.nn as nn

        class ConstantForecast(nn.Module):
            # a parameterless baseline whose output does not depend on its input (SparseTSF's Arima stand-in)
            def __init__(self, horizon=4):
                super().__init__()
                self.horizon = horizon

            def forward(self, x):
                return torch.zeros(x.shape[0], self.horizon) + 2.0
        """,
}


def test_a_constant_output_without_parameters_is_inconclusive(proven):
    """On main: "diverged" with the error "vacuous comparison (own init): ...", counted as diverged."""
    m = proven["const.py:ConstantForecast"]
    assert m["status"] == "inconclusive", m
    assert m["error"].startswith("vacuous comparison"), m


_SCALE = {
    "sr.py": """
        import torch.nn as nn

        class Tail(nn.Module):
            def __init__(self, args, scale, n_feats, wn):
                super().__init__()
                out_feats = scale * scale * args.n_colors
                self.k3 = wn(nn.Conv2d(n_feats, out_feats, 3, padding=1))
                self.shuffle = nn.PixelShuffle(scale)

            def forward(self, x):
                return self.shuffle(self.k3(x))

        class TokenHead(nn.Module):
            def __init__(self, dim, scale):
                super().__init__()
                wide = dim * scale
                self.fc = nn.Linear(dim, wide)

            def forward(self, x):
                return self.fc(x)
        """,
}


def test_sizes_handed_to_layers_are_counts():
    """VALID: a parameter in a layer's size argument, directly or through a local; INVALID: a layer's float argument
    (BatchNorm2d's eps at position 1), a size method's namespace parameter, a parameter used in a forward only."""
    import ast

    from mindport.discovery.scan import _method, _params, _usage

    def params_of(cls):
        params = _params(_method(cls, "__init__").args, True)
        _usage(cls, params, {})
        return {p.name: p for p in params}

    tree = ast.parse(_SCALE["sr.py"].replace("\n        ", "\n"))
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    tail = params_of(classes["Tail"])
    assert tail["scale"].count and not tail["args"].count, tail
    assert params_of(classes["TokenHead"])["scale"].count
    other = ast.parse("import torch.nn as nn\nclass B(nn.Module):\n    def __init__(self, c, eps, rate):\n"
                      "        super().__init__()\n        self.bn = nn.BatchNorm2d(c, eps)\n"
                      "        self.drop = nn.Dropout(rate)\n")
    params = params_of(other.body[1])
    assert not params["eps"].count and not params["rate"].count, params


def test_a_scale_handed_to_a_layer_is_an_int(proven):
    """On main: "not-built: small values (args=SimpleNamespace(n_colors=3), scale=1.0, ...): TypeError: empty():
    argument 'size' (position 1) must be tuple of ints, but found element of type float"."""
    for name in ("sr.py:Tail", "sr.py:TokenHead"):
        m = proven[name]
        assert m["status"] == "proven", (name, m.get("reason") or m.get("error"))
    assert "scale=1," in proven["sr.py:Tail"]["ctor"] + ",", proven["sr.py:Tail"]["ctor"]


_HEADS = {
    "pose.py": """
        import torch.nn as nn

        class PoseHeads(nn.Module):
            def __init__(self, channels, heads):
                super().__init__()
                self.heads = heads
                self.stem = nn.Conv2d(3, channels, 3, padding=1)
                for head in sorted(self.heads):
                    self.__setattr__(head, nn.Conv2d(channels, self.heads[head], 1))

            def forward(self, x):
                x = self.stem(x)
                ret = {}
                for head in self.heads:
                    ret[head] = self.__getattr__(head)(x)
                return [ret]

        class PairHeads(nn.Module):
            def __init__(self, channels, outputs):
                super().__init__()
                self.names = []
                for name, n in outputs.items():
                    setattr(self, name, nn.Linear(channels, n))
                    self.names.append(name)

            def forward(self, x):
                return [getattr(self, n)(x) for n in self.names]
        """,
}


def test_keyed_loops_valid_and_invalid():
    import ast

    from mindport.discovery.scan import _keyed_loop

    def which(node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return {"heads": "heads"}.get(node.attr)
        return {"heads": "heads", "blocks": "blocks"}.get(node.id) if isinstance(node, ast.Name) else None

    def loop(src):
        return _keyed_loop(ast.parse(src).body[0], which)

    # VALID: walked by key and indexed with it; .items()
    assert loop("for h in sorted(self.heads):\n    n = self.heads[h]") == "heads"
    assert loop("for h in heads.keys():\n    f(heads[h])") == "heads"
    assert loop("for h, n in heads.items():\n    f(h, n)") == "heads"
    # INVALID: a list walked by item; indexed by something else; a parameter not of the constructor
    assert loop("for b in blocks:\n    f(b)") is None
    assert loop("for i in blocks:\n    f(heads[0])") is None
    assert loop("for h in other:\n    f(other[h])") is None


def test_a_mapping_of_head_sizes_is_a_dict(proven):
    """On main: "not-built: small values (channels=16, heads=[8, 16]): IndexError: list index out of range"."""
    for name in ("pose.py:PoseHeads", "pose.py:PairHeads"):
        m = proven[name]
        assert m["status"] == "proven", (name, m.get("reason") or m.get("error"))
    assert "heads={'a': " in proven["pose.py:PoseHeads"]["ctor"], proven["pose.py:PoseHeads"]["ctor"]


_FACTORY = {
    "video.py": """
        import math
        import torch.nn as nn

        class Clip(nn.Module):
            def __init__(self, width, sample_size, sample_duration, num_classes=5):
                super().__init__()
                self.conv = nn.Conv3d(3, width, 3, stride=2, padding=1)
                self.pool = nn.AvgPool3d((math.ceil(sample_duration / 16), math.ceil(sample_size / 32),
                                          math.ceil(sample_size / 32)), stride=1)
                self.fc = nn.Linear(width, num_classes)

            def forward(self, x):
                return self.fc(self.pool(self.conv(x)).mean((2, 3, 4)))

        def resnet_tiny(**kwargs):
            return Clip(8, **kwargs)
        """,
}


def test_kwargs_handed_on_valid_and_invalid():
    from mindport.discovery.build import _kwargs_handed_on

    takes_kwargs = {"params": [{"name": "kwargs", "kind": "var_keyword", "default": None}]}
    missing = TypeError("ResNet.__init__() missing 2 required positional arguments: 'sample_size' and "
                        "'sample_duration'")
    got = _kwargs_handed_on(takes_kwargs, "", missing)
    assert got is not None and got.startswith("sample_size=") and ", sample_duration=" in got, got
    assert _kwargs_handed_on(takes_kwargs, "num_classes=3", TypeError(
        "f() missing 1 required keyword-only argument: 'depth'")) == "num_classes=3, depth=2"
    # INVALID: no **kwargs; another error; a name the constructor already gives
    assert _kwargs_handed_on({"params": []}, "", missing) is None
    assert _kwargs_handed_on(takes_kwargs, "", ValueError("missing 1 required positional argument: 'x'")) is None
    assert _kwargs_handed_on(takes_kwargs, "x=1", TypeError("f() missing 1 required positional argument: 'x'")) \
        is None


def test_a_factory_handing_kwargs_to_a_class_is_built(proven):
    """On main: "not-built: defaults (): TypeError: Clip.__init__() missing 2 required positional arguments:
    'sample_size' and 'sample_duration'"."""
    m = proven["video.py:resnet_tiny"]
    assert m["status"] == "proven", m.get("reason") or m.get("error")
    assert "sample_size=" in m["ctor"] and "sample_duration=" in m["ctor"], m["ctor"]
