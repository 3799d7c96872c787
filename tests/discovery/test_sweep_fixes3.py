"""Fixes found by the third discovery sweep (benchmarks/discovery_sweep.py, manifest rows 53 on), one test each."""
from __future__ import annotations


def _build(tmp_path, source: str, name: str | None = None):
    from mindport.discovery.build import build_one
    from mindport.discovery.scan import discover

    (tmp_path / "m.py").write_text(source)
    cands = {c.name: c for c in discover(tmp_path)}
    cand = cands[name] if name else next(iter(cands.values()))
    return build_one(cand.to_json() | {"rel": cand.rel, "name": cand.name}, None, str(tmp_path), 60,
                     max_params=1_000_000)


def _prove(tmp_path, name: str, source: str) -> list[dict]:
    """``source`` as ``src/NAME``, its conversion as ``out/NAME``, every model of it proven."""
    from mindport import convert_source
    from mindport.discovery.prove import prove_models

    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "src" / name).write_text(source)
    (tmp_path / "out" / name).write_text(convert_source(source).code)
    return prove_models(tmp_path / "src", tmp_path / "out", cache=False)[0]


def test_the_rank_a_forward_unpacks_its_input_with_is_tried_first(tmp_path):
    """A token block that reshapes ``B, N, C = x.shape`` into an image before its first convolution (PVT/Swin-style
    blocks): the first layer's own forms (``2 x C x 32 x 32``) never ran. The rank the forward reads its input with
    (unpacking, ``dim() ==``, ``shape[i]``, a docstring's ``(B, N, C)``) now gives forms of that rank first."""
    res = _build(tmp_path, '''
import torch.nn as nn


class TokenConv(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        B, N, C = x.shape
        s = int(N ** 0.5)
        x = x.transpose(1, 2).reshape(B, C, s, s)
        return self.proj(x).flatten(2).transpose(1, 2)
''')
    assert res["status"] == "built", res
    assert res["inputs"] == ["2x16x16:float32"]


def test_ranks_read_from_the_forward_and_its_docstring():
    """Each argument's rank, read before the forward rebinds it; a docstring's type list is no shape."""
    import ast

    from mindport.discovery.scan import _params, _ranks

    src = '''
def forward(self, queries, keys, values, attn_mask, t=None):
    """queries: [batch, seq_len, heads, dim]
    attn_mask (Tensor, optional): a mask"""
    B, L, H, E = queries.shape
    _, S, _, D = values.shape
    assert keys.dim() == 4
    return queries


def forward(self, x, y, z):
    """z: B x T x C"""
    b = x.size(3)
    x = x.view(2, 3)
    n, c = x.shape
    return y.shape[-1] + z
'''
    got = []
    for func in ast.parse(src).body:
        params = _params(func.args, True)
        _ranks(func, params, ast.get_docstring(func) or "")
        got.append({p.name: p.rank for p in params})
    assert got == [{"queries": 4, "keys": 4, "values": 4, "attn_mask": 0, "t": 0}, {"x": 4, "y": 0, "z": 3}]


def test_a_second_argument_of_another_rank_gets_its_own_rank(tmp_path):
    """A head that takes ``(x, feats)`` and reads ``B, C, H, W = feats.shape``: the second argument was the first
    one's form again (``2 x 16``), and unpacking it raised."""
    res = _build(tmp_path, '''
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.q = nn.Linear(dim, dim)

    def forward(self, x, feats):
        B, C, H, W = feats.shape
        return self.q(x) + feats.reshape(B, -1).sum(-1, keepdim=True)
''')
    assert res["status"] == "built", res
    assert res["inputs"] == ["2x16:float32", "2x16x16x16:float32"]


def test_a_block_parameter_read_for_a_class_attribute_is_a_project_block_class(tmp_path):
    """swav's and most ResNets' ``ResNet(block, layers)`` read ``block.expansion`` and call ``block(...)`` in
    ``_make_layer``: the builder handed a namespace ``SimpleNamespace(expansion=16)``, and calling it raised. A
    parameter read only for attributes that a project module class defines at class level is now that class."""
    res = _build(tmp_path, '''
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv = nn.Conv2d(inplanes, planes * self.expansion, 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu()


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super().__init__()
        self.inplanes = 8
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.layer1 = self._make_layer(block, 8, layers[0])
        self.fc = nn.Linear(8 * block.expansion, num_classes)

    def _make_layer(self, block, planes, n):
        return nn.Sequential(*[block(self.inplanes, planes) for _ in range(n)])

    def forward(self, x):
        return self.fc(self.layer1(self.stem(x)).mean((2, 3)))
''', "ResNet")
    assert res["status"] == "built", res
    assert res["ctor"].startswith("block=BasicBlock, layers=")


def test_a_constructor_failure_is_named_by_its_cause_first(tmp_path):
    """A build that raised was reported as ``InputError: building Model(<the whole call>) from <path> failed at ...``
    cut at 300 characters: with a long constructor call the cause (the exception and its message) was cut off, and
    the sweep could only class it "raised while building (InputError)"."""
    res = _build(tmp_path, '''
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, embed_dim, num_heads, a_rather_long_parameter_name_to_make_the_call_long=1,
                 another_rather_long_parameter_name=2):
        super().__init__()
        assert embed_dim // num_heads in (48, 96), "Only support head_dim == 48 or 96"
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        return self.proj(x)
''')
    assert res["status"] == "not-built"
    first = res["reason"].split(" | ")[0]
    assert "AssertionError: Only support head_dim == 48 or 96 (at m.py:" in first, first


