"""Input inference (agg53): two inputs guessed alike and joined on their channels before the convolutions, with a
classifier built for one spatial size (a pix2pix discriminator: ``model(cat((img_a, img_b), 1))``, then
``Linear(C * 16 * 16, 1)`` over the flattened features). The channel hint halves both images' channels; the
classifier's refusal ("mat1 and mat2 shapes cannot be multiplied") is then fitted by a bisection over the first
input's side (``build._flattened_fits``), which left the second image at the old side: the join failed at every
side, nothing fitted, and the model was "not built" (inputs: shape or rank). Inputs guessed alike the first now take
its side with it when no side fits with them as they are."""
from __future__ import annotations

PAIR = '''
import torch
import torch.nn as nn


class PairCritic(nn.Module):
    def __init__(self, in_channels=3):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(in_channels * 2, 8, 4, 2, 1), nn.LeakyReLU(0.2))
        self.head = nn.Linear(8 * 64 * 64, 1)

    def forward(self, img_a, img_b):
        out = self.model(torch.cat((img_a, img_b), 1))
        return torch.sigmoid(self.head(out.view(img_a.size(0), -1)))
'''


def test_a_pair_joined_before_a_sized_classifier_is_built_and_proven(tmp_path):
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "critic.py").write_text(PAIR)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, cache=False)
    (entry,) = models
    # both images at 3 channels (6 joined) and at the side the head's 8 * 64 * 64 features take: 128 x 128
    assert entry["inputs"] == ["2x3x128x128:float32", "2x3x128x128:float32"], entry
    assert entry["status"] == "proven", entry
