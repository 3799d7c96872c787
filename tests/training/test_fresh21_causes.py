"""Session trainfresh21 (issue 27): causes found at first contact with the fresh21 entries
(/work/notes/trainfresh21.md). One test each, on real torch and real MindSpore, each failing without its fix; the
expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh_causes import _convert, _losses

# ``.name`` read on a function's parameter that nothing says is a tensor: a config object
# (farhad-dalirani/vision-transformer-from-scratch's ``build_datasets(cfg: DatasetConfig, ...)`` doing
# ``name = cfg.name.lower()``), an unannotated settings object, a parameter next to a tensor one, and an f-string;
# the model is built and trained from what the names select
CONFIG_NAMES = '''
import torch
import torch.nn as nn


class DatasetConfig:  # a dataclass in the repository (a dataclass in code run by exec needs sys.modules)
    def __init__(self, name="Ramp", size=8):
        self.name = name
        self.size = size


class Settings:
    def __init__(self, name):
        self.name = name


def build_data(cfg: DatasetConfig):
    name = cfg.name.lower()
    x = torch.linspace(-1.0, 1.0, cfg.size * 2).reshape(cfg.size, 2)
    if name == "ramp":
        return x, x.sum(dim=1, keepdim=True) * 0.5
    raise ValueError(f"Unknown dataset '{cfg.name}'.")


def build_model(settings):
    widths = {"small": 3, "large": 6}
    return nn.Sequential(nn.Linear(2, widths[settings.name]), nn.Tanh(), nn.Linear(widths[settings.name], 1))


def describe(settings, x: torch.Tensor):
    return settings.name + " " + str(tuple(x.shape))


x, y = build_data(DatasetConfig())
settings = Settings("small")
model = build_model(settings)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.4, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
print(describe(settings, x))
for _ in range(6):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def test_name_of_a_parameter_nothing_says_is_a_tensor_is_not_flagged():
    """farhad-dalirani/vision-transformer-from-scratch (both fresh21 entries; fresh20's WojciechTesla and SimonLembeye
    had the same): ``cfg.name`` of a function's parameter was flagged MP104 "torch.Tensor.name: a plain MindSpore
    tensor has no name" because an unannotated parameter is taken for a tensor where a tensor's method is called on
    it. ``name`` is an ambiguous member (a config's, a dataset's, a Parameter's): only a receiver known to be a
    tensor reads torch's named-tensor attribute. The line runs as written either way: the flag was noise."""
    code = _convert(CONFIG_NAMES)
    assert "MP104" not in code, code
    assert "cfg.name.lower()" in code and "settings.name" in code, code
    t, m = _losses(CONFIG_NAMES, "torch_config_names"), _losses(code, "ms_config_names")
    assert len(t) == 6 and len(m) == 6 and t[-1] < t[0], (t, m, code)
    np.testing.assert_allclose(m, t, rtol=2e-5)
