"""F.embedding with padding_idx/max_norm/scale_grad_by_freq given, literals or names (microsoft/LoRA's Embedding:
``F.embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse)``,
flagged MP102 before because ``padding_idx`` was a name): mindport.runtime.nn_functional.embedding decides when it
runs. Compared with torch: values, and the weight's gradient (the padding row gets none); a max_norm that is set is
refused at run time."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Emb(nn.Module):
        def __init__(self, padding_idx=2, max_norm=None):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(6, 4))
            self.padding_idx = padding_idx
            self.max_norm = max_norm
            self.norm_type = 2.0
            self.scale_grad_by_freq = False
            self.sparse = False

        def forward(self, x):
            a = F.embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                            self.scale_grad_by_freq, self.sparse)
            return a + 2 * F.embedding(x, self.weight, padding_idx=-1) + 3 * F.embedding(x, self.weight)
""")


@pytest.fixture()
def pair(tmp_path, monkeypatch):
    return torch_and_converted(SOURCE, "emb", tmp_path, monkeypatch)


@pytest.mark.parametrize("padding_idx", [2, None])
def test_embedding_with_its_attributes_matches_torch_values_and_gradients(pair, padding_idx):
    t_ns, m_ns = pair
    torch.manual_seed(0)
    t_model, m_model = t_ns["Emb"](padding_idx), m_ns["Emb"](padding_idx)
    m_model.weight.set_data(ms.Tensor(t_model.weight.detach().numpy()))
    ids = np.array([[0, 2, 5], [2, 1, 5]], dtype=np.int64)
    out = t_model(torch.from_numpy(ids))
    (out * torch.arange(1.0, 5.0)).sum().backward()
    got = m_model(ms.Tensor(ids))
    np.testing.assert_allclose(got.asnumpy(), out.detach().numpy(), rtol=1e-6, atol=1e-6)
    grad = ms.grad(lambda i: (m_model(i) * ms.ops.arange(1.0, 5.0)).sum(), grad_position=None,
                   weights=m_model.trainable_params())(ms.Tensor(ids))[0]
    np.testing.assert_allclose(grad.asnumpy(), t_model.weight.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_a_max_norm_that_is_set_is_refused_when_it_runs(pair):
    t_ns, m_ns = pair
    with pytest.raises(ValueError, match="max_norm"):
        m_ns["Emb"](2, 1.0)(ms.Tensor(np.array([[0, 1]], dtype=np.int64)))


SUBCLASS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class LoraEmbedding(nn.Embedding):
        def __init__(self, num_embeddings, embedding_dim, r=2, **kwargs):
            nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)
            self.lora_A = nn.Parameter(torch.randn(r, num_embeddings))

        def forward(self, x):
            after_a = F.embedding(x, self.lora_A.transpose(0, 1), self.padding_idx, self.max_norm, self.norm_type,
                                  self.scale_grad_by_freq, self.sparse)
            return nn.Embedding.forward(self, x) + after_a.sum(-1, keepdim=True)
""")


def test_a_layer_subclass_reads_torchs_settings_the_mindspore_layer_does_not_keep(tmp_path, monkeypatch):
    """LoRA's Embedding: ``self.max_norm``/``norm_type``/``scale_grad_by_freq``/``sparse`` are torch's constructor
    settings, which MindSpore's Embedding does not keep: the adapter class of the base sets them (AttributeError
    before)."""
    t_ns, m_ns = torch_and_converted(SUBCLASS, "lora_emb", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model, m_model = t_ns["LoraEmbedding"](7, 3, padding_idx=1), m_ns["LoraEmbedding"](7, 3, padding_idx=1)
    m_model.embedding_table.set_data(ms.Tensor(t_model.weight.detach().numpy()))
    m_model.lora_A.set_data(ms.Tensor(t_model.lora_A.detach().numpy()))
    assert (m_model.max_norm, m_model.norm_type, m_model.scale_grad_by_freq, m_model.sparse) == (None, 2.0, False, False)
    ids = np.array([[0, 1, 6]], dtype=np.int64)
    with torch.no_grad():
        want = t_model(torch.from_numpy(ids)).numpy()
    np.testing.assert_allclose(m_model(ms.Tensor(ids)).asnumpy(), want, rtol=1e-6, atol=1e-6)
