"""Causes found by the fresh35 corpus (benchmarks/training/fresh35.json), each with real torch and real MindSpore."""
from __future__ import annotations

from test_fresh_causes import _convert, _run_boot

# dpasca/trans_btc_accum_plateau: nn.Transformer (dropout 0.1) trained in train mode; a model's own
# F.scaled_dot_product_attention(..., dropout_p=p) is the same draw (nanoGPT's CausalSelfAttention)
ATTENTION_DROPOUT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(1, 8)
        self.transformer = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=16, dropout=0.3)
        self.qkv = nn.Linear(8, 24)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        h = self.embed(x)
        h = self.transformer(h, h)
        q, k, v = self.qkv(h).permute(1, 0, 2).reshape(x.shape[1], x.shape[0], 3, 2, 4).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25, is_causal=True)
        return self.head(a.permute(2, 0, 1, 3).reshape(x.shape[0], x.shape[1], 8))


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(6, 4, 1)
y = torch.randn(6, 4, 1)
losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(round(loss.item(), 6))
print(losses)
'''


def test_the_tracker_draws_attention_weight_dropout_from_the_shared_stream(tmp_path):
    """dpasca/trans_btc_accum_plateau (deterministic entry, first run fresh35: its first epoch, computed with the
    initial weights, 0.698 in torch and 0.695 in the port, 8.6e-3 apart later, against a float32-vs-float64 control
    of 9e-6 and a 1-ulp nudge of 0). The attention weights' dropout drew each framework's own generator: torch's
    nn.MultiheadAttention (need_weights=False, as its transformer layers call it) drops inside
    scaled_dot_product_attention's kernel, not through F.dropout, and MindSpore's nn.MultiheadAttention through a
    Dropout primitive of its own seed. The tracker (benchmarks/training/boot.py) now draws both from the shared
    stream, as it draws every other dropout: the same losses on both sides, step after step."""
    t = eval(_run_boot(tmp_path, "torch", "track", ATTENTION_DROPOUT))
    m = eval(_run_boot(tmp_path, "mindspore", "track", _convert(ATTENTION_DROPOUT)))
    assert len(t) == len(m) == 5 and len(set(t)) == 5, (t, m)
    for a, b in zip(t, m):
        assert abs(a - b) <= 1e-4 * abs(a) + 2e-6, (t, m)
