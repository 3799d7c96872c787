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


# a wrapper around a module handed in, which asks that module where it lives (syuntoku14/pytorch-rl-il's
# approximation modules: self.device = next(model.parameters()).device)
WRAPPER = '''
import torch.nn as nn


class DeviceWrapper(nn.Module):
    def __init__(self, model, width=8):
        super().__init__()
        self.model = model
        self.device = next(model.parameters()).device
        self.head = nn.Linear(width, 2)

    def forward(self, x):
        return self.head(self.model(x))
'''


def test_a_module_handed_in_has_a_parameter_to_ask(tmp_path):
    proven = prove_files(tmp_path, {"wrapper.py": WRAPPER}, "*")
    assert proven["wrapper.py:DeviceWrapper"]["status"] == "proven", proven["wrapper.py:DeviceWrapper"]


# a Fourier neural operator (nickhnelsen/fourier-neural-mappings' FNO1d/FNO2d, the FNO papers' code): a
# channels-first field moved to the last axis with its grid coordinates appended before the first Linear, Fourier
# layers keeping a number of modes the field must have
OPERATOR = '''
import torch
import torch.nn as nn


def grid1d(shape):
    b, n = shape[0], shape[1]
    return torch.linspace(0, 1, n).reshape(1, n, 1).repeat(b, 1, 1)


class SpectralConv1d(nn.Module):
    def __init__(self, width, modes):
        super().__init__()
        self.modes = modes
        self.weight = nn.Parameter(torch.rand(width, width, modes) / width)

    def forward(self, x):
        x_ft = torch.fft.rfft(x)
        mixed = torch.einsum("bix,iox->box", x_ft[..., :self.modes].real, self.weight)
        out = torch.zeros(x.shape[0], x.shape[1], x_ft.shape[-1])
        out[..., :self.modes] = mixed
        return torch.fft.irfft(out, n=x.shape[-1]) + x


class FNO1d(nn.Module):
    def __init__(self, modes=12, width=16, d_in=1, d_out=1):
        super().__init__()
        self.modes = modes
        self.fc0 = nn.Linear(d_in + 1, width)
        self.spectral = SpectralConv1d(width, modes)
        self.fc1 = nn.Linear(width, d_out)

    def forward(self, x):
        x = x.permute(0, 2, 1)
        x = torch.cat((x, grid1d(x.shape)), dim=-1)
        x = self.fc0(x).permute(0, 2, 1)
        x = torch.tanh(self.spectral(x))
        return self.fc1(x.permute(0, 2, 1)).permute(0, 2, 1)
'''


def test_a_field_moved_to_the_last_axis_with_its_grid_appended_has_the_linears_channels(tmp_path):
    """The Linear refuses 2 x 16 x 2 ("mat1 and mat2 shapes cannot be multiplied (4x17 and 2x16)": axis 1 moved
    last, one coordinate appended): the input is 2 x 1 x 32 (one channel, 32 points, enough for its 12 modes)."""
    proven = prove_files(tmp_path, {"fno.py": OPERATOR}, "*")
    result = proven["fno.py:FNO1d"]
    assert result["status"] == "proven", result
    assert result["inputs"] == ["2x1x32:float32"], result["inputs"]


def test_the_moved_channels_hint_reads_the_linears_complaint():
    from mindport.discovery.build import _size_hint

    assert _size_hint("mat1 and mat2 shapes cannot be multiplied (4x17 and 2x96)", "2x16x2:float32") == [
        "2x1x32:float32", "2x1x2:float32"]
    assert _size_hint("mat1 and mat2 shapes cannot be multiplied (96x18 and 3x32)", "2x16x16x3:float32") == [
        "2x1x32x32:float32", "2x1x16x3:float32"]
    assert _size_hint("mat1 and mat2 shapes cannot be multiplied (2x64 and 32x400)", "2x64:float32") == [
        "2x32:float32"]


# a signal given as (B, 1, T) and permuted to (B, T, 1) for a batch-first LSTM (Xuzc317/child-speech-emotion-
# recognition's LSTMModel)
SIGNAL = '''
import torch.nn as nn


class SignalLSTM(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.rnn = nn.LSTM(input_size=1, hidden_size=8, num_layers=1, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        x = x.permute(0, 2, 1)
        output, _ = self.rnn(x)
        return self.classifier(output[:, -1, :])
'''


def test_a_signal_permuted_before_its_lstm_swaps_the_axes(tmp_path):
    """2 x 8 x 1 (the LSTM's own form) is permuted to 2 x 1 x 8 by the forward: "input.size(-1) must be equal to
    input_size. Expected 1, got 8"; the input with those axes swapped runs."""
    proven = prove_files(tmp_path, {"sig_lstm.py": SIGNAL}, "*")
    result = proven["sig_lstm.py:SignalLSTM"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].startswith("2x1x"), result["inputs"]


# a configuration object that carries the logger the layers write to (Orca0917/Speech-Synthesis-PyTorch-
# Implementation's FastSpeech2: args.logger.info(...))
LOGGED_CONFIG = '''
import torch.nn as nn


class ConfiguredBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.logger = args.logger
        self.fc = nn.Linear(args.hidden, args.hidden)
        self.logger.info("block of width %d", args.hidden)

    def forward(self, x):
        return self.fc(x).relu()
'''


def test_a_configurations_logger_is_a_logger(tmp_path):
    proven = prove_files(tmp_path, {"configured.py": LOGGED_CONFIG}, "*")
    assert proven["configured.py:ConfiguredBlock"]["status"] == "proven", proven["configured.py:ConfiguredBlock"]


# layers built in float64 (Orca0917/Recsys-PyTorch-Implementation's AutoRec: nn.Linear(..., dtype=torch.float64))
DOUBLE = '''
import torch
import torch.nn as nn


class DoubleAutoencoder(nn.Module):
    def __init__(self, input_dim=12, hidden_dim=5):
        super().__init__()
        self.encoder = nn.Linear(input_dim, hidden_dim, dtype=torch.float64)
        self.decoder = nn.Linear(hidden_dim, input_dim, dtype=torch.float64)

    def forward(self, x):
        return self.decoder(torch.sigmoid(self.encoder(x)))
'''


def test_a_model_built_in_float64_takes_float64(tmp_path):
    proven = prove_files(tmp_path, {"double.py": DOUBLE}, "*")
    result = proven["double.py:DoubleAutoencoder"]
    assert result["status"] == "proven", result
    assert result["inputs"][0].endswith(":float64"), result["inputs"]


def test_a_big_models_proof_has_time_in_proportion():
    from mindport.discovery.prove import ProveSettings, proof_seconds

    s = ProveSettings()
    assert proof_seconds(s, None) == s.proof_seconds == proof_seconds(s, 5_000_000)
    assert proof_seconds(s, 61_000_000) == pytest.approx(s.proof_seconds * 3.05)
