"""A model built for a fixed sequence length (issue 29, migrate21; open since migrate20: L-TAE's
``LayerNorm([d, len_max_seq])`` with ``len_max_seq=24``, a learned position table of ``max_len`` rows): the input
forms use T = 4/8/16 and every one was refused. The forward's error names the size the constructor fixed; the input
is retried with that axis at that size. Own fixture package; real torch and MindSpore (prove_models)."""
from __future__ import annotations

FILES = {"temporal.py": '''import torch
import torch.nn as nn


class SeqNormEncoder(nn.Module):
    """B x T x C series; a LayerNorm over channels and the whole sequence (the length is the constructor's)."""

    def __init__(self, in_channels=16, d_model=32, len_max_seq=24):
        super().__init__()
        self.inconv = nn.Conv1d(in_channels, d_model, 1)
        self.norm = nn.LayerNorm([d_model, len_max_seq])
        self.out = nn.Linear(d_model, 8)

    def forward(self, x):
        h = self.norm(self.inconv(x.transpose(1, 2)))
        return self.out(h.mean(dim=-1))


class PositionTable(nn.Module):
    """A learned position table added to B x T x d features: T must be the table's rows."""

    def __init__(self, d=16, max_len=20):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(1, max_len, d) * 0.1)
        self.mix = nn.Conv1d(d, d, 3, padding=1)

    def forward(self, x):
        h = x + self.pos
        return torch.tanh(self.mix(h.transpose(1, 2))).transpose(1, 2)
'''}


def test_an_input_at_the_length_the_constructor_fixed(tmp_path):
    from mindport.discovery.build import _fixed_length_hint
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    # the axis of the input at the size that was got, set to the size that was wanted (found by size: transposed)
    assert _fixed_length_hint("Given normalized_shape=[256, 24], expected input with shape [*, 256, 24], but got "
                              "input of size[2, 256, 16]", [2, 16, 128], "float32") == ["2x24x128:float32"]
    assert _fixed_length_hint("The size of tensor a (16) must match the size of tensor b (20) at non-singleton "
                              "dimension 1", [2, 16, 16], "float32") == ["2x20x16:float32"]
    assert _fixed_length_hint("The size of tensor a (16) must match the size of tensor b (20) at non-singleton "
                              "dimension 1", [2, 16], "int64:0:100") == ["2x20:int64:0:100"]  # ids too (session 42:
    # one id column per field against per-field offsets, torchfm's; a sequence of ids against a position table)
    assert _fixed_length_hint("Given normalized_shape=[256, 24], expected input with shape [*, 256, 24], but got "
                              "input of size[2, 256, 16]", [2, 16, 128], "int64:0:100") == []  # a norm: floats only

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for rel, text in FILES.items():
        (src / rel).write_text(text)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, cache=False, settings=ProveSettings(), log_dir=tmp_path / "logs")
    models = {m["class"].split(":")[1]: m for m in models}
    assert set(models) == {"SeqNormEncoder", "PositionTable"}, models
    for name, m in models.items():
        assert m["status"] == "proven", (name, m)
    assert models["SeqNormEncoder"]["inputs"][0].split(":")[0].split("x")[1] == "24", models["SeqNormEncoder"]
    assert models["PositionTable"]["inputs"][0].split(":")[0].split("x")[1] == "20", models["PositionTable"]