def test_a_count_whose_name_contains_eps_is_no_float():
    """STGCN's ``num_timesteps_input`` was given 1.0 ("timEPS" read as an epsilon) and ``torch.empty`` refused the
    float size; ``eps`` and ``lr`` are whole words of a name."""
    from mindport.discovery.build import small_value

    assert small_value("num_timesteps_input", "") == "16"
    assert small_value("num_timesteps_output", "", 8) == "8"
    assert small_value("eps", "") == "0.1" and small_value("norm_epsilon", "") == "0.1"  # [0, 1): a smoothing too
    assert small_value("lr", "") == "1.0" and small_value("base_lr", "") == "1.0"


TIME_BLOCK = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class TimeBlock(nn.Module):
    def __init__(self, in_channels=64, out_channels=64, kernel_size=3):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv2 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv3 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))

    def forward(self, X):
        X = X.permute(0, 3, 1, 2)
        temp = self.conv1(X) + torch.sigmoid(self.conv2(X))
        return F.relu(temp + self.conv3(X)).permute(0, 2, 3, 1)
'''


def test_the_own_init_tolerance_follows_the_values_the_forward_computes(tmp_path):
    """STGCN's ``TimeBlock`` (three 64-channel convolutions summed, then ReLU) was "diverged" at its own init with
    max rel 0.094: float32 rounding of 2e-6 on outputs of order 1-5 (different summation orders), judged against
    ``atol=1e-6`` where outputs are near zero. The random draw already scaled the absolute tolerance by the largest
    value the forward computes; the own init now does the same."""
    models = _prove(tmp_path, "stgcn.py", TIME_BLOCK)
    assert models[0]["status"] == "proven", models[0]
    assert models[0]["draws"][0]["atol"] > 1e-6


ENCODER_LAYER = '''
import torch.nn as nn


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model):
        super().__init__()
        self.attention = attention
        self.norm = nn.LayerNorm(d_model)
        self.ff = nn.Linear(d_model, d_model)

    def forward(self, x, attn_mask=None):
        new_x, attn = self.attention(x, x, x, attn_mask=attn_mask)
        return self.ff(self.norm(x + new_x))
'''


def test_a_sub_module_argument_takes_any_call(tmp_path):
    """Autoformer's/iTransformer's ``EncoderLayer(attention, d_model)`` calls ``self.attention(x, x, x,
    attn_mask=...)``: the builder's ``nn.Identity()`` took one argument ("unexpected keyword argument
    'attn_mask'"). The stand-in now returns its first argument and accepts any others, on both sides, and the layer
    is proven."""
    models = _prove(tmp_path, "enc.py", ENCODER_LAYER)
    assert models[0]["status"] == "proven", models[0]
    assert "Passthrough()" in models[0]["ctor"]


def test_a_none_default_the_class_reads_attributes_of_gets_a_namespace(tmp_path):
    """FEDformer's ``AutoCorrelation(..., configs=None)`` reads ``configs.wavelet`` in ``__init__``: built at its
    defaults it raised ("'NoneType' object has no attribute 'wavelet'"); a None default the class reads attributes
    of is now given a namespace of them when the defaults fail."""
    res = _build(tmp_path, '''
import torch.nn as nn


class AutoCorrelation(nn.Module):
    def __init__(self, d_model=16, configs=None):
        super().__init__()
        self.wavelet = configs.wavelet
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(x) * (self.wavelet > 0)
''')
    assert res["status"] == "built", res
    assert res["ctor_source"] == "None defaults used" and "configs=" in res["ctor"]


def test_atari_frames_and_channels_last_images_are_tried():
    """BCQ's ``Conv_Q`` flattens to ``64 * 7 * 7`` (84 x 84 Atari frames) and STGCN's blocks take ``B x nodes x T x
    C`` and permute it before their convolutions: neither the 32/64/224/299 squares nor a channel-first form ran."""
    import torch
    import torch.nn as nn

    from mindport.discovery.build import _run_forward, first_layer_inputs

    class ConvQ(nn.Module):
        def __init__(self, frames=4):
            super().__init__()
            self.c1 = nn.Conv2d(frames, 32, 8, stride=4)
            self.c2 = nn.Conv2d(32, 64, 4, stride=2)
            self.c3 = nn.Conv2d(64, 64, 3, stride=1)
            self.l1 = nn.Linear(3136, 8)

        def forward(self, state):
            q = torch.relu(self.c3(torch.relu(self.c2(torch.relu(self.c1(state))))))
            return self.l1(q.reshape(-1, 3136))

    class TimeBlock(nn.Module):
        def __init__(self, c=3):
            super().__init__()
            self.conv = nn.Conv2d(c, 8, (1, 3))

        def forward(self, X):
            return self.conv(X.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)

    def runs(model, specs):
        try:
            return _run_forward(model, specs, 30) is None
        except RuntimeError:
            return False

    for model in (ConvQ().eval(), TimeBlock().eval()):
        fwd = [{"name": "x", "default": None, "kind": "positional"}]
        assert any(runs(model, specs) for specs in first_layer_inputs(model, fwd)), model


def test_sizes_divisible_by_32_are_tried_last(tmp_path):
    """pytorch-ddpm's ``AttnBlock(in_ch)`` and minRF's DiT use ``GroupNorm(32, ch)``: 16 and 8 channels raised
    "num_channels must be divisible by num_groups (32)"; 32 is tried after them."""
    res = _build(tmp_path, '''
import torch.nn as nn


class AttnBlock(nn.Module):
    def __init__(self, in_ch):
        super().__init__()
        self.norm = nn.GroupNorm(32, in_ch)
        self.proj = nn.Conv2d(in_ch, in_ch, 1)

    def forward(self, x):
        return x + self.proj(self.norm(x))
''')
    assert res["status"] == "built", res
    assert res["ctor"] == "in_ch=32"
