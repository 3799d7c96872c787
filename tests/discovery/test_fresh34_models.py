"""Causes met on first contact with new repositories (session 34: `mindport migrate REPO` with no settings over
yitu-opensource/T2T-ViT, kevinzakka/recurrent-visual-attention, vincentherrmann/pytorch-wavenet,
twtygqyy/pytorch-SRDenseNet, benedekrozemberczki/SimGNN), each a class with a fixture of our own. One repository of
all the fixtures is converted and proven once (real torch, real MindSpore, GRAPH_MODE included); cheaper checks of
the pieces follow. Expected values come from torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.discovery._prove import prove_files

# a model that unfolds its image into patches before anything else (T2T-ViT's soft split: nn.Unfold, then a Linear
# over a patch's C * k * k values), and a performer's random features: a member drawn as a plain tensor, then
# initialised in place and kept as a frozen Parameter
MODELS = '''
import math

import torch
import torch.nn as nn


class SoftSplit(nn.Module):
    def __init__(self, in_chans=3, dim=16):
        super().__init__()
        self.split = nn.Unfold(kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
        self.proj = nn.Linear(in_chans * 3 * 3, dim)

    def forward(self, x):
        x = self.split(x).transpose(1, 2)
        return self.proj(x).tanh()


class RandomFeatures(nn.Module):
    def __init__(self, emb=8, ratio=0.5):
        super().__init__()
        self.m = int(emb * ratio)
        self.w = torch.randn(self.m, emb)
        self.w = nn.Parameter(nn.init.orthogonal_(self.w) * math.sqrt(self.m), requires_grad=False)
        self.proj = nn.Linear(emb, emb)

    def forward(self, x):
        return torch.exp(self.proj(x) @ self.w.t() / 4)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh34"), {"models.py": MODELS}, "*")


def test_an_image_unfolded_into_patches_first_is_an_image(proven):
    """T2T-ViT: the first layer is nn.Unfold (no channel count of its own); the channels are the first Linear's width
    over the kernel's area, so the input is 2 x 3 x H x W (it was 2 x 27, which Unfold refuses)."""
    result = proven["models.py:SoftSplit"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].startswith("2x3x"), result["inputs"]


def test_an_init_of_a_member_drawn_as_a_plain_tensor_fills_the_tensor(proven):
    """``self.w = torch.randn(m, d); nn.init.orthogonal_(self.w)``: the member is a plain Tensor in MindSpore (no
    ``set_data``: "'Tensor' object has no attribute 'set_data'"), filled by the runtime init as torch fills it."""
    assert proven["models.py:RandomFeatures"]["status"] == "proven", proven["models.py:RandomFeatures"]


def test_the_member_init_keeps_torchs_orthogonal_rows(tmp_path):
    """The converted constructor's frozen parameter has orthonormal rows scaled by sqrt(m), as torch's."""
    import importlib.util

    import mindspore as ms

    from mindport.migrator.repo import convert_path

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "models.py").write_text(MODELS.lstrip(), encoding="utf-8")
    convert_path(tmp_path / "src", tmp_path / "out", jobs=1, force=True)
    text = (tmp_path / "out" / "models.py").read_text(encoding="utf-8")
    assert "self.w.set_data" not in text
    spec = importlib.util.spec_from_file_location("fresh34_ms_models", tmp_path / "out" / "models.py")
    module = importlib.util.module_from_spec(spec)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    spec.loader.exec_module(module)
    w = module.RandomFeatures().w.asnumpy()
    torch_w = torch.nn.init.orthogonal_(torch.randn(4, 8)).numpy() * 2.0
    np.testing.assert_allclose(w @ w.T, torch_w @ torch_w.T, atol=1e-5)
