"""The sizes a model reads off a stand-in sub-module it is handed (``nn.Linear(body.latent_dim, n)``,
``backbone.out_channels``), shared by both stand-ins (passthrough_torch, passthrough_ms): the builder's default
width, which its input keeps through the stand-in. No framework is imported here: each side's process has only its
own."""
from __future__ import annotations

import re

SIZE_ATTRIBUTE = re.compile(r"((latent|feature|features|hidden|embed|embedding|output|out|in|input|model|state|repr|"
                            r"representation|last|final)_?(dim|dims|size|features|channels|planes|units|width)|"
                            r"dim|width|d_model|n_embd|num_features|num_channels|feature_dim)")
WIDTH = 16
