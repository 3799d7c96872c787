"""Fixes from the discovery sweep's sixth pass (issue 29): forward arguments that are lists of tensors (HRNet's
branches, a decoder's encoder features, a fusion of several inputs)."""
from __future__ import annotations

from pathlib import Path

LIST_INPUTS = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BranchModule(nn.Module):  # HRNet's HighResolutionModule: one feature map per branch, each half the size
    def __init__(self, num_inchannels):
        super().__init__()
        self.num_inchannels = num_inchannels
        self.branches = nn.ModuleList([nn.Conv2d(c, c, 3, padding=1) for c in num_inchannels])
        self.fuse = nn.Conv2d(num_inchannels[1], num_inchannels[0], 1)

    def forward(self, x):
        for i in range(len(self.branches)):
            x[i] = F.relu(self.branches[i](x[i]))
        up = F.interpolate(self.fuse(x[1]), scale_factor=2, mode="nearest")
        return [x[0] + up, x[1]]


class Decoder(nn.Module):  # monodepth2's DepthDecoder: features of an encoder, deepest last
    def __init__(self, num_ch_enc=(4, 8, 16)):
        super().__init__()
        self.num_ch_enc = np.array(num_ch_enc)
        self.convs = nn.ModuleList([nn.Conv2d(int(c), 4, 3, padding=1) for c in num_ch_enc])

    def forward(self, input_features):
        x = self.convs[-1](input_features[-1])
        for i in range(len(input_features) - 2, -1, -1):
            x = F.interpolate(x, scale_factor=2) + self.convs[i](input_features[i])
        return torch.sigmoid(x)


class Fusion(nn.Module):  # a forward that concatenates the tensors of one argument
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(2 * dim, dim)

    def forward(self, xs):
        return self.proj(torch.cat(xs, dim=-1))


class Pair(nn.Module):  # a pair unpacked from one argument
    def __init__(self, dim=8):
        super().__init__()
        self.a = nn.Linear(dim, dim)

    def forward(self, inputs):
        x, y = inputs
        return self.a(x) * torch.tanh(y)
'''


def _build(tmp_path: Path, source: str, name: str) -> dict:
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "models.py").write_text(source)
    cand = next(c for c in discover(tmp_path) if c.name == name)
    return build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 30)


def test_forward_arguments_read_as_sequences_get_lists_of_tensors(tmp_path):
    """A forward that indexes its argument by a loop variable, measures it, concatenates it or unpacks it was tried
    with tensors only (HRNet's module: "'Tensor' ... branches" errors; a decoder's ``input_features[-1]``), and was
    never built. Its argument is now also given a list: the model's channel list as a pyramid of feature maps, or
    copies of the tensor form."""
    expected = {
        "BranchModule": "[2x8x32x32:float32, 2x16x16x16:float32]",  # num_inchannels = [8, 16] (small values)
        "Decoder": "[2x4x32x32:float32, 2x8x16x16:float32, 2x16x8x8:float32]",  # its numpy num_ch_enc
        "Fusion": "[2x8:float32, 2x8:float32]",  # its Linear takes 16: halved
        "Pair": "[2x8:float32, 2x8:float32]",  # as many as it unpacks
    }
    for name, spec in expected.items():
        result = _build(tmp_path, LIST_INPUTS, name)
        assert result["status"] == "built", (name, result)
        assert result["inputs"] == [spec], (name, result)


def test_list_input_specs_parse_and_draw_arrays():
    import numpy as np

    from mindport.errors import InputError
    from mindport.validators.parity.loading import describe_input, make_inputs, map_arrays, parse_input_spec

    spec = parse_input_spec("[2x3x8x8:float32, 2x4:int64:0:5]")
    assert str(spec) == "[2x3x8x8:float32, 2x4:int64:0:5]" and str(parse_input_spec("(2x3:float32,)")) == "(2x3:float32,)"
    value, after = make_inputs([spec, parse_input_spec("2x2:float32")], seed=3)
    assert type(value) is list and value[0].shape == (2, 3, 8, 8) and value[1].dtype == np.int64
    assert 0 <= value[1].min() and value[1].max() < 5 and after.shape == (2, 2)
    again = make_inputs([spec, parse_input_spec("2x2:float32")], seed=3)
    assert np.array_equal(again[0][0], value[0]) and np.array_equal(again[1], after)  # deterministic
    assert describe_input(value) == "[(2, 3, 8, 8):float32, (2, 4):int64]"
    assert map_arrays((value[0], 4), lambda a: a.shape) == ((2, 3, 8, 8), 4)
    try:
        parse_input_spec("[]")
    except InputError:
        return
    raise AssertionError("an empty list input was accepted")


def test_list_inputs_are_proven_on_both_sides(tmp_path):
    """The proof hands a list input's tensors to both models (PyNative and GRAPH_MODE, both draws), and a wrong port
    of a list-input model diverges (the proof is not vacuous)."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "models.py").write_text(LIST_INPUTS)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:*", cache=False)
    status = {m["class"].split(":")[1]: m for m in models}
    for name in ("BranchModule", "Decoder", "Fusion", "Pair"):
        m = status[name]
        assert m["status"] == "proven", (name, m)
        assert m["inputs"][0].startswith("["), m
        assert [d["draw"] for d in m["draws"]] == ["own init", "random draw"] and m["draws"][0]["graph"] == "ok", m
    # a wrong port: the converted Fusion scales its second input
    ported = (out / "models.py").read_text()
    # the tensors of a list argument may differ in dtype: the join promotes them as torch does (mp_tensor.promoted)
    assert "ops.cat(mp_tensor.promoted(xs), axis=-1)" in ported, ported
    (out / "models.py").write_text(ported.replace("promoted(xs)", "promoted((xs[0], xs[1] * 1.01))", 1))
    models, _ = prove_models(src, out, pattern="models.py:Fusion", cache=False)
    assert models[0]["status"] == "diverged", models[0]
